/* ranks: 1 2 */
/*
 * MPI_Comm_set_name / MPI_Comm_get_name: MPI_COMM_WORLD and MPI_COMM_SELF
 * carry their standard names, other communicators start with the empty
 * name (a duplicate does not inherit its parent's), a set name can be read
 * back and replaced, and a name of MPI_MAX_OBJECT_NAME bytes or more is cut
 * to MPI_MAX_OBJECT_NAME - 1. Bad arguments give MPI_ERR_COMM and
 * MPI_ERR_ARG.
 */
#include <string.h>

#define TEST_NAME "comm_names"
#include "testutil.h"

static void expect_name(MPI_Comm comm, const char *want, int line)
{
    char name[MPI_MAX_OBJECT_NAME];
    int len = -1;
    memset(name, 'x', sizeof name);
    CALL(MPI_Comm_get_name(comm, name, &len));
    if (strcmp(name, want) != 0 || len != (int)strlen(want))
        fail(line, "name \"%s\" (length %d), expected \"%s\"", name, len, want);
}

int main(int argc, char **argv)
{
    TEST_INIT(&argc, &argv);
    CALL(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));

    expect_name(MPI_COMM_WORLD, "MPI_COMM_WORLD", __LINE__);
    expect_name(MPI_COMM_SELF, "MPI_COMM_SELF", __LINE__);

    MPI_Comm dup;
    CALL(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    expect_name(dup, "", __LINE__);
    CALL(MPI_Comm_set_name(dup, "solver"));
    expect_name(dup, "solver", __LINE__);
    CALL(MPI_Comm_set_name(dup, "solver 2"));
    expect_name(dup, "solver 2", __LINE__);

    /* A duplicate of a named communicator starts unnamed. */
    MPI_Comm dup2;
    CALL(MPI_Comm_dup(dup, &dup2));
    expect_name(dup2, "", __LINE__);
    expect_name(dup, "solver 2", __LINE__);

    /* Ranks may name one communicator differently. */
    char mine[32];
    snprintf(mine, sizeof mine, "rank %d", me);
    CALL(MPI_Comm_set_name(dup2, mine));
    expect_name(dup2, mine, __LINE__);

    /* The predefined ones may be renamed. */
    CALL(MPI_Comm_set_name(MPI_COMM_SELF, "me alone"));
    expect_name(MPI_COMM_SELF, "me alone", __LINE__);

    /* Too long: cut to MPI_MAX_OBJECT_NAME - 1 bytes. */
    char longname[MPI_MAX_OBJECT_NAME + 40];
    memset(longname, 'a', sizeof longname - 1);
    longname[sizeof longname - 1] = '\0';
    CALL(MPI_Comm_set_name(dup, longname));
    char got[MPI_MAX_OBJECT_NAME];
    int len = -1;
    CALL(MPI_Comm_get_name(dup, got, &len));
    CHECK(len == MPI_MAX_OBJECT_NAME - 1, "long name: length %d", len);
    CHECK(strlen(got) == MPI_MAX_OBJECT_NAME - 1 && got[0] == 'a', "long name cut wrongly");
    /* Exactly MPI_MAX_OBJECT_NAME - 1 bytes fit whole. */
    longname[MPI_MAX_OBJECT_NAME - 1] = '\0';
    longname[0] = 'b';
    CALL(MPI_Comm_set_name(dup, longname));
    expect_name(dup, longname, __LINE__);

    /* A split's communicator is unnamed too. */
    MPI_Comm half;
    CALL(MPI_Comm_split(MPI_COMM_WORLD, me % 2, 0, &half));
    expect_name(half, "", __LINE__);

    /* Errors. */
    EXPECT(MPI_ERR_COMM, MPI_Comm_set_name(MPI_COMM_NULL, "x"));
    EXPECT(MPI_ERR_COMM, MPI_Comm_get_name(MPI_COMM_NULL, got, &len));
    EXPECT(MPI_ERR_ARG, MPI_Comm_set_name(dup, NULL));
    EXPECT(MPI_ERR_ARG, MPI_Comm_get_name(dup, NULL, &len));
    EXPECT(MPI_ERR_ARG, MPI_Comm_get_name(dup, got, NULL));

    /* A freed handle is no communicator. */
    MPI_Comm gone = half;
    CALL(MPI_Comm_free(&half));
    EXPECT(MPI_ERR_COMM, MPI_Comm_get_name(gone, got, &len));

    CALL(MPI_Comm_free(&dup2));
    CALL(MPI_Comm_free(&dup));
    CALL(MPI_Finalize());
    finalized = 1;
    if (me == 0)
        printf("comm_names: ok\n");
    return 0;
}

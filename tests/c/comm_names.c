/* ranks: 1 3 */
/*
 * Communicator names: MPI_COMM_WORLD and MPI_COMM_SELF carry their own until
 * renamed; a new communicator has an empty name; set and get, renaming (the
 * old name goes), a name longer than MPI_MAX_OBJECT_NAME - 1 cut to fit; a
 * duplicate does not inherit the name; a freed communicator's name does not
 * reach the next one made; MPI_ERR_COMM for MPI_COMM_NULL.
 */
#include <string.h>

#define TEST_NAME "comm_names"
#include "testutil.h"

static void expect_name(MPI_Comm c, const char *want, int line)
{
    char name[MPI_MAX_OBJECT_NAME];
    int len = -1;
    memset(name, 'x', sizeof name);
    CALL(MPI_Comm_get_name(c, name, &len));
    if (strcmp(name, want) != 0 || len != (int)strlen(want))
        fail(line, "name \"%s\" (length %d), expected \"%s\"", name, len, want);
}
#define EXPECT_NAME(c, want) expect_name((c), (want), __LINE__)

int main(int argc, char **argv)
{
    TEST_INIT(&argc, &argv);
    EXPECT_NAME(MPI_COMM_WORLD, "MPI_COMM_WORLD");
    EXPECT_NAME(MPI_COMM_SELF, "MPI_COMM_SELF");

    MPI_Comm half, dup;
    CALL(MPI_Comm_split(MPI_COMM_WORLD, me % 2, me, &half));
    EXPECT_NAME(half, "");
    CALL(MPI_Comm_set_name(half, me % 2 ? "odd" : "even"));
    EXPECT_NAME(half, me % 2 ? "odd" : "even");
    CALL(MPI_Comm_set_name(half, "renamed"));
    EXPECT_NAME(half, "renamed");
    CALL(MPI_Comm_dup(half, &dup));
    EXPECT_NAME(dup, "");
    CALL(MPI_Comm_free(&dup));

    char longname[3 * MPI_MAX_OBJECT_NAME];
    memset(longname, 'n', sizeof longname - 1);
    longname[sizeof longname - 1] = 0;
    CALL(MPI_Comm_set_name(MPI_COMM_WORLD, longname));
    longname[MPI_MAX_OBJECT_NAME - 1] = 0;
    EXPECT_NAME(MPI_COMM_WORLD, longname);
    CALL(MPI_Comm_set_name(MPI_COMM_WORLD, "world"));
    EXPECT_NAME(MPI_COMM_WORLD, "world");

    /* A freed communicator's name stays with it. */
    CALL(MPI_Comm_free(&half));
    CALL(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    EXPECT_NAME(dup, "");
    CALL(MPI_Comm_free(&dup));

    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    char name[MPI_MAX_OBJECT_NAME];
    int len;
    EXPECT(MPI_ERR_COMM, MPI_Comm_get_name(MPI_COMM_NULL, name, &len));
    EXPECT(MPI_ERR_COMM, MPI_Comm_set_name(MPI_COMM_NULL, "x"));
    CALL(MPI_Barrier(MPI_COMM_WORLD));
    if (me == 0)
        printf("comm_names: ok\n");
    CALL(MPI_Finalize());
    return 0;
}

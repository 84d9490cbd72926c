/* ranks: 1 2 */
/*
 * Info objects before MPI_Init and after MPI_Finalize (MPI-4): create, set,
 * get, get_string, nkeys, nthkey, dup, delete and free work without MPI up;
 * MPI_Info_create_env names the command; an info object made before MPI_Init
 * is still there after it (and given to MPI_Comm_set_info there), and one
 * made while MPI is up is still there after MPI_Finalize, where it is freed.
 */
#define TEST_NAME "info_anytime"
#include "testutil.h"

#include <string.h>

static void check_value(MPI_Info info, const char *key, const char *want)
{
    char value[64];
    int flag = 0, len = (int)sizeof value;
    CALL(MPI_Info_get_string(info, key, &len, value, &flag));
    CHECK(flag && strcmp(value, want) == 0, "%s: %s, expected %s", key, flag ? value : "(none)", want);
}

int main(int argc, char **argv)
{
    /* Before MPI_Init. */
    MPI_Info early, copy, env;
    int nkeys = -1, flag = 0;
    char key[MPI_MAX_INFO_KEY + 1];
    CALL(MPI_Info_create(&early));
    CALL(MPI_Info_set(early, "colour", "blue"));
    CALL(MPI_Info_set(early, "size", "large"));
    CALL(MPI_Info_set(early, "colour", "green"));
    CALL(MPI_Info_get_nkeys(early, &nkeys));
    CHECK(nkeys == 2, "%d keys", nkeys);
    CALL(MPI_Info_get_nthkey(early, 0, key));
    CHECK(strcmp(key, "colour") == 0, "first key %s", key);
    check_value(early, "colour", "green");
    CALL(MPI_Info_dup(early, &copy));
    CALL(MPI_Info_delete(copy, "size"));
    CALL(MPI_Info_get_nkeys(copy, &nkeys));
    CHECK(nkeys == 1, "%d keys in the copy", nkeys);
    CALL(MPI_Info_get_nkeys(early, &nkeys));
    CHECK(nkeys == 2, "%d keys after deleting from the copy", nkeys);
    CALL(MPI_Info_free(&copy));
    CHECK(copy == MPI_INFO_NULL, "freed info handle %#x", (unsigned)copy);
    CALL(MPI_Info_create_env(argc, argv, &env));
    char value[256];
    int len = (int)sizeof value;
    CALL(MPI_Info_get_string(env, "command", &len, value, &flag));
    CHECK(flag && strstr(value, "info_anytime") != NULL, "command %s", flag ? value : "(none)");
    CALL(MPI_Info_free(&env));

    TEST_INIT(&argc, &argv);
    /* The early object lives on, and works as any other. */
    check_value(early, "size", "large");
    MPI_Comm c;
    CALL(MPI_Comm_dup(MPI_COMM_WORLD, &c));
    CALL(MPI_Comm_set_info(c, early));
    MPI_Info used, late;
    CALL(MPI_Comm_get_info(c, &used));
    CALL(MPI_Info_get_nkeys(used, &nkeys));
    CHECK(nkeys >= 0, "%d keys used", nkeys);
    CALL(MPI_Info_free(&used));
    CALL(MPI_Comm_free(&c));
    CALL(MPI_Info_create(&late));
    CALL(MPI_Info_set(late, "made", "while up"));
    CALL(MPI_Barrier(MPI_COMM_WORLD));
    CALL(MPI_Finalize());
    finalized = 1;

    /* After MPI_Finalize. */
    check_value(late, "made", "while up");
    check_value(early, "colour", "green");
    CALL(MPI_Info_free(&late));
    CALL(MPI_Info_free(&early));
    CHECK(early == MPI_INFO_NULL && late == MPI_INFO_NULL, "freed handles");
    return 0;
}

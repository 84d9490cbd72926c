/* ranks: 1 3 */
/*
 * Info objects: set/get/get_valuelen/get_string/nkeys/nthkey/delete/dup/free,
 * truncation by MPI_Info_get and MPI_Info_get_string, MPI_INFO_ENV; hints on
 * communicators (MPI_Comm_set_info, MPI_Comm_get_info, MPI_Comm_dup_with_info,
 * MPI_Comm_dup keeps them); error classes with MPI_ERRORS_RETURN.
 */
#define TEST_NAME "info"
#include "testutil.h"

#include <string.h>

/* The error class of a failed call, which must not succeed. */
static int class_of(int rc)
{
    int cls = MPI_SUCCESS;
    MPI_Error_class(rc, &cls);
    return cls;
}

#define EXPECT_CLASS(call, want) do { int rc_ = (call); \
        CHECK(rc_ != MPI_SUCCESS, "%s succeeded", #call); \
        CHECK(class_of(rc_) == (want), "%s: class %d, expected %d", #call, class_of(rc_), (want)); } while (0)

/* Hints Ferry does not use: Ferry returns them from MPI_Comm_get_info, MPICH drops them. */
#ifdef FERRY_MPI_H
#define expect_hint expect_value
#else
#define expect_hint(info, key, want) ((void)(info), (void)(key), (void)(want))
#endif

/* The value of `key` in `info`, which must be there. */
static void expect_value(MPI_Info info, const char *key, const char *want)
{
    char buf[MPI_MAX_INFO_VAL + 1];
    int flag = 0, len = -1;
    CALL(MPI_Info_get_valuelen(info, key, &len, &flag));
    CHECK(flag && len == (int)strlen(want), "valuelen of %s: flag %d len %d, expected %zu", key, flag, len, strlen(want));
    CALL(MPI_Info_get(info, key, MPI_MAX_INFO_VAL, buf, &flag));
    CHECK(flag && strcmp(buf, want) == 0, "value of %s: flag %d \"%s\", expected \"%s\"", key, flag, flag ? buf : "", want);
}

static void expect_absent(MPI_Info info, const char *key)
{
    char buf[16];
    int flag = 1;
    CALL(MPI_Info_get(info, key, 15, buf, &flag));
    CHECK(!flag, "key %s is present", key);
}

int main(int argc, char **argv)
{
    TEST_INIT(&argc, &argv);
    CALL(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    CALL(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));

    MPI_Info info, dup;
    int n, flag;
    char key[MPI_MAX_INFO_KEY + 1], buf[64];
    CALL(MPI_Info_create(&info));
    CALL(MPI_Info_get_nkeys(info, &n));
    CHECK(n == 0, "new info has %d keys", n);
    CALL(MPI_Info_set(info, "alpha", "one"));
    CALL(MPI_Info_set(info, "beta", "a longer value"));
    CALL(MPI_Info_set(info, "gamma", "3"));
    CALL(MPI_Info_set(info, "alpha", "uno")); /* replaces, keeps three keys */
    CALL(MPI_Info_get_nkeys(info, &n));
    CHECK(n == 3, "%d keys, expected 3", n);
    expect_value(info, "alpha", "uno");
    expect_value(info, "beta", "a longer value");
    expect_absent(info, "delta");
    /* Every key once among the nth keys. */
    int seen = 0;
    for (int i = 0; i < n; i++) {
        CALL(MPI_Info_get_nthkey(info, i, key));
        seen |= strcmp(key, "alpha") == 0 ? 1 : strcmp(key, "beta") == 0 ? 2 : strcmp(key, "gamma") == 0 ? 4 : 8;
    }
    CHECK(seen == 7, "nth keys cover %#x, expected alpha, beta, gamma", seen);

#ifdef FERRY_MPI_H
    /* MPI_Info_get truncates to valuelen characters, as the standard says (MPICH returns
     * MPI_ERR_INFO_VALUE instead). */
    memset(buf, 'x', sizeof buf);
    CALL(MPI_Info_get(info, "beta", 4, buf, &flag));
    CHECK(flag && strcmp(buf, "a lo") == 0, "truncated value \"%s\"", buf);
#endif

    /* MPI_Info_get_string: the length with its null, the value truncated to the buffer. */
    int buflen = 0;
    CALL(MPI_Info_get_string(info, "beta", &buflen, buf, &flag));
    CHECK(flag && buflen == 15, "get_string length: flag %d buflen %d, expected 15", flag, buflen);
    buflen = 5;
    CALL(MPI_Info_get_string(info, "beta", &buflen, buf, &flag));
    CHECK(flag && buflen == 15 && strcmp(buf, "a lo") == 0, "get_string truncated: buflen %d \"%s\"", buflen, buf);
    buflen = sizeof buf;
    CALL(MPI_Info_get_string(info, "gamma", &buflen, buf, &flag));
    CHECK(flag && buflen == 2 && strcmp(buf, "3") == 0, "get_string: buflen %d \"%s\"", buflen, buf);
    buflen = sizeof buf;
    CALL(MPI_Info_get_string(info, "delta", &buflen, buf, &flag));
    CHECK(!flag, "get_string found an absent key");

    /* Dup is a separate copy. */
    CALL(MPI_Info_dup(info, &dup));
    CALL(MPI_Info_delete(info, "gamma"));
    CALL(MPI_Info_get_nkeys(info, &n));
    CHECK(n == 2, "%d keys after delete, expected 2", n);
    expect_absent(info, "gamma");
    expect_value(dup, "gamma", "3");
    CALL(MPI_Info_get_nkeys(dup, &n));
    CHECK(n == 3, "dup has %d keys, expected 3", n);

    /* Error classes. */
    char longkey[MPI_MAX_INFO_KEY + 8];
    memset(longkey, 'k', sizeof longkey - 1);
    longkey[sizeof longkey - 1] = 0;
    EXPECT_CLASS(MPI_Info_set(info, longkey, "v"), MPI_ERR_INFO_KEY);
    EXPECT_CLASS(MPI_Info_set(info, "", "v"), MPI_ERR_INFO_KEY);
    char *longval = xmalloc(MPI_MAX_INFO_VAL + 8);
    memset(longval, 'v', MPI_MAX_INFO_VAL + 7);
    longval[MPI_MAX_INFO_VAL + 7] = 0;
    EXPECT_CLASS(MPI_Info_set(info, "k", longval), MPI_ERR_INFO_VALUE);
    free(longval);
    EXPECT_CLASS(MPI_Info_delete(info, "gamma"), MPI_ERR_INFO_NOKEY);
    EXPECT_CLASS(MPI_Info_get_nthkey(info, 2, key), MPI_ERR_ARG);
    EXPECT_CLASS(MPI_Info_get_nthkey(info, -1, key), MPI_ERR_ARG);
    EXPECT_CLASS(MPI_Info_get(info, "alpha", -1, buf, &flag), MPI_ERR_ARG);
    /* MPI_INFO_NULL is a null argument, as in MPICH; a handle that is no info object is MPI_ERR_INFO. */
    EXPECT_CLASS(MPI_Info_get_nkeys(MPI_INFO_NULL, &n), MPI_ERR_ARG);
    EXPECT_CLASS(MPI_Info_set(MPI_INFO_NULL, "a", "b"), MPI_ERR_ARG);
#ifdef FERRY_MPI_H
    EXPECT_CLASS(MPI_Info_get_nkeys((MPI_Info)0x9c0fffff, &n), MPI_ERR_INFO);
    EXPECT_CLASS(MPI_Comm_set_info(MPI_COMM_WORLD, (MPI_Info)0x9c0fffff), MPI_ERR_INFO);
#endif

    /* Hints on communicators: kept, returned, copied by dup, replaced by dup_with_info. */
    MPI_Comm c1, c2, c3;
    MPI_Info used;
    CALL(MPI_Comm_dup(MPI_COMM_WORLD, &c1));
    CALL(MPI_Comm_set_info(c1, info));
    CALL(MPI_Comm_get_info(c1, &used));
    expect_hint(used, "alpha", "uno");
    expect_hint(used, "beta", "a longer value");
    CALL(MPI_Info_free(&used));
    CHECK(used == MPI_INFO_NULL, "MPI_Info_free left the handle %#x", (unsigned)used);
    CALL(MPI_Comm_dup(c1, &c2));
    CALL(MPI_Comm_get_info(c2, &used));
    expect_hint(used, "alpha", "uno");
    CALL(MPI_Info_free(&used));
    CALL(MPI_Comm_dup_with_info(c1, dup, &c3));
    CALL(MPI_Comm_get_info(c3, &used));
    expect_hint(used, "gamma", "3");
    CALL(MPI_Info_free(&used));
    /* The new communicator works. */
    int sum = 0, one = 1;
    CALL(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, c3));
    CHECK(sum == np, "allreduce on the dup_with_info communicator: %d", sum);
    EXPECT_CLASS(MPI_Comm_set_info(MPI_COMM_NULL, info), MPI_ERR_COMM);
    EXPECT_CLASS(MPI_Comm_get_info(c1, NULL), MPI_ERR_ARG);
    CALL(MPI_Comm_free(&c1));
    CALL(MPI_Comm_free(&c2));
    CALL(MPI_Comm_free(&c3));

    CALL(MPI_Info_free(&info));
    CALL(MPI_Info_free(&dup));
    EXPECT_CLASS(MPI_Info_free(&info), MPI_ERR_ARG);

    /* MPI_INFO_ENV: readable; what it holds depends on the launcher, "command" if anything. */
    CALL(MPI_Info_get_nkeys(MPI_INFO_ENV, &n));
    CHECK(n >= 0, "MPI_INFO_ENV has %d keys", n);
    for (int i = 0; i < n; i++)
        CALL(MPI_Info_get_nthkey(MPI_INFO_ENV, i, key));

    MPI_Finalize();
    finalized = 1;
    if (me == 0)
        printf("info: ok\n");
    return 0;
}

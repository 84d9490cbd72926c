/* ranks: 1 2 4 5 */
/*
 * Error handling with MPI_ERRORS_RETURN: Comm_set_errhandler /
 * Comm_get_errhandler / Errhandler_free; the error class of invalid
 * arguments (rank out of range -> MPI_ERR_RANK, negative count ->
 * MPI_ERR_COUNT, negative tag other than MPI_ANY_TAG, or MPI_ANY_TAG on a
 * send -> MPI_ERR_TAG, MPI_COMM_NULL -> MPI_ERR_COMM, MPI_DATATYPE_NULL ->
 * MPI_ERR_TYPE, NULL buffer with count > 0 -> MPI_ERR_BUFFER, invalid
 * request -> MPI_ERR_REQUEST); Error_class of the returned codes and of
 * the classes themselves; Error_string text; communication still works
 * after the errors.
 */
#include <string.h>

#define TEST_NAME "errors"
#include "testutil.h"

static const struct {
    int cls;
    const char *name;
} classes[] = {
    { MPI_ERR_BUFFER, "MPI_ERR_BUFFER" }, { MPI_ERR_COUNT, "MPI_ERR_COUNT" },
    { MPI_ERR_TYPE, "MPI_ERR_TYPE" },     { MPI_ERR_TAG, "MPI_ERR_TAG" },
    { MPI_ERR_COMM, "MPI_ERR_COMM" },     { MPI_ERR_RANK, "MPI_ERR_RANK" },
    { MPI_ERR_REQUEST, "MPI_ERR_REQUEST" }, { MPI_ERR_TRUNCATE, "MPI_ERR_TRUNCATE" },
    { MPI_ERR_ARG, "MPI_ERR_ARG" },       { MPI_ERR_OTHER, "MPI_ERR_OTHER" },
    { MPI_ERR_INTERN, "MPI_ERR_INTERN" }, { MPI_ERR_IN_STATUS, "MPI_ERR_IN_STATUS" },
    { MPI_ERR_PENDING, "MPI_ERR_PENDING" }, { MPI_ERR_UNKNOWN, "MPI_ERR_UNKNOWN" },
};
enum { NCLASSES = sizeof classes / sizeof classes[0] };

static const char *class_name(int cls)
{
    if (cls == MPI_SUCCESS)
        return "MPI_SUCCESS";
    for (int k = 0; k < NCLASSES; k++)
        if (classes[k].cls == cls)
            return classes[k].name;
    return "another class";
}

/* The call must fail with error class `want`; its error string must be
 * non-empty. */
static void expect_named_class(int rc, int want, const char *call, int line)
{
    if (rc == MPI_SUCCESS)
        fail(line, "%s succeeded, expected %s", call, class_name(want));
    int cls = -1;
    CALL(MPI_Error_class(rc, &cls));
    if (cls != want)
        fail(line, "%s: error class %d (%s), expected %s", call, cls, class_name(cls),
             class_name(want));
    char text[MPI_MAX_ERROR_STRING];
    int len = -1;
    memset(text, 0, sizeof text);
    CALL(MPI_Error_string(rc, text, &len));
    if (len <= 0 || len >= MPI_MAX_ERROR_STRING || (int)strlen(text) != len)
        fail(line, "%s: Error_string gave length %d for \"%s\"", call, len, text);
}

#undef EXPECT
#define EXPECT(want, call) expect_named_class((call), (want), #call, __LINE__)

static void errhandlers(void)
{
    MPI_Errhandler eh = MPI_ERRHANDLER_NULL;
    CALL(MPI_Comm_get_errhandler(MPI_COMM_WORLD, &eh));
    CHECK(eh == MPI_ERRORS_ARE_FATAL, "default error handler of MPI_COMM_WORLD is not "
          "MPI_ERRORS_ARE_FATAL");
    CALL(MPI_Errhandler_free(&eh));
    CHECK(eh == MPI_ERRHANDLER_NULL, "Errhandler_free did not reset the handle");

    /* Errors on MPI_COMM_NULL, or not tied to a communicator, are raised on
     * MPI_COMM_SELF (MPI 4) or MPI_COMM_WORLD (before): set both. */
    CALL(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    CALL(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
    CALL(MPI_Comm_get_errhandler(MPI_COMM_WORLD, &eh));
    CHECK(eh == MPI_ERRORS_RETURN, "Comm_get_errhandler after set: not MPI_ERRORS_RETURN");
    CALL(MPI_Errhandler_free(&eh));
}

static void invalid_arguments(void)
{
    int buf[4] = { 0 };
    MPI_Request req = MPI_REQUEST_NULL;
    MPI_Status st;

    /* MPI_ERR_RANK */
    EXPECT(MPI_ERR_RANK, MPI_Send(buf, 1, MPI_INT, np, 0, MPI_COMM_WORLD));
    EXPECT(MPI_ERR_RANK, MPI_Send(buf, 1, MPI_INT, -5, 0, MPI_COMM_WORLD));
    EXPECT(MPI_ERR_RANK, MPI_Isend(buf, 1, MPI_INT, np + 3, 0, MPI_COMM_WORLD, &req));
    EXPECT(MPI_ERR_RANK, MPI_Recv(buf, 1, MPI_INT, np, 0, MPI_COMM_WORLD, &st));
    EXPECT(MPI_ERR_RANK, MPI_Irecv(buf, 1, MPI_INT, -7, 0, MPI_COMM_WORLD, &req));
    EXPECT(MPI_ERR_RANK, MPI_Ssend(buf, 1, MPI_INT, np, 0, MPI_COMM_WORLD));
    EXPECT(MPI_ERR_RANK, MPI_Probe(np, 0, MPI_COMM_WORLD, &st));

    /* MPI_ERR_COUNT */
    EXPECT(MPI_ERR_COUNT, MPI_Send(buf, -1, MPI_INT, 0, 0, MPI_COMM_WORLD));
    EXPECT(MPI_ERR_COUNT, MPI_Isend(buf, -3, MPI_INT, 0, 0, MPI_COMM_WORLD, &req));
    EXPECT(MPI_ERR_COUNT, MPI_Recv(buf, -1, MPI_INT, 0, 0, MPI_COMM_WORLD, &st));
    EXPECT(MPI_ERR_COUNT, MPI_Type_contiguous(-2, MPI_INT, &(MPI_Datatype){ 0 }));

    /* MPI_ERR_TAG */
    EXPECT(MPI_ERR_TAG, MPI_Send(buf, 1, MPI_INT, 0, -5, MPI_COMM_WORLD));
    EXPECT(MPI_ERR_TAG, MPI_Send(buf, 1, MPI_INT, 0, MPI_ANY_TAG, MPI_COMM_WORLD));
    EXPECT(MPI_ERR_TAG, MPI_Isend(buf, 1, MPI_INT, 0, -100, MPI_COMM_WORLD, &req));
    EXPECT(MPI_ERR_TAG, MPI_Recv(buf, 1, MPI_INT, 0, -5, MPI_COMM_WORLD, &st));
    EXPECT(MPI_ERR_TAG, MPI_Irecv(buf, 1, MPI_INT, 0, -9, MPI_COMM_WORLD, &req));

    /* MPI_ERR_COMM */
    int r = -1;
    EXPECT(MPI_ERR_COMM, MPI_Send(buf, 1, MPI_INT, 0, 0, MPI_COMM_NULL));
    EXPECT(MPI_ERR_COMM, MPI_Recv(buf, 1, MPI_INT, 0, 0, MPI_COMM_NULL, &st));
    EXPECT(MPI_ERR_COMM, MPI_Comm_rank(MPI_COMM_NULL, &r));
    EXPECT(MPI_ERR_COMM, MPI_Comm_size(MPI_COMM_NULL, &r));
    MPI_Comm c = MPI_COMM_NULL;
    EXPECT(MPI_ERR_COMM, MPI_Comm_dup(MPI_COMM_NULL, &c));
    EXPECT(MPI_ERR_COMM, MPI_Barrier(MPI_COMM_NULL));

    /* MPI_ERR_TYPE */
    EXPECT(MPI_ERR_TYPE, MPI_Send(buf, 1, MPI_DATATYPE_NULL, 0, 0, MPI_COMM_WORLD));
    EXPECT(MPI_ERR_TYPE, MPI_Irecv(buf, 1, MPI_DATATYPE_NULL, 0, 0, MPI_COMM_WORLD, &req));
    EXPECT(MPI_ERR_TYPE, MPI_Type_size(MPI_DATATYPE_NULL, &r));
    MPI_Datatype t = MPI_DATATYPE_NULL;
    EXPECT(MPI_ERR_TYPE, MPI_Type_commit(&t));

    /* MPI_ERR_BUFFER */
    EXPECT(MPI_ERR_BUFFER, MPI_Send(NULL, 1, MPI_INT, 0, 0, MPI_COMM_WORLD));
    EXPECT(MPI_ERR_BUFFER, MPI_Recv(NULL, 2, MPI_INT, 0, 0, MPI_COMM_WORLD, &st));
    EXPECT(MPI_ERR_BUFFER, MPI_Isend(NULL, 4, MPI_DOUBLE, 0, 0, MPI_COMM_WORLD, &req));

    /* MPI_ERR_REQUEST: a handle that no call ever returned. */
    MPI_Request bad;
    memset(&bad, 0, sizeof bad);
    EXPECT(MPI_ERR_REQUEST, MPI_Wait(&bad, &st));
    int flag = 0;
    memset(&bad, 0, sizeof bad);
    EXPECT(MPI_ERR_REQUEST, MPI_Test(&bad, &flag, &st));
    memset(&bad, 0, sizeof bad);
    EXPECT(MPI_ERR_REQUEST, MPI_Request_free(&bad));
    req = MPI_REQUEST_NULL;
    EXPECT(MPI_ERR_REQUEST, MPI_Request_free(&req));
}

static void class_table(void)
{
    CHECK(MPI_SUCCESS == 0, "MPI_SUCCESS is %d", MPI_SUCCESS);
    char text[MPI_MAX_ERROR_STRING];
    int len = -1;
    CALL(MPI_Error_string(MPI_SUCCESS, text, &len));
    CHECK(len > 0 && (int)strlen(text) == len, "Error_string(MPI_SUCCESS) length %d", len);

    char seen[NCLASSES][MPI_MAX_ERROR_STRING];
    for (int k = 0; k < NCLASSES; k++) {
        int cls = -1;
        CHECK(classes[k].cls > MPI_SUCCESS && classes[k].cls <= MPI_ERR_LASTCODE,
              "%s = %d is out of range", classes[k].name, classes[k].cls);
        CALL(MPI_Error_class(classes[k].cls, &cls));
        CHECK(cls == classes[k].cls, "Error_class(%s) = %d", classes[k].name, cls);
        len = -1;
        CALL(MPI_Error_string(classes[k].cls, seen[k], &len));
        CHECK(len > 0 && len < MPI_MAX_ERROR_STRING && (int)strlen(seen[k]) == len,
              "Error_string(%s) length %d", classes[k].name, len);
        for (int j = 0; j < k; j++)
            CHECK(classes[j].cls != classes[k].cls && strcmp(seen[j], seen[k]) != 0,
                  "%s and %s share a value or a text", classes[j].name, classes[k].name);
    }
}

static void still_works(void)
{
    int right = (me + 1) % np, left = (me + np - 1) % np;
    int out = 31 * me, in = -1;
    CALL(MPI_Sendrecv(&out, 1, MPI_INT, right, 1, &in, 1, MPI_INT, left, 1, MPI_COMM_WORLD,
                      MPI_STATUS_IGNORE));
    CHECK(in == 31 * left, "message after the errors: %d", in);
    /* Nothing the failed calls might have left behind is received. */
    int flag = 1;
    CALL(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE));
    CHECK(flag == 0, "a failed send left a message behind");
}

int main(int argc, char **argv)
{
    TEST_INIT(&argc, &argv);

    errhandlers();
    invalid_arguments();
    class_table();
    CALL(MPI_Barrier(MPI_COMM_WORLD));
    still_works();

    CALL(MPI_Barrier(MPI_COMM_WORLD));
    CALL(MPI_Finalize());
    return 0;
}

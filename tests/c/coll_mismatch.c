/* ranks: 2 4 7 */
/* env: FERRY_TRANSPORTS=shm,tcp */
/* env: FERRY_TRANSPORTS=tcp */
/* mpich: skip an erroneous program: what ranks that disagree on a collective see is Ferry's own */
/*
 * Erroneous collective calls end in an error, not a hang. Ranks disagree on MPI_Bcast's count
 * (the root sends 10 ints, the others expect 1): every rank but the root gets
 * MPI_ERR_TRUNCATE through MPI_ERRORS_RETURN, also those that would only have heard from a
 * failed rank (a failed rank releases the ones behind it), blocking and non-blocking, and
 * the communicator stays usable. The same buffer as send and receive buffer (not
 * MPI_IN_PLACE) is MPI_ERR_BUFFER at the call. An allgather whose receive blocks at one rank
 * exceed the send blocks is an error there and leaves the communicator usable. Nothing is
 * written to stderr about errors the program takes back.
 */
#define TEST_NAME "coll_mismatch"
#include "testutil.h"

#include <unistd.h>

static int error_class(int rc)
{
    int cls = MPI_SUCCESS;
    if (rc != MPI_SUCCESS)
        MPI_Error_class(rc, &cls);
    return cls;
}

int main(int argc, char **argv)
{
    TEST_INIT(&argc, &argv);
    CALL(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    /* Errors the program takes back through MPI_ERRORS_RETURN are its own to report: the
     * library writes nothing about them (a test harness counts any output as a failure). */
    fflush(stderr);
    int saved_stderr = dup(2);
    FILE *quiet = tmpfile();
    CHECK(saved_stderr >= 0 && quiet != NULL, "cannot set stderr aside");
    dup2(fileno(quiet), 2);
    int buf[10], expect = me == 0 ? MPI_SUCCESS : MPI_ERR_TRUNCATE;
    int count = me == 0 ? 10 : 1;
    for (int round = 0; round < 3; round++) {
        for (int i = 0; i < 10; i++)
            buf[i] = me == 0 ? 100 + i : -1;
        int cls = error_class(MPI_Bcast(buf, count, MPI_INT, 0, MPI_COMM_WORLD));
        CHECK(cls == expect, "round %d: MPI_Bcast gave class %d, expected %d", round, cls, expect);

        MPI_Request req;
        int rc = MPI_Ibcast(buf, count, MPI_INT, 0, MPI_COMM_WORLD, &req);
        CHECK(rc == MPI_SUCCESS, "round %d: MPI_Ibcast did not start (%d)", round, rc);
        cls = error_class(MPI_Wait(&req, MPI_STATUS_IGNORE));
        CHECK(cls == expect, "round %d: MPI_Ibcast gave class %d, expected %d", round, cls, expect);

        /* The communicator still works: a correct broadcast and a barrier. */
        int v = me == 0 ? 7 + round : 0;
        CALL(MPI_Bcast(&v, 1, MPI_INT, 0, MPI_COMM_WORLD));
        CHECK(v == 7 + round, "round %d: broadcast after the errors gave %d", round, v);
        CALL(MPI_Barrier(MPI_COMM_WORLD));
    }

    /* Aliased buffers. */
    int x[4] = { me, me, me, me };
    int cls = error_class(MPI_Allreduce(x, x, 4, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    CHECK(cls == MPI_ERR_BUFFER, "aliased MPI_Allreduce gave class %d", cls);
    int *all = xmalloc(sizeof(int) * (size_t)np);
    cls = error_class(MPI_Allgather(all, 1, MPI_INT, all, 1, MPI_INT, MPI_COMM_WORLD));
    CHECK(cls == MPI_ERR_BUFFER, "aliased MPI_Allgather gave class %d", cls);
    cls = error_class(MPI_Alltoall(all, 1, MPI_INT, all, 1, MPI_INT, MPI_COMM_WORLD));
    CHECK(cls == MPI_ERR_BUFFER, "aliased MPI_Alltoall gave class %d", cls);
    /* Rank 0's receive blocks (16 KiB) larger than the send blocks everyone sends (8 bytes,
     * which would run through the shared-memory slots of 4 KiB on one host): an error, in
     * step with the others, and nothing written beyond the slots. Its send buffer is as long
     * as its receive blocks, since a rank may read that much of it. */
    {
        int big = me == 0 ? 4096 : 2;
        int *sb = xmalloc(sizeof(int) * 4096), *rb = xmalloc(sizeof(int) * 4096 * (size_t)np);
        for (int i = 0; i < 4096; i++)
            sb[i] = me;
        cls = error_class(MPI_Allgather(sb, 2, MPI_INT, rb, big, MPI_INT, MPI_COMM_WORLD));
        CHECK(cls != MPI_SUCCESS || me != 0, "mismatched MPI_Allgather succeeded at the rank that expected more");
        CALL(MPI_Barrier(MPI_COMM_WORLD));
        CALL(MPI_Allgather(sb, 2, MPI_INT, rb, 2, MPI_INT, MPI_COMM_WORLD));
        for (int r = 0; r < np; r++)
            CHECK(rb[2 * r] == r && rb[2 * r + 1] == r, "allgather after the mismatch: block %d holds %d", r, rb[2 * r]);
        free(sb);
        free(rb);
    }
    /* MPI_IN_PLACE is the way to say it, and works. */
    CALL(MPI_Allreduce(MPI_IN_PLACE, x, 4, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    CHECK(x[0] == np * (np - 1) / 2, "in-place sum %d", x[0]);
    free(all);
    fflush(stderr);
    dup2(saved_stderr, 2);
    long written = ftell(quiet) >= 0 ? (fseek(quiet, 0, SEEK_END), ftell(quiet)) : -1;
    if (written != 0) {
        char line[512];
        rewind(quiet);
        while (fgets(line, sizeof line, quiet))
            fputs(line, stderr);
    }
    CHECK(written == 0, "the library wrote %ld bytes to stderr about errors the program took back", written);
    CALL(MPI_Barrier(MPI_COMM_WORLD));
    finalized = 1;
    CALL(MPI_Finalize());
    return 0;
}

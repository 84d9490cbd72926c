/* ranks: 1 2 3 4 */
/*
 * One buffer passed as both send and receive buffer of a collective (allowed
 * only as MPI_IN_PLACE) is MPI_ERR_BUFFER through the error handler, and the
 * erroneous call leaves the communicator's calls in step: where only the root's
 * buffers alias (Reduce, Gather, Scatter), the others' call goes on and the root
 * may make the call again, correctly, to meet it; where only the root calls
 * (the others make no call at all), nothing waits. The send buffer as the
 * rank's own block of an allgather's receive buffer aliases too. Blocking and
 * non-blocking; a correct collective after each case checks that the ranks are
 * still in step.
 */
#define TEST_NAME "coll_noalias"
#include "testutil.h"

#define N 2

static void in_step(int line)
{
    int one = 1, sum = -1;
    CALL(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    if (sum != np)
        fail(line, "allreduce after the erroneous calls gave %d", sum);
}

int main(int argc, char **argv)
{
    TEST_INIT(&argc, &argv);
    CALL(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MPI_Comm w = MPI_COMM_WORLD;
    int *buf = xmalloc(N * np * sizeof(int)), *out = xmalloc(N * np * sizeof(int));
    int *counts = xmalloc(np * sizeof(int)), *displs = xmalloc(np * sizeof(int));
    MPI_Datatype *types = xmalloc(np * sizeof(MPI_Datatype));
    for (int i = 0; i < np; i++) {
        counts[i] = N;
        displs[i] = N * i;
        types[i] = MPI_INT;
    }
    for (int i = 0; i < N * np; i++)
        buf[i] = i;

    /* Every rank's buffers alias. */
    EXPECT(MPI_ERR_BUFFER, MPI_Allreduce(buf, buf, 1, MPI_INT, MPI_SUM, w));
    in_step(__LINE__);

    /* Only the root's: it calls again, correctly, and the result is the others' too. */
    int mine = me + 1, sum = -1;
    int rc = MPI_Reduce(&mine, me == 0 ? (void *)&mine : NULL, 1, MPI_INT, MPI_SUM, 0, w);
    if (me == 0) {
        EXPECT(MPI_ERR_BUFFER, rc);
        CALL(MPI_Reduce(&mine, &sum, 1, MPI_INT, MPI_SUM, 0, w));
        CHECK(sum == np * (np + 1) / 2, "make-up reduce gave %d", sum);
    } else {
        CALL(rc);
    }
    /* MPI_IN_PLACE at the root is no alias. */
    sum = me + 1;
    CALL(MPI_Reduce(me == 0 ? MPI_IN_PLACE : (void *)&sum, &sum, 1, MPI_INT, MPI_SUM, 0, w));
    CHECK(me != 0 || sum == np * (np + 1) / 2, "in-place reduce gave %d", sum);

    rc = MPI_Gather(buf, 1, MPI_INT, buf, 1, MPI_INT, 0, w);
    if (me == 0) {
        EXPECT(MPI_ERR_BUFFER, rc);
        CALL(MPI_Gather(buf, 1, MPI_INT, out, 1, MPI_INT, 0, w));
        for (int i = 0; i < np; i++)
            CHECK(out[i] == 0, "make-up gather: block %d holds %d", i, out[i]);
    } else {
        CALL(rc);
    }
    int got = -1;
    rc = MPI_Scatter(buf, 1, MPI_INT, buf, 1, MPI_INT, 0, w);
    if (me == 0) {
        EXPECT(MPI_ERR_BUFFER, rc);
        CALL(MPI_Scatter(buf, 1, MPI_INT, &got, 1, MPI_INT, 0, w));
    } else {
        CALL(rc);
        got = buf[0];
    }
    CHECK(got == me, "make-up scatter: rank %d got %d", me, got);
    in_step(__LINE__);

    /* Only the root calls; the others make no call. */
    if (me == 0) {
        EXPECT(MPI_ERR_BUFFER, MPI_Gather(buf, N, MPI_INT, buf, N, MPI_INT, 0, w));
        EXPECT(MPI_ERR_BUFFER, MPI_Gatherv(buf, N, MPI_INT, buf, counts, displs, MPI_INT, 0, w));
        EXPECT(MPI_ERR_BUFFER, MPI_Scatter(buf, N, MPI_INT, buf, N, MPI_INT, 0, w));
        EXPECT(MPI_ERR_BUFFER, MPI_Scatterv(buf, counts, displs, MPI_INT, buf, N, MPI_INT, 0, w));
        EXPECT(MPI_ERR_BUFFER, MPI_Reduce(buf, buf, N, MPI_INT, MPI_SUM, 0, w));
    }
    /* Every rank: the own block of the receive buffer, or the same pointer. */
    EXPECT(MPI_ERR_BUFFER, MPI_Allgather(&buf[me], 1, MPI_INT, buf, 1, MPI_INT, w));
    EXPECT(MPI_ERR_BUFFER, MPI_Allgatherv(&buf[N * me], N, MPI_INT, buf, counts, displs, MPI_INT, w));
    EXPECT(MPI_ERR_BUFFER, MPI_Alltoall(buf, N, MPI_INT, buf, N, MPI_INT, w));
    EXPECT(MPI_ERR_BUFFER, MPI_Alltoallv(buf, counts, displs, MPI_INT, buf, counts, displs, MPI_INT, w));
    EXPECT(MPI_ERR_BUFFER, MPI_Reduce_scatter(buf, buf, counts, MPI_INT, MPI_SUM, w));
    EXPECT(MPI_ERR_BUFFER, MPI_Reduce_scatter_block(buf, buf, N, MPI_INT, MPI_SUM, w));
    EXPECT(MPI_ERR_BUFFER, MPI_Scan(buf, buf, N, MPI_INT, MPI_SUM, w));
    EXPECT(MPI_ERR_BUFFER, MPI_Exscan(buf, buf, N, MPI_INT, MPI_SUM, w));
    in_step(__LINE__);
    int *wd = xmalloc(np * sizeof(int));
    for (int i = 0; i < np; i++)
        wd[i] = displs[i] * (int)sizeof(int);
    EXPECT(MPI_ERR_BUFFER, MPI_Alltoallw(buf, counts, wd, types, buf, counts, wd, types, w));
    in_step(__LINE__);

    /* Non-blocking: the error comes from the call, and the root's make-up call meets the
     * others' first one. */
    MPI_Request req;
    EXPECT(MPI_ERR_BUFFER, MPI_Iallreduce(buf, buf, 1, MPI_INT, MPI_SUM, w, &req));
    EXPECT(MPI_ERR_BUFFER, MPI_Iallgather(&buf[me], 1, MPI_INT, buf, 1, MPI_INT, w, &req));
    sum = -1;
    rc = MPI_Ireduce(&mine, me == 0 ? (void *)&mine : NULL, 1, MPI_INT, MPI_SUM, 0, w, &req);
    if (me == 0) {
        EXPECT(MPI_ERR_BUFFER, rc);
        rc = MPI_Ireduce(&mine, &sum, 1, MPI_INT, MPI_SUM, 0, w, &req);
    }
    CALL(rc);
    CALL(MPI_Wait(&req, MPI_STATUS_IGNORE));
    CHECK(me != 0 || sum == np * (np + 1) / 2, "make-up ireduce gave %d", sum);
    CALL(MPI_Ibarrier(w, &req));
    CALL(MPI_Wait(&req, MPI_STATUS_IGNORE));
    in_step(__LINE__);

    free(wd);
    free(types);
    free(displs);
    free(counts);
    free(out);
    free(buf);
    CALL(MPI_Finalize());
    return 0;
}

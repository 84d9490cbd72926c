/* ranks: 2 3 4 */
/* mpich: skip Debian's MPICH 4.0 makes persistent collectives on intracommunicators only (an assertion fails on an intercommunicator) */
/*
 * MPI-4 persistent collectives on an intercommunicator: Bcast_init and Reduce_init with
 * MPI_ROOT / MPI_PROC_NULL (the bystanders pass no datatype), Allreduce_init and
 * Barrier_init, each started three times with new data; Alltoallv_init and Allgatherv_init,
 * whose count and displacement arrays (one entry per remote rank, so as many as the other
 * group has ranks) are freed right after the init; Scan_init is refused.
 */
#define TEST_NAME "intercomm_persistent"
#include "testutil.h"

int main(int argc, char **argv)
{
    TEST_INIT(&argc, &argv);
    int b = np / 2, a = np - b, in_a = me < a;
    MPI_Comm local, inter;
    int rank, rsize;
    CALL(MPI_Comm_split(MPI_COMM_WORLD, in_a, me, &local));
    CALL(MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, in_a ? a : 0, 3, &inter));
    CALL(MPI_Comm_rank(inter, &rank));
    CALL(MPI_Comm_remote_size(inter, &rsize));

    /* Group A's rank 0 is the root of the bcast; group B's last rank the root of the reduce. */
    int bval = -1, in = 0, red = -1, all = -1;
    int broot = in_a ? (rank == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0;
    int rroot = in_a ? b - 1 : (rank == b - 1 ? MPI_ROOT : MPI_PROC_NULL);
    MPI_Request req[4];
    if (broot == MPI_PROC_NULL)
        CALL(MPI_Bcast_init(NULL, 0, MPI_DATATYPE_NULL, broot, inter, MPI_INFO_NULL, &req[0]));
    else
        CALL(MPI_Bcast_init(&bval, 1, MPI_INT, broot, inter, MPI_INFO_NULL, &req[0]));
    if (rroot == MPI_PROC_NULL)
        CALL(MPI_Reduce_init(NULL, NULL, 0, MPI_DATATYPE_NULL, MPI_SUM, rroot, inter, MPI_INFO_NULL, &req[1]));
    else
        CALL(MPI_Reduce_init(&in, &red, 1, MPI_INT, MPI_SUM, rroot, inter, MPI_INFO_NULL, &req[1]));
    CALL(MPI_Allreduce_init(&in, &all, 1, MPI_INT, MPI_SUM, inter, MPI_INFO_NULL, &req[2]));
    CALL(MPI_Barrier_init(inter, MPI_INFO_NULL, &req[3]));
    for (int round = 0; round < 3; round++) {
        bval = broot == MPI_ROOT ? 100 + round : -1;
        in = me + round;
        red = all = -1;
        for (int k = 0; k < 4; k++) {
            CALL(MPI_Start(&req[k]));
            CALL(MPI_Wait(&req[k], MPI_STATUS_IGNORE));
        }
        if (!in_a)
            CHECK(bval == 100 + round, "round %d: bcast gave %d", round, bval);
        int want_a = 0, want_b = 0;
        for (int w = 0; w < np; w++)
            *(w < a ? &want_a : &want_b) += w + round;
        if (rroot == MPI_ROOT)
            CHECK(red == want_a, "round %d: reduce gave %d, want %d", round, red, want_a);
        CHECK(all == (in_a ? want_b : want_a), "round %d: allreduce gave %d", round, all);
    }
    for (int k = 0; k < 4; k++)
        CALL(MPI_Request_free(&req[k]));

    /* Alltoallv_init: one int to each remote rank, remote rank r's block at 2 r. */
    int *sc = xmalloc(sizeof(int) * rsize), *sd = xmalloc(sizeof(int) * rsize);
    int *rc = xmalloc(sizeof(int) * rsize), *rd = xmalloc(sizeof(int) * rsize);
    int *sbuf = xmalloc(sizeof(int) * 2 * rsize), *rbuf = xmalloc(sizeof(int) * 2 * rsize);
    int *gbuf = xmalloc(sizeof(int) * 2 * rsize), gval = 0;
    for (int r = 0; r < rsize; r++)
        sc[r] = rc[r] = 1, sd[r] = rd[r] = 2 * r;
    MPI_Request v[2];
    CALL(MPI_Alltoallv_init(sbuf, sc, sd, MPI_INT, rbuf, rc, rd, MPI_INT, inter, MPI_INFO_NULL, &v[0]));
    CALL(MPI_Allgatherv_init(&gval, 1, MPI_INT, gbuf, rc, rd, MPI_INT, inter, MPI_INFO_NULL, &v[1]));
    for (int r = 0; r < rsize; r++)
        sc[r] = rc[r] = sd[r] = rd[r] = -7;
    free(sc), free(sd), free(rc), free(rd);
    for (int round = 0; round < 2; round++) {
        for (int r = 0; r < 2 * rsize; r++)
            sbuf[r] = r % 2 ? -1 : 1000 * round + 10 * me + r / 2, rbuf[r] = gbuf[r] = -1;
        gval = 1000 * round + me;
        CALL(MPI_Startall(2, v));
        MPI_Status vst[2];
        CALL(MPI_Waitall(2, v, vst));
        for (int r = 0; r < rsize; r++) {
            int w = in_a ? a + r : r; /* the remote rank's world rank */
            CHECK(rbuf[2 * r] == 1000 * round + 10 * w + rank, "round %d: alltoallv from %d gave %d", round, r,
                  rbuf[2 * r]);
            CHECK(gbuf[2 * r] == 1000 * round + w, "round %d: allgatherv from %d gave %d", round, r, gbuf[2 * r]);
        }
    }
    CALL(MPI_Request_free(&v[0]));
    CALL(MPI_Request_free(&v[1]));
    free(sbuf), free(rbuf), free(gbuf);

    CALL(MPI_Comm_set_errhandler(inter, MPI_ERRORS_RETURN));
    MPI_Request scan;
    EXPECT(MPI_ERR_COMM, MPI_Scan_init(&in, &red, 1, MPI_INT, MPI_SUM, inter, MPI_INFO_NULL, &scan));
    CALL(MPI_Comm_free(&inter));
    CALL(MPI_Comm_free(&local));
    CALL(MPI_Finalize());
    finalized = 1;
    if (me == 0)
        printf("intercomm_persistent: ok\n");
    return 0;
}

/* ranks: 1 2 3 4 7 */
/* mpich: skip Debian's MPICH 4.0 returns wrong data or 'Invalid communicator' when several persistent collectives are active at once */
/*
 * MPI-4 persistent collectives: Barrier, Bcast, Reduce, Allreduce, Allgather,
 * Alltoall, Gather, Scatter and Scan _init, each started four times with new
 * data in the same buffers (MPI_Start, MPI_Startall, completed by MPI_Wait,
 * MPI_Waitall and an MPI_Test loop), interleaved with a blocking collective on
 * the same communicator; MPI_Request_free of an inactive one; error classes
 * of the init calls with MPI_ERRORS_RETURN.
 */
#define TEST_NAME "coll_persistent"
#include "testutil.h"

#include <string.h>

#define N 5 /* ints per rank */


static int val(int round, int rank, int i) { return round * 10000 + rank * 100 + i; }

static int class_of(int rc)
{
    int cls = MPI_SUCCESS;
    MPI_Error_class(rc, &cls);
    return cls;
}

#define EXPECT_CLASS(call, want) do { int rc_ = (call); \
        CHECK(rc_ != MPI_SUCCESS, "%s succeeded", #call); \
        CHECK(class_of(rc_) == (want), "%s: class %d, expected %d", #call, class_of(rc_), (want)); } while (0)

int main(int argc, char **argv)
{
    TEST_INIT(&argc, &argv);
    int last = np - 1;
    int bc[N], sum_in[N], sum_out[N], red_out[N], scan_out[N];
    int *ag = xmalloc(np * N * sizeof(int)), *a2a_in = xmalloc(np * N * sizeof(int)), *a2a_out = xmalloc(np * N * sizeof(int));
    int *gat = xmalloc(np * N * sizeof(int)), *sca = xmalloc(np * N * sizeof(int)), sca_out[N];
    enum { BARRIER, BCAST, ALLREDUCE, REDUCE, ALLGATHER, ALLTOALL, GATHER, SCATTER, SCAN, NREQ };
    MPI_Request r[NREQ];
    CALL(MPI_Barrier_init(MPI_COMM_WORLD, MPI_INFO_NULL, &r[BARRIER]));
    CALL(MPI_Bcast_init(bc, N, MPI_INT, last, MPI_COMM_WORLD, MPI_INFO_NULL, &r[BCAST]));
    CALL(MPI_Allreduce_init(sum_in, sum_out, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &r[ALLREDUCE]));
    CALL(MPI_Reduce_init(sum_in, red_out, N, MPI_INT, MPI_MAX, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &r[REDUCE]));
    CALL(MPI_Allgather_init(sum_in, N, MPI_INT, ag, N, MPI_INT, MPI_COMM_WORLD, MPI_INFO_NULL, &r[ALLGATHER]));
    CALL(MPI_Alltoall_init(a2a_in, N, MPI_INT, a2a_out, N, MPI_INT, MPI_COMM_WORLD, MPI_INFO_NULL, &r[ALLTOALL]));
    CALL(MPI_Gather_init(sum_in, N, MPI_INT, gat, N, MPI_INT, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &r[GATHER]));
    CALL(MPI_Scatter_init(sca, N, MPI_INT, sca_out, N, MPI_INT, last, MPI_COMM_WORLD, MPI_INFO_NULL, &r[SCATTER]));
    CALL(MPI_Scan_init(sum_in, scan_out, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &r[SCAN]));

    for (int round = 0; round < 4; round++) {
        for (int i = 0; i < N; i++) {
            bc[i] = me == last ? val(round, last, i) : -1;
            sum_in[i] = val(round, me, i);
            sca_out[i] = -1;
        }
        for (int j = 0; j < np; j++)
            for (int i = 0; i < N; i++) {
                a2a_in[j * N + i] = val(round, me, j * N + i);
                sca[j * N + i] = val(round, j, i) + 7;
            }
        memset(ag, 0xff, np * N * sizeof(int));
        memset(gat, 0xff, np * N * sizeof(int));
        if (round % 2 == 0) {
            CALL(MPI_Startall(NREQ, r));
        } else {
            for (int k = NREQ - 1; k >= 0; k--)
                CALL(MPI_Start(&r[k]));
        }
        /* A blocking collective while they run: it is ordered after them. */
        int one = 1, n = 0;
        CALL(MPI_Allreduce(&one, &n, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
        CHECK(n == np, "round %d: blocking allreduce %d", round, n);
        if (round == 0) {
            CALL(MPI_Waitall(NREQ, r, statuses_ignore()));
        } else if (round == 1) {
            for (int k = 0; k < NREQ; k++)
                CALL(MPI_Wait(&r[k], MPI_STATUS_IGNORE));
        } else {
            int done = 0;
            while (!done)
                CALL(MPI_Testall(NREQ, r, &done, statuses_ignore()));
        }
        for (int k = 0; k < NREQ; k++)
            CHECK(r[k] != MPI_REQUEST_NULL, "round %d: completion freed persistent request %d", round, k);
        for (int i = 0; i < N; i++) {
            CHECK(bc[i] == val(round, last, i), "round %d: bcast[%d] %d", round, i, bc[i]);
            int s = 0, pre = 0;
            for (int q = 0; q < np; q++) {
                s += val(round, q, i);
                if (q <= me)
                    pre += val(round, q, i);
            }
            CHECK(sum_out[i] == s, "round %d: allreduce[%d] %d, expected %d", round, i, sum_out[i], s);
            CHECK(scan_out[i] == pre, "round %d: scan[%d] %d, expected %d", round, i, scan_out[i], pre);
            if (me == 0)
                CHECK(red_out[i] == val(round, last, i), "round %d: reduce[%d] %d", round, i, red_out[i]);
            CHECK(sca_out[i] == val(round, me, i) + 7, "round %d: scatter[%d] %d", round, i, sca_out[i]);
        }
        for (int j = 0; j < np; j++)
            for (int i = 0; i < N; i++) {
                CHECK(ag[j * N + i] == val(round, j, i), "round %d: allgather[%d][%d] %d", round, j, i, ag[j * N + i]);
                CHECK(a2a_out[j * N + i] == val(round, j, me * N + i), "round %d: alltoall[%d][%d] %d", round, j, i, a2a_out[j * N + i]);
                if (me == 0)
                    CHECK(gat[j * N + i] == val(round, j, i), "round %d: gather[%d][%d] %d", round, j, i, gat[j * N + i]);
            }
    }
    for (int k = 0; k < NREQ; k++) {
        CALL(MPI_Request_free(&r[k]));
        CHECK(r[k] == MPI_REQUEST_NULL, "MPI_Request_free left request %d", k);
    }

    /* Errors at init. */
    CALL(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MPI_Request q;
    EXPECT_CLASS(MPI_Bcast_init(bc, N, MPI_INT, np, MPI_COMM_WORLD, MPI_INFO_NULL, &q), MPI_ERR_ROOT);
    EXPECT_CLASS(MPI_Bcast_init(bc, -1, MPI_INT, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &q), MPI_ERR_COUNT);
    EXPECT_CLASS(MPI_Allreduce_init(sum_in, sum_out, N, MPI_INT, MPI_OP_NULL, MPI_COMM_WORLD, MPI_INFO_NULL, &q), MPI_ERR_OP);
    EXPECT_CLASS(MPI_Allgather_init(sum_in, N, MPI_DATATYPE_NULL, ag, N, MPI_INT, MPI_COMM_WORLD, MPI_INFO_NULL, &q), MPI_ERR_TYPE);
    EXPECT_CLASS(MPI_Barrier_init(MPI_COMM_NULL, MPI_INFO_NULL, &q), MPI_ERR_COMM);
    /* Nothing was started by the failed calls: the communicator is still in step. */
    int one = 1, n = 0;
    CALL(MPI_Allreduce(&one, &n, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    CHECK(n == np, "allreduce after the failed inits: %d", n);

    free(ag); free(a2a_in); free(a2a_out); free(gat); free(sca);
    MPI_Finalize();
    finalized = 1;
    if (me == 0)
        printf("coll_persistent: ok\n");
    return 0;
}

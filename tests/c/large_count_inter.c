/* ranks: 2 3 4 */
/*
 * Large-count v-collectives on an intercommunicator: their count and
 * displacement arrays have one entry per rank of the remote group (which
 * differs in size from the local one at 3 ranks), and only the rank that
 * passes MPI_ROOT is a root: MPI_Alltoallv_c, MPI_Allgatherv_c, MPI_Gatherv_c
 * and MPI_Scatterv_c, blocking and (Alltoallv) non-blocking, as mpi4py calls
 * them.
 */
#define TEST_NAME "large_count_inter"
#include "testutil.h"

int main(int argc, char **argv)
{
    TEST_INIT(&argc, &argv);
    int b = np / 2, a = np - b, in_a = me < a;
    MPI_Comm local, inter;
    int rank, rsize;
    CALL(MPI_Comm_split(MPI_COMM_WORLD, in_a, me, &local));
    CALL(MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, in_a ? a : 0, 5, &inter));
    CALL(MPI_Comm_rank(inter, &rank));
    CALL(MPI_Comm_remote_size(inter, &rsize));
    int first_remote = in_a ? a : 0; /* world rank of remote rank 0 */

    MPI_Count *c = xmalloc(sizeof(MPI_Count) * rsize);
    MPI_Aint *d = xmalloc(sizeof(MPI_Aint) * rsize);
    int *sbuf = xmalloc(sizeof(int) * rsize), *rbuf = xmalloc(sizeof(int) * rsize);
    for (int r = 0; r < rsize; r++)
        c[r] = 1, d[r] = r, sbuf[r] = 100 * me + r, rbuf[r] = -1;

    CALL(MPI_Alltoallv_c(sbuf, c, d, MPI_INT, rbuf, c, d, MPI_INT, inter));
    for (int r = 0; r < rsize; r++)
        CHECK(rbuf[r] == 100 * (first_remote + r) + rank, "alltoallv_c from remote %d: %d", r, rbuf[r]);

    MPI_Request req;
    for (int r = 0; r < rsize; r++)
        rbuf[r] = -1;
    CALL(MPI_Ialltoallv_c(sbuf, c, d, MPI_INT, rbuf, c, d, MPI_INT, inter, &req));
    CALL(MPI_Wait(&req, MPI_STATUS_IGNORE));
    for (int r = 0; r < rsize; r++)
        CHECK(rbuf[r] == 100 * (first_remote + r) + rank, "ialltoallv_c from remote %d: %d", r, rbuf[r]);

    int mine = me;
    for (int r = 0; r < rsize; r++)
        rbuf[r] = -1;
    CALL(MPI_Allgatherv_c(&mine, 1, MPI_INT, rbuf, c, d, MPI_INT, inter));
    for (int r = 0; r < rsize; r++)
        CHECK(rbuf[r] == first_remote + r, "allgatherv_c from remote %d: %d", r, rbuf[r]);

    /* Gatherv_c to group A's rank 0, then Scatterv_c from it back to group B. */
    int root = in_a ? (rank == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0;
    for (int r = 0; r < rsize; r++)
        rbuf[r] = -1;
    if (root == MPI_ROOT)
        CALL(MPI_Gatherv_c(NULL, 0, MPI_INT, rbuf, c, d, MPI_INT, root, inter));
    else if (root == MPI_PROC_NULL)
        CALL(MPI_Gatherv_c(NULL, 0, MPI_INT, NULL, NULL, NULL, MPI_INT, root, inter));
    else
        CALL(MPI_Gatherv_c(&mine, 1, MPI_INT, NULL, NULL, NULL, MPI_INT, root, inter));
    if (root == MPI_ROOT)
        for (int r = 0; r < rsize; r++)
            CHECK(rbuf[r] == first_remote + r, "gatherv_c from remote %d: %d", r, rbuf[r]);
    int got = -1;
    if (root == MPI_ROOT) {
        for (int r = 0; r < rsize; r++)
            sbuf[r] = 7 * (first_remote + r);
        CALL(MPI_Scatterv_c(sbuf, c, d, MPI_INT, NULL, 0, MPI_INT, root, inter));
    } else if (root == MPI_PROC_NULL) {
        CALL(MPI_Scatterv_c(NULL, NULL, NULL, MPI_INT, NULL, 0, MPI_INT, root, inter));
    } else {
        CALL(MPI_Scatterv_c(NULL, NULL, NULL, MPI_INT, &got, 1, MPI_INT, root, inter));
        CHECK(got == 7 * me, "scatterv_c gave %d, want %d", got, 7 * me);
    }

    free(c), free(d), free(sbuf), free(rbuf);
    CALL(MPI_Comm_free(&inter));
    CALL(MPI_Comm_free(&local));
    CALL(MPI_Finalize());
    return 0;
}

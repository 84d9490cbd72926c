/* ranks: 1 2 3 4 */
/*
 * Neighbourhood alltoall(v, w), blocking and not, where one process is the
 * neighbour in several directions: a 1 x 1 x np grid, periodic in every
 * dimension, so four of the six blocks go to the rank itself and (with 1 or 2
 * ranks) the other two to a single peer. On a Cartesian grid the block sent in
 * direction s arrives in the neighbour's block s ^ 1 (MPI-4.1 Example 8.10:
 * what a rank sends towards its negative neighbour is what that neighbour
 * receives from its positive one). The same neighbourhood as a distributed
 * graph matches the k-th edge to a process with the k-th edge from it instead.
 */
#define TEST_NAME "neighbor_dup_edges"
#include "testutil.h"

#define NSLOT 6

/* Rank r's neighbours in the grid, in MPI's order (-x, +x, -y, +y, -z, +z). */
static void neighbours(int r, int *n)
{
    for (int s = 0; s < 4; s++)
        n[s] = r;
    n[4] = (r - 1 + np) % np;
    n[5] = (r + 1) % np;
}

static void check(const char *what, const int *got, const int *want)
{
    for (int s = 0; s < NSLOT; s++)
        CHECK(got[s] == want[s], "%s: block %d holds %d, expected %d", what, s, got[s], want[s]);
}

int main(int argc, char **argv)
{
    TEST_INIT(&argc, &argv);
    MPI_Comm cart, graph;
    CALL(MPI_Cart_create(MPI_COMM_WORLD, 3, (int[]){1, 1, np}, (int[]){1, 1, 1}, 0, &cart));
    int nb[NSLOT], sbuf[NSLOT], rbuf[NSLOT], cart_want[NSLOT], graph_want[NSLOT], counts[NSLOT], displs[NSLOT];
    MPI_Aint wdispls[NSLOT];
    MPI_Datatype types[NSLOT];
    neighbours(me, nb);
    for (int d = 0; d < 3; d++) {
        int lo, hi;
        CALL(MPI_Cart_shift(cart, d, 1, &lo, &hi));
        CHECK(lo == nb[2 * d] && hi == nb[2 * d + 1], "dimension %d: neighbours %d %d", d, lo, hi);
    }
    for (int s = 0; s < NSLOT; s++) {
        sbuf[s] = me * NSLOT + s;
        counts[s] = 1;
        displs[s] = s;
        wdispls[s] = (MPI_Aint)(s * sizeof(int));
        types[s] = MPI_INT;
        cart_want[s] = nb[s] * NSLOT + (s ^ 1);
        /* Graph: the m-th edge from nb[s] to me is the m-th of nb[s]'s edges to me. */
        int m = 0, theirs[NSLOT];
        for (int k = 0; k < s; k++)
            m += nb[k] == nb[s];
        neighbours(nb[s], theirs);
        for (int t = 0; t < NSLOT; t++)
            if (theirs[t] == me && m-- == 0)
                graph_want[s] = nb[s] * NSLOT + t;
    }
    MPI_Request req;
    memset(rbuf, 0xff, sizeof rbuf);
    CALL(MPI_Neighbor_alltoall(sbuf, 1, MPI_INT, rbuf, 1, MPI_INT, cart));
    check("Neighbor_alltoall", rbuf, cart_want);
    memset(rbuf, 0xff, sizeof rbuf);
    CALL(MPI_Neighbor_alltoallv(sbuf, counts, displs, MPI_INT, rbuf, counts, displs, MPI_INT, cart));
    check("Neighbor_alltoallv", rbuf, cart_want);
    memset(rbuf, 0xff, sizeof rbuf);
    CALL(MPI_Neighbor_alltoallw(sbuf, counts, wdispls, types, rbuf, counts, wdispls, types, cart));
    check("Neighbor_alltoallw", rbuf, cart_want);
    memset(rbuf, 0xff, sizeof rbuf);
    CALL(MPI_Ineighbor_alltoall(sbuf, 1, MPI_INT, rbuf, 1, MPI_INT, cart, &req));
    CALL(MPI_Wait(&req, MPI_STATUS_IGNORE));
    check("Ineighbor_alltoall", rbuf, cart_want);
    memset(rbuf, 0xff, sizeof rbuf);
    CALL(MPI_Ineighbor_alltoallw(sbuf, counts, wdispls, types, rbuf, counts, wdispls, types, cart, &req));
    CALL(MPI_Wait(&req, MPI_STATUS_IGNORE));
    check("Ineighbor_alltoallw", rbuf, cart_want);

    CALL(MPI_Dist_graph_create_adjacent(cart, NSLOT, nb, MPI_UNWEIGHTED, NSLOT, nb, MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &graph));
    memset(rbuf, 0xff, sizeof rbuf);
    CALL(MPI_Neighbor_alltoall(sbuf, 1, MPI_INT, rbuf, 1, MPI_INT, graph));
    check("Neighbor_alltoall (graph)", rbuf, graph_want);
    memset(rbuf, 0xff, sizeof rbuf);
    CALL(MPI_Ineighbor_alltoallv(sbuf, counts, displs, MPI_INT, rbuf, counts, displs, MPI_INT, graph, &req));
    CALL(MPI_Wait(&req, MPI_STATUS_IGNORE));
    check("Ineighbor_alltoallv (graph)", rbuf, graph_want);

    CALL(MPI_Comm_free(&graph));
    CALL(MPI_Comm_free(&cart));
    CALL(MPI_Finalize());
    return 0;
}

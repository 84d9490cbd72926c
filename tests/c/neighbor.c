/* ranks: 1 2 4 6 8 */
/*
 * Neighbourhood collectives, blocking and non-blocking, on three
 * topologies: a 2-D Cartesian grid (periodic only in dimensions of at least
 * 3, so the -1 and +1 neighbours are distinct ranks; MPI_PROC_NULL slots
 * must stay untouched), a graph ring, and a distributed graph with edges to
 * i+1, i+2 (self-edges and repeated edges on small worlds, paired in
 * order). Allgather, allgatherv (per-source counts, gaps in the layout),
 * alltoall and alltoallv (per-edge counts); a derived receive type on the
 * grid; MPI_ERR_TOPOLOGY on a communicator without a topology.
 */
#include <string.h>

#define TEST_NAME "neighbor"
#include "testutil.h"

#define MAXN 8

/* One topology as seen from this rank: its neighbours, and for a source s
 * and the k-th edge from s to here, the slot s sent it from. */
struct topo {
    MPI_Comm comm;
    int in, out, src[MAXN], dst[MAXN];
    int (*slot_of)(const struct topo *, int s, int k);
};

static int cart_slot(const struct topo *t, int s, int k)
{
    (void)s;
    (void)k;
    (void)t;
    return -1; /* filled by the caller: the opposite direction */
}

static int dist_slot(const struct topo *t, int s, int k)
{
    (void)t;
    int d[2] = {(s + 1) % np, (s + 2) % np};
    for (int j = 0; j < 2; j++)
        if (d[j] == me && k-- == 0)
            return j;
    return -1;
}

static int graph_slot(const struct topo *t, int s, int k)
{
    int nb[2], cnt;
    MPI_Graph_neighbors_count(t->comm, s, &cnt);
    MPI_Graph_neighbors(t->comm, s, 2, nb);
    for (int j = 0; j < cnt; j++)
        if (nb[j] == me && k-- == 0)
            return j;
    return -1;
}

/* The slot the sender used for what lands in my receive slot i. */
static int sender_slot(const struct topo *t, int i)
{
    if (t->slot_of == cart_slot)
        return i ^ 1;
    int k = 0;
    for (int x = 0; x < i; x++)
        k += t->src[x] == t->src[i];
    return t->slot_of(t, t->src[i], k);
}

/* Whether slot i is one of several edges from this rank to itself: Ferry pairs them in
 * order, as it pairs repeated edges between two ranks; MPICH pairs self-edges otherwise,
 * so only Ferry's run checks them. */
static int unchecked(const struct topo *t, int i)
{
#ifdef FERRY_MPI_H
    (void)t;
    (void)i;
    return 0;
#else
    int n = 0;
    for (int x = 0; x < t->in; x++)
        n += t->src[x] == me;
    return t->src[i] == me && n > 1;
#endif
}

static int vcount(int a, int b) { return 1 + (a + b) % 3; }

static void wait_or_not(MPI_Request *r, int nb)
{
    if (nb)
        CALL(MPI_Wait(r, MPI_STATUS_IGNORE));
}

static void run_all(const struct topo *t, const char *name, int nb)
{
    int sbuf[4 * MAXN], rbuf[4 * MAXN * 4], counts[MAXN], displs[MAXN], scounts[MAXN], sdispls[MAXN];
    MPI_Request r = MPI_REQUEST_NULL;

    /* Allgather: two ints each. */
    sbuf[0] = me * 10 + 1;
    sbuf[1] = me * 10 + 2;
    for (int i = 0; i < 2 * t->in; i++)
        rbuf[i] = -1;
    if (nb)
        CALL(MPI_Ineighbor_allgather(sbuf, 2, MPI_INT, rbuf, 2, MPI_INT, t->comm, &r));
    else
        CALL(MPI_Neighbor_allgather(sbuf, 2, MPI_INT, rbuf, 2, MPI_INT, t->comm));
    wait_or_not(&r, nb);
    for (int i = 0; i < t->in; i++) {
        int s = t->src[i];
        int w0 = s == MPI_PROC_NULL ? -1 : s * 10 + 1, w1 = s == MPI_PROC_NULL ? -1 : s * 10 + 2;
        CHECK(rbuf[2 * i] == w0 && rbuf[2 * i + 1] == w1, "%s allgather (nb %d): slot %d holds %d %d, expected %d %d", name, nb, i, rbuf[2 * i], rbuf[2 * i + 1], w0, w1);
    }

    /* Allgatherv: 1 + me % 3 ints, laid out in reverse with gaps. */
    int sc = 1 + me % 3, at = 1;
    for (int e = 0; e < sc; e++)
        sbuf[e] = me * 100 + e;
    for (int i = t->in - 1; i >= 0; i--) {
        counts[i] = t->src[i] == MPI_PROC_NULL ? 1 : 1 + t->src[i] % 3;
        displs[i] = at;
        at += counts[i] + 1;
    }
    for (int i = 0; i < at; i++)
        rbuf[i] = -1;
    if (nb)
        CALL(MPI_Ineighbor_allgatherv(sbuf, sc, MPI_INT, rbuf, counts, displs, MPI_INT, t->comm, &r));
    else
        CALL(MPI_Neighbor_allgatherv(sbuf, sc, MPI_INT, rbuf, counts, displs, MPI_INT, t->comm));
    wait_or_not(&r, nb);
    for (int i = 0; i < t->in; i++)
        for (int e = 0; e < counts[i]; e++) {
            int want = t->src[i] == MPI_PROC_NULL ? -1 : t->src[i] * 100 + e;
            CHECK(rbuf[displs[i] + e] == want, "%s allgatherv (nb %d): slot %d element %d is %d, expected %d", name, nb, i, e, rbuf[displs[i] + e], want);
        }

    /* Alltoall: slot j carries me * 100 + j. */
    for (int j = 0; j < t->out; j++)
        sbuf[j] = me * 100 + j;
    for (int i = 0; i < t->in; i++)
        rbuf[i] = -1;
    if (nb)
        CALL(MPI_Ineighbor_alltoall(sbuf, 1, MPI_INT, rbuf, 1, MPI_INT, t->comm, &r));
    else
        CALL(MPI_Neighbor_alltoall(sbuf, 1, MPI_INT, rbuf, 1, MPI_INT, t->comm));
    wait_or_not(&r, nb);
    for (int i = 0; i < t->in; i++) {
        if (unchecked(t, i))
            continue;
        int want = t->src[i] == MPI_PROC_NULL ? -1 : t->src[i] * 100 + sender_slot(t, i);
        CHECK(rbuf[i] == want, "%s alltoall (nb %d): slot %d holds %d, expected %d", name, nb, i, rbuf[i], want);
    }

    /* Alltoallv: vcount(sender, receiver) ints per edge, gaps on both sides. */
    at = 0;
    for (int j = 0; j < t->out; j++) {
        scounts[j] = t->dst[j] == MPI_PROC_NULL ? 0 : vcount(me, t->dst[j]);
        sdispls[j] = at;
        for (int e = 0; e < scounts[j]; e++)
            sbuf[at + e] = me * 1000 + j * 10 + e;
        at += scounts[j] + 1;
    }
    at = 0;
    for (int i = t->in - 1; i >= 0; i--) {
        counts[i] = t->src[i] == MPI_PROC_NULL ? 2 : vcount(t->src[i], me);
        displs[i] = at;
        at += counts[i] + 2;
    }
    for (int i = 0; i < at; i++)
        rbuf[i] = -1;
    if (nb)
        CALL(MPI_Ineighbor_alltoallv(sbuf, scounts, sdispls, MPI_INT, rbuf, counts, displs, MPI_INT, t->comm, &r));
    else
        CALL(MPI_Neighbor_alltoallv(sbuf, scounts, sdispls, MPI_INT, rbuf, counts, displs, MPI_INT, t->comm));
    wait_or_not(&r, nb);
    for (int i = 0; i < t->in; i++)
        for (int e = 0; e < counts[i] && !unchecked(t, i); e++) {
            int want = t->src[i] == MPI_PROC_NULL ? -1 : t->src[i] * 1000 + sender_slot(t, i) * 10 + e;
            CHECK(rbuf[displs[i] + e] == want, "%s alltoallv (nb %d): slot %d element %d is %d, expected %d", name, nb, i, e, rbuf[displs[i] + e], want);
        }
}

int main(int argc, char **argv)
{
    TEST_INIT(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int one = 1, rbuf[64], rc, cls;
    rc = MPI_Neighbor_allgather(&one, 1, MPI_INT, rbuf, 1, MPI_INT, MPI_COMM_WORLD);
    MPI_Error_class(rc, &cls);
    CHECK(rc != MPI_SUCCESS && cls == MPI_ERR_TOPOLOGY, "Neighbor_allgather(world): %d, class %d", rc, cls);

    /* The grid. */
    struct topo cart = {.slot_of = cart_slot};
    int dims[2] = {0, 0}, periods[2];
    CALL(MPI_Dims_create(np, 2, dims));
    periods[0] = dims[0] >= 3;
    periods[1] = dims[1] >= 3;
    CALL(MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart.comm));
    cart.in = cart.out = 4;
    for (int d = 0; d < 2; d++) {
        CALL(MPI_Cart_shift(cart.comm, d, 1, &cart.src[2 * d], &cart.src[2 * d + 1]));
        cart.dst[2 * d] = cart.src[2 * d];
        cart.dst[2 * d + 1] = cart.src[2 * d + 1];
    }

    /* The ring as a graph. */
    struct topo graph = {.slot_of = graph_slot};
    int index[MAXN], edges[2 * MAXN], ne = 0;
    for (int i = 0; i < np; i++) {
        int a = (i + 1) % np, b = (i + np - 1) % np;
        if (a != i)
            edges[ne++] = a;
        if (b != i && b != a)
            edges[ne++] = b;
        index[i] = ne;
    }
    CALL(MPI_Graph_create(MPI_COMM_WORLD, np, index, edges, 0, &graph.comm));
    CALL(MPI_Graph_neighbors_count(graph.comm, me, &graph.in));
    CALL(MPI_Graph_neighbors(graph.comm, me, MAXN, graph.src));
    graph.out = graph.in;
    memcpy(graph.dst, graph.src, sizeof graph.src);

    /* The distributed graph: in from i-1, i-2; out to i+1, i+2. */
    struct topo dist = {.slot_of = dist_slot, .in = 2, .out = 2};
    dist.src[0] = (me + np - 1) % np;
    dist.src[1] = (me + 2 * np - 2) % np;
    dist.dst[0] = (me + 1) % np;
    dist.dst[1] = (me + 2) % np;
    CALL(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 2, dist.src, MPI_UNWEIGHTED, 2, dist.dst, MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &dist.comm));

    for (int nb = 0; nb < 2; nb++) {
        run_all(&cart, "cart", nb);
        run_all(&graph, "graph", nb);
        run_all(&dist, "dist_graph", nb);
    }

    /* A strided receive type on the grid: 2 ints at stride 2 per neighbour; the gaps
     * and the MPI_PROC_NULL slots keep their contents. */
    MPI_Datatype strided;
    CALL(MPI_Type_vector(2, 1, 2, MPI_INT, &strided));
    CALL(MPI_Type_commit(&strided));
    int two[2] = {me * 10 + 1, me * 10 + 2};
    for (int i = 0; i < 12; i++)
        rbuf[i] = -1;
    CALL(MPI_Neighbor_allgather(two, 2, MPI_INT, rbuf, 1, strided, cart.comm));
    for (int i = 0; i < 4; i++) {
        int s = cart.src[i];
        int w0 = s == MPI_PROC_NULL ? -1 : s * 10 + 1, w1 = s == MPI_PROC_NULL ? -1 : s * 10 + 2;
        CHECK(rbuf[3 * i] == w0 && rbuf[3 * i + 1] == -1 && rbuf[3 * i + 2] == w1, "strided slot %d holds %d %d %d", i, rbuf[3 * i], rbuf[3 * i + 1], rbuf[3 * i + 2]);
    }
    CALL(MPI_Type_free(&strided));

    CALL(MPI_Comm_free(&cart.comm));
    CALL(MPI_Comm_free(&graph.comm));
    CALL(MPI_Comm_free(&dist.comm));
    CALL(MPI_Finalize());
    finalized = 1;
    return 0;
}

/* ranks: 1 2 4 6 8 */
/*
 * Graph and distributed-graph topologies. Graph_create over a ring (each
 * node linked to its two neighbours) checked with Topo_test, Graphdims_get,
 * Graph_get, Graph_neighbors_count / Graph_neighbors and Graph_map, and
 * over fewer nodes than ranks (MPI_COMM_NULL for the rest).
 * Dist_graph_create_adjacent with weights, with MPI_UNWEIGHTED, and with
 * MPI_WEIGHTS_EMPTY where a rank has no edges on one side;
 * Dist_graph_create where every rank gives its own out-edges (weighted) and
 * where rank 0 alone gives the whole graph (unweighted), checked on both
 * ends of every edge. Error classes under MPI_ERRORS_RETURN.
 */
#include <string.h>

#define TEST_NAME "topo_graph"
#include "testutil.h"

/* Whether (rank, weight) pairs a and b hold the same multiset. */
static int same_edges(const int *ra, const int *wa, const int *rb, const int *wb, int n)
{
    int used[16] = {0};
    for (int i = 0; i < n; i++) {
        int found = 0;
        for (int j = 0; j < n && !found; j++)
            if (!used[j] && ra[i] == rb[j] && (!wa || wa[i] == wb[j]))
                used[j] = found = 1;
        if (!found)
            return 0;
    }
    return 1;
}

int main(int argc, char **argv)
{
    TEST_INIT(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int kind, rc, cls;

    /* A ring: node i links to i+1 and i-1 (once each where they coincide). */
    int *index = xmalloc(sizeof(int) * (size_t)np);
    int *edges = xmalloc(sizeof(int) * (size_t)(2 * np));
    int ne = 0;
    for (int i = 0; i < np; i++) {
        int a = (i + 1) % np, b = (i + np - 1) % np;
        if (a != i)
            edges[ne++] = a;
        if (b != i && b != a)
            edges[ne++] = b;
        index[i] = ne;
    }
    MPI_Comm g;
    CALL(MPI_Graph_create(MPI_COMM_WORLD, np, index, edges, 0, &g));
    CALL(MPI_Topo_test(g, &kind));
    CHECK(kind == MPI_GRAPH, "Topo_test = %d", kind);
    int nn, nedges;
    CALL(MPI_Graphdims_get(g, &nn, &nedges));
    CHECK(nn == np && nedges == ne, "Graphdims_get %d %d", nn, nedges);
    int *gi = xmalloc(sizeof(int) * (size_t)np), *ge = xmalloc(sizeof(int) * (size_t)(2 * np));
    CALL(MPI_Graph_get(g, np, 2 * np, gi, ge));
    CHECK(memcmp(gi, index, sizeof(int) * (size_t)np) == 0 && memcmp(ge, edges, sizeof(int) * (size_t)ne) == 0, "Graph_get differs");
    for (int q = 0; q < np; q++) {
        int cnt, nb[2];
        CALL(MPI_Graph_neighbors_count(g, q, &cnt));
        int lo = q ? index[q - 1] : 0;
        CHECK(cnt == index[q] - lo, "node %d: %d neighbours", q, cnt);
        CALL(MPI_Graph_neighbors(g, q, 2, nb));
        for (int k = 0; k < cnt; k++)
            CHECK(nb[k] == edges[lo + k], "node %d neighbour %d is %d", q, k, nb[k]);
    }
    int r;
    CALL(MPI_Graph_map(MPI_COMM_WORLD, np, index, edges, &r));
    CHECK(r == me, "Graph_map = %d", r);
    rc = MPI_Graph_neighbors_count(g, np, &r);
    MPI_Error_class(rc, &cls);
    CHECK(rc != MPI_SUCCESS && cls == MPI_ERR_RANK, "neighbours of node %d: %d, class %d", np, rc, cls);
    rc = MPI_Graphdims_get(MPI_COMM_WORLD, &nn, &nedges);
    MPI_Error_class(rc, &cls);
    CHECK(rc != MPI_SUCCESS && cls == MPI_ERR_TOPOLOGY, "Graphdims_get(world): %d, class %d", rc, cls);
    int nd;
    rc = MPI_Cartdim_get(g, &nd);
    MPI_Error_class(rc, &cls);
    CHECK(rc != MPI_SUCCESS && cls == MPI_ERR_TOPOLOGY, "Cartdim_get(graph): %d, class %d", rc, cls);

    /* One node only: the others get MPI_COMM_NULL. */
    MPI_Comm one;
    int zero = 0;
    CALL(MPI_Graph_create(MPI_COMM_WORLD, 1, &zero, &zero, 0, &one));
    CHECK((me == 0) == (one != MPI_COMM_NULL), "one-node graph on rank %d", me);
    if (one != MPI_COMM_NULL)
        CALL(MPI_Comm_free(&one));

    /* Adjacent, weighted: in from i-1 and i-2, out to i+1 and i+2 (self-edges where
     * the world is small); weight = 10 * source + destination. */
    int src[2] = {(me + np - 1) % np, (me + 2 * np - 2) % np};
    int dst[2] = {(me + 1) % np, (me + 2) % np};
    int sw[2] = {10 * src[0] + me, 10 * src[1] + me}, dw[2] = {10 * me + dst[0], 10 * me + dst[1]};
    MPI_Comm dg;
    CALL(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 2, src, sw, 2, dst, dw, MPI_INFO_NULL, 0, &dg));
    CALL(MPI_Topo_test(dg, &kind));
    CHECK(kind == MPI_DIST_GRAPH, "Topo_test = %d", kind);
    int in, out, weighted;
    CALL(MPI_Dist_graph_neighbors_count(dg, &in, &out, &weighted));
    CHECK(in == 2 && out == 2 && weighted, "counts %d %d weighted %d", in, out, weighted);
    int gs[2], gsw[2], gd[2], gdw[2];
    CALL(MPI_Dist_graph_neighbors(dg, 2, gs, gsw, 2, gd, gdw));
    for (int k = 0; k < 2; k++)
        CHECK(gs[k] == src[k] && gsw[k] == sw[k] && gd[k] == dst[k] && gdw[k] == dw[k], "edge %d differs", k);
    MPI_Comm dgdup;
    CALL(MPI_Comm_dup(dg, &dgdup));
    CALL(MPI_Dist_graph_neighbors_count(dgdup, &in, &out, &weighted));
    CHECK(in == 2 && out == 2 && weighted, "dup: counts %d %d weighted %d", in, out, weighted);
    CALL(MPI_Comm_free(&dgdup));
    CALL(MPI_Comm_free(&dg));

    /* Adjacent, unweighted. */
    CALL(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 2, src, MPI_UNWEIGHTED, 2, dst, MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &dg));
    CALL(MPI_Dist_graph_neighbors_count(dg, &in, &out, &weighted));
    CHECK(in == 2 && out == 2 && !weighted, "unweighted: counts %d %d weighted %d", in, out, weighted);
    CALL(MPI_Dist_graph_neighbors(dg, 2, gs, MPI_UNWEIGHTED, 2, gd, MPI_UNWEIGHTED));
    CHECK(gs[0] == src[0] && gs[1] == src[1] && gd[0] == dst[0] && gd[1] == dst[1], "unweighted edges differ");
    CALL(MPI_Comm_free(&dg));

    /* A weighted chain: rank 0 has no sources, the last rank no destinations. */
    int cs = me - 1, cd = me + 1, w7 = 7;
    int nin = me > 0, nout = me < np - 1;
    CALL(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, nin, &cs, nin ? &w7 : MPI_WEIGHTS_EMPTY, nout, &cd,
                                        nout ? &w7 : MPI_WEIGHTS_EMPTY, MPI_INFO_NULL, 0, &dg));
    CALL(MPI_Dist_graph_neighbors_count(dg, &in, &out, &weighted));
    CHECK(in == nin && out == nout, "chain: counts %d %d", in, out);
    CALL(MPI_Comm_free(&dg));

    /* General form, every rank giving its out-edges i -> i+1, i -> i+3 with weight
     * 100 * source + destination. */
    int mysrc = me, deg = 2, mydst[2] = {(me + 1) % np, (me + 3) % np};
    int myw[2] = {100 * me + mydst[0], 100 * me + mydst[1]};
    CALL(MPI_Dist_graph_create(MPI_COMM_WORLD, 1, &mysrc, &deg, mydst, myw, MPI_INFO_NULL, 0, &dg));
    CALL(MPI_Dist_graph_neighbors_count(dg, &in, &out, &weighted));
    CHECK(in == 2 && out == 2 && weighted, "general: counts %d %d weighted %d", in, out, weighted);
    CALL(MPI_Dist_graph_neighbors(dg, 2, gs, gsw, 2, gd, gdw));
    int ws[2] = {(me + np - 1) % np, (me + 3 * np - 3) % np};
    int wsw[2] = {100 * ws[0] + me, 100 * ws[1] + me};
    CHECK(same_edges(gs, gsw, ws, wsw, 2), "general: sources (%d %d) weights (%d %d)", gs[0], gs[1], gsw[0], gsw[1]);
    CHECK(same_edges(gd, gdw, mydst, myw, 2), "general: destinations (%d %d)", gd[0], gd[1]);
    CALL(MPI_Comm_free(&dg));

    /* General form, rank 0 giving the whole ring i -> i+1, unweighted. */
    int *all = xmalloc(sizeof(int) * (size_t)np), *ones = xmalloc(sizeof(int) * (size_t)np);
    int *next = xmalloc(sizeof(int) * (size_t)np);
    for (int i = 0; i < np; i++) {
        all[i] = i;
        ones[i] = 1;
        next[i] = (i + 1) % np;
    }
    CALL(MPI_Dist_graph_create(MPI_COMM_WORLD, me == 0 ? np : 0, all, ones, next, MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &dg));
    CALL(MPI_Dist_graph_neighbors_count(dg, &in, &out, &weighted));
    CHECK(in == 1 && out == 1 && !weighted, "ring: counts %d %d weighted %d", in, out, weighted);
    CALL(MPI_Dist_graph_neighbors(dg, 1, gs, MPI_UNWEIGHTED, 1, gd, MPI_UNWEIGHTED));
    CHECK(gs[0] == (me + np - 1) % np && gd[0] == (me + 1) % np, "ring: edges %d %d", gs[0], gd[0]);
    CALL(MPI_Comm_free(&dg));

#ifdef FERRY_MPI_H
    /* Ferry checks the ranks of the edges (MPICH does not). */
    int badsrc = np;
    rc = MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, &badsrc, MPI_UNWEIGHTED, 0, NULL, MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &dg);
    MPI_Error_class(rc, &cls);
    CHECK(rc != MPI_SUCCESS && cls == MPI_ERR_RANK, "a source outside the communicator: %d, class %d", rc, cls);
#endif
    rc = MPI_Dist_graph_neighbors_count(MPI_COMM_WORLD, &in, &out, &weighted);
    MPI_Error_class(rc, &cls);
    CHECK(rc != MPI_SUCCESS && cls == MPI_ERR_TOPOLOGY, "Dist_graph_neighbors_count(world): %d, class %d", rc, cls);

    free(index); free(edges); free(gi); free(ge); free(all); free(ones); free(next);
    CALL(MPI_Comm_free(&g));
    CALL(MPI_Finalize());
    finalized = 1;
    return 0;
}

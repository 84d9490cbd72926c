/* ranks: 1 2 4 */
/*
 * MPI-4 large-count neighbourhood collectives with MPI_Count counts and
 * MPI_Aint displacements: MPI_Neighbor_alltoallw_c and
 * MPI_Ineighbor_alltoallw_c, and the persistent MPI_Neighbor_allgather_init_c,
 * MPI_Neighbor_allgatherv_init_c, MPI_Neighbor_alltoall_init_c,
 * MPI_Neighbor_alltoallv_init_c and MPI_Neighbor_alltoallw_init_c (started
 * twice, with new data, their arrays freed after the init).
 *
 * Topologies: a distributed graph in which every rank sends to rank 0 and to
 * the next rank (so in- and out-degrees differ: rank 0 hears from everyone),
 * and a non-periodic line (MPI_PROC_NULL at its ends, whose receive slots stay
 * as they were; there also Neighbor_alltoallv_c and Ineighbor_allgatherv_c
 * with displacements beyond INT_MAX). No two edges join the same ordered pair
 * of ranks, so every block has one meaning. Then the error path, MPI_ERR_COUNT: counts whose
 * bytes overflow the address space in the blocking and non-blocking calls,
 * on every rank alike (they count as calls), a single count beyond INT_MAX in
 * an init (Ferry's persistent collectives take their arrays in full, their
 * single counts up to INT_MAX), on one rank for one of them (an init that
 * fails counts as no call); the neighbourhood collectives after them match.
 */
#include <limits.h>
#include <string.h>
#include <sys/mman.h>

#define TEST_NAME "large_count_neighbor"
#include "testutil.h"

#define BIG ((MPI_Count)INT_MAX + 1)

static int indeg, outdeg, srcs[8], dsts[2];
static MPI_Comm graph;

static void make_graph(void)
{
    outdeg = 0;
    dsts[outdeg++] = 0;
    if (me + 1 < np)
        dsts[outdeg++] = me + 1;
    indeg = 0;
    if (me == 0)
        for (int r = 0; r < np; r++)
            srcs[indeg++] = r;
    else
        srcs[indeg++] = me - 1;
    CALL(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, indeg, srcs, MPI_UNWEIGHTED, outdeg, dsts,
                                        MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &graph));
    int in, out, w;
    CALL(MPI_Dist_graph_neighbors_count(graph, &in, &out, &w));
    CHECK(in == indeg && out == outdeg, "degrees %d %d, want %d %d", in, out, indeg, outdeg);
    CALL(MPI_Dist_graph_neighbors(graph, indeg, srcs, MPI_UNWEIGHTED, outdeg, dsts, MPI_UNWEIGHTED));
}

/* What rank s sends to rank d in a round: `n` ints of this value. */
static int value(int round, int s, int d)
{
    return round * 10000 + s * 100 + d;
}

/* Send side: d + 1 ints to neighbour d, packed. Receive side: me + 1 ints from each source,
 * a gap of one int after each block. The w forms receive pairs where me + 1 is even. */
static int sbuf[16], one[2], same[8], all1[8], allv[64], rv[64], rw[64], rwb[64], rwi[64];
static MPI_Count sc[2], rc[8], wrc[8], cv[8];
static MPI_Aint sd[2], rd[8], wsd[2], wrd[8], dv[8];
static MPI_Datatype st[2], rt[8], pair;

static void layout(void)
{
    CALL(MPI_Type_contiguous(2, MPI_INT, &pair));
    CALL(MPI_Type_commit(&pair));
    MPI_Aint at = 0;
    for (int i = 0; i < outdeg; i++) {
        sc[i] = dsts[i] + 1;
        sd[i] = at;
        wsd[i] = at * (MPI_Aint)sizeof(int);
        st[i] = MPI_INT;
        at += sc[i];
    }
    int even = (me + 1) % 2 == 0;
    for (int j = 0; j < indeg; j++) {
        rc[j] = me + 1;
        rd[j] = (MPI_Aint)j * (me + 2);
        wrd[j] = rd[j] * (MPI_Aint)sizeof(int);
        rt[j] = even ? pair : MPI_INT;
        wrc[j] = even ? (me + 1) / 2 : me + 1;
        cv[j] = srcs[j] + 1;
        dv[j] = (MPI_Aint)j * (np + 1); /* room for any block and a gap */
    }
}

static void fill(int round)
{
    int at = 0;
    for (int i = 0; i < outdeg; i++)
        for (int k = 0; k < sc[i]; k++)
            sbuf[at++] = value(round, me, dsts[i]);
    one[0] = value(round, me, 99);
    one[1] = -99; /* a send count of 1 never reads it */
    for (int k = 0; k < 8; k++)
        same[k] = k <= me ? value(round, me, 99) : -99;
    for (int i = 0; i < 64; i++)
        allv[i] = rv[i] = rw[i] = rwb[i] = rwi[i] = -1;
    for (int i = 0; i < 8; i++)
        all1[i] = -1;
}

static void check_blocks(const int *buf, int round, const char *what)
{
    for (int j = 0; j < indeg; j++) {
        for (int k = 0; k <= me; k++)
            CHECK(buf[rd[j] + k] == value(round, srcs[j], me), "%s round %d from %d [%d] = %d", what, round,
                  srcs[j], k, buf[rd[j] + k]);
        CHECK(buf[rd[j] + me + 1] == -1, "%s wrote into the gap after the block from %d", what, srcs[j]);
    }
}

static void check(int round)
{
    for (int j = 0; j < indeg; j++) {
        CHECK(all1[j] == value(round, srcs[j], 99), "Neighbor_allgather_init_c round %d from %d: %d", round,
              srcs[j], all1[j]);
        for (int k = 0; k <= srcs[j]; k++)
            CHECK(allv[dv[j] + k] == value(round, srcs[j], 99), "Neighbor_allgatherv_init_c round %d from %d [%d]",
                  round, srcs[j], k);
        CHECK(allv[dv[j] + srcs[j] + 1] == -1, "Neighbor_allgatherv_init_c wrote into a gap");
    }
    check_blocks(rv, round, "Neighbor_alltoallv_init_c");
    check_blocks(rw, round, "Neighbor_alltoallw_init_c");
}

static void graph_calls(void)
{
    layout();
    /* Blocking and non-blocking alltoallw_c, round 0. */
    fill(0);
    CALL(MPI_Neighbor_alltoallw_c(sbuf, sc, wsd, st, rwb, wrc, wrd, rt, graph));
    check_blocks(rwb, 0, "Neighbor_alltoallw_c");
    MPI_Request q;
    CALL(MPI_Ineighbor_alltoallw_c(sbuf, sc, wsd, st, rwi, wrc, wrd, rt, graph, &q));
    CALL(MPI_Wait(&q, MPI_STATUS_IGNORE));
    check_blocks(rwi, 0, "Ineighbor_alltoallw_c");

    /* The inits, from copies of the arrays that are then spoilt. */
    MPI_Count sc2[2], rc2[8], wrc2[8], cv2[8];
    MPI_Aint sd2[2], rd2[8], wsd2[2], wrd2[8], dv2[8];
    memcpy(sc2, sc, sizeof sc); memcpy(rc2, rc, sizeof rc); memcpy(wrc2, wrc, sizeof wrc);
    memcpy(cv2, cv, sizeof cv); memcpy(sd2, sd, sizeof sd);
    memcpy(rd2, rd, sizeof rd); memcpy(wsd2, wsd, sizeof wsd); memcpy(wrd2, wrd, sizeof wrd);
    memcpy(dv2, dv, sizeof dv);
    MPI_Request r[4];
    CALL(MPI_Neighbor_allgather_init_c(one, 1, MPI_INT, all1, 1, MPI_INT, graph, MPI_INFO_NULL, &r[0]));
    /* Each rank sends the same me + 1 ints to all its neighbours. */
    CALL(MPI_Neighbor_allgatherv_init_c(same, me + 1, MPI_INT, allv, cv2, dv2, MPI_INT, graph, MPI_INFO_NULL, &r[1]));
    CALL(MPI_Neighbor_alltoallv_init_c(sbuf, sc2, sd2, MPI_INT, rv, rc2, rd2, MPI_INT, graph, MPI_INFO_NULL, &r[2]));
    CALL(MPI_Neighbor_alltoallw_init_c(sbuf, sc2, wsd2, st, rw, wrc2, wrd2, rt, graph, MPI_INFO_NULL, &r[3]));
    memset(sc2, 0xff, sizeof sc2); memset(rc2, 0xff, sizeof rc2); memset(wrc2, 0xff, sizeof wrc2);
    memset(cv2, 0xff, sizeof cv2); memset(sd2, 0xff, sizeof sd2); memset(rd2, 0xff, sizeof rd2);
    memset(wsd2, 0xff, sizeof wsd2); memset(wrd2, 0xff, sizeof wrd2); memset(dv2, 0xff, sizeof dv2);
    for (int round = 1; round <= 2; round++) {
        fill(round);
        CALL(MPI_Startall(4, r));
        CALL(MPI_Waitall(4, r, statuses_ignore()));
        check(round);
    }
    for (int i = 0; i < 4; i++)
        CALL(MPI_Request_free(&r[i]));

    /* Neighbor_alltoall_init_c: one int to each neighbour. */
    int to[2], from[8];
    CALL(MPI_Neighbor_alltoall_init_c(to, 1, MPI_INT, from, 1, MPI_INT, graph, MPI_INFO_NULL, &r[0]));
    for (int round = 1; round <= 2; round++) {
        for (int i = 0; i < outdeg; i++)
            to[i] = value(round, me, dsts[i]);
        for (int j = 0; j < indeg; j++)
            from[j] = -1;
        CALL(MPI_Start(&r[0]));
        CALL(MPI_Wait(&r[0], MPI_STATUS_IGNORE));
        for (int j = 0; j < indeg; j++)
            CHECK(from[j] == value(round, srcs[j], me), "Neighbor_alltoall_init_c round %d from %d: %d", round,
                  srcs[j], from[j]);
    }
    CALL(MPI_Request_free(&r[0]));
}

/* A line without wrap-around: one int down (value ...01), two up (...02); what comes from
 * below is received as one pair, what comes from above as one int. The slots of MPI_PROC_NULL
 * neighbours keep their -1. */
static void line_calls(void)
{
    MPI_Comm line;
    int dims[1] = {np}, periods[1] = {0};
    CALL(MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &line));
    int lo, hi;
    CALL(MPI_Cart_shift(line, 0, 1, &lo, &hi));
    int s[3] = {me * 100 + 1, me * 100 + 2, me * 100 + 2}, g[4] = {-1, -1, -1, -1};
    MPI_Count scs[2] = {1, 2}, rcs[2] = {1, 1};
    MPI_Aint sds[2] = {0, sizeof(int)}, rds[2] = {0, 2 * sizeof(int)};
    MPI_Datatype sts[2] = {MPI_INT, MPI_INT}, rts[2] = {pair, MPI_INT};
    CALL(MPI_Neighbor_alltoallw_c(s, scs, sds, sts, g, rcs, rds, rts, line));
    if (lo != MPI_PROC_NULL)
        CHECK(g[0] == lo * 100 + 2 && g[1] == lo * 100 + 2, "Neighbor_alltoallw_c on a line from below: %d %d", g[0], g[1]);
    else
        CHECK(g[0] == -1 && g[1] == -1, "Neighbor_alltoallw_c wrote the slot of MPI_PROC_NULL below");
    if (hi != MPI_PROC_NULL)
        CHECK(g[2] == hi * 100 + 1, "Neighbor_alltoallw_c on a line from above: %d", g[2]);
    else
        CHECK(g[2] == -1, "Neighbor_alltoallw_c wrote the slot of MPI_PROC_NULL above");
    CHECK(g[3] == -1, "Neighbor_alltoallw_c wrote past the blocks");

    /* Displacements beyond INT_MAX, into a mapping touched only far out: two bytes down and
     * two up by Neighbor_alltoallv_c, one byte to both by Ineighbor_allgatherv_c. */
    const MPI_Aint far = ((MPI_Aint)1 << 31) + 4096;
    size_t len = (size_t)far + 4096;
    unsigned char *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    unsigned char *r = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    CHECK(m != MAP_FAILED && r != MAP_FAILED, "mmap of %zu bytes", len);
    MPI_Count two[2] = {2, 2}, onec[2] = {1, 1};
    MPI_Aint sfar[2] = {far, far + 8}, rfar[2] = {far + 16, far + 24}, gfar[2] = {far + 32, far + 40};
    m[far] = m[far + 1] = (unsigned char)(me * 10 + 1);
    m[far + 8] = m[far + 9] = (unsigned char)(me * 10 + 2);
    CALL(MPI_Neighbor_alltoallv_c(m, two, sfar, MPI_BYTE, r, two, rfar, MPI_BYTE, line));
    unsigned char mine = (unsigned char)(me * 10 + 5);
    MPI_Request q;
    CALL(MPI_Ineighbor_allgatherv_c(&mine, 1, MPI_BYTE, r, onec, gfar, MPI_BYTE, line, &q));
    CALL(MPI_Wait(&q, MPI_STATUS_IGNORE));
    int from_lo = lo == MPI_PROC_NULL ? 0 : lo * 10 + 2, from_hi = hi == MPI_PROC_NULL ? 0 : hi * 10 + 1;
    CHECK(r[far + 16] == from_lo && r[far + 17] == from_lo, "Neighbor_alltoallv_c far out from below: %d", r[far + 16]);
    CHECK(r[far + 24] == from_hi && r[far + 25] == from_hi, "Neighbor_alltoallv_c far out from above: %d", r[far + 24]);
    CHECK(r[far + 32] == (lo == MPI_PROC_NULL ? 0 : lo * 10 + 5), "Ineighbor_allgatherv_c far out from below: %d", r[far + 32]);
    CHECK(r[far + 40] == (hi == MPI_PROC_NULL ? 0 : hi * 10 + 5), "Ineighbor_allgatherv_c far out from above: %d", r[far + 40]);
    munmap(m, len);
    munmap(r, len);
    CALL(MPI_Comm_free(&line));
}

static void errors(void)
{
    int b[64];
    MPI_Request q = MPI_REQUEST_NULL;
    /* Counts beyond INT_MAX are fine in these, but not counts whose bytes no memory could
     * hold. */
    MPI_Count huges[2] = {(MPI_Count)1 << 62, (MPI_Count)1 << 62}, huger[8];
    for (int j = 0; j < 8; j++)
        huger[j] = j == indeg - 1 ? (MPI_Count)1 << 62 : 1;
    EXPECT(MPI_ERR_COUNT, MPI_Neighbor_alltoallw_c(sbuf, huges, wsd, st, b, wrc, wrd, rt, graph));
    EXPECT(MPI_ERR_COUNT, MPI_Ineighbor_alltoallw_c(sbuf, sc, wsd, st, b, huger, wrd, rt, graph, &q));
    EXPECT(MPI_ERR_COUNT, MPI_Neighbor_alltoallv_c(sbuf, sc, sd, MPI_INT, b, huger, rd, MPI_INT, graph));
    /* The inits take their arrays in full, their single counts up to INT_MAX. */
    EXPECT(MPI_ERR_COUNT, MPI_Neighbor_allgatherv_init_c(sbuf, BIG, MPI_INT, b, rc, dv, MPI_INT, graph, MPI_INFO_NULL, &q));
    EXPECT(MPI_ERR_COUNT, MPI_Neighbor_alltoall_init_c(sbuf, BIG, MPI_INT, b, 1, MPI_INT, graph, MPI_INFO_NULL, &q));
    CHECK(q == MPI_REQUEST_NULL, "a failed call made a request");
    /* On rank 0 alone: the others get a request they free unstarted. */
    int rc = MPI_Neighbor_allgather_init_c(sbuf, 1, MPI_INT, b, me == 0 ? BIG : 1, MPI_INT, graph, MPI_INFO_NULL, &q);
    if (me == 0) {
        expect_class(rc, MPI_ERR_COUNT, "MPI_Neighbor_allgather_init_c on rank 0", __LINE__);
    } else {
        CALL(rc);
        CALL(MPI_Request_free(&q));
    }
    /* The blocking and non-blocking failures counted on every rank alike, the inits not at
     * all: these match. */
    fill(3);
    CALL(MPI_Neighbor_alltoallw_c(sbuf, sc, wsd, st, rwb, wrc, wrd, rt, graph));
    check_blocks(rwb, 3, "Neighbor_alltoallw_c after the errors");
    CALL(MPI_Ineighbor_alltoallw_c(sbuf, sc, wsd, st, rwi, wrc, wrd, rt, graph, &q));
    CALL(MPI_Wait(&q, MPI_STATUS_IGNORE));
    check_blocks(rwi, 3, "Ineighbor_alltoallw_c after the errors");
}

int main(int argc, char **argv)
{
    TEST_INIT(&argc, &argv);
    CHECK(np <= 8, "at most 8 ranks");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    make_graph();
    MPI_Comm_set_errhandler(graph, MPI_ERRORS_RETURN);
    graph_calls();
    line_calls();
    /* MPICH 4.0.2 takes these counts at their word. */
    if (is_ferry())
        errors();
    CALL(MPI_Type_free(&pair));
    CALL(MPI_Comm_free(&graph));
    CALL(MPI_Barrier(MPI_COMM_WORLD));
    if (me == 0)
        printf("large_count_neighbor: ok\n");
    CALL(MPI_Finalize());
    return 0;
}

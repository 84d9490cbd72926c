/* ranks: 1 2 3 4 */
/* mpich: skip Debian's MPICH 4.0 does not declare these MPI-4 persistent collectives */
/*
 * MPI-4 persistent vector and neighbourhood collectives: Gatherv, Scatterv,
 * Allgatherv, Alltoallv, Alltoallw and Reduce_scatter _init on
 * MPI_COMM_WORLD, Neighbor_allgather(v) and Neighbor_alltoall(v) _init on a
 * 1-D Cartesian communicator (periodic from 3 ranks up; MPI_PROC_NULL slots
 * must stay untouched). Each is started four times with new data, and with
 * new displacements (and, where the counts are arrays on both sides, new
 * counts) written into the same arrays between starts: they are read at
 * each start. Error classes of the init calls.
 */
#define TEST_NAME "coll_persistent_v"
#include "testutil.h"

#include <string.h>

#define MAXC 4   /* most ints in one block */
#define NB 3     /* ints per neighbour block */
#define SENT -7  /* untouched receive slots */

static int val(int round, int rank, int i) { return round * 10000 + rank * 100 + i; }
/* Ints rank r contributes in a round: changes with the round. */
static int cnt(int round, int r) { return (r + round) % 3 + 1; }
/* Ints exchanged between a and b in an alltoall round (symmetric). */
static int pair(int round, int a, int b) { return (a + b + round) % MAXC + 1; }

static int class_of(int rc)
{
    int cls = MPI_SUCCESS;
    MPI_Error_class(rc, &cls);
    return cls;
}

#define EXPECT_CLASS(call, want) do { int rc_ = (call); \
        CHECK(rc_ != MPI_SUCCESS, "%s succeeded", #call); \
        CHECK(class_of(rc_) == (want), "%s: class %d, expected %d", #call, class_of(rc_), (want)); } while (0)

static void fill(int *p, int n) { for (int i = 0; i < n; i++) p[i] = SENT; }

int main(int argc, char **argv)
{
    TEST_INIT(&argc, &argv);
    int last = np - 1;
    size_t big = (size_t)np * (MAXC + 1) * sizeof(int);
    int *sin = xmalloc(big), *gv = xmalloc(big), *sv_in = xmalloc(big), sv_out[MAXC], *agv = xmalloc(big);
    int *a2v_in = xmalloc(big), *a2v_out = xmalloc(big), *a2w_in = xmalloc(big), *a2w_out = xmalloc(big);
    int *rs_in = xmalloc(big), rs_out[MAXC];
    int *gcounts = xmalloc(np * sizeof(int)), *gdispls = xmalloc(np * sizeof(int));
    int *scounts = xmalloc(np * sizeof(int)), *sdispls = xmalloc(np * sizeof(int));
    int *rcounts = xmalloc(np * sizeof(int)), *rdispls = xmalloc(np * sizeof(int));
    int *wscounts = xmalloc(np * sizeof(int)), *wsdispls = xmalloc(np * sizeof(int));
    int *wrcounts = xmalloc(np * sizeof(int)), *wrdispls = xmalloc(np * sizeof(int));
    int *rscounts = xmalloc(np * sizeof(int));
    MPI_Datatype *types = xmalloc(np * sizeof(MPI_Datatype));
    for (int j = 0; j < np; j++)
        types[j] = MPI_INT;
    int mine = me % 3 + 1; /* fixed per-rank share of gatherv, scatterv, allgatherv */

    /* The Cartesian ring and its neighbours. */
    MPI_Comm cart;
    int dims[1] = {np}, periods[1] = {np >= 3};
    CALL(MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &cart));
    int left, right;
    CALL(MPI_Cart_shift(cart, 0, 1, &left, &right));
    int nin[NB], nag[2 * NB], nagv[2 * (MAXC + 2)], na2a_in[2 * NB], na2a_out[2 * NB];
    int na2v_in[2 * MAXC + 4], na2v_out[2 * MAXC + 4];
    int ncounts[2], ndispls[2], nscounts[2], nsdispls[2], nrcounts[2], nrdispls[2];

    enum { GATHERV, SCATTERV, ALLGATHERV, ALLTOALLV, ALLTOALLW, REDUCE_SCATTER, NAG, NAGV, NA2A, NA2AV, NREQ };
    MPI_Request r[NREQ];
    CALL(MPI_Gatherv_init(sin, mine, MPI_INT, gv, gcounts, gdispls, MPI_INT, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &r[GATHERV]));
    CALL(MPI_Scatterv_init(sv_in, scounts, sdispls, MPI_INT, sv_out, mine, MPI_INT, last, MPI_COMM_WORLD, MPI_INFO_NULL, &r[SCATTERV]));
    CALL(MPI_Allgatherv_init(sin, mine, MPI_INT, agv, gcounts, gdispls, MPI_INT, MPI_COMM_WORLD, MPI_INFO_NULL, &r[ALLGATHERV]));
    CALL(MPI_Alltoallv_init(a2v_in, scounts, sdispls, MPI_INT, a2v_out, rcounts, rdispls, MPI_INT, MPI_COMM_WORLD, MPI_INFO_NULL, &r[ALLTOALLV]));
    CALL(MPI_Alltoallw_init(a2w_in, wscounts, wsdispls, types, a2w_out, wrcounts, wrdispls, types, MPI_COMM_WORLD, MPI_INFO_NULL, &r[ALLTOALLW]));
    CALL(MPI_Reduce_scatter_init(rs_in, rs_out, rscounts, MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &r[REDUCE_SCATTER]));
    CALL(MPI_Neighbor_allgather_init(nin, NB, MPI_INT, nag, NB, MPI_INT, cart, MPI_INFO_NULL, &r[NAG]));
    CALL(MPI_Neighbor_allgatherv_init(nin, NB, MPI_INT, nagv, ncounts, ndispls, MPI_INT, cart, MPI_INFO_NULL, &r[NAGV]));
    CALL(MPI_Neighbor_alltoall_init(na2a_in, NB, MPI_INT, na2a_out, NB, MPI_INT, cart, MPI_INFO_NULL, &r[NA2A]));
    CALL(MPI_Neighbor_alltoallv_init(na2v_in, nscounts, nsdispls, MPI_INT, na2v_out, nrcounts, nrdispls, MPI_INT, cart, MPI_INFO_NULL, &r[NA2AV]));

    for (int round = 0; round < 4; round++) {
        int gap = round % 2; /* one-int gaps between blocks in odd rounds */
        /* Gatherv, allgatherv and scatterv: blocks of j % 3 + 1 ints, in reverse order in odd rounds. */
        int at = 0;
        for (int k = 0; k < np; k++) {
            int j = round % 2 ? np - 1 - k : k;
            gcounts[j] = j % 3 + 1;
            gdispls[j] = at;
            scounts[j] = gcounts[j];
            sdispls[j] = at;
            at += gcounts[j] + gap;
        }
        int gtotal = at;
        for (int i = 0; i < mine; i++)
            sin[i] = val(round, me, i);
        fill(gv, gtotal);
        fill(agv, gtotal);
        fill(sv_out, MAXC);
        fill(sv_in, gtotal);
        if (me == last)
            for (int j = 0; j < np; j++)
                for (int i = 0; i < scounts[j]; i++)
                    sv_in[sdispls[j] + i] = val(round, j, i) + 7;
        /* Scatterv above used scounts/sdispls; alltoallv rewrites them after the start below. */
        CALL(MPI_Start(&r[GATHERV]));
        CALL(MPI_Start(&r[SCATTERV]));
        CALL(MPI_Start(&r[ALLGATHERV]));

        /* Alltoallv and alltoallw: pair(round, me, j) ints each way, gaps in odd rounds. */
        int so = 0, ro = 0;
        int *a2v_scounts = xmalloc(np * sizeof(int)), *a2v_sdispls = xmalloc(np * sizeof(int));
        for (int j = 0; j < np; j++) {
            a2v_scounts[j] = pair(round, me, j);
            a2v_sdispls[j] = so;
            rcounts[j] = pair(round, me, j);
            rdispls[j] = ro;
            wscounts[j] = a2v_scounts[j];
            wsdispls[j] = so * (int)sizeof(int);
            wrcounts[j] = rcounts[j];
            wrdispls[j] = ro * (int)sizeof(int);
            for (int i = 0; i < a2v_scounts[j]; i++) {
                a2v_in[so + i] = val(round, me, j * 10 + i);
                a2w_in[so + i] = val(round, me, j * 10 + i) + 3;
            }
            so += a2v_scounts[j] + gap;
            ro += rcounts[j] + gap;
        }
        fill(a2v_out, ro);
        fill(a2w_out, ro);
        /* Scatterv was started: its count arrays may now take alltoallv's layout. */
        memcpy(scounts, a2v_scounts, np * sizeof(int));
        memcpy(sdispls, a2v_sdispls, np * sizeof(int));
        free(a2v_scounts); free(a2v_sdispls);

        /* Reduce_scatter: cnt(round, j) ints to rank j. */
        int rtotal = 0;
        for (int j = 0; j < np; j++) {
            rscounts[j] = cnt(round, j);
            rtotal += rscounts[j];
        }
        for (int i = 0; i < rtotal; i++)
            rs_in[i] = val(round, me, i);
        fill(rs_out, MAXC);

        /* Neighbours: blocks from left then right. */
        for (int i = 0; i < NB; i++) {
            nin[i] = val(round, me, i);
            na2a_in[i] = val(round, me, 50 + i);      /* to the left */
            na2a_in[NB + i] = val(round, me, 60 + i); /* to the right */
        }
        ncounts[0] = ncounts[1] = NB;
        ndispls[0] = round % 2 ? NB + 2 : 0;
        ndispls[1] = round % 2 ? 0 : NB + 1;
        /* alltoallv: round % 3 + 1 ints go left, (round + 1) % 3 + 1 go right. */
        int nl = round % 3 + 1, nr = (round + 1) % 3 + 1;
        nscounts[0] = nl; nsdispls[0] = 0;
        nscounts[1] = nr; nsdispls[1] = nl + gap;
        for (int i = 0; i < nl; i++) na2v_in[i] = val(round, me, 70 + i);
        for (int i = 0; i < nr; i++) na2v_in[nl + gap + i] = val(round, me, 80 + i);
        /* From the left comes what it sent right, and the other way. */
        nrcounts[0] = nr; nrdispls[0] = gap ? nl + 1 : 0;
        nrcounts[1] = nl; nrdispls[1] = gap ? 0 : nr;
        fill(nag, 2 * NB);
        fill(nagv, 2 * (MAXC + 2));
        fill(na2a_out, 2 * NB);
        fill(na2v_out, 2 * MAXC + 4);

        if (round % 2 == 0) {
            CALL(MPI_Startall(NREQ - 3, &r[ALLTOALLV]));
        } else {
            for (int k = NREQ - 1; k >= ALLTOALLV; k--)
                CALL(MPI_Start(&r[k]));
        }
        CALL(MPI_Waitall(NREQ, r, statuses_ignore()));

        /* Gatherv / allgatherv / scatterv, checked against the layout of this round. */
        at = 0;
        for (int k = 0; k < np; k++) {
            int j = round % 2 ? np - 1 - k : k;
            for (int i = 0; i < j % 3 + 1; i++) {
                CHECK(agv[at + i] == val(round, j, i), "round %d: allgatherv from %d [%d] = %d", round, j, i, agv[at + i]);
                if (me == 0)
                    CHECK(gv[at + i] == val(round, j, i), "round %d: gatherv from %d [%d] = %d", round, j, i, gv[at + i]);
            }
            if (gap && k < np - 1) {
                int g = at + j % 3 + 1;
                CHECK(agv[g] == SENT, "round %d: allgatherv gap %d overwritten", round, g);
            }
            at += j % 3 + 1 + gap;
        }
        for (int i = 0; i < MAXC; i++)
            CHECK(sv_out[i] == (i < mine ? val(round, me, i) + 7 : SENT), "round %d: scatterv[%d] = %d", round, i, sv_out[i]);
        ro = 0;
        for (int j = 0; j < np; j++) {
            for (int i = 0; i < rcounts[j]; i++) {
                CHECK(a2v_out[ro + i] == val(round, j, me * 10 + i), "round %d: alltoallv from %d [%d] = %d", round, j, i, a2v_out[ro + i]);
                CHECK(a2w_out[ro + i] == val(round, j, me * 10 + i) + 3, "round %d: alltoallw from %d [%d] = %d", round, j, i, a2w_out[ro + i]);
            }
            if (gap)
                CHECK(a2v_out[ro + rcounts[j]] == SENT, "round %d: alltoallv gap after %d overwritten", round, j);
            ro += rcounts[j] + gap;
        }
        int off = 0;
        for (int j = 0; j < me; j++)
            off += cnt(round, j);
        for (int i = 0; i < MAXC; i++) {
            int want = SENT;
            if (i < cnt(round, me)) {
                want = 0;
                for (int k = 0; k < np; k++)
                    want += val(round, k, off + i);
            }
            CHECK(rs_out[i] == want, "round %d: reduce_scatter[%d] = %d, expected %d", round, i, rs_out[i], want);
        }
        int nb[2] = {left, right};
        for (int s = 0; s < 2; s++) {
            int src = nb[s];
            for (int i = 0; i < NB; i++) {
                int w = src == MPI_PROC_NULL ? SENT : val(round, src, i);
                CHECK(nag[s * NB + i] == w, "round %d: neighbor_allgather[%d][%d] = %d", round, s, i, nag[s * NB + i]);
                CHECK(nagv[ndispls[s] + i] == w, "round %d: neighbor_allgatherv[%d][%d] = %d", round, s, i, nagv[ndispls[s] + i]);
                int wa = src == MPI_PROC_NULL ? SENT : val(round, src, (s == 0 ? 60 : 50) + i);
                CHECK(na2a_out[s * NB + i] == wa, "round %d: neighbor_alltoall[%d][%d] = %d", round, s, i, na2a_out[s * NB + i]);
            }
            for (int i = 0; i < nrcounts[s]; i++) {
                int wv = src == MPI_PROC_NULL ? SENT : val(round, src, (s == 0 ? 80 : 70) + i);
                CHECK(na2v_out[nrdispls[s] + i] == wv, "round %d: neighbor_alltoallv[%d][%d] = %d", round, s, i, na2v_out[nrdispls[s] + i]);
            }
        }
    }
    for (int k = 0; k < NREQ; k++) {
        CALL(MPI_Request_free(&r[k]));
        CHECK(r[k] == MPI_REQUEST_NULL, "MPI_Request_free left request %d", k);
    }

    /* Errors at init. */
    CALL(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    CALL(MPI_Comm_set_errhandler(cart, MPI_ERRORS_RETURN));
    MPI_Request q;
    EXPECT_CLASS(MPI_Gatherv_init(sin, 1, MPI_INT, gv, gcounts, gdispls, MPI_INT, np, MPI_COMM_WORLD, MPI_INFO_NULL, &q), MPI_ERR_ROOT);
    EXPECT_CLASS(MPI_Scatterv_init(sv_in, scounts, sdispls, MPI_INT, sv_out, -1, MPI_INT, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &q), MPI_ERR_COUNT);
    EXPECT_CLASS(MPI_Allgatherv_init(sin, 1, MPI_INT, agv, gcounts, gdispls, MPI_DATATYPE_NULL, MPI_COMM_WORLD, MPI_INFO_NULL, &q), MPI_ERR_TYPE);
    EXPECT_CLASS(MPI_Alltoallv_init(a2v_in, scounts, sdispls, MPI_INT, a2v_out, rcounts, rdispls, MPI_INT, MPI_COMM_NULL, MPI_INFO_NULL, &q), MPI_ERR_COMM);
    EXPECT_CLASS(MPI_Reduce_scatter_init(rs_in, rs_out, rscounts, MPI_INT, MPI_OP_NULL, MPI_COMM_WORLD, MPI_INFO_NULL, &q), MPI_ERR_OP);
    EXPECT_CLASS(MPI_Neighbor_allgather_init(nin, NB, MPI_INT, nag, NB, MPI_INT, MPI_COMM_WORLD, MPI_INFO_NULL, &q), MPI_ERR_TOPOLOGY);
    EXPECT_CLASS(MPI_Neighbor_alltoall_init(na2a_in, -1, MPI_INT, na2a_out, NB, MPI_INT, cart, MPI_INFO_NULL, &q), MPI_ERR_COUNT);
    int one = 1, n = 0;
    CALL(MPI_Allreduce(&one, &n, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    CHECK(n == np, "allreduce after the failed inits: %d", n);

    CALL(MPI_Comm_free(&cart));
    free(sin); free(gv); free(sv_in); free(agv); free(a2v_in); free(a2v_out); free(a2w_in); free(a2w_out); free(rs_in);
    free(gcounts); free(gdispls); free(scounts); free(sdispls); free(rcounts); free(rdispls);
    free(wscounts); free(wsdispls); free(wrcounts); free(wrdispls); free(rscounts); free(types);
    MPI_Finalize();
    finalized = 1;
    if (me == 0)
        printf("coll_persistent_v: ok\n");
    return 0;
}

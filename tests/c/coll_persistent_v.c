/* ranks: 1 2 3 4 */
/* mpich: skip Debian's MPICH 4.0 does not declare these MPI-4 persistent collectives */
/*
 * MPI-4 persistent vector and neighbourhood collectives: Gatherv, Scatterv,
 * Allgatherv, Alltoallv, Alltoallw and Reduce_scatter _init on
 * MPI_COMM_WORLD, Neighbor_allgather(v) and Neighbor_alltoall(v) _init on a
 * 1-D Cartesian communicator (periodic from 3 ranks up; MPI_PROC_NULL slots
 * must stay untouched). Every count, displacement and datatype array is a
 * temporary that is overwritten and freed as soon as the init returns, as
 * mpi4py does: the library must have copied them. Each request is started
 * four times with new data (Start and Startall), then freed. Error classes of
 * the init calls.
 */
#define TEST_NAME "coll_persistent_v"
#include "testutil.h"

#include <string.h>

#define MAXC 4   /* most ints in one block */
#define NB 3     /* ints per neighbour block */
#define SENT -7  /* untouched receive slots */

static int val(int round, int rank, int i) { return round * 10000 + rank * 100 + i; }
/* Ints exchanged between a and b in alltoallv (symmetric). */
static int pair(int a, int b) { return (a + b) % MAXC + 1; }
/* Ints reduce_scatter gives rank r. */
static int cnt(int r) { return r % 3 + 1; }

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

/* Temporaries handed to an init call, then spoiled and freed. */
#define MAXTMP 16
static void *tmp[MAXTMP];
static size_t tmp_len[MAXTMP];
static int ntmp;

static void *temp(const void *src, size_t len)
{
    CHECK(ntmp < MAXTMP, "too many temporaries");
    void *p = xmalloc(len);
    memcpy(p, src, len);
    tmp[ntmp] = p;
    tmp_len[ntmp++] = len;
    return p;
}
static int *ints(const int *src, int n) { return temp(src, (size_t)n * sizeof(int)); }

static void spoil(void)
{
    for (int k = 0; k < ntmp; k++) {
        memset(tmp[k], 0x5a, tmp_len[k]);
        free(tmp[k]);
    }
    ntmp = 0;
}

int main(int argc, char **argv)
{
    TEST_INIT(&argc, &argv);
    int last = np - 1;
    size_t big = (size_t)np * (MAXC + 1) * sizeof(int);
    int *sin = xmalloc(big), *gv = xmalloc(big), *sv_in = xmalloc(big), sv_out[MAXC], *agv = xmalloc(big);
    int *a2v_in = xmalloc(big), *a2v_out = xmalloc(big), *a2w_in = xmalloc(big), *a2w_out = xmalloc(big);
    int *rs_in = xmalloc(big), rs_out[MAXC];
    int *gcounts = xmalloc(np * sizeof(int)), *gdispls = xmalloc(np * sizeof(int));
    int *acounts = xmalloc(np * sizeof(int)), *adispls = xmalloc(np * sizeof(int));
    int *wdispls = xmalloc(np * sizeof(int)), *rscounts = xmalloc(np * sizeof(int));
    MPI_Datatype *types = xmalloc(np * sizeof(MPI_Datatype));
    int mine = me % 3 + 1; /* this rank's share of gatherv, scatterv, allgatherv */

    /* Gatherv, scatterv, allgatherv: blocks of j % 3 + 1 ints in reverse rank
     * order with one-int gaps; alltoallv/w: pair(me, j) ints each way, gaps too. */
    int gtotal = 0;
    for (int k = 0; k < np; k++) {
        int j = np - 1 - k;
        gcounts[j] = j % 3 + 1;
        gdispls[j] = gtotal;
        gtotal += gcounts[j] + 1;
    }
    int atotal = 0, rtotal = 0;
    for (int j = 0; j < np; j++) {
        acounts[j] = pair(me, j);
        adispls[j] = atotal;
        wdispls[j] = atotal * (int)sizeof(int);
        types[j] = MPI_INT;
        atotal += acounts[j] + 1;
        rscounts[j] = cnt(j);
        rtotal += rscounts[j];
    }

    MPI_Comm cart;
    int dims[1] = {np}, periods[1] = {np >= 3};
    CALL(MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &cart));
    int left, right;
    CALL(MPI_Cart_shift(cart, 0, 1, &left, &right));
    int nin[NB], nag[2 * NB], nagv[2 * NB + 2], na2a_in[2 * NB], na2a_out[2 * NB];
    int na2v_in[2 * MAXC + 1], na2v_out[2 * MAXC + 1];
    /* Allgatherv from the neighbours: right's block first, a gap, then left's. */
    int ncounts[2] = {NB, NB}, ndispls[2] = {NB + 2, 0};
    /* Alltoallv: 1 int goes left, 2 go right; from the left come 2, from the right 1. */
    int nscounts[2] = {1, 2}, nsdispls[2] = {0, 2}, nrcounts[2] = {2, 1}, nrdispls[2] = {2, 0};

    enum { GATHERV, SCATTERV, ALLGATHERV, ALLTOALLV, ALLTOALLW, REDUCE_SCATTER, NAG, NAGV, NA2A, NA2AV, NREQ };
    MPI_Request r[NREQ];
    CALL(MPI_Gatherv_init(sin, mine, MPI_INT, gv, ints(gcounts, np), ints(gdispls, np), MPI_INT, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &r[GATHERV]));
    CALL(MPI_Scatterv_init(sv_in, ints(gcounts, np), ints(gdispls, np), MPI_INT, sv_out, mine, MPI_INT, last, MPI_COMM_WORLD, MPI_INFO_NULL, &r[SCATTERV]));
    CALL(MPI_Allgatherv_init(sin, mine, MPI_INT, agv, ints(gcounts, np), ints(gdispls, np), MPI_INT, MPI_COMM_WORLD, MPI_INFO_NULL, &r[ALLGATHERV]));
    spoil();
    CALL(MPI_Alltoallv_init(a2v_in, ints(acounts, np), ints(adispls, np), MPI_INT, a2v_out, ints(acounts, np), ints(adispls, np), MPI_INT, MPI_COMM_WORLD, MPI_INFO_NULL, &r[ALLTOALLV]));
    MPI_Datatype *st = temp(types, np * sizeof(MPI_Datatype)), *rt = temp(types, np * sizeof(MPI_Datatype));
    CALL(MPI_Alltoallw_init(a2w_in, ints(acounts, np), ints(wdispls, np), st, a2w_out, ints(acounts, np), ints(wdispls, np), rt, MPI_COMM_WORLD, MPI_INFO_NULL, &r[ALLTOALLW]));
    spoil();
    CALL(MPI_Reduce_scatter_init(rs_in, rs_out, ints(rscounts, np), MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &r[REDUCE_SCATTER]));
    CALL(MPI_Neighbor_allgather_init(nin, NB, MPI_INT, nag, NB, MPI_INT, cart, MPI_INFO_NULL, &r[NAG]));
    CALL(MPI_Neighbor_allgatherv_init(nin, NB, MPI_INT, nagv, ints(ncounts, 2), ints(ndispls, 2), MPI_INT, cart, MPI_INFO_NULL, &r[NAGV]));
    CALL(MPI_Neighbor_alltoall_init(na2a_in, NB, MPI_INT, na2a_out, NB, MPI_INT, cart, MPI_INFO_NULL, &r[NA2A]));
    CALL(MPI_Neighbor_alltoallv_init(na2v_in, ints(nscounts, 2), ints(nsdispls, 2), MPI_INT, na2v_out, ints(nrcounts, 2), ints(nrdispls, 2), MPI_INT, cart, MPI_INFO_NULL, &r[NA2AV]));
    spoil();

    for (int round = 0; round < 4; round++) {
        for (int i = 0; i < mine; i++)
            sin[i] = val(round, me, i);
        fill(gv, gtotal);
        fill(agv, gtotal);
        fill(sv_out, MAXC);
        fill(sv_in, gtotal);
        if (me == last)
            for (int j = 0; j < np; j++)
                for (int i = 0; i < gcounts[j]; i++)
                    sv_in[gdispls[j] + i] = val(round, j, i) + 7;
        for (int j = 0; j < np; j++)
            for (int i = 0; i < acounts[j]; i++) {
                a2v_in[adispls[j] + i] = val(round, me, j * 10 + i);
                a2w_in[adispls[j] + i] = val(round, me, j * 10 + i) + 3;
            }
        fill(a2v_out, atotal);
        fill(a2w_out, atotal);
        for (int i = 0; i < rtotal; i++)
            rs_in[i] = val(round, me, i);
        fill(rs_out, MAXC);
        for (int i = 0; i < NB; i++) {
            nin[i] = val(round, me, i);
            na2a_in[i] = val(round, me, 50 + i);      /* to the left */
            na2a_in[NB + i] = val(round, me, 60 + i); /* to the right */
        }
        na2v_in[0] = val(round, me, 70);     /* to the left */
        na2v_in[1] = SENT;
        na2v_in[2] = val(round, me, 80);     /* to the right */
        na2v_in[3] = val(round, me, 81);
        fill(nag, 2 * NB);
        fill(nagv, 2 * NB + 2);
        fill(na2a_out, 2 * NB);
        fill(na2v_out, 2 * MAXC + 1);

        if (round % 2 == 0) {
            CALL(MPI_Startall(NREQ, r));
        } else {
            for (int k = NREQ - 1; k >= 0; k--)
                CALL(MPI_Start(&r[k]));
        }
        CALL(MPI_Waitall(NREQ, r, statuses_ignore()));

        for (int j = 0; j < np; j++) {
            for (int i = 0; i < gcounts[j]; i++) {
                CHECK(agv[gdispls[j] + i] == val(round, j, i), "round %d: allgatherv from %d [%d] = %d", round, j, i, agv[gdispls[j] + i]);
                if (me == 0)
                    CHECK(gv[gdispls[j] + i] == val(round, j, i), "round %d: gatherv from %d [%d] = %d", round, j, i, gv[gdispls[j] + i]);
            }
            CHECK(agv[gdispls[j] + gcounts[j]] == SENT, "round %d: allgatherv gap after %d overwritten", round, j);
        }
        for (int i = 0; i < MAXC; i++)
            CHECK(sv_out[i] == (i < mine ? val(round, me, i) + 7 : SENT), "round %d: scatterv[%d] = %d", round, i, sv_out[i]);
        for (int j = 0; j < np; j++) {
            for (int i = 0; i < acounts[j]; i++) {
                CHECK(a2v_out[adispls[j] + i] == val(round, j, me * 10 + i), "round %d: alltoallv from %d [%d] = %d", round, j, i, a2v_out[adispls[j] + i]);
                CHECK(a2w_out[adispls[j] + i] == val(round, j, me * 10 + i) + 3, "round %d: alltoallw from %d [%d] = %d", round, j, i, a2w_out[adispls[j] + i]);
            }
            CHECK(a2v_out[adispls[j] + acounts[j]] == SENT, "round %d: alltoallv gap after %d overwritten", round, j);
        }
        int off = 0;
        for (int j = 0; j < me; j++)
            off += cnt(j);
        for (int i = 0; i < MAXC; i++) {
            int want = SENT;
            if (i < cnt(me)) {
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
            /* From the left come the 2 ints it sent right, from the right the 1 it sent left. */
            for (int i = 0; i < nrcounts[s]; i++) {
                int wv = src == MPI_PROC_NULL ? SENT : val(round, src, (s == 0 ? 80 : 70) + i);
                CHECK(na2v_out[nrdispls[s] + i] == wv, "round %d: neighbor_alltoallv[%d][%d] = %d", round, s, i, na2v_out[nrdispls[s] + i]);
            }
        }
        CHECK(nagv[NB] == SENT && nagv[NB + 1] == SENT, "round %d: neighbor_allgatherv gap overwritten", round);
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
    EXPECT_CLASS(MPI_Scatterv_init(sv_in, gcounts, gdispls, MPI_INT, sv_out, -1, MPI_INT, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &q), MPI_ERR_COUNT);
    EXPECT_CLASS(MPI_Allgatherv_init(sin, 1, MPI_INT, agv, gcounts, gdispls, MPI_DATATYPE_NULL, MPI_COMM_WORLD, MPI_INFO_NULL, &q), MPI_ERR_TYPE);
    EXPECT_CLASS(MPI_Alltoallv_init(a2v_in, acounts, adispls, MPI_INT, a2v_out, acounts, adispls, MPI_INT, MPI_COMM_NULL, MPI_INFO_NULL, &q), MPI_ERR_COMM);
    EXPECT_CLASS(MPI_Reduce_scatter_init(rs_in, rs_out, rscounts, MPI_INT, MPI_OP_NULL, MPI_COMM_WORLD, MPI_INFO_NULL, &q), MPI_ERR_OP);
    EXPECT_CLASS(MPI_Neighbor_allgather_init(nin, NB, MPI_INT, nag, NB, MPI_INT, MPI_COMM_WORLD, MPI_INFO_NULL, &q), MPI_ERR_TOPOLOGY);
    EXPECT_CLASS(MPI_Neighbor_alltoall_init(na2a_in, -1, MPI_INT, na2a_out, NB, MPI_INT, cart, MPI_INFO_NULL, &q), MPI_ERR_COUNT);
    int one = 1, n = 0;
    CALL(MPI_Allreduce(&one, &n, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    CHECK(n == np, "allreduce after the failed inits: %d", n);

    CALL(MPI_Comm_free(&cart));
    free(sin); free(gv); free(sv_in); free(agv); free(a2v_in); free(a2v_out); free(a2w_in); free(a2w_out); free(rs_in);
    free(gcounts); free(gdispls); free(acounts); free(adispls); free(wdispls); free(rscounts); free(types);
    MPI_Finalize();
    finalized = 1;
    if (me == 0)
        printf("coll_persistent_v: ok\n");
    return 0;
}

/* ranks: 1 2 4 */
/*
 * MPI-4 large-count persistent v-collectives: MPI_Gatherv_init_c,
 * MPI_Allgatherv_init_c, MPI_Scatterv_init_c, MPI_Alltoallv_init_c,
 * MPI_Alltoallw_init_c and MPI_Reduce_scatter_init_c (MPI_Count counts,
 * MPI_Aint displacements, gaps between the blocks), each started twice with
 * new data in the buffers, the count and displacement arrays freed right
 * after the init; Gatherv_init_c and Alltoallv_init_c with displacements
 * beyond INT_MAX (bytes far out in mappings touched only there). Then the
 * error path: the single count of Gatherv_init_c, Allgatherv_init_c and
 * Scatterv_init_c beyond INT_MAX is MPI_ERR_COUNT (Ferry's persistent
 * collectives take their arrays in full, their single counts up to INT_MAX);
 * an init that fails on the root alone counts as no call, so the collectives
 * after it still match.
 */
#include <limits.h>
#include <string.h>
#include <sys/mman.h>

#define TEST_NAME "large_count_persist"
#include "testutil.h"

#define BIG ((MPI_Count)INT_MAX + 1)

static void run_twice(MPI_Request *r, int n, void (*fill)(int round), void (*check)(int round))
{
    for (int round = 1; round <= 2; round++) {
        fill(round);
        CALL(MPI_Startall(n, r));
        CALL(MPI_Waitall(n, r, statuses_ignore()));
        check(round);
    }
    for (int i = 0; i < n; i++)
        CALL(MPI_Request_free(&r[i]));
}

/* Rank i's block has i + 1 ints, placed with a gap of one int after each. */
static MPI_Aint total;
static int *mine, *gathered, *allgathered, *back;

static MPI_Count *block_counts(void)
{
    MPI_Count *c = xmalloc(sizeof(MPI_Count) * (size_t)np);
    for (int i = 0; i < np; i++)
        c[i] = i + 1;
    return c;
}

static MPI_Aint *block_displs(void)
{
    MPI_Aint *d = xmalloc(sizeof(MPI_Aint) * (size_t)np), at = 0;
    for (int i = 0; i < np; i++) {
        d[i] = at;
        at += i + 2;
    }
    total = at;
    return d;
}

static MPI_Aint displ_of(int r)
{
    return (MPI_Aint)r * (r + 3) / 2; /* sum of (i + 2) for i < r */
}

static void fill_v(int round)
{
    for (int i = 0; i <= me; i++)
        mine[i] = round * 1000 + me * 10 + i;
    for (int i = 0; i < total; i++)
        gathered[i] = allgathered[i] = -7;
    for (int i = 0; i <= me; i++)
        back[i] = -1;
}

static void check_v(int round)
{
    for (int r = 0; r < np; r++) {
        for (int i = 0; i <= r; i++) {
            int want = round * 1000 + r * 10 + i;
            if (me == np - 1)
                CHECK(gathered[displ_of(r) + i] == want, "Gatherv_init_c round %d block %d [%d] = %d",
                      round, r, i, gathered[displ_of(r) + i]);
            CHECK(allgathered[displ_of(r) + i] == want, "Allgatherv_init_c round %d block %d [%d]", round, r, i);
        }
        CHECK(allgathered[displ_of(r) + r + 1] == -7, "Allgatherv_init_c wrote into the gap after %d", r);
    }
    /* The scatter's root (0) sends -7s in the first round, then the blocks of the first
     * gather: each rank gets its own block back. */
    for (int i = 0; i <= me; i++) {
        int want = round == 1 ? -7 : 1000 + me * 10 + i;
        CHECK(back[i] == want, "Scatterv_init_c round %d [%d] = %d, want %d", round, i, back[i], want);
    }
}

static int *scatter_src;

static void fill_v_scatter(int round)
{
    fill_v(round);
    if (round == 2)
        for (int r = 0; r < np; r++)
            for (int i = 0; i <= r; i++)
                scatter_src[displ_of(r) + i] = 1000 + r * 10 + i;
}

static void gathers(void)
{
    MPI_Count *c = block_counts();
    MPI_Aint *d = block_displs();
    mine = xmalloc(sizeof(int) * (size_t)(me + 1));
    back = xmalloc(sizeof(int) * (size_t)(me + 1));
    gathered = xmalloc(sizeof(int) * (size_t)total);
    allgathered = xmalloc(sizeof(int) * (size_t)total);
    scatter_src = xmalloc(sizeof(int) * (size_t)total);
    for (int i = 0; i < total; i++)
        scatter_src[i] = -7;
    MPI_Request r[3];
    CALL(MPI_Gatherv_init_c(mine, me + 1, MPI_INT, gathered, c, d, MPI_INT, np - 1, MPI_COMM_WORLD, MPI_INFO_NULL, &r[0]));
    CALL(MPI_Allgatherv_init_c(mine, me + 1, MPI_INT, allgathered, c, d, MPI_INT, MPI_COMM_WORLD, MPI_INFO_NULL, &r[1]));
    CALL(MPI_Scatterv_init_c(scatter_src, c, d, MPI_INT, back, me + 1, MPI_INT, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &r[2]));
    /* The inits keep what they need of the arrays. */
    memset(c, 0xff, sizeof(MPI_Count) * (size_t)np);
    memset(d, 0xff, sizeof(MPI_Aint) * (size_t)np);
    free(c);
    free(d);
    run_twice(r, 3, fill_v_scatter, check_v);
    free(mine); free(back); free(gathered); free(allgathered); free(scatter_src);
}

/* Alltoallv_init_c: j + 1 ints to rank j, values round * 10000 + me * 100 + j; Alltoallw_init_c
 * the same with byte displacements and a two-int type on the receive side. */
static int *sbuf, *rbuf, *wbuf;
static MPI_Aint rtot;

static void fill_all(int round)
{
    MPI_Aint at = 0;
    for (int j = 0; j < np; j++)
        for (int k = 0; k <= j; k++)
            sbuf[at++] = round * 10000 + me * 100 + j;
    for (int i = 0; i < rtot; i++)
        rbuf[i] = wbuf[i] = -1;
}

static void check_all(int round)
{
    for (int i = 0; i < np; i++)
        for (int k = 0; k <= me; k++) {
            int want = round * 10000 + i * 100 + me;
            int at = i * (me + 2) + k; /* a gap of one int after each block */
            CHECK(rbuf[at] == want, "Alltoallv_init_c round %d from %d [%d] = %d", round, i, k, rbuf[at]);
            CHECK(wbuf[at] == want, "Alltoallw_init_c round %d from %d [%d] = %d", round, i, k, wbuf[at]);
        }
    for (int i = 0; i < np; i++)
        CHECK(rbuf[i * (me + 2) + me + 1] == -1, "Alltoallv_init_c wrote into a gap");
}

static void alltoalls(void)
{
    MPI_Count *sc = xmalloc(sizeof(MPI_Count) * (size_t)np), *rc = xmalloc(sizeof(MPI_Count) * (size_t)np);
    MPI_Count *wrc = xmalloc(sizeof(MPI_Count) * (size_t)np);
    MPI_Aint *sd = xmalloc(sizeof(MPI_Aint) * (size_t)np), *rd = xmalloc(sizeof(MPI_Aint) * (size_t)np);
    MPI_Aint *wsd = xmalloc(sizeof(MPI_Aint) * (size_t)np), *wrd = xmalloc(sizeof(MPI_Aint) * (size_t)np);
    MPI_Datatype *st = xmalloc(sizeof(MPI_Datatype) * (size_t)np), *rt = xmalloc(sizeof(MPI_Datatype) * (size_t)np);
    /* Alltoallw_init_c receives a block of me + 1 ints as pairs where that is even: the type
     * signatures match, the counts and types differ from the sender's. */
    MPI_Datatype pair;
    CALL(MPI_Type_contiguous(2, MPI_INT, &pair));
    CALL(MPI_Type_commit(&pair));
    MPI_Aint stot = 0;
    rtot = (MPI_Aint)np * (me + 2);
    for (int j = 0; j < np; j++) {
        sc[j] = j + 1;
        sd[j] = stot;
        wsd[j] = stot * (MPI_Aint)sizeof(int);
        stot += j + 1;
        st[j] = MPI_INT;
        rc[j] = me + 1;
        rd[j] = (MPI_Aint)j * (me + 2);
        wrd[j] = rd[j] * (MPI_Aint)sizeof(int);
        int even = (me + 1) % 2 == 0;
        rt[j] = even ? pair : MPI_INT;
        wrc[j] = even ? (me + 1) / 2 : me + 1;
    }
    sbuf = xmalloc(sizeof(int) * (size_t)stot);
    rbuf = xmalloc(sizeof(int) * (size_t)rtot);
    wbuf = xmalloc(sizeof(int) * (size_t)rtot);
    MPI_Request r[2];
    CALL(MPI_Alltoallv_init_c(sbuf, sc, sd, MPI_INT, rbuf, rc, rd, MPI_INT, MPI_COMM_WORLD, MPI_INFO_NULL, &r[0]));
    CALL(MPI_Alltoallw_init_c(sbuf, sc, wsd, st, wbuf, wrc, wrd, rt, MPI_COMM_WORLD, MPI_INFO_NULL, &r[1]));
    free(sc); free(rc); free(wrc); free(sd); free(rd); free(wsd); free(wrd); free(st); free(rt);
    run_twice(r, 2, fill_all, check_all);
    CALL(MPI_Type_free(&pair));
    free(sbuf); free(rbuf); free(wbuf);
}

/* Reduce_scatter_init_c: rank i gets i + 1 sums. */
static int *rs_in, rs_out[8];
static MPI_Aint rs_len;

static void fill_rs(int round)
{
    for (int i = 0; i < rs_len; i++)
        rs_in[i] = round * (me + 1) + i;
    memset(rs_out, 0, sizeof rs_out);
}

static void check_rs(int round)
{
    MPI_Aint first = (MPI_Aint)me * (me + 1) / 2;
    for (int k = 0; k <= me; k++) {
        int want = round * np * (np + 1) / 2 + np * (int)(first + k);
        CHECK(rs_out[k] == want, "Reduce_scatter_init_c round %d [%d] = %d, want %d", round, k, rs_out[k], want);
    }
}

static void reduce_scatter(void)
{
    MPI_Count *c = block_counts();
    rs_len = (MPI_Aint)np * (np + 1) / 2;
    rs_in = xmalloc(sizeof(int) * (size_t)rs_len);
    MPI_Request r;
    CALL(MPI_Reduce_scatter_init_c(rs_in, rs_out, c, MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &r));
    free(c);
    run_twice(&r, 1, fill_rs, check_rs);
    free(rs_in);
}

/* Displacements beyond INT_MAX, into mappings touched only there: Gatherv_init_c to rank 0
 * and Alltoallv_init_c, 4 bytes per block, started twice. */
#define FAR (((MPI_Aint)1 << 31) + 4096)

static void far_blocks(void)
{
    size_t len = (size_t)FAR + 8 * (size_t)np + 4096;
    unsigned char *a = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    unsigned char *b = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    CHECK(a != MAP_FAILED && b != MAP_FAILED, "mmap of %zu bytes", len);
    MPI_Count *four = xmalloc(sizeof(MPI_Count) * (size_t)np);
    MPI_Aint *at = xmalloc(sizeof(MPI_Aint) * (size_t)np);
    for (int r = 0; r < np; r++) {
        four[r] = 4;
        at[r] = FAR + 8 * r;
    }
    unsigned char mine[4], *got = me == 0 ? a : NULL;
    MPI_Request rq[2];
    CALL(MPI_Gatherv_init_c(mine, 4, MPI_BYTE, got, four, at, MPI_BYTE, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &rq[0]));
    CALL(MPI_Alltoallv_init_c(b, four, at, MPI_BYTE, a + 4, four, at, MPI_BYTE, MPI_COMM_WORLD, MPI_INFO_NULL, &rq[1]));
    free(four);
    free(at);
    for (int round = 1; round <= 2; round++) {
        for (int k = 0; k < 4; k++)
            mine[k] = (unsigned char)(round * 50 + me * 10 + k);
        for (int j = 0; j < np; j++)
            memset(b + FAR + 8 * j, round * 50 + me * 10 + j, 4);
        CALL(MPI_Startall(2, rq));
        CALL(MPI_Waitall(2, rq, statuses_ignore()));
        for (int i = 0; i < np; i++) {
            unsigned char *blk = a + FAR + 8 * i;
            if (me == 0)
                CHECK(blk[0] == round * 50 + i * 10 && blk[3] == round * 50 + i * 10 + 3,
                      "Gatherv_init_c round %d, block %d far out: %d", round, i, blk[0]);
            CHECK(blk[4] == round * 50 + i * 10 + me && blk[7] == round * 50 + i * 10 + me,
                  "Alltoallv_init_c round %d, from %d far out: %d", round, i, blk[4]);
        }
    }
    CALL(MPI_Request_free(&rq[0]));
    CALL(MPI_Request_free(&rq[1]));
    munmap(a, len);
    munmap(b, len);
}

static void errors(void)
{
    MPI_Count *c = xmalloc(sizeof(MPI_Count) * (size_t)np);
    MPI_Aint *d = xmalloc(sizeof(MPI_Aint) * (size_t)np);
    for (int i = 0; i < np; i++) {
        c[i] = 1;
        d[i] = i;
    }
    int *buf = xmalloc(sizeof(int) * (size_t)np), x = me;
    MPI_Request r = MPI_REQUEST_NULL;
    EXPECT(MPI_ERR_COUNT, MPI_Gatherv_init_c(&x, BIG, MPI_INT, buf, c, d, MPI_INT, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &r));
    EXPECT(MPI_ERR_COUNT, MPI_Allgatherv_init_c(&x, BIG, MPI_INT, buf, c, d, MPI_INT, MPI_COMM_WORLD, MPI_INFO_NULL, &r));
    EXPECT(MPI_ERR_COUNT, MPI_Scatterv_init_c(buf, c, d, MPI_INT, &x, BIG, MPI_INT, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &r));
    CHECK(r == MPI_REQUEST_NULL, "a failed init made a request");

    /* Only the root reads the receive count: it alone fails, the others hold a request they
     * never start. The failed init counts as no call: the collectives after it match. */
    int rc = MPI_Gather_init_c(&x, 1, MPI_INT, buf, me == 0 ? BIG : 1, MPI_INT, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &r);
    if (me == 0) {
        expect_class(rc, MPI_ERR_COUNT, "MPI_Gather_init_c at the root", __LINE__);
    } else {
        CALL(rc);
        CALL(MPI_Request_free(&r));
    }
    int y = 0;
    MPI_Request q;
    x = me + 1;
    CALL(MPI_Iallreduce(&x, &y, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &q));
    CALL(MPI_Wait(&q, MPI_STATUS_IGNORE));
    CHECK(y == np * (np + 1) / 2, "Iallreduce after the failed inits: %d", y);
    CALL(MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD));
    CHECK(y == np, "Allreduce after the failed inits: %d", y);
    free(c); free(d); free(buf);
}

int main(int argc, char **argv)
{
    TEST_INIT(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    gathers();
    alltoalls();
    reduce_scatter();
    far_blocks();
    /* MPICH 4.0.2 takes these counts at their word (and would move 8 GiB). */
    if (is_ferry())
        errors();
    CALL(MPI_Barrier(MPI_COMM_WORLD));
    if (me == 0)
        printf("large_count_persist: ok\n");
    CALL(MPI_Finalize());
    return 0;
}

/* ranks: 1 2 4 */
/*
 * MPI-4 large-count collectives: Bcast_c, Reduce_c, Allreduce_c, Scan_c,
 * Exscan_c, Reduce_scatter_block_c, Reduce_scatter_c, Gather_c,
 * Gatherv_c (MPI_Count counts, MPI_Aint displacements, gaps between the
 * blocks), Allgather_c, Allgatherv_c, Scatter_c, Scatterv_c, Alltoall_c,
 * Alltoallv_c, Alltoallw_c, the non-blocking forms of several, persistent
 * Allreduce_init_c and Bcast_init_c started twice, neighbourhood
 * allgather(v)/alltoall(v) on a periodic ring, Reduce_local_c, a
 * non-commutative MPI_Op_create_c operation (MPI_Count lengths), and
 * MPI_ERR_COUNT for a negative count and for counts and displacements whose
 * bytes overflow the address space, MPI_ERR_BUFFER for a NULL buffer beyond
 * INT_MAX, on every rank, after which the next collective still matches
 * (MPICH 4.0.2 checks the count of Bcast_c only). Gatherv_c, Iallgatherv_c,
 * Scatterv_c, Alltoallv_c and Ialltoallw_c with displacements beyond INT_MAX
 * (bytes far out in a mapping that is only touched there). Reductions beyond
 * INT_MAX elements: large_count_big.c.
 */
#include <limits.h>
#include <string.h>
#include <sys/mman.h>

#define TEST_NAME "large_count_coll"
#include "testutil.h"

#define K 5

static MPI_Count elements_seen;

static void keep_first(void *in, void *inout, MPI_Count *len, MPI_Datatype *dt)
{
    if (*dt != MPI_INT)
        return;
    memcpy(inout, in, sizeof(int) * (size_t)*len);
    elements_seen += *len;
}

static void reductions(void)
{
    int v[K], r[K];
    for (int i = 0; i < K; i++)
        v[i] = me + i;
    CALL(MPI_Bcast_c(v, K, MPI_INT, 0, MPI_COMM_WORLD));
    for (int i = 0; i < K; i++)
        CHECK(v[i] == i, "Bcast_c [%d] = %d", i, v[i]);
    for (int i = 0; i < K; i++)
        v[i] = me + i;
    int sum0 = np * (np - 1) / 2;
    CALL(MPI_Allreduce_c(v, r, K, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    for (int i = 0; i < K; i++)
        CHECK(r[i] == sum0 + np * i, "Allreduce_c [%d] = %d", i, r[i]);
    memset(r, 0, sizeof r);
    CALL(MPI_Reduce_c(v, r, K, MPI_INT, MPI_MAX, np - 1, MPI_COMM_WORLD));
    if (me == np - 1)
        for (int i = 0; i < K; i++)
            CHECK(r[i] == np - 1 + i, "Reduce_c [%d] = %d", i, r[i]);
    CALL(MPI_Scan_c(v, r, K, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    CHECK(r[0] == me * (me + 1) / 2, "Scan_c %d", r[0]);
    CALL(MPI_Exscan_c(v, r, K, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    if (me > 0)
        CHECK(r[0] == me * (me - 1) / 2, "Exscan_c %d", r[0]);

    int *all = xmalloc(sizeof(int) * 2 * (size_t)np);
    for (int i = 0; i < 2 * np; i++)
        all[i] = i + me;
    int two[2];
    CALL(MPI_Reduce_scatter_block_c(all, two, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    CHECK(two[0] == np * 2 * me + sum0, "Reduce_scatter_block_c %d", two[0]);
    MPI_Count *counts = xmalloc(sizeof(MPI_Count) * (size_t)np);
    for (int i = 0; i < np; i++)
        counts[i] = 2;
    CALL(MPI_Reduce_scatter_c(all, two, counts, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    CHECK(two[1] == np * (2 * me + 1) + sum0, "Reduce_scatter_c %d", two[1]);
    free(counts);
    free(all);

    MPI_Request rq;
    CALL(MPI_Iallreduce_c(v, r, K, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &rq));
    CALL(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    CHECK(r[K - 1] == sum0 + np * (K - 1), "Iallreduce_c %d", r[K - 1]);
    int b = me == 0 ? 42 : 0;
    CALL(MPI_Ibcast_c(&b, 1, MPI_INT, 0, MPI_COMM_WORLD, &rq));
    CALL(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    CHECK(b == 42, "Ibcast_c %d", b);

    /* Persistent: each start reduces what the buffer holds then. */
    MPI_Request p[2];
    int x = 0, y = 0, z = 0;
    CALL(MPI_Allreduce_init_c(&x, &y, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &p[0]));
    CALL(MPI_Bcast_init_c(&z, 1, MPI_INT, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &p[1]));
    for (int round = 1; round <= 2; round++) {
        x = round * (me + 1);
        z = me == 0 ? round * 10 : -1;
        CALL(MPI_Start(&p[0]));
        CALL(MPI_Wait(&p[0], MPI_STATUS_IGNORE));
        CALL(MPI_Start(&p[1]));
        CALL(MPI_Wait(&p[1], MPI_STATUS_IGNORE));
        CHECK(y == round * np * (np + 1) / 2, "Allreduce_init_c round %d: %d", round, y);
        CHECK(z == round * 10, "Bcast_init_c round %d: %d", round, z);
    }
    CALL(MPI_Request_free(&p[0]));
    CALL(MPI_Request_free(&p[1]));

    int local[3] = {1, 2, 3}, acc[3] = {10, 20, 30};
    CALL(MPI_Reduce_local_c(local, acc, 3, MPI_INT, MPI_SUM));
    CHECK(acc[0] == 11 && acc[2] == 33, "Reduce_local_c %d %d", acc[0], acc[2]);

    /* A large-count user operation: keeps the left operand's value, so the rank order of a
     * non-commutative reduction shows, and counts the elements it was given. */
    MPI_Op first;
    CALL(MPI_Op_create_c(keep_first, 0, &first));
    int w[K];
    for (int i = 0; i < K; i++)
        w[i] = me * 10 + i;
    elements_seen = 0;
    CALL(MPI_Allreduce_c(w, r, K, MPI_INT, first, MPI_COMM_WORLD));
    for (int i = 0; i < K; i++)
        CHECK(r[i] == i, "Allreduce_c with Op_create_c [%d] = %d", i, r[i]);
    CHECK(np == 1 || elements_seen >= K, "the user function saw %ld elements", (long)elements_seen);
    CALL(MPI_Reduce_local_c(w, acc, 3, MPI_INT, first));
    CHECK(acc[1] == me * 10 + 1, "Reduce_local_c with Op_create_c %d", acc[1]);
    CALL(MPI_Op_free(&first));
}

/* Rank i's block has i + 1 ints, placed with a gap of one int after each. */
static void varying(void)
{
    MPI_Count *counts = xmalloc(sizeof(MPI_Count) * (size_t)np);
    MPI_Aint *displs = xmalloc(sizeof(MPI_Aint) * (size_t)np);
    MPI_Aint total = 0;
    for (int i = 0; i < np; i++) {
        counts[i] = i + 1;
        displs[i] = total;
        total += i + 2;
    }
    int *mine = xmalloc(sizeof(int) * (size_t)(me + 1));
    for (int i = 0; i <= me; i++)
        mine[i] = me * 10 + i;
    int *all = xmalloc(sizeof(int) * (size_t)total);

    for (int i = 0; i < total; i++)
        all[i] = -7;
    CALL(MPI_Gatherv_c(mine, me + 1, MPI_INT, all, counts, displs, MPI_INT, 0, MPI_COMM_WORLD));
    if (me == 0)
        for (int r = 0; r < np; r++) {
            for (int i = 0; i <= r; i++)
                CHECK(all[displs[r] + i] == r * 10 + i, "Gatherv_c block %d [%d]", r, i);
            CHECK(all[displs[r] + r + 1] == -7, "Gatherv_c wrote into the gap after block %d", r);
        }
    for (int i = 0; i < total; i++)
        all[i] = -7;
    MPI_Request rq;
    CALL(MPI_Iallgatherv_c(mine, me + 1, MPI_INT, all, counts, displs, MPI_INT, MPI_COMM_WORLD, &rq));
    CALL(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    for (int r = 0; r < np; r++)
        for (int i = 0; i <= r; i++)
            CHECK(all[displs[r] + i] == r * 10 + i, "Iallgatherv_c block %d [%d]", r, i);
    for (int i = 0; i < total; i++)
        all[i] = -7;
    CALL(MPI_Allgatherv_c(mine, me + 1, MPI_INT, all, counts, displs, MPI_INT, MPI_COMM_WORLD));
    for (int r = 0; r < np; r++)
        CHECK(all[displs[r] + r] == r * 11, "Allgatherv_c block %d", r);

    /* Scatterv_c from the last rank: everyone gets its block back. */
    int *back = xmalloc(sizeof(int) * (size_t)(me + 1));
    CALL(MPI_Scatterv_c(all, counts, displs, MPI_INT, back, me + 1, MPI_INT, np - 1, MPI_COMM_WORLD));
    for (int i = 0; i <= me; i++)
        CHECK(back[i] == me * 10 + i, "Scatterv_c [%d] = %d", i, back[i]);

    /* Alltoallv_c: j ints to rank j, from rank i's values i * 100 + j. */
    MPI_Count *sc = xmalloc(sizeof(MPI_Count) * (size_t)np), *rc = xmalloc(sizeof(MPI_Count) * (size_t)np);
    MPI_Aint *sd = xmalloc(sizeof(MPI_Aint) * (size_t)np), *rd = xmalloc(sizeof(MPI_Aint) * (size_t)np);
    MPI_Aint stot = 0, rtot = 0;
    for (int j = 0; j < np; j++) {
        sc[j] = j;
        sd[j] = stot;
        stot += j;
        rc[j] = me;
        rd[j] = rtot;
        rtot += me;
    }
    int *sbuf = xmalloc(sizeof(int) * (size_t)(stot + 1)), *rbuf = xmalloc(sizeof(int) * (size_t)(rtot + 1));
    for (int j = 0; j < np; j++)
        for (int k = 0; k < j; k++)
            sbuf[sd[j] + k] = me * 100 + j;
    CALL(MPI_Alltoallv_c(sbuf, sc, sd, MPI_INT, rbuf, rc, rd, MPI_INT, MPI_COMM_WORLD));
    for (int i = 0; i < np; i++)
        for (int k = 0; k < me; k++)
            CHECK(rbuf[rd[i] + k] == i * 100 + me, "Alltoallv_c from %d: %d", i, rbuf[rd[i] + k]);
    /* Alltoallw_c: the same exchange with byte displacements and per-rank types. */
    MPI_Datatype *types = xmalloc(sizeof(MPI_Datatype) * (size_t)np);
    for (int j = 0; j < np; j++) {
        types[j] = MPI_INT;
        sd[j] *= (MPI_Aint)sizeof(int);
        rd[j] *= (MPI_Aint)sizeof(int);
    }
    memset(rbuf, 0, sizeof(int) * (size_t)(rtot + 1));
    CALL(MPI_Ialltoallw_c(sbuf, sc, sd, types, rbuf, rc, rd, types, MPI_COMM_WORLD, &rq));
    CALL(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    for (int i = 0; i < np; i++)
        for (int k = 0; k < me; k++)
            CHECK(rbuf[rd[i] / (MPI_Aint)sizeof(int) + k] == i * 100 + me, "Ialltoallw_c from %d", i);
    free(types); free(sbuf); free(rbuf); free(sc); free(rc); free(sd); free(rd);
    free(back); free(all); free(mine); free(counts); free(displs);
}

static void uniform(void)
{
    int *all = xmalloc(sizeof(int) * 2 * (size_t)np);
    int two[2] = {me, -me};
    CALL(MPI_Allgather_c(two, 2, MPI_INT, all, 2, MPI_INT, MPI_COMM_WORLD));
    for (int r = 0; r < np; r++)
        CHECK(all[2 * r] == r && all[2 * r + 1] == -r, "Allgather_c block %d", r);
    memset(all, 0, sizeof(int) * 2 * (size_t)np);
    /* A non-root's receive count is not read: any value will do. */
    CALL(MPI_Gather_c(two, 2, MPI_INT, all, me == 0 ? 2 : -1, MPI_INT, 0, MPI_COMM_WORLD));
    if (me == 0)
        for (int r = 0; r < np; r++)
            CHECK(all[2 * r] == r, "Gather_c block %d", r);
    CALL(MPI_Bcast_c(all, 2 * np, MPI_INT, 0, MPI_COMM_WORLD));
    int got[2];
    CALL(MPI_Scatter_c(all, 2, MPI_INT, got, 2, MPI_INT, 0, MPI_COMM_WORLD));
    CHECK(got[0] == me && got[1] == -me, "Scatter_c %d %d", got[0], got[1]);
    int *to = xmalloc(sizeof(int) * (size_t)np), *from = xmalloc(sizeof(int) * (size_t)np);
    for (int j = 0; j < np; j++)
        to[j] = me * 100 + j;
    MPI_Request rq;
    CALL(MPI_Ialltoall_c(to, 1, MPI_INT, from, 1, MPI_INT, MPI_COMM_WORLD, &rq));
    CALL(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    for (int i = 0; i < np; i++)
        CHECK(from[i] == i * 100 + me, "Ialltoall_c from %d: %d", i, from[i]);
    CALL(MPI_Alltoall_c(to, 1, MPI_INT, from, 1, MPI_INT, MPI_COMM_WORLD));
    CHECK(from[np - 1] == (np - 1) * 100 + me, "Alltoall_c");
    free(to); free(from); free(all);
}

static void neighbours(void)
{
    MPI_Comm ring;
    int dims[1] = {np}, periods[1] = {1};
    CALL(MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &ring));
    int lo, hi;
    CALL(MPI_Cart_shift(ring, 0, 1, &lo, &hi));
    int mine[2] = {me, me + 50}, got[5] = {-1, -1, -1, -1, -1};
    CALL(MPI_Neighbor_allgather_c(mine, 1, MPI_INT, got, 1, MPI_INT, ring));
    CHECK(got[0] == lo && got[1] == hi, "Neighbor_allgather_c %d %d", got[0], got[1]);
    /* Both ints to each neighbour, received with a gap of one int between the blocks. */
    MPI_Count sc[2] = {2, 2}, rc[2] = {2, 2};
    MPI_Aint sd[2] = {0, 0}, rd[2] = {0, 3};
    memset(got, 0xff, sizeof got);
    MPI_Request rq;
    CALL(MPI_Ineighbor_alltoallv_c(mine, sc, sd, MPI_INT, got, rc, rd, MPI_INT, ring, &rq));
    CALL(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    CHECK(got[0] == lo && got[1] == lo + 50 && got[2] == -1 && got[3] == hi && got[4] == hi + 50,
          "Ineighbor_alltoallv_c: %d %d %d %d %d (lo %d hi %d)", got[0], got[1], got[2], got[3],
          got[4], lo, hi);
    memset(got, 0xff, sizeof got);
    MPI_Count one[2] = {1, 1};
    CALL(MPI_Neighbor_allgatherv_c(mine, 1, MPI_INT, got, one, rd, MPI_INT, ring));
    CHECK(got[0] == lo && got[1] == -1 && got[3] == hi, "Neighbor_allgatherv_c %d %d", got[0], got[3]);
    /* The same value both ways, so the pairing of a rank's two edges to one neighbour
     * (np < 3) does not matter. */
    int same[2] = {me, me};
    CALL(MPI_Neighbor_alltoall_c(same, 1, MPI_INT, got, 1, MPI_INT, ring));
    CHECK(got[0] == lo && got[1] == hi, "Neighbor_alltoall_c %d %d", got[0], got[1]);
    CALL(MPI_Comm_free(&ring));
}

/* Displacements beyond INT_MAX: blocks of 4 bytes placed 2^31 + 4096 bytes into a mapping
 * that is only touched there (no memory is used for the rest). */
#define FAR (((MPI_Aint)1 << 31) + 4096)

static unsigned char *far_map(void)
{
    size_t len = (size_t)FAR + 8 * (size_t)np + 4096;
    void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    CHECK(p != MAP_FAILED, "mmap of %zu bytes", len);
    return p;
}

static void far_blocks(void)
{
    size_t len = (size_t)FAR + 8 * (size_t)np + 4096;
    unsigned char *a = far_map(), *b = far_map();
    MPI_Count *four = xmalloc(sizeof(MPI_Count) * (size_t)np);
    MPI_Aint *at = xmalloc(sizeof(MPI_Aint) * (size_t)np);
    for (int r = 0; r < np; r++) {
        four[r] = 4;
        at[r] = FAR + 8 * r;
    }
    unsigned char mine[4], got[4];
    for (int k = 0; k < 4; k++)
        mine[k] = (unsigned char)(me * 10 + k);

    CALL(MPI_Gatherv_c(mine, 4, MPI_BYTE, a, four, at, MPI_BYTE, 0, MPI_COMM_WORLD));
    if (me == 0)
        for (int r = 0; r < np; r++)
            CHECK(a[at[r] + 3] == r * 10 + 3, "Gatherv_c, block %d far out: %d", r, a[at[r] + 3]);
    MPI_Request rq;
    CALL(MPI_Iallgatherv_c(mine, 4, MPI_BYTE, b, four, at, MPI_BYTE, MPI_COMM_WORLD, &rq));
    CALL(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    for (int r = 0; r < np; r++)
        CHECK(b[at[r]] == r * 10 && b[at[r] + 4] == 0, "Iallgatherv_c, block %d far out: %d", r, b[at[r]]);
    /* Rank 0 scatters what it gathered. */
    CALL(MPI_Scatterv_c(a, four, at, MPI_BYTE, got, 4, MPI_BYTE, 0, MPI_COMM_WORLD));
    CHECK(got[0] == me * 10 && got[3] == me * 10 + 3, "Scatterv_c from far out: %d %d", got[0], got[3]);
    /* Alltoallv_c: byte k of the block for rank j is me * 10 + j, each block far out on both
     * sides (at the receiver, two bytes further). */
    for (int j = 0; j < np; j++)
        for (int k = 0; k < 4; k++)
            b[at[j] + k] = (unsigned char)(me * 10 + j);
    MPI_Aint *rat = xmalloc(sizeof(MPI_Aint) * (size_t)np);
    for (int i = 0; i < np; i++)
        rat[i] = at[i] + 2;
    memset(a + FAR, 0, 8 * (size_t)np + 2);
    CALL(MPI_Alltoallv_c(b, four, at, MPI_BYTE, a, four, rat, MPI_BYTE, MPI_COMM_WORLD));
    for (int i = 0; i < np; i++)
        CHECK(a[rat[i]] == i * 10 + me && a[rat[i] + 3] == i * 10 + me && a[at[i]] == 0,
              "Alltoallv_c from %d, far out: %d", i, a[rat[i]]);
    /* Ialltoallw_c: the same exchange back, byte displacements and a type per rank. */
    MPI_Datatype *bytes = xmalloc(sizeof(MPI_Datatype) * (size_t)np);
    for (int i = 0; i < np; i++)
        bytes[i] = MPI_BYTE;
    memset(b + FAR, 0, 8 * (size_t)np);
    CALL(MPI_Ialltoallw_c(a, four, rat, bytes, b, four, at, bytes, MPI_COMM_WORLD, &rq));
    CALL(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    for (int i = 0; i < np; i++)
        CHECK(b[at[i]] == me * 10 + i && b[at[i] + 3] == me * 10 + i, "Ialltoallw_c from %d, far out: %d", i, b[at[i]]);
    free(bytes); free(rat); free(four); free(at);
    munmap(a, len);
    munmap(b, len);
}

static void errors(void)
{
    int x = 1, y = 0;
    EXPECT(MPI_ERR_COUNT, MPI_Bcast_c(&x, -1, MPI_INT, 0, MPI_COMM_WORLD));
    /* MPICH 4.0.2 does not check these counts (and crashes on them). */
    int checked = is_ferry();
    if (checked) {
        EXPECT(MPI_ERR_COUNT, MPI_Allreduce_c(&x, &y, -2, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
        /* Beyond INT_MAX, a NULL buffer is still no buffer. */
        EXPECT(MPI_ERR_BUFFER, MPI_Bcast_c(NULL, (MPI_Count)INT_MAX + 1, MPI_BYTE, 0, MPI_COMM_WORLD));
        EXPECT(MPI_ERR_BUFFER, MPI_Allreduce_c(NULL, &y, (MPI_Count)INT_MAX + 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
        EXPECT(MPI_ERR_BUFFER, MPI_Reduce_local_c(NULL, &y, (MPI_Count)INT_MAX + 1, MPI_INT, MPI_SUM));
        /* A count whose bytes no memory could hold. */
        EXPECT(MPI_ERR_COUNT, MPI_Allreduce_c(&x, &y, (MPI_Count)1 << 62, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
        EXPECT(MPI_ERR_COUNT, MPI_Reduce_scatter_block_c(&x, &y, (MPI_Count)1 << 61, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
        MPI_Request rq;
        EXPECT(MPI_ERR_COUNT, MPI_Iscan_c(&x, &y, (MPI_Count)1 << 62, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &rq));
        EXPECT(MPI_ERR_COUNT, MPI_Reduce_local_c(&x, &y, (MPI_Count)1 << 62, MPI_INT, MPI_SUM));
    }
    MPI_Count *c = xmalloc(sizeof(MPI_Count) * (size_t)np);
    MPI_Aint *d = xmalloc(sizeof(MPI_Aint) * (size_t)np);
    for (int i = 0; i < np; i++) {
        c[i] = i == np - 1 ? -1 : 1;
        d[i] = i;
    }
    int *buf = xmalloc(sizeof(int) * (size_t)np);
    if (checked) {
        EXPECT(MPI_ERR_COUNT, MPI_Allgatherv_c(&x, 1, MPI_INT, buf, c, d, MPI_INT, MPI_COMM_WORLD));
        /* A count and a displacement whose bytes no memory could hold. */
        MPI_Datatype *t = xmalloc(sizeof(MPI_Datatype) * (size_t)np);
        for (int i = 0; i < np; i++)
            t[i] = MPI_INT;
        c[np - 1] = (MPI_Count)1 << 62;
        EXPECT(MPI_ERR_COUNT, MPI_Alltoallw_c(buf, c, d, t, buf + 1, c, d, t, MPI_COMM_WORLD));
        c[np - 1] = 1;
        d[np - 1] = (MPI_Aint)1 << 62;
        EXPECT(MPI_ERR_COUNT, MPI_Allgatherv_c(&x, 1, MPI_INT, buf, c, d, MPI_INT, MPI_COMM_WORLD));
        free(t);
    }
    /* The failed calls counted on every rank alike: this one still matches. */
    x = me + 1;
    CALL(MPI_Allreduce_c(&x, &y, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    CHECK(y == np * (np + 1) / 2, "Allreduce_c after errors: %d", y);
    free(c); free(d); free(buf);
}

int main(int argc, char **argv)
{
    TEST_INIT(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    reductions();
    varying();
    uniform();
    neighbours();
    far_blocks();
    errors();
    CALL(MPI_Barrier(MPI_COMM_WORLD));
    if (me == 0)
        printf("large_count_coll: ok\n");
    CALL(MPI_Finalize());
    return 0;
}

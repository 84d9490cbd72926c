/* ranks: 2 3 4 8 */
/*
 * Every collective on an intercommunicator, blocking then non-blocking: data moves from
 * one group to the other; rooted calls are run with the root at each rank of each group
 * (MPI_ROOT at the root, MPI_PROC_NULL at the rest of its group, the root's rank in the
 * other group), and MPI_PROC_NULL processes' buffers must stay untouched.
 */
#define TEST_NAME "intercomm_coll"
#include "testutil.h"

#include <string.h>

#define SENTINEL (-77)

static MPI_Comm inter;
static int lsize, rsize, rank, mine, theirs; /* mine/theirs: group ids 1 (A) and 2 (B) */
static int nb;                               /* run the non-blocking forms */
/* MPICH 4.0's MPI_Ibcast on an intercommunicator delivers nothing when the root is not
 * rank 0 of its group (its blocking MPI_Bcast does); under MPICH that case is left out so
 * the program can still check itself there. */
static int mpich_ibcast_bug;

/* Element i of what rank r of group g contributes. */
static int val(int g, int r, int i) { return 10000 * g + 100 * r + i; }

/* Run the blocking call, or the non-blocking one and wait for it. */
#define RUN(blocking, ...) do { \
        if (!nb) { CALL(blocking); } \
        else { MPI_Request q_; CALL(__VA_ARGS__); CALL(MPI_Wait(&q_, MPI_STATUS_IGNORE)); } } while (0)

static int *ints(int n, int fill)
{
    int *p = xmalloc(sizeof(int) * (n > 0 ? n : 1));
    for (int i = 0; i < n; i++)
        p[i] = fill;
    return p;
}

/* The root argument on this process when the root is rank `root` of group `g`. */
static int root_arg(int g, int root)
{
    if (g != mine)
        return root;
    return rank == root ? MPI_ROOT : MPI_PROC_NULL;
}

static void bcast_gather_scatter(int g, int root)
{
    int ra = root_arg(g, root);
    int is_root = ra == MPI_ROOT, bystander = ra == MPI_PROC_NULL;
    /* Bcast of 3 ints. */
    int *buf = ints(3, SENTINEL);
    if (is_root)
        for (int i = 0; i < 3; i++)
            buf[i] = val(g, root, i);
    if (nb && root != 0 && mpich_ibcast_bug) {
        for (int i = 0; i < 3; i++)
            buf[i] = bystander ? SENTINEL : val(g, root, i);
    } else {
        RUN(MPI_Bcast(buf, 3, MPI_INT, ra, inter), MPI_Ibcast(buf, 3, MPI_INT, ra, inter, &q_));
    }
    for (int i = 0; i < 3; i++) {
        int want = bystander ? SENTINEL : val(g, root, i);
        CHECK(buf[i] == want, "bcast (nb %d) root %d/%d: [%d] = %d, want %d", nb, g, root, i, buf[i], want);
    }
    free(buf);

    /* Gather of 2 ints from each member of the other group. */
    int *s = ints(2, 0), *r = ints(2 * rsize, SENTINEL);
    for (int i = 0; i < 2; i++)
        s[i] = val(mine, rank, i);
    RUN(MPI_Gather(s, 2, MPI_INT, r, 2, MPI_INT, ra, inter), MPI_Igather(s, 2, MPI_INT, r, 2, MPI_INT, ra, inter, &q_));
    for (int j = 0; j < rsize; j++)
        for (int i = 0; i < 2; i++) {
            int want = is_root ? val(theirs, j, i) : SENTINEL;
            CHECK(r[2 * j + i] == want, "gather root %d/%d: from %d [%d] = %d", g, root, j, i, r[2 * j + i]);
        }
    free(r);

    /* Gatherv: remote rank j sends j + 1 ints, stored in reverse rank order. */
    int *counts = ints(rsize, 0), *displs = ints(rsize, 0), total = 0;
    for (int j = rsize - 1; j >= 0; j--) {
        counts[j] = j + 1;
        displs[j] = total;
        total += j + 1;
    }
    int *sv = ints(rank + 1, 0);
    for (int i = 0; i <= rank; i++)
        sv[i] = val(mine, rank, i);
    r = ints(total, SENTINEL);
    RUN(MPI_Gatherv(sv, rank + 1, MPI_INT, r, counts, displs, MPI_INT, ra, inter),
        MPI_Igatherv(sv, rank + 1, MPI_INT, r, counts, displs, MPI_INT, ra, inter, &q_));
    for (int j = 0; j < rsize; j++)
        for (int i = 0; i <= j; i++) {
            int want = is_root ? val(theirs, j, i) : SENTINEL;
            CHECK(r[displs[j] + i] == want, "gatherv root %d/%d: from %d [%d] = %d", g, root, j, i, r[displs[j] + i]);
        }

    /* Scatter of 2 ints to each member of the other group. */
    int *big = ints(2 * rsize, 0);
    for (int j = 0; j < rsize; j++)
        for (int i = 0; i < 2; i++)
            big[2 * j + i] = val(mine, j, i) + 50;
    int *got = ints(2, SENTINEL);
    RUN(MPI_Scatter(big, 2, MPI_INT, got, 2, MPI_INT, ra, inter), MPI_Iscatter(big, 2, MPI_INT, got, 2, MPI_INT, ra, inter, &q_));
    for (int i = 0; i < 2; i++) {
        int want = (g != mine) ? val(theirs, rank, i) + 50 : SENTINEL;
        CHECK(got[i] == want, "scatter root %d/%d: [%d] = %d, want %d", g, root, i, got[i], want);
    }

    /* Scatterv: remote rank j gets j + 1 ints from the reverse layout. */
    int *bv = ints(total, 0);
    for (int j = 0; j < rsize; j++)
        for (int i = 0; i <= j; i++)
            bv[displs[j] + i] = val(mine, j, i) + 70;
    int *gv = ints(rank + 1, SENTINEL);
    RUN(MPI_Scatterv(bv, counts, displs, MPI_INT, gv, rank + 1, MPI_INT, ra, inter),
        MPI_Iscatterv(bv, counts, displs, MPI_INT, gv, rank + 1, MPI_INT, ra, inter, &q_));
    for (int i = 0; i <= rank; i++) {
        int want = (g != mine) ? val(theirs, rank, i) + 70 : SENTINEL;
        CHECK(gv[i] == want, "scatterv root %d/%d: [%d] = %d, want %d", g, root, i, gv[i], want);
    }

    /* Reduce of 2 ints (sum over the other group). */
    int red[2] = { SENTINEL, SENTINEL };
    /* A bystander's buffers, count and datatype are insignificant (as mpi4py passes them). */
    if (bystander)
        RUN(MPI_Reduce(NULL, NULL, 0, MPI_DATATYPE_NULL, MPI_SUM, ra, inter),
            MPI_Ireduce(NULL, NULL, 0, MPI_DATATYPE_NULL, MPI_SUM, ra, inter, &q_));
    else
        RUN(MPI_Reduce(s, red, 2, MPI_INT, MPI_SUM, ra, inter), MPI_Ireduce(s, red, 2, MPI_INT, MPI_SUM, ra, inter, &q_));
    for (int i = 0; i < 2; i++) {
        int want = 0;
        for (int j = 0; j < rsize; j++)
            want += val(theirs, j, i);
        CHECK(red[i] == (is_root ? want : SENTINEL), "reduce root %d/%d: [%d] = %d, want %d", g, root, i, red[i], want);
    }
    free(s); free(r); free(counts); free(displs); free(sv); free(big); free(got); free(bv); free(gv);
}

/* x op y = x: associative, not commutative; a reduction in rank order gives rank 0's. */
static void first(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    memcpy(inout, in, sizeof(int) * (size_t)*len);
}

static void everyone(void)
{
    RUN(MPI_Barrier(inter), MPI_Ibarrier(inter, &q_));

    /* Allgather(v). */
    int s[2] = { val(mine, rank, 0), val(mine, rank, 1) };
    int *r = ints(2 * rsize, SENTINEL);
    RUN(MPI_Allgather(s, 2, MPI_INT, r, 2, MPI_INT, inter), MPI_Iallgather(s, 2, MPI_INT, r, 2, MPI_INT, inter, &q_));
    for (int j = 0; j < rsize; j++)
        for (int i = 0; i < 2; i++)
            CHECK(r[2 * j + i] == val(theirs, j, i), "allgather from %d [%d] = %d", j, i, r[2 * j + i]);
    int *counts = ints(rsize, 0), *displs = ints(rsize, 0), total = 0;
    for (int j = 0; j < rsize; j++) {
        counts[j] = 1 + j % 2;
        displs[j] = total + 1; /* a gap before each block */
        total += counts[j] + 1;
    }
    int *rv = ints(total, SENTINEL);
    RUN(MPI_Allgatherv(s, 1 + rank % 2, MPI_INT, rv, counts, displs, MPI_INT, inter),
        MPI_Iallgatherv(s, 1 + rank % 2, MPI_INT, rv, counts, displs, MPI_INT, inter, &q_));
    for (int j = 0; j < rsize; j++) {
        CHECK(rv[displs[j] - 1] == SENTINEL, "allgatherv wrote a gap");
        for (int i = 0; i < counts[j]; i++)
            CHECK(rv[displs[j] + i] == val(theirs, j, i), "allgatherv from %d [%d] = %d", j, i, rv[displs[j] + i]);
    }

    /* Alltoall: block j for remote rank j. */
    int *sa = ints(2 * rsize, 0), *ra = ints(2 * rsize, SENTINEL);
    for (int j = 0; j < rsize; j++)
        for (int i = 0; i < 2; i++)
            sa[2 * j + i] = val(mine, rank, 10 * j + i);
    RUN(MPI_Alltoall(sa, 2, MPI_INT, ra, 2, MPI_INT, inter), MPI_Ialltoall(sa, 2, MPI_INT, ra, 2, MPI_INT, inter, &q_));
    for (int j = 0; j < rsize; j++)
        for (int i = 0; i < 2; i++)
            CHECK(ra[2 * j + i] == val(theirs, j, 10 * rank + i), "alltoall from %d [%d] = %d", j, i, ra[2 * j + i]);

    /* Alltoallv / Alltoallw: (sender + receiver) % 3 + 1 ints between each pair. */
    int *sc = ints(rsize, 0), *sd = ints(rsize, 0), *rc = ints(rsize, 0), *rd = ints(rsize, 0), st = 0, rtot = 0;
    for (int j = 0; j < rsize; j++) {
        sc[j] = rc[j] = (rank + j) % 3 + 1;
        sd[j] = st;
        rd[j] = rtot;
        st += sc[j];
        rtot += rc[j];
    }
    int *sb = ints(st, 0), *rb = ints(rtot, SENTINEL);
    for (int j = 0; j < rsize; j++)
        for (int i = 0; i < sc[j]; i++)
            sb[sd[j] + i] = val(mine, rank, 10 * j + i);
    RUN(MPI_Alltoallv(sb, sc, sd, MPI_INT, rb, rc, rd, MPI_INT, inter),
        MPI_Ialltoallv(sb, sc, sd, MPI_INT, rb, rc, rd, MPI_INT, inter, &q_));
    for (int j = 0; j < rsize; j++)
        for (int i = 0; i < rc[j]; i++)
            CHECK(rb[rd[j] + i] == val(theirs, j, 10 * rank + i), "alltoallv from %d [%d] = %d", j, i, rb[rd[j] + i]);
    MPI_Datatype *types = xmalloc(sizeof(MPI_Datatype) * (size_t)rsize);
    int *sdb = ints(rsize, 0), *rdb = ints(rsize, 0);
    for (int j = 0; j < rsize; j++) {
        types[j] = MPI_INT;
        sdb[j] = sd[j] * (int)sizeof(int);
        rdb[j] = rd[j] * (int)sizeof(int);
        for (int i = 0; i < rc[j]; i++)
            rb[rd[j] + i] = SENTINEL;
    }
    RUN(MPI_Alltoallw(sb, sc, sdb, types, rb, rc, rdb, types, inter),
        MPI_Ialltoallw(sb, sc, sdb, types, rb, rc, rdb, types, inter, &q_));
    for (int j = 0; j < rsize; j++)
        for (int i = 0; i < rc[j]; i++)
            CHECK(rb[rd[j] + i] == val(theirs, j, 10 * rank + i), "alltoallw from %d [%d] = %d", j, i, rb[rd[j] + i]);

    /* Allreduce: the sum over the other group, and the non-commutative `first`. */
    int sum[2] = { SENTINEL, SENTINEL };
    RUN(MPI_Allreduce(s, sum, 2, MPI_INT, MPI_SUM, inter), MPI_Iallreduce(s, sum, 2, MPI_INT, MPI_SUM, inter, &q_));
    for (int i = 0; i < 2; i++) {
        int want = 0;
        for (int j = 0; j < rsize; j++)
            want += val(theirs, j, i);
        CHECK(sum[i] == want, "allreduce [%d] = %d, want %d", i, sum[i], want);
    }
    MPI_Op op;
    CALL(MPI_Op_create(first, 0, &op));
    RUN(MPI_Allreduce(s, sum, 2, MPI_INT, op, inter), MPI_Iallreduce(s, sum, 2, MPI_INT, op, inter, &q_));
    CHECK(sum[0] == val(theirs, 0, 0) && sum[1] == val(theirs, 0, 1), "non-commutative allreduce gave %d %d", sum[0], sum[1]);
    CALL(MPI_Op_free(&op));

    /* Reduce_scatter_block: the input has n * recvcount ints on both sides (n the local
     * size): recvcount is twice the remote size. */
    int rcount = 2 * rsize, n_in = lsize * rcount;
    int *in = ints(n_in, 0), *out = ints(rcount, SENTINEL);
    for (int i = 0; i < n_in; i++)
        in[i] = val(mine, rank, i);
    RUN(MPI_Reduce_scatter_block(in, out, rcount, MPI_INT, MPI_SUM, inter),
        MPI_Ireduce_scatter_block(in, out, rcount, MPI_INT, MPI_SUM, inter, &q_));
    for (int i = 0; i < rcount; i++) {
        int want = 0;
        for (int j = 0; j < rsize; j++)
            want += val(theirs, j, rank * rcount + i);
        CHECK(out[i] == want, "reduce_scatter_block [%d] = %d, want %d", i, out[i], want);
    }
    /* Reduce_scatter: the same total, rank 0 takes one more and the last one less. */
    int *rcounts = ints(lsize, rcount);
    if (lsize > 1) {
        rcounts[0]++;
        rcounts[lsize - 1]--;
    }
    int at = 0;
    for (int i = 0; i < rank; i++)
        at += rcounts[i];
    for (int i = 0; i < rcount; i++)
        out[i] = SENTINEL;
    int *out2 = ints(rcount + 1, SENTINEL);
    RUN(MPI_Reduce_scatter(in, out2, rcounts, MPI_INT, MPI_SUM, inter),
        MPI_Ireduce_scatter(in, out2, rcounts, MPI_INT, MPI_SUM, inter, &q_));
    for (int i = 0; i <= rcount; i++) {
        int want = 0;
        for (int j = 0; j < rsize; j++)
            want += val(theirs, j, at + i);
        CHECK(out2[i] == (i < rcounts[rank] ? want : SENTINEL), "reduce_scatter [%d] = %d, want %d", i, out2[i], want);
    }
    free(r); free(counts); free(displs); free(rv); free(sa); free(ra); free(sc); free(sd); free(rc); free(rd);
    free(sb); free(rb); free(types); free(sdb); free(rdb); free(in); free(out); free(rcounts); free(out2);
}

int main(int argc, char **argv)
{
    TEST_INIT(&argc, &argv);
    int b = np / 2, a = np - b, in_a = me < a;
    MPI_Comm local;
    CALL(MPI_Comm_split(MPI_COMM_WORLD, in_a, me, &local));
    CALL(MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, in_a ? a : 0, 5, &inter));
    CALL(MPI_Comm_size(inter, &lsize));
    CALL(MPI_Comm_remote_size(inter, &rsize));
    CALL(MPI_Comm_rank(inter, &rank));
    mine = in_a ? 1 : 2;
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    int len;
    CALL(MPI_Get_library_version(lib, &len));
    mpich_ibcast_bug = strncmp(lib, "MPICH Version:", 14) == 0 && strstr(lib, "Version:\t4.0") != NULL;
    theirs = 3 - mine;
    for (nb = 0; nb < 2; nb++) {
        for (int g = 1; g <= 2; g++) {
            int gsize = g == 1 ? a : b;
            for (int root = 0; root < gsize; root++)
                bcast_gather_scatter(g, root);
        }
        everyone();
    }
    /* A non-blocking collective on the intercommunicator overlaps one on the local group
     * and point-to-point traffic on the intercommunicator: none takes the others' data. */
    int x = me, lsum = -1, p = -1, isum = -1;
    MPI_Request q[4];
    CALL(MPI_Ibcast(&x, 1, MPI_INT, mine == 1 ? (rank == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0, inter, &q[0]));
    CALL(MPI_Iallreduce(&me, &lsum, 1, MPI_INT, MPI_SUM, local, &q[1]));
    CALL(MPI_Iallreduce(&me, &isum, 1, MPI_INT, MPI_SUM, inter, &q[2]));
    CALL(MPI_Ibarrier(inter, &q[3]));
    if (rank == 0)
        CALL(MPI_Sendrecv(&me, 1, MPI_INT, 0, 0, &p, 1, MPI_INT, 0, 0, inter, MPI_STATUS_IGNORE));
    MPI_Status sts[4];
    CALL(MPI_Waitall(4, q, sts));
    int want = 0;
    for (int w = in_a ? 0 : a; w < (in_a ? a : np); w++)
        want += w;
    CHECK(lsum == want, "local allreduce %d, want %d", lsum, want);
    CHECK(isum == np * (np - 1) / 2 - want, "overlapped allreduce %d", isum);
    CHECK(mine == 1 || x == 0, "ibcast from group A's rank 0 gave %d", x);
    CHECK(rank != 0 || p == (in_a ? a : 0), "sendrecv between leaders got %d", p);
    CALL(MPI_Comm_free(&inter));
    CALL(MPI_Comm_free(&local));
    CALL(MPI_Finalize());
    finalized = 1;
    if (me == 0)
        printf("intercomm_coll: ok\n");
    return 0;
}

/* ranks: 1 2 3 4 5 8 */
/* mpich: skip MPICH 4.0.2 computes MPI_MAX on MPI_UNSIGNED as on signed ints (0xffffffff max 1 gives 1) */
/*
 * A communicator keeps finished collective calls to run them again when a call of the same
 * shape comes (algorithm, block, root, in place, reduction). Calls that differ in any of
 * those, made in turns, must each get their own results:
 *   1. One shape many times over, with new data each time.
 *   2. Allreduce alternating count, operation (SUM, MAX, PROD), datatype of the same size
 *      (MAX on MPI_INT and on MPI_UNSIGNED give other bits for negative values), in place
 *      and not.
 *   3. Reduce and Bcast alternating the root; Bcast of a vector type with gaps beside a
 *      contiguous one of the same bytes.
 *   4. More shapes in turn than a communicator keeps (every one evicts another).
 *   5. The same calls on a duplicate and on a communicator in reversed rank order, in
 *      turns with the world's; then those freed and made again (a handle may come back):
 *      nothing kept for a freed communicator runs for the new one.
 *   6. Non-blocking and blocking calls of one shape interleaved, two of them in flight at
 *      once, and persistent starts among them.
 *   7. Gather, scatter, allgather, alltoall, scan, exscan and barrier in turns.
 */
#define TEST_NAME "coll_cache"
#include "testutil.h"
#include <limits.h>

/* Rank q's element i in round k: small, and of both signs, so that no sum or product
 * overflows and MAX differs from SUM. */
static int value(int q, int n, int k, int i, MPI_Op op)
{
    if (op == MPI_PROD)
        return (q + k + i) % 2 ? -1 : 2 - (q % 2);
    return (q + 1) * (k + i + 1) - 3 * n;
}

/* Allreduce of `count` ints on `c` (rank `r` of `n`), operation `op`, round `k`. */
static void allreduce_int(MPI_Comm c, int r, int n, int count, MPI_Op op, int k, int in_place)
{
    int in[4], out[4], want[4];
    for (int i = 0; i < count; i++) {
        in[i] = value(r, n, k, i, op);
        out[i] = -7;
        want[i] = op == MPI_MAX ? INT_MIN : op == MPI_PROD ? 1 : 0;
        for (int q = 0; q < n; q++) {
            int v = value(q, n, k, i, op);
            want[i] = op == MPI_MAX ? (v > want[i] ? v : want[i]) : op == MPI_PROD ? want[i] * v : want[i] + v;
        }
    }
    if (in_place) {
        memcpy(out, in, sizeof in);
        CALL(MPI_Allreduce(MPI_IN_PLACE, out, count, MPI_INT, op, c));
    } else {
        CALL(MPI_Allreduce(in, out, count, MPI_INT, op, c));
    }
    for (int i = 0; i < count; i++)
        CHECK(out[i] == want[i], "allreduce count %d op %s round %d%s: [%d] %d, want %d", count,
              op == MPI_MAX ? "MAX" : op == MPI_PROD ? "PROD" : "SUM", k, in_place ? " in place" : "",
              i, out[i], want[i]);
}

/* MAX over MPI_UNSIGNED of the same bits as allreduce_int's MAX: -1 is the largest. */
static void allreduce_unsigned_max(MPI_Comm c, int r, int k)
{
    unsigned in = r == 0 ? 0xffffffffu : (unsigned)(r + k), out = 0;
    CALL(MPI_Allreduce(&in, &out, 1, MPI_UNSIGNED, MPI_MAX, c));
    CHECK(out == 0xffffffffu, "unsigned max round %d: %#x", k, out);
    int sin = r == 0 ? -1 : r + k, sout = 0, n;
    MPI_Comm_size(c, &n);
    CALL(MPI_Allreduce(&sin, &sout, 1, MPI_INT, MPI_MAX, c));
    CHECK(sout == (n == 1 ? -1 : n - 1 + k), "int max round %d: %d", k, sout);
}

static void reduce_bcast(MPI_Comm c, int r, int n, int root, int k)
{
    double in = r + k, out = -1;
    CALL(MPI_Reduce(&in, &out, 1, MPI_DOUBLE, MPI_SUM, root, c));
    if (r == root)
        CHECK(out == (double)n * k + (double)n * (n - 1) / 2, "reduce root %d round %d: %g", root, k, out);
    long v[2] = {r == root ? 1000L * k + root : -1, r == root ? -k : 0};
    CALL(MPI_Bcast(v, 2, MPI_LONG, root, c));
    CHECK(v[0] == 1000L * k + root && v[1] == -k, "bcast root %d round %d: %ld %ld", root, k, v[0], v[1]);
}

/* Two ints with a gap of one (a vector type) beside two contiguous doubles' bytes. */
static void bcast_layouts(MPI_Comm c, int r, int k)
{
    MPI_Datatype vec;
    CALL(MPI_Type_vector(2, 1, 2, MPI_INT, &vec));
    CALL(MPI_Type_commit(&vec));
    int a[3] = {r == 0 ? k : -1, 77, r == 0 ? -k : -1};
    CALL(MPI_Bcast(a, 1, vec, 0, c));
    CHECK(a[0] == k && a[1] == 77 && a[2] == -k, "vector bcast round %d: %d %d %d", k, a[0], a[1], a[2]);
    int b[2] = {r == 0 ? 2 * k : -1, r == 0 ? 3 * k : -1};
    CALL(MPI_Bcast(b, 2, MPI_INT, 0, c));
    CHECK(b[0] == 2 * k && b[1] == 3 * k, "contiguous bcast round %d: %d %d", k, b[0], b[1]);
    CALL(MPI_Type_free(&vec));
}

/* Everything of 2 and 3 on communicator `c`. */
static void mixed(MPI_Comm c, int rounds)
{
    int r, n;
    MPI_Comm_rank(c, &r);
    MPI_Comm_size(c, &n);
    for (int k = 0; k < rounds; k++) {
        allreduce_int(c, r, n, 1, MPI_SUM, k, 0);
        allreduce_int(c, r, n, 2, MPI_SUM, k, 0);
        allreduce_int(c, r, n, 2, MPI_MAX, k, 0);
        allreduce_int(c, r, n, 1, MPI_PROD, k, 1);
        allreduce_int(c, r, n, 1, MPI_SUM, k, 1);
        allreduce_unsigned_max(c, r, k);
        reduce_bcast(c, r, n, 0, k);
        reduce_bcast(c, r, n, n - 1, k);
        bcast_layouts(c, r, k);
    }
}

static void movers(MPI_Comm c, int k)
{
    int r, n;
    MPI_Comm_rank(c, &r);
    MPI_Comm_size(c, &n);
    int *all = xmalloc(sizeof(int) * 2 * n), *back = xmalloc(sizeof(int) * 2 * n);
    int mine = 100 * r + k, got = -1;
    for (int root = 0; root < n; root += n > 1 ? n - 1 : 1) {
        CALL(MPI_Gather(&mine, 1, MPI_INT, all, 1, MPI_INT, root, c));
        if (r == root)
            for (int q = 0; q < n; q++)
                CHECK(all[q] == 100 * q + k, "gather root %d round %d: [%d] %d", root, k, q, all[q]);
        for (int q = 0; q < n; q++)
            all[q] = 7 * q + k + root;
        CALL(MPI_Scatter(all, 1, MPI_INT, &got, 1, MPI_INT, root, c));
        CHECK(got == 7 * r + k + root, "scatter root %d round %d: %d", root, k, got);
        if (n == 1)
            break;
    }
    CALL(MPI_Allgather(&mine, 1, MPI_INT, all, 1, MPI_INT, c));
    for (int q = 0; q < n; q++)
        CHECK(all[q] == 100 * q + k, "allgather round %d: [%d] %d", k, q, all[q]);
    for (int q = 0; q < 2 * n; q++)
        all[q] = 1000 * r + 10 * q + k;
    CALL(MPI_Alltoall(all, 2, MPI_INT, back, 2, MPI_INT, c));
    for (int q = 0; q < n; q++)
        for (int j = 0; j < 2; j++)
            CHECK(back[2 * q + j] == 1000 * q + 10 * (2 * r + j) + k, "alltoall round %d: [%d]", k, 2 * q + j);
    int s = -1;
    CALL(MPI_Scan(&mine, &s, 1, MPI_INT, MPI_SUM, c));
    CHECK(s == 100 * r * (r + 1) / 2 + (r + 1) * k, "scan round %d: %d", k, s);
    s = -5;
    CALL(MPI_Exscan(&mine, &s, 1, MPI_INT, MPI_SUM, c));
    if (r > 0)
        CHECK(s == 100 * r * (r - 1) / 2 + r * k, "exscan round %d: %d", k, s);
    CALL(MPI_Barrier(c));
    free(all);
    free(back);
}

int main(int argc, char **argv)
{
    TEST_INIT(&argc, &argv);
    MPI_Comm w = MPI_COMM_WORLD;

    /* 1. One shape, many times. */
    for (int k = 0; k < 200; k++)
        allreduce_int(w, me, np, 1, MPI_SUM, k, 0);

    /* 2, 3. */
    mixed(w, 6);

    /* 4. Twelve counts in turn, more shapes than a communicator keeps. */
    for (int k = 0; k < 3; k++)
        for (int count = 1; count <= 12; count++) {
            double in[12], out[12];
            for (int i = 0; i < count; i++)
                in[i] = me * 100 + i + k;
            CALL(MPI_Allreduce(in, out, count, MPI_DOUBLE, MPI_SUM, w));
            for (int i = 0; i < count; i++)
                CHECK(out[i] == 100.0 * np * (np - 1) / 2 + (double)np * (i + k),
                      "count %d round %d: [%d] %g", count, k, i, out[i]);
        }

    /* 5. Other communicators in turns with the world, then freed and made again. */
    for (int again = 0; again < 3; again++) {
        MPI_Comm dup, rev;
        CALL(MPI_Comm_dup(w, &dup));
        CALL(MPI_Comm_split(w, 0, np - me, &rev));
        for (int k = 0; k < 3; k++) {
            mixed(dup, 1);
            mixed(rev, 1);
            mixed(w, 1);
            movers(rev, k);
            movers(w, k);
        }
        CALL(MPI_Comm_free(&dup));
        CALL(MPI_Comm_free(&rev));
        /* A new communicator of other ranks (the odd ones and the even ones) may get a freed
         * handle back. */
        MPI_Comm half;
        CALL(MPI_Comm_split(w, me % 2, -me, &half));
        mixed(half, 2);
        movers(half, again);
        CALL(MPI_Comm_free(&half));
    }

    /* 6. Non-blocking and blocking calls of one shape interleaved; persistent starts. */
    {
        MPI_Request rq[3];
        MPI_Status st[3];
        int a = me + 1, b = 2 * me, c = -1, d = -1, e = -1, f = -1, g = 3 * me;
        CALL(MPI_Allreduce_init(&g, &f, 1, MPI_INT, MPI_SUM, w, MPI_INFO_NULL, &rq[2]));
        for (int k = 0; k < 20; k++) {
            CALL(MPI_Iallreduce(&a, &c, 1, MPI_INT, MPI_SUM, w, &rq[0]));
            CALL(MPI_Allreduce(&b, &d, 1, MPI_INT, MPI_SUM, w));
            CALL(MPI_Iallreduce(&b, &e, 1, MPI_INT, MPI_SUM, w, &rq[1]));
            CALL(MPI_Start(&rq[2]));
            CALL(MPI_Waitall(3, rq, st));
            CHECK(c == np * (np + 1) / 2 + np * k, "iallreduce round %d: %d", k, c);
            CHECK(d == np * (np - 1) + 2 * np * k && e == d, "allreduce round %d: %d %d", k, d, e);
            CHECK(f == 3 * np * (np - 1) / 2 + 3 * np * k, "persistent allreduce round %d: %d", k, f);
            a++;
            b += 2;
            g += 3;
            c = d = e = f = -1;
            CALL(MPI_Allreduce(MPI_IN_PLACE, &a, 1, MPI_INT, MPI_MAX, w));
            CHECK(a == np + 1 + k, "in-place max round %d: %d", k, a);
            a = me + 2 + k;
        }
        CALL(MPI_Request_free(&rq[2]));
    }

    /* 7. */
    for (int k = 0; k < 5; k++)
        movers(w, k);

    CALL(MPI_Barrier(w));
    if (me == 0)
        printf("coll_cache: ok\n");
    MPI_Finalize();
    return 0;
}

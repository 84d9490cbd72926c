/* ranks: 1 2 3 4 8 */
/* env: FERRY_COLL_STATS=0 */
/* env: FERRY_BCAST_ALGORITHM=shm FERRY_REDUCE_ALGORITHM=shm FERRY_ALLREDUCE_ALGORITHM=shm FERRY_ALLGATHER_ALGORITHM=shm FERRY_BARRIER_ALGORITHM=shm */
/* env: FERRY_BCAST_ALGORITHM=binomial FERRY_REDUCE_ALGORITHM=binomial FERRY_ALLREDUCE_ALGORITHM=recursive_doubling FERRY_ALLGATHER_ALGORITHM=bruck FERRY_BARRIER_ALGORITHM=dissemination */
/* timeout: 120 */
/*
 * The small collectives that run through shared memory on one host (barrier, bcast, reduce,
 * allreduce, allgather), with the table's choice, forced to the shared-memory algorithms, and
 * forced to schedules (the same answers either way):
 *  - many calls in a row, mixed, roots moving, so that a fast rank runs ahead;
 *  - every predefined operation on several types (MAXLOC/MINLOC on pair types), in place
 *    and not, at the root and elsewhere;
 *  - sizes 0, 1, 4096 bytes (the slots' size) and 4100 (beyond them), a derived datatype on
 *    some ranks against a predefined one on others;
 *  - communicators that are parts of the world: split by parity, in reverse order, a group
 *    of the first half, duplicates made and freed over and over;
 *  - point-to-point messages and non-blocking collectives in flight on the same
 *    communicator meanwhile, one rank waiting for them inside a blocking barrier while the
 *    others wait for them before it.
 */
#include <string.h>

#define TEST_NAME "coll_shm"
#include "testutil.h"

static int sum_to(int n) { return n * (n - 1) / 2; }

/* Every collective once on `c`, call `k` of a run: answers checked. */
static void round_on(MPI_Comm c, int k)
{
    int n, r;
    MPI_Comm_size(c, &n);
    MPI_Comm_rank(c, &r);
    int root = (k * 3 + 1) % n;

    double x = r + k, s = -1;
    CALL(MPI_Allreduce(&x, &s, 1, MPI_DOUBLE, MPI_SUM, c));
    CHECK(s == sum_to(n) + (double)n * k, "call %d: allreduce %g", k, s);

    long b[3] = { -1, -1, -1 };
    if (r == root)
        b[0] = k, b[1] = 2 * k, b[2] = 3 * k;
    CALL(MPI_Bcast(b, 3, MPI_LONG, root, c));
    CHECK(b[0] == k && b[1] == 2 * k && b[2] == 3 * k, "call %d: bcast from %d gave %ld", k, root, b[0]);

    int in = r * k, out = -7;
    CALL(MPI_Reduce(&in, &out, 1, MPI_INT, MPI_MAX, root, c));
    CHECK(r != root || out == (n - 1) * k, "call %d: reduce max %d", k, out);
    CHECK(r == root || out == -7, "call %d: a rank other than the root got %d", k, out);

    int mine[2] = { r, k }, all[2 * 64];
    CALL(MPI_Allgather(mine, 2, MPI_INT, all, 2, MPI_INT, c));
    for (int q = 0; q < n; q++)
        CHECK(all[2 * q] == q && all[2 * q + 1] == k, "call %d: allgather block %d", k, q);
    if (k % 5 == 0)
        CALL(MPI_Barrier(c));
}

static MPI_Op ops[] = { MPI_MAX, MPI_MIN, MPI_SUM, MPI_PROD, MPI_LAND, MPI_BAND, MPI_LOR, MPI_BOR, MPI_LXOR, MPI_BXOR };

static long long apply(MPI_Op op, long long a, long long b)
{
    if (op == MPI_MAX) return a > b ? a : b;
    if (op == MPI_MIN) return a < b ? a : b;
    if (op == MPI_SUM) return a + b;
    if (op == MPI_PROD) return a * b;
    if (op == MPI_LAND) return (a && b);
    if (op == MPI_BAND) return a & b;
    if (op == MPI_LOR) return (a || b);
    if (op == MPI_BOR) return a | b;
    if (op == MPI_LXOR) return (!a != !b);
    return a ^ b;
}

/* Every operation on int, long long, unsigned char (and the arithmetic ones on double). */
static void operations(MPI_Comm c)
{
    int n, r;
    MPI_Comm_size(c, &n);
    MPI_Comm_rank(c, &r);
    for (size_t o = 0; o < sizeof ops / sizeof ops[0]; o++) {
        MPI_Op op = ops[o];
        for (int in_place = 0; in_place < 2; in_place++) {
            int root = (int)(o % (size_t)n);
            int vi[4], ri[4];
            long long vl[4], rl[4], want[4];
            unsigned char vc[4], rc[4];
            for (int e = 0; e < 4; e++) {
                vl[e] = (r + 1) * (e + 2) % 7 + (e == 3 && r == 1);
                vi[e] = (int)vl[e];
                vc[e] = (unsigned char)vl[e];
                want[e] = 0;
                for (int q = 0; q < n; q++) {
                    long long v = (q + 1) * (e + 2) % 7 + (e == 3 && q == 1);
                    want[e] = q == 0 ? v : apply(op, want[e], v);
                }
            }
            memcpy(ri, vi, sizeof vi);
            memcpy(rl, vl, sizeof vl);
            memcpy(rc, vc, sizeof vc);
            CALL(MPI_Allreduce(in_place ? MPI_IN_PLACE : vi, ri, 4, MPI_INT, op, c));
            CALL(MPI_Allreduce(in_place ? MPI_IN_PLACE : vl, rl, 4, MPI_LONG_LONG, op, c));
            for (int e = 0; e < 4; e++)
                CHECK(ri[e] == (int)want[e] && rl[e] == want[e], "op %zu in_place %d elem %d: %d %lld want %lld", o, in_place, e, ri[e], rl[e], want[e]);
            if (op == MPI_BAND || op == MPI_BOR || op == MPI_BXOR || op == MPI_MAX || op == MPI_MIN || op == MPI_SUM) {
                int at_root = r == root;
                CALL(MPI_Reduce(in_place && at_root ? MPI_IN_PLACE : vc, rc, 4, MPI_UNSIGNED_CHAR, op, root, c));
                for (int e = 0; e < 4 && at_root; e++)
                    CHECK(rc[e] == (unsigned char)want[e], "op %zu reduce uchar elem %d: %d", o, e, rc[e]);
            }
            if (op == MPI_MAX || op == MPI_MIN || op == MPI_SUM || op == MPI_PROD) {
                double d = r + 0.5, dr = d, dw = 0.5;
                for (int q = 1; q < n; q++)
                    dw = op == MPI_MAX ? q + 0.5 : op == MPI_MIN ? 0.5 : op == MPI_SUM ? dw + q + 0.5 : dw * (q + 0.5);
                CALL(MPI_Allreduce(in_place ? MPI_IN_PLACE : &d, &dr, 1, MPI_DOUBLE, op, c));
                CHECK(dr == dw, "op %zu double: %g want %g", o, dr, dw);
            }
        }
    }
    /* MAXLOC and MINLOC on value-and-index pairs. */
    struct { double v; int i; } p = { (double)((r * 5) % n), r }, pr;
    CALL(MPI_Allreduce(&p, &pr, 1, MPI_DOUBLE_INT, MPI_MAXLOC, c));
    int best = 0;
    for (int q = 0; q < n; q++)
        if ((q * 5) % n > (best * 5) % n)
            best = q;
    CHECK(pr.v == (double)((best * 5) % n) && pr.i == best, "maxloc (%g, %d)", pr.v, pr.i);
    int two[2] = { r % 2, r }, tr[2] = { -1, -1 };
    CALL(MPI_Reduce(two, tr, 1, MPI_2INT, MPI_MINLOC, n - 1, c));
    CHECK(r != n - 1 || (tr[0] == 0 && tr[1] == 0), "minloc (%d, %d)", tr[0], tr[1]);
}

/* Sizes at and beyond the slots, empty calls, and datatypes that differ between ranks. */
static void sizes(MPI_Comm c)
{
    int n, r;
    MPI_Comm_size(c, &n);
    MPI_Comm_rank(c, &r);
    for (int bytes = 0; bytes <= 4100; bytes += bytes < 4 ? 1 : bytes == 4 ? 4092 : 4) {
        int count = bytes / 4;
        int *b = xmalloc((size_t)(count + 1) * sizeof(int));
        for (int i = 0; i <= count; i++)
            b[i] = r == n - 1 || i == count ? i * 3 + 1 : -1;
        CALL(MPI_Bcast(b, count, MPI_INT, n - 1, c));
        for (int i = 0; i <= count; i++)
            CHECK(b[i] == (i == count && r != n - 1 ? i * 3 + 1 : i * 3 + 1), "bcast of %d ints: int %d is %d", count, i, b[i]);
        int *s = xmalloc((size_t)(count + 1) * sizeof(int)), *all = xmalloc((size_t)(n * count + 1) * sizeof(int));
        for (int i = 0; i < count; i++)
            s[i] = r + i;
        CALL(MPI_Allreduce(MPI_IN_PLACE, s, count, MPI_INT, MPI_SUM, c));
        for (int i = 0; i < count; i++)
            CHECK(s[i] == sum_to(n) + n * i, "allreduce of %d ints: int %d is %d", count, i, s[i]);
        for (int i = 0; i < count; i++)
            all[r * count + i] = r * 1000 + i;
        CALL(MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, all, count, MPI_INT, c));
        for (int i = 0; i < n * count; i++)
            CHECK(all[i] == (i / count) * 1000 + i % count, "allgather of %d ints: int %d is %d", count, i, all[i]);
        free(b);
        free(s);
        free(all);
    }
    /* Two ints as one element of a derived type on even ranks, as two MPI_INTs elsewhere. */
    MPI_Datatype pair;
    CALL(MPI_Type_contiguous(2, MPI_INT, &pair));
    CALL(MPI_Type_commit(&pair));
    int v[2] = { -1, -1 };
    if (r == 0)
        v[0] = 11, v[1] = 22;
    if (r % 2 == 0)
        CALL(MPI_Bcast(v, 1, pair, 0, c));
    else
        CALL(MPI_Bcast(v, 2, MPI_INT, 0, c));
    CHECK(v[0] == 11 && v[1] == 22, "bcast of a derived pair: %d %d", v[0], v[1]);
    CALL(MPI_Type_free(&pair));
}

/* Traffic in flight meanwhile: ring messages, and a non-blocking allreduce that rank 0 waits
 * for only after a blocking barrier that the others enter only once it is complete. */
static void interleaved(MPI_Comm c)
{
    int n, r;
    MPI_Comm_size(c, &n);
    MPI_Comm_rank(c, &r);
    for (int k = 0; k < 20; k++) {
        int right = (r + 1) % n, left = (r + n - 1) % n, got = -1, sent = r * 100 + k;
        MPI_Request q[3];
        CALL(MPI_Irecv(&got, 1, MPI_INT, left, k, c, &q[0]));
        CALL(MPI_Isend(&sent, 1, MPI_INT, right, k, c, &q[1]));
        int nb = r + k, nbs = -1;
        CALL(MPI_Iallreduce(&nb, &nbs, 1, MPI_INT, MPI_SUM, c, &q[2]));
        double x = 1, s = 0;
        CALL(MPI_Allreduce(&x, &s, 1, MPI_DOUBLE, MPI_SUM, c));
        CHECK(s == n, "allreduce amid traffic: %g", s);
        if (r == 0) {
            CALL(MPI_Barrier(c));
            CALL(MPI_Waitall(3, q, statuses_ignore()));
        } else {
            CALL(MPI_Waitall(3, q, statuses_ignore()));
            CALL(MPI_Barrier(c));
        }
        CHECK(got == left * 100 + k, "ring message %d", got);
        CHECK(nbs == sum_to(n) + n * k, "iallreduce %d", nbs);
    }
}

static void everything(MPI_Comm c, int calls)
{
    for (int k = 0; k < calls; k++)
        round_on(c, k);
    operations(c);
    sizes(c);
    interleaved(c);
}

int main(int argc, char **argv)
{
    TEST_INIT(&argc, &argv);
    everything(MPI_COMM_WORLD, 500);

    MPI_Comm parity, reversed, half, dup;
    CALL(MPI_Comm_split(MPI_COMM_WORLD, me % 2, me, &parity));
    CALL(MPI_Comm_split(MPI_COMM_WORLD, 0, np - me, &reversed));
    MPI_Group world, first;
    CALL(MPI_Comm_group(MPI_COMM_WORLD, &world));
    int range[1][3] = { { 0, (np - 1) / 2, 1 } };
    CALL(MPI_Group_range_incl(world, 1, range, &first));
    CALL(MPI_Comm_create(MPI_COMM_WORLD, first, &half));
    everything(parity, 200);
    everything(reversed, 200);
    if (half != MPI_COMM_NULL) {
        everything(half, 200);
        CALL(MPI_Comm_free(&half));
    }
    /* Calls on two communicators alternately, then duplicates made and freed over and over. */
    for (int k = 0; k < 100; k++) {
        round_on(parity, k);
        round_on(MPI_COMM_WORLD, k);
    }
    for (int k = 0; k < 50; k++) {
        CALL(MPI_Comm_dup(k % 2 ? parity : MPI_COMM_WORLD, &dup));
        round_on(dup, k);
        CALL(MPI_Comm_free(&dup));
    }
    CALL(MPI_Comm_free(&parity));
    CALL(MPI_Comm_free(&reversed));
    CALL(MPI_Group_free(&first));
    CALL(MPI_Group_free(&world));
    CALL(MPI_Barrier(MPI_COMM_WORLD));
    finalized = 1;
    CALL(MPI_Finalize());
    return 0;
}

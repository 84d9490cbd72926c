/* ranks: 1 2 3 4 5 8 */
/* env: FERRY_COLL_STATS=0 */
/* env: FERRY_GATHER_ALGORITHM=shm FERRY_SCATTER_ALGORITHM=shm FERRY_ALLTOALL_ALGORITHM=shm FERRY_BCAST_ALGORITHM=shm */
/* env: FERRY_GATHER_ALGORITHM=binomial FERRY_SCATTER_ALGORITHM=binomial FERRY_ALLTOALL_ALGORITHM=bruck FERRY_BCAST_ALGORITHM=binomial */
/* timeout: 120 */
/*
 * Gather, scatter and alltoall, which run through shared memory on one host for small
 * blocks, with the table's choice, forced to the shared-memory algorithms, and forced to
 * schedules (the same answers either way):
 *  - many calls in a row, mixed with broadcasts, roots moving, so that a fast rank runs
 *    ahead (a scatter's root writes the other ranks' slots);
 *  - MPI_IN_PLACE at the gather's and the scatter's root and in the alltoall;
 *  - blocks of 0, 1, 4096 bytes (a slot) and 4100 (beyond); alltoalls whose p blocks fill
 *    a slot exactly and overflow it by one int;
 *  - non-contiguous datatypes (a vector of every other int) on one side, contiguous on the
 *    other; a derived pair on some ranks against two MPI_INTs on others;
 *  - communicators that are parts of the world: split by parity, in reverse order.
 */
#include <string.h>

#define TEST_NAME "coll_shm_blocks"
#include "testutil.h"

#define MAXP 64

static int val(int from, int to, int k, int i) { return from * 1000003 + to * 10007 + k * 101 + i; }

/* Call `k` of a run on `c`: a gather, a scatter, an alltoall and a broadcast. */
static void round_on(MPI_Comm c, int k)
{
    int n, r;
    MPI_Comm_size(c, &n);
    MPI_Comm_rank(c, &r);
    int root = (k * 3 + 1) % n, count = 1 + k % 3;
    int in = r == root && k % 4 == 1; /* in place at the root, now and then */

    int mine[3], all[3 * MAXP];
    for (int i = 0; i < 3 * MAXP; i++)
        all[i] = -1;
    for (int i = 0; i < count; i++)
        mine[i] = val(r, root, k, i);
    if (in)
        memcpy(all + r * count, mine, (size_t)count * sizeof(int));
    CALL(MPI_Gather(in ? MPI_IN_PLACE : mine, count, MPI_INT, all, count, MPI_INT, root, c));
    for (int q = 0; q < n && r == root; q++)
        for (int i = 0; i < count; i++)
            CHECK(all[q * count + i] == val(q, root, k, i), "call %d: gather to %d, block %d int %d is %d", k, root, q, i, all[q * count + i]);
    CHECK(r == root || all[0] == -1, "call %d: a rank other than the root got %d", k, all[0]);

    int sroot = (k * 5 + 2) % n, got[3] = { -1, -1, -1 };
    in = r == sroot && k % 4 == 2;
    for (int q = 0; q < n && r == sroot; q++)
        for (int i = 0; i < count; i++)
            all[q * count + i] = val(sroot, q, k, i);
    CALL(MPI_Scatter(all, count, MPI_INT, in ? MPI_IN_PLACE : got, count, MPI_INT, sroot, c));
    for (int i = 0; i < count && !in; i++)
        CHECK(got[i] == val(sroot, r, k, i), "call %d: scatter from %d, int %d is %d", k, sroot, i, got[i]);
    CHECK(!in || all[r * count] == val(sroot, r, k, 0), "call %d: in place, the root's block moved", k);

    int out[3 * MAXP], back[3 * MAXP];
    in = k % 4 == 3;
    for (int q = 0; q < n; q++)
        for (int i = 0; i < count; i++) {
            out[q * count + i] = val(r, q, k, i);
            back[q * count + i] = in ? out[q * count + i] : -1;
        }
    CALL(MPI_Alltoall(in ? MPI_IN_PLACE : out, count, MPI_INT, back, count, MPI_INT, c));
    for (int q = 0; q < n; q++)
        for (int i = 0; i < count; i++)
            CHECK(back[q * count + i] == val(q, r, k, i), "call %d: alltoall in place %d, from %d int %d is %d", k, in, q, i, back[q * count + i]);

    long b = r == root ? k : -1;
    CALL(MPI_Bcast(&b, 1, MPI_LONG, root, c));
    CHECK(b == k, "call %d: bcast %ld", k, b);
}

/* Blocks of `count` ints at the limits of the slots. */
static void sized(MPI_Comm c, int count, int k)
{
    int n, r;
    MPI_Comm_size(c, &n);
    MPI_Comm_rank(c, &r);
    int root = n - 1 - k % n;
    int *mine = xmalloc((size_t)(count + 1) * sizeof(int)), *all = xmalloc((size_t)(n * count + 1) * sizeof(int));
    for (int i = 0; i < count; i++)
        mine[i] = val(r, root, k, i);
    for (int i = 0; i < n * count + 1; i++)
        all[i] = -1;
    int in = r == root && k % 2;
    if (in)
        memcpy(all + r * count, mine, (size_t)count * sizeof(int));
    CALL(MPI_Gather(in ? MPI_IN_PLACE : mine, count, MPI_INT, all, count, MPI_INT, root, c));
    for (int i = 0; i < n * count && r == root; i++)
        CHECK(all[i] == val(i / count, root, k, i % count), "gather of %d ints: int %d is %d", count, i, all[i]);
    CHECK(r != root || all[n * count] == -1, "gather of %d ints wrote past the blocks", count);

    for (int i = 0; i < n * count; i++)
        all[i] = r == root ? val(root, i / count, k, i % count) : -1;
    mine[count] = -5;
    CALL(MPI_Scatter(all, count, MPI_INT, in ? MPI_IN_PLACE : mine, count, MPI_INT, root, c));
    for (int i = 0; i < count && !in; i++)
        CHECK(mine[i] == val(root, r, k, i), "scatter of %d ints: int %d is %d", count, i, mine[i]);
    CHECK(mine[count] == -5, "scatter of %d ints wrote past the block", count);
    free(mine);
    free(all);
}

/* Alltoalls of `count` ints per block. */
static void alltoall_sized(MPI_Comm c, int count, int k)
{
    int n, r;
    MPI_Comm_size(c, &n);
    MPI_Comm_rank(c, &r);
    int *out = xmalloc((size_t)(n * count + 1) * sizeof(int)), *back = xmalloc((size_t)(n * count + 1) * sizeof(int));
    int in = k % 2;
    for (int i = 0; i < n * count; i++) {
        out[i] = val(r, i / count, k, i % count);
        back[i] = in ? out[i] : -1;
    }
    back[n * count] = -5;
    CALL(MPI_Alltoall(in ? MPI_IN_PLACE : out, count, MPI_INT, back, count, MPI_INT, c));
    for (int i = 0; i < n * count; i++)
        CHECK(back[i] == val(i / count, r, k, i % count), "alltoall of %d ints (in place %d): int %d is %d", count, in, i, back[i]);
    CHECK(back[n * count] == -5, "alltoall of %d ints wrote past the blocks", count);
    free(out);
    free(back);
}

/* Non-contiguous and differing datatypes. */
static void datatypes(MPI_Comm c, int k)
{
    int n, r;
    MPI_Comm_size(c, &n);
    MPI_Comm_rank(c, &r);
    int root = k % n;
    MPI_Datatype every_other, pair;
    CALL(MPI_Type_vector(3, 1, 2, MPI_INT, &every_other));
    CALL(MPI_Type_commit(&every_other));
    CALL(MPI_Type_contiguous(2, MPI_INT, &pair));
    CALL(MPI_Type_commit(&pair));

    /* Gather: every other int of a 6-int buffer, into 3 contiguous ints per rank. */
    int strided[6], all[6 * MAXP];
    for (int i = 0; i < 6; i++)
        strided[i] = i % 2 ? -9 : val(r, root, k, i / 2);
    for (int i = 0; i < 6 * MAXP; i++)
        all[i] = -1;
    CALL(MPI_Gather(strided, 1, every_other, all, 3, MPI_INT, root, c));
    for (int i = 0; i < 3 * n && r == root; i++)
        CHECK(all[i] == val(i / 3, root, k, i % 3), "gather of a vector: int %d is %d", i, all[i]);

    /* Scatter: 3 contiguous ints per rank, into every other int. */
    for (int i = 0; i < 3 * n; i++)
        all[i] = r == root ? val(root, i / 3, k, i % 3) : -1;
    for (int i = 0; i < 6; i++)
        strided[i] = -9;
    CALL(MPI_Scatter(all, 3, MPI_INT, strided, 1, every_other, root, c));
    for (int i = 0; i < 6; i++)
        CHECK(strided[i] == (i % 2 ? -9 : val(root, r, k, i / 2)), "scatter into a vector: int %d is %d", i, strided[i]);

    /* Alltoall: vectors out (a resized vector steps one block per rank), ints in. */
    MPI_Datatype spaced;
    CALL(MPI_Type_create_resized(every_other, 0, 6 * (MPI_Aint)sizeof(int), &spaced));
    CALL(MPI_Type_commit(&spaced));
    int out[6 * MAXP], back[3 * MAXP];
    for (int q = 0; q < n; q++)
        for (int i = 0; i < 6; i++)
            out[q * 6 + i] = i % 2 ? -9 : val(r, q, k, i / 2);
    for (int i = 0; i < 3 * n; i++)
        back[i] = -1;
    CALL(MPI_Alltoall(out, 1, spaced, back, 3, MPI_INT, c));
    for (int i = 0; i < 3 * n; i++)
        CHECK(back[i] == val(i / 3, r, k, i % 3), "alltoall of vectors: int %d is %d", i, back[i]);

    /* A pair on even ranks, two ints on odd ones, at both ends of a gather and a scatter. */
    int two[2] = { val(r, 0, k, 0), val(r, 0, k, 1) }, pairs[2 * MAXP];
    if (r % 2 == 0)
        CALL(MPI_Gather(two, 1, pair, pairs, 1, pair, root, c));
    else
        CALL(MPI_Gather(two, 2, MPI_INT, pairs, 2, MPI_INT, root, c));
    for (int i = 0; i < 2 * n && r == root; i++)
        CHECK(pairs[i] == val(i / 2, 0, k, i % 2), "gather of pairs: int %d is %d", i, pairs[i]);
    two[0] = two[1] = -1;
    if (r % 2 == 0)
        CALL(MPI_Scatter(pairs, 1, pair, two, 1, pair, root, c));
    else
        CALL(MPI_Scatter(pairs, 2, MPI_INT, two, 2, MPI_INT, root, c));
    CHECK(two[0] == val(r, 0, k, 0) && two[1] == val(r, 0, k, 1), "scatter of pairs: %d %d", two[0], two[1]);

    CALL(MPI_Type_free(&spaced));
    CALL(MPI_Type_free(&every_other));
    CALL(MPI_Type_free(&pair));
}

static void everything(MPI_Comm c, int calls)
{
    int n;
    MPI_Comm_size(c, &n);
    for (int k = 0; k < calls; k++)
        round_on(c, k);
    int counts[] = { 0, 1, 1024, 1025 }; /* 0, 4, 4096 and 4100 bytes */
    for (int k = 0; k < 4; k++)
        for (size_t s = 0; s < sizeof counts / sizeof counts[0]; s++)
            sized(c, counts[s], k);
    /* p blocks that fill a slot, and one int more each. */
    int fill = 1024 / n;
    for (int k = 0; k < 4; k++) {
        alltoall_sized(c, 0, k);
        alltoall_sized(c, fill, k);
        alltoall_sized(c, fill + 1, k);
    }
    for (int k = 0; k < 6; k++)
        datatypes(c, k);
}

int main(int argc, char **argv)
{
    TEST_INIT(&argc, &argv);
    everything(MPI_COMM_WORLD, 300);
    MPI_Comm parity, reversed;
    CALL(MPI_Comm_split(MPI_COMM_WORLD, me % 2, me, &parity));
    CALL(MPI_Comm_split(MPI_COMM_WORLD, 0, np - me, &reversed));
    everything(parity, 100);
    everything(reversed, 100);
    for (int k = 0; k < 100; k++) {
        round_on(parity, k);
        round_on(MPI_COMM_WORLD, k);
    }
    CALL(MPI_Comm_free(&parity));
    CALL(MPI_Comm_free(&reversed));
    CALL(MPI_Barrier(MPI_COMM_WORLD));
    finalized = 1;
    CALL(MPI_Finalize());
    return 0;
}

/* ranks: 1 2 3 4 5 7 8 */
/*
 * The rooted data movers: MPI_Gather, MPI_Gatherv, MPI_Scatter and
 * MPI_Scatterv, at roots 0, 1 and size-1, with counts 0, 1, 7 and 10001,
 * plain and with MPI_IN_PLACE at the root (the root's send arguments then
 * ignored: count 0 and MPI_DATATYPE_NULL). The v-variants give every third
 * rank nothing and place the blocks in reverse rank order with gaps, which
 * must stay untouched. Gather and Scatter also with a vector datatype
 * (3 blocks of 2 ints, stride 4) on the root's side and on the other side.
 * Nothing is written past the end of any receive buffer. On MPI_COMM_WORLD,
 * on a split of it with reversed keys and on MPI_COMM_SELF.
 */
#include <string.h>

#define TEST_NAME "coll_gather_scatter"
#include "testutil.h"

#define GUARD 8
#define POISON (-777)

static MPI_Comm comm;
static const char *comm_name;
static int n, r;

static MPI_Datatype vec; /* 6 ints over an extent of 10 */
enum { VEXT = 10 };
static int in_vec(int k) { return k % VEXT % 4 < 2; }

/* Element k of the block that belongs to rank q. */
static int val(int q, int k) { return q * 100000 + k + 1; }

static int *poisoned(size_t len)
{
    int *p = xmalloc(len * sizeof(int));
    for (size_t k = 0; k < len; k++)
        p[k] = POISON;
    return p;
}

static void expect_ints(const int *buf, int len, const int *want, const char *what,
                        int root, int count, int line)
{
    for (int k = 0; k < len; k++)
        if (buf[k] != want[k])
            fail(line, "%s, root %d, count %d, %s (rank %d of %d): int %d is %d, expected %d",
                 what, root, count, comm_name, r, n, k, buf[k], want[k]);
}

static void gather(int root, int count, int in_place)
{
    int total = n * count;
    int *send = xmalloc((size_t)count * sizeof(int));
    for (int k = 0; k < count; k++)
        send[k] = val(r, k);
    int *recv = poisoned((size_t)total + GUARD);
    int *want = poisoned((size_t)total + GUARD);
    for (int q = 0; q < n; q++)
        for (int k = 0; k < count; k++)
            want[q * count + k] = val(q, k);
    if (r == root && in_place) {
        memcpy(recv + r * count, send, (size_t)count * sizeof(int));
        CALL(MPI_Gather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, recv, count, MPI_INT, root, comm));
    } else {
        CALL(MPI_Gather(send, count, MPI_INT, recv, count, MPI_INT, root, comm));
    }
    if (r == root)
        expect_ints(recv, total + GUARD, want,
                    in_place ? "Gather(MPI_IN_PLACE)" : "Gather", root, count, __LINE__);
    else
        CHECK(recv[0] == POISON, "Gather wrote to a non-root's receive buffer");
    free(send);
    free(recv);
    free(want);
}

/* Counts and displacements of the v-variants: rank q has base+q elements,
 * or none when q % 3 == 1; blocks in reverse rank order, 2 ints apart. */
static int vlayout(int base, int *counts, int *displs)
{
    int pos = 1;
    for (int q = n - 1; q >= 0; q--) {
        counts[q] = q % 3 == 1 ? 0 : base + q;
        displs[q] = pos;
        pos += counts[q] + 2;
    }
    return pos;
}

static void gatherv(int root, int base, int in_place)
{
    int counts[64], displs[64];
    int len = vlayout(base, counts, displs);
    int mine = counts[r];
    int *send = xmalloc((size_t)mine * sizeof(int));
    for (int k = 0; k < mine; k++)
        send[k] = val(r, k);
    int *recv = poisoned((size_t)len + GUARD);
    int *want = poisoned((size_t)len + GUARD);
    for (int q = 0; q < n; q++)
        for (int k = 0; k < counts[q]; k++)
            want[displs[q] + k] = val(q, k);
    if (r == root && in_place) {
        memcpy(recv + displs[r], send, (size_t)mine * sizeof(int));
        CALL(MPI_Gatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, recv, counts, displs, MPI_INT,
                         root, comm));
    } else {
        CALL(MPI_Gatherv(send, mine, MPI_INT, recv, counts, displs, MPI_INT, root, comm));
    }
    if (r == root)
        expect_ints(recv, len + GUARD, want,
                    in_place ? "Gatherv(MPI_IN_PLACE)" : "Gatherv", root, base, __LINE__);
    free(send);
    free(recv);
    free(want);
}

static void scatter(int root, int count, int in_place)
{
    int total = n * count;
    int *send = xmalloc((size_t)total * sizeof(int) + 1);
    for (int q = 0; q < n; q++)
        for (int k = 0; k < count; k++)
            send[q * count + k] = val(q, k);
    int *recv = poisoned((size_t)count + GUARD);
    int *want = poisoned((size_t)count + GUARD);
    for (int k = 0; k < count; k++)
        want[k] = val(r, k);
    if (r == root && in_place) {
        CALL(MPI_Scatter(send, count, MPI_INT, MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, root, comm));
        for (int q = 0; q < n; q++)
            for (int k = 0; k < count; k++)
                CHECK(send[q * count + k] == val(q, k), "Scatter(MPI_IN_PLACE) changed the "
                      "root's send buffer at %d", q * count + k);
        CHECK(recv[0] == POISON, "Scatter(MPI_IN_PLACE) wrote elsewhere");
    } else {
        CALL(MPI_Scatter(r == root ? send : NULL, count, MPI_INT, recv, count, MPI_INT, root,
                         comm));
        expect_ints(recv, count + GUARD, want, "Scatter", root, count, __LINE__);
    }
    free(send);
    free(recv);
    free(want);
}

static void scatterv(int root, int base, int in_place)
{
    int counts[64], displs[64];
    int len = vlayout(base, counts, displs);
    int *send = xmalloc((size_t)len * sizeof(int));
    for (int k = 0; k < len; k++)
        send[k] = -5; /* the gaps: must not arrive anywhere */
    for (int q = 0; q < n; q++)
        for (int k = 0; k < counts[q]; k++)
            send[displs[q] + k] = val(q, k);
    int mine = counts[r];
    int *recv = poisoned((size_t)mine + GUARD);
    int *want = poisoned((size_t)mine + GUARD);
    for (int k = 0; k < mine; k++)
        want[k] = val(r, k);
    if (r == root && in_place) {
        CALL(MPI_Scatterv(send, counts, displs, MPI_INT, MPI_IN_PLACE, 0, MPI_DATATYPE_NULL,
                          root, comm));
        for (int k = 0; k < mine; k++)
            CHECK(send[displs[r] + k] == val(r, k), "Scatterv(MPI_IN_PLACE) changed the "
                  "root's own block");
    } else {
        CALL(MPI_Scatterv(send, counts, displs, MPI_INT, recv, mine, MPI_INT, root, comm));
        expect_ints(recv, mine + GUARD, want, "Scatterv", root, base, __LINE__);
    }
    free(send);
    free(recv);
    free(want);
}

/* Gather with count vectors from every rank; the root receives either
 * 6*count ints per rank or count vectors per rank. */
static void gather_vec(int root, int count, int root_vec)
{
    int slen = count * VEXT;
    int *send = poisoned((size_t)slen + 1);
    int e = 0;
    for (int k = 0; k < slen; k++)
        if (in_vec(k))
            send[k] = val(r, e++);
    int per = root_vec ? count * VEXT : 6 * count;
    int *recv = poisoned((size_t)n * per + GUARD);
    CALL(MPI_Gather(send, count, vec, recv, root_vec ? count : 6 * count,
                    root_vec ? vec : MPI_INT, root, comm));
    if (r != root)
        goto out;
    for (int q = 0; q < n; q++) {
        e = 0;
        for (int k = 0; k < per; k++) {
            int inside = !root_vec || in_vec(k);
            int want = inside ? val(q, e++) : POISON;
            CHECK(recv[q * per + k] == want, "Gather of %d vectors (root side %s), root %d, "
                  "%s: int %d of rank %d's block is %d, expected %d", count,
                  root_vec ? "vectors" : "ints", root, comm_name, k, q, recv[q * per + k],
                  want);
        }
    }
    for (int k = 0; k < GUARD; k++)
        CHECK(recv[n * per + k] == POISON, "Gather of vectors wrote past the end");
out:
    free(send);
    free(recv);
}

/* Scatter of vectors from the root; every rank receives 6*count ints. */
static void scatter_vec(int root, int count)
{
    int per = count * VEXT;
    int *send = poisoned((size_t)n * per + 1);
    for (int q = 0; q < n; q++) {
        int e = 0;
        for (int k = 0; k < per; k++)
            if (in_vec(k))
                send[q * per + k] = val(q, e++);
    }
    int *recv = poisoned((size_t)6 * count + GUARD);
    CALL(MPI_Scatter(send, count, vec, recv, 6 * count, MPI_INT, root, comm));
    for (int k = 0; k < 6 * count + GUARD; k++) {
        int want = k < 6 * count ? val(r, k) : POISON;
        CHECK(recv[k] == want, "Scatter of %d vectors, root %d, %s: int %d is %d, expected %d",
              count, root, comm_name, k, recv[k], want);
    }
    free(send);
    free(recv);
}

static void run_on(MPI_Comm c, const char *name)
{
    comm = c;
    comm_name = name;
    CALL(MPI_Comm_size(comm, &n));
    CALL(MPI_Comm_rank(comm, &r));
    int roots[3], nroots = 0;
    roots[nroots++] = 0;
    if (n > 1) roots[nroots++] = 1;
    if (n > 2) roots[nroots++] = n - 1;
    static const int counts[] = { 0, 1, 7, 10001 };
    for (int i = 0; i < nroots; i++) {
        int root = roots[i];
        for (int j = 0; j < 4; j++) {
            for (int in_place = 0; in_place < 2; in_place++) {
                gather(root, counts[j], in_place);
                gatherv(root, counts[j], in_place);
                scatter(root, counts[j], in_place);
                scatterv(root, counts[j], in_place);
            }
        }
        gather_vec(root, 7, 0);
        gather_vec(root, 3, 1);
        scatter_vec(root, 7);
    }
}

int main(int argc, char **argv)
{
    TEST_INIT(&argc, &argv);
    CHECK(np <= 64, "at most 64 ranks");
    CALL(MPI_Type_vector(3, 2, 4, MPI_INT, &vec));
    CALL(MPI_Type_commit(&vec));

    run_on(MPI_COMM_WORLD, "MPI_COMM_WORLD");

    MPI_Comm rev;
    CALL(MPI_Comm_split(MPI_COMM_WORLD, 0, np - me, &rev));
    int rr = -1;
    CALL(MPI_Comm_rank(rev, &rr));
    CHECK(rr == np - 1 - me, "split with reversed keys: rank %d, expected %d", rr, np - 1 - me);
    run_on(rev, "reversed split of MPI_COMM_WORLD");
    CALL(MPI_Comm_free(&rev));

    run_on(MPI_COMM_SELF, "MPI_COMM_SELF");

    CALL(MPI_Type_free(&vec));
    CALL(MPI_Finalize());
    finalized = 1;
    return 0;
}

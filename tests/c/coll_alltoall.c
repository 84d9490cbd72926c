/* ranks: 1 2 3 4 5 7 8 */
/*
 * MPI_Alltoall and MPI_Alltoallv, blocking and non-blocking (MPI_Ialltoall,
 * MPI_Ialltoallv), with counts 0, 1, 7 and 10001, plain and with MPI_IN_PLACE
 * (send arguments then ignored: count 0 and MPI_DATATYPE_NULL). Alltoallv
 * sends rank-dependent counts (some zero, sizes differing per pair), with the
 * blocks in a different order on the send and the receive side and gaps
 * between them that must stay untouched; in place with symmetric counts, as
 * MPI requires. Alltoall with a vector datatype (3 blocks of 2 ints, stride 4)
 * on the send side, on the receive side and on both, and Alltoallv with a
 * vector on the receive side. Nothing is written past the end of a receive
 * buffer. On MPI_COMM_WORLD, on a split of it with reversed keys and on
 * MPI_COMM_SELF.
 */
#include <string.h>

#define TEST_NAME "coll_alltoall"
#include "testutil.h"

#define GUARD 8
#define POISON (-777)

static MPI_Comm comm;
static const char *comm_name;
static int n, r, nb;

static MPI_Datatype vec; /* 6 ints over an extent of 10 */
enum { VEXT = 10 };
static int in_vec(int k) { return k % VEXT % 4 < 2; }

/* Element k of the block rank i sends to rank j. */
static int val(int i, int j, int k) { return i * 1000003 + j * 10007 + k + 1; }

static int *poisoned(size_t len)
{
    int *p = xmalloc(len * sizeof(int));
    for (size_t k = 0; k < len; k++)
        p[k] = POISON;
    return p;
}

static const char *how(void) { return nb ? "Ialltoall" : "Alltoall"; }

static void alltoall(const void *s, int sc, MPI_Datatype st, void *d, int rc, MPI_Datatype rt)
{
    if (nb) {
        MPI_Request q;
        CALL(MPI_Ialltoall(s, sc, st, d, rc, rt, comm, &q));
        CALL(MPI_Wait(&q, MPI_STATUS_IGNORE));
        CHECK(q == MPI_REQUEST_NULL, "Wait left the request");
    } else {
        CALL(MPI_Alltoall(s, sc, st, d, rc, rt, comm));
    }
}

static void alltoallv(const void *s, const int *sc, const int *sd, MPI_Datatype st, void *d,
                      const int *rc, const int *rd, MPI_Datatype rt)
{
    if (nb) {
        MPI_Request q;
        int flag = 0;
        CALL(MPI_Ialltoallv(s, sc, sd, st, d, rc, rd, rt, comm, &q));
        while (!flag)
            CALL(MPI_Test(&q, &flag, MPI_STATUS_IGNORE));
    } else {
        CALL(MPI_Alltoallv(s, sc, sd, st, d, rc, rd, rt, comm));
    }
}

static void plain(int count, int in_place)
{
    size_t total = (size_t)n * count;
    int *send = xmalloc(total * sizeof(int) + 1);
    for (size_t k = 0; k < total; k++)
        send[k] = val(r, (int)(k / count), (int)(k % count));
    int *recv = poisoned(total + GUARD);
    if (in_place) {
        memcpy(recv, send, total * sizeof(int));
        alltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, recv, count, MPI_INT);
    } else {
        alltoall(send, count, MPI_INT, recv, count, MPI_INT);
    }
    for (size_t k = 0; k < total + GUARD; k++) {
        int want = k < total ? val((int)(k / count), r, (int)(k % count)) : POISON;
        CHECK(recv[k] == want, "%s%s of %d, %s (rank %d of %d): int %zu is %d, expected %d",
              how(), in_place ? "(MPI_IN_PLACE)" : "", count, comm_name, r, n, k, recv[k], want);
    }
    free(send);
    free(recv);
}

/* Ints rank i sends to rank j: symmetric when `sym` (in place needs it). */
static int vcount(int i, int j, int base, int sym)
{
    int k = sym ? i + j + i * j : i * 5 + j * 3 + 1;
    return k % 4 == 0 ? 0 : base + k % 4;
}

static void varying(int base, int in_place)
{
    int sc[64], sd[64], rc[64], rd[64], spos = 2, rpos = 1;
    /* Send blocks in reverse rank order, receive blocks rotated by the rank, gaps of 2. */
    for (int j = n - 1; j >= 0; j--) {
        sc[j] = vcount(r, j, base, in_place);
        sd[j] = spos;
        spos += sc[j] + 2;
    }
    for (int t = 0; t < n; t++) {
        int i = (t + r) % n;
        rc[i] = vcount(i, r, base, in_place);
        rd[i] = rpos;
        rpos += rc[i] + 2;
    }
    int *send = poisoned((size_t)spos), *recv = poisoned((size_t)rpos + GUARD);
    int *want = poisoned((size_t)rpos + GUARD);
    for (int j = 0; j < n; j++)
        for (int k = 0; k < sc[j]; k++)
            send[sd[j] + k] = val(r, j, k);
    for (int i = 0; i < n; i++)
        for (int k = 0; k < rc[i]; k++)
            want[rd[i] + k] = val(i, r, k);
    if (in_place) {
        /* The outgoing data sits in the receive buffer at the receive layout. */
        for (int j = 0; j < n; j++)
            for (int k = 0; k < rc[j]; k++)
                recv[rd[j] + k] = val(r, j, k);
        alltoallv(MPI_IN_PLACE, NULL, NULL, MPI_DATATYPE_NULL, recv, rc, rd, MPI_INT);
    } else {
        alltoallv(send, sc, sd, MPI_INT, recv, rc, rd, MPI_INT);
    }
    for (int k = 0; k < rpos + GUARD; k++)
        CHECK(recv[k] == want[k], "%sv%s with base %d, %s (rank %d of %d): int %d is %d, "
              "expected %d", how(), in_place ? "(MPI_IN_PLACE)" : "", base, comm_name, r, n, k,
              recv[k], want[k]);
    free(send);
    free(recv);
    free(want);
}

/* mode 1: vectors sent, ints received; 2: ints sent, vectors received; 3: vectors both. */
static void vectors(int count, int mode)
{
    int svec = mode & 1, rvec = mode & 2;
    int sper = svec ? count * VEXT : 6 * count, rper = rvec ? count * VEXT : 6 * count;
    int *send = poisoned((size_t)n * sper + 1), *recv = poisoned((size_t)n * rper + GUARD);
    for (int j = 0; j < n; j++) {
        int e = 0;
        for (int k = 0; k < sper; k++)
            if (!svec || in_vec(k))
                send[j * sper + k] = val(r, j, e++);
    }
    alltoall(send, svec ? count : 6 * count, svec ? vec : MPI_INT, recv,
             rvec ? count : 6 * count, rvec ? vec : MPI_INT);
    for (int i = 0; i < n; i++) {
        int e = 0;
        for (int k = 0; k < rper; k++) {
            int want = !rvec || in_vec(k) ? val(i, r, e++) : POISON;
            CHECK(recv[i * rper + k] == want, "%s of %d vectors (mode %d), %s: int %d of the "
                  "block from rank %d is %d, expected %d", how(), count, mode, comm_name, k, i,
                  recv[i * rper + k], want);
        }
    }
    for (int k = 0; k < GUARD; k++)
        CHECK(recv[n * rper + k] == POISON, "%s of vectors wrote past the end", how());
    free(send);
    free(recv);
}

/* Alltoallv of ints received as vectors: rank i sends (i + j) % 3 vectors' worth to j,
 * placed at vector displacements in reverse order. */
static void vectors_v(void)
{
    int sc[64], sd[64], rc[64], rd[64], spos = 0, rpos = 0;
    for (int j = 0; j < n; j++) {
        sc[j] = 6 * ((r + j) % 3);
        sd[j] = spos;
        spos += sc[j];
    }
    for (int i = n - 1; i >= 0; i--) {
        rc[i] = (i + r) % 3;
        rd[i] = rpos;
        rpos += rc[i] + 1;
    }
    int *send = poisoned((size_t)spos + 1), *recv = poisoned((size_t)rpos * VEXT + GUARD);
    for (int j = 0; j < n; j++)
        for (int k = 0; k < sc[j]; k++)
            send[sd[j] + k] = val(r, j, k);
    alltoallv(send, sc, sd, MPI_INT, recv, rc, rd, vec);
    int *want = poisoned((size_t)rpos * VEXT + GUARD);
    for (int i = 0; i < n; i++) {
        int e = 0;
        for (int k = 0; k < rc[i] * VEXT; k++)
            if (in_vec(k))
                want[rd[i] * VEXT + k] = val(i, r, e++);
    }
    for (int k = 0; k < rpos * VEXT + GUARD; k++)
        CHECK(recv[k] == want[k], "%sv into vectors, %s: int %d is %d, expected %d", how(),
              comm_name, k, recv[k], want[k]);
    free(send);
    free(recv);
    free(want);
}

static void run_on(MPI_Comm c, const char *name)
{
    comm = c;
    comm_name = name;
    CALL(MPI_Comm_size(comm, &n));
    CALL(MPI_Comm_rank(comm, &r));
    static const int counts[] = { 0, 1, 7, 10001 };
    for (nb = 0; nb < 2; nb++) {
        for (int j = 0; j < 4; j++)
            for (int in_place = 0; in_place < 2; in_place++) {
                plain(counts[j], in_place);
                varying(counts[j], in_place);
            }
        vectors(7, 1);
        vectors(7, 2);
        vectors(1, 3);
        vectors(7, 3);
        vectors_v();
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
    run_on(rev, "reversed split of MPI_COMM_WORLD");
    CALL(MPI_Comm_free(&rev));

    run_on(MPI_COMM_SELF, "MPI_COMM_SELF");

    CALL(MPI_Type_free(&vec));
    CALL(MPI_Finalize());
    finalized = 1;
    return 0;
}

/* ranks: 1 2 3 4 5 7 8 */
/* env: FERRY_ALLGATHER_RADIX=4 */
/* env: FERRY_ALLGATHER_RADIX=3 FERRY_ALLGATHER_ALGORITHM=k_bruck */
/* env: FERRY_ALLGATHER_RADIX=7 FERRY_ALLGATHER_ALGORITHM=k_bruck */
/*
 * MPI_Allgather and MPI_Allgatherv with counts 0, 1, 7 and 10001, plain and
 * with MPI_IN_PLACE (send arguments then ignored: count 0 and
 * MPI_DATATYPE_NULL); Allgatherv gives every third rank nothing and places
 * the blocks in reverse rank order with gaps that must stay untouched;
 * Allgather with a vector datatype (3 blocks of 2 ints, stride 4) on the
 * send side, on the receive side and on both. Nothing is written past the
 * end of a receive buffer. On MPI_COMM_WORLD, on a split of it with
 * reversed keys and on MPI_COMM_SELF. Run with the decision table's choice
 * and with allgather.k_bruck at radixes 3 and 7 (FERRY_ALLGATHER_RADIX).
 */
#include <string.h>

#define TEST_NAME "coll_allgather"
#include "testutil.h"

#define GUARD 8
#define POISON (-777)

static MPI_Comm comm;
static const char *comm_name;
static int n, r;

static MPI_Datatype vec; /* 6 ints over an extent of 10 */
enum { VEXT = 10 };
static int in_vec(int k) { return k % VEXT % 4 < 2; }

static int val(int q, int k) { return q * 100000 + k + 1; }

static int *poisoned(size_t len)
{
    int *p = xmalloc(len * sizeof(int));
    for (size_t k = 0; k < len; k++)
        p[k] = POISON;
    return p;
}

static void allgather(int count, int in_place)
{
    int total = n * count;
    int *send = xmalloc((size_t)count * sizeof(int));
    for (int k = 0; k < count; k++)
        send[k] = val(r, k);
    int *recv = poisoned((size_t)total + GUARD);
    if (in_place) {
        memcpy(recv + r * count, send, (size_t)count * sizeof(int));
        CALL(MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, recv, count, MPI_INT, comm));
    } else {
        CALL(MPI_Allgather(send, count, MPI_INT, recv, count, MPI_INT, comm));
    }
    for (int k = 0; k < total + GUARD; k++) {
        int want = k < total ? val(k / count, k % count) : POISON;
        CHECK(recv[k] == want, "Allgather%s of %d, %s (rank %d of %d): int %d is %d, "
              "expected %d", in_place ? "(MPI_IN_PLACE)" : "", count, comm_name, r, n, k,
              recv[k], want);
    }
    free(send);
    free(recv);
}

static void allgatherv(int base, int in_place)
{
    int counts[64], displs[64];
    int pos = 1;
#ifdef MPICH_DEVIATIONS
    /* MPICH 4.0 ignores the displacement on a single rank
     * (pmodels/mpich#6374, fixed in 4.1). */
    if (n == 1)
        pos = 0;
#endif
    for (int q = n - 1; q >= 0; q--) {
        counts[q] = q % 3 == 1 ? 0 : base + q;
        displs[q] = pos;
        pos += counts[q] + 2;
    }
    int mine = counts[r];
    int *send = xmalloc((size_t)mine * sizeof(int));
    for (int k = 0; k < mine; k++)
        send[k] = val(r, k);
    int *recv = poisoned((size_t)pos + GUARD);
    int *want = poisoned((size_t)pos + GUARD);
    for (int q = 0; q < n; q++)
        for (int k = 0; k < counts[q]; k++)
            want[displs[q] + k] = val(q, k);
    if (in_place) {
        memcpy(recv + displs[r], send, (size_t)mine * sizeof(int));
        CALL(MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, recv, counts, displs, MPI_INT,
                            comm));
    } else {
        CALL(MPI_Allgatherv(send, mine, MPI_INT, recv, counts, displs, MPI_INT, comm));
    }
    for (int k = 0; k < pos + GUARD; k++)
        CHECK(recv[k] == want[k], "Allgatherv%s with base %d, %s (rank %d of %d): int %d is "
              "%d, expected %d", in_place ? "(MPI_IN_PLACE)" : "", base, comm_name, r, n, k,
              recv[k], want[k]);
    free(send);
    free(recv);
    free(want);
}

/* mode 1: vectors sent, ints received; 2: ints sent, vectors received;
 * 3: vectors on both sides. */
static void allgather_vec(int count, int mode)
{
    int svec = mode & 1, rvec = mode & 2;
    int slen = svec ? count * VEXT : 6 * count;
    int *send = poisoned((size_t)slen + 1);
    int e = 0;
    for (int k = 0; k < slen; k++)
        if (!svec || in_vec(k))
            send[k] = val(r, e++);
    int per = rvec ? count * VEXT : 6 * count;
    int *recv = poisoned((size_t)n * per + GUARD);
    CALL(MPI_Allgather(send, svec ? count : 6 * count, svec ? vec : MPI_INT,
                       recv, rvec ? count : 6 * count, rvec ? vec : MPI_INT, comm));
    for (int q = 0; q < n; q++) {
        e = 0;
        for (int k = 0; k < per; k++) {
            int want = !rvec || in_vec(k) ? val(q, e++) : POISON;
            CHECK(recv[q * per + k] == want, "Allgather of %d vectors (mode %d), %s: int %d "
                  "of rank %d's block is %d, expected %d", count, mode, comm_name, k, q,
                  recv[q * per + k], want);
        }
    }
    for (int k = 0; k < GUARD; k++)
        CHECK(recv[n * per + k] == POISON, "Allgather of vectors wrote past the end");
    free(send);
    free(recv);
}

static void run_on(MPI_Comm c, const char *name)
{
    comm = c;
    comm_name = name;
    CALL(MPI_Comm_size(comm, &n));
    CALL(MPI_Comm_rank(comm, &r));
    static const int counts[] = { 0, 1, 7, 10001 };
    for (int j = 0; j < 4; j++)
        for (int in_place = 0; in_place < 2; in_place++) {
            allgather(counts[j], in_place);
            allgatherv(counts[j], in_place);
        }
    allgather_vec(7, 1);
    allgather_vec(7, 2);
    allgather_vec(1, 3);
    allgather_vec(7, 3);
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

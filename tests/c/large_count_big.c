/* ranks: 2 */
/* timeout: 180 */
/*
 * Counts beyond INT_MAX: rank 0 sends 2^31 + 4099 bytes with MPI_Send_c from
 * an untouched anonymous mapping (zero pages: no memory is used for them),
 * rank 1 receives them with MPI_Irecv_c into a mapping it has marked at both
 * ends and in the middle. The marks come back zero, MPI_Get_count_c and
 * MPI_Get_elements_c say 2^31 + 4099, and MPI_Get_count says MPI_UNDEFINED.
 * Then the same count by MPI_Bcast_c from rank 0, and by MPI_Scatter_c from
 * twice that at rank 0 (in place there). Then reductions of as many unsigned
 * chars: MPI_Reduce_local_c with an MPI_Op_create_c operation, and (Ferry
 * only) with an MPI_Op_create one, whose int length Ferry keeps within INT_MAX
 * by calling it on pieces (MPICH refuses), MPI_Reduce_c with MPI_SUM to rank
 * 1 and MPI_Iallreduce_c in place on both ranks; the marked bytes hold the
 * sums, the others stay zero. About 2 GiB of memory on each rank, and what
 * the reductions stage.
 */
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

#define TEST_NAME "large_count_big"
#include "testutil.h"

#define N (((MPI_Count)1 << 31) + 4099)

static unsigned char *map(MPI_Count bytes, int writable)
{
    void *p = mmap(NULL, (size_t)bytes, writable ? PROT_READ | PROT_WRITE : PROT_READ,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    CHECK(p != MAP_FAILED, "mmap of %ld bytes", (long)bytes);
    return p;
}

static const MPI_Count marks[] = {0, 1, N / 2, (MPI_Count)INT32_MAX, N - 1};
#define NMARKS ((int)(sizeof marks / sizeof marks[0]))

static void mark_with(unsigned char *buf, unsigned char v)
{
    for (int i = 0; i < NMARKS; i++)
        buf[marks[i]] = v;
}

static void mark(unsigned char *buf)
{
    mark_with(buf, 0xab);
}

static void expect_marks(const unsigned char *buf, unsigned char v, const char *what)
{
    for (int i = 0; i < NMARKS; i++)
        CHECK(buf[marks[i]] == v, "%s: byte %ld is %#x, want %#x", what, (long)marks[i], buf[marks[i]], v);
    /* Unmarked bytes, one in each half and one near each mark. */
    const MPI_Count zeros[] = {2, N / 4, N / 2 + 1, 3 * (N / 4), (MPI_Count)INT32_MAX - 1, N - 2};
    for (int i = 0; i < (int)(sizeof zeros / sizeof zeros[0]); i++)
        CHECK(buf[zeros[i]] == 0, "%s: byte %ld is %#x, want 0", what, (long)zeros[i], buf[zeros[i]]);
}

/* User operations: byte sums, with an MPI_Count length and with an int one. Were the latter
 * given more than INT_MAX elements, its length would wrap negative and it would add nothing. */
static MPI_Count longest_c;
static int longest;

static void add_bytes_c(void *in, void *inout, MPI_Count *len, MPI_Datatype *dt)
{
    (void)dt;
    const unsigned char *a = in;
    unsigned char *b = inout;
    for (MPI_Count i = 0; i < *len; i++)
        b[i] = (unsigned char)(a[i] + b[i]);
    if (*len > longest_c)
        longest_c = *len;
}

static void add_bytes(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    const unsigned char *a = in;
    unsigned char *b = inout;
    for (int i = 0; i < *len; i++)
        b[i] = (unsigned char)(a[i] + b[i]);
    if (*len > longest)
        longest = *len;
}

static void expect_zeros(const unsigned char *buf, const char *what)
{
    for (int i = 0; i < NMARKS; i++)
        CHECK(buf[marks[i]] == 0, "%s: byte %ld is %#x", what, (long)marks[i], buf[marks[i]]);
}

int main(int argc, char **argv)
{
    TEST_INIT(&argc, &argv);
    CHECK(np == 2, "run on 2 ranks");
    /* Rank 0 reads twice N bytes (the scatter's send buffer), all zero pages. */
    MPI_Count bytes = me == 0 ? 2 * N : N;
    unsigned char *buf = map(bytes, me == 1);
    if (me == 0) {
        CALL(MPI_Send_c(buf, N, MPI_BYTE, 1, 9, MPI_COMM_WORLD));
    } else {
        mark(buf);
        MPI_Request rq;
        MPI_Status st;
        CALL(MPI_Irecv_c(buf, N, MPI_BYTE, 0, 9, MPI_COMM_WORLD, &rq));
        CALL(MPI_Wait(&rq, &st));
        expect_zeros(buf, "Irecv_c");
        MPI_Count n = -1;
        CALL(MPI_Get_count_c(&st, MPI_BYTE, &n));
        CHECK(n == N, "Get_count_c %ld, expected %ld", (long)n, (long)N);
        CALL(MPI_Get_elements_c(&st, MPI_BYTE, &n));
        CHECK(n == N, "Get_elements_c %ld", (long)n);
        int small = 0;
        CALL(MPI_Get_count(&st, MPI_BYTE, &small));
        CHECK(small == MPI_UNDEFINED, "Get_count %d", small);
    }
    if (me == 1)
        mark(buf);
    CALL(MPI_Bcast_c(buf, N, MPI_BYTE, 0, MPI_COMM_WORLD));
    if (me == 1) {
        expect_zeros(buf, "Bcast_c");
        mark(buf);
    }
    CALL(MPI_Scatter_c(buf, N, MPI_BYTE, me == 0 ? MPI_IN_PLACE : buf, N, MPI_BYTE, 0, MPI_COMM_WORLD));
    if (me == 1)
        expect_zeros(buf, "Scatter_c");

    /* Reductions. `in`: zero pages but for its marks; `acc`: rank 1's buffer, a fresh mapping
     * on rank 0 (whose buffer is read-only). */
    unsigned char *in = map(N, 1), *acc = me == 0 ? map(N, 1) : buf;
    mark_with(in, 0x03);
    mark_with(acc, me == 0 ? 0x10 : 0xab);
    MPI_Op add;
    CALL(MPI_Op_create_c(add_bytes_c, 1, &add));
    CALL(MPI_Reduce_local_c(in, acc, N, MPI_UNSIGNED_CHAR, add));
    CALL(MPI_Op_free(&add));
    CHECK(longest_c > 0, "the MPI_Count user operation was not called");
    expect_marks(acc, me == 0 ? 0x13 : 0xae, "Reduce_local_c");
    /* MPICH 4.0.2 asserts that an int-length operation gets at most INT_MAX elements. */
    int twice = is_ferry();
    if (twice) {
        CALL(MPI_Op_create(add_bytes, 1, &add));
        CALL(MPI_Reduce_local_c(in, acc, N, MPI_UNSIGNED_CHAR, add));
        CALL(MPI_Op_free(&add));
        CHECK(longest > 0, "the int user operation was not called");
        expect_marks(acc, me == 0 ? 0x16 : 0xb1, "Reduce_local_c, int-length operation");
    }
    /* Not in place: MPICH 4.0.2 crashes on MPI_IN_PLACE at the root of a large reduce. */
    CALL(MPI_Reduce_c(me == 1 ? in : acc, me == 1 ? acc : NULL, N, MPI_UNSIGNED_CHAR, MPI_SUM, 1, MPI_COMM_WORLD));
    if (me == 1)
        expect_marks(acc, twice ? 0x19 : 0x16, "Reduce_c");
    MPI_Request rq;
    CALL(MPI_Iallreduce_c(MPI_IN_PLACE, acc, N, MPI_UNSIGNED_CHAR, MPI_SUM, MPI_COMM_WORLD, &rq));
    CALL(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    expect_marks(acc, twice ? 0x2f : 0x29, "Iallreduce_c");
    munmap(in, (size_t)N);
    if (me == 0)
        munmap(acc, (size_t)N);
    munmap(buf, (size_t)bytes);
    CALL(MPI_Barrier(MPI_COMM_WORLD));
    if (me == 0)
        printf("large_count_big: ok\n");
    CALL(MPI_Finalize());
    return 0;
}

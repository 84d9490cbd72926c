/* ranks: 2 */
/*
 * Counts beyond INT_MAX: rank 0 sends 2^31 + 4099 bytes with MPI_Send_c from
 * an untouched anonymous mapping (zero pages: no memory is used for them),
 * rank 1 receives them with MPI_Irecv_c into a mapping it has marked at both
 * ends and in the middle. The marks come back zero, MPI_Get_count_c and
 * MPI_Get_elements_c say 2^31 + 4099, and MPI_Get_count says MPI_UNDEFINED.
 * Then the same count by MPI_Bcast_c from rank 0, and by MPI_Scatter_c from
 * twice that at rank 0 (in place there). About 2 GiB of memory on rank 1.
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

static void mark(unsigned char *buf)
{
    for (int i = 0; i < NMARKS; i++)
        buf[marks[i]] = 0xab;
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
    munmap(buf, (size_t)bytes);
    CALL(MPI_Barrier(MPI_COMM_WORLD));
    if (me == 0)
        printf("large_count_big: ok\n");
    CALL(MPI_Finalize());
    return 0;
}

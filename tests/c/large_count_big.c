/* ranks: 2 */
/*
 * A message of more than INT_MAX elements: rank 0 sends 2^31 + 4099 bytes
 * with MPI_Send_c from an untouched anonymous mapping (zero pages: no
 * memory is used for them), rank 1 receives them with MPI_Irecv_c into a
 * mapping it has marked at both ends and in the middle. The marks come back
 * zero, MPI_Get_count_c and MPI_Get_elements_c say 2^31 + 4099, and
 * MPI_Get_count says MPI_UNDEFINED. About 2 GiB of memory on rank 1.
 */
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

#define TEST_NAME "large_count_big"
#include "testutil.h"

#define N (((MPI_Count)1 << 31) + 4099)

static unsigned char *map(int writable)
{
    void *p = mmap(NULL, (size_t)N, writable ? PROT_READ | PROT_WRITE : PROT_READ,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    CHECK(p != MAP_FAILED, "mmap of %ld bytes", (long)N);
    return p;
}

int main(int argc, char **argv)
{
    TEST_INIT(&argc, &argv);
    CHECK(np == 2, "run on 2 ranks");
    unsigned char *buf = map(me == 1);
    const MPI_Count marks[] = {0, 1, N / 2, (MPI_Count)INT32_MAX, N - 1};
    const int nmarks = (int)(sizeof marks / sizeof marks[0]);
    if (me == 0) {
        CALL(MPI_Send_c(buf, N, MPI_BYTE, 1, 9, MPI_COMM_WORLD));
    } else {
        for (int i = 0; i < nmarks; i++)
            buf[marks[i]] = 0xab;
        MPI_Request rq;
        MPI_Status st;
        CALL(MPI_Irecv_c(buf, N, MPI_BYTE, 0, 9, MPI_COMM_WORLD, &rq));
        CALL(MPI_Wait(&rq, &st));
        for (int i = 0; i < nmarks; i++)
            CHECK(buf[marks[i]] == 0, "byte %ld is %#x after the receive", (long)marks[i], buf[marks[i]]);
        MPI_Count n = -1;
        CALL(MPI_Get_count_c(&st, MPI_BYTE, &n));
        CHECK(n == N, "Get_count_c %ld, expected %ld", (long)n, (long)N);
        CALL(MPI_Get_elements_c(&st, MPI_BYTE, &n));
        CHECK(n == N, "Get_elements_c %ld", (long)n);
        int small = 0;
        CALL(MPI_Get_count(&st, MPI_BYTE, &small));
        CHECK(small == MPI_UNDEFINED, "Get_count %d", small);
    }
    munmap(buf, (size_t)N);
    CALL(MPI_Barrier(MPI_COMM_WORLD));
    if (me == 0)
        printf("large_count_big: ok\n");
    CALL(MPI_Finalize());
    return 0;
}

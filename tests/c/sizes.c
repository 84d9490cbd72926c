/* ranks: 2 4 5 */
/*
 * Message sizes from 1 byte to 16 MiB, powers of two and odd sizes, with a
 * position-dependent pattern checked on receipt. Blocking: every ordered
 * pair of ranks in turn (Send/Recv), all sizes. Non-blocking: every rank
 * posts receives from every rank (itself included) and sends to every rank
 * at once, then Waitall.
 */
#include <stdint.h>
#include <string.h>

#define TEST_NAME "sizes"
#include "testutil.h"

#define MAX_SIZE (16 << 20)

/* Byte i of the message from src to dst of length n. Word-wise generation
 * keeps 16 MiB cheap; the seed makes a misrouted or stale message visible. */
static uint64_t seed_of(int src, int dst, size_t n)
{
    return 0x9e3779b97f4a7c15ull * (uint64_t)(src * 131 + dst * 7 + 1) ^ (uint64_t)n * 0x100000001b3ull;
}

static uint64_t word_at(uint64_t seed, size_t w)
{
    uint64_t x = seed + (uint64_t)w * 0xbf58476d1ce4e5b9ull;
    return x ^ (x >> 29);
}

static void fill(unsigned char *buf, size_t n, int src, int dst)
{
    uint64_t seed = seed_of(src, dst, n);
    size_t words = n / 8;
    for (size_t w = 0; w < words; w++) {
        uint64_t v = word_at(seed, w);
        memcpy(buf + 8 * w, &v, 8);
    }
    uint64_t v = word_at(seed, words);
    memcpy(buf + 8 * words, &v, n % 8);
}

static void verify(const unsigned char *buf, size_t n, int src, int dst, const char *how)
{
    uint64_t seed = seed_of(src, dst, n);
    size_t words = n / 8;
    for (size_t w = 0; w <= words; w++) {
        uint64_t v = word_at(seed, w);
        size_t len = w < words ? 8 : n % 8;
        if (len && memcmp(buf + 8 * w, &v, len) != 0) {
            for (size_t i = 0; i < len; i++)
                CHECK(buf[8 * w + i] == ((unsigned char *)&v)[i],
                      "%s: %zu-byte message from %d to %d differs at byte %zu", how, n, src,
                      dst, 8 * w + i);
        }
    }
}

static int build_sizes(int *sizes)
{
    int n = 0;
    for (int s = 1; s <= MAX_SIZE; s *= 2)
        sizes[n++] = s;
    /* Odd sizes around common protocol thresholds and page sizes. */
    static const int odd[] = { 3, 7, 13, 127, 1000, 4095, 4097, 12289, 65535, 65537,
                               262143, 1000001, 4194301, (16 << 20) - 1 };
    for (size_t k = 0; k < sizeof odd / sizeof odd[0]; k++)
        sizes[n++] = odd[k];
    return n;
}

static void check_count(const MPI_Status *st, int src, int tag, int n)
{
    int got = -1;
    CALL(MPI_Get_count(st, MPI_BYTE, &got));
    CHECK(got == n && st->MPI_SOURCE == src && st->MPI_TAG == tag,
          "status: %d bytes from %d tag %d, expected %d bytes from %d tag %d", got,
          st->MPI_SOURCE, st->MPI_TAG, n, src, tag);
}

/* Pairs (i, j) in one global order: i sends to j with Send/Recv. Each rank
 * handles its own pairs in that order, so the schedule cannot deadlock. */
static void blocking_all_pairs(const int *sizes, int nsizes, unsigned char *sbuf,
                               unsigned char *rbuf)
{
    for (int z = 0; z < nsizes; z++) {
        int n = sizes[z];
        for (int i = 0; i < np; i++) {
            for (int j = 0; j < np; j++) {
                if (i == j)
                    continue;
                if (me == i) {
                    fill(sbuf, (size_t)n, i, j);
                    CALL(MPI_Send(sbuf, n, MPI_BYTE, j, z, MPI_COMM_WORLD));
                } else if (me == j) {
                    MPI_Status st;
                    CALL(MPI_Recv(rbuf, n, MPI_BYTE, i, z, MPI_COMM_WORLD, &st));
                    check_count(&st, i, z, n);
                    verify(rbuf, (size_t)n, i, j, "blocking");
                }
            }
        }
    }
}

/* Everyone to everyone (self included) at once, for each size. */
static void nonblocking_all_to_all(const int *sizes, int nsizes)
{
    unsigned char **sbufs = xmalloc(sizeof(unsigned char *) * (size_t)np);
    unsigned char **rbufs = xmalloc(sizeof(unsigned char *) * (size_t)np);
    MPI_Request *reqs = xmalloc(sizeof(MPI_Request) * 2 * (size_t)np);
    MPI_Status *sts = xmalloc(sizeof(MPI_Status) * 2 * (size_t)np);
    for (int p = 0; p < np; p++) {
        sbufs[p] = xmalloc(MAX_SIZE);
        rbufs[p] = xmalloc(MAX_SIZE);
    }
    for (int z = 0; z < nsizes; z++) {
        int n = sizes[z];
        for (int p = 0; p < np; p++) {
            int src = (me + np - p) % np;
            CALL(MPI_Irecv(rbufs[src], n, MPI_BYTE, src, 1000 + z, MPI_COMM_WORLD, &reqs[p]));
        }
        for (int p = 0; p < np; p++) {
            int dst = (me + p) % np;
            fill(sbufs[dst], (size_t)n, me, dst);
            CALL(MPI_Isend(sbufs[dst], n, MPI_BYTE, dst, 1000 + z, MPI_COMM_WORLD,
                           &reqs[np + p]));
        }
        CALL(MPI_Waitall(2 * np, reqs, sts));
        for (int p = 0; p < np; p++) {
            int src = (me + np - p) % np;
            check_count(&sts[p], src, 1000 + z, n);
            verify(rbufs[src], (size_t)n, src, me, "non-blocking");
        }
    }
    for (int p = 0; p < np; p++) {
        free(sbufs[p]);
        free(rbufs[p]);
    }
    free(sbufs);
    free(rbufs);
    free(reqs);
    free(sts);
}

int main(int argc, char **argv)
{
    TEST_INIT(&argc, &argv);

    int sizes[64];
    int nsizes = build_sizes(sizes);
    unsigned char *sbuf = xmalloc(MAX_SIZE), *rbuf = xmalloc(MAX_SIZE);

    blocking_all_pairs(sizes, nsizes, sbuf, rbuf);
    free(sbuf);
    free(rbuf);
    CALL(MPI_Barrier(MPI_COMM_WORLD));
    nonblocking_all_to_all(sizes, nsizes);

    CALL(MPI_Barrier(MPI_COMM_WORLD));
    CALL(MPI_Finalize());
    return 0;
}

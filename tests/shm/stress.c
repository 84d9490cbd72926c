/*
 * stress.c — many messages of random sizes among all ranks, checked byte by
 * byte: 25,000 rounds in which every rank sends one message to the rank k
 * places after it and receives one from the rank k places before it (k and
 * the way of sending drawn per round, the same on every rank), so 4 ranks
 * move 100,000 messages. Sizes: mostly up to 4 KiB, 5% up to 256 KiB, 0.2%
 * up to 8 MiB (so eager, rendezvous and pipelined paths all run), 1% empty.
 * Ways: Isend+Irecv+Waitall; Sendrecv; Irecv from MPI_ANY_SOURCE + Send +
 * Wait (the source must come back right); Issend + Recv + Wait; and a batch
 * of four rounds in flight at once completed with Waitall.
 *
 *     usage: stress [ROUNDS]   (default 25000)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <mpi.h>

static int me, np;

static uint64_t mix(uint64_t x)
{
    x ^= x >> 33; x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33; x *= 0xc4ceb9fe1a85ec53ULL;
    return x ^ (x >> 33);
}

static long size_of(long round, int src)
{
    uint64_t r = mix((uint64_t)round * 1000003u + (uint64_t)src);
    unsigned p = (unsigned)(r % 1000);
    r >>= 10;
    if (p < 10) return 0;
    if (p < 12) return (long)(r % (8L << 20)) + 1;
    if (p < 62) return (long)(r % (256L << 10)) + 1;
    return (long)(r % 4096) + 1;
}

static unsigned char byte_of(long round, int src, long i)
{
    return (unsigned char)((uint64_t)round * 131u + (uint64_t)src * 17u + (uint64_t)i * 7u + (uint64_t)(i >> 8));
}

static void fill(unsigned char *b, long n, long round, int src)
{
    for (long i = 0; i < n; i++) b[i] = byte_of(round, src, i);
}

static void check(const unsigned char *b, long n, long round, int src, const MPI_Status *st, int want_source)
{
    int count;
    MPI_Get_count(st, MPI_BYTE, &count);
    if (count != n || (want_source && st->MPI_SOURCE != src)) {
        fprintf(stderr, "stress: rank %d round %ld: got %d bytes from %d, expected %ld from %d\n", me, round, count, st->MPI_SOURCE, n, src);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    for (long i = 0; i < n; i++)
        if (b[i] != byte_of(round, src, i)) {
            fprintf(stderr, "stress: rank %d round %ld: byte %ld of %ld from rank %d is wrong\n", me, round, i, n, src);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
}

enum { BATCH = 4 };

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    long rounds = argc > 1 ? atol(argv[1]) : 25000;
    const long cap = 8L << 20;
    unsigned char *sb[BATCH], *rb[BATCH];
    for (int i = 0; i < BATCH; i++) {
        sb[i] = malloc(cap);
        rb[i] = malloc(cap);
        if (!sb[i] || !rb[i]) { fprintf(stderr, "stress: out of memory\n"); MPI_Abort(MPI_COMM_WORLD, 1); }
    }
    long moved = 0, bytes = 0;
    for (long r = 0; r < rounds;) {
        uint64_t d = mix((uint64_t)r ^ 0x5eedULL);
        int way = (int)(d % 5);
        if (np == 1) way = 0;
        if (way == 4 && r + BATCH <= rounds) {
            MPI_Request q[2 * BATCH];
            int srcs[BATCH];
            for (int i = 0; i < BATCH; i++) {
                long rr = r + i;
                int k = np > 1 ? 1 + (int)(mix((uint64_t)rr) % (uint64_t)(np - 1)) : 0;
                int to = (me + k) % np, from = (me - k + np) % np;
                srcs[i] = from;
                fill(sb[i], size_of(rr, me), rr, me);
                MPI_Irecv(rb[i], (int)cap, MPI_BYTE, from, (int)(rr % 32768), MPI_COMM_WORLD, &q[2 * i]);
                MPI_Isend(sb[i], (int)size_of(rr, me), MPI_BYTE, to, (int)(rr % 32768), MPI_COMM_WORLD, &q[2 * i + 1]);
            }
            MPI_Status st[2 * BATCH];
            MPI_Waitall(2 * BATCH, q, st);
            for (int i = 0; i < BATCH; i++) {
                check(rb[i], size_of(r + i, srcs[i]), r + i, srcs[i], &st[2 * i], 1);
                bytes += size_of(r + i, srcs[i]);
            }
            moved += BATCH;
            r += BATCH;
            continue;
        }
        int k = np > 1 ? 1 + (int)(mix((uint64_t)r) % (uint64_t)(np - 1)) : 0;
        int to = (me + k) % np, from = (me - k + np) % np;
        long n_out = size_of(r, me), n_in = size_of(r, from);
        int tag = (int)(r % 32768);
        fill(sb[0], n_out, r, me);
        MPI_Status st;
        MPI_Request q[2];
        switch (way) {
        case 0:
        case 4: {
            MPI_Status both[2];
            MPI_Irecv(rb[0], (int)cap, MPI_BYTE, from, tag, MPI_COMM_WORLD, &q[0]);
            MPI_Isend(sb[0], (int)n_out, MPI_BYTE, to, tag, MPI_COMM_WORLD, &q[1]);
            MPI_Waitall(2, q, both);
            st = both[0];
            break;
        }
        case 1:
            MPI_Sendrecv(sb[0], (int)n_out, MPI_BYTE, to, tag, rb[0], (int)cap, MPI_BYTE, from, tag, MPI_COMM_WORLD, &st);
            break;
        case 2:
            MPI_Irecv(rb[0], (int)cap, MPI_BYTE, MPI_ANY_SOURCE, tag, MPI_COMM_WORLD, &q[0]);
            MPI_Send(sb[0], (int)n_out, MPI_BYTE, to, tag, MPI_COMM_WORLD);
            MPI_Wait(&q[0], &st);
            break;
        default:
            MPI_Issend(sb[0], (int)n_out, MPI_BYTE, to, tag, MPI_COMM_WORLD, &q[1]);
            MPI_Recv(rb[0], (int)cap, MPI_BYTE, from, tag, MPI_COMM_WORLD, &st);
            MPI_Wait(&q[1], MPI_STATUS_IGNORE);
            break;
        }
        check(rb[0], n_in, r, from, &st, 1);
        bytes += n_in;
        moved++;
        r++;
    }
    long total = 0, total_bytes = 0;
    MPI_Reduce(&moved, &total, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    MPI_Reduce(&bytes, &total_bytes, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (me == 0)
        printf("stress: %ld messages, %.1f MB received and checked by %d ranks\n", total, total_bytes / 1e6, np);
    for (int i = 0; i < BATCH; i++) { free(sb[i]); free(rb[i]); }
    MPI_Finalize();
    return 0;
}

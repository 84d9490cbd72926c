/*
 * memcpy.c — the physical ceiling of a shared-memory transfer: the bandwidth
 * of one thread copying a buffer with memcpy, for the sizes bench/bandwidth
 * uses (1 B doubling up to MAXSIZE). Source and destination are separate
 * buffers of the size, written once before timing; each size is copied
 * repeatedly for about 20 ms, and the best of 5 such runs is reported (the
 * copy is deterministic, so the fastest run is the one least disturbed).
 *
 *     usage: memcpy [-m MAXSIZE]     (default 4M; suffixes K and M)
 *
 * Output as bench/bandwidth's: comment lines, then "size MB/s" rows.
 * Plain C, no MPI.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static long parse_size(const char *s)
{
    char *end;
    long v = strtol(s, &end, 10);
    if (*end == 'k' || *end == 'K') v <<= 10, end++;
    else if (*end == 'm' || *end == 'M') v <<= 20, end++;
    return *end || v < 1 ? -1 : v;
}

int main(int argc, char **argv)
{
    long max = 4L << 20;
    if (argc == 3 && strcmp(argv[1], "-m") == 0)
        max = parse_size(argv[2]);
    else if (argc != 1)
        max = -1;
    if (max < 1 || max > (1L << 30)) {
        fprintf(stderr, "usage: memcpy [-m MAXSIZE]\n");
        return 2;
    }
    char *src = malloc((size_t)max), *dst = malloc((size_t)max);
    if (!src || !dst) {
        fprintf(stderr, "memcpy: cannot allocate %ld bytes twice\n", max);
        return 1;
    }
    memset(src, 's', (size_t)max);
    memset(dst, 'd', (size_t)max);
    printf("# bench/memcpy: one thread, memcpy between two buffers, best of 5 runs of ~20 ms\n");
    printf("# library: memcpy of the C library (no MPI)\n");
    printf("# size   MB/s\n");
    for (long n = 1; n <= max; n *= 2) {
        double best = 0;
        for (int run = 0; run < 5; run++) {
            long reps = 0;
            double t0 = now(), t;
            do {
                for (int k = 0; k < 16; k++) {
                    memcpy(dst, src, (size_t)n);
                    __asm__ __volatile__("" : : "r"(dst) : "memory");
                }
                reps += 16;
                t = now() - t0;
            } while (t < 0.02);
            double mbs = (double)n * (double)reps / t / 1e6;
            if (mbs > best) best = mbs;
        }
        printf("%-8ld %.2f\n", n, best);
    }
    free(src);
    free(dst);
    return 0;
}

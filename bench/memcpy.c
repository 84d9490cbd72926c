/*
 * memcpy.c — the physical ceiling of a shared-memory transfer: the bandwidth
 * of one thread copying buffers with memcpy, for the sizes bench/bandwidth
 * uses (1 B doubling up to MAXSIZE). Like bench/bandwidth, which keeps a
 * window of 64 messages in flight, each in its own buffer, it copies in turn
 * between WINDOW pairs of separate buffers of the size (so large sizes come
 * from memory, not from a cache a single pair would fit in; -w 1 gives the
 * cache-hot figure). Every buffer is written once before timing; each size is
 * copied for about 20 ms, and the best of 5 such runs is reported (the copy
 * is deterministic, so the fastest run is the one least disturbed).
 *
 *     usage: memcpy [-m MAXSIZE] [-w WINDOW]   (defaults 4M and 64)
 *
 * Output as bench/bandwidth's: comment lines, then "ROW bandwidth 1 <size> <MB/s>"
 * lines (one thread stands for the rank count).
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
    long max = 4L << 20, window = 64;
    for (int a = 1; a < argc; a++) {
        if (strcmp(argv[a], "-m") == 0 && a + 1 < argc)
            max = parse_size(argv[++a]);
        else if (strcmp(argv[a], "-w") == 0 && a + 1 < argc)
            window = parse_size(argv[++a]);
        else
            max = -1;
    }
    if (max < 1 || max > (1L << 30) || window < 1 || window > 1024) {
        fprintf(stderr, "usage: memcpy [-m MAXSIZE] [-w WINDOW]\n");
        return 2;
    }
    char *src = malloc((size_t)(max * window)), *dst = malloc((size_t)(max * window));
    if (!src || !dst) {
        fprintf(stderr, "memcpy: cannot allocate %ld bytes twice\n", max * window);
        return 1;
    }
    memset(src, 's', (size_t)(max * window));
    memset(dst, 'd', (size_t)(max * window));
    printf("# bench/memcpy: one thread, memcpy in turn between %ld pairs of buffers, best of 5 runs of ~20 ms\n", window);
    printf("# library: memcpy of the C library (no MPI)\n");
    printf("# ROW benchmark ranks size MB/s\n");
    for (long n = 1; n <= max; n *= 2) {
        double best = 0;
        for (int run = 0; run < 5; run++) {
            long reps = 0;
            double t0 = now(), t;
            do {
                for (int k = 0; k < 16; k++) {
                    long w = (reps + k) % window;
                    memcpy(dst + w * n, src + w * n, (size_t)n);
                    __asm__ __volatile__("" : : "r"(dst) : "memory");
                }
                reps += 16;
                t = now() - t0;
            } while (t < 0.02);
            double mbs = (double)n * (double)reps / t / 1e6;
            if (mbs > best) best = mbs;
        }
        printf("ROW bandwidth 1 %ld %.3f\n", n, best);
    }
    free(src);
    free(dst);
    return 0;
}

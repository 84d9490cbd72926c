/*
 * plain.h — what the benchmarks that need neither MPI nor MCAPI's headers share with the MCAPI
 * ones (bench/memcpy.c, bench/mcapi/raw_tcp.c, bench/mcapi/mcapibench.h): a monotonic clock
 * and the size option. Header-only.
 */
#ifndef FERRY_BENCH_PLAIN_H
#define FERRY_BENCH_PLAIN_H

#include <stdlib.h>
#include <time.h>

/* Seconds on the monotonic clock. */
static inline double bench_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* A byte count with an optional suffix K, M or G (powers of 1024); -1 if the text is not one. */
static inline long bench_parse_size(const char *s)
{
    char *end;
    long v = strtol(s, &end, 10);
    if (*end == 'k' || *end == 'K')
        v <<= 10, end++;
    else if (*end == 'm' || *end == 'M')
        v <<= 20, end++;
    else if (*end == 'g' || *end == 'G')
        v <<= 30, end++;
    return *end == '\0' && end != s && v >= 0 ? v : -1;
}

#endif

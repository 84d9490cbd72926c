/*
 * cacheline.c — how long one cache line takes to travel between two cores:
 * two threads bounce a counter through two flags, each on its own 128-byte
 * line (thread A raises a, waits for b to follow; thread B follows a into b).
 * One bounce moves each line once, so the one-way time is the round trip / 2.
 * This is the floor of any shared-memory message: a reader must fetch at least
 * one line the writer changed. Best of 5 runs of 2,000,000 bounces.
 *
 *     usage: cacheline            (build: gcc -O2 -pthread -o cacheline cacheline.c)
 *
 * Output: "ROW cacheline 2 64 <ns>" (one-way nanoseconds). Plain C, no MPI.
 */
#include <immintrin.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <time.h>

#define BOUNCES 2000000L

static _Alignas(128) atomic_long a;
static _Alignas(128) atomic_long b;

static void *follower(void *arg)
{
    long base = *(long *)arg;
    for (long i = base + 1; i <= base + BOUNCES; i++) {
        while (atomic_load_explicit(&a, memory_order_acquire) != i)
            _mm_pause();
        atomic_store_explicit(&b, i, memory_order_release);
    }
    return NULL;
}

int main(void)
{
    double best = 1e30;
    for (int run = 0; run < 5; run++) {
        long base = run * BOUNCES;
        pthread_t t;
        pthread_create(&t, NULL, follower, &base);
        struct timespec s, e;
        clock_gettime(CLOCK_MONOTONIC, &s);
        for (long i = base + 1; i <= base + BOUNCES; i++) {
            atomic_store_explicit(&a, i, memory_order_release);
            while (atomic_load_explicit(&b, memory_order_acquire) != i)
                _mm_pause();
        }
        clock_gettime(CLOCK_MONOTONIC, &e);
        pthread_join(t, NULL);
        double ns = ((e.tv_sec - s.tv_sec) * 1e9 + (e.tv_nsec - s.tv_nsec)) / BOUNCES / 2;
        if (ns < best)
            best = ns;
    }
    printf("# bench/cacheline: one-way time of a cache line between two threads\n");
    printf("ROW cacheline 2 64 %.1f\n", best);
    return 0;
}

/*
 * benchutil.h — what the benchmarks share: MPI start-up with the options
 * -s MINSIZE, -m MAXSIZE and -i ITERS, the comment lines that head the
 * output, the result lines and the warm-up count. Header-only.
 *
 * The output contract of every benchmark program (latency, bandwidth,
 * bibandwidth, coll, shift, jacobi, prtt), which `ferry bench` relies on:
 * one invocation is one run; rank 0 prints one line per result,
 *     ROW <benchmark> <ranks> <size> <value>
 * with the benchmark names and units of crates/ferry-model/src/results.rs;
 * every other line on stdout starts with '#'.
 *
 * Plain MPI: builds with any implementation's mpicc.
 */
#ifndef FERRY_BENCHUTIL_H
#define FERRY_BENCHUTIL_H

#include <mpi.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A byte count with an optional suffix K or M (powers of 1024); -1 if the
 * text is not one. */
static inline long bench_parse_size(const char *s)
{
    char *end;
    long v = strtol(s, &end, 10);
    if (*end == 'k' || *end == 'K')
        v *= 1024, end++;
    else if (*end == 'm' || *end == 'M')
        v *= 1024 * 1024, end++;
    return *end == '\0' && v >= 0 ? v : -1;
}

__attribute__((noreturn))
static inline void bench_usage_and_exit(const char *name, int rank)
{
    if (rank == 0)
        fprintf(stderr, "usage: %s [-s MINSIZE] [-m MAXSIZE] [-i ITERS]\n", name);
    MPI_Finalize();
    exit(2);
}

struct bench_setup {
    int rank;
    long min_size; /* -s: smallest message in bytes */
    long max_size; /* -m: largest message in bytes */
    long iters;    /* -i: timed iterations for small messages */
};

/* MPI_Init, the rank, and the options: -s (default and lowest allowed:
 * min_size), -m (default 4M, from -s up to 1G) and -i (default
 * default_iters, at least 1). Bad options print the usage on rank 0; they
 * and a job of fewer than 2 ranks end the program with status 2. */
static inline struct bench_setup bench_init(int *argc, char ***argv, const char *name,
                                            long min_size, long default_iters)
{
    struct bench_setup b = { 0, min_size, 4L << 20, default_iters };
    int size;
    MPI_Init(argc, argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &b.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    for (int a = 1; a < *argc; a++) {
        if (strcmp((*argv)[a], "-s") == 0 && a + 1 < *argc)
            b.min_size = bench_parse_size((*argv)[++a]);
        else if (strcmp((*argv)[a], "-m") == 0 && a + 1 < *argc)
            b.max_size = bench_parse_size((*argv)[++a]);
        else if (strcmp((*argv)[a], "-i") == 0 && a + 1 < *argc)
            b.iters = bench_parse_size((*argv)[++a]);
        else
            bench_usage_and_exit(name, b.rank);
    }
    if (b.min_size < min_size || b.max_size < b.min_size || b.iters <= 0 ||
        b.max_size > (1L << 30))
        bench_usage_and_exit(name, b.rank);
    if (size < 2) {
        if (b.rank == 0)
            fprintf(stderr, "%s: needs at least 2 ranks\n", name);
        MPI_Finalize();
        exit(2);
    }
    return b;
}

/* On rank 0: the comment lines that open the output,
 *     # <what, printf-formatted>
 *     # library: <first line of MPI_Get_library_version>
 *     # ROW benchmark ranks size <unit>                                 */
__attribute__((format(printf, 3, 4)))
static inline void bench_print_header(int rank, const char *unit, const char *what, ...)
{
    if (rank != 0)
        return;
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    int len;
    MPI_Get_library_version(lib, &len);
    lib[strcspn(lib, "\n")] = '\0';
    va_list ap;
    va_start(ap, what);
    printf("# ");
    vprintf(what, ap);
    printf("\n");
    va_end(ap);
    printf("# library: %s\n", lib);
    printf("# ROW benchmark ranks size %s\n", unit);
    fflush(stdout);
}

/* On rank 0: one result line, `ROW <benchmark> <ranks> <size> <value>`. */
static inline void bench_print_row(int rank, const char *benchmark, long size, double value)
{
    if (rank != 0)
        return;
    int ranks;
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    printf("ROW %s %d %ld %.3f\n", benchmark, ranks, size, value);
    fflush(stdout);
}

/* The next size of a doubling sweep that may start at 0: 0, 1, 2, 4, ... */
static inline long bench_next_size(long size)
{
    return size > 0 ? size * 2 : 1;
}

/* Untimed warm-up iterations before `n` timed ones: a tenth, at least 2. */
static inline long bench_warmup(long n)
{
    return n / 10 < 2 ? 2 : n / 10;
}

/* Timed iterations for messages of `size` bytes: `iters` up to `full_up_to`
 * bytes, then proportionally fewer, at least `at_least`. */
static inline long bench_iterations(long size, long iters, long full_up_to, long at_least)
{
    if (size <= full_up_to)
        return iters;
    long n = iters * full_up_to / size;
    return n < at_least ? at_least : n;
}

#endif

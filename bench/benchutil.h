/*
 * benchutil.h — what the point-to-point benchmarks share: MPI start-up with
 * the options -m MAXSIZE and -i ITERS, the comment lines that head the
 * output, the result rows and the warm-up count. Header-only.
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
        fprintf(stderr, "usage: %s [-m MAXSIZE] [-i ITERS]\n", name);
    MPI_Finalize();
    exit(2);
}

struct bench_setup {
    int rank;
    long max_size; /* -m: largest message in bytes */
    long iters;    /* -i: timed iterations for small messages */
};

/* MPI_Init, the rank, and the options: -m (default 4M, from min_size up to
 * 1G) and -i (default default_iters, at least 1). Bad options print the
 * usage on rank 0; they and a job of fewer than 2 ranks end the program
 * with status 2. */
static inline struct bench_setup bench_init(int *argc, char ***argv, const char *name,
                                            long min_size, long default_iters)
{
    struct bench_setup b = { 0, 4L << 20, default_iters };
    int size;
    MPI_Init(argc, argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &b.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    for (int a = 1; a < *argc; a++) {
        if (strcmp((*argv)[a], "-m") == 0 && a + 1 < *argc)
            b.max_size = bench_parse_size((*argv)[++a]);
        else if (strcmp((*argv)[a], "-i") == 0 && a + 1 < *argc)
            b.iters = bench_parse_size((*argv)[++a]);
        else
            bench_usage_and_exit(name, b.rank);
    }
    if (b.max_size < min_size || b.iters <= 0 || b.max_size > (1L << 30))
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
 *     # size  <unit>                                                    */
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
    printf("# %-6s %s\n", "size", unit);
    fflush(stdout);
}

/* One result row: message size and value. */
static inline void bench_print_row(long size, double value)
{
    printf("%-8ld %.2f\n", size, value);
    fflush(stdout);
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

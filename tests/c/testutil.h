/*
 * testutil.h — what the C integration programs share: the rank and size
 * globals, failure reporting, and a few small helpers. Header-only; each
 * program is one translation unit and defines its name first:
 *
 *     #define TEST_NAME "p2p_basic"
 *     #include "testutil.h"
 *
 * A failure prints "FAIL <name>: rank <me>, line <line>: <message>" to
 * stderr and ends the job with MPI_Abort (plain exit once `finalized` is
 * set). CHECK, CALL, TEST_INIT and xmalloc report the line they are used
 * on. Plain MPI: builds with any implementation's mpicc.
 */
#ifndef FERRY_TESTUTIL_H
#define FERRY_TESTUTIL_H

#include <mpi.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#ifndef TEST_NAME
#error "define TEST_NAME (the program's name) before including testutil.h"
#endif

/* This process's rank in MPI_COMM_WORLD and its size, set by TEST_INIT. */
static int me __attribute__((unused)) = -1;
static int np __attribute__((unused)) = 0;
/* Set to 1 after MPI_Finalize: a later failure must not call MPI_Abort. */
static int finalized = 0;

__attribute__((format(printf, 2, 3), noreturn))
static inline void fail(int line, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "FAIL %s: rank %d, line %d: ", TEST_NAME, me, line);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    fflush(stderr);
    if (!finalized)
        MPI_Abort(MPI_COMM_WORLD, 1);
    exit(1);
}

#define CHECK(cond, ...) do { if (!(cond)) fail(__LINE__, __VA_ARGS__); } while (0)
#define CALL(call) do { int rc_ = (call); \
        if (rc_ != MPI_SUCCESS) fail(__LINE__, "%s returned %d", #call, rc_); } while (0)

/* MPI_Init, then `me` and `np` from MPI_COMM_WORLD. */
#define TEST_INIT(argcp, argvp) do { \
        CALL(MPI_Init(argcp, argvp)); \
        CALL(MPI_Comm_rank(MPI_COMM_WORLD, &me)); \
        CALL(MPI_Comm_size(MPI_COMM_WORLD, &np)); } while (0)

/* The call must fail with error class `want` (under MPI_ERRORS_RETURN), and its error string
 * must be non-empty. */
static inline void expect_class(int rc, int want, const char *call, int line)
{
    if (rc == MPI_SUCCESS)
        fail(line, "%s succeeded, expected error class %d", call, want);
    int cls = -1;
    CALL(MPI_Error_class(rc, &cls));
    if (cls != want)
        fail(line, "%s: error class %d, expected %d", call, cls, want);
    char text[MPI_MAX_ERROR_STRING] = { 0 };
    int len = -1;
    CALL(MPI_Error_string(rc, text, &len));
    if (len <= 0 || len >= MPI_MAX_ERROR_STRING)
        fail(line, "%s: Error_string gave length %d", call, len);
}

#define EXPECT(want, call) expect_class((call), (want), #call, __LINE__)

/* malloc that never returns NULL (and never asks for 0 bytes); running out
 * of memory fails the test at the line of the call. */
#define xmalloc(n) xmalloc_at((n), __LINE__)
static inline void *xmalloc_at(size_t n, int line)
{
    void *p = malloc(n ? n : 1);
    if (p == NULL)
        fail(line, "malloc(%zu)", n);
    return p;
}

/* MPI_STATUSES_IGNORE read through a volatile, so that GCC does not
 * mistake the sentinel pointer for an array of zero size. */
static inline MPI_Status *statuses_ignore(void)
{
    MPI_Status *volatile sentinel = MPI_STATUSES_IGNORE;
    return sentinel;
}

/* Whether the library the program runs on is Ferry's (by its version string): for the parts
 * of a test that check what only Ferry does, also when the program was built with MPICH's
 * header. */
static inline int is_ferry(void)
{
    char v[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    CALL(MPI_Get_library_version(v, &len));
    return strncmp(v, "Ferry", 5) == 0;
}

/* A file name in /tmp that every rank of MPI_COMM_WORLD agrees on and that no other run of
 * the program uses at the same time: /tmp/ferry-TEST_NAME-NP-N.bin, N drawn by rank 0. */
static inline void shared_tmp_path(char *path, size_t n)
{
    int id = 0;
    if (me == 0)
        id = (int)time(NULL) ^ (int)clock() ^ ((int)getpid() << 16);
    CALL(MPI_Bcast(&id, 1, MPI_INT, 0, MPI_COMM_WORLD));
    snprintf(path, n, "/tmp/ferry-%s-%d-%d.bin", TEST_NAME, np, id);
}

static inline void pause_ms(int ms)
{
    struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };
    nanosleep(&ts, NULL);
}

#endif

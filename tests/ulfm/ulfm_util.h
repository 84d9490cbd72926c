/* What the fault-tolerance programs share: rank, the class of a return code, a failure
 * report that ends the process (the job goes on without it: the runner counts survivors). */
#include <mpi.h>
#include <mpi-ext.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>

static int me;

static int class_of(int rc) {
    int c = MPI_SUCCESS;
    if (rc != MPI_SUCCESS) MPI_Error_class(rc, &c);
    return c;
}

static const char *text_of(int rc) {
    static char s[MPI_MAX_ERROR_STRING];
    int n;
    s[0] = 0;
    MPI_Error_string(rc, s, &n);
    return s;
}

#define FAILF(...) do { fprintf(stderr, "FAIL %s: rank %d, line %d: ", __FILE__, me, __LINE__); fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); exit(1); } while (0)
#define EXPECT(rc, want) do { int c_ = class_of(rc); if (c_ != (want)) FAILF("%s gave class %d, wanted %d", #rc, c_, (want)); } while (0)

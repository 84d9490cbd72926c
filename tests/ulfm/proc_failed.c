/* Recovery enabled, rank size-1 dies (SIGKILL): the survivors get MPIX_ERR_PROC_FAILED from a
 * receive from it, and from a send to it;
 * MPIX_ERR_PROC_FAILED_PENDING from a non-blocking receive from any source; and a blocking
 * receive from any source fails with MPIX_ERR_PROC_FAILED. Then they finalize. */
#include <mpi.h>
#include <mpi-ext.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>

static int me;

static void expect(int rc, int want, const char *what) {
    int class = MPI_SUCCESS;
    if (rc != MPI_SUCCESS) MPI_Error_class(rc, &class);
    if (class != want) {
        char s[MPI_MAX_ERROR_STRING]; int n;
        MPI_Error_string(rc, s, &n);
        fprintf(stderr, "FAIL proc_failed: rank %d: %s gave class %d (%s), wanted %d\n", me, what, class, s, want);
        exit(1);
    }
}

int main(int argc, char **argv) {
    int size, x = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int dead = size - 1;
    MPI_Barrier(MPI_COMM_WORLD);
    if (me == dead) raise(SIGKILL);
    MPI_Status st;
    expect(MPI_Recv(&x, 1, MPI_INT, dead, 0, MPI_COMM_WORLD, &st), MPIX_ERR_PROC_FAILED, "MPI_Recv from the dead rank");
    MPI_Request r;
    expect(MPI_Irecv(&x, 1, MPI_INT, MPI_ANY_SOURCE, 5, MPI_COMM_WORLD, &r), MPIX_ERR_PROC_FAILED_PENDING, "MPI_Irecv from any source");
    expect(MPI_Recv(&x, 1, MPI_INT, MPI_ANY_SOURCE, 5, MPI_COMM_WORLD, &st), MPIX_ERR_PROC_FAILED, "MPI_Recv from any source");
    expect(MPI_Send(&x, 1, MPI_INT, dead, 0, MPI_COMM_WORLD), MPIX_ERR_PROC_FAILED, "MPI_Send to the dead rank");
    printf("ULFM-OK rank %d\n", me);
    MPI_Finalize();
    return 0;
}

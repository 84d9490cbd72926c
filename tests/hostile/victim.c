/* A job that waits while hostile peers knock on its ports, then checks that it still
 * communicates correctly. Rank 0 creates $FERRY_TEST_READY once every rank listens, and the
 * job continues when $FERRY_TEST_GO exists (all ranks wait for it). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

/* Wait for a file while staying inside MPI (probing a tag nobody sends), so connections
 * are accepted and handshakes answered as they would be in a running job. */
static void wait_for(const char *path) {
    for (int i = 0; i < 60000 && access(path, F_OK) != 0; i++) {
        int flag;
        MPI_Iprobe(MPI_ANY_SOURCE, 999, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
        usleep(1000);
    }
}

int main(int argc, char **argv) {
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        FILE *f = fopen(getenv("FERRY_TEST_READY"), "w");
        if (f) fclose(f);
    }
    wait_for(getenv("FERRY_TEST_GO"));
    MPI_Barrier(MPI_COMM_WORLD);
    /* A ring of 1000-int messages after the attack. */
    int out[1000], in[1000];
    for (int i = 0; i < 1000; i++) out[i] = rank * 1000 + i;
    MPI_Sendrecv(out, 1000, MPI_INT, (rank + 1) % size, 7, in, 1000, MPI_INT, (rank + size - 1) % size, 7,
                 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    int from = (rank + size - 1) % size;
    for (int i = 0; i < 1000; i++) {
        if (in[i] != from * 1000 + i) {
            fprintf(stderr, "FAIL rank %d: element %d is %d\n", rank, i, in[i]);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) printf("victim: ring intact after the attack\n");
    MPI_Finalize();
    return 0;
}

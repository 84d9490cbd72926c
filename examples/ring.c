/*
 * ring.c — pass a token around a ring of ranks.
 *
 * Rank 0 starts a token at 0 and sends it to rank 1; every rank receives
 * the token from its left neighbour, adds its own rank and passes it to its
 * right neighbour; the last rank hands it back to rank 0. After one lap the
 * token must hold 0 + 1 + ... + (N-1) = N(N-1)/2, which rank 0 checks.
 *
 * Build and run:
 *     bin/mpicc -o ring examples/ring.c
 *     ferry run -n 4 ./ring
 */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    const int tag = 0;
    int right = (rank + 1) % size;        /* where the token goes next */
    int left = (rank + size - 1) % size;  /* where it comes from */
    long token;

    if (rank == 0) {
        /* Rank 0 starts the lap. A non-blocking send lets a ring of one
         * rank (sending to itself) work too. */
        MPI_Request req;
        token = 0;
        printf("rank 0 of %d: starting the token at %ld, sending it to rank %d\n", size,
               token, right);
        fflush(stdout);
        MPI_Isend(&token, 1, MPI_LONG, right, tag, MPI_COMM_WORLD, &req);

        long back;
        MPI_Recv(&back, 1, MPI_LONG, left, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Wait(&req, MPI_STATUS_IGNORE);

        long expected = (long)size * (size - 1) / 2;
        printf("rank 0 of %d: the token came back from rank %d holding %ld (expected %ld): %s\n",
               size, left, back, expected, back == expected ? "correct" : "WRONG");
        fflush(stdout);
        MPI_Finalize();
        return back == expected ? 0 : 1;
    }

    /* Everyone else: receive, add our rank, pass it on. */
    MPI_Recv(&token, 1, MPI_LONG, left, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    long passed = token + rank;
    printf("rank %d of %d: received %ld from rank %d, adding %d, passing %ld to rank %d\n",
           rank, size, token, left, rank, passed, right);
    fflush(stdout);
    MPI_Send(&passed, 1, MPI_LONG, right, tag, MPI_COMM_WORLD);

    MPI_Finalize();
    return 0;
}

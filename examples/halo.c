/*
 * halo.c — 1-D halo exchange with a few Jacobi iterations.
 *
 * A rod of N_GLOBAL points is split into contiguous blocks, one per rank.
 * Its two ends are held at fixed temperatures (LEFT_END and RIGHT_END); each
 * Jacobi iteration replaces every interior point by the mean of its two
 * neighbours. To update the first and last points of its block a rank needs
 * one value from each neighbouring rank: the "halo" cells u[0] and
 * u[n + 1] around the rank's own cells u[1..n], refreshed by a halo exchange
 * before every iteration. The ranks at the ends talk to MPI_PROC_NULL,
 * which turns their outer exchange into a no-op.
 *
 * Every iteration, rank 0 collects the residual (the sum over all points of
 * the squared change) from every rank and prints it. At the end rank 0
 * gathers the whole rod, prints a checksum and compares the result with
 * the same computation done serially; the values must agree exactly.
 *
 * Only point-to-point calls are used (no collectives).
 *
 * Build and run:
 *     bin/mpicc -o halo examples/halo.c
 *     ferry run -n 4 ./halo
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N_GLOBAL   1000  /* interior points of the rod */
#define ITERATIONS 10
#define LEFT_END   1.0   /* fixed temperature left of point 0 */
#define RIGHT_END  0.0   /* fixed temperature right of point N_GLOBAL-1 */

enum { TAG_TO_LEFT = 1, TAG_TO_RIGHT = 2, TAG_RESIDUAL = 3, TAG_GATHER = 4 };

/* Initial temperature of global point g: a jagged saw-tooth between 0 and
 * 1, so that the iterations have something to smooth out. */
static double initial_value(int g)
{
    return (double)((g * 37) % 101) / 100.0;
}

/* The block of the rod owned by `rank`: first global index and length.
 * The first N_GLOBAL % size ranks get one extra point. */
static void block_of(int rank, int size, int *first, int *count)
{
    int base = N_GLOBAL / size, extra = N_GLOBAL % size;
    *count = base + (rank < extra ? 1 : 0);
    *first = rank * base + (rank < extra ? rank : extra);
}

/* One Jacobi sweep over u[1..n] (with halos u[0], u[n+1]) into v; returns
 * the sum of squared changes. Shared by the parallel and serial versions,
 * so that both do exactly the same arithmetic per point. */
static double sweep(const double *u, double *v, int n)
{
    double residual = 0.0;
    for (int i = 1; i <= n; i++) {
        v[i] = 0.5 * (u[i - 1] + u[i + 1]);
        double d = v[i] - u[i];
        residual += d * d;
    }
    return residual;
}

/* The whole computation on one process, for checking. */
static double *serial_solution(double *residuals)
{
    double *u = malloc(sizeof(double) * (N_GLOBAL + 2));
    double *v = malloc(sizeof(double) * (N_GLOBAL + 2));
    if (!u || !v)
        return NULL;
    for (int g = 0; g < N_GLOBAL; g++)
        u[g + 1] = initial_value(g);
    u[0] = v[0] = LEFT_END;
    u[N_GLOBAL + 1] = v[N_GLOBAL + 1] = RIGHT_END;
    for (int it = 0; it < ITERATIONS; it++) {
        residuals[it] = sweep(u, v, N_GLOBAL);
        double *t = u;
        u = v;
        v = t;
    }
    free(v);
    return u;
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    int first, n;
    block_of(rank, size, &first, &n);
    int left = rank > 0 ? rank - 1 : MPI_PROC_NULL;
    int right = rank < size - 1 ? rank + 1 : MPI_PROC_NULL;

    /* u[1..n] are ours; u[0] and u[n+1] are the halo cells. */
    double *u = malloc(sizeof(double) * (size_t)(n + 2));
    double *v = malloc(sizeof(double) * (size_t)(n + 2));
    if (!u || !v) {
        fprintf(stderr, "halo: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    for (int i = 1; i <= n; i++)
        u[i] = initial_value(first + i - 1);
    /* At the ends of the rod the halo holds the fixed boundary value and
     * the exchange with MPI_PROC_NULL leaves it alone. */
    u[0] = v[0] = LEFT_END;
    u[n + 1] = v[n + 1] = RIGHT_END;

    if (rank == 0)
        printf("halo: %d points on %d ranks, %d Jacobi iterations\n", N_GLOBAL, size,
               ITERATIONS);

    double residuals[ITERATIONS];
    for (int it = 0; it < ITERATIONS; it++) {
        /* Halo exchange: our first point goes left while the right
         * neighbour's first point arrives in u[n+1]; then the mirror image. */
        MPI_Sendrecv(&u[1], 1, MPI_DOUBLE, left, TAG_TO_LEFT,
                     &u[n + 1], 1, MPI_DOUBLE, right, TAG_TO_LEFT,
                     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Sendrecv(&u[n], 1, MPI_DOUBLE, right, TAG_TO_RIGHT,
                     &u[0], 1, MPI_DOUBLE, left, TAG_TO_RIGHT,
                     MPI_COMM_WORLD, MPI_STATUS_IGNORE);

        double local = sweep(u, v, n);
        double *t = u;
        u = v;
        v = t;

        /* Sum the residual on rank 0, rank by rank. */
        if (rank == 0) {
            double total = local;
            for (int r = 1; r < size; r++) {
                double part;
                MPI_Recv(&part, 1, MPI_DOUBLE, r, TAG_RESIDUAL, MPI_COMM_WORLD,
                         MPI_STATUS_IGNORE);
                total += part;
            }
            residuals[it] = total;
            printf("iteration %2d  residual %.6e\n", it + 1, total);
        } else {
            MPI_Send(&local, 1, MPI_DOUBLE, 0, TAG_RESIDUAL, MPI_COMM_WORLD);
        }
    }

    /* Gather the rod on rank 0 and check it against the serial run. */
    int ok = 1;
    if (rank == 0) {
        double *rod = malloc(sizeof(double) * N_GLOBAL);
        double serial_residuals[ITERATIONS];
        double *serial = serial_solution(serial_residuals);
        if (!rod || !serial) {
            fprintf(stderr, "halo: out of memory\n");
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        memcpy(rod, &u[1], sizeof(double) * (size_t)n);
        for (int r = 1; r < size; r++) {
            int f, c;
            block_of(r, size, &f, &c);
            MPI_Recv(&rod[f], c, MPI_DOUBLE, r, TAG_GATHER, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        }
        double checksum = 0.0;
        int mismatches = 0;
        for (int g = 0; g < N_GLOBAL; g++) {
            checksum += rod[g];
            if (rod[g] != serial[g + 1])
                mismatches++;
        }
        /* Residuals are summed in a different order, so they agree only to
         * rounding. */
        for (int it = 0; it < ITERATIONS; it++)
        {
            double diff = residuals[it] - serial_residuals[it];
            if (diff < 0)
                diff = -diff;
            if (diff > 1e-12 * serial_residuals[it])
                mismatches++;
        }
        printf("checksum %.12f\n", checksum);
        if (mismatches == 0) {
            printf("matches the serial computation\n");
        } else {
            printf("DIFFERS from the serial computation in %d places\n", mismatches);
            ok = 0;
        }
        free(rod);
        free(serial);
    } else {
        MPI_Send(&u[1], n, MPI_DOUBLE, 0, TAG_GATHER, MPI_COMM_WORLD);
    }

    free(u);
    free(v);
    MPI_Finalize();
    return ok ? 0 : 1;
}

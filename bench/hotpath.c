/*
 * hotpath.c — a fixed stream of small point-to-point calls between ranks 0
 * and 1, made to be counted (instructions per call under callgrind, see
 * bench/hotpath.sh) rather than timed.
 *
 * Phase 1, windows: WINDOWS times, rank 0 posts WIDTH 8-byte MPI_Isend to
 * rank 1 and rank 1 posts WIDTH 8-byte MPI_Irecv from rank 0, all with one
 * tag; each side closes the window with one MPI_Waitall on its WIDTH
 * requests. Rank 0 sends from a separate slot per request and rank 1
 * receives into a separate slot per request.
 *
 * Phase 2, ping-pong: PINGPONGS times, rank 0 calls MPI_Send (8 bytes) then
 * MPI_Recv; rank 1 calls MPI_Recv then MPI_Send.
 *
 * Before the phases both ranks exchange a few messages with MPI_Sendrecv and
 * meet in MPI_Barrier, so that connection set-up and other first-use costs
 * land outside the five measured entry points (MPI_Isend, MPI_Irecv,
 * MPI_Waitall, MPI_Send, MPI_Recv). There is no other call to them.
 *
 * Every message carries its sequence number and the receiver checks it
 * (within a window the one tag makes MPI's non-overtaking order assign
 * message i to receive i); any mismatch, or any MPI error, ends the program
 * with a non-zero status.
 *
 * Usage: hotpath [WINDOWS [WIDTH [PINGPONGS]]]   (default 2000 64 20000)
 * Exactly 2 ranks. Rank 0 prints the counts it ran with:
 *     # hotpath: windows 2000 width 64 pingpongs 20000
 *     # library: <first line of MPI_Get_library_version>
 *     # calls per rank: Isend 128000 Irecv 128000 Waitall 2000 Send 20000 Recv 20000
 *     # hotpath: ok
 *
 * Plain MPI: builds with any implementation's mpicc.
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* GCC 11 and later take MPI_STATUSES_IGNORE, a constant pointer, for a
 * zero-sized array and warn about MPI_Waitall writing into it. */
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 11
#pragma GCC diagnostic ignored "-Wstringop-overflow"
#endif

#define TAG 7
#define MAX_WIDTH 65536

static int check(int rc, const char *what)
{
    if (rc != MPI_SUCCESS) {
        fprintf(stderr, "hotpath: %s returned error %d\n", what, rc);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    return rc;
}

static long arg_or(int argc, char **argv, int i, long dflt, long max)
{
    if (argc <= i)
        return dflt;
    char *end;
    long v = strtol(argv[i], &end, 10);
    if (*end != '\0' || v < 0 || v > max) {
        fprintf(stderr, "hotpath: bad argument '%s' (0 to %ld)\n", argv[i], max);
        fprintf(stderr, "usage: hotpath [WINDOWS [WIDTH [PINGPONGS]]]\n");
        exit(2);
    }
    return v;
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    long windows = arg_or(argc, argv, 1, 2000, 100000000);
    long width = arg_or(argc, argv, 2, 64, MAX_WIDTH);
    long pingpongs = arg_or(argc, argv, 3, 20000, 1000000000);

    if (size != 2) {
        if (rank == 0)
            fprintf(stderr, "hotpath: needs exactly 2 ranks, got %d\n", size);
        MPI_Finalize();
        return 2;
    }
    if (width == 0)
        windows = 0;

    uint64_t *slots = calloc((size_t)(width > 0 ? width : 1), sizeof *slots);
    MPI_Request *reqs = calloc((size_t)(width > 0 ? width : 1), sizeof *reqs);
    if (!slots || !reqs) {
        fprintf(stderr, "hotpath: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    int peer = 1 - rank;
    long errors = 0;

    if (rank == 0) {
        char lib[MPI_MAX_LIBRARY_VERSION_STRING];
        int len = 0;
        MPI_Get_library_version(lib, &len);
        lib[len < MPI_MAX_LIBRARY_VERSION_STRING ? len : MPI_MAX_LIBRARY_VERSION_STRING - 1] = '\0';
        char *nl = strchr(lib, '\n');
        if (nl)
            *nl = '\0';
        printf("# hotpath: windows %ld width %ld pingpongs %ld\n", windows, width, pingpongs);
        printf("# library: %s\n", lib);
        printf("# calls per rank: Isend %ld Irecv %ld Waitall %ld Send %ld Recv %ld\n",
               windows * width, windows * width, windows, pingpongs, pingpongs);
        fflush(stdout);
    }

    /* Warm-up, outside the measured entry points. */
    for (int k = 0; k < 10; k++) {
        uint64_t out = (uint64_t)(1000 + k + rank), in = 0;
        check(MPI_Sendrecv(&out, 1, MPI_UINT64_T, peer, TAG, &in, 1, MPI_UINT64_T, peer, TAG,
                           MPI_COMM_WORLD, MPI_STATUS_IGNORE), "MPI_Sendrecv");
        if (in != (uint64_t)(1000 + k + peer))
            errors++;
    }
    check(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");

    /* Phase 1: windows of Isend / Irecv, each closed by one Waitall. */
    uint64_t seq = 0;
    for (long w = 0; w < windows; w++) {
        if (rank == 0) {
            for (long i = 0; i < width; i++) {
                slots[i] = seq + (uint64_t)i;
                check(MPI_Isend(&slots[i], 1, MPI_UINT64_T, 1, TAG, MPI_COMM_WORLD, &reqs[i]),
                      "MPI_Isend");
            }
        } else {
            for (long i = 0; i < width; i++) {
                slots[i] = UINT64_MAX;
                check(MPI_Irecv(&slots[i], 1, MPI_UINT64_T, 0, TAG, MPI_COMM_WORLD, &reqs[i]),
                      "MPI_Irecv");
            }
        }
        check(MPI_Waitall((int)width, reqs, MPI_STATUSES_IGNORE), "MPI_Waitall");
        if (rank == 1)
            for (long i = 0; i < width; i++)
                if (slots[i] != seq + (uint64_t)i)
                    errors++;
        seq += (uint64_t)width;
    }

    check(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");

    /* Phase 2: ping-pong with MPI_Send / MPI_Recv. */
    for (long k = 0; k < pingpongs; k++) {
        uint64_t v;
        if (rank == 0) {
            v = seq;
            check(MPI_Send(&v, 1, MPI_UINT64_T, 1, TAG, MPI_COMM_WORLD), "MPI_Send");
            v = 0;
            check(MPI_Recv(&v, 1, MPI_UINT64_T, 1, TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE),
                  "MPI_Recv");
            if (v != seq + 1)
                errors++;
        } else {
            v = 0;
            check(MPI_Recv(&v, 1, MPI_UINT64_T, 0, TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE),
                  "MPI_Recv");
            if (v != seq)
                errors++;
            v = seq + 1;
            check(MPI_Send(&v, 1, MPI_UINT64_T, 0, TAG, MPI_COMM_WORLD), "MPI_Send");
        }
        seq += 2;
    }

    /* Both ranks learn whether either saw wrong data. */
    long all_errors = 0;
    check(MPI_Allreduce(&errors, &all_errors, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD),
          "MPI_Allreduce");
    if (errors)
        fprintf(stderr, "hotpath: rank %d received %ld wrong values\n", rank, errors);
    if (rank == 0 && all_errors == 0) {
        printf("# hotpath: ok\n");
        fflush(stdout);
    }

    free(slots);
    free(reqs);
    MPI_Finalize();
    return all_errors ? 1 : 0;
}

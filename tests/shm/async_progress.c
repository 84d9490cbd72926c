/*
 * async_progress.c — a long message moves while both ranks stay out of MPI.
 *
 * Rank 0 starts an Isend of 4 MiB (above every eager limit) to rank 1, which
 * has posted the matching Irecv and left MPI; then neither calls MPI for up to 5 s while
 * rank 1 watches the last bytes of its receive buffer. With an asynchronous
 * progress thread the data must arrive before anyone calls MPI_Wait; without
 * one it cannot (nothing moves a rendezvous between MPI calls), which the
 * program checks too when given "none".
 *
 *     usage: async_progress expect|none
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <mpi.h>

enum { N = 4 << 20 };

static void nap_ms(int ms)
{
    struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };
    nanosleep(&ts, NULL);
}

int main(int argc, char **argv)
{
    int me, expect = argc > 1 && strcmp(argv[1], "expect") == 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    unsigned char *buf = malloc(N);
    if (!buf) MPI_Abort(MPI_COMM_WORLD, 1);
    memset(buf, me == 0 ? 0xab : 0, N);
    MPI_Request req = MPI_REQUEST_NULL;
    if (me == 1)
        MPI_Irecv(buf, N, MPI_BYTE, 0, 5, MPI_COMM_WORLD, &req);
    MPI_Barrier(MPI_COMM_WORLD);
    if (me == 0) {
        /* Let rank 1 leave MPI_Barrier first: progress inside a call does not count. */
        nap_ms(100);
        MPI_Isend(buf, N, MPI_BYTE, 1, 5, MPI_COMM_WORLD, &req);
    }
    int arrived = 0;
    if (me == 1) {
        volatile unsigned char *tail = buf + N - 64;
        for (int waited = 0; waited < (expect ? 5000 : 600) && !arrived; waited += 10) {
            nap_ms(10);
            arrived = 1;
            for (int i = 0; i < 64; i++)
                arrived &= tail[i] == 0xab;
        }
    } else {
        nap_ms(expect ? 100 : 400);
    }
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    int ok = 1;
    if (me == 1) {
        for (int i = 0; i < N; i++)
            ok &= buf[i] == 0xab;
        if (!ok)
            fprintf(stderr, "async_progress: the message arrived wrong\n");
        if (arrived != expect) {
            fprintf(stderr, "async_progress: the message %s before MPI_Wait\n", arrived ? "arrived" : "did not arrive");
            ok = 0;
        }
    }
    MPI_Bcast(&ok, 1, MPI_INT, 1, MPI_COMM_WORLD);
    if (me == 0 && ok)
        printf("async_progress: %s\n", expect ? "the message moved outside MPI calls" : "nothing moved outside MPI calls");
    free(buf);
    MPI_Finalize();
    return ok ? 0 : 1;
}

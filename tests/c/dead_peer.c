/* ranks: 3 */
/* expect: fail stderr="rank 1" within=10 */
/* env: DEAD_PEER_WAIT=recv */
/* env: DEAD_PEER_WAIT=any */
/* env: DEAD_PEER_WAIT=irecv */
/* env: DEAD_PEER_WAIT=allreduce */
/* env: FERRY_ALLREDUCE_ALGORITHM=recursive_doubling DEAD_PEER_WAIT=allreduce */
/* env: DEAD_PEER_WAIT=barrier */
/* env: DEAD_PEER_WAIT=lock */
/* env: DEAD_PEER_WAIT=flush */
/* env: DEAD_PEER_WAIT=lockloop */
/* env: FERRY_TRANSPORTS=tcp DEAD_PEER_WAIT=any */
/*
 * A rank killed with SIGKILL while the others wait for it, in the wait that
 * DEAD_PEER_WAIT names (default recv):
 *   recv       MPI_Recv from rank 1
 *   any        MPI_Recv(MPI_ANY_SOURCE)
 *   irecv      MPI_Irecv from rank 1, then MPI_Wait
 *   allreduce  MPI_Allreduce (shared segment on one host, or the schedule that
 *              FERRY_ALLREDUCE_ALGORITHM names)
 *   barrier    MPI_Barrier
 *   lock       MPI_Win_lock on rank 1's window, which rank 1 holds exclusively
 *   flush      MPI_Win_flush of a get from rank 1 (window of the user's memory)
 *   lockloop   no wait at all: MPI_Win_lock, MPI_Put, MPI_Win_unlock on rank 1's
 *              window over and over (its memory is shared, so no lock waits)
 * The job must end promptly, non-zero, with rank 1 named. The engine notices by
 * itself (a local peer's process watched, a connection closed), so the job ends
 * even under a launcher that does not (tests/dead-peer.sh runs it under Hydra
 * with -disable-auto-cleanup and under Slurm, and times it).
 *
 * Rank 1 prints "dead_peer: rank 1 killed at <seconds since the epoch>" just
 * before it kills itself, so that a script can time the detection, and writes
 * the time alone into the file DEAD_PEER_STAMP names, if set.
 */
#include <signal.h>
#include <sys/time.h>
#include <unistd.h>

#define TEST_NAME "dead_peer"
#include "testutil.h"

/* Rank 1 goes away once the others have had time to fall asleep in their wait. */
static void die_soon(void)
{
    MPI_Barrier(MPI_COMM_WORLD);
    pause_ms(400);
    struct timeval tv;
    gettimeofday(&tv, NULL);
    fprintf(stderr, "dead_peer: rank 1 killed at %ld.%06ld\n", (long)tv.tv_sec, (long)tv.tv_usec);
    fflush(stderr);
    /* A launcher that stops the job at once may drop what the rank wrote last. */
    const char *stamp = getenv("DEAD_PEER_STAMP");
    FILE *f = stamp ? fopen(stamp, "w") : NULL;
    if (f) {
        fprintf(f, "%ld.%06ld\n", (long)tv.tv_sec, (long)tv.tv_usec);
        fclose(f);
    }
    kill(getpid(), SIGKILL);
}

int main(int argc, char **argv)
{
    TEST_INIT(&argc, &argv);
    CHECK(np >= 2, "needs at least 2 ranks");
    const char *wait = getenv("DEAD_PEER_WAIT");
    if (!wait)
        wait = "recv";

    /* Traffic first, so that every route is made and every path warm. */
    int right = (me + 1) % np, left = (me + np - 1) % np, v = me, w = -1;
    CALL(MPI_Sendrecv(&v, 1, MPI_INT, right, 0, &w, 1, MPI_INT, left, 0, MPI_COMM_WORLD,
                      MPI_STATUS_IGNORE));
    for (int k = 0; k < 20; k++)
        CALL(MPI_Allreduce(&v, &w, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));

    int x = 0;
    if (!strcmp(wait, "recv") || !strcmp(wait, "any") || !strcmp(wait, "irecv")) {
        if (me == 1)
            die_soon();
        CALL(MPI_Barrier(MPI_COMM_WORLD));
        int src = !strcmp(wait, "any") ? MPI_ANY_SOURCE : 1;
        if (!strcmp(wait, "irecv")) {
            MPI_Request r;
            CALL(MPI_Irecv(&x, 1, MPI_INT, src, 0, MPI_COMM_WORLD, &r));
            MPI_Wait(&r, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(&x, 1, MPI_INT, src, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        }
    } else if (!strcmp(wait, "allreduce") || !strcmp(wait, "barrier")) {
        if (me == 1)
            die_soon();
        CALL(MPI_Barrier(MPI_COMM_WORLD));
        for (;;) {
            if (wait[0] == 'a')
                MPI_Allreduce(&v, &w, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
            else
                MPI_Barrier(MPI_COMM_WORLD);
        }
    } else if (!strcmp(wait, "lock")) {
        int *base;
        MPI_Win win;
        CALL(MPI_Win_allocate(sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win));
        if (me == 1) {
            CALL(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, win));
            die_soon();
        }
        CALL(MPI_Barrier(MPI_COMM_WORLD));
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, win);
    } else if (!strcmp(wait, "lockloop")) {
        int *base;
        MPI_Win win;
        CALL(MPI_Win_allocate(sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win));
        if (me == 1)
            die_soon();
        CALL(MPI_Barrier(MPI_COMM_WORLD));
        for (;;) {
            MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, win);
            MPI_Put(&v, 1, MPI_INT, 1, 0, 1, MPI_INT, win);
            MPI_Win_unlock(1, win);
        }
    } else if (!strcmp(wait, "flush")) {
        int mem[4] = {0};
        MPI_Win win;
        CALL(MPI_Win_create(mem, sizeof mem, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win));
        if (me == 1)
            die_soon();
        CALL(MPI_Barrier(MPI_COMM_WORLD));
        CALL(MPI_Win_lock_all(0, win));
        for (;;) {
            MPI_Get(&x, 1, MPI_INT, 1, 0, 1, MPI_INT, win);
            MPI_Win_flush(1, win);
        }
    } else {
        fail(__LINE__, "unknown DEAD_PEER_WAIT=%s", wait);
    }
    fprintf(stderr, "FAIL dead_peer: rank %d came back from a wait (%s) on a dead rank\n", me, wait);
    MPI_Finalize();
    return 1;
}

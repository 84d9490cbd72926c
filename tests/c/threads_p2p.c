/* ranks: 2 4 */
/*
 * MPI_THREAD_MULTIPLE, point to point: several threads of each rank inside
 * blocking calls at once.
 *  - 4 threads per rank play ping-pong with their partner rank's thread of
 *    the same number (blocking Send/Recv, one tag per thread), small and
 *    past-the-eager-limit messages;
 *  - receives from MPI_ANY_SOURCE in some threads while other threads send;
 *  - the deadlock case: one thread blocked in MPI_Recv for an answer that
 *    the peer sends only once another thread of this rank has sent to it.
 * A blocking call that kept the library's lock while it waits hangs here.
 */
#define TEST_NAME "threads_p2p"
#include "testutil.h"

#include <string.h>

#define NT 4
#include "threadutil.h"
#define ITER 200
#define BIG 40000 /* ints: past the eager limit */

static int value(int rank, int t, int i, int k)
{
    return rank * 1000003 + t * 10007 + i * 101 + k;
}

/* Ranks pair up (0-1, 2-3): the even one serves first. */
static void *pingpong(void *arg)
{
    int t = (int)(long)arg, peer = me ^ 1;
    int *out = xmalloc(BIG * sizeof(int)), *in = xmalloc(BIG * sizeof(int));
    for (int i = 0; i < ITER; i++) {
        int n = (i % 20 == 19) ? BIG : 1 + i % 7;
        for (int k = 0; k < n; k++)
            out[k] = value(me, t, i, k);
        MPI_Status st;
        if (me % 2 == 0) {
            CALL(MPI_Send(out, n, MPI_INT, peer, t, MPI_COMM_WORLD));
            CALL(MPI_Recv(in, n, MPI_INT, peer, t, MPI_COMM_WORLD, &st));
        } else {
            CALL(MPI_Recv(in, n, MPI_INT, peer, t, MPI_COMM_WORLD, &st));
            CALL(MPI_Send(out, n, MPI_INT, peer, t, MPI_COMM_WORLD));
        }
        CHECK(st.MPI_SOURCE == peer && st.MPI_TAG == t, "thread %d got source %d tag %d", t,
              st.MPI_SOURCE, st.MPI_TAG);
        for (int k = 0; k < n; k++)
            CHECK(in[k] == value(peer, t, i, k), "thread %d, round %d, element %d: %d", t, i, k,
                  in[k]);
    }
    free(out);
    free(in);
    return NULL;
}

/* Threads 0 and 1 receive from anyone (tags 50 and 51) what threads 2 and 3
 * of every rank send them round-robin over the ranks. */
#define ITER2 100
static int sums[NT];

static void *any_source(void *arg)
{
    int t = (int)(long)arg;
    if (t < 2) {
        /* The np senders t+2 each spread ITER2 messages evenly over the ranks. */
        int expect = ITER2, sum = 0;
        for (int i = 0; i < expect; i++) {
            int v[2];
            MPI_Status st;
            CALL(MPI_Recv(v, 2, MPI_INT, MPI_ANY_SOURCE, 50 + t, MPI_COMM_WORLD, &st));
            CHECK(st.MPI_SOURCE == v[0], "message from %d says it is from %d", st.MPI_SOURCE, v[0]);
            sum += v[1];
        }
        sums[t] = sum;
    } else {
        for (int i = 0; i < ITER2; i++) {
            int dest = i % np, v[2] = { me, i };
            CALL(MPI_Send(v, 2, MPI_INT, dest, 50 + (t - 2), MPI_COMM_WORLD));
        }
    }
    return NULL;
}

struct recv_arg {
    int source, tag, got;
};

static void *receive(void *p)
{
    struct recv_arg *a = p;
    MPI_Status st;
    CALL(MPI_Recv(&a->got, 1, MPI_INT, a->source, a->tag, MPI_COMM_WORLD, &st));
    CHECK(st.MPI_SOURCE == a->source && st.MPI_TAG == a->tag, "blocked receive got source %d tag %d",
          st.MPI_SOURCE, st.MPI_TAG);
    return NULL;
}

int main(int argc, char **argv)
{
    TEST_INIT_MULTIPLE(&argc, &argv);
    CHECK(np % 2 == 0, "needs an even number of ranks");

    run_threads(pingpong);

    run_threads(any_source);
    /* Every rank's sender t sent 0 + 1 + ... + ITER2-1 spread over the ranks;
     * receiver t of every rank together got np copies of that sum. */
    int total[2];
    CALL(MPI_Allreduce(sums, total, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    for (int t = 0; t < 2; t++)
        CHECK(total[t] == np * ITER2 * (ITER2 - 1) / 2, "receivers %d got %d in all", t, total[t]);

    /* The deadlock case, in both directions of each pair: a thread waits in
     * MPI_Recv for the peer's answer; the peer answers only once the main
     * thread here has sent to it, after the receive is blocked. */
    int peer = me ^ 1;
    for (int round = 0; round < 2; round++) {
        if (me % 2 == round) {
            pthread_t th;
            struct recv_arg a = { peer, 61, -1 };
            CHECK(pthread_create(&th, NULL, receive, &a) == 0, "pthread_create");
            pause_ms(100);
            int v = 6000 + me;
            CALL(MPI_Send(&v, 1, MPI_INT, peer, 60, MPI_COMM_WORLD));
            CHECK(pthread_join(th, NULL) == 0, "pthread_join");
            CHECK(a.got == 7000 + peer, "the answer was %d", a.got);
        } else {
            int v = -1;
            CALL(MPI_Recv(&v, 1, MPI_INT, peer, 60, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            CHECK(v == 6000 + peer, "the question was %d", v);
            v = 7000 + me;
            CALL(MPI_Send(&v, 1, MPI_INT, peer, 61, MPI_COMM_WORLD));
        }
    }

    int is_main = -1;
    CALL(MPI_Is_thread_main(&is_main));
    CHECK(is_main == 1, "Is_thread_main on the main thread gave %d", is_main);
    CALL(MPI_Finalize());
    if (me == 0)
        printf("threads_p2p: ok\n");
    return 0;
}

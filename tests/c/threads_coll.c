/* ranks: 2 4 */
/*
 * MPI_THREAD_MULTIPLE, collectives and requests:
 *  - 4 threads per rank run blocking collectives at once, each on its own
 *    duplicate of MPI_COMM_WORLD (Allreduce, Bcast, Allgatherv, Barrier);
 *  - non-blocking collectives started in one thread, waited for in another;
 *  - MPI_Wait in one thread on a receive another thread started, completed
 *    by a send made after the wait began;
 *  - Waitall/Waitany in several threads over their own requests at once.
 */
#define TEST_NAME "threads_coll"
#include "testutil.h"

#include <string.h>

#define NT 4
#include "threadutil.h"
#define ITER 100

static MPI_Comm comms[NT];

static void *collectives(void *arg)
{
    int t = (int)(long)arg;
    int *counts = xmalloc(np * sizeof(int)), *displs = xmalloc(np * sizeof(int));
    int total = 0;
    for (int r = 0; r < np; r++) {
        counts[r] = r + t + 1;
        displs[r] = total;
        total += counts[r];
    }
    int *all = xmalloc(total * sizeof(int)), mine[16];
    for (int i = 0; i < ITER; i++) {
        int x = me + t + i, sum = -1, root = i % np, b = (me == root) ? t * 7 + i : -1;
        CALL(MPI_Allreduce(&x, &sum, 1, MPI_INT, MPI_SUM, comms[t]));
        CHECK(sum == np * (np - 1) / 2 + np * (t + i), "thread %d round %d: sum %d", t, i, sum);
        CALL(MPI_Bcast(&b, 1, MPI_INT, root, comms[t]));
        CHECK(b == t * 7 + i, "thread %d round %d: bcast gave %d", t, i, b);
        for (int k = 0; k < counts[me]; k++)
            mine[k] = me * 100 + t * 10 + i + k;
        CALL(MPI_Allgatherv(mine, counts[me], MPI_INT, all, counts, displs, MPI_INT, comms[t]));
        for (int r = 0; r < np; r++)
            for (int k = 0; k < counts[r]; k++)
                CHECK(all[displs[r] + k] == r * 100 + t * 10 + i + k, "thread %d round %d: allgatherv", t, i);
        if (i % 10 == 0)
            CALL(MPI_Barrier(comms[t]));
    }
    free(counts);
    free(displs);
    free(all);
    return NULL;
}

/* Non-blocking collectives, started by the main thread, completed by these. */
static MPI_Request coll_reqs[NT];
static int coll_in[NT], coll_out[NT];

static void *wait_coll(void *arg)
{
    int t = (int)(long)arg;
    CALL(MPI_Wait(&coll_reqs[t], MPI_STATUS_IGNORE));
    CHECK(coll_reqs[t] == MPI_REQUEST_NULL, "Wait left the request set");
    CHECK(coll_out[t] == np * (np - 1) / 2 + np * t, "thread %d: iallreduce gave %d", t, coll_out[t]);
    return NULL;
}

struct wait_arg {
    MPI_Request req;
    MPI_Status st;
};

static void *wait_other(void *p)
{
    struct wait_arg *a = p;
    int is_main = -1;
    CALL(MPI_Is_thread_main(&is_main));
    CHECK(is_main == 0, "Is_thread_main on another thread gave %d", is_main);
    CALL(MPI_Wait(&a->req, &a->st));
    return NULL;
}

/* Each thread exchanges with both neighbours through its own requests. */
static void *waitall_ring(void *arg)
{
    int t = (int)(long)arg;
    int right = (me + 1) % np, left = (me + np - 1) % np;
    for (int i = 0; i < ITER; i++) {
        int out = me * 1000 + t * 100 + i, in[2] = { -1, -1 };
        MPI_Request r[4];
        CALL(MPI_Irecv(&in[0], 1, MPI_INT, left, 200 + t, MPI_COMM_WORLD, &r[0]));
        CALL(MPI_Irecv(&in[1], 1, MPI_INT, right, 300 + t, MPI_COMM_WORLD, &r[1]));
        CALL(MPI_Isend(&out, 1, MPI_INT, right, 200 + t, MPI_COMM_WORLD, &r[2]));
        CALL(MPI_Isend(&out, 1, MPI_INT, left, 300 + t, MPI_COMM_WORLD, &r[3]));
        if (i % 2) {
            CALL(MPI_Waitall(4, r, statuses_ignore()));
        } else {
            for (int k = 0; k < 4; k++) {
                int idx = -1;
                CALL(MPI_Waitany(4, r, &idx, MPI_STATUS_IGNORE));
                CHECK(idx >= 0 && idx < 4, "Waitany gave index %d", idx);
            }
        }
        CHECK(in[0] == left * 1000 + t * 100 + i && in[1] == right * 1000 + t * 100 + i,
              "thread %d round %d: got %d and %d", t, i, in[0], in[1]);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    TEST_INIT_MULTIPLE(&argc, &argv);
    int level = -1;
    CALL(MPI_Query_thread(&level));
    CHECK(level == MPI_THREAD_MULTIPLE, "Query_thread says %d", level);
    int right = (me + 1) % np, left = (me + np - 1) % np;

    for (int t = 0; t < NT; t++)
        CALL(MPI_Comm_dup(MPI_COMM_WORLD, &comms[t]));
    run_threads(collectives);

    for (int t = 0; t < NT; t++) {
        coll_in[t] = me + t;
        CALL(MPI_Iallreduce(&coll_in[t], &coll_out[t], 1, MPI_INT, MPI_SUM, comms[t], &coll_reqs[t]));
    }
    run_threads(wait_coll);
    for (int t = 0; t < NT; t++)
        CALL(MPI_Comm_free(&comms[t]));

    /* MPI_Wait in another thread on a receive this thread started; the
     * matching send leaves the left neighbour once the wait has begun. */
    pthread_t th;
    struct wait_arg w;
    int got = -1, v = 7000 + me;
    CALL(MPI_Irecv(&got, 1, MPI_INT, left, 77, MPI_COMM_WORLD, &w.req));
    CHECK(pthread_create(&th, NULL, wait_other, &w) == 0, "pthread_create");
    pause_ms(50);
    CALL(MPI_Send(&v, 1, MPI_INT, right, 77, MPI_COMM_WORLD));
    CHECK(pthread_join(th, NULL) == 0, "pthread_join");
    CHECK(w.req == MPI_REQUEST_NULL, "Wait left the request set");
    CHECK(got == 7000 + left && w.st.MPI_SOURCE == left, "waited receive got %d from %d", got,
          w.st.MPI_SOURCE);

    run_threads(waitall_ring);

    int is_main = -1;
    CALL(MPI_Is_thread_main(&is_main));
    CHECK(is_main == 1, "Is_thread_main on the main thread gave %d", is_main);
    CALL(MPI_Barrier(MPI_COMM_WORLD));
    CALL(MPI_Finalize());
    if (me == 0)
        printf("threads_coll: ok\n");
    return 0;
}

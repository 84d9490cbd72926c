/* ranks: 1 2 4 5 */
/*
 * 1000 outstanding non-blocking requests in each direction. Every rank posts
 * 1000 receives from its left neighbour (distinct tags, posted in reverse
 * tag order, some messages large enough for a rendezvous protocol) and 1000
 * sends to its right neighbour, then completes everything with one Waitall.
 * A second round completes with a Testall polling loop, a third uses
 * ANY_SOURCE receives with one tag, which must match in sending order.
 */
#include <string.h>

#define TEST_NAME "many_requests"
#include "testutil.h"

enum { NREQ = 1000, BIG = 64 * 1024 };

/* Message k: every 50th is BIG ints long, the others 1 + k % 17 ints. */
static int msg_len(int k)
{
    return k % 50 == 49 ? BIG : 1 + k % 17;
}

static int value(int src, int k, int i)
{
    return src * 1000003 + k * 1009 + i;
}

static void round_distinct_tags(int use_testall)
{
    int right = (me + 1) % np, left = (me + np - 1) % np;
    int **sbuf = xmalloc(sizeof(int *) * NREQ), **rbuf = xmalloc(sizeof(int *) * NREQ);
    MPI_Request *reqs = xmalloc(sizeof(MPI_Request) * 2 * NREQ);
    MPI_Status *sts = xmalloc(sizeof(MPI_Status) * 2 * NREQ);

    for (int k = 0; k < NREQ; k++) {
        int n = msg_len(k);
        sbuf[k] = xmalloc(sizeof(int) * (size_t)n);
        rbuf[k] = xmalloc(sizeof(int) * (size_t)n);
        for (int i = 0; i < n; i++) {
            sbuf[k][i] = value(me, k, i);
            rbuf[k][i] = -1;
        }
    }
    /* Receives in reverse tag order: receive slot s waits for tag NREQ-1-s. */
    for (int s = 0; s < NREQ; s++) {
        int k = NREQ - 1 - s;
        CALL(MPI_Irecv(rbuf[k], msg_len(k), MPI_INT, left, k, MPI_COMM_WORLD, &reqs[s]));
    }
    for (int k = 0; k < NREQ; k++)
        CALL(MPI_Isend(sbuf[k], msg_len(k), MPI_INT, right, k, MPI_COMM_WORLD,
                       &reqs[NREQ + k]));

    if (use_testall) {
        int flag = 0;
        while (!flag)
            CALL(MPI_Testall(2 * NREQ, reqs, &flag, sts));
    } else {
        CALL(MPI_Waitall(2 * NREQ, reqs, sts));
    }
    for (int s = 0; s < 2 * NREQ; s++)
        CHECK(reqs[s] == MPI_REQUEST_NULL, "request %d not reset after completion", s);
    for (int s = 0; s < NREQ; s++) {
        int k = NREQ - 1 - s, n = -1;
        CALL(MPI_Get_count(&sts[s], MPI_INT, &n));
        CHECK(sts[s].MPI_SOURCE == left && sts[s].MPI_TAG == k && n == msg_len(k),
              "receive slot %d: source %d tag %d count %d", s, sts[s].MPI_SOURCE,
              sts[s].MPI_TAG, n);
        for (int i = 0; i < n; i++)
            CHECK(rbuf[k][i] == value(left, k, i), "message %d element %d: %d", k, i,
                  rbuf[k][i]);
    }
    for (int k = 0; k < NREQ; k++) {
        free(sbuf[k]);
        free(rbuf[k]);
    }
    free(sbuf);
    free(rbuf);
    free(reqs);
    free(sts);
}

/* NREQ receives with ANY_SOURCE and one tag, then NREQ sends from the left
 * neighbour: receive k must hold message k. */
static void round_any_source(void)
{
    int right = (me + 1) % np, left = (me + np - 1) % np;
    int *in = xmalloc(sizeof(int) * 2 * NREQ), *out = xmalloc(sizeof(int) * 2 * NREQ);
    MPI_Request *reqs = xmalloc(sizeof(MPI_Request) * 2 * NREQ);
    MPI_Status *sts = xmalloc(sizeof(MPI_Status) * 2 * NREQ);
    for (int k = 0; k < NREQ; k++) {
        in[2 * k] = in[2 * k + 1] = -1;
        CALL(MPI_Irecv(&in[2 * k], 2, MPI_INT, MPI_ANY_SOURCE, 4242, MPI_COMM_WORLD, &reqs[k]));
    }
    for (int k = 0; k < NREQ; k++) {
        out[2 * k] = me;
        out[2 * k + 1] = k;
        CALL(MPI_Isend(&out[2 * k], 2, MPI_INT, right, 4242, MPI_COMM_WORLD, &reqs[NREQ + k]));
    }
    CALL(MPI_Waitall(2 * NREQ, reqs, sts));
    for (int k = 0; k < NREQ; k++)
        CHECK(in[2 * k] == left && in[2 * k + 1] == k && sts[k].MPI_SOURCE == left,
              "ANY_SOURCE receive %d got (%d, %d) from %d", k, in[2 * k], in[2 * k + 1],
              sts[k].MPI_SOURCE);
    free(in);
    free(out);
    free(reqs);
    free(sts);
}

int main(int argc, char **argv)
{
    TEST_INIT(&argc, &argv);

    round_distinct_tags(0);
    CALL(MPI_Barrier(MPI_COMM_WORLD));
    round_distinct_tags(1);
    CALL(MPI_Barrier(MPI_COMM_WORLD));
    round_any_source();

    CALL(MPI_Barrier(MPI_COMM_WORLD));
    CALL(MPI_Finalize());
    return 0;
}

/* ranks: 1 2 4 5 8 */
/*
 * Basic point-to-point: Initialized/Finalized around Init/Finalize, blocking
 * Send/Recv between every ordered pair of ranks and to self, status fields
 * and Get_count, Sendrecv and Sendrecv_replace around a ring, MPI_PROC_NULL
 * as source and destination, zero-byte messages, Isend/Irecv completed with
 * Test and Wait, Request_free on an active send, MPI_COMM_SELF.
 */
#include <string.h>

#define TEST_NAME "p2p_basic"
#include "testutil.h"

static void check_status(const MPI_Status *st, int source, int tag, MPI_Datatype type,
                         int count, int line)
{
    int n = -7;
    if (st->MPI_SOURCE != source)
        fail(line, "status source %d, expected %d", st->MPI_SOURCE, source);
    if (st->MPI_TAG != tag)
        fail(line, "status tag %d, expected %d", st->MPI_TAG, tag);
    CALL(MPI_Get_count(st, type, &n));
    if (n != count)
        fail(line, "Get_count %d, expected %d", n, count);
}

/* Every ordered pair (i, j), in one global order: i sends to j, then j answers.
 * Each rank walks the pairs it belongs to in that order, which cannot deadlock. */
static void all_pairs_blocking(void)
{
    for (int i = 0; i < np; i++) {
        for (int j = 0; j < np; j++) {
            if (i == j || (me != i && me != j))
                continue;
            int tag = 100 + i * np + j;
            int msg[4], reply[4];
            MPI_Status st;
            if (me == i) {
                int out[4] = { i, j, tag, 0x5eed };
                CALL(MPI_Send(out, 4, MPI_INT, j, tag, MPI_COMM_WORLD));
                memset(reply, 0, sizeof reply);
                CALL(MPI_Recv(reply, 4, MPI_INT, j, tag + 1000, MPI_COMM_WORLD, &st));
                check_status(&st, j, tag + 1000, MPI_INT, 4, __LINE__);
                CHECK(reply[0] == j && reply[1] == i && reply[2] == tag + 1000 &&
                      reply[3] == ~0x5eed, "bad reply from %d: %d %d %d %d",
                      j, reply[0], reply[1], reply[2], reply[3]);
            } else {
                memset(msg, 0, sizeof msg);
                /* Receive buffer larger than the message: count reports 4. */
                int big[16];
                CALL(MPI_Recv(big, 16, MPI_INT, i, tag, MPI_COMM_WORLD, &st));
                check_status(&st, i, tag, MPI_INT, 4, __LINE__);
                int bytes = -1;
                CALL(MPI_Get_count(&st, MPI_BYTE, &bytes));
                CHECK(bytes == (int)(4 * sizeof(int)), "Get_count(MPI_BYTE) %d", bytes);
                memcpy(msg, big, sizeof msg);
                CHECK(msg[0] == i && msg[1] == j && msg[2] == tag && msg[3] == 0x5eed,
                      "bad message from %d: %d %d %d %d", i, msg[0], msg[1], msg[2], msg[3]);
                int out[4] = { j, i, tag + 1000, ~0x5eed };
                CALL(MPI_Send(out, 4, MPI_INT, i, tag + 1000, MPI_COMM_WORLD));
            }
        }
    }
}

static void self_messages(void)
{
    double out[8], in[8];
    MPI_Request req;
    MPI_Status st;
    for (int k = 0; k < 8; k++) {
        out[k] = me * 10.0 + k + 0.25;
        in[k] = -1.0;
    }
    CALL(MPI_Isend(out, 8, MPI_DOUBLE, me, 5, MPI_COMM_WORLD, &req));
    CALL(MPI_Recv(in, 8, MPI_DOUBLE, me, 5, MPI_COMM_WORLD, &st));
    CALL(MPI_Wait(&req, MPI_STATUS_IGNORE));
    CHECK(req == MPI_REQUEST_NULL, "Wait did not reset the request");
    check_status(&st, me, 5, MPI_DOUBLE, 8, __LINE__);
    for (int k = 0; k < 8; k++)
        CHECK(in[k] == out[k], "self message element %d: %g", k, in[k]);

    /* Send to self through Sendrecv (blocking both ways at once). */
    int a = me + 17, b = -1;
    CALL(MPI_Sendrecv(&a, 1, MPI_INT, me, 6, &b, 1, MPI_INT, me, 6, MPI_COMM_WORLD, &st));
    CHECK(b == me + 17, "Sendrecv to self gave %d", b);
    check_status(&st, me, 6, MPI_INT, 1, __LINE__);
}

static void ring_sendrecv(void)
{
    int right = (me + 1) % np, left = (me + np - 1) % np;
    MPI_Status st;
    long out[3] = { me, 1000L * me, -me }, in[3] = { -1, -1, -1 };
    CALL(MPI_Sendrecv(out, 3, MPI_LONG, right, 20, in, 3, MPI_LONG, left, 20,
                      MPI_COMM_WORLD, &st));
    check_status(&st, left, 20, MPI_LONG, 3, __LINE__);
    CHECK(in[0] == left && in[1] == 1000L * left && in[2] == -left,
          "Sendrecv from %d gave %ld %ld %ld", left, in[0], in[1], in[2]);

    /* Sendrecv_replace: shift a 100-element array one step round the ring. */
    double buf[100];
    for (int k = 0; k < 100; k++)
        buf[k] = me * 1000.0 + k;
    CALL(MPI_Sendrecv_replace(buf, 100, MPI_DOUBLE, right, 21, left, 21, MPI_COMM_WORLD, &st));
    check_status(&st, left, 21, MPI_DOUBLE, 100, __LINE__);
    for (int k = 0; k < 100; k++)
        CHECK(buf[k] == left * 1000.0 + k, "Sendrecv_replace element %d = %g", k, buf[k]);

    /* Different tags and ANY_TAG on the receive side. */
    short s_out = (short)(me * 3), s_in = -1;
    CALL(MPI_Sendrecv(&s_out, 1, MPI_SHORT, right, 22 + me, &s_in, 1, MPI_SHORT, left,
                      MPI_ANY_TAG, MPI_COMM_WORLD, &st));
    check_status(&st, left, 22 + left, MPI_SHORT, 1, __LINE__);
    CHECK(s_in == left * 3, "Sendrecv ANY_TAG gave %d", s_in);
}

static void check_proc_null_status(const MPI_Status *st, int line)
{
    check_status(st, MPI_PROC_NULL, MPI_ANY_TAG, MPI_INT, 0, line);
}

static void proc_null(void)
{
    int buf[4] = { 1, 2, 3, 4 };
    MPI_Status st;
    MPI_Request req;

    CALL(MPI_Send(buf, 4, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD));
    CALL(MPI_Recv(buf, 4, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &st));
    check_proc_null_status(&st, __LINE__);
    CHECK(buf[0] == 1 && buf[3] == 4, "Recv from MPI_PROC_NULL modified the buffer");

    CALL(MPI_Isend(buf, 4, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &req));
    CALL(MPI_Wait(&req, &st));
    CALL(MPI_Irecv(buf, 4, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &req));
    CALL(MPI_Wait(&req, &st));
#ifndef MPICH_DEVIATIONS
    /* MPICH before 4.2 leaves source and tag 0 here (pmodels/mpich#6805). */
    check_proc_null_status(&st, __LINE__);
#endif
    CHECK(buf[0] == 1 && buf[3] == 4, "Irecv from MPI_PROC_NULL modified the buffer");

    /* Open chain: the ends talk to MPI_PROC_NULL. */
    int up = me + 1 < np ? me + 1 : MPI_PROC_NULL;
    int down = me > 0 ? me - 1 : MPI_PROC_NULL;
    int v = me * 7, got = -99;
    CALL(MPI_Sendrecv(&v, 1, MPI_INT, up, 30, &got, 1, MPI_INT, down, 30, MPI_COMM_WORLD, &st));
    if (down == MPI_PROC_NULL) {
        check_proc_null_status(&st, __LINE__);
        CHECK(got == -99, "receive from MPI_PROC_NULL wrote %d", got);
    } else {
        check_status(&st, down, 30, MPI_INT, 1, __LINE__);
        CHECK(got == down * 7, "chain value %d", got);
    }
    int r = me;
    CALL(MPI_Sendrecv_replace(&r, 1, MPI_INT, down, 31, up, 31, MPI_COMM_WORLD, &st));
    if (up == MPI_PROC_NULL) {
        check_proc_null_status(&st, __LINE__);
        CHECK(r == me, "Sendrecv_replace from MPI_PROC_NULL changed the buffer to %d", r);
    } else {
        CHECK(r == up, "Sendrecv_replace down the chain gave %d", r);
    }
}

static void zero_bytes(void)
{
    int right = (me + 1) % np, left = (me + np - 1) % np;
    MPI_Status st;
    MPI_Request reqs[2];
    int sentinel[2] = { 42, 43 };

    /* Zero-count send with a NULL buffer is valid. */
    CALL(MPI_Irecv(sentinel, 2, MPI_INT, left, 40, MPI_COMM_WORLD, &reqs[0]));
    CALL(MPI_Isend(NULL, 0, MPI_INT, right, 40, MPI_COMM_WORLD, &reqs[1]));
    MPI_Status sts[2];
    CALL(MPI_Waitall(2, reqs, sts));
    check_status(&sts[0], left, 40, MPI_INT, 0, __LINE__);
    CHECK(sentinel[0] == 42 && sentinel[1] == 43, "zero-byte receive wrote data");

    /* Blocking zero-byte round via Sendrecv, count 0 on both sides. */
    CALL(MPI_Sendrecv(NULL, 0, MPI_BYTE, right, 41, NULL, 0, MPI_BYTE, left, 41,
                      MPI_COMM_WORLD, &st));
    check_status(&st, left, 41, MPI_BYTE, 0, __LINE__);

    /* Zero-byte messages keep their order with data messages. */
    int one = 1;
    CALL(MPI_Isend(NULL, 0, MPI_INT, right, 42, MPI_COMM_WORLD, &reqs[0]));
    CALL(MPI_Isend(&one, 1, MPI_INT, right, 42, MPI_COMM_WORLD, &reqs[1]));
    int in = -1;
    CALL(MPI_Recv(&in, 1, MPI_INT, left, 42, MPI_COMM_WORLD, &st));
    check_status(&st, left, 42, MPI_INT, 0, __LINE__);
    CHECK(in == -1, "zero-byte message wrote data");
    CALL(MPI_Recv(&in, 1, MPI_INT, left, 42, MPI_COMM_WORLD, &st));
    check_status(&st, left, 42, MPI_INT, 1, __LINE__);
    CHECK(in == 1, "data message after zero-byte one gave %d", in);
    CALL(MPI_Waitall(2, reqs, statuses_ignore()));
}

static void nonblocking_test_wait(void)
{
    int right = (me + 1) % np, left = (me + np - 1) % np;
    enum { N = 1000 };
    int *out = malloc(N * sizeof(int)), *in = malloc(N * sizeof(int));
    CHECK(out && in, "malloc");
    for (int k = 0; k < N; k++) {
        out[k] = me * N + k;
        in[k] = -1;
    }
    MPI_Request rreq, sreq;
    MPI_Status st;
    CALL(MPI_Irecv(in, N, MPI_INT, left, 50, MPI_COMM_WORLD, &rreq));
    CALL(MPI_Isend(out, N, MPI_INT, right, 50, MPI_COMM_WORLD, &sreq));
    int flag = 0;
    while (!flag) {
        CALL(MPI_Test(&rreq, &flag, &st));

    }
    CHECK(rreq == MPI_REQUEST_NULL, "Test with flag=1 did not reset the request");
    check_status(&st, left, 50, MPI_INT, N, __LINE__);
    for (int k = 0; k < N; k++)
        CHECK(in[k] == left * N + k, "Irecv element %d = %d", k, in[k]);
    CALL(MPI_Wait(&sreq, MPI_STATUS_IGNORE));
    /* Test on MPI_REQUEST_NULL: flag set, empty status. */
    flag = 0;
    CALL(MPI_Test(&rreq, &flag, &st));
    CHECK(flag == 1, "Test on MPI_REQUEST_NULL gave flag 0");
    CHECK(st.MPI_SOURCE == MPI_ANY_SOURCE && st.MPI_TAG == MPI_ANY_TAG,
          "Test on MPI_REQUEST_NULL: status source %d tag %d", st.MPI_SOURCE, st.MPI_TAG);
    free(out);
    free(in);
}

/* Request_free on an active send: the message still arrives. The sender
 * learns that its buffer is free from the reply. */
static void request_free_send(void)
{
    int right = (me + 1) % np, left = (me + np - 1) % np;
    int out = 4242 + me, in = -1, ack = -1;
    MPI_Request req;
    CALL(MPI_Isend(&out, 1, MPI_INT, right, 60, MPI_COMM_WORLD, &req));
    CALL(MPI_Request_free(&req));
    CHECK(req == MPI_REQUEST_NULL, "Request_free did not reset the request");
    CALL(MPI_Recv(&in, 1, MPI_INT, left, 60, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    CHECK(in == 4242 + left, "message of a freed send request: %d", in);
    CALL(MPI_Sendrecv(&in, 1, MPI_INT, left, 61, &ack, 1, MPI_INT, right, 61, MPI_COMM_WORLD,
                      MPI_STATUS_IGNORE));
    CHECK(ack == out, "acknowledgement %d", ack);
}

static void comm_self(void)
{
    int r = -1, s = -1;
    CALL(MPI_Comm_size(MPI_COMM_SELF, &s));
    CALL(MPI_Comm_rank(MPI_COMM_SELF, &r));
    CHECK(s == 1 && r == 0, "MPI_COMM_SELF size %d rank %d", s, r);
    int a = 9, b = 0;
    MPI_Status st;
    CALL(MPI_Sendrecv(&a, 1, MPI_INT, 0, 3, &b, 1, MPI_INT, 0, 3, MPI_COMM_SELF, &st));
    check_status(&st, 0, 3, MPI_INT, 1, __LINE__);
    CHECK(b == 9, "MPI_COMM_SELF message %d", b);
}

int main(int argc, char **argv)
{
    int flag = -1;
    CALL(MPI_Initialized(&flag));
    CHECK(flag == 0, "Initialized before Init gave %d", flag);
    CALL(MPI_Finalized(&flag));
    CHECK(flag == 0, "Finalized before Init gave %d", flag);

    CALL(MPI_Init(&argc, &argv));
    CALL(MPI_Initialized(&flag));
    CHECK(flag == 1, "Initialized after Init gave %d", flag);
    CALL(MPI_Finalized(&flag));
    CHECK(flag == 0, "Finalized after Init gave %d", flag);
    CALL(MPI_Comm_rank(MPI_COMM_WORLD, &me));
    CALL(MPI_Comm_size(MPI_COMM_WORLD, &np));
    CHECK(np >= 1 && me >= 0 && me < np, "rank %d of %d", me, np);

    all_pairs_blocking();
    self_messages();
    ring_sendrecv();
    proc_null();
    zero_bytes();
    nonblocking_test_wait();
    request_free_send();
    comm_self();

    CALL(MPI_Barrier(MPI_COMM_WORLD));
    CALL(MPI_Finalize());
    finalized = 1;
    CALL(MPI_Finalized(&flag));
    CHECK(flag == 1, "Finalized after Finalize gave %d", flag);
    CALL(MPI_Initialized(&flag));
    CHECK(flag == 1, "Initialized after Finalize gave %d", flag);
    return 0;
}

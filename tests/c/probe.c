/* ranks: 2 4 5 */
/*
 * Probe, Iprobe, Mprobe, Improbe, Mrecv and Imrecv, with MPI_ANY_SOURCE and
 * specific sources: sizes learned from the probe status with Get_count, a
 * probe sees the first message in order, a matched probe removes the message
 * from matching (a later Iprobe does not see it), MPI_PROC_NULL gives
 * MPI_MESSAGE_NO_PROC, Iprobe for a message nobody sent reports nothing.
 */
#include <string.h>

#define TEST_NAME "probe"
#include "testutil.h"

/* Length of the message with tag t from rank s: varies with both. */
static int len_of(int s, int t)
{
    return 1 + s * 3 + (t % 10) * 5;
}

static void check_payload(const int *buf, int n, int s, int t)
{
    for (int i = 0; i < n; i++)
        CHECK(buf[i] == s * 100000 + t * 1000 + i, "message tag %d from %d, element %d = %d",
              t, s, i, buf[i]);
}

/* Probe for a message, learn its source and size, then receive it. */
static void probe_and_recv(int source, int tag, MPI_Status *st_out)
{
    MPI_Status st;
    int n = -1;
    CALL(MPI_Probe(source, tag, MPI_COMM_WORLD, &st));
    CALL(MPI_Get_count(&st, MPI_INT, &n));
    int s = st.MPI_SOURCE, t = st.MPI_TAG;
    CHECK(source == MPI_ANY_SOURCE || s == source, "Probe source %d, asked %d", s, source);
    CHECK(tag == MPI_ANY_TAG || t == tag, "Probe tag %d, asked %d", t, tag);
    CHECK(n == len_of(s, t), "Probe count %d for tag %d from %d, expected %d", n, t, s,
          len_of(s, t));
    int *buf = xmalloc(sizeof(int) * (size_t)n);
    MPI_Status rst;
    CALL(MPI_Recv(buf, n, MPI_INT, s, t, MPI_COMM_WORLD, &rst));
    CHECK(rst.MPI_SOURCE == s && rst.MPI_TAG == t, "Recv after Probe: source %d tag %d",
          rst.MPI_SOURCE, rst.MPI_TAG);
    check_payload(buf, n, s, t);
    free(buf);
    *st_out = st;
}

static void send_set(int dest, const int *tags, int ntags, MPI_Request *reqs, int **bufs)
{
    for (int k = 0; k < ntags; k++) {
        int n = len_of(me, tags[k]);
        bufs[k] = xmalloc(sizeof(int) * (size_t)n);
        for (int i = 0; i < n; i++)
            bufs[k][i] = me * 100000 + tags[k] * 1000 + i;
        CALL(MPI_Isend(bufs[k], n, MPI_INT, dest, tags[k], MPI_COMM_WORLD, &reqs[k]));
    }
}

/* Every rank but 0 sends one message with each of tags 10..13 to rank 0;
 * rank 0 takes them through the four probe flavours with ANY_SOURCE. */
static void many_to_root(void)
{
    static const int tags[4] = { 10, 11, 12, 13 };
    if (me != 0) {
        MPI_Request reqs[4];
        int *bufs[4];
        send_set(0, tags, 4, reqs, bufs);
        CALL(MPI_Waitall(4, reqs, statuses_ignore()));
        for (int k = 0; k < 4; k++)
            free(bufs[k]);
        return;
    }
    int *seen = xmalloc(sizeof(int) * (size_t)np);
    MPI_Status st;

    /* Tag 10: blocking Probe. */
    memset(seen, 0, sizeof(int) * (size_t)np);
    for (int k = 1; k < np; k++) {
        probe_and_recv(MPI_ANY_SOURCE, 10, &st);
        CHECK(st.MPI_SOURCE > 0 && !seen[st.MPI_SOURCE], "tag 10 twice from %d", st.MPI_SOURCE);
        seen[st.MPI_SOURCE] = 1;
    }

    /* Tag 11: Iprobe polling. */
    memset(seen, 0, sizeof(int) * (size_t)np);
    for (int k = 1; k < np; k++) {
        int flag = 0;
        while (!flag)
            CALL(MPI_Iprobe(MPI_ANY_SOURCE, 11, MPI_COMM_WORLD, &flag, &st));
        int s = st.MPI_SOURCE, n = -1;
        CHECK(s > 0 && s < np && !seen[s] && st.MPI_TAG == 11, "Iprobe source %d tag %d", s,
              st.MPI_TAG);
        seen[s] = 1;
        CALL(MPI_Get_count(&st, MPI_INT, &n));
        CHECK(n == len_of(s, 11), "Iprobe count %d", n);
        int *buf = xmalloc(sizeof(int) * (size_t)n);
        CALL(MPI_Recv(buf, n, MPI_INT, s, 11, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        check_payload(buf, n, s, 11);
        free(buf);
    }

    /* Tag 12: Mprobe + Mrecv. Once matched, the message is invisible to
     * further probes: each sender sent only one tag-12 message. */
    memset(seen, 0, sizeof(int) * (size_t)np);
    for (int k = 1; k < np; k++) {
        MPI_Message msg = MPI_MESSAGE_NULL;
        CALL(MPI_Mprobe(MPI_ANY_SOURCE, 12, MPI_COMM_WORLD, &msg, &st));
        CHECK(msg != MPI_MESSAGE_NULL && msg != MPI_MESSAGE_NO_PROC, "Mprobe gave no message");
        int s = st.MPI_SOURCE, n = -1;
        CHECK(s > 0 && s < np && !seen[s] && st.MPI_TAG == 12, "Mprobe source %d tag %d", s,
              st.MPI_TAG);
        seen[s] = 1;
        int flag = 1;
        MPI_Status pst;
        CALL(MPI_Iprobe(s, 12, MPI_COMM_WORLD, &flag, &pst));
        CHECK(flag == 0, "Iprobe still sees the message taken by Mprobe");
        CALL(MPI_Get_count(&st, MPI_INT, &n));
        CHECK(n == len_of(s, 12), "Mprobe count %d", n);
        int *buf = xmalloc(sizeof(int) * (size_t)n);
        MPI_Status rst;
        CALL(MPI_Mrecv(buf, n, MPI_INT, &msg, &rst));
        CHECK(msg == MPI_MESSAGE_NULL, "Mrecv did not reset the message handle");
        CHECK(rst.MPI_SOURCE == s && rst.MPI_TAG == 12, "Mrecv status %d/%d", rst.MPI_SOURCE,
              rst.MPI_TAG);
        check_payload(buf, n, s, 12);
        free(buf);
    }

    /* Tag 13: Improbe polling + Imrecv. */
    memset(seen, 0, sizeof(int) * (size_t)np);
    for (int k = 1; k < np; k++) {
        MPI_Message msg = MPI_MESSAGE_NULL;
        int flag = 0;
        while (!flag)
            CALL(MPI_Improbe(MPI_ANY_SOURCE, 13, MPI_COMM_WORLD, &flag, &msg, &st));
        int s = st.MPI_SOURCE, n = -1;
        CHECK(s > 0 && s < np && !seen[s] && st.MPI_TAG == 13, "Improbe source %d tag %d", s,
              st.MPI_TAG);
        seen[s] = 1;
        CALL(MPI_Get_count(&st, MPI_INT, &n));
        CHECK(n == len_of(s, 13), "Improbe count %d", n);
        int *buf = xmalloc(sizeof(int) * (size_t)n);
        MPI_Request req;
        MPI_Status rst;
        CALL(MPI_Imrecv(buf, n, MPI_INT, &msg, &req));
        CHECK(msg == MPI_MESSAGE_NULL, "Imrecv did not reset the message handle");
        CALL(MPI_Wait(&req, &rst));
        CHECK(rst.MPI_SOURCE == s && rst.MPI_TAG == 13, "Imrecv status %d/%d", rst.MPI_SOURCE,
              rst.MPI_TAG);
        check_payload(buf, n, s, 13);
        free(buf);
    }
    free(seen);
}

/* Ring: each rank sends tags 21, 22, 23 to its right neighbour; the left
 * neighbour's messages are probed with ANY_TAG, which must report them in
 * sending order, and with a specific tag, which must skip earlier ones. */
static void ring_order(void)
{
    static const int tags[3] = { 21, 22, 23 };
    int right = (me + 1) % np, left = (me + np - 1) % np;
    MPI_Request reqs[3];
    int *bufs[3];
    send_set(right, tags, 3, reqs, bufs);

    MPI_Status st;
    /* A specific-tag probe skips over tag 21 and 22 to find 23. */
    CALL(MPI_Probe(left, 23, MPI_COMM_WORLD, &st));
    CHECK(st.MPI_TAG == 23 && st.MPI_SOURCE == left, "Probe(tag 23) gave tag %d", st.MPI_TAG);
    /* ANY_TAG probes: the first unreceived message each time. */
    for (int k = 0; k < 3; k++) {
        probe_and_recv(left, MPI_ANY_TAG, &st);
        CHECK(st.MPI_TAG == tags[k], "ANY_TAG probe %d gave tag %d", k, st.MPI_TAG);
    }
    CALL(MPI_Waitall(3, reqs, statuses_ignore()));
    for (int k = 0; k < 3; k++)
        free(bufs[k]);
}

static void proc_null_and_absent(void)
{
    MPI_Status st;
    int flag = 0, n = -1;
    CALL(MPI_Probe(MPI_PROC_NULL, 5, MPI_COMM_WORLD, &st));
    CALL(MPI_Get_count(&st, MPI_INT, &n));
    CHECK(st.MPI_SOURCE == MPI_PROC_NULL && st.MPI_TAG == MPI_ANY_TAG && n == 0,
          "Probe(MPI_PROC_NULL): source %d tag %d count %d", st.MPI_SOURCE, st.MPI_TAG, n);
    CALL(MPI_Iprobe(MPI_PROC_NULL, 5, MPI_COMM_WORLD, &flag, &st));
    CHECK(flag == 1 && st.MPI_SOURCE == MPI_PROC_NULL, "Iprobe(MPI_PROC_NULL): flag %d",
          flag);

    MPI_Message msg = MPI_MESSAGE_NULL;
    CALL(MPI_Mprobe(MPI_PROC_NULL, 5, MPI_COMM_WORLD, &msg, &st));
    CHECK(msg == MPI_MESSAGE_NO_PROC, "Mprobe(MPI_PROC_NULL) did not give MPI_MESSAGE_NO_PROC");
    int x = 77;
    CALL(MPI_Mrecv(&x, 1, MPI_INT, &msg, &st));
    CHECK(msg == MPI_MESSAGE_NULL, "Mrecv(MPI_MESSAGE_NO_PROC) left the handle");
    CHECK(x == 77 && st.MPI_SOURCE == MPI_PROC_NULL && st.MPI_TAG == MPI_ANY_TAG,
          "Mrecv(MPI_MESSAGE_NO_PROC): x %d source %d tag %d", x, st.MPI_SOURCE, st.MPI_TAG);
    flag = 0;
    CALL(MPI_Improbe(MPI_PROC_NULL, 5, MPI_COMM_WORLD, &flag, &msg, &st));
    CHECK(flag == 1 && msg == MPI_MESSAGE_NO_PROC, "Improbe(MPI_PROC_NULL)");
    MPI_Request req;
    CALL(MPI_Imrecv(&x, 1, MPI_INT, &msg, &req));
    CALL(MPI_Wait(&req, &st));
    CHECK(x == 77 && st.MPI_SOURCE == MPI_PROC_NULL, "Imrecv(MPI_MESSAGE_NO_PROC)");

    /* Nobody ever sends tag 999. */
    flag = 1;
    CALL(MPI_Iprobe(MPI_ANY_SOURCE, 999, MPI_COMM_WORLD, &flag, &st));
    CHECK(flag == 0, "Iprobe found a message that was never sent");
    CALL(MPI_Improbe(MPI_ANY_SOURCE, 999, MPI_COMM_WORLD, &flag, &msg, &st));
    CHECK(flag == 0, "Improbe found a message that was never sent");
}

int main(int argc, char **argv)
{
    TEST_INIT(&argc, &argv);
    CHECK(np >= 2, "needs at least 2 ranks");

    many_to_root();
    CALL(MPI_Barrier(MPI_COMM_WORLD));
    ring_order();
    CALL(MPI_Barrier(MPI_COMM_WORLD));
    proc_null_and_absent();

    CALL(MPI_Barrier(MPI_COMM_WORLD));
    CALL(MPI_Finalize());
    return 0;
}

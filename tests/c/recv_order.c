/* ranks: 2 4 */
/*
 * Receives of messages that are already here, taken in whichever way the
 * library likes (from its queue of unexpected messages or straight from
 * where they arrived), keep MPI's order: a receive gets the oldest matching
 * message from its source, an earlier posted receive that matches is served
 * before a later one, a message of another communicator or tag is left for
 * its own receive, and a synchronous send completes once received. Rank 0
 * receives; every other rank sends and then waits, so that its messages are
 * all here before rank 0 posts a receive.
 */
#define TEST_NAME "recv_order"
#include "testutil.h"

#define N 64

static void check_msg(const int *buf, const MPI_Status *st, int src, int tag, int value)
{
    int count = -1;
    MPI_Get_count(st, MPI_INT, &count);
    CHECK(st->MPI_SOURCE == src && st->MPI_TAG == tag && count == 1 && buf[0] == value,
          "expected %d from %d tag %d, got %d from %d tag %d (count %d)", value, src, tag, buf[0],
          st->MPI_SOURCE, st->MPI_TAG, count);
}

int main(int argc, char **argv)
{
    TEST_INIT(&argc, &argv);
    MPI_Comm other;
    CALL(MPI_Comm_dup(MPI_COMM_WORLD, &other));
    int buf[1], go = 0;
    MPI_Status st;
    if (me != 0) {
        /* Phase 1: tags 1..N in order, one message on the other communicator, tag 5 again,
         * and a synchronous tag 6. */
        for (int i = 1; i <= N; i++) {
            buf[0] = 1000 * me + i;
            CALL(MPI_Send(buf, 1, MPI_INT, 0, i, MPI_COMM_WORLD));
        }
        buf[0] = -me;
        CALL(MPI_Send(buf, 1, MPI_INT, 0, 1, other));
        buf[0] = 1000 * me + 500;
        CALL(MPI_Send(buf, 1, MPI_INT, 0, 5, MPI_COMM_WORLD));
        buf[0] = 1000 * me + 600;
        CALL(MPI_Ssend(buf, 1, MPI_INT, 0, 6, MPI_COMM_WORLD));
        /* Phase 2: once rank 0 has posted a receive, two messages it may match. */
        CALL(MPI_Recv(&go, 1, MPI_INT, 0, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        for (int i = 7; i <= 8; i++) {
            buf[0] = 1000 * me + i;
            CALL(MPI_Send(buf, 1, MPI_INT, 0, i, other));
        }
    } else {
        pause_ms(300);
        for (int src = 1; src < np; src++) {
            /* The oldest message first, whatever the tag, then by tag. */
            CALL(MPI_Recv(buf, 1, MPI_INT, src, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
            check_msg(buf, &st, src, 1, 1000 * src + 1);
            CALL(MPI_Recv(buf, 1, MPI_INT, src, 2, MPI_COMM_WORLD, &st));
            check_msg(buf, &st, src, 2, 1000 * src + 2);
            /* Two receives posted at once: the first posted gets the older message. */
            int a[1], b[1];
            MPI_Request r[2];
            MPI_Status sts[2];
            CALL(MPI_Irecv(a, 1, MPI_INT, src, MPI_ANY_TAG, MPI_COMM_WORLD, &r[0]));
            CALL(MPI_Irecv(b, 1, MPI_INT, src, MPI_ANY_TAG, MPI_COMM_WORLD, &r[1]));
            CALL(MPI_Waitall(2, r, sts));
            check_msg(a, &sts[0], src, 3, 1000 * src + 3);
            check_msg(b, &sts[1], src, 4, 1000 * src + 4);
            /* Tag 6 before tag 5: the older tag 5 stays for its own receive. */
            CALL(MPI_Recv(buf, 1, MPI_INT, src, 6, MPI_COMM_WORLD, &st));
            check_msg(buf, &st, src, 6, 1000 * src + 6);
            CALL(MPI_Recv(buf, 1, MPI_INT, src, 5, MPI_COMM_WORLD, &st));
            check_msg(buf, &st, src, 5, 1000 * src + 5);
            for (int i = 7; i <= N; i++) {
                CALL(MPI_Recv(buf, 1, MPI_INT, src, i, MPI_COMM_WORLD, &st));
                check_msg(buf, &st, src, i, 1000 * src + i);
            }
            /* The message on the other communicator was never taken by a receive here. */
            CALL(MPI_Recv(buf, 1, MPI_INT, src, 5, MPI_COMM_WORLD, &st));
            check_msg(buf, &st, src, 5, 1000 * src + 500);
            CALL(MPI_Recv(buf, 1, MPI_INT, src, MPI_ANY_TAG, other, &st));
            check_msg(buf, &st, src, 1, -src);
            CALL(MPI_Recv(buf, 1, MPI_INT, src, 6, MPI_COMM_WORLD, &st));
            check_msg(buf, &st, src, 6, 1000 * src + 600);
        }
        /* Phase 2: a receive posted before its message arrived is served before a later
         * receive that the message also matches. */
        for (int src = 1; src < np; src++) {
            int early[1];
            MPI_Request r;
            CALL(MPI_Irecv(early, 1, MPI_INT, src, MPI_ANY_TAG, other, &r));
            CALL(MPI_Send(&go, 1, MPI_INT, src, 99, MPI_COMM_WORLD));
            pause_ms(100);
            CALL(MPI_Recv(buf, 1, MPI_INT, src, MPI_ANY_TAG, other, &st));
            check_msg(buf, &st, src, 8, 1000 * src + 8);
            CALL(MPI_Wait(&r, &st));
            check_msg(early, &st, src, 7, 1000 * src + 7);
        }
        int flag = 1;
        CALL(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st));
        CHECK(!flag, "a message was left over from %d tag %d", st.MPI_SOURCE, st.MPI_TAG);
    }
    CALL(MPI_Comm_free(&other));
    MPI_Barrier(MPI_COMM_WORLD);
    if (me == 0)
        printf("recv_order: ok\n");
    MPI_Finalize();
    return 0;
}

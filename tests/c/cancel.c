/* ranks: 1 2 4 5 */
/*
 * Cancel of receive requests and Test_cancelled: a receive that nothing
 * matches is cancelled (Wait and Test both complete it, Test_cancelled says
 * so), the message sent later to the same source and tag is received by a
 * new receive rather than swallowed; a receive already matched (the peer's
 * Ssend completed) cannot be cancelled and delivers its data; the status of
 * an ordinary receive is not cancelled. Rank 0 pairs with rank 1, or with
 * itself when alone.
 */
#include <string.h>

#define TEST_NAME "cancel"
#include "testutil.h"

/* A receive nobody will match, cancelled and completed with Wait. */
static void cancel_unmatched_wait(void)
{
    int buf = -1, flag = -1;
    MPI_Request req;
    MPI_Status st;
    CALL(MPI_Irecv(&buf, 1, MPI_INT, MPI_ANY_SOURCE, 777, MPI_COMM_WORLD, &req));
    CALL(MPI_Cancel(&req));
    CHECK(req != MPI_REQUEST_NULL, "Cancel freed the request");
    CALL(MPI_Wait(&req, &st));
    CHECK(req == MPI_REQUEST_NULL, "Wait did not reset the cancelled request");
    CALL(MPI_Test_cancelled(&st, &flag));
    CHECK(flag == 1, "Test_cancelled after cancelling an unmatched receive gave %d", flag);
    CHECK(buf == -1, "cancelled receive wrote %d", buf);
}

/* The same, completed with a Test loop. */
static void cancel_unmatched_test(void)
{
    double buf[4] = { 0 };
    int done = 0, flag = -1;
    MPI_Request req;
    MPI_Status st;
    CALL(MPI_Irecv(buf, 4, MPI_DOUBLE, me, 778, MPI_COMM_WORLD, &req));
    CALL(MPI_Cancel(&req));
    while (!done)
        CALL(MPI_Test(&req, &done, &st));
    CHECK(req == MPI_REQUEST_NULL, "Test did not reset the cancelled request");
    CALL(MPI_Test_cancelled(&st, &flag));
    CHECK(flag == 1, "Test_cancelled after Test gave %d", flag);
}

/* A cancelled receive must not swallow the message that arrives later. The
 * partner sends tag 779 only after our "go". */
static void cancel_then_real_message(int partner)
{
    int buf = -1, flag = -1, go = 1;
    MPI_Request req, sreq = MPI_REQUEST_NULL;
    MPI_Status st;
    CALL(MPI_Irecv(&buf, 1, MPI_INT, partner, 779, MPI_COMM_WORLD, &req));
    CALL(MPI_Cancel(&req));
    CALL(MPI_Wait(&req, &st));
    CALL(MPI_Test_cancelled(&st, &flag));
    CHECK(flag == 1, "receive for a not-yet-sent message was not cancelled");

    /* Exchange "go" signals, then the real message. */
    int peer_go = 0;
    CALL(MPI_Sendrecv(&go, 1, MPI_INT, partner, 780, &peer_go, 1, MPI_INT, partner, 780,
                      MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    int out = 1000 + me;
    CALL(MPI_Isend(&out, 1, MPI_INT, partner, 779, MPI_COMM_WORLD, &sreq));
    CALL(MPI_Recv(&buf, 1, MPI_INT, partner, 779, MPI_COMM_WORLD, &st));
    CHECK(buf == 1000 + partner, "message after a cancelled receive: %d", buf);
    CALL(MPI_Test_cancelled(&st, &flag));
    CHECK(flag == 0, "Test_cancelled on an ordinary receive gave %d", flag);
    CALL(MPI_Wait(&sreq, MPI_STATUS_IGNORE));
}

/* Once the partner's Ssend has completed, our receive has been matched, and
 * cancelling it must fail: it completes normally with the data. Roles: the
 * lower rank receives, the higher sends; alone, rank 0 plays both through a
 * non-blocking Issend. */
static void cancel_matched(int partner)
{
    int buf[3] = { -1, -1, -1 }, flag = -1;
    int out[3] = { 7, 8, 9 };
    MPI_Request req, sreq;
    MPI_Status st;
    int receiver = me <= partner;
    int sender = me >= partner;

    if (receiver)
        CALL(MPI_Irecv(buf, 3, MPI_INT, partner, 781, MPI_COMM_WORLD, &req));
    if (sender) {
        if (receiver) {
            CALL(MPI_Issend(out, 3, MPI_INT, partner, 781, MPI_COMM_WORLD, &sreq));
            int done = 0;
            /* The receive is posted, so the synchronous send can complete;
             * drive progress through it. */
            while (!done)
                CALL(MPI_Test(&sreq, &done, MPI_STATUS_IGNORE));
        } else {
            CALL(MPI_Ssend(out, 3, MPI_INT, partner, 781, MPI_COMM_WORLD));
            CALL(MPI_Send(NULL, 0, MPI_INT, partner, 782, MPI_COMM_WORLD));
        }
    }
    if (receiver) {
        if (!sender)
            CALL(MPI_Recv(NULL, 0, MPI_INT, partner, 782, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        CALL(MPI_Cancel(&req));
        CALL(MPI_Wait(&req, &st));
        CALL(MPI_Test_cancelled(&st, &flag));
        CHECK(flag == 0, "a matched receive was cancelled");
        CHECK(buf[0] == 7 && buf[1] == 8 && buf[2] == 9, "matched receive data %d %d %d",
              buf[0], buf[1], buf[2]);
        CHECK(st.MPI_SOURCE == partner && st.MPI_TAG == 781, "status %d/%d", st.MPI_SOURCE,
              st.MPI_TAG);
    }
}

/* Cancelling many pending receives out of order, then a Waitall. */
static void cancel_many(void)
{
    enum { N = 32 };
    MPI_Request reqs[N];
    MPI_Status sts[N];
    int bufs[N];
    for (int k = 0; k < N; k++)
        CALL(MPI_Irecv(&bufs[k], 1, MPI_INT, MPI_ANY_SOURCE, 900 + k, MPI_COMM_WORLD, &reqs[k]));
    for (int k = N - 1; k >= 0; k -= 2)
        CALL(MPI_Cancel(&reqs[k]));
    for (int k = N - 2; k >= 0; k -= 2)
        CALL(MPI_Cancel(&reqs[k]));
    CALL(MPI_Waitall(N, reqs, sts));
    for (int k = 0; k < N; k++) {
        int flag = -1;
        CALL(MPI_Test_cancelled(&sts[k], &flag));
        CHECK(flag == 1, "receive %d of %d not cancelled", k, N);
    }
}

int main(int argc, char **argv)
{
    TEST_INIT(&argc, &argv);
    int partner = (me ^ 1) < np ? (me ^ 1) : me;

    cancel_unmatched_wait();
    cancel_unmatched_test();
    cancel_then_real_message(partner);
    cancel_matched(partner);
    cancel_many();

    CALL(MPI_Barrier(MPI_COMM_WORLD));
    CALL(MPI_Finalize());
    return 0;
}

/* ranks: 2 4 */
/*
 * Send modes. Ranks pair up (0-1, 2-3, ...).
 * - Ssend/Issend: complete only after the matching receive is posted (an
 *   Issend polled with Test stays incomplete while the receiver holds off;
 *   a message sent after a blocking Ssend cannot arrive before the receiver
 *   posts the receive that the Ssend waits for).
 * - Bsend/Ibsend with Buffer_attach/Buffer_detach: sends return before any
 *   receive is posted; detach gives back the buffer and its size, and waits
 *   until the buffered messages are gone; a large message through the buffer.
 * - Rsend/Irsend: the receiver pre-posts, then tells the sender to go.
 */
#include <string.h>

#define TEST_NAME "modes"
#include "testutil.h"

static void check_ints(const int *buf, int n, int base, const char *what)
{
    for (int i = 0; i < n; i++)
        CHECK(buf[i] == base + i, "%s: element %d = %d, expected %d", what, i, buf[i], base + i);
}

/* Issend stays incomplete while the receiver has not posted its receive. */
static void issend_waits_for_receive(int partner, int sender)
{
    int data[4] = { 11, 12, 13, 14 }, in[4] = { 0 };
    if (sender) {
        MPI_Request req;
        int done = 0;
        CALL(MPI_Issend(data, 4, MPI_INT, partner, 1, MPI_COMM_WORLD, &req));
        double t0 = MPI_Wtime();
        while (MPI_Wtime() - t0 < 0.2) {
            CALL(MPI_Test(&req, &done, MPI_STATUS_IGNORE));
            CHECK(!done, "Issend completed before the receive was posted");
            pause_ms(1);
        }
        CALL(MPI_Send(NULL, 0, MPI_INT, partner, 2, MPI_COMM_WORLD)); /* "go" */
        CALL(MPI_Wait(&req, MPI_STATUS_IGNORE));
    } else {
        CALL(MPI_Recv(NULL, 0, MPI_INT, partner, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        CALL(MPI_Recv(in, 4, MPI_INT, partner, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        check_ints(in, 4, 11, "Issend data");
    }
}

/* Blocking Ssend, then a standard send of a second message. The receiver
 * posts a receive for the second message first and watches it for a while
 * before receiving the first: if Ssend returned without a posted receive,
 * the second message would show up during that time. */
static void ssend_waits_for_receive(int partner, int sender, int n)
{
    int *data = xmalloc(sizeof(int) * (size_t)n);
    for (int i = 0; i < n; i++)
        data[i] = 100 + i;
    if (sender) {
        CALL(MPI_Ssend(data, n, MPI_INT, partner, 3, MPI_COMM_WORLD));
        int after = 99;
        CALL(MPI_Send(&after, 1, MPI_INT, partner, 4, MPI_COMM_WORLD));
    } else {
        int after = -1, done = 0;
        MPI_Request req;
        CALL(MPI_Irecv(&after, 1, MPI_INT, partner, 4, MPI_COMM_WORLD, &req));
        double t0 = MPI_Wtime();
        while (MPI_Wtime() - t0 < 0.2) {
            CALL(MPI_Test(&req, &done, MPI_STATUS_IGNORE));
            CHECK(!done, "a message sent after Ssend arrived before Ssend's receive was posted");
            pause_ms(1);
        }
        memset(data, 0, sizeof(int) * (size_t)n);
        CALL(MPI_Recv(data, n, MPI_INT, partner, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        check_ints(data, n, 100, "Ssend data");
        CALL(MPI_Wait(&req, MPI_STATUS_IGNORE));
        CHECK(after == 99, "message after Ssend: %d", after);
    }
    free(data);
}

/* Ssend whose receive is already posted completes; also to MPI_PROC_NULL. */
static void ssend_preposted(int partner, int sender)
{
    int v = 5, in = 0;
    if (sender) {
        CALL(MPI_Recv(NULL, 0, MPI_INT, partner, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        CALL(MPI_Ssend(&v, 1, MPI_INT, partner, 5, MPI_COMM_WORLD));
    } else {
        MPI_Request req;
        CALL(MPI_Irecv(&in, 1, MPI_INT, partner, 5, MPI_COMM_WORLD, &req));
        CALL(MPI_Send(NULL, 0, MPI_INT, partner, 6, MPI_COMM_WORLD));
        CALL(MPI_Wait(&req, MPI_STATUS_IGNORE));
        CHECK(in == 5, "pre-posted Ssend data %d", in);
    }
    CALL(MPI_Ssend(&v, 1, MPI_INT, MPI_PROC_NULL, 5, MPI_COMM_WORLD));
}

/* Bsend: NMSG messages go into the attached buffer and the sends return
 * while the receiver is still waiting for our "go". */
static void bsend(int partner, int sender)
{
    enum { NMSG = 10, LEN = 1000 };
    if (sender) {
        int size = NMSG * (int)(LEN * sizeof(int) + MPI_BSEND_OVERHEAD);
        char *buf = xmalloc((size_t)size);
        CALL(MPI_Buffer_attach(buf, size));
        int *data = xmalloc(sizeof(int) * LEN);
        for (int k = 0; k < NMSG; k++) {
            for (int i = 0; i < LEN; i++)
                data[i] = k * LEN + i;
            if (k % 2 == 0) {
                CALL(MPI_Bsend(data, LEN, MPI_INT, partner, 10 + k, MPI_COMM_WORLD));
            } else {
                MPI_Request req;
                CALL(MPI_Ibsend(data, LEN, MPI_INT, partner, 10 + k, MPI_COMM_WORLD, &req));
                /* A buffered send completes locally. */
                CALL(MPI_Wait(&req, MPI_STATUS_IGNORE));
            }
            /* The data were copied: scribbling over them is harmless. */
            memset(data, 0xff, sizeof(int) * LEN);
        }
        CALL(MPI_Send(NULL, 0, MPI_INT, partner, 9, MPI_COMM_WORLD)); /* "go" */
        void *back = NULL;
        int back_size = -1;
        CALL(MPI_Buffer_detach(&back, &back_size));
        CHECK(back == buf && back_size == size, "Buffer_detach gave %p/%d, attached %p/%d",
              back, back_size, (void *)buf, size);
        free(buf);
        free(data);
    } else {
        CALL(MPI_Recv(NULL, 0, MPI_INT, partner, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        int *in = xmalloc(sizeof(int) * LEN);
        for (int k = NMSG - 1; k >= 0; k--) {
            CALL(MPI_Recv(in, LEN, MPI_INT, partner, 10 + k, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            check_ints(in, LEN, k * LEN, "Bsend data");
        }
        free(in);
    }
}

/* A 1 MiB message through a buffer attached for it; detach blocks until it
 * has been delivered, which needs the receiver, which waits a little. */
static void bsend_large(int partner, int sender)
{
    const int n = 1 << 18; /* ints: 1 MiB */
    if (sender) {
        int size = n * (int)sizeof(int) + MPI_BSEND_OVERHEAD;
        char *buf = xmalloc((size_t)size);
        int *data = xmalloc(sizeof(int) * (size_t)n);
        for (int i = 0; i < n; i++)
            data[i] = 5000 + i;
        CALL(MPI_Buffer_attach(buf, size));
        CALL(MPI_Bsend(data, n, MPI_INT, partner, 20, MPI_COMM_WORLD));
        memset(data, 0, sizeof(int) * (size_t)n);
        CALL(MPI_Bsend(&n, 0, MPI_INT, MPI_PROC_NULL, 21, MPI_COMM_WORLD));
        void *back = NULL;
        int back_size = -1;
        CALL(MPI_Buffer_detach(&back, &back_size));
        CHECK(back == buf && back_size == size, "Buffer_detach gave %p/%d", back, back_size);
        free(buf);
        free(data);
    } else {
        int *in = xmalloc(sizeof(int) * (size_t)n);
        pause_ms(50);
        CALL(MPI_Recv(in, n, MPI_INT, partner, 20, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        check_ints(in, n, 5000, "large Bsend data");
        free(in);
    }
}

/* Ready mode: the receive is posted before the sender is told to go. */
static void rsend(int partner, int sender, int n, int nonblocking)
{
    int *data = xmalloc(sizeof(int) * (size_t)n);
    if (sender) {
        for (int i = 0; i < n; i++)
            data[i] = 300 + i;
        CALL(MPI_Recv(NULL, 0, MPI_INT, partner, 31, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        if (nonblocking) {
            MPI_Request req;
            CALL(MPI_Irsend(data, n, MPI_INT, partner, 30, MPI_COMM_WORLD, &req));
            CALL(MPI_Wait(&req, MPI_STATUS_IGNORE));
        } else {
            CALL(MPI_Rsend(data, n, MPI_INT, partner, 30, MPI_COMM_WORLD));
        }
    } else {
        MPI_Request req;
        MPI_Status st;
        memset(data, 0, sizeof(int) * (size_t)n);
        CALL(MPI_Irecv(data, n, MPI_INT, partner, 30, MPI_COMM_WORLD, &req));
        CALL(MPI_Send(NULL, 0, MPI_INT, partner, 31, MPI_COMM_WORLD));
        CALL(MPI_Wait(&req, &st));
        int got = -1;
        CALL(MPI_Get_count(&st, MPI_INT, &got));
        CHECK(got == n, "Rsend count %d, expected %d", got, n);
        check_ints(data, n, 300, nonblocking ? "Irsend data" : "Rsend data");
    }
    free(data);
}

int main(int argc, char **argv)
{
    TEST_INIT(&argc, &argv);
    CHECK(np % 2 == 0, "needs an even number of ranks");
    int partner = me ^ 1;

    /* Each test runs twice with the roles swapped. */
    for (int turn = 0; turn < 2; turn++) {
        int sender = (me % 2) == turn;
        issend_waits_for_receive(partner, sender);
        ssend_waits_for_receive(partner, sender, 1);
        ssend_waits_for_receive(partner, sender, 1 << 18);
        ssend_preposted(partner, sender);
        bsend(partner, sender);
        bsend_large(partner, sender);
        rsend(partner, sender, 1, 0);
        rsend(partner, sender, 1, 1);
        rsend(partner, sender, 1 << 18, 0);
        rsend(partner, sender, 1 << 18, 1);
        CALL(MPI_Barrier(MPI_COMM_WORLD));
    }

    CALL(MPI_Finalize());
    return 0;
}

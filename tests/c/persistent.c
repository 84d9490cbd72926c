/* ranks: 1 2 4 */
/*
 * Persistent point-to-point requests: a send/receive pair restarted many
 * times with new buffer contents; MPI_Startall over the four send modes and
 * a derived type; inactive requests in the Wait/Test family (complete at
 * once, empty status, handle kept, skipped by Waitany/Testsome); freeing an
 * inactive and an active persistent request; cancelling a started
 * persistent receive and restarting it; the error classes of MPI_Start and
 * MPI_Send_init. Rank r pairs with r^1, or with itself when alone.
 */
#include <string.h>

#define TEST_NAME "persistent"
#include "testutil.h"

#define N 64
#define ROUNDS 100

static int peer;

static void check_empty(const MPI_Status *st, int line)
{
    int count = -1;
    MPI_Get_count(st, MPI_INT, &count);
    if (st->MPI_SOURCE != MPI_ANY_SOURCE || st->MPI_TAG != MPI_ANY_TAG || count != 0)
        fail(line, "status not empty: source %d tag %d count %d", st->MPI_SOURCE, st->MPI_TAG, count);
}

static void restarted_pair(void)
{
    int sbuf[N], rbuf[N];
    MPI_Request rq[2];
    MPI_Status st[2];
    CALL(MPI_Recv_init(rbuf, N, MPI_INT, peer, 5, MPI_COMM_WORLD, &rq[0]));
    CALL(MPI_Send_init(sbuf, N, MPI_INT, peer, 5, MPI_COMM_WORLD, &rq[1]));
    for (int round = 0; round < ROUNDS; round++) {
        for (int i = 0; i < N; i++) {
            sbuf[i] = me * 100000 + round * 100 + i;
            rbuf[i] = -1;
        }
        CALL(MPI_Startall(2, rq));
        CALL(MPI_Waitall(2, rq, st));
        CHECK(rq[0] != MPI_REQUEST_NULL && rq[1] != MPI_REQUEST_NULL, "Waitall freed a persistent request");
        for (int i = 0; i < N; i++)
            CHECK(rbuf[i] == peer * 100000 + round * 100 + i, "round %d: rbuf[%d] = %d", round, i, rbuf[i]);
        int count = -1;
        CALL(MPI_Get_count(&st[0], MPI_INT, &count));
        CHECK(count == N && st[0].MPI_SOURCE == peer && st[0].MPI_TAG == 5, "round %d: count %d source %d tag %d", round, count,
              st[0].MPI_SOURCE, st[0].MPI_TAG);
    }
    /* Alternate Wait and Test completion of the same requests. */
    for (int round = 0; round < 10; round++) {
        sbuf[0] = round;
        CALL(MPI_Start(&rq[0]));
        CALL(MPI_Start(&rq[1]));
        int flag = 0;
        while (!flag)
            CALL(MPI_Test(&rq[0], &flag, &st[0]));
        CALL(MPI_Wait(&rq[1], MPI_STATUS_IGNORE));
        CHECK(rbuf[0] == round, "test round %d: got %d", round, rbuf[0]);
    }
    CALL(MPI_Request_free(&rq[0]));
    CALL(MPI_Request_free(&rq[1]));
    CHECK(rq[0] == MPI_REQUEST_NULL && rq[1] == MPI_REQUEST_NULL, "Request_free did not reset the handles");
}

static void mixed_modes(void)
{
    int bufsize = 4 * (N * (int)sizeof(int) + MPI_BSEND_OVERHEAD);
    void *attached = xmalloc((size_t)bufsize);
    CALL(MPI_Buffer_attach(attached, bufsize));
    MPI_Datatype every_other;
    CALL(MPI_Type_vector(N / 2, 1, 2, MPI_INT, &every_other));
    CALL(MPI_Type_commit(&every_other));
    int s[4][N], r[4][N];
    MPI_Request rr[4], sr[4];
    for (int k = 0; k < 4; k++)
        CALL(MPI_Recv_init(r[k], k == 3 ? 1 : N, k == 3 ? every_other : MPI_INT, peer, 10 + k, MPI_COMM_WORLD, &rr[k]));
    CALL(MPI_Send_init(s[0], N, MPI_INT, peer, 10, MPI_COMM_WORLD, &sr[0]));
    CALL(MPI_Ssend_init(s[1], N, MPI_INT, peer, 11, MPI_COMM_WORLD, &sr[1]));
    CALL(MPI_Bsend_init(s[2], N, MPI_INT, peer, 12, MPI_COMM_WORLD, &sr[2]));
    CALL(MPI_Rsend_init(s[3], 1, every_other, peer, 13, MPI_COMM_WORLD, &sr[3]));
    for (int round = 0; round < 20; round++) {
        for (int k = 0; k < 4; k++)
            for (int i = 0; i < N; i++) {
                s[k][i] = (me + 1) * 1000000 + round * 1000 + k * 100 + i;
                r[k][i] = -1;
            }
        CALL(MPI_Startall(4, rr));
        /* The ready send needs its receive posted: the barrier says it is. */
        CALL(MPI_Barrier(MPI_COMM_WORLD));
        CALL(MPI_Startall(4, sr));
        CALL(MPI_Waitall(4, sr, statuses_ignore()));
        CALL(MPI_Waitall(4, rr, statuses_ignore()));
        for (int k = 0; k < 4; k++)
            for (int i = 0; i < N; i++) {
                int want = (k == 3 && i % 2) ? -1 : (peer + 1) * 1000000 + round * 1000 + k * 100 + i;
                CHECK(r[k][i] == want, "round %d mode %d: r[%d] = %d, want %d", round, k, i, r[k][i], want);
            }
    }
    for (int k = 0; k < 4; k++) {
        CALL(MPI_Request_free(&rr[k]));
        CALL(MPI_Request_free(&sr[k]));
    }
    CALL(MPI_Type_free(&every_other));
    int size;
    CALL(MPI_Buffer_detach(&attached, &size));
    free(attached);
}

static void inactive(void)
{
    int x = 0, y = 0, flag = -1, index = -2, outcount = -2, indices[2];
    MPI_Request rq[2];
    MPI_Status st, sts[2];
    CALL(MPI_Recv_init(&x, 1, MPI_INT, peer, 20, MPI_COMM_WORLD, &rq[0]));
    CALL(MPI_Send_init(&y, 1, MPI_INT, peer, 20, MPI_COMM_WORLD, &rq[1]));
    MPI_Request keep = rq[0];
    memset(&st, 0x55, sizeof st);
    CALL(MPI_Wait(&rq[0], &st));
    CHECK(rq[0] == keep, "Wait changed an inactive request's handle");
    check_empty(&st, __LINE__);
    memset(&st, 0x55, sizeof st);
    CALL(MPI_Test(&rq[0], &flag, &st));
    CHECK(flag == 1, "Test on an inactive request gave flag %d", flag);
    check_empty(&st, __LINE__);
    memset(&st, 0x55, sizeof st);
    flag = -1;
    CALL(MPI_Request_get_status(rq[0], &flag, &st));
    CHECK(flag == 1, "Request_get_status on an inactive request gave flag %d", flag);
    check_empty(&st, __LINE__);
    CALL(MPI_Waitany(2, rq, &index, &st));
    CHECK(index == MPI_UNDEFINED, "Waitany over inactive requests gave index %d", index);
    flag = -1;
    CALL(MPI_Testany(2, rq, &index, &flag, &st));
    CHECK(flag == 1 && index == MPI_UNDEFINED, "Testany over inactive requests: flag %d index %d", flag, index);
    CALL(MPI_Testsome(2, rq, &outcount, indices, sts));
    CHECK(outcount == MPI_UNDEFINED, "Testsome over inactive requests gave outcount %d", outcount);
    CALL(MPI_Waitsome(2, rq, &outcount, indices, sts));
    CHECK(outcount == MPI_UNDEFINED, "Waitsome over inactive requests gave outcount %d", outcount);
    flag = -1;
    CALL(MPI_Testall(2, rq, &flag, sts));
    CHECK(flag == 1, "Testall over inactive requests gave flag %d", flag);
    CALL(MPI_Waitall(2, rq, sts));
    check_empty(&sts[0], __LINE__);
    check_empty(&sts[1], __LINE__);
    CHECK(rq[0] == keep && rq[1] != MPI_REQUEST_NULL, "Waitall reset inactive requests");

    /* Waitany and Waitsome skip inactive requests and return the started one. */
    MPI_Request two[2];
    two[0] = rq[0];
    int z = 0, to_self = 123;
    MPI_Request self_send;
    CALL(MPI_Recv_init(&z, 1, MPI_INT, me, 21, MPI_COMM_WORLD, &two[1]));
    CALL(MPI_Start(&two[1]));
    CALL(MPI_Isend(&to_self, 1, MPI_INT, me, 21, MPI_COMM_WORLD, &self_send));
    CALL(MPI_Waitany(2, two, &index, &st));
    CHECK(index == 1 && z == 123, "Waitany with one started request gave index %d (received %d)", index, z);
    CALL(MPI_Wait(&self_send, MPI_STATUS_IGNORE));
    CHECK(two[1] != MPI_REQUEST_NULL, "Waitany reset a persistent request");
    CALL(MPI_Start(&two[0]));
    CALL(MPI_Start(&rq[1]));
    CALL(MPI_Waitsome(2, two, &outcount, indices, sts));
    CHECK(outcount == 1 && indices[0] == 0, "Waitsome with one started request: outcount %d index %d", outcount, indices[0]);
    CALL(MPI_Wait(&rq[1], &st));
    CALL(MPI_Request_free(&two[1]));
    CALL(MPI_Request_free(&rq[0]));
    CALL(MPI_Request_free(&rq[1]));
}

/* An active persistent send freed still delivers; an inactive one frees at once. */
static void free_active(void)
{
    int v = 4242 + me, got = -1;
    MPI_Request s, idle;
    CALL(MPI_Send_init(&v, 1, MPI_INT, peer, 30, MPI_COMM_WORLD, &s));
    CALL(MPI_Recv_init(&got, 1, MPI_INT, peer, 31, MPI_COMM_WORLD, &idle));
    CALL(MPI_Request_free(&idle));
    CHECK(idle == MPI_REQUEST_NULL, "Request_free of an inactive request left %#x", (unsigned)idle);
    CALL(MPI_Start(&s));
    CALL(MPI_Request_free(&s));
    CHECK(s == MPI_REQUEST_NULL, "Request_free of an active request left %#x", (unsigned)s);
    CALL(MPI_Recv(&got, 1, MPI_INT, peer, 30, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    CHECK(got == 4242 + peer, "freed persistent send delivered %d", got);
    CALL(MPI_Barrier(MPI_COMM_WORLD));
}

static void cancel_started_recv(void)
{
    int x = -1, flag = -1;
    MPI_Request r;
    MPI_Status st;
    CALL(MPI_Recv_init(&x, 1, MPI_INT, peer, 40, MPI_COMM_WORLD, &r));
    CALL(MPI_Start(&r));
    CALL(MPI_Cancel(&r));
    CALL(MPI_Wait(&r, &st));
    CHECK(r != MPI_REQUEST_NULL, "Wait reset a cancelled persistent request");
    CALL(MPI_Test_cancelled(&st, &flag));
    CHECK(flag == 1, "cancelled persistent receive: Test_cancelled gave %d", flag);
    CHECK(x == -1, "cancelled receive wrote %d", x);
    /* Started again, it receives what the peer sends (only once both cancelled). */
    CALL(MPI_Barrier(MPI_COMM_WORLD));
    CALL(MPI_Start(&r));
    int v = 77 + me;
    CALL(MPI_Send(&v, 1, MPI_INT, peer, 40, MPI_COMM_WORLD));
    CALL(MPI_Wait(&r, &st));
    CALL(MPI_Test_cancelled(&st, &flag));
    CHECK(flag == 0 && x == 77 + peer, "restarted receive: cancelled %d, got %d", flag, x);
    CALL(MPI_Request_free(&r));
}

static void errors(void)
{
    int x = 0, rc, class;
    MPI_Request null = MPI_REQUEST_NULL, r, rs[2];
    CALL(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    rc = MPI_Start(&null);
    MPI_Error_class(rc, &class);
    CHECK(class == MPI_ERR_REQUEST, "MPI_Start(MPI_REQUEST_NULL) gave class %d", class);
    CALL(MPI_Recv_init(&x, 1, MPI_INT, peer, 50, MPI_COMM_WORLD, &r));
    CALL(MPI_Start(&r));
    rc = MPI_Start(&r);
    MPI_Error_class(rc, &class);
    CHECK(class == MPI_ERR_REQUEST, "MPI_Start on an active request gave class %d", class);
    rs[0] = r;
    rs[1] = MPI_REQUEST_NULL;
    CALL(MPI_Cancel(&r));
    CALL(MPI_Wait(&r, MPI_STATUS_IGNORE));
    rc = MPI_Startall(2, rs);
    MPI_Error_class(rc, &class);
    CHECK(class == MPI_ERR_REQUEST, "MPI_Startall with a null request gave class %d", class);
    CALL(MPI_Request_free(&r));
    MPI_Request bad = MPI_REQUEST_NULL;
    rc = MPI_Send_init(&x, -1, MPI_INT, peer, 1, MPI_COMM_WORLD, &bad);
    MPI_Error_class(rc, &class);
    CHECK(class == MPI_ERR_COUNT, "Send_init with count -1 gave class %d", class);
    rc = MPI_Recv_init(&x, 1, MPI_INT, np + 3, 1, MPI_COMM_WORLD, &bad);
    MPI_Error_class(rc, &class);
    CHECK(class == MPI_ERR_RANK, "Recv_init from rank %d gave class %d", np + 3, class);
    rc = MPI_Ssend_init(&x, 1, MPI_INT, peer, -5, MPI_COMM_WORLD, &bad);
    MPI_Error_class(rc, &class);
    CHECK(class == MPI_ERR_TAG, "Ssend_init with tag -5 gave class %d", class);
    CALL(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
}

int main(int argc, char **argv)
{
    TEST_INIT(&argc, &argv);
    peer = (me ^ 1) < np ? (me ^ 1) : me;
    restarted_pair();
    mixed_modes();
    inactive();
    free_active();
    cancel_started_recv();
    errors();
    CALL(MPI_Finalize());
    finalized = 1;
    return 0;
}

/* ranks: 2 3 */
/*
 * Non-blocking receives whose message is already here complete when they
 * start: every request call must treat such a request as any other. Rank 1
 * sends, then both pass a barrier, so that each MPI_Irecv of rank 0 finds its
 * message waiting. Checked: MPI_Request_get_status (twice, the request stays),
 * MPI_Test, MPI_Wait, MPI_Cancel (fails: the message is received), MPI_Request_free,
 * MPI_Waitany / MPI_Waitsome / MPI_Testall / MPI_Waitall over mixtures with
 * receives still in flight, MPI_Start on one (not persistent: MPI_ERR_REQUEST),
 * a stale copy of a completed handle (MPI_ERR_REQUEST, Ferry only: the program is
 * erroneous, and MPICH aborts), a truncated message
 * (MPI_ERR_TRUNCATE from MPI_Wait, MPI_ERR_IN_STATUS from MPI_Waitall), and
 * the source a status names on a communicator whose ranks are not the world's.
 * Ranks beyond 2 only take part in the barriers.
 */
#define TEST_NAME "recv_complete_early"
#include "testutil.h"

static void check_st(const MPI_Status *st, int src, int tag, int count_expected, const char *what)
{
    int count = -1;
    MPI_Get_count(st, MPI_INT, &count);
    CHECK(st->MPI_SOURCE == src && st->MPI_TAG == tag && count == count_expected,
          "%s: status says source %d tag %d count %d, expected %d, %d, %d", what, st->MPI_SOURCE,
          st->MPI_TAG, count, src, tag, count_expected);
}

/* Rank 1 sends `value` with `tag` on `comm` to rank `to` of it; then everyone meets. */
static void arrive(MPI_Comm comm, int sender, int to, int tag, int value)
{
    int r;
    MPI_Comm_rank(comm, &r);
    if (r == sender)
        CALL(MPI_Send(&value, 1, MPI_INT, to, tag, comm));
    CALL(MPI_Barrier(MPI_COMM_WORLD));
}

int main(int argc, char **argv)
{
    TEST_INIT(&argc, &argv);
    CALL(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MPI_Status st;
    MPI_Request r, r2, rs[4];
    int buf[4] = { 0 }, flag = 0, rc;

    /* get_status leaves the request; Wait then takes it. */
    arrive(MPI_COMM_WORLD, 1, 0, 10, 110);
    if (me == 0) {
        CALL(MPI_Irecv(buf, 1, MPI_INT, 1, 10, MPI_COMM_WORLD, &r));
        CHECK(r != MPI_REQUEST_NULL, "a started receive has a handle");
        for (int i = 0; i < 2; i++) {
            flag = 0;
            CALL(MPI_Request_get_status(r, &flag, &st));
            CHECK(flag, "get_status: complete");
            check_st(&st, 1, 10, 1, "get_status");
        }
        CALL(MPI_Wait(&r, &st));
        CHECK(r == MPI_REQUEST_NULL && buf[0] == 110, "wait: handle %#x, value %d", (unsigned)r, buf[0]);
        check_st(&st, 1, 10, 1, "wait");
    }

    /* Test; then a stale copy of the handle is refused. */
    arrive(MPI_COMM_WORLD, 1, 0, 11, 111);
    if (me == 0) {
        CALL(MPI_Irecv(buf, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &r));
        MPI_Request stale = r;
        CALL(MPI_Test(&r, &flag, &st));
        CHECK(flag && r == MPI_REQUEST_NULL && buf[0] == 111, "test: flag %d value %d", flag, buf[0]);
        check_st(&st, 1, 11, 1, "test");
#ifdef FERRY_MPI_H
        /* Erroneous: MPI allows, and Ferry makes, a clear error of it (MPICH aborts). */
        rc = MPI_Wait(&stale, &st);
        int cls = -1;
        MPI_Error_class(rc, &cls);
        CHECK(cls == MPI_ERR_REQUEST, "wait on a completed handle's copy: class %d", cls);
#else
        (void)stale;
#endif
    }

    /* Cancel fails (the message is received); MPI_Start refuses it; free forgets it. */
    arrive(MPI_COMM_WORLD, 1, 0, 12, 112);
    arrive(MPI_COMM_WORLD, 1, 0, 13, 113);
    if (me == 0) {
        CALL(MPI_Irecv(buf, 1, MPI_INT, 1, 12, MPI_COMM_WORLD, &r));
        rc = MPI_Start(&r);
        int cls = -1;
        MPI_Error_class(rc, &cls);
        CHECK(cls == MPI_ERR_REQUEST, "start of a receive that is not persistent: class %d", cls);
        CALL(MPI_Cancel(&r));
        CALL(MPI_Wait(&r, &st));
        CALL(MPI_Test_cancelled(&st, &flag));
        CHECK(!flag && buf[0] == 112, "cancel of a received message: cancelled %d value %d", flag, buf[0]);
        buf[1] = 0;
        CALL(MPI_Irecv(buf + 1, 1, MPI_INT, 1, 13, MPI_COMM_WORLD, &r));
        CALL(MPI_Request_free(&r));
        CHECK(r == MPI_REQUEST_NULL && buf[1] == 113, "free: handle %#x value %d", (unsigned)r, buf[1]);
    }

    /* Mixtures with receives still in flight: Waitany, Waitsome, Testall, Waitall. */
    arrive(MPI_COMM_WORLD, 1, 0, 20, 120);
    if (me == 0) {
        CALL(MPI_Irecv(buf, 1, MPI_INT, 1, 21, MPI_COMM_WORLD, &rs[0]));  /* not sent yet */
        CALL(MPI_Irecv(buf + 1, 1, MPI_INT, 1, 20, MPI_COMM_WORLD, &rs[1]));  /* here */
        int index = -1;
        CALL(MPI_Waitany(2, rs, &index, &st));
        CHECK(index == 1 && buf[1] == 120 && rs[1] == MPI_REQUEST_NULL, "waitany: index %d value %d", index, buf[1]);
        check_st(&st, 1, 20, 1, "waitany");
        int go = 1;
        CALL(MPI_Send(&go, 1, MPI_INT, 1, 30, MPI_COMM_WORLD));
        CALL(MPI_Wait(&rs[0], &st));
        CHECK(buf[0] == 121, "the late message: %d", buf[0]);
    } else if (me == 1) {
        int go = 0, v = 121;
        CALL(MPI_Recv(&go, 1, MPI_INT, 0, 30, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        CALL(MPI_Send(&v, 1, MPI_INT, 0, 21, MPI_COMM_WORLD));
    }
    arrive(MPI_COMM_WORLD, 1, 0, 22, 122);
    arrive(MPI_COMM_WORLD, 1, 0, 23, 123);
    if (me == 0) {
        CALL(MPI_Irecv(buf, 1, MPI_INT, 1, 22, MPI_COMM_WORLD, &rs[0]));
        rs[1] = MPI_REQUEST_NULL;
        CALL(MPI_Irecv(buf + 2, 1, MPI_INT, 1, 23, MPI_COMM_WORLD, &rs[2]));
        int out = -1, idx[3];
        MPI_Status sts[3];
        CALL(MPI_Waitsome(3, rs, &out, idx, sts));
        CHECK(out == 2 && buf[0] == 122 && buf[2] == 123, "waitsome: %d completed", out);
        for (int i = 0; i < out; i++)
            check_st(&sts[i], 1, idx[i] == 0 ? 22 : 23, 1, "waitsome");
        CALL(MPI_Waitsome(3, rs, &out, idx, sts));
        CHECK(out == MPI_UNDEFINED, "waitsome over nulls: %d", out);
    }
    arrive(MPI_COMM_WORLD, 1, 0, 24, 124);
    if (me == 0) {
        CALL(MPI_Irecv(buf, 1, MPI_INT, 1, 24, MPI_COMM_WORLD, &rs[0]));
        MPI_Status sts[2];
        rs[1] = MPI_REQUEST_NULL;
        CALL(MPI_Testall(2, rs, &flag, sts));
        CHECK(flag && rs[0] == MPI_REQUEST_NULL && buf[0] == 124, "testall: flag %d value %d", flag, buf[0]);
        check_st(&sts[0], 1, 24, 1, "testall");
    }

    /* Truncation: reported by the Wait family, with the status filled in. */
    int two[2] = { 7, 8 };
    if (me == 1)
        CALL(MPI_Send(two, 2, MPI_INT, 0, 40, MPI_COMM_WORLD));
    if (me == 1) {
        CALL(MPI_Send(two, 2, MPI_INT, 0, 41, MPI_COMM_WORLD));
        CALL(MPI_Send(two, 1, MPI_INT, 0, 42, MPI_COMM_WORLD));
    }
    CALL(MPI_Barrier(MPI_COMM_WORLD));
    if (me == 0) {
        CALL(MPI_Irecv(buf, 1, MPI_INT, 1, 40, MPI_COMM_WORLD, &r));
        rc = MPI_Wait(&r, &st);
        int cls = -1;
        MPI_Error_class(rc, &cls);
        CHECK(cls == MPI_ERR_TRUNCATE, "truncated, Wait: class %d", cls);
        CALL(MPI_Irecv(buf, 1, MPI_INT, 1, 41, MPI_COMM_WORLD, &rs[0]));
        CALL(MPI_Irecv(buf + 1, 1, MPI_INT, 1, 42, MPI_COMM_WORLD, &rs[1]));
        MPI_Status sts[2];
        rc = MPI_Waitall(2, rs, sts);
        MPI_Error_class(rc, &cls);
        CHECK(cls == MPI_ERR_IN_STATUS, "truncated, Waitall: class %d", cls);
        MPI_Error_class(sts[0].MPI_ERROR, &cls);
        CHECK(cls == MPI_ERR_TRUNCATE, "truncated, Waitall's status: class %d", cls);
        /* The other request completed (MPI_SUCCESS), or was left (MPI_ERR_PENDING, as MPICH
         * does): both are allowed. */
        if (sts[1].MPI_ERROR == MPI_ERR_PENDING)
            CALL(MPI_Wait(&rs[1], &sts[1]));
        else
            CHECK(sts[1].MPI_ERROR == MPI_SUCCESS && rs[1] == MPI_REQUEST_NULL, "the whole message: error %d", sts[1].MPI_ERROR);
        CHECK(buf[1] == 7, "the whole message: value %d", buf[1]);
        check_st(&sts[1], 1, 42, 1, "waitall beside a truncated message");
    }

    /* Sources on a communicator whose ranks run backwards. */
    MPI_Comm rev;
    CALL(MPI_Comm_split(MPI_COMM_WORLD, 0, np - me, &rev));
    int rme, rsize;
    MPI_Comm_rank(rev, &rme);
    MPI_Comm_size(rev, &rsize);
    /* World rank 1 sends to world rank 0, which are rev ranks np-2 and np-1. */
    arrive(rev, np - 2, np - 1, 50, 150);
    arrive(rev, np - 2, np - 1, 51, 151);
    if (me == 0) {
        CALL(MPI_Irecv(buf, 1, MPI_INT, np - 2, 50, rev, &r));
        CALL(MPI_Irecv(buf + 1, 1, MPI_INT, MPI_ANY_SOURCE, 51, rev, &r2));
        CALL(MPI_Wait(&r, &st));
        check_st(&st, np - 2, 50, 1, "named source on the reversed communicator");
        CALL(MPI_Wait(&r2, &st));
        check_st(&st, np - 2, 51, 1, "any source on the reversed communicator");
        CHECK(buf[0] == 150 && buf[1] == 151, "values %d %d", buf[0], buf[1]);
    }
    CALL(MPI_Comm_free(&rev));

    CALL(MPI_Barrier(MPI_COMM_WORLD));
    if (me == 0)
        printf("recv_complete_early: ok\n");
    MPI_Finalize();
    return 0;
}

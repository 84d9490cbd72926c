/* ranks: 1 2 */
/* mpich: skip MPICH does not check the handles of freed objects */
/*
 * Handles after their object is gone: a freed request, communicator or
 * datatype whose table slot now holds another object is still refused with
 * its error class, as is a forged handle of the right kind; the objects made
 * since are untouched. Requests complete from the start (a send to
 * MPI_PROC_NULL, a receive from it) report their status, reset to
 * MPI_REQUEST_NULL, and free like any other, however many there are at once.
 */
#define TEST_NAME "handles"
#include "testutil.h"

static void stale_request(void)
{
    int buf = 0, flag = -1;
    MPI_Request old, now;
    MPI_Status st;
    CALL(MPI_Irecv(&buf, 1, MPI_INT, MPI_ANY_SOURCE, 901, MPI_COMM_WORLD, &old));
    MPI_Request copy = old;
    CALL(MPI_Cancel(&old));
    CALL(MPI_Wait(&old, &st));
    /* The next request takes the slot the cancelled one left. */
    CALL(MPI_Irecv(&buf, 1, MPI_INT, MPI_ANY_SOURCE, 902, MPI_COMM_WORLD, &now));
    CHECK(now != copy, "a new request got the freed one's handle %#x", (unsigned)copy);
    EXPECT(MPI_ERR_REQUEST, MPI_Test(&copy, &flag, &st));
    EXPECT(MPI_ERR_REQUEST, MPI_Request_free(&copy));
    MPI_Request forged = now ^ 0x00400000; /* another generation of the same slot */
    EXPECT(MPI_ERR_REQUEST, MPI_Wait(&forged, &st));
    MPI_Request not_a_request = (MPI_Request)MPI_MESSAGE_NO_PROC;
    EXPECT(MPI_ERR_REQUEST, MPI_Wait(&not_a_request, &st));
    EXPECT(MPI_ERR_REQUEST, MPI_Waitall(1, &not_a_request, &st));
    CALL(MPI_Test(&now, &flag, &st));
    CHECK(flag == 0, "an unmatched receive tested complete");
    CALL(MPI_Cancel(&now));
    CALL(MPI_Wait(&now, &st));
    CALL(MPI_Test_cancelled(&st, &flag));
    CHECK(flag == 1, "the live request was not the one cancelled");
}

static void stale_comm(void)
{
    MPI_Comm a, b;
    int size = -1;
    CALL(MPI_Comm_dup(MPI_COMM_WORLD, &a));
    MPI_Comm copy = a;
    CALL(MPI_Comm_free(&a));
    CALL(MPI_Comm_dup(MPI_COMM_WORLD, &b));
    EXPECT(MPI_ERR_COMM, MPI_Comm_size(copy, &size));
    EXPECT(MPI_ERR_COMM, MPI_Send(&size, 1, MPI_INT, 0, 0, copy));
    EXPECT(MPI_ERR_COMM, MPI_Comm_size((MPI_Comm)0x84ffffff, &size));
    CALL(MPI_Comm_size(b, &size));
    CHECK(size == np, "the new communicator has size %d", size);
    CALL(MPI_Comm_free(&b));
}

static void stale_datatype(void)
{
    MPI_Datatype t, u;
    int size = -1;
    CALL(MPI_Type_contiguous(2, MPI_INT, &t));
    CALL(MPI_Type_commit(&t));
    MPI_Datatype copy = t;
    CALL(MPI_Type_free(&t));
    CALL(MPI_Type_contiguous(3, MPI_INT, &u));
    CALL(MPI_Type_commit(&u));
    EXPECT(MPI_ERR_TYPE, MPI_Type_size(copy, &size));
    EXPECT(MPI_ERR_TYPE, MPI_Send(&size, 1, copy, MPI_PROC_NULL, 0, MPI_COMM_WORLD));
    CALL(MPI_Type_size(u, &size));
    CHECK(size == 3 * (int)sizeof(int), "the new type has size %d", size);
    CALL(MPI_Type_free(&u));
}

static void complete_from_the_start(void)
{
    enum { N = 100 };
    int buf[N];
    MPI_Request reqs[2 * N];
    MPI_Status sts[2 * N];
    for (int i = 0; i < N; i++) {
        buf[i] = i;
        CALL(MPI_Isend(&buf[i], 1, MPI_INT, MPI_PROC_NULL, i, MPI_COMM_WORLD, &reqs[2 * i]));
        CALL(MPI_Irecv(&buf[i], 1, MPI_INT, MPI_PROC_NULL, i, MPI_COMM_WORLD, &reqs[2 * i + 1]));
    }
    int flag = -1, count = -1;
    MPI_Status st;
    CALL(MPI_Request_get_status(reqs[1], &flag, &st));
    CHECK(flag == 1 && st.MPI_SOURCE == MPI_PROC_NULL, "get_status of a receive from MPI_PROC_NULL: flag %d source %d", flag, st.MPI_SOURCE);
    CALL(MPI_Request_free(&reqs[0]));
    CHECK(reqs[0] == MPI_REQUEST_NULL, "Request_free left the handle");
    CALL(MPI_Waitall(2 * N, reqs, sts));
    for (int i = 0; i < 2 * N; i++)
        CHECK(reqs[i] == MPI_REQUEST_NULL, "request %d not reset by Waitall", i);
    for (int i = 1; i < 2 * N; i += 2) {
        CHECK(sts[i].MPI_SOURCE == MPI_PROC_NULL && sts[i].MPI_TAG == MPI_ANY_TAG, "receive %d: source %d tag %d", i, sts[i].MPI_SOURCE, sts[i].MPI_TAG);
        CALL(MPI_Get_count(&sts[i], MPI_INT, &count));
        CHECK(count == 0, "receive %d from MPI_PROC_NULL counted %d", i, count);
    }
    for (int i = 0; i < N; i++)
        CHECK(buf[i] == i, "a receive from MPI_PROC_NULL wrote buf[%d] = %d", i, buf[i]);
    /* The same through Wait and Test. */
    MPI_Request r;
    CALL(MPI_Isend(buf, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &r));
    CALL(MPI_Test(&r, &flag, &st));
    CHECK(flag == 1 && r == MPI_REQUEST_NULL, "Test of a send to MPI_PROC_NULL: flag %d", flag);
    CALL(MPI_Irecv(buf, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &r));
    CALL(MPI_Wait(&r, &st));
    CHECK(r == MPI_REQUEST_NULL && st.MPI_SOURCE == MPI_PROC_NULL, "Wait of a receive from MPI_PROC_NULL: source %d", st.MPI_SOURCE);
}

int main(int argc, char **argv)
{
    TEST_INIT(&argc, &argv);
    CALL(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    stale_request();
    stale_comm();
    stale_datatype();
    complete_from_the_start();
    MPI_Barrier(MPI_COMM_WORLD);
    if (me == 0)
        printf("handles: ok\n");
    MPI_Finalize();
    return 0;
}

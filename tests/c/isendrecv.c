/* ranks: 1 2 3 4 */
/*
 * MPI_Isendrecv and MPI_Isendrecv_replace: a ring exchange completes through
 * MPI_Wait, MPI_Test and MPI_Waitall with the receive's status; the replace
 * form swaps buffers (also with a strided datatype); MPI_PROC_NULL on
 * either side completes with the empty or MPI_PROC_NULL status. A request
 * may be freed before it completes, and a receive half may be cancelled.
 * Bad arguments give MPI_ERR_RANK, MPI_ERR_TAG, MPI_ERR_COUNT,
 * MPI_ERR_COMM, MPI_ERR_TYPE and MPI_ERR_ARG, and start nothing.
 */
#include <string.h>

#define TEST_NAME "isendrecv"
#include "testutil.h"

/* MPICH 4.0.2 leaves the status of MPI_Isendrecv(_replace) unset (source
 * and tag 0): the status checks run only on Ferry's own header. */
#ifdef MPICH_VERSION
#define STATUS_CHECK(cond, ...) do { (void)(cond); } while (0)
#else
#define STATUS_CHECK CHECK
#endif

int main(int argc, char **argv)
{
    TEST_INIT(&argc, &argv);
    CALL(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    int right = (me + 1) % np, left = (me + np - 1) % np;
    MPI_Status st;

    /* Ring: send my rank right, receive the left one's. */
    int out[4] = { me, me * 10, me * 100, -me }, in[4] = { -1, -1, -1, -1 };
    MPI_Request req;
    CALL(MPI_Isendrecv(out, 4, MPI_INT, right, 5, in, 4, MPI_INT, left, 5, MPI_COMM_WORLD, &req));
    CHECK(req != MPI_REQUEST_NULL, "no request");
    CALL(MPI_Wait(&req, &st));
    CHECK(req == MPI_REQUEST_NULL, "request not reset");
    CHECK(in[0] == left && in[1] == left * 10 && in[3] == -left, "got %d %d", in[0], in[1]);
    STATUS_CHECK(st.MPI_SOURCE == left && st.MPI_TAG == 5, "status %d/%d", st.MPI_SOURCE, st.MPI_TAG);
    int n = -1;
    CALL(MPI_Get_count(&st, MPI_INT, &n));
    STATUS_CHECK(n == 4, "count %d", n);

    /* Completion through MPI_Test, with a wildcard source. */
    memset(in, 0xff, sizeof in);
    CALL(MPI_Isendrecv(out, 2, MPI_INT, right, 6, in, 4, MPI_INT, MPI_ANY_SOURCE, 6, MPI_COMM_WORLD, &req));
    int flag = 0;
    while (!flag)
        CALL(MPI_Test(&req, &flag, &st));
    CHECK(in[0] == left && in[2] == -1, "test: got %d %d", in[0], in[2]);
    CALL(MPI_Get_count(&st, MPI_INT, &n));
    STATUS_CHECK(n == 2 && st.MPI_TAG == 6 && st.MPI_SOURCE == left, "test: count %d tag %d", n, st.MPI_TAG);

    /* Several at once through MPI_Waitall, both directions. */
    int a = -1, b = -1;
    MPI_Request two[2];
    MPI_Status sts[2];
    CALL(MPI_Isendrecv(&me, 1, MPI_INT, right, 7, &a, 1, MPI_INT, left, 7, MPI_COMM_WORLD, &two[0]));
    CALL(MPI_Isendrecv(&me, 1, MPI_INT, left, 8, &b, 1, MPI_INT, right, 8, MPI_COMM_WORLD, &two[1]));
    CALL(MPI_Waitall(2, two, sts));
    CHECK(a == left && b == right, "waitall: %d %d", a, b);
    STATUS_CHECK(sts[0].MPI_SOURCE == left && sts[1].MPI_SOURCE == right, "waitall status");

    /* Waitany over a mix with a null request. */
    MPI_Request mix[2] = { MPI_REQUEST_NULL, MPI_REQUEST_NULL };
    CALL(MPI_Isendrecv(&me, 1, MPI_INT, right, 9, &a, 1, MPI_INT, left, 9, MPI_COMM_WORLD, &mix[1]));
    int idx = -1;
    CALL(MPI_Waitany(2, mix, &idx, &st));
    CHECK(idx == 1 && a == left, "waitany: index %d value %d", idx, a);

    /* Large enough for the rendezvous protocol, both forms. */
    {
        const int big = 1 << 20;
        int *bo = xmalloc(big * sizeof(int)), *bi = xmalloc(big * sizeof(int));
        for (int i = 0; i < big; i++)
            bo[i] = me * 7 + i, bi[i] = -1;
        CALL(MPI_Isendrecv(bo, big, MPI_INT, right, 14, bi, big, MPI_INT, left, 14, MPI_COMM_WORLD, &req));
        CALL(MPI_Wait(&req, MPI_STATUS_IGNORE));
        for (int i = 0; i < big; i += 4093)
            CHECK(bi[i] == left * 7 + i, "big: bi[%d] = %d", i, bi[i]);
        CALL(MPI_Isendrecv_replace(bo, big, MPI_INT, right, 15, left, 15, MPI_COMM_WORLD, &req));
        CALL(MPI_Wait(&req, MPI_STATUS_IGNORE));
        for (int i = 0; i < big; i += 4093)
            CHECK(bo[i] == left * 7 + i, "big replace: bo[%d] = %d", i, bo[i]);
        free(bo);
        free(bi);
    }

    /* Replace: the buffer goes right and the left one's comes in. */
    int buf[3] = { me, me + 1, me + 2 };
    CALL(MPI_Isendrecv_replace(buf, 3, MPI_INT, right, 10, left, 10, MPI_COMM_WORLD, &req));
    CALL(MPI_Wait(&req, &st));
    CHECK(buf[0] == left && buf[2] == left + 2, "replace: %d %d", buf[0], buf[2]);
    STATUS_CHECK(st.MPI_SOURCE == left && st.MPI_TAG == 10, "replace status");

    /* Replace with a strided type: only every other int moves. (MPICH 4.0.2
     * fills the gaps with garbage: Ferry only.) */
#ifndef MPICH_VERSION
    MPI_Datatype every_other;
    CALL(MPI_Type_vector(3, 1, 2, MPI_INT, &every_other));
    CALL(MPI_Type_commit(&every_other));
    int strided[6] = { me, 1000, me, 1000, me, 1000 };
    CALL(MPI_Isendrecv_replace(strided, 1, every_other, right, 11, left, 11, MPI_COMM_WORLD, &req));
    CALL(MPI_Wait(&req, MPI_STATUS_IGNORE));
    for (int i = 0; i < 6; i++)
        CHECK(strided[i] == (i % 2 ? 1000 : left), "strided[%d] = %d", i, strided[i]);
    CALL(MPI_Type_free(&every_other));
#endif

    /* MPI_PROC_NULL: to nobody and from nobody. (MPICH 4.0.2 crashes on
     * MPI_PROC_NULL in MPI_Isendrecv: Ferry only.) */
#ifndef MPICH_VERSION
    in[0] = 42;
    CALL(MPI_Isendrecv(out, 1, MPI_INT, MPI_PROC_NULL, 1, in, 1, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &req));
    CALL(MPI_Wait(&req, &st));
    CHECK(in[0] == 42, "PROC_NULL receive wrote");
    STATUS_CHECK(st.MPI_SOURCE == MPI_PROC_NULL && st.MPI_TAG == MPI_ANY_TAG, "PROC_NULL status %d/%d", st.MPI_SOURCE, st.MPI_TAG);
    CALL(MPI_Get_count(&st, MPI_INT, &n));
    STATUS_CHECK(n == 0, "PROC_NULL count %d", n);
    /* Send to nobody, receive from the left (which also sends to nobody
     * on one side only: everyone sends right for real below). */
    CALL(MPI_Isendrecv(out, 1, MPI_INT, MPI_PROC_NULL, 12, in, 1, MPI_INT, left, 12, MPI_COMM_WORLD, &req));
    CALL(MPI_Send(&me, 1, MPI_INT, right, 12, MPI_COMM_WORLD));
    CALL(MPI_Wait(&req, &st));
    CHECK(in[0] == left, "half PROC_NULL: %d", in[0]);
    STATUS_CHECK(st.MPI_SOURCE == left, "half PROC_NULL: source %d", st.MPI_SOURCE);
    buf[0] = 7;
    CALL(MPI_Isendrecv_replace(buf, 1, MPI_INT, MPI_PROC_NULL, 1, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &req));
    CALL(MPI_Wait(&req, &st));
    CHECK(buf[0] == 7, "replace PROC_NULL wrote");
    STATUS_CHECK(st.MPI_SOURCE == MPI_PROC_NULL, "replace PROC_NULL: source %d", st.MPI_SOURCE);
#endif

    /* Freed before completion: the exchange still happens. (MPICH 4.0.2
     * refuses to free the request: Ferry only.) */
#ifndef MPICH_VERSION
    a = -1;
    CALL(MPI_Isendrecv(&me, 1, MPI_INT, right, 13, &a, 1, MPI_INT, left, 13, MPI_COMM_WORLD, &req));
    CALL(MPI_Request_free(&req));
    CHECK(req == MPI_REQUEST_NULL, "free did not reset");
    CALL(MPI_Barrier(MPI_COMM_WORLD));
#endif
    /* Cancel: the receive half of an exchange nobody answers (sent to
     * nobody: Ferry only, as above). */
#ifndef MPICH_VERSION
    CALL(MPI_Isendrecv(out, 1, MPI_INT, MPI_PROC_NULL, 0, in, 1, MPI_INT, left, 999, MPI_COMM_WORLD, &req));
    CALL(MPI_Cancel(&req));
    CALL(MPI_Wait(&req, &st));
    flag = 0;
    CALL(MPI_Test_cancelled(&st, &flag));
    STATUS_CHECK(flag, "receive half not cancelled");
#endif

    /* Errors; none of them starts anything. */
    req = MPI_REQUEST_NULL;
    EXPECT(MPI_ERR_RANK, MPI_Isendrecv(out, 1, MPI_INT, np, 0, in, 1, MPI_INT, left, 0, MPI_COMM_WORLD, &req));
    EXPECT(MPI_ERR_RANK, MPI_Isendrecv(out, 1, MPI_INT, right, 0, in, 1, MPI_INT, -5, 0, MPI_COMM_WORLD, &req));
    EXPECT(MPI_ERR_TAG, MPI_Isendrecv(out, 1, MPI_INT, right, -3, in, 1, MPI_INT, left, 0, MPI_COMM_WORLD, &req));
    EXPECT(MPI_ERR_TAG, MPI_Isendrecv(out, 1, MPI_INT, right, 0, in, 1, MPI_INT, left, -3, MPI_COMM_WORLD, &req));
    EXPECT(MPI_ERR_COUNT, MPI_Isendrecv(out, -1, MPI_INT, right, 0, in, 1, MPI_INT, left, 0, MPI_COMM_WORLD, &req));
    EXPECT(MPI_ERR_COUNT, MPI_Isendrecv_replace(buf, -1, MPI_INT, right, 0, left, 0, MPI_COMM_WORLD, &req));
    EXPECT(MPI_ERR_TYPE, MPI_Isendrecv(out, 1, MPI_DATATYPE_NULL, right, 0, in, 1, MPI_INT, left, 0, MPI_COMM_WORLD, &req));
    EXPECT(MPI_ERR_TYPE, MPI_Isendrecv_replace(buf, 1, MPI_DATATYPE_NULL, right, 0, left, 0, MPI_COMM_WORLD, &req));
    EXPECT(MPI_ERR_RANK, MPI_Isendrecv_replace(buf, 1, MPI_INT, right, 0, np + 3, 0, MPI_COMM_WORLD, &req));
    EXPECT(MPI_ERR_COMM, MPI_Isendrecv(out, 1, MPI_INT, right, 0, in, 1, MPI_INT, left, 0, MPI_COMM_NULL, &req));
    CHECK(req == MPI_REQUEST_NULL, "a failed call wrote a request");
    /* Nothing was started: the next exchange on tag 0 gets the right data. */
    a = -1;
    CALL(MPI_Isendrecv(&me, 1, MPI_INT, right, 0, &a, 1, MPI_INT, left, 0, MPI_COMM_WORLD, &req));
    CALL(MPI_Wait(&req, MPI_STATUS_IGNORE));
    CHECK(a == left, "after errors: %d", a);

    CALL(MPI_Barrier(MPI_COMM_WORLD));
    CALL(MPI_Finalize());
    finalized = 1;
    if (me == 0)
        printf("isendrecv: ok\n");
    return 0;
}

/* ranks: 2 */
/*
 * Truncation under MPI_ERRORS_RETURN: a message longer than the receive
 * buffer gives MPI_ERR_TRUNCATE from Recv, from Wait after Irecv, from Mrecv
 * after Mprobe, and MPI_ERR_IN_STATUS from Waitall with MPI_ERR_TRUNCATE in
 * the status of the truncated receive only; small (eager) and large
 * (rendezvous-sized) messages; the sender's side completes normally; data
 * beyond the receive buffer are never written; later messages still flow.
 */
#include <string.h>

#define TEST_NAME "truncate"
#include "testutil.h"

static void expect_truncate(int rc, const char *what, int line)
{
    int cls = -1;
    if (rc == MPI_SUCCESS)
        fail(line, "%s: no error, expected MPI_ERR_TRUNCATE", what);
    CALL(MPI_Error_class(rc, &cls));
    if (cls != MPI_ERR_TRUNCATE)
        fail(line, "%s: error class %d, expected MPI_ERR_TRUNCATE (%d)", what, cls,
             MPI_ERR_TRUNCATE);
}

static int *make_ints(int n, int base)
{
    int *p = malloc(sizeof(int) * (size_t)(n ? n : 1));
    CHECK(p != NULL, "malloc");
    for (int i = 0; i < n; i++)
        p[i] = base + i;
    return p;
}

/* The receiver's buffer: `cap` ints wanted, guarded by sentinels after. */
static int *guarded(int cap)
{
    int *p = malloc(sizeof(int) * (size_t)(cap + 16));
    CHECK(p != NULL, "malloc");
    for (int i = 0; i < cap + 16; i++)
        p[i] = -7;
    return p;
}

static void check_guard(const int *p, int cap, const char *what)
{
    for (int i = cap; i < cap + 16; i++)
        CHECK(p[i] == -7, "%s: wrote past the receive buffer (int %d)", what, i);
}

/* Rank 1 sends messages of `len` ints; rank 0 receives with `cap` < len. */
static void one_size(int len, int cap)
{
    const int peer = 1 - me;
    if (me == 1) {
        int *data = make_ints(len, 0);
        MPI_Request req;
        /* 1: Recv, 2: Irecv + Wait, 3: Mprobe + Mrecv. */
        for (int tag = 1; tag <= 3; tag++)
            CALL(MPI_Send(data, len, MPI_INT, peer, tag, MPI_COMM_WORLD));
        /* 4 and 5 for the Waitall: 5 is truncated, 4 fits. */
        CALL(MPI_Isend(data, 1, MPI_INT, peer, 4, MPI_COMM_WORLD, &req));
        CALL(MPI_Send(data, len, MPI_INT, peer, 5, MPI_COMM_WORLD));
        CALL(MPI_Wait(&req, MPI_STATUS_IGNORE));
        free(data);
    } else {
        int *buf = guarded(cap);
        MPI_Status st;
        MPI_Request req;

        expect_truncate(MPI_Recv(buf, cap, MPI_INT, peer, 1, MPI_COMM_WORLD, &st), "Recv",
                        __LINE__);
        check_guard(buf, cap, "Recv");

        CALL(MPI_Irecv(buf, cap, MPI_INT, peer, 2, MPI_COMM_WORLD, &req));
        expect_truncate(MPI_Wait(&req, &st), "Irecv + Wait", __LINE__);
        check_guard(buf, cap, "Irecv + Wait");

        MPI_Message msg;
        CALL(MPI_Mprobe(peer, 3, MPI_COMM_WORLD, &msg, &st));
        int n = -1;
        CALL(MPI_Get_count(&st, MPI_INT, &n));
        CHECK(n == len, "Mprobe count %d, expected %d", n, len);
        expect_truncate(MPI_Mrecv(buf, cap, MPI_INT, &msg, &st), "Mprobe + Mrecv", __LINE__);
        check_guard(buf, cap, "Mprobe + Mrecv");

        int small = -1;
        MPI_Request reqs[2];
        MPI_Status sts[2];
        CALL(MPI_Irecv(&small, 1, MPI_INT, peer, 4, MPI_COMM_WORLD, &reqs[0]));
        CALL(MPI_Irecv(buf, cap, MPI_INT, peer, 5, MPI_COMM_WORLD, &reqs[1]));
        int rc = MPI_Waitall(2, reqs, sts);
        int cls = -1;
        CHECK(rc != MPI_SUCCESS, "Waitall with a truncated receive succeeded");
        CALL(MPI_Error_class(rc, &cls));
        CHECK(cls == MPI_ERR_IN_STATUS, "Waitall: error class %d, expected MPI_ERR_IN_STATUS",
              cls);
        CHECK(sts[0].MPI_ERROR == MPI_SUCCESS, "Waitall: the fitting receive has error %d",
              sts[0].MPI_ERROR);
        expect_truncate(sts[1].MPI_ERROR, "Waitall status", __LINE__);
        CHECK(small == 0, "the fitting receive got %d", small);
        check_guard(buf, cap, "Waitall");
        free(buf);
    }
}

int main(int argc, char **argv)
{
    TEST_INIT(&argc, &argv);
    CHECK(np == 2, "runs with 2 ranks");
    CALL(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));

    one_size(10, 5);
    one_size(1, 0);
    one_size(1 << 18, 1000);        /* 1 MiB into 4000 bytes */
    one_size(1 << 18, (1 << 18) - 1);

    /* Communication still works, in both directions. */
    int out = 100 + me, in = -1;
    CALL(MPI_Sendrecv(&out, 1, MPI_INT, 1 - me, 9, &in, 1, MPI_INT, 1 - me, 9, MPI_COMM_WORLD,
                      MPI_STATUS_IGNORE));
    CHECK(in == 100 + (1 - me), "message after truncations: %d", in);

    CALL(MPI_Barrier(MPI_COMM_WORLD));
    CALL(MPI_Finalize());
    return 0;
}

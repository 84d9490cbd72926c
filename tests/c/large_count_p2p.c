/* ranks: 1 2 4 */
/*
 * MPI-4 large-count point-to-point: a ring of MPI_Send_c / MPI_Recv_c,
 * MPI_Isend_c / MPI_Irecv_c, MPI_Ssend_c, MPI_Rsend_c after a posted
 * receive, MPI_Bsend_c through a buffer given by MPI_Buffer_attach_c (and
 * its size back from MPI_Buffer_detach_c), MPI_Sendrecv_c,
 * MPI_Sendrecv_replace_c, MPI_Isendrecv_c, MPI_Isendrecv_replace_c, the
 * persistent MPI_Send_init_c / MPI_Recv_init_c started twice, matched probes received by MPI_Mrecv_c and MPI_Imrecv_c,
 * with MPI_Get_count_c on the statuses; MPI_ERR_COUNT for a negative count
 * (and, under Ferry, for a persistent request or MPI_Sendrecv_replace_c beyond
 * INT_MAX, which it does not take); MPI_ERR_BUFFER for a NULL buffer of more than
 * INT_MAX elements. large_count_big.c moves such a message.
 */
#include <limits.h>
#include <string.h>

#define TEST_NAME "large_count_p2p"
#include "testutil.h"

#define N 100

static int next, prev;
static int is_ferry(void);

static void fill(int *v, int n, int who, int salt)
{
    for (int i = 0; i < n; i++)
        v[i] = who * 1000 + salt * 100 + i;
}

static void expect_from(const int *v, int n, int who, int salt, const char *what)
{
    for (int i = 0; i < n; i++)
        CHECK(v[i] == who * 1000 + salt * 100 + i, "%s: [%d] = %d", what, i, v[i]);
}

static void check_count(const MPI_Status *st, MPI_Count want, const char *what)
{
    MPI_Count n = -1;
    CALL(MPI_Get_count_c(st, MPI_INT, &n));
    CHECK(n == want, "%s: Get_count_c %ld, expected %ld", what, (long)n, (long)want);
}

static void blocking(void)
{
    int s[N], r[N];
    MPI_Status st;
    fill(s, N, me, 1);
    MPI_Request rq;
    CALL(MPI_Irecv_c(r, N, MPI_INT, prev, 1, MPI_COMM_WORLD, &rq));
    CALL(MPI_Send_c(s, N, MPI_INT, next, 1, MPI_COMM_WORLD));
    CALL(MPI_Wait(&rq, &st));
    expect_from(r, N, prev, 1, "Send_c");
    check_count(&st, N, "Send_c");

    fill(s, N, me, 2);
    CALL(MPI_Isend_c(s, 7, MPI_INT, next, 2, MPI_COMM_WORLD, &rq));
    CALL(MPI_Recv_c(r, N, MPI_INT, prev, 2, MPI_COMM_WORLD, &st));
    CALL(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    expect_from(r, 7, prev, 2, "Isend_c");
    check_count(&st, 7, "Recv_c");

    fill(s, N, me, 3);
    CALL(MPI_Irecv_c(r, N, MPI_INT, prev, 3, MPI_COMM_WORLD, &rq));
    CALL(MPI_Ssend_c(s, N, MPI_INT, next, 3, MPI_COMM_WORLD));
    CALL(MPI_Wait(&rq, &st));
    expect_from(r, N, prev, 3, "Ssend_c");

    /* Ready mode: every receive is posted before anyone sends. */
    fill(s, N, me, 4);
    CALL(MPI_Irecv_c(r, N, MPI_INT, prev, 4, MPI_COMM_WORLD, &rq));
    CALL(MPI_Barrier(MPI_COMM_WORLD));
    CALL(MPI_Rsend_c(s, N, MPI_INT, next, 4, MPI_COMM_WORLD));
    CALL(MPI_Wait(&rq, &st));
    expect_from(r, N, prev, 4, "Rsend_c");

    fill(s, N, me, 5);
    CALL(MPI_Issend_c(s, N, MPI_INT, next, 5, MPI_COMM_WORLD, &rq));
    MPI_Request rr;
    CALL(MPI_Irecv_c(r, N, MPI_INT, prev, 5, MPI_COMM_WORLD, &rr));
    CALL(MPI_Wait(&rr, MPI_STATUS_IGNORE));
    CALL(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    expect_from(r, N, prev, 5, "Issend_c");
}

static void buffered(void)
{
    int s[N], r[N];
    MPI_Count size = N * sizeof(int) + 2 * MPI_BSEND_OVERHEAD;
    char *buf = xmalloc((size_t)size);
    CALL(MPI_Buffer_attach_c(buf, size));
    fill(s, N, me, 6);
    CALL(MPI_Bsend_c(s, N, MPI_INT, next, 6, MPI_COMM_WORLD));
    CALL(MPI_Recv_c(r, N, MPI_INT, prev, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    expect_from(r, N, prev, 6, "Bsend_c");
    MPI_Request rq;
    fill(s, N, me, 7);
    CALL(MPI_Ibsend_c(s, 3, MPI_INT, next, 7, MPI_COMM_WORLD, &rq));
    CALL(MPI_Recv_c(r, N, MPI_INT, prev, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    CALL(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    expect_from(r, 3, prev, 7, "Ibsend_c");
    void *back = NULL;
    MPI_Count back_size = -1;
    CALL(MPI_Buffer_detach_c(&back, &back_size));
    CHECK(back == buf && back_size == size, "Buffer_detach_c gave %p, %ld", back, (long)back_size);
    free(buf);
}

static void exchanges(void)
{
    int s[N], r[N];
    MPI_Status st;
    fill(s, N, me, 8);
    CALL(MPI_Sendrecv_c(s, 9, MPI_INT, next, 8, r, N, MPI_INT, prev, 8, MPI_COMM_WORLD, &st));
    expect_from(r, 9, prev, 8, "Sendrecv_c");
    check_count(&st, 9, "Sendrecv_c");
    fill(s, N, me, 9);
    CALL(MPI_Sendrecv_replace_c(s, N, MPI_INT, next, 9, prev, 9, MPI_COMM_WORLD, &st));
    expect_from(s, N, prev, 9, "Sendrecv_replace_c");
    MPI_Request rq;
    fill(s, N, me, 15);
    CALL(MPI_Isendrecv_c(s, 13, MPI_INT, next, 15, r, N, MPI_INT, prev, 15, MPI_COMM_WORLD, &rq));
    CALL(MPI_Wait(&rq, &st));
    expect_from(r, 13, prev, 15, "Isendrecv_c");
    /* MPICH 4.0.2's status says the receive's count (100) here, not what arrived. */
    if (is_ferry())
        check_count(&st, 13, "Isendrecv_c");
    fill(s, N, me, 16);
    CALL(MPI_Isendrecv_replace_c(s, N, MPI_INT, next, 16, prev, 16, MPI_COMM_WORLD, &rq));
    CALL(MPI_Wait(&rq, &st));
    expect_from(s, N, prev, 16, "Isendrecv_replace_c");
}

static void persistent(void)
{
    int s[N], r[N];
    MPI_Request rq[2];
    CALL(MPI_Recv_init_c(r, N, MPI_INT, prev, 10, MPI_COMM_WORLD, &rq[0]));
    CALL(MPI_Send_init_c(s, N, MPI_INT, next, 10, MPI_COMM_WORLD, &rq[1]));
    for (int round = 0; round < 2; round++) {
        fill(s, N, me, round);
        CALL(MPI_Startall(2, rq));
        CALL(MPI_Waitall(2, rq, statuses_ignore()));
        expect_from(r, N, prev, round, "Send_init_c");
    }
    CALL(MPI_Request_free(&rq[0]));
    CALL(MPI_Request_free(&rq[1]));
    MPI_Request other[3];
    CALL(MPI_Ssend_init_c(s, 1, MPI_INT, next, 11, MPI_COMM_WORLD, &other[0]));
    CALL(MPI_Bsend_init_c(s, 1, MPI_INT, next, 11, MPI_COMM_WORLD, &other[1]));
    CALL(MPI_Rsend_init_c(s, 1, MPI_INT, next, 11, MPI_COMM_WORLD, &other[2]));
    for (int i = 0; i < 3; i++)
        CALL(MPI_Request_free(&other[i]));
}

static void matched(void)
{
    int s[N], r[N];
    MPI_Message msg;
    MPI_Status st;
    fill(s, N, me, 12);
    MPI_Request rq;
    CALL(MPI_Isend_c(s, 11, MPI_INT, next, 12, MPI_COMM_WORLD, &rq));
    CALL(MPI_Mprobe(prev, 12, MPI_COMM_WORLD, &msg, &st));
    CALL(MPI_Mrecv_c(r, N, MPI_INT, &msg, &st));
    CALL(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    expect_from(r, 11, prev, 12, "Mrecv_c");
    check_count(&st, 11, "Mrecv_c");

    fill(s, N, me, 13);
    CALL(MPI_Isend_c(s, 12, MPI_INT, next, 13, MPI_COMM_WORLD, &rq));
    CALL(MPI_Mprobe(prev, 13, MPI_COMM_WORLD, &msg, &st));
    MPI_Request rr;
    CALL(MPI_Imrecv_c(r, N, MPI_INT, &msg, &rr));
    CALL(MPI_Wait(&rr, &st));
    CALL(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    expect_from(r, 12, prev, 13, "Imrecv_c");
    check_count(&st, 12, "Imrecv_c");
}

static void errors(void)
{
    int x = 0;
    MPI_Request rq;
    EXPECT(MPI_ERR_COUNT, MPI_Send_c(&x, -1, MPI_INT, next, 14, MPI_COMM_WORLD));
    EXPECT(MPI_ERR_COUNT, MPI_Isend_c(&x, -3, MPI_INT, next, 14, MPI_COMM_WORLD, &rq));
    EXPECT(MPI_ERR_COUNT, MPI_Recv_c(&x, -1, MPI_INT, prev, 14, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    EXPECT(MPI_ERR_COUNT, MPI_Send_init_c(&x, -1, MPI_INT, next, 14, MPI_COMM_WORLD, &rq));
    /* Ferry's persistent requests and MPI_Sendrecv_replace_c take at most INT_MAX elements
     * and say so (MPICH would read that many). */
    if (is_ferry()) {
        EXPECT(MPI_ERR_COUNT, MPI_Send_init_c(&x, (MPI_Count)INT_MAX + 1, MPI_BYTE, next, 14, MPI_COMM_WORLD, &rq));
        EXPECT(MPI_ERR_COUNT, MPI_Recv_init_c(&x, (MPI_Count)1 << 40, MPI_BYTE, prev, 14, MPI_COMM_WORLD, &rq));
        EXPECT(MPI_ERR_COUNT, MPI_Sendrecv_replace_c(&x, (MPI_Count)INT_MAX + 1, MPI_BYTE, next, 14, prev, 14,
                                                     MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    }
    /* Beyond INT_MAX elements a NULL buffer is still no buffer. */
    EXPECT(MPI_ERR_BUFFER, MPI_Send_c(NULL, (MPI_Count)INT_MAX + 1, MPI_BYTE, next, 14, MPI_COMM_WORLD));
}

int main(int argc, char **argv)
{
    TEST_INIT(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    next = (me + 1) % np;
    prev = (me + np - 1) % np;
    blocking();
    buffered();
    exchanges();
    persistent();
    matched();
    errors();
    CALL(MPI_Barrier(MPI_COMM_WORLD));
    if (me == 0)
        printf("large_count_p2p: ok\n");
    CALL(MPI_Finalize());
    return 0;
}

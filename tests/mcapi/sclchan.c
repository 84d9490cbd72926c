/* nodes: 2 3 */
/* launch: job hand */
/*
 * Scalar channels between node 0 (sender) and node 1 (receiver), connected by the last node
 * (a third party when there are 3). 8-, 16-, 32- and 64-bit values with their extreme bit
 * patterns; a receive of another size fails with MCAPI_ERR_SCL_SIZE and leaves the value
 * queued; mcapi_sclchan_available; the wrong direction and the wrong channel type at open; the
 * wrong kind of handle; 10,000 64-bit values to a slow receiver in order; close by the sender
 * with values queued (still received, then MCAPI_ERR_CHAN_NOTOPEN), a second connection, and a
 * receive close that discards the queue so that the sender's next send fails.
 */
#define TEST_NAME "sclchan"
#include "mcapi_testutil.h"

#define P_S 400
#define P_R 401
#define P_L 402 /* the connecting node: a free endpoint beside the channel's */

static mcapi_sclchan_send_hndl_t sh;
static mcapi_sclchan_recv_hndl_t rh;
static mcapi_endpoint_t s_conn, r_conn;

static void connect_open(mcapi_endpoint_t S, mcapi_endpoint_t R, int check_misuse)
{
    mcapi_status_t st;
    mcapi_request_t req, creq;
    mcapi_sclchan_send_hndl_t hs;
    mcapi_sclchan_recv_hndl_t hr;
    mcapi_pktchan_recv_hndl_t ph;
    mcapi_endpoint_t l;

    if (me == np - 1) {
        mcapi_sclchan_connect_i(s_conn, r_conn, &creq, &st);
        OK(finish_i(st, &creq));
        if (check_misuse) {
            mcapi_sclchan_connect_i(s_conn, r_conn, &creq, &st);
            EXPECT_FAIL_I(st, MCAPI_ERR_CHAN_CONNECTED, &creq);
            /* One end connected to another endpoint is enough, either end (with 2 nodes the
             * receive end is local: the second connect fails within the call). */
            l = create_ep(P_L);
            mcapi_sclchan_connect_i(s_conn, l, &creq, &st);
            EXPECT_FAIL_I(st, MCAPI_ERR_CHAN_CONNECTED, &creq);
            mcapi_sclchan_connect_i(l, r_conn, &creq, &st);
            EXPECT_FAIL_I(st, MCAPI_ERR_CHAN_CONNECTED, &creq);
            mcapi_endpoint_delete(l, &st);
            OK(st);
            mcapi_sclchan_connect_i(r_conn, r_conn, &creq, &st);
            EXPECT_I(st, MCAPI_ERR_ENDP_INVALID, &creq);
            mcapi_sclchan_connect_i(s_conn, r_conn, NULL, &st);
            EXPECT(st, MCAPI_ERR_PARAMETER);
        }
    }
    if (me == 0) {
        mcapi_sclchan_send_open_i(&sh, S, &req, &st);
        OK(finish_i(st, &req));
        if (check_misuse) {
            mcapi_sclchan_recv_open_i(&hr, S, &req, &st);
            EXPECT_I(st, MCAPI_ERR_CHAN_DIRECTION, &req);
            mcapi_sclchan_send_open_i(&hs, S, &req, &st);
            EXPECT_I(st, MCAPI_ERR_CHAN_OPEN, &req);
            mcapi_sclchan_send_open_i(NULL, S, &req, &st);
            EXPECT(st, MCAPI_ERR_PARAMETER);
            mcapi_sclchan_send_open_i(&hs, ctl_peer[1], &req, &st);
            EXPECT_I(st, MCAPI_ERR_ENDP_INVALID, &req);
        }
    } else if (me == 1) {
        mcapi_sclchan_recv_open_i(&rh, R, &req, &st);
        OK(finish_i(st, &req));
        if (check_misuse) {
            mcapi_sclchan_send_open_i(&hs, R, &req, &st);
            EXPECT_I(st, MCAPI_ERR_CHAN_DIRECTION, &req);
            mcapi_pktchan_recv_open_i(&ph, R, &req, &st);
            EXPECT_I(st, MCAPI_ERR_CHAN_TYPE, &req);
            mcapi_sclchan_recv_open_i(&hr, R, &req, &st);
            EXPECT_I(st, MCAPI_ERR_CHAN_OPEN, &req);
            mcapi_sclchan_recv_open_i(&hr, R, NULL, &st);
            EXPECT(st, MCAPI_ERR_PARAMETER);
        }
    }
}

static void values(void)
{
    mcapi_status_t st;
    static const mcapi_uint64_t v64[] = { 0, 1, 0x8000000000000000ull, 0xFFFFFFFFFFFFFFFFull,
                                          0x0123456789ABCDEFull };
    static const mcapi_uint32_t v32[] = { 0, 1, 0x80000000u, 0xFFFFFFFFu, 0xDEADBEEFu };
    static const mcapi_uint16_t v16[] = { 0, 1, 0x8000u, 0xFFFFu, 0xBEEFu };
    static const mcapi_uint8_t v8[] = { 0, 1, 0x80u, 0xFFu, 0x5Au };
    unsigned i;

    for (i = 0; i < 5; i++) {
        if (me == 0) {
            mcapi_sclchan_send_uint64(sh, v64[i], &st);
            OK(st);
            mcapi_sclchan_send_uint32(sh, v32[i], &st);
            OK(st);
            mcapi_sclchan_send_uint16(sh, v16[i], &st);
            OK(st);
            mcapi_sclchan_send_uint8(sh, v8[i], &st);
            OK(st);
        } else if (me == 1) {
            CHECK(mcapi_sclchan_recv_uint64(rh, &st) == v64[i], "64-bit value %u", i);
            OK(st);
            CHECK(mcapi_sclchan_recv_uint32(rh, &st) == v32[i], "32-bit value %u", i);
            OK(st);
            CHECK(mcapi_sclchan_recv_uint16(rh, &st) == v16[i], "16-bit value %u", i);
            OK(st);
            CHECK(mcapi_sclchan_recv_uint8(rh, &st) == v8[i], "8-bit value %u", i);
            OK(st);
        }
    }
}

/* A 32-bit value read with the other sizes stays queued until read as 32 bits. */
static void size_mismatch(void)
{
    mcapi_status_t st;
    double t0;
    if (me == 0) {
        mcapi_sclchan_send_uint32(sh, 0xCAFEF00Du, &st);
        OK(st);
        mcapi_sclchan_send_uint8(sh, 7, &st);
        OK(st);
        return;
    }
    if (me != 1)
        return;
    t0 = now_ms();
    while (mcapi_sclchan_available(rh, &st) < 2) {
        OK(st);
        CHECK(now_ms() - t0 < T_LONG, "scalars missing");
        sleep_ms(1);
    }
    (void)mcapi_sclchan_recv_uint8(rh, &st);
    EXPECT(st, MCAPI_ERR_SCL_SIZE);
    (void)mcapi_sclchan_recv_uint16(rh, &st);
    EXPECT(st, MCAPI_ERR_SCL_SIZE);
    (void)mcapi_sclchan_recv_uint64(rh, &st);
    EXPECT(st, MCAPI_ERR_SCL_SIZE);
    CHECK(mcapi_sclchan_available(rh, &st) == 2, "a mismatched receive consumed the value");
    OK(st);
    CHECK(mcapi_sclchan_recv_uint32(rh, &st) == 0xCAFEF00Du, "the value after mismatches");
    OK(st);
    (void)mcapi_sclchan_recv_uint32(rh, &st);
    EXPECT(st, MCAPI_ERR_SCL_SIZE);
    CHECK(mcapi_sclchan_recv_uint8(rh, &st) == 7, "the 8-bit value after a mismatch");
    OK(st);
    CHECK(mcapi_sclchan_available(rh, &st) == 0, "values left over");
    OK(st);
}

static void wrong_handles(void)
{
    mcapi_status_t st;
    mcapi_request_t req;
    if (me == 0) {
        (void)mcapi_sclchan_recv_uint32(sh, &st);
        EXPECT(st, MCAPI_ERR_CHAN_INVALID);
        (void)mcapi_sclchan_available(sh, &st);
        EXPECT(st, MCAPI_ERR_CHAN_INVALID);
        mcapi_sclchan_recv_close_i(sh, &req, &st);
        EXPECT(st, MCAPI_ERR_CHAN_DIRECTION);
        mcapi_pktchan_send_close_i(sh, &req, &st);
        EXPECT(st, MCAPI_ERR_CHAN_TYPE);
        mcapi_pktchan_send(sh, "x", 1, &st);
        EXPECT(st, MCAPI_ERR_CHAN_INVALID);
    } else if (me == 1) {
        mcapi_sclchan_send_uint64(rh, 1, &st);
        EXPECT(st, MCAPI_ERR_CHAN_INVALID);
        mcapi_sclchan_send_uint32(rh, 1, &st);
        EXPECT(st, MCAPI_ERR_CHAN_INVALID);
        mcapi_sclchan_send_uint16(rh, 1, &st);
        EXPECT(st, MCAPI_ERR_CHAN_INVALID);
        mcapi_sclchan_send_uint8(rh, 1, &st);
        EXPECT(st, MCAPI_ERR_CHAN_INVALID);
        mcapi_sclchan_send_close_i(rh, &req, &st);
        EXPECT(st, MCAPI_ERR_CHAN_DIRECTION);
        mcapi_pktchan_recv_close_i(rh, &req, &st);
        EXPECT(st, MCAPI_ERR_CHAN_TYPE);
        (void)mcapi_pktchan_available(rh, &st);
        EXPECT(st, MCAPI_ERR_CHAN_INVALID);
    }
}

static void stream(void)
{
    enum { N = 10000 };
    mcapi_status_t st;
    mcapi_uint64_t i, v;
    for (i = 0; i < N; i++) {
        if (me == 0) {
            mcapi_sclchan_send_uint64(sh, i * 0x9E3779B97F4A7C15ull, &st);
            OK(st);
        } else if (me == 1) {
            if (i % 1000 == 0)
                sleep_ms(20);
            v = mcapi_sclchan_recv_uint64(rh, &st);
            OK(st);
            CHECK(v == i * 0x9E3779B97F4A7C15ull, "value %llu of the stream", (unsigned long long)i);
        }
    }
}

static void close_cases(mcapi_endpoint_t S, mcapi_endpoint_t R)
{
    mcapi_status_t st;
    mcapi_request_t req, close_req;
    size_t got;

    /* The sender closes with 3 values queued. */
    if (me == 0) {
        mcapi_sclchan_send_uint16(sh, 1, &st);
        OK(st);
        mcapi_sclchan_send_uint16(sh, 2, &st);
        OK(st);
        mcapi_sclchan_send_uint16(sh, 3, &st);
        OK(st);
        mcapi_sclchan_send_close_i(sh, &close_req, &st);
        EXPECT(st, MCAPI_PENDING);
        mcapi_sclchan_send_uint16(sh, 4, &st);
        EXPECT(st, MCAPI_ERR_CHAN_INVALID);
        ctl_send(1, 1);
        CHECK(mcapi_wait(&close_req, &got, T_LONG, &st) == MCAPI_TRUE, "send close");
        OK(st);
    } else if (me == 1) {
        CHECK(ctl_recv() == 1, "control word");
        CHECK(mcapi_sclchan_recv_uint16(rh, &st) == 1, "first value after close");
        OK(st);
        CHECK(mcapi_sclchan_recv_uint16(rh, &st) == 2, "second value after close");
        OK(st);
        CHECK(mcapi_sclchan_recv_uint16(rh, &st) == 3, "third value after close");
        OK(st);
        (void)mcapi_sclchan_recv_uint16(rh, &st);
        EXPECT(st, MCAPI_ERR_CHAN_NOTOPEN);
        mcapi_sclchan_recv_close_i(rh, &req, &st);
        OK(finish_i(st, &req));
        (void)mcapi_sclchan_available(rh, &st);
        EXPECT(st, MCAPI_ERR_CHAN_INVALID);
    }
    barrier();

    /* Again; now the receiver closes first and the queue is discarded. */
    connect_open(S, R, 0);
    if (me == 0) {
        mcapi_sclchan_send_uint8(sh, 9, &st);
        OK(st);
        ctl_send(1, 2);
        CHECK(ctl_recv() == 3, "control word");
        mcapi_sclchan_send_uint8(sh, 10, &st);
        EXPECT(st, MCAPI_ERR_CHAN_NOTOPEN);
        mcapi_sclchan_send_close_i(sh, &req, &st);
        OK(finish_i(st, &req));
    } else if (me == 1) {
        CHECK(ctl_recv() == 2, "control word");
        mcapi_sclchan_recv_close_i(rh, &close_req, &st);
        EXPECT(st, MCAPI_PENDING);
        ctl_send(0, 3);
        CHECK(mcapi_wait(&close_req, &got, T_LONG, &st) == MCAPI_TRUE, "receive close");
        OK(st);
    }
}

int main(void)
{
    mcapi_endpoint_t S = 0, R = 0;

    test_env(2);
    node_init();
    ctl_setup(CTL_PORT);
    if (me == 0)
        S = create_ep(P_S);
    if (me == 1)
        R = create_ep(P_R);
    barrier();
    if (me == np - 1) {
        s_conn = get_ep(0, P_S);
        r_conn = me == 1 ? R : get_ep(1, P_R);
    }
    connect_open(S, R, 1);
    barrier();
    values();
    barrier();
    size_mismatch();
    barrier();
    wrong_handles();
    barrier();
    stream();
    barrier();
    close_cases(S, R);
    return node_done();
}

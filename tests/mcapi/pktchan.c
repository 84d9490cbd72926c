/* nodes: 3 4 */
/* launch: job split hand */
/*
 * Packet channels. Node 0 owns the send endpoint, node 1 the receive endpoint, node 2 connects
 * them (a third party); other nodes only join the barriers. Opens issued before the connect
 * complete after it. Every misuse: a second open while one is pending, an open of an open
 * channel, the wrong direction, the wrong channel type, a remote or deleted endpoint, a
 * connect of a connected pair, of an endpoint with itself, of endpoints with incompatible
 * attributes or too many gets, a message to a connected endpoint, attribute changes and
 * deletion while connected, bad sizes and pointers, the wrong kind of handle. Data: 40 packets
 * of 0 to MCAPI_MAX_PKT_SIZE bytes in FIFO order, blocking and not; zero-copy receive and
 * release in any order; the window: with every receive buffer held by the receiver a send
 * stays pending until one buffer is released; a slow receiver. Close: packets queued before
 * the sender's close are still received, then the receive reports the channel closed; the
 * close requests complete when both sides closed; a receive close discards what is queued and
 * the sender's next send fails; the channel can be connected and opened again.
 */
#define TEST_NAME "pktchan"
#include "mcapi_testutil.h"

#define P_S 300  /* node 0: the send endpoint */
#define P_R 301  /* node 1: the receive endpoint */
#define P_S2 302 /* node 0: priority 1 */
#define P_R2 303 /* node 1: priority 2, incompatible with P_S2 */
#define P_R3 304 /* node 1: got by nodes 0 and 2 */
#define P_X 305  /* node 1: deleted while its open is pending */
#define P_MSG 306
#define P_L 307  /* node 0 and node 2: a free endpoint beside a connected one */

static const size_t sizes[] = { 0, 1, 17, 4096, 65536, 100000, MCAPI_MAX_PKT_SIZE };
#define NSIZES (sizeof sizes / sizeof sizes[0])

static mcapi_endpoint_t S, R;
/* Node 2's handles of S and R, got once: a second get would raise their get count. */
static mcapi_endpoint_t s_conn, r_conn;
static mcapi_pktchan_send_hndl_t sh;
static mcapi_pktchan_recv_hndl_t rh;

static void set_priority(mcapi_endpoint_t e, mcapi_endp_attr_priority_t p)
{
    mcapi_status_t st;
    mcapi_endpoint_set_attribute(e, MCAPI_ENDP_ATTR_PRIORITY, &p, sizeof p, &st);
    OK(st);
}

static mcapi_endp_attr_status_t endp_status(mcapi_endpoint_t e)
{
    mcapi_status_t st;
    mcapi_endp_attr_status_t s = 0;
    mcapi_endpoint_get_attribute(e, MCAPI_ENDP_ATTR_ENDP_STATUS, &s, sizeof s, &st);
    OK(st);
    return s & 0xFFFFu;
}

/* Node 2 connects S to R; nodes 0 and 1 open before the connect. */
static void connect_and_open(void)
{
    mcapi_status_t st;
    mcapi_request_t req, req2;
    mcapi_pktchan_recv_hndl_t h2;
    mcapi_endpoint_t s, r, s2, r2, r3, x, d, l;

    size_t size;

    if (me == 0) {
        mcapi_pktchan_send_open_i(&sh, S, &req, &st);
        EXPECT(st, MCAPI_PENDING);
        (void)get_ep(1, P_R3);
    } else if (me == 1) {
        mcapi_pktchan_recv_open_i(&rh, R, &req, &st);
        EXPECT(st, MCAPI_PENDING);
        mcapi_pktchan_recv_open_i(&h2, R, &req2, &st);
        EXPECT(st, MCAPI_ERR_CHAN_OPENPENDING);
        CHECK(mcapi_test(&req, &size, &st) == MCAPI_FALSE, "open done before any connect");
        EXPECT(st, MCAPI_PENDING);
        CHECK(endp_status(R) & MCAPI_ENDP_ATTR_STATUS_OPEN_PENDING, "no OPEN_PENDING flag");
        mcapi_pktchan_recv_open_i(NULL, R, &req2, &st);
        EXPECT(st, MCAPI_ERR_PARAMETER);
        mcapi_pktchan_recv_open_i(&h2, R, NULL, &st);
        EXPECT(st, MCAPI_ERR_PARAMETER);
        mcapi_pktchan_recv_open_i(&h2, ctl_peer[0], &req2, &st);
        EXPECT_I(st, MCAPI_ERR_ENDP_INVALID, &req2);
        /* An endpoint whose open is pending can be deleted; the open then fails. */
        x = create_ep(P_X);
        mcapi_pktchan_recv_open_i(&h2, x, &req2, &st);
        EXPECT(st, MCAPI_PENDING);
        mcapi_endpoint_delete(x, &st);
        OK(st);
        EXPECT(finish_i(MCAPI_PENDING, &req2), MCAPI_ERR_ENDP_DELETED);
    }
    barrier();
    if (me == 2) {
        s = s_conn = get_ep(0, P_S);
        r = r_conn = get_ep(1, P_R);
        mcapi_pktchan_connect_i(s, r, &req, &st);
        OK(finish_i(st, &req));
        mcapi_pktchan_connect_i(s, r, &req, &st);
        EXPECT_FAIL_I(st, MCAPI_ERR_CHAN_CONNECTED, &req);
        /* One end connected already, to another endpoint, is enough: both ways round, with
         * the other end local here. */
        l = create_ep(P_L);
        mcapi_pktchan_connect_i(s, l, &req, &st);
        EXPECT_FAIL_I(st, MCAPI_ERR_CHAN_CONNECTED, &req);
        mcapi_pktchan_connect_i(l, r, &req, &st);
        EXPECT_FAIL_I(st, MCAPI_ERR_CHAN_CONNECTED, &req);
        mcapi_endpoint_delete(l, &st);
        OK(st);
        mcapi_pktchan_connect_i(s, s, &req, &st);
        EXPECT_I(st, MCAPI_ERR_ENDP_INVALID, &req);
        mcapi_pktchan_connect_i(s, r, NULL, &st);
        EXPECT(st, MCAPI_ERR_PARAMETER);
        d = create_ep(MCAPI_PORT_ANY);
        mcapi_endpoint_delete(d, &st);
        OK(st);
        s2 = get_ep(0, P_S2);
        r2 = get_ep(1, P_R2);
        mcapi_pktchan_connect_i(d, r2, &req, &st);
        EXPECT_I(st, MCAPI_ERR_ENDP_INVALID, &req);
        r3 = get_ep(1, P_R3);
        mcapi_pktchan_connect_i(s2, r2, &req, &st);
        EXPECT_I(st, MCAPI_ERR_ATTR_INCOMPATIBLE, &req);
        /* P_R3 has two gets (nodes 0 and 2): it cannot become a channel endpoint. */
        mcapi_pktchan_connect_i(s2, r3, &req, &st);
        EXPECT_I(st, MCAPI_ERR_ENDP_GET_LIMIT, &req);
    } else if (me == 0) {
        OK(finish_i(MCAPI_PENDING, &req));
    } else if (me == 1) {
        OK(finish_i(MCAPI_PENDING, &req));
    }
    barrier();
}

/* Misuse of a connected, open channel. */
static void open_misuse(mcapi_endpoint_t msg_ep)
{
    mcapi_status_t st;
    mcapi_request_t req;
    mcapi_pktchan_send_hndl_t hs;
    mcapi_pktchan_recv_hndl_t hr;
    mcapi_sclchan_send_hndl_t ss;
    mcapi_sclchan_recv_hndl_t sr;
    mcapi_endp_attr_status_t want;
    mcapi_endpoint_t l;
    char buf[8] = "abc";

    if (me == 0) {
        mcapi_pktchan_send_open_i(&hs, S, &req, &st);
        EXPECT_I(st, MCAPI_ERR_CHAN_OPEN, &req);
        mcapi_pktchan_recv_open_i(&hr, S, &req, &st);
        EXPECT_I(st, MCAPI_ERR_CHAN_DIRECTION, &req);
        mcapi_sclchan_send_open_i(&ss, S, &req, &st);
        EXPECT_I(st, MCAPI_ERR_CHAN_TYPE, &req);
        /* S is connected to R: a connect of S with a free endpoint of this node fails within
         * the call (both ends are here). */
        l = create_ep(P_L);
        mcapi_pktchan_connect_i(S, l, &req, &st);
        EXPECT(st, MCAPI_ERR_CHAN_CONNECTED);
        mcapi_pktchan_connect_i(l, S, &req, &st);
        EXPECT(st, MCAPI_ERR_CHAN_CONNECTED);
        mcapi_endpoint_delete(l, &st);
        OK(st);
        want = MCAPI_ENDP_ATTR_STATUS_CONNECTED | MCAPI_ENDP_ATTR_STATUS_OPEN
               | MCAPI_ENDP_ATTR_STATUS_PKTCHAN | MCAPI_ENDP_ATTR_STATUS_SEND;
        CHECK(endp_status(S) == want, "send endpoint status %#x, expected %#x", endp_status(S),
              want);
    } else if (me == 1) {
        mcapi_pktchan_recv_open_i(&hr, R, &req, &st);
        EXPECT_I(st, MCAPI_ERR_CHAN_OPEN, &req);
        mcapi_pktchan_send_open_i(&hs, R, &req, &st);
        EXPECT_I(st, MCAPI_ERR_CHAN_DIRECTION, &req);
        mcapi_sclchan_recv_open_i(&sr, R, &req, &st);
        EXPECT_I(st, MCAPI_ERR_CHAN_TYPE, &req);
        want = MCAPI_ENDP_ATTR_STATUS_CONNECTED | MCAPI_ENDP_ATTR_STATUS_OPEN
               | MCAPI_ENDP_ATTR_STATUS_PKTCHAN | MCAPI_ENDP_ATTR_STATUS_RECEIVE;
        CHECK(endp_status(R) == want, "receive endpoint status %#x, expected %#x",
              endp_status(R), want);
    } else if (me == 2) {
        /* Messages to a connected endpoint are refused. */
        mcapi_msg_send(msg_ep, r_conn, buf, sizeof buf, 0, &st);
        EXPECT(st, MCAPI_ERR_GENERAL);
    }
}

static void connected_refusals(void)
{
    mcapi_status_t st;
    mcapi_endp_attr_priority_t p = 3;
    if (me != 0)
        return;
    mcapi_endpoint_set_attribute(S, MCAPI_ENDP_ATTR_PRIORITY, &p, sizeof p, &st);
    EXPECT(st, MCAPI_ERR_CHAN_CONNECTED);
    mcapi_endpoint_delete(S, &st);
    EXPECT(st, MCAPI_ERR_CHAN_CONNECTED);
}

static void data_fifo(unsigned char *buf)
{
    enum { N = 40 };
    mcapi_status_t st;
    mcapi_request_t req;
    size_t i, n, got;
    void *pkt;

    if (me == 0) {
        mcapi_pktchan_send(sh, buf, (size_t)MCAPI_MAX_PKT_SIZE + 1, &st);
        EXPECT(st, MCAPI_ERR_PKT_SIZE);
        mcapi_pktchan_send_i(sh, buf, (size_t)MCAPI_MAX_PKT_SIZE + 1, &req, &st);
        EXPECT(st, MCAPI_ERR_PKT_SIZE);
        mcapi_pktchan_send(sh, NULL, 10, &st);
        EXPECT(st, MCAPI_ERR_PARAMETER);
        mcapi_pktchan_send_i(sh, buf, 10, NULL, &st);
        EXPECT(st, MCAPI_ERR_PARAMETER);
        (void)mcapi_pktchan_available(sh, &st);
        EXPECT(st, MCAPI_ERR_CHAN_INVALID);
        mcapi_pktchan_recv(sh, &pkt, &got, &st);
        EXPECT(st, MCAPI_ERR_CHAN_INVALID);
        mcapi_pktchan_recv_i(sh, &pkt, &req, &st);
        EXPECT(st, MCAPI_ERR_CHAN_INVALID);
        for (i = 0; i < N; i++) {
            n = sizes[i % NSIZES];
            fill(buf, n, (uint32_t)i);
            if (i % 2 == 0) {
                mcapi_pktchan_send(sh, n ? buf : NULL, n, &st);
                OK(st);
            } else {
                mcapi_pktchan_send_i(sh, buf, n, &req, &st);
                OK(finish_size(st, &req, &got));
                CHECK(got == n, "send_i of %zu bytes reports %zu", n, got);
            }
        }
    } else if (me == 1) {
        mcapi_pktchan_send(rh, buf, 10, &st);
        EXPECT(st, MCAPI_ERR_CHAN_INVALID);
        mcapi_pktchan_send_i(rh, buf, 10, &req, &st);
        EXPECT(st, MCAPI_ERR_CHAN_INVALID);
        mcapi_pktchan_recv(rh, NULL, &got, &st);
        EXPECT(st, MCAPI_ERR_PARAMETER);
        mcapi_pktchan_recv(rh, &pkt, NULL, &st);
        EXPECT(st, MCAPI_ERR_PARAMETER);
        mcapi_pktchan_recv_i(rh, NULL, &req, &st);
        EXPECT(st, MCAPI_ERR_PARAMETER);
        mcapi_pktchan_recv_i(rh, &pkt, NULL, &st);
        EXPECT(st, MCAPI_ERR_PARAMETER);
        for (i = 0; i < N; i++) {
            n = sizes[i % NSIZES];
            pkt = NULL;
            if (i % 2 == 0) {
                mcapi_pktchan_recv(rh, &pkt, &got, &st);
                OK(st);
            } else {
                mcapi_pktchan_recv_i(rh, &pkt, &req, &st);
                OK(finish_size(st, &req, &got));
            }
            CHECK(got == n, "packet %zu has %zu bytes, sent %zu", i, got, n);
            CHECK(pkt != NULL, "packet %zu: no buffer (a 0-byte packet has one too)", i);
            CHECK(verify(pkt, got, (uint32_t)i) == got, "packet %zu differs at byte %zu", i,
                  verify(pkt, got, (uint32_t)i));
            mcapi_pktchan_release(pkt, &st);
            OK(st);
        }
        CHECK(mcapi_pktchan_available(rh, &st) == 0, "packets left over");
        OK(st);
    }
}

/* The window: with every receive buffer held, the next send waits for a release. */
static void window(mcapi_endp_attr_num_recv_buffers_t w)
{
    mcapi_status_t st;
    mcapi_request_t extra;
    unsigned char small[64], local = 0;
    void **held, *pkt;
    size_t got, k, j;
    double t0;

    if (me == 0) {
        w = (mcapi_endp_attr_num_recv_buffers_t)ctl_recv();
        for (k = 0; k < w; k++) {
            fill(small, sizeof small, (uint32_t)(5000 + k));
            mcapi_pktchan_send(sh, small, sizeof small, &st);
            OK(st);
        }
        fill(small, sizeof small, (uint32_t)(5000 + w));
        mcapi_pktchan_send_i(sh, small, sizeof small, &extra, &st);
        EXPECT(st, MCAPI_PENDING);
        CHECK(mcapi_wait(&extra, &got, T_SHORT, &st) == MCAPI_FALSE, "send past the window done");
        EXPECT(st, MCAPI_TIMEOUT);
        ctl_send(1, 1);
        CHECK(ctl_recv() == 2, "control word");
        CHECK(mcapi_wait(&extra, &got, T_SHORT, &st) == MCAPI_FALSE, "send done, buffers held");
        EXPECT(st, MCAPI_TIMEOUT);
        ctl_send(1, 3);
        CHECK(mcapi_wait(&extra, &got, T_LONG, &st) == MCAPI_TRUE, "send after a release");
        OK(st);
        ctl_send(1, 4);
        return;
    }
    if (me != 1)
        return;
    CHECK(w >= 4 && w <= 65536, "receive buffers: %u, expected 4 to 65536", w);
    ctl_send(0, w);
    CHECK(ctl_recv() == 1, "control word");
    t0 = now_ms();
    while (mcapi_pktchan_available(rh, &st) < w) {
        OK(st);
        CHECK(now_ms() - t0 < T_LONG, "only %u of %u packets arrived",
              mcapi_pktchan_available(rh, &st), w);
        sleep_ms(1);
    }
    CHECK(mcapi_pktchan_available(rh, &st) == w, "more packets than receive buffers");
    held = (void **)xmalloc(sizeof *held * w);
    for (k = 0; k < w; k++) {
        mcapi_pktchan_recv(rh, &held[k], &got, &st);
        OK(st);
        CHECK(got == sizeof small && verify(held[k], got, (uint32_t)(5000 + k)) == got,
              "window packet %zu", k);
        for (j = 0; j < k; j++)
            CHECK(held[j] != held[k], "two held packets share buffer %p", held[k]);
    }
    CHECK(mcapi_pktchan_release_test(held[0], &st) == MCAPI_FALSE, "held buffer released");
    EXPECT(st, MCAPI_PENDING);
    ctl_send(0, 2);
    CHECK(ctl_recv() == 3, "control word");
    mcapi_pktchan_release(held[0], &st);
    OK(st);
    CHECK(mcapi_pktchan_release_test(held[0], &st) == MCAPI_TRUE, "release_test after release");
    OK(st);
    mcapi_pktchan_release(held[0], &st);
    EXPECT(st, MCAPI_ERR_BUF_INVALID);
    CHECK(ctl_recv() == 4, "control word");
    mcapi_pktchan_recv(rh, &pkt, &got, &st);
    OK(st);
    CHECK(got == sizeof small && verify(pkt, got, (uint32_t)(5000 + w)) == got, "extra packet");
    mcapi_pktchan_release(pkt, &st);
    OK(st);
    for (k = w; k-- > 1;) {
        mcapi_pktchan_release(held[k], &st);
        OK(st);
    }
    free(held);
    mcapi_pktchan_release(&local, &st);
    EXPECT(st, MCAPI_ERR_BUF_INVALID);
    mcapi_pktchan_release(NULL, &st);
    EXPECT(st, MCAPI_ERR_BUF_INVALID);
    (void)mcapi_pktchan_release_test(&local, &st);
    EXPECT(st, MCAPI_ERR_BUF_INVALID);
    (void)mcapi_pktchan_release_test(NULL, &st);
    EXPECT(st, MCAPI_ERR_PARAMETER);
}

/* A receiver slower than the sender: nothing lost, nothing reordered. */
static void slow_receiver(unsigned char *buf)
{
    enum { N = 300, LEN = 1000 };
    mcapi_status_t st;
    size_t i, got;
    void *pkt;
    for (i = 0; i < N; i++) {
        if (me == 0) {
            fill(buf, LEN, (uint32_t)(9000 + i));
            mcapi_pktchan_send(sh, buf, LEN, &st);
            OK(st);
        } else if (me == 1) {
            if (i % 10 == 0)
                sleep_ms(5);
            mcapi_pktchan_recv(rh, &pkt, &got, &st);
            OK(st);
            CHECK(got == LEN && verify(pkt, got, (uint32_t)(9000 + i)) == got, "slow packet %zu",
                  i);
            mcapi_pktchan_release(pkt, &st);
            OK(st);
        }
    }
}

/* The sender closes with packets queued; the receiver still gets them. */
static void close_after_send(mcapi_endpoint_t s, mcapi_endpoint_t r)
{
    mcapi_status_t st;
    mcapi_request_t req, close_req;
    mcapi_pktchan_send_hndl_t hs;
    size_t got, i;
    char word[4] = "pkt";
    void *pkt;

    if (me == 0) {
        mcapi_pktchan_recv_close_i(sh, &req, &st);
        EXPECT(st, MCAPI_ERR_CHAN_DIRECTION);
        mcapi_sclchan_send_close_i(sh, &req, &st);
        EXPECT(st, MCAPI_ERR_CHAN_TYPE);
        mcapi_pktchan_send_close_i(sh, NULL, &st);
        EXPECT(st, MCAPI_ERR_PARAMETER);
        for (i = 0; i < 5; i++) {
            mcapi_pktchan_send(sh, word, sizeof word, &st);
            OK(st);
        }
        mcapi_pktchan_send_close_i(sh, &close_req, &st);
        EXPECT(st, MCAPI_PENDING);
        CHECK(mcapi_wait(&close_req, &got, T_SHORT, &st) == MCAPI_FALSE, "close done alone");
        EXPECT(st, MCAPI_TIMEOUT);
        CHECK(endp_status(S) & MCAPI_ENDP_ATTR_STATUS_CLOSE_PENDING, "no CLOSE_PENDING flag");
        mcapi_pktchan_send(sh, word, sizeof word, &st);
        EXPECT(st, MCAPI_ERR_CHAN_INVALID);
        mcapi_pktchan_send_close_i(sh, &req, &st);
        EXPECT(st, MCAPI_ERR_CHAN_INVALID);
        mcapi_pktchan_send_open_i(&hs, S, &req, &st);
        EXPECT_I(st, MCAPI_ERR_CHAN_CLOSEPENDING, &req);
        ctl_send(2, 5);
        CHECK(mcapi_wait(&close_req, &got, T_LONG, &st) == MCAPI_TRUE, "send close");
        OK(st);
    } else if (me == 2) {
        CHECK(ctl_recv() == 5, "control word");
        mcapi_pktchan_connect_i(s, r, &req, &st);
        EXPECT_I(st, MCAPI_ERR_CHAN_CLOSEPENDING, &req);
        ctl_send(1, 6);
    } else if (me == 1) {
        mcapi_pktchan_send_close_i(rh, &req, &st);
        EXPECT(st, MCAPI_ERR_CHAN_DIRECTION);
        mcapi_sclchan_recv_close_i(rh, &req, &st);
        EXPECT(st, MCAPI_ERR_CHAN_TYPE);
        mcapi_pktchan_recv_close_i(rh, NULL, &st);
        EXPECT(st, MCAPI_ERR_PARAMETER);
        CHECK(ctl_recv() == 6, "control word");
        for (i = 0; i < 5; i++) {
            mcapi_pktchan_recv(rh, &pkt, &got, &st);
            OK(st);
            CHECK(got == sizeof word && memcmp(pkt, word, got) == 0, "packet %zu after close", i);
            mcapi_pktchan_release(pkt, &st);
            OK(st);
        }
        /* Nothing left and the sender gone: the receive says so instead of blocking. */
        mcapi_pktchan_recv(rh, &pkt, &got, &st);
        EXPECT(st, MCAPI_ERR_CHAN_NOTOPEN);
        mcapi_pktchan_recv_close_i(rh, &req, &st);
        OK(finish_i(st, &req));
        (void)mcapi_pktchan_available(rh, &st);
        EXPECT(st, MCAPI_ERR_CHAN_INVALID);
        mcapi_pktchan_recv_close_i(rh, &req, &st);
        EXPECT(st, MCAPI_ERR_CHAN_INVALID);
    }
}

/* Connected and opened again; the receiver closes first and discards what is queued. */
static void reconnect_and_recv_close(mcapi_endpoint_t s, mcapi_endpoint_t r)
{
    mcapi_status_t st;
    mcapi_request_t req, close_req;
    char word[4] = "re";
    size_t got, i;
    void *pkt;
    double t0;

    if (me == 2) {
        mcapi_pktchan_connect_i(s, r, &req, &st);
        OK(finish_i(st, &req));
    } else if (me == 0) {
        mcapi_pktchan_send_open_i(&sh, S, &req, &st);
        OK(finish_i(st, &req));
        for (i = 0; i < 3; i++) {
            mcapi_pktchan_send(sh, word, sizeof word, &st);
            OK(st);
        }
        ctl_send(1, 7);
        CHECK(ctl_recv() == 8, "control word");
        mcapi_pktchan_send(sh, word, sizeof word, &st);
        EXPECT(st, MCAPI_ERR_CHAN_NOTOPEN);
        mcapi_pktchan_send_close_i(sh, &req, &st);
        OK(finish_i(st, &req));
    } else if (me == 1) {
        mcapi_pktchan_recv_open_i(&rh, R, &req, &st);
        OK(finish_i(st, &req));
        CHECK(ctl_recv() == 7, "control word");
        t0 = now_ms();
        while (mcapi_pktchan_available(rh, &st) < 3) {
            OK(st);
            CHECK(now_ms() - t0 < T_LONG, "packets of the second connection missing");
            sleep_ms(1);
        }
        mcapi_pktchan_recv(rh, &pkt, &got, &st);
        OK(st);
        mcapi_pktchan_recv_close_i(rh, &close_req, &st);
        EXPECT(st, MCAPI_PENDING);
        /* A buffer received before the close stays the receiver's until released. */
        CHECK(got == sizeof word && memcmp(pkt, word, got) == 0, "held packet after close");
        mcapi_pktchan_release(pkt, &st);
        OK(st);
        ctl_send(0, 8);
        CHECK(mcapi_wait(&close_req, &got, T_LONG, &st) == MCAPI_TRUE, "receive close");
        OK(st);
    }
}

int main(void)
{
    mcapi_status_t st;
    mcapi_endpoint_t msg_ep;
    mcapi_endp_attr_num_recv_buffers_t w = 0;
    unsigned char *buf;

    test_env(3);
    node_init();
    ctl_setup(CTL_PORT);
    buf = (unsigned char *)xmalloc((size_t)MCAPI_MAX_PKT_SIZE + 1);
    msg_ep = create_ep(P_MSG);
    if (me == 0) {
        S = create_ep(P_S);
        set_priority(create_ep(P_S2), 1);
    } else if (me == 1) {
        R = create_ep(P_R);
        set_priority(create_ep(P_R2), 2);
        (void)create_ep(P_R3);
        mcapi_endpoint_get_attribute(R, MCAPI_ENDP_ATTR_NUM_RECV_BUFFERS, &w, sizeof w, &st);
        OK(st);
    }
    barrier();
    connect_and_open();
    open_misuse(msg_ep);
    connected_refusals();
    barrier();
    data_fifo(buf);
    barrier();
    window(w);
    barrier();
    slow_receiver(buf);
    barrier();
    close_after_send(s_conn, r_conn);
    barrier();
    reconnect_and_recv_close(s_conn, r_conn);
    barrier();
    if (me == 0) {
        mcapi_endpoint_delete(S, &st);
        OK(st);
    }
    free(buf);
    return node_done();
}

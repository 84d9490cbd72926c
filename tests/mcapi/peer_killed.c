/* nodes: 3 */
/* launch: hand */
/* killed: 1 */
/*
 * A peer killed in the middle of transfers. Nodes are started by hand (no launcher to end the
 * job). Node 1 connects two packet channels, 0 -> 1 and 1 -> 2, receives 10 packets from node
 * 0, sends 10 to node 2, then kills itself with SIGKILL. The survivors must get an error
 * status, not hang: node 0's blocking sends (the window to node 1 fills and never opens again)
 * end with MCAPI_ERR_TRANSMISSION, and so does a message to node 1; node 2 receives at most
 * the 10 packets, intact and in order, then its receive ends with MCAPI_ERR_TRANSMISSION.
 * Closing a channel whose other end is gone fails the same way.
 * The runner checks that node 1 died of SIGKILL and the others exited 0.
 */
#define TEST_NAME "peer_killed"
#include "mcapi_testutil.h"

#define P_OUT 700 /* node 0: sends to node 1 */
#define P_IN 701  /* node 1: receives from node 0 */
#define P_FWD 702 /* node 1: sends to node 2 */
#define P_END 703 /* node 2: receives from node 1 */
#define P_MSG 704
#define LEN 65536
#define SENT_BEFORE_DEATH 10

int main(void)
{
    mcapi_status_t st;
    mcapi_request_t req, creq;
    mcapi_pktchan_send_hndl_t sh;
    mcapi_pktchan_recv_hndl_t rh;
    mcapi_endpoint_t out = 0, in = 0, fwd = 0, end = 0, msg, peer_msg;
    unsigned char *buf;
    size_t got;
    void *pkt;
    int i;

    test_env(3);
    node_init();
    ctl_setup(CTL_PORT);
    buf = (unsigned char *)xmalloc(LEN);
    msg = create_ep(P_MSG);
    if (me == 0)
        out = create_ep(P_OUT);
    if (me == 1) {
        in = create_ep(P_IN);
        fwd = create_ep(P_FWD);
    }
    if (me == 2)
        end = create_ep(P_END);
    barrier();

    if (me == 1) {
        mcapi_pktchan_connect_i(get_ep(0, P_OUT), in, &creq, &st);
        OK(finish_i(st, &creq));
        mcapi_pktchan_connect_i(fwd, get_ep(2, P_END), &creq, &st);
        OK(finish_i(st, &creq));
        mcapi_pktchan_recv_open_i(&rh, in, &req, &st);
        OK(finish_i(st, &req));
        mcapi_pktchan_send_open_i(&sh, fwd, &req, &st);
        OK(finish_i(st, &req));
        for (i = 0; i < SENT_BEFORE_DEATH; i++) {
            mcapi_pktchan_recv(rh, &pkt, &got, &st);
            OK(st);
            CHECK(got == LEN && verify(pkt, got, (uint32_t)i) == got, "packet %d from node 0", i);
            mcapi_pktchan_send(sh, pkt, got, &st);
            OK(st);
            mcapi_pktchan_release(pkt, &st);
            OK(st);
        }
        raise(SIGKILL);
        fail(__LINE__, "still alive after SIGKILL");
    }

    if (me == 0) {
        mcapi_pktchan_send_open_i(&sh, out, &req, &st);
        OK(finish_i(st, &req));
        peer_msg = get_ep(1, P_MSG);
        for (i = 0; i < 1000000; i++) {
            fill(buf, LEN, (uint32_t)i);
            mcapi_pktchan_send(sh, buf, LEN, &st);
            if (st != MCAPI_SUCCESS)
                break;
        }
        EXPECT(st, MCAPI_ERR_TRANSMISSION);
        CHECK(i >= SENT_BEFORE_DEATH, "sends failed after %d packets, before node 1 died", i);
        mcapi_msg_send(msg, peer_msg, "hello", 6, 0, &st);
        EXPECT(st, MCAPI_ERR_TRANSMISSION);
        /* A close needs the peer too. */
        mcapi_pktchan_send_close_i(sh, &req, &st);
        EXPECT_I(st, MCAPI_ERR_TRANSMISSION, &req);
    }

    if (me == 2) {
        mcapi_pktchan_recv_open_i(&rh, end, &req, &st);
        OK(finish_i(st, &req));
        for (i = 0; i <= SENT_BEFORE_DEATH; i++) {
            mcapi_pktchan_recv(rh, &pkt, &got, &st);
            if (st != MCAPI_SUCCESS)
                break;
            CHECK(got == LEN && verify(pkt, got, (uint32_t)i) == got, "packet %d via node 1", i);
            mcapi_pktchan_release(pkt, &st);
            OK(st);
        }
        EXPECT(st, MCAPI_ERR_TRANSMISSION);
        CHECK(i <= SENT_BEFORE_DEATH, "more packets than node 1 sent");
        mcapi_pktchan_recv_close_i(rh, &req, &st);
        EXPECT_I(st, MCAPI_ERR_TRANSMISSION, &req);
    }

    /* The survivors finish without node 1: no barrier, which would need it. */
    free(buf);
    mcapi_finalize(&st);
    OK(st);
    if (me == 0)
        printf("ok %s\n", TEST_NAME);
    return 0;
}

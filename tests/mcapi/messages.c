/* nodes: 2 4 8 */
/* launch: job split hydra hand hosts */
/*
 * Messages: blocking and non-blocking send and receive between node 0 and node 1, sizes 0 to
 * MCAPI_MAX_MSG_SIZE checked byte by byte; MCAPI_ERR_MSG_SIZE one byte over; a truncated
 * receive (MCAPI_ERR_MSG_TRUNCATED, the message stays queued and a large enough receive gets
 * it); delivery by priority (0 first), FIFO within a priority; mcapi_msg_available; receives
 * posted before the sends complete in the order they were posted; every node but 0 sending to
 * node 0 at once; bad priority, endpoints and pointers. Last, node 1 sends and finalizes at
 * once: the message still arrives.
 */
#define TEST_NAME "messages"
#include "mcapi_testutil.h"

#define P_DATA 200
#define P_SINK 201

static const size_t sizes[] = { 0, 1, 2, 3, 7, 64, 1000, 4096, 65535, 65536, 65537, 300000,
                                MCAPI_MAX_MSG_SIZE - 1, MCAPI_MAX_MSG_SIZE };
#define NSIZES (sizeof sizes / sizeof sizes[0])

static void sizes_blocking(mcapi_endpoint_t local, mcapi_endpoint_t peer, unsigned char *buf)
{
    mcapi_status_t st;
    size_t i, got;
    for (i = 0; i < NSIZES; i++) {
        if (me == 0) {
            fill(buf, sizes[i], (uint32_t)i);
            mcapi_msg_send(local, peer, sizes[i] ? buf : NULL, sizes[i], 1, &st);
            OK(st);
        } else {
            memset(buf, 0, MCAPI_MAX_MSG_SIZE);
            mcapi_msg_recv(local, buf, MCAPI_MAX_MSG_SIZE, &got, &st);
            OK(st);
            CHECK(got == sizes[i], "received %zu bytes, sent %zu", got, sizes[i]);
            CHECK(verify(buf, got, (uint32_t)i) == got, "%zu-byte message differs at byte %zu",
                  got, verify(buf, got, (uint32_t)i));
        }
    }
}

static void sizes_nonblocking(mcapi_endpoint_t local, mcapi_endpoint_t peer, unsigned char *buf)
{
    mcapi_status_t st;
    mcapi_request_t req;
    size_t i, got;
    for (i = 0; i < NSIZES; i++) {
        if (me == 0) {
            fill(buf, sizes[i], (uint32_t)(100 + i));
            mcapi_msg_send_i(local, peer, buf, sizes[i], 2, &req, &st);
            OK(finish_size(st, &req, &got));
            CHECK(got == sizes[i], "send_i of %zu bytes reports %zu", sizes[i], got);
        } else {
            memset(buf, 0, MCAPI_MAX_MSG_SIZE);
            mcapi_msg_recv_i(local, buf, MCAPI_MAX_MSG_SIZE, &req, &st);
            OK(finish_size(st, &req, &got));
            CHECK(got == sizes[i], "recv_i got %zu bytes, sent %zu", got, sizes[i]);
            CHECK(verify(buf, got, (uint32_t)(100 + i)) == got, "%zu-byte message differs", got);
        }
    }
}

static void size_limit(mcapi_endpoint_t local, mcapi_endpoint_t peer, unsigned char *buf)
{
    mcapi_status_t st;
    mcapi_request_t req;
    mcapi_msg_send(local, peer, buf, (size_t)MCAPI_MAX_MSG_SIZE + 1, 0, &st);
    EXPECT(st, MCAPI_ERR_MSG_SIZE);
    mcapi_msg_send_i(local, peer, buf, (size_t)MCAPI_MAX_MSG_SIZE + 1, 0, &req, &st);
    EXPECT(st, MCAPI_ERR_MSG_SIZE);
}

/* Node 0 sends 100 bytes; node 1 offers 50, then 100. */
static void truncation(mcapi_endpoint_t local, mcapi_endpoint_t peer, unsigned char *buf)
{
    mcapi_status_t st;
    mcapi_request_t req;
    size_t got = 0;
    uint32_t go = 0;
    if (me == 0) {
        /* Wait until node 1 took every message of the size tests: these go at priority 0
         * and would overtake any still queued. */
        mcapi_msg_recv(local, &go, sizeof go, &got, &st);
        OK(st);
        fill(buf, 100, 55);
        mcapi_msg_send(local, peer, buf, 100, 0, &st);
        OK(st);
        mcapi_msg_send(local, peer, buf, 100, 0, &st);
        OK(st);
        return;
    }
    mcapi_msg_send(local, peer, &go, sizeof go, 0, &st);
    OK(st);
    memset(buf, 0xEE, 100);
    mcapi_msg_recv(local, buf, 50, &got, &st);
    EXPECT(st, MCAPI_ERR_MSG_TRUNCATED);
    CHECK(got == 100, "a truncated receive reports %zu bytes, the message has 100", got);
    CHECK(buf[0] == 0xEE && buf[49] == 0xEE, "a truncated receive wrote the buffer");
    CHECK(mcapi_msg_available(local, &st) >= 1, "the truncated message left the queue");
    OK(st);
    mcapi_msg_recv(local, buf, 100, &got, &st);
    OK(st);
    CHECK(got == 100 && verify(buf, 100, 55) == 100, "the message after truncation differs");
    /* The same through recv_i: the wait reports the truncation and the size. */
    mcapi_msg_recv_i(local, buf, 10, &req, &st);
    EXPECT(finish_size(st, &req, &got), MCAPI_ERR_MSG_TRUNCATED);
    CHECK(got == 100, "truncated recv_i reports %zu bytes", got);
    mcapi_msg_recv(local, buf, MCAPI_MAX_MSG_SIZE, &got, &st);
    OK(st);
    CHECK(got == 100 && verify(buf, 100, 55) == 100, "the second message differs");
}

/* Priorities: node 0 queues 8 messages at node 1 before node 1 receives any. */
static void priorities(mcapi_endpoint_t local, mcapi_endpoint_t peer)
{
    static const unsigned prio[] = { 5, 3, 0, MCAPI_MAX_PRIORITY, 3, 0, 5, 0 };
    static const unsigned order[] = { 2, 5, 7, 1, 4, 0, 6, 3 }; /* the expected delivery */
    mcapi_status_t st;
    uint32_t word;
    size_t got, i, n = sizeof prio / sizeof prio[0];
    double t0;

    if (me == 0) {
        for (i = 0; i < n; i++) {
            word = (uint32_t)i;
            mcapi_msg_send(local, peer, &word, sizeof word, prio[i], &st);
            OK(st);
        }
        return;
    }
    CHECK(mcapi_msg_available(local, &st) <= n, "too many messages");
    OK(st);
    t0 = now_ms();
    while (mcapi_msg_available(local, &st) < n) {
        OK(st);
        CHECK(now_ms() - t0 < T_LONG, "only %u of %zu messages arrived",
              mcapi_msg_available(local, &st), n);
        sleep_ms(1);
    }
    for (i = 0; i < n; i++) {
        mcapi_msg_recv(local, &word, sizeof word, &got, &st);
        OK(st);
        CHECK(word == order[i], "delivery %zu was message %u (priority %u), expected %u", i,
              (unsigned)word, prio[word % n], order[i]);
        CHECK(mcapi_msg_available(local, &st) == n - i - 1, "available after %zu receives", i + 1);
        OK(st);
    }
}

/* Three receives posted before the sends: each gets the message of its rank in the queue. */
static void posted_receives(mcapi_endpoint_t local, mcapi_endpoint_t peer)
{
    mcapi_status_t st;
    mcapi_request_t req[3];
    uint32_t in[3], word;
    size_t got;
    unsigned i;

    if (me == 1) {
        for (i = 0; i < 3; i++) {
            mcapi_msg_recv_i(local, &in[i], sizeof in[i], &req[i], &st);
            EXPECT(st, MCAPI_PENDING);
        }
        CHECK(mcapi_test(&req[0], &got, &st) == MCAPI_FALSE, "a receive with no message done");
        EXPECT(st, MCAPI_PENDING);
        /* The go-ahead travels on the data endpoints: the control endpoint of node 0 also
         * gets the barrier words of nodes past 1, which skip this part. */
        word = 1;
        mcapi_msg_send(local, peer, &word, sizeof word, 0, &st);
        OK(st);
        for (i = 0; i < 3; i++) {
            CHECK(mcapi_wait(&req[i], &got, T_LONG, &st) == MCAPI_TRUE, "posted receive %u", i);
            OK(st);
            CHECK(got == sizeof word && in[i] == 40 + i, "posted receive %u got %u", i,
                  (unsigned)in[i]);
        }
    } else {
        mcapi_msg_recv(local, &word, sizeof word, &got, &st);
        OK(st);
        CHECK(got == sizeof word && word == 1, "go-ahead word");
        for (i = 0; i < 3; i++) {
            word = 40 + i;
            mcapi_msg_send(local, peer, &word, sizeof word, 3, &st);
            OK(st);
        }
    }
}

/* Every node but 0 sends 200 numbered messages to node 0's sink at once. */
static void many_to_one(mcapi_endpoint_t local, mcapi_endpoint_t sink0)
{
    enum { K = 200 };
    mcapi_status_t st;
    uint32_t msg[2], next[64];
    size_t got;
    int i, total;

    if (me != 0) {
        for (i = 0; i < K; i++) {
            msg[0] = (uint32_t)me;
            msg[1] = (uint32_t)i;
            mcapi_msg_send(local, sink0, msg, sizeof msg, 4, &st);
            OK(st);
        }
        return;
    }
    memset(next, 0, sizeof next);
    for (total = 0; total < K * (np - 1); total++) {
        mcapi_msg_recv(sink0, msg, sizeof msg, &got, &st);
        OK(st);
        CHECK(got == sizeof msg && msg[0] >= 1 && (int)msg[0] < np, "a message from nowhere");
        CHECK(msg[1] == next[msg[0]], "from node %u: message %u, expected %u", (unsigned)msg[0],
              (unsigned)msg[1], (unsigned)next[msg[0]]);
        next[msg[0]]++;
    }
    CHECK(mcapi_msg_available(sink0, &st) == 0, "messages left over");
    OK(st);
}

static void misuse(mcapi_endpoint_t local, mcapi_endpoint_t peer)
{
    mcapi_status_t st;
    mcapi_request_t req;
    mcapi_endpoint_t gone;
    char buf[16];
    size_t got;

    memset(buf, 0, sizeof buf);
    mcapi_msg_send(local, peer, buf, sizeof buf, MCAPI_MAX_PRIORITY + 1, &st);
    EXPECT(st, MCAPI_ERR_PRIORITY);
    mcapi_msg_send_i(local, peer, buf, sizeof buf, MCAPI_MAX_PRIORITY + 1, &req, &st);
    EXPECT(st, MCAPI_ERR_PRIORITY);
    mcapi_msg_send(local, peer, NULL, 4, 0, &st);
    EXPECT(st, MCAPI_ERR_PARAMETER);
    mcapi_msg_send_i(local, peer, NULL, 4, 0, &req, &st);
    EXPECT(st, MCAPI_ERR_PARAMETER);
    mcapi_msg_send_i(local, peer, buf, sizeof buf, 0, NULL, &st);
    EXPECT(st, MCAPI_ERR_PARAMETER);
    /* The send endpoint must be local, the receive endpoint must exist. */
    mcapi_msg_send(peer, local, buf, sizeof buf, 0, &st);
    EXPECT(st, MCAPI_ERR_ENDP_INVALID);
    mcapi_msg_send_i(peer, local, buf, sizeof buf, 0, &req, &st);
    EXPECT_I(st, MCAPI_ERR_ENDP_INVALID, &req);
    gone = create_ep(MCAPI_PORT_ANY);
    mcapi_endpoint_delete(gone, &st);
    OK(st);
    mcapi_msg_send(local, gone, buf, sizeof buf, 0, &st);
    EXPECT(st, MCAPI_ERR_ENDP_INVALID);
    mcapi_msg_send(gone, peer, buf, sizeof buf, 0, &st);
    EXPECT(st, MCAPI_ERR_ENDP_INVALID);
    /* Receives and availability only on local endpoints. */
    mcapi_msg_recv(peer, buf, sizeof buf, &got, &st);
    EXPECT(st, MCAPI_ERR_ENDP_INVALID);
    mcapi_msg_recv_i(peer, buf, sizeof buf, &req, &st);
    EXPECT(st, MCAPI_ERR_ENDP_INVALID);
    (void)mcapi_msg_available(peer, &st);
    EXPECT(st, MCAPI_ERR_ENDP_INVALID);
    (void)mcapi_msg_available(gone, &st);
    EXPECT(st, MCAPI_ERR_ENDP_INVALID);
    mcapi_msg_recv(local, NULL, sizeof buf, &got, &st);
    EXPECT(st, MCAPI_ERR_PARAMETER);
    mcapi_msg_recv(local, buf, sizeof buf, NULL, &st);
    EXPECT(st, MCAPI_ERR_PARAMETER);
    mcapi_msg_recv_i(local, NULL, sizeof buf, &req, &st);
    EXPECT(st, MCAPI_ERR_PARAMETER);
    mcapi_msg_recv_i(local, buf, sizeof buf, NULL, &st);
    EXPECT(st, MCAPI_ERR_PARAMETER);
    /* A message to oneself works like any other. */
    mcapi_msg_send(local, local, "self", 5, 0, &st);
    OK(st);
    mcapi_msg_recv(local, buf, sizeof buf, &got, &st);
    OK(st);
    CHECK(got == 5 && strcmp(buf, "self") == 0, "message to self");
}

int main(void)
{
    mcapi_status_t st;
    mcapi_endpoint_t data, sink, peer = 0, sink0;
    unsigned char *buf;
    char bye[8];
    size_t got;

    test_env(2);
    node_init();
    ctl_setup(CTL_PORT);
    data = create_ep(P_DATA);
    sink = create_ep(P_SINK);
    if (me <= 1)
        peer = get_ep(1 - me, P_DATA);
    sink0 = get_ep(0, P_SINK);
    buf = (unsigned char *)xmalloc((size_t)MCAPI_MAX_MSG_SIZE + 1);
    CHECK(mcapi_msg_available(data, &st) == 0, "messages before anyone sent");
    OK(st);
    barrier();

    if (me <= 1) {
        sizes_blocking(data, peer, buf);
        sizes_nonblocking(data, peer, buf);
        size_limit(data, peer, buf);
        truncation(data, peer, buf);
        priorities(data, peer);
        posted_receives(data, peer);
    }
    barrier();
    many_to_one(data, sink0);
    barrier();
    misuse(data, me <= 1 ? peer : sink0);
    barrier();
    (void)sink;
    free(buf);

    /* A send that returned is delivered even when its sender finalizes at once. */
    if (me == 1) {
        mcapi_msg_send(data, peer, "bye", 4, 0, &st);
        OK(st);
        mcapi_finalize(&st);
        OK(st);
        return 0;
    }
    if (me == 0) {
        mcapi_msg_recv(data, bye, sizeof bye, &got, &st);
        OK(st);
        CHECK(got == 4 && strcmp(bye, "bye") == 0, "the last message before finalize");
    }
    mcapi_finalize(&st);
    OK(st);
    if (me == 0)
        printf("ok %s\n", TEST_NAME);
    return 0;
}

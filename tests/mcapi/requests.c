/* nodes: 2 */
/* launch: job hand */
/*
 * Requests: mcapi_test, mcapi_wait, mcapi_wait_any and mcapi_cancel with every kind of
 * timeout. Node 1 posts receives; node 0 sends when node 1 asks for it. A wait that times out
 * leaves its request pending and it can be waited again; MCAPI_TIMEOUT_IMMEDIATE never blocks;
 * mcapi_test never releases a request, a completing wait does (a second wait then finds it
 * invalid); wait_any returns the index of the completed request and rejects an empty list at
 * once; a cancelled receive gives its message to the next receive; a wait in another thread
 * ends with MCAPI_ERR_REQUEST_CANCELLED when the request is cancelled, and a second waiter
 * gets MCAPI_ERR_WAIT_PENDING; a failed operation (a truncated receive) makes test and wait
 * return MCAPI_FALSE with its error, wait_any its index with the error; MCAPI_MAX_REQUESTS
 * requests can be outstanding, not one more; bad pointers and handles.
 */
#define TEST_NAME "requests"
#include "mcapi_testutil.h"

#define P_A 500
#define P_B 501
#define P_C 502

static mcapi_endpoint_t A, B, C, peer_a, peer_b, peer_c;

/* Node 0 serves node 1: each control word names an endpoint (1, 2, 3) and gets a message. */
static void serve(void)
{
    mcapi_status_t st;
    uint32_t w;
    mcapi_endpoint_t to;
    for (;;) {
        w = ctl_recv();
        if (w == 0)
            return;
        to = w == 1 ? peer_a : w == 2 ? peer_b : peer_c;
        mcapi_msg_send(A, to, &w, sizeof w, 0, &st);
        OK(st);
    }
}

/* Asks node 0 for a message on endpoint n, and waits until it is queued. */
static void ask(uint32_t n, mcapi_endpoint_t on, mcapi_uint_t queued)
{
    mcapi_status_t st;
    double t0 = now_ms();
    ctl_send(0, n);
    if (on == 0)
        return;
    while (mcapi_msg_available(on, &st) < queued) {
        OK(st);
        CHECK(now_ms() - t0 < T_LONG, "asked-for message never came");
        sleep_ms(1);
    }
}

static void test_and_wait(void)
{
    mcapi_status_t st;
    mcapi_request_t req, bogus = 0xDEADBEEFu;
    uint32_t in = 0;
    size_t size = 99;
    double t0, dt;

    mcapi_msg_recv_i(A, &in, sizeof in, &req, &st);
    EXPECT(st, MCAPI_PENDING);
    CHECK(mcapi_test(&req, &size, &st) == MCAPI_FALSE, "test of a pending receive");
    EXPECT(st, MCAPI_PENDING);
    t0 = now_ms();
    CHECK(mcapi_wait(&req, &size, MCAPI_TIMEOUT_IMMEDIATE, &st) == MCAPI_FALSE, "immediate wait");
    EXPECT(st, MCAPI_TIMEOUT);
    CHECK(now_ms() - t0 < 1000, "an immediate wait blocked %.0f ms", now_ms() - t0);
    t0 = now_ms();
    CHECK(mcapi_wait(&req, &size, T_SHORT, &st) == MCAPI_FALSE, "timed wait");
    dt = now_ms() - t0;
    EXPECT(st, MCAPI_TIMEOUT);
    CHECK(dt >= T_SHORT * 0.9 && dt < 10000, "a %u ms wait returned after %.0f ms", T_SHORT, dt);
    CHECK(mcapi_wait(&req, &size, T_SHORT, &st) == MCAPI_FALSE, "second timed wait");
    EXPECT(st, MCAPI_TIMEOUT);

    ask(1, 0, 0);
    CHECK(mcapi_wait(&req, &size, MCAPI_TIMEOUT_INFINITE, &st) == MCAPI_TRUE, "infinite wait");
    OK(st);
    CHECK(size == sizeof in && in == 1, "received %zu bytes, word %u", size, (unsigned)in);
    /* Released: any further use is invalid. */
    (void)mcapi_wait(&req, &size, MCAPI_TIMEOUT_IMMEDIATE, &st);
    EXPECT(st, MCAPI_ERR_REQUEST_INVALID);
    (void)mcapi_test(&req, &size, &st);
    EXPECT(st, MCAPI_ERR_REQUEST_INVALID);
    mcapi_cancel(&req, &st);
    EXPECT(st, MCAPI_ERR_REQUEST_INVALID);

    /* mcapi_test reports completion without releasing. */
    ask(1, A, 1);
    mcapi_msg_recv_i(A, &in, sizeof in, &req, &st);
    CHECK(st == MCAPI_SUCCESS || st == MCAPI_PENDING, "recv_i: %s", stname(st));
    t0 = now_ms();
    while (mcapi_test(&req, &size, &st) == MCAPI_FALSE) {
        EXPECT(st, MCAPI_PENDING);
        CHECK(now_ms() - t0 < T_LONG, "a queued message never completed the receive");
    }
    OK(st);
    CHECK(mcapi_test(&req, &size, &st) == MCAPI_TRUE, "second test");
    OK(st);
    CHECK(mcapi_wait(&req, &size, MCAPI_TIMEOUT_IMMEDIATE, &st) == MCAPI_TRUE, "wait after test");
    OK(st);

    /* Bad arguments. */
    (void)mcapi_test(&bogus, &size, &st);
    EXPECT(st, MCAPI_ERR_REQUEST_INVALID);
    (void)mcapi_wait(&bogus, &size, T_SHORT, &st);
    EXPECT(st, MCAPI_ERR_REQUEST_INVALID);
    mcapi_cancel(&bogus, &st);
    EXPECT(st, MCAPI_ERR_REQUEST_INVALID);
    mcapi_msg_recv_i(A, &in, sizeof in, &req, &st);
    EXPECT(st, MCAPI_PENDING);
    (void)mcapi_test(&req, NULL, &st);
    EXPECT(st, MCAPI_ERR_PARAMETER);
    (void)mcapi_wait(&req, NULL, T_SHORT, &st);
    EXPECT(st, MCAPI_ERR_PARAMETER);
    (void)mcapi_test(NULL, &size, &st);
    EXPECT(st, MCAPI_ERR_PARAMETER);
    (void)mcapi_wait(NULL, &size, T_SHORT, &st);
    EXPECT(st, MCAPI_ERR_PARAMETER);
    mcapi_cancel(NULL, &st);
    EXPECT(st, MCAPI_ERR_PARAMETER);
    mcapi_cancel(&req, &st);
    OK(st);
}

static void wait_any(void)
{
    mcapi_status_t st;
    mcapi_request_t ra, rb, rc;
    mcapi_request_t *list[3];
    uint32_t ia = 0, ib = 0, ic = 0;
    size_t size = 0;
    mcapi_uint_t idx;
    double t0;

    /* An empty list is an error, returned at once whatever the timeout. */
    t0 = now_ms();
    idx = mcapi_wait_any(0, list, &size, MCAPI_TIMEOUT_INFINITE, &st);
    CHECK(idx == MCAPI_RETURN_VALUE_INVALID, "wait_any of nothing returned %u", idx);
    EXPECT(st, MCAPI_ERR_PARAMETER);
    CHECK(now_ms() - t0 < 1000, "wait_any of nothing took %.0f ms", now_ms() - t0);

    mcapi_msg_recv_i(A, &ia, sizeof ia, &ra, &st);
    EXPECT(st, MCAPI_PENDING);
    mcapi_msg_recv_i(B, &ib, sizeof ib, &rb, &st);
    EXPECT(st, MCAPI_PENDING);
    mcapi_msg_recv_i(C, &ic, sizeof ic, &rc, &st);
    EXPECT(st, MCAPI_PENDING);
    list[0] = &ra;
    list[1] = &rb;
    list[2] = &rc;
    (void)mcapi_wait_any(3, NULL, &size, T_SHORT, &st);
    EXPECT(st, MCAPI_ERR_PARAMETER);
    (void)mcapi_wait_any(3, list, NULL, T_SHORT, &st);
    EXPECT(st, MCAPI_ERR_PARAMETER);
    idx = mcapi_wait_any(3, list, &size, MCAPI_TIMEOUT_IMMEDIATE, &st);
    CHECK(idx == MCAPI_RETURN_VALUE_INVALID, "immediate wait_any returned %u", idx);
    EXPECT(st, MCAPI_TIMEOUT);
    idx = mcapi_wait_any(3, list, &size, T_SHORT, &st);
    CHECK(idx == MCAPI_RETURN_VALUE_INVALID, "timed wait_any returned %u", idx);
    EXPECT(st, MCAPI_TIMEOUT);

    ask(2, 0, 0);
    idx = mcapi_wait_any(3, list, &size, T_LONG, &st);
    OK(st);
    CHECK(idx == 1 && size == sizeof ib && ib == 2, "wait_any returned %u (size %zu, word %u)",
          idx, size, (unsigned)ib);
    /* Request 1 is released; a list holding it is refused. */
    idx = mcapi_wait_any(3, list, &size, MCAPI_TIMEOUT_IMMEDIATE, &st);
    CHECK(idx == MCAPI_RETURN_VALUE_INVALID, "wait_any with a released request");
    EXPECT(st, MCAPI_ERR_REQUEST_INVALID);
    list[1] = &rc;
    ask(3, 0, 0);
    idx = mcapi_wait_any(2, list, &size, MCAPI_TIMEOUT_INFINITE, &st);
    OK(st);
    CHECK(idx == 1 && ic == 3, "second wait_any returned %u (word %u)", idx, (unsigned)ic);
    ask(1, 0, 0);
    idx = mcapi_wait_any(1, list, &size, T_LONG, &st);
    OK(st);
    CHECK(idx == 0 && ia == 1, "third wait_any returned %u (word %u)", idx, (unsigned)ia);
}

/* Requests whose operation fails (a receive into a buffer too small for the message): the
 * wait returns MCAPI_FALSE and passes the error on with the message's size (MCAPI 2.000
 * 4.6.2), as does a test (which keeps the request); wait_any returns the index with the
 * error. The message stays queued each time. */
static void failed_requests(void)
{
    mcapi_status_t st;
    mcapi_request_t req, rb, *list[2];
    uint16_t small = 0;
    uint32_t in = 0;
    size_t size = 0;
    mcapi_uint_t idx;

    /* The message is queued before the receive: the call finds the truncation at once. */
    ask(1, A, 1);
    mcapi_msg_recv_i(A, &small, sizeof small, &req, &st);
    EXPECT(st, MCAPI_PENDING);
    CHECK(mcapi_test(&req, &size, &st) == MCAPI_FALSE, "test of a truncated receive is true");
    EXPECT(st, MCAPI_ERR_MSG_TRUNCATED);
    CHECK(size == sizeof in, "test of a truncated receive: size %zu", size);
    size = 0;
    CHECK(mcapi_wait(&req, &size, T_LONG, &st) == MCAPI_FALSE, "wait of a truncated receive is true");
    EXPECT(st, MCAPI_ERR_MSG_TRUNCATED);
    CHECK(size == sizeof in, "wait of a truncated receive: size %zu", size);
    (void)mcapi_wait(&req, &size, MCAPI_TIMEOUT_IMMEDIATE, &st);
    EXPECT(st, MCAPI_ERR_REQUEST_INVALID);
    mcapi_msg_recv(A, &in, sizeof in, &size, &st);
    OK(st);
    CHECK(in == 1, "the truncated message differs: %u", (unsigned)in);

    /* The receive is posted first and the message truncates it when it arrives. */
    mcapi_msg_recv_i(A, &small, sizeof small, &req, &st);
    EXPECT(st, MCAPI_PENDING);
    ask(1, 0, 0);
    size = 0;
    CHECK(mcapi_wait(&req, &size, T_LONG, &st) == MCAPI_FALSE, "wait of a posted truncated receive is true");
    EXPECT(st, MCAPI_ERR_MSG_TRUNCATED);
    CHECK(size == sizeof in, "wait of a posted truncated receive: size %zu", size);
    mcapi_msg_recv(A, &in, sizeof in, &size, &st);
    OK(st);

    /* wait_any: the index of the failed request, its error, its size. */
    mcapi_msg_recv_i(A, &in, sizeof in, &req, &st);
    EXPECT(st, MCAPI_PENDING);
    mcapi_msg_recv_i(B, &small, sizeof small, &rb, &st);
    EXPECT(st, MCAPI_PENDING);
    list[0] = &req;
    list[1] = &rb;
    ask(2, 0, 0);
    size = 0;
    idx = mcapi_wait_any(2, list, &size, T_LONG, &st);
    EXPECT(st, MCAPI_ERR_MSG_TRUNCATED);
    CHECK(idx == 1 && size == sizeof in, "wait_any of a truncated receive: %u (size %zu)", idx, size);
    (void)mcapi_test(&rb, &size, &st);
    EXPECT(st, MCAPI_ERR_REQUEST_INVALID);
    mcapi_msg_recv(B, &in, sizeof in, &size, &st);
    OK(st);
    CHECK(in == 2, "the message wait_any left differs: %u", (unsigned)in);
    mcapi_cancel(&req, &st);
    OK(st);
}

static void cancel_cases(void)
{
    mcapi_status_t st;
    mcapi_request_t req;
    uint32_t in = 0, in2 = 0;
    size_t size;

    /* A cancelled receive does not swallow the message sent after it. */
    mcapi_msg_recv_i(A, &in, sizeof in, &req, &st);
    EXPECT(st, MCAPI_PENDING);
    mcapi_cancel(&req, &st);
    OK(st);
    (void)mcapi_wait(&req, &size, MCAPI_TIMEOUT_IMMEDIATE, &st);
    EXPECT(st, MCAPI_ERR_REQUEST_INVALID);
    (void)mcapi_test(&req, &size, &st);
    EXPECT(st, MCAPI_ERR_REQUEST_INVALID);
    mcapi_cancel(&req, &st);
    EXPECT(st, MCAPI_ERR_REQUEST_INVALID);
    ask(1, A, 1);
    CHECK(in == 0, "a cancelled receive wrote its buffer");
    mcapi_msg_recv(A, &in2, sizeof in2, &size, &st);
    OK(st);
    CHECK(in2 == 1, "the message after a cancel: %u", (unsigned)in2);

    /* Cancelling a completed request releases it; what it did stays done. */
    ask(1, A, 1);
    mcapi_msg_recv_i(A, &in, sizeof in, &req, &st);
    CHECK(st == MCAPI_SUCCESS || st == MCAPI_PENDING, "recv_i: %s", stname(st));
    while (mcapi_test(&req, &size, &st) == MCAPI_FALSE)
        EXPECT(st, MCAPI_PENDING);
    mcapi_cancel(&req, &st);
    OK(st);
    (void)mcapi_wait(&req, &size, MCAPI_TIMEOUT_IMMEDIATE, &st);
    EXPECT(st, MCAPI_ERR_REQUEST_INVALID);
    CHECK(in == 1 && mcapi_msg_available(A, &st) == 0, "cancel undid a completed receive");
}

struct waiter {
    mcapi_request_t *req;
    mcapi_boolean_t done;
    mcapi_status_t st;
    volatile int started;
};

static void *wait_in_thread(void *arg)
{
    struct waiter *w = (struct waiter *)arg;
    size_t size;
    w->started = 1;
    w->done = mcapi_wait(w->req, &size, MCAPI_TIMEOUT_INFINITE, &w->st);
    return NULL;
}

static void threads(void)
{
    mcapi_status_t st;
    mcapi_request_t req;
    struct waiter w;
    pthread_t t;
    uint32_t in;
    size_t size;

    mcapi_msg_recv_i(B, &in, sizeof in, &req, &st);
    EXPECT(st, MCAPI_PENDING);
    w.req = &req;
    w.started = 0;
    w.st = 0;
    CHECK(pthread_create(&t, NULL, wait_in_thread, &w) == 0, "pthread_create");
    while (!w.started)
        sleep_ms(1);
    sleep_ms(T_SHORT);
    (void)mcapi_wait(&req, &size, T_SHORT, &st);
    EXPECT(st, MCAPI_ERR_WAIT_PENDING);
    mcapi_cancel(&req, &st);
    OK(st);
    CHECK(pthread_join(t, NULL) == 0, "pthread_join");
    CHECK(w.done == MCAPI_FALSE, "a cancelled wait returned true");
    EXPECT(w.st, MCAPI_ERR_REQUEST_CANCELLED);
}

static void request_limit(void)
{
    mcapi_status_t st = MCAPI_SUCCESS;
    mcapi_request_t *reqs;
    uint32_t sink;
    int i, n = 0;

    reqs = (mcapi_request_t *)xmalloc(sizeof *reqs * (MCAPI_MAX_REQUESTS + 1));
    for (i = 0; i <= MCAPI_MAX_REQUESTS; i++) {
        mcapi_msg_recv_i(C, &sink, sizeof sink, &reqs[n], &st);
        if (st != MCAPI_PENDING)
            break;
        n++;
    }
    EXPECT(st, MCAPI_ERR_REQUEST_LIMIT);
    CHECK(n == MCAPI_MAX_REQUESTS, "%d requests outstanding, limit %d", n, MCAPI_MAX_REQUESTS);
    for (i = 0; i < n; i++) {
        mcapi_cancel(&reqs[i], &st);
        OK(st);
    }
    mcapi_msg_recv_i(C, &sink, sizeof sink, &reqs[0], &st);
    EXPECT(st, MCAPI_PENDING);
    mcapi_cancel(&reqs[0], &st);
    OK(st);
    free(reqs);
}

int main(void)
{
    test_env(2);
    node_init();
    ctl_setup(CTL_PORT);
    A = create_ep(P_A);
    B = create_ep(P_B);
    C = create_ep(P_C);
    if (me == 0) {
        peer_a = get_ep(1, P_A);
        peer_b = get_ep(1, P_B);
        peer_c = get_ep(1, P_C);
    }
    barrier();
    if (me == 0) {
        serve();
    } else if (me == 1) {
        test_and_wait();
        wait_any();
        failed_requests();
        cancel_cases();
        threads();
        request_limit();
        ctl_send(0, 0);
    }
    return node_done();
}

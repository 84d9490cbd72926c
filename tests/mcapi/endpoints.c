/* nodes: 2 4 */
/* launch: job hand */
/*
 * Endpoints: create (a port twice, a port out of range, MCAPI_PORT_ANY, up to
 * MCAPI_MAX_ENDPOINTS and one more), get and get_i on local and remote ports (found at once,
 * created later, never created: MCAPI_TIMEOUT after the timeout, at once with
 * MCAPI_TIMEOUT_IMMEDIATE, the request of get_i still pending after a timed-out wait), the get
 * count and its limit on a channel-type endpoint, delete (twice, of a remote endpoint, then a
 * send to the deleted endpoint and a new endpoint on the same port) and every endpoint
 * attribute with the errors of get_attribute and set_attribute. Node i works with node i+1.
 */
#define TEST_NAME "endpoints"
#include "mcapi_testutil.h"

#define P_MAIN 100
#define P_LATE 101
#define P_NEVER 102
#define P_CHAN 103
#define P_DEL 104

static int next_node, prev_node;

static void create_cases(void)
{
    mcapi_status_t st;
    mcapi_endpoint_t a, b, c, *many;
    int i, n;

    (void)mcapi_endpoint_create(P_MAIN, &st);
    EXPECT(st, MCAPI_ERR_ENDP_EXISTS);
    (void)mcapi_endpoint_create((mcapi_port_t)MCAPI_MAX_PORT + 1, &st);
    EXPECT(st, MCAPI_ERR_PORT_INVALID);

    a = mcapi_endpoint_create(MCAPI_PORT_ANY, &st);
    OK(st);
    b = mcapi_endpoint_create(MCAPI_PORT_ANY, &st);
    OK(st);
    CHECK(a != b, "two MCAPI_PORT_ANY endpoints share a handle");
    c = create_ep(P_DEL + 50);
    CHECK(c != a && c != b, "a PORT_ANY endpoint took a named one's handle");
    mcapi_endpoint_delete(a, &st);
    OK(st);
    mcapi_endpoint_delete(b, &st);
    OK(st);
    mcapi_endpoint_delete(c, &st);
    OK(st);

    /* Fill the node: what is alive now is ctl, P_MAIN and P_CHAN. */
    many = (mcapi_endpoint_t *)xmalloc(sizeof *many * MCAPI_MAX_ENDPOINTS);
    n = 0;
    for (i = 0; i < MCAPI_MAX_ENDPOINTS; i++) {
        many[n] = mcapi_endpoint_create(MCAPI_PORT_ANY, &st);
        if (st != MCAPI_SUCCESS)
            break;
        n++;
    }
    EXPECT(st, MCAPI_ERR_PORT_INVALID);
    CHECK(n == MCAPI_MAX_ENDPOINTS - 3, "created %d endpoints besides 3, limit %d", n,
          MCAPI_MAX_ENDPOINTS);
    (void)mcapi_endpoint_create(2000, &st);
    EXPECT(st, MCAPI_ERR_PORT_INVALID);
    for (i = 0; i < n; i++) {
        mcapi_endpoint_delete(many[i], &st);
        OK(st);
    }
    free(many);
    c = create_ep(2000);
    mcapi_endpoint_delete(c, &st);
    OK(st);
}

static void get_cases(mcapi_endpoint_t mine)
{
    mcapi_status_t st;
    mcapi_endpoint_t e = 0, late = 0;
    mcapi_request_t req, late_req;
    size_t size;
    double t0, dt;

    /* Local, blocking and not. */
    CHECK(get_ep(me, P_MAIN) == mine, "a local get returned another handle");
    mcapi_endpoint_get_i(DOMAIN, (mcapi_node_t)me, P_MAIN, &e, &req, &st);
    OK(finish_i(st, &req));
    CHECK(e == mine, "a local get_i returned another handle");

    /* Remote, found at once. */
    e = 0;
    mcapi_endpoint_get_i(DOMAIN, (mcapi_node_t)next_node, P_MAIN, &e, &req, &st);
    OK(finish_i(st, &req));
    CHECK(e == get_ep(next_node, P_MAIN), "get_i and get disagree on a remote endpoint");

    /* Remote, created later: the get_i stays pending until the peer creates it. */
    mcapi_endpoint_get_i(DOMAIN, (mcapi_node_t)next_node, P_LATE, &late, &late_req, &st);
    EXPECT(st, MCAPI_PENDING);
    CHECK(mcapi_test(&late_req, &size, &st) == MCAPI_FALSE, "get_i of a missing port completed");
    EXPECT(st, MCAPI_PENDING);
    barrier();
    (void)create_ep(P_LATE);
    barrier();
    CHECK(mcapi_wait(&late_req, &size, T_LONG, &st) == MCAPI_TRUE, "late get_i");
    OK(st);
    CHECK(late == get_ep(next_node, P_LATE), "late get_i wrote another handle");

    /* Never created: MCAPI_TIMEOUT after the timeout, or at once when immediate. */
    t0 = now_ms();
    (void)mcapi_endpoint_get(DOMAIN, (mcapi_node_t)next_node, P_NEVER, T_SHORT, &st);
    dt = now_ms() - t0;
    EXPECT(st, MCAPI_TIMEOUT);
    CHECK(dt >= T_SHORT * 0.9 && dt < 10000, "a %u ms get timed out after %.0f ms", T_SHORT, dt);
    t0 = now_ms();
    (void)mcapi_endpoint_get(DOMAIN, (mcapi_node_t)next_node, P_NEVER, MCAPI_TIMEOUT_IMMEDIATE,
                             &st);
    EXPECT(st, MCAPI_TIMEOUT);
    CHECK(now_ms() - t0 < 1000, "an immediate get took %.0f ms", now_ms() - t0);
    mcapi_endpoint_get_i(DOMAIN, (mcapi_node_t)next_node, P_NEVER, &e, &req, &st);
    EXPECT(st, MCAPI_PENDING);
    CHECK(mcapi_wait(&req, &size, T_SHORT, &st) == MCAPI_FALSE, "wait on a missing port");
    EXPECT(st, MCAPI_TIMEOUT);
    CHECK(mcapi_wait(&req, &size, MCAPI_TIMEOUT_IMMEDIATE, &st) == MCAPI_FALSE, "second wait");
    EXPECT(st, MCAPI_TIMEOUT);
    mcapi_cancel(&req, &st);
    OK(st);
    (void)mcapi_wait(&req, &size, MCAPI_TIMEOUT_IMMEDIATE, &st);
    EXPECT(st, MCAPI_ERR_REQUEST_INVALID);

    /* Bad arguments. */
    (void)mcapi_endpoint_get(DOMAIN + 1, (mcapi_node_t)next_node, P_MAIN, T_SHORT, &st);
    EXPECT(st, MCAPI_ERR_DOMAIN_INVALID);
    /* A node no process runs: under a launcher or a hosts file it never will (every node
     * of the job is known from the start); in a rendezvous it may still start, and the get
     * waits for it. */
    (void)mcapi_endpoint_get(DOMAIN, (mcapi_node_t)np, P_MAIN, T_SHORT, &st);
    EXPECT(st, getenv("FERRY_MCAPI_RENDEZVOUS") ? MCAPI_TIMEOUT : MCAPI_ERR_NODE_INVALID);
    (void)mcapi_endpoint_get(DOMAIN, MCAPI_NODE_INVALID, P_MAIN, T_SHORT, &st);
    EXPECT(st, MCAPI_ERR_NODE_INVALID);
    (void)mcapi_endpoint_get(DOMAIN, (mcapi_node_t)next_node, (mcapi_port_t)MCAPI_MAX_PORT + 1,
                             T_SHORT, &st);
    EXPECT(st, MCAPI_ERR_PORT_INVALID);
    mcapi_endpoint_get_i(DOMAIN + 1, (mcapi_node_t)next_node, P_MAIN, &e, &req, &st);
    EXPECT(st, MCAPI_ERR_DOMAIN_INVALID);
    mcapi_endpoint_get_i(DOMAIN, (mcapi_node_t)np, P_MAIN, &e, &req, &st);
    if (getenv("FERRY_MCAPI_RENDEZVOUS")) {
        /* The node may still start: the get waits for it. */
        EXPECT(st, MCAPI_PENDING);
        mcapi_cancel(&req, &st);
        OK(st);
    } else {
        EXPECT(st, MCAPI_ERR_NODE_INVALID);
    }
    mcapi_endpoint_get_i(DOMAIN, (mcapi_node_t)next_node, (mcapi_port_t)MCAPI_MAX_PORT + 1, &e,
                         &req, &st);
    EXPECT(st, MCAPI_ERR_PORT_INVALID);
    mcapi_endpoint_get_i(DOMAIN, (mcapi_node_t)next_node, P_MAIN, NULL, &req, &st);
    EXPECT(st, MCAPI_ERR_PARAMETER);
    mcapi_endpoint_get_i(DOMAIN, (mcapi_node_t)next_node, P_MAIN, &e, NULL, &st);
    EXPECT(st, MCAPI_ERR_PARAMETER);
}

/* A channel-type endpoint takes one get; the owner sees the count and the getter. */
static void get_limit(mcapi_endpoint_t chan)
{
    mcapi_status_t st;
    mcapi_endp_attr_get_count_t count = 99;
    mcapi_endp_attr_get_source_t source;
    mcapi_endpoint_t e;
    mcapi_request_t req;

    (void)get_ep(next_node, P_CHAN);
    (void)mcapi_endpoint_get(DOMAIN, (mcapi_node_t)next_node, P_CHAN, T_SHORT, &st);
    EXPECT(st, MCAPI_ERR_ENDP_GET_LIMIT);
    mcapi_endpoint_get_i(DOMAIN, (mcapi_node_t)next_node, P_CHAN, &e, &req, &st);
    EXPECT_I(st, MCAPI_ERR_ENDP_GET_LIMIT, &req);
    barrier();
    mcapi_endpoint_get_attribute(chan, MCAPI_ENDP_ATTR_GET_COUNT, &count, sizeof count, &st);
    OK(st);
    CHECK(count == 1, "get count %u after one get", count);
    mcapi_endpoint_get_attribute(chan, MCAPI_ENDP_ATTR_GET_SOURCE, &source, sizeof source, &st);
    OK(st);
    CHECK(source.domain_id == DOMAIN && source.node_id == (mcapi_node_t)prev_node,
          "get source <%u, %u>, expected <%d, %d>", source.domain_id, source.node_id, DOMAIN,
          prev_node);
}

static void attributes(mcapi_endpoint_t remote)
{
    mcapi_status_t st;
    mcapi_endp_attr_type_t type = 0;
    mcapi_endp_attr_get_count_t count;
    mcapi_endp_attr_get_source_t source;
    mcapi_endp_attr_max_payload_size_t payload = 0;
    mcapi_endp_attr_buffer_type_t buffer = 9;
    mcapi_endp_attr_memory_type_t memory = 9;
    mcapi_endp_attr_num_priorities_t priorities = 0;
    mcapi_endp_attr_priority_t priority = 9;
    mcapi_endp_attr_num_send_buffers_t send_buffers = -1;
    mcapi_endp_attr_num_recv_buffers_t recv_buffers = 0;
    mcapi_endp_attr_status_t status = 99;
    mcapi_endp_attr_timeout_t timeout = 0;
    mcapi_endpoint_t fresh;
    unsigned char small;
    char buf[8];
    size_t size;
    double t0;

    /* A fresh endpoint: the defaults. */
    fresh = create_ep(MCAPI_PORT_ANY);
    mcapi_endpoint_get_attribute(fresh, MCAPI_ENDP_ATTR_TYPE, &type, sizeof type, &st);
    OK(st);
    CHECK(type == MCAPI_ENDP_ATTR_TYPE_MESSAGE, "type %u", type);
    mcapi_endpoint_get_attribute(fresh, MCAPI_ENDP_ATTR_GET_COUNT, &count, sizeof count, &st);
    OK(st);
    CHECK(count == 0, "get count %u", count);
    mcapi_endpoint_get_attribute(fresh, MCAPI_ENDP_ATTR_GET_SOURCE, &source, sizeof source, &st);
    OK(st);
    CHECK(source.domain_id == MCAPI_DOMAIN_INVALID && source.node_id == MCAPI_NODE_INVALID,
          "get source of an endpoint nobody got");
    mcapi_endpoint_get_attribute(fresh, MCAPI_ENDP_ATTR_MAX_PAYLOAD_SIZE, &payload,
                                 sizeof payload, &st);
    OK(st);
    CHECK(payload == MCAPI_MAX_MSG_SIZE, "max payload %d", payload);
    mcapi_endpoint_get_attribute(fresh, MCAPI_ENDP_ATTR_BUFFER_TYPE, &buffer, sizeof buffer,
                                 &st);
    OK(st);
    CHECK(buffer == MCAPI_ENDP_ATTR_FIFO_BUFFER, "buffer type %u", buffer);
    mcapi_endpoint_get_attribute(fresh, MCAPI_ENDP_ATTR_MEMORY_TYPE, &memory, sizeof memory,
                                 &st);
    OK(st);
    CHECK(memory == (MCAPI_ENDP_ATTR_LOCAL_MEMORY | MCAPI_ENDP_ATTR_BLOCK_ON_MEM_LIMIT),
          "memory type %#x", memory);
    mcapi_endpoint_get_attribute(fresh, MCAPI_ENDP_ATTR_NUM_PRIORITIES, &priorities,
                                 sizeof priorities, &st);
    OK(st);
    CHECK(priorities == MCAPI_MAX_PRIORITY + 1, "number of priorities %d", priorities);
    mcapi_endpoint_get_attribute(fresh, MCAPI_ENDP_ATTR_PRIORITY, &priority, sizeof priority,
                                 &st);
    OK(st);
    CHECK(priority == MCAPI_MAX_PRORITY, "priority %u", priority);
    mcapi_endpoint_get_attribute(fresh, MCAPI_ENDP_ATTR_NUM_SEND_BUFFERS, &send_buffers,
                                 sizeof send_buffers, &st);
    OK(st);
    CHECK(send_buffers >= 0, "send buffers %d", send_buffers);
    mcapi_endpoint_get_attribute(fresh, MCAPI_ENDP_ATTR_NUM_RECV_BUFFERS, &recv_buffers,
                                 sizeof recv_buffers, &st);
    OK(st);
    CHECK(recv_buffers >= 1, "receive buffers %u", recv_buffers);
    mcapi_endpoint_get_attribute(fresh, MCAPI_ENDP_ATTR_ENDP_STATUS, &status, sizeof status,
                                 &st);
    OK(st);
    CHECK((status & 0xFFFFu) == 0, "status of a fresh endpoint %#x", status);
    mcapi_endpoint_get_attribute(fresh, MCAPI_ENDP_ATTR_TIMEOUT, &timeout, sizeof timeout, &st);
    OK(st);
    CHECK(timeout == MCAPI_TIMEOUT_INFINITE, "timeout %u", timeout);

    /* A remote endpoint can be read, not written. */
    type = 0;
    mcapi_endpoint_get_attribute(remote, MCAPI_ENDP_ATTR_TYPE, &type, sizeof type, &st);
    OK(st);
    CHECK(type == MCAPI_ENDP_ATTR_TYPE_MESSAGE, "remote type %u", type);
    priority = 1;
    mcapi_endpoint_set_attribute(remote, MCAPI_ENDP_ATTR_PRIORITY, &priority, sizeof priority,
                                 &st);
    EXPECT(st, MCAPI_ERR_ENDP_REMOTE);

    /* get_attribute errors; a failed call leaves the attribute alone. */
    type = 77;
    mcapi_endpoint_get_attribute(fresh, MCAPI_ENDP_ATTR_END, &type, sizeof type, &st);
    EXPECT(st, MCAPI_ERR_ATTR_NUM);
    mcapi_endpoint_get_attribute(fresh, 5000, &type, sizeof type, &st);
    EXPECT(st, MCAPI_ERR_ATTR_NUM);
    mcapi_endpoint_get_attribute(fresh, MCAPI_ENDP_ATTR_TYPE, &small, sizeof small, &st);
    EXPECT(st, MCAPI_ERR_ATTR_SIZE);
    mcapi_endpoint_get_attribute(fresh, MCAPI_ENDP_ATTR_TYPE, NULL, sizeof type, &st);
    EXPECT(st, MCAPI_ERR_PARAMETER);
    CHECK(type == 77, "a failed get_attribute wrote the attribute");

    /* set_attribute: read-only, values out of range, values Ferry does not support. */
    count = 3;
    mcapi_endpoint_set_attribute(fresh, MCAPI_ENDP_ATTR_GET_COUNT, &count, sizeof count, &st);
    EXPECT(st, MCAPI_ERR_ATTR_READONLY);
    mcapi_endpoint_set_attribute(fresh, MCAPI_ENDP_ATTR_ENDP_STATUS, &status, sizeof status,
                                 &st);
    EXPECT(st, MCAPI_ERR_ATTR_READONLY);
    mcapi_endpoint_set_attribute(fresh, MCAPI_ENDP_ATTR_NUM_PRIORITIES, &priorities,
                                 sizeof priorities, &st);
    EXPECT(st, MCAPI_ERR_ATTR_READONLY);
    priority = MCAPI_MAX_PRIORITY + 1;
    mcapi_endpoint_set_attribute(fresh, MCAPI_ENDP_ATTR_PRIORITY, &priority, sizeof priority,
                                 &st);
    EXPECT(st, MCAPI_ERR_ATTR_VALUE);
    buffer = MCAPI_ENDP_ATTR_FIFO_BUFFER + 1;
    mcapi_endpoint_set_attribute(fresh, MCAPI_ENDP_ATTR_BUFFER_TYPE, &buffer, sizeof buffer,
                                 &st);
    EXPECT(st, MCAPI_ERR_ATTR_VALUE);
    type = 3;
    mcapi_endpoint_set_attribute(fresh, MCAPI_ENDP_ATTR_TYPE, &type, sizeof type, &st);
    EXPECT(st, MCAPI_ERR_ATTR_VALUE);
    memory = MCAPI_ENDP_ATTR_SHARED_MEMORY;
    mcapi_endpoint_set_attribute(fresh, MCAPI_ENDP_ATTR_MEMORY_TYPE, &memory, sizeof memory,
                                 &st);
    EXPECT(st, MCAPI_ERR_ATTR_NOTSUPPORTED);
    mcapi_endpoint_set_attribute(fresh, MCAPI_ENDP_ATTR_PRIORITY, &small, sizeof small, &st);
    EXPECT(st, MCAPI_ERR_ATTR_SIZE);
    mcapi_endpoint_set_attribute(fresh, MCAPI_ENDP_ATTR_PRIORITY, NULL, sizeof priority, &st);
    EXPECT(st, MCAPI_ERR_PARAMETER);
    mcapi_endpoint_set_attribute(fresh, 5000, &priority, sizeof priority, &st);
    EXPECT(st, MCAPI_ERR_ATTR_NUM);

    /* Values that take. */
    buffer = MCAPI_ENDP_ATTR_FIFO_BUFFER;
    mcapi_endpoint_set_attribute(fresh, MCAPI_ENDP_ATTR_BUFFER_TYPE, &buffer, sizeof buffer,
                                 &st);
    OK(st);
    priority = 4;
    mcapi_endpoint_set_attribute(fresh, MCAPI_ENDP_ATTR_PRIORITY, &priority, sizeof priority,
                                 &st);
    OK(st);
    priority = 0;
    mcapi_endpoint_get_attribute(fresh, MCAPI_ENDP_ATTR_PRIORITY, &priority, sizeof priority,
                                 &st);
    OK(st);
    CHECK(priority == 4, "priority reads back %u", priority);
    type = MCAPI_ENDP_ATTR_TYPE_SCLCHAN;
    mcapi_endpoint_set_attribute(fresh, MCAPI_ENDP_ATTR_TYPE, &type, sizeof type, &st);
    OK(st);
    type = MCAPI_ENDP_ATTR_TYPE_MESSAGE;
    mcapi_endpoint_set_attribute(fresh, MCAPI_ENDP_ATTR_TYPE, &type, sizeof type, &st);
    OK(st);

    /* The timeout attribute bounds a blocking receive. */
    timeout = T_SHORT;
    mcapi_endpoint_set_attribute(fresh, MCAPI_ENDP_ATTR_TIMEOUT, &timeout, sizeof timeout, &st);
    OK(st);
    t0 = now_ms();
    mcapi_msg_recv(fresh, buf, sizeof buf, &size, &st);
    EXPECT(st, MCAPI_TIMEOUT);
    CHECK(now_ms() - t0 >= T_SHORT * 0.9, "timed-out receive returned after %.0f ms",
          now_ms() - t0);
    timeout = MCAPI_TIMEOUT_IMMEDIATE;
    mcapi_endpoint_set_attribute(fresh, MCAPI_ENDP_ATTR_TIMEOUT, &timeout, sizeof timeout, &st);
    OK(st);
    mcapi_msg_recv(fresh, buf, sizeof buf, &size, &st);
    EXPECT(st, MCAPI_TIMEOUT);

    mcapi_endpoint_delete(fresh, &st);
    OK(st);
    mcapi_endpoint_get_attribute(fresh, MCAPI_ENDP_ATTR_TYPE, &type, sizeof type, &st);
    EXPECT(st, MCAPI_ERR_ENDP_INVALID);
    mcapi_endpoint_set_attribute(fresh, MCAPI_ENDP_ATTR_PRIORITY, &priority, sizeof priority,
                                 &st);
    EXPECT(st, MCAPI_ERR_ENDP_INVALID);
}

/* Delete: own endpoint, twice, a remote one; a peer's send to a deleted endpoint fails; the
 * port can be used again. */
static void delete_cases(mcapi_endpoint_t main_ep)
{
    mcapi_status_t st;
    mcapi_endpoint_t del, remote_del, again;
    uint32_t word = 7;
    size_t size;

    del = create_ep(P_DEL);
    barrier();
    remote_del = get_ep(next_node, P_DEL);
    mcapi_endpoint_delete(remote_del, &st);
    EXPECT(st, MCAPI_ERR_ENDP_NOTOWNER);
    barrier();
    mcapi_endpoint_delete(del, &st);
    OK(st);
    mcapi_endpoint_delete(del, &st);
    EXPECT(st, MCAPI_ERR_ENDP_INVALID);
    barrier();
    mcapi_msg_send(main_ep, remote_del, &word, sizeof word, 0, &st);
    EXPECT(st, MCAPI_ERR_ENDP_INVALID);
    (void)mcapi_endpoint_get(DOMAIN, (mcapi_node_t)next_node, P_DEL, T_SHORT, &st);
    EXPECT(st, MCAPI_TIMEOUT);
    barrier();
    again = create_ep(P_DEL);
    barrier();
    remote_del = get_ep(next_node, P_DEL);
    mcapi_msg_send(main_ep, remote_del, &word, sizeof word, 0, &st);
    OK(st);
    word = 0;
    mcapi_msg_recv(again, &word, sizeof word, &size, &st);
    OK(st);
    CHECK(size == sizeof word && word == 7, "message to a re-created port: %#x", (unsigned)word);
}

int main(void)
{
    mcapi_status_t st;
    mcapi_endpoint_t main_ep, chan, remote;
    mcapi_endp_attr_type_t type = MCAPI_ENDP_ATTR_TYPE_PKTCHAN;
    uint32_t word = 0;
    size_t size;

    test_env(2);
    next_node = (me + 1) % np;
    prev_node = (me + np - 1) % np;
    node_init();
    ctl_setup(CTL_PORT);
    main_ep = create_ep(P_MAIN);
    chan = create_ep(P_CHAN);
    mcapi_endpoint_set_attribute(chan, MCAPI_ENDP_ATTR_TYPE, &type, sizeof type, &st);
    OK(st);
    barrier();

    create_cases();
    get_cases(main_ep);
    barrier();
    get_limit(chan);
    barrier();
    remote = get_ep(next_node, P_MAIN);
    attributes(remote);
    barrier();
    delete_cases(main_ep);

    /* The handle of get still names the peer's endpoint: a message goes through. */
    word = 0xE0u + (uint32_t)me;
    mcapi_msg_send(main_ep, remote, &word, sizeof word, 0, &st);
    OK(st);
    mcapi_msg_recv(main_ep, &word, sizeof word, &size, &st);
    OK(st);
    CHECK(size == sizeof word && word == 0xE0u + (uint32_t)prev_node, "got %#x", (unsigned)word);
    return node_done();
}

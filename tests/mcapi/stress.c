/* nodes: 3 4 8 */
/* launch: job split hand */
/*
 * Stress: 100,000 messages from every node but 0 to one endpoint of node 0, which is slow on
 * purpose (it starts late and pauses often), so that its queue fills and the senders are held
 * back. Odd senders use blocking sends (which must wait, never fail with
 * MCAPI_ERR_MEM_LIMIT), even senders keep 8 non-blocking sends in flight with
 * mcapi_wait_any. Every message carries its sender, number, priority and length and a payload
 * the receiver checks byte by byte; each arrives exactly once, and messages of one sender and
 * one priority arrive in the order they were sent.
 */
#define TEST_NAME "stress"
#include "mcapi_testutil.h"

#define P_SINK 600
#define P_SRC 601
#define TOTAL 100000
#define WINDOW 8
#define MAXLEN 256

struct header {
    uint32_t sender, seq, prio, len;
};

static uint32_t prio_of(uint32_t seq) { return (seq * 7u) % (MCAPI_MAX_PRIORITY + 1u); }
static uint32_t len_of(uint32_t seq) { return 16u + (seq * 31u) % (MAXLEN - 16u); }
static uint32_t seed_of(uint32_t sender, uint32_t seq) { return (sender << 20) ^ seq; }
static uint32_t count_of(int sender)
{
    uint32_t senders = (uint32_t)(np - 1), base = TOTAL / senders;
    return base + ((uint32_t)sender - 1u < TOTAL % senders ? 1u : 0u);
}

static void compose(unsigned char *msg, uint32_t seq)
{
    struct header h;
    h.sender = (uint32_t)me;
    h.seq = seq;
    h.prio = prio_of(seq);
    h.len = len_of(seq);
    memcpy(msg, &h, sizeof h);
    fill(msg + sizeof h, h.len, seed_of(h.sender, seq));
}

static void sender(mcapi_endpoint_t src, mcapi_endpoint_t sink)
{
    mcapi_status_t st;
    unsigned char msgs[WINDOW][sizeof(struct header) + MAXLEN];
    mcapi_request_t reqs[WINDOW];
    mcapi_request_t *list[WINDOW];
    uint32_t seq, n = count_of(me), slot;
    unsigned inflight = 0, i;
    size_t size;
    mcapi_uint_t idx;

    if (me % 2 == 1) {
        for (seq = 0; seq < n; seq++) {
            compose(msgs[0], seq);
            mcapi_msg_send(src, sink, msgs[0], sizeof(struct header) + len_of(seq), prio_of(seq),
                           &st);
            OK(st);
        }
        return;
    }
    /* Slots 0..inflight-1 of list point at requests in flight. */
    for (seq = 0; seq < n; seq++) {
        if (inflight == WINDOW) {
            idx = mcapi_wait_any(inflight, list, &size, T_LONG, &st);
            OK(st);
            CHECK(idx < inflight, "wait_any index %u of %u", idx, inflight);
            slot = (uint32_t)(list[idx] - reqs);
            list[idx] = list[--inflight];
        } else {
            slot = inflight;
        }
        compose(msgs[slot], seq);
        mcapi_msg_send_i(src, sink, msgs[slot], sizeof(struct header) + len_of(seq), prio_of(seq),
                         &reqs[slot], &st);
        CHECK(st == MCAPI_SUCCESS || st == MCAPI_PENDING, "send_i %u: %s", (unsigned)seq,
              stname(st));
        list[inflight++] = &reqs[slot];
    }
    for (i = 0; i < inflight; i++) {
        CHECK(mcapi_wait(list[i], &size, T_LONG, &st) == MCAPI_TRUE, "last sends");
        OK(st);
    }
}

static void receiver(mcapi_endpoint_t sink)
{
    mcapi_status_t st;
    unsigned char msg[sizeof(struct header) + MAXLEN];
    struct header h;
    uint32_t next[64][MCAPI_MAX_PRIORITY + 1], got_count[64], total = 0;
    unsigned char *seen[64];
    size_t got;
    int s;

    memset(next, 0, sizeof next);
    memset(got_count, 0, sizeof got_count);
    for (s = 1; s < np; s++) {
        seen[s] = (unsigned char *)xmalloc(count_of(s));
        memset(seen[s], 0, count_of(s));
    }
    sleep_ms(500); /* let the queue fill */
    while (total < TOTAL) {
        mcapi_msg_recv(sink, msg, sizeof msg, &got, &st);
        OK(st);
        CHECK(got >= sizeof h, "a %zu-byte message", got);
        memcpy(&h, msg, sizeof h);
        CHECK(h.sender >= 1 && (int)h.sender < np, "message from node %u", (unsigned)h.sender);
        CHECK(h.seq < count_of((int)h.sender), "message %u of node %u", (unsigned)h.seq,
              (unsigned)h.sender);
        CHECK(h.prio == prio_of(h.seq) && h.len == len_of(h.seq) && got == sizeof h + h.len,
              "header of message %u of node %u", (unsigned)h.seq, (unsigned)h.sender);
        CHECK(verify(msg + sizeof h, h.len, seed_of(h.sender, h.seq)) == h.len,
              "payload of message %u of node %u", (unsigned)h.seq, (unsigned)h.sender);
        CHECK(!seen[h.sender][h.seq], "message %u of node %u twice", (unsigned)h.seq,
              (unsigned)h.sender);
        seen[h.sender][h.seq] = 1;
        CHECK(h.seq >= next[h.sender][h.prio], "node %u priority %u: message %u after %u",
              (unsigned)h.sender, (unsigned)h.prio, (unsigned)h.seq,
              (unsigned)next[h.sender][h.prio]);
        next[h.sender][h.prio] = h.seq + 1;
        got_count[h.sender]++;
        total++;
        if (total % 5000 == 0)
            sleep_ms(50);
    }
    for (s = 1; s < np; s++) {
        CHECK(got_count[s] == count_of(s), "node %d: %u of %u messages", s,
              (unsigned)got_count[s], (unsigned)count_of(s));
        free(seen[s]);
    }
    CHECK(mcapi_msg_available(sink, &st) == 0, "messages beyond %d", TOTAL);
    OK(st);
}

int main(void)
{
    mcapi_endpoint_t sink, src;

    test_env(2);
    CHECK(np <= 64, "at most 64 nodes");
    node_init();
    ctl_setup(CTL_PORT);
    sink = create_ep(P_SINK);
    src = create_ep(P_SRC);
    barrier();
    if (me == 0)
        receiver(sink);
    else
        sender(src, get_ep(0, P_SINK));
    return node_done();
}

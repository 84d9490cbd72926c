/*
 * mcapi_testutil.h: what the MCAPI test programs share. Header-only; each program is one
 * translation unit that defines its name and includes this file first:
 *
 *     #define TEST_NAME "messages"
 *     #include "mcapi_testutil.h"
 *
 * A program runs as N processes, the nodes of domain 0. Each reads its index from FERRY_RANK
 * and the count from FERRY_SIZE (set by `ferry run`, or by tests/mcapi.sh when it starts nodes
 * by hand) and uses node id = FERRY_RANK. A failure prints "FAIL <name>: node <n>, line <l>:
 * <what>" to stderr and exits 1; a watchdog ends a node that runs past FERRY_MCAPI_TEST_LIMIT
 * seconds (default 100) the same way, so a hang reads as a failure with a message. On success
 * node 0 prints one line, "ok <name>".
 *
 * Node coordination (barrier, a word to a peer) goes over message endpoints on the control
 * ports CTL_PORT (first life) and CTL_PORT + 1 (after a re-initialisation).
 */
#ifndef FERRY_MCAPI_TESTUTIL_H
#define FERRY_MCAPI_TESTUTIL_H

#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include <mcapi.h>

#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#ifndef TEST_NAME
#error "define TEST_NAME (the program's name) before including mcapi_testutil.h"
#endif

#define DOMAIN 0
#define CTL_PORT 60000
#define T_LONG 30000u   /* ms: a wait that must succeed well before this */
#define T_SHORT 200u    /* ms: a wait that must time out */

/* This node's index (= node id) and the number of nodes. */
static int me = -1;
static int np = 0;

static mcapi_endpoint_t ctl_ep;
static mcapi_endpoint_t ctl_peer[MCAPI_MAX_NODE < 1024 ? MCAPI_MAX_NODE + 1 : 1024];
static unsigned ctl_round = 0;

/* The name of a status code, written here rather than taken from mcapi_display_status so that
 * failure messages stay readable whatever the library does. */
static const char *stname(mcapi_status_t s)
{
    static char other[32];
    switch (s) {
    case MCAPI_SUCCESS: return "MCAPI_SUCCESS";
    case MCAPI_PENDING: return "MCAPI_PENDING";
    case MCAPI_TIMEOUT: return "MCAPI_TIMEOUT";
    case MCAPI_ERR_PARAMETER: return "MCAPI_ERR_PARAMETER";
    case MCAPI_ERR_DOMAIN_INVALID: return "MCAPI_ERR_DOMAIN_INVALID";
    case MCAPI_ERR_NODE_INVALID: return "MCAPI_ERR_NODE_INVALID";
    case MCAPI_ERR_NODE_INITFAILED: return "MCAPI_ERR_NODE_INITFAILED";
    case MCAPI_ERR_NODE_INITIALIZED: return "MCAPI_ERR_NODE_INITIALIZED";
    case MCAPI_ERR_NODE_NOTINIT: return "MCAPI_ERR_NODE_NOTINIT";
    case MCAPI_ERR_NODE_FINALFAILED: return "MCAPI_ERR_NODE_FINALFAILED";
    case MCAPI_ERR_PORT_INVALID: return "MCAPI_ERR_PORT_INVALID";
    case MCAPI_ERR_ENDP_INVALID: return "MCAPI_ERR_ENDP_INVALID";
    case MCAPI_ERR_ENDP_EXISTS: return "MCAPI_ERR_ENDP_EXISTS";
    case MCAPI_ERR_ENDP_GET_LIMIT: return "MCAPI_ERR_ENDP_GET_LIMIT";
    case MCAPI_ERR_ENDP_DELETED: return "MCAPI_ERR_ENDP_DELETED";
    case MCAPI_ERR_ENDP_NOTOWNER: return "MCAPI_ERR_ENDP_NOTOWNER";
    case MCAPI_ERR_ENDP_REMOTE: return "MCAPI_ERR_ENDP_REMOTE";
    case MCAPI_ERR_ENDP_NOPORTS: return "MCAPI_ERR_ENDP_NOPORTS";
    case MCAPI_ERR_ENDP_LIMIT: return "MCAPI_ERR_ENDP_LIMIT";
    case MCAPI_ERR_ATTR_INCOMPATIBLE: return "MCAPI_ERR_ATTR_INCOMPATIBLE";
    case MCAPI_ERR_ATTR_SIZE: return "MCAPI_ERR_ATTR_SIZE";
    case MCAPI_ERR_ATTR_NUM: return "MCAPI_ERR_ATTR_NUM";
    case MCAPI_ERR_ATTR_VALUE: return "MCAPI_ERR_ATTR_VALUE";
    case MCAPI_ERR_ATTR_NOTSUPPORTED: return "MCAPI_ERR_ATTR_NOTSUPPORTED";
    case MCAPI_ERR_ATTR_READONLY: return "MCAPI_ERR_ATTR_READONLY";
    case MCAPI_ERR_MSG_SIZE: return "MCAPI_ERR_MSG_SIZE";
    case MCAPI_ERR_MSG_TRUNCATED: return "MCAPI_ERR_MSG_TRUNCATED";
    case MCAPI_ERR_CHAN_OPEN: return "MCAPI_ERR_CHAN_OPEN";
    case MCAPI_ERR_CHAN_TYPE: return "MCAPI_ERR_CHAN_TYPE";
    case MCAPI_ERR_CHAN_DIRECTION: return "MCAPI_ERR_CHAN_DIRECTION";
    case MCAPI_ERR_CHAN_CONNECTED: return "MCAPI_ERR_CHAN_CONNECTED";
    case MCAPI_ERR_CHAN_OPENPENDING: return "MCAPI_ERR_CHAN_OPENPENDING";
    case MCAPI_ERR_CHAN_NOTOPEN: return "MCAPI_ERR_CHAN_NOTOPEN";
    case MCAPI_ERR_CHAN_INVALID: return "MCAPI_ERR_CHAN_INVALID";
    case MCAPI_ERR_PKT_SIZE: return "MCAPI_ERR_PKT_SIZE";
    case MCAPI_ERR_SCL_SIZE: return "MCAPI_ERR_SCL_SIZE";
    case MCAPI_ERR_TRANSMISSION: return "MCAPI_ERR_TRANSMISSION";
    case MCAPI_ERR_PRIORITY: return "MCAPI_ERR_PRIORITY";
    case MCAPI_ERR_BUF_INVALID: return "MCAPI_ERR_BUF_INVALID";
    case MCAPI_ERR_MEM_LIMIT: return "MCAPI_ERR_MEM_LIMIT";
    case MCAPI_ERR_REQUEST_INVALID: return "MCAPI_ERR_REQUEST_INVALID";
    case MCAPI_ERR_REQUEST_LIMIT: return "MCAPI_ERR_REQUEST_LIMIT";
    case MCAPI_ERR_REQUEST_CANCELLED: return "MCAPI_ERR_REQUEST_CANCELLED";
    case MCAPI_ERR_WAIT_PENDING: return "MCAPI_ERR_WAIT_PENDING";
    case MCAPI_ERR_GENERAL: return "MCAPI_ERR_GENERAL";
    case MCAPI_ERR_CHAN_CLOSEPENDING: return "MCAPI_ERR_CHAN_CLOSEPENDING";
    default:
        snprintf(other, sizeof other, "status %u", s);
        return other;
    }
}

__attribute__((format(printf, 2, 3), noreturn))
static void fail(int line, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "FAIL %s: node %d, line %d: ", TEST_NAME, me, line);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    fflush(stderr);
    exit(1);
}

#define CHECK(cond, ...) do { if (!(cond)) fail(__LINE__, __VA_ARGS__); } while (0)
/* EXPECT(st, want): the status of the call just made must be want. */
#define EXPECT(st, want) do { mcapi_status_t st_ = (st), want_ = (want);                      \
        if (st_ != want_) fail(__LINE__, "status %s, expected %s", stname(st_), stname(want_)); \
    } while (0)
#define OK(st) EXPECT(st, MCAPI_SUCCESS)
/* EXPECT_I(st, want, req): a non-blocking call's status must be want; when the call returned
 * MCAPI_SUCCESS or MCAPI_PENDING the request it wrote is waited and must end with want. Lets
 * one line check an error that the library may find at once or only on the peer's side. */
#define EXPECT_I(st, want, req) EXPECT(finish_i((st), (req)), (want))

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static void sleep_ms(unsigned ms)
{
    struct timespec t;
    t.tv_sec = ms / 1000;
    t.tv_nsec = (long)(ms % 1000) * 1000000L;
    while (nanosleep(&t, &t) != 0) {
    }
}

static void on_watchdog(int sig)
{
    static const char msg[] = "FAIL " TEST_NAME ": a node ran past its time limit (hang?)\n";
    (void)sig;
    if (write(2, msg, sizeof msg - 1) < 0) {
    }
    _exit(1);
}

/* Reads FERRY_RANK and FERRY_SIZE and arms the watchdog. */
static void test_env(int min_nodes)
{
    const char *r = getenv("FERRY_RANK"), *s = getenv("FERRY_SIZE"), *l;
    unsigned limit = 100;
    CHECK(r != NULL && s != NULL, "FERRY_RANK and FERRY_SIZE must be set (run with ferry run)");
    me = atoi(r);
    np = atoi(s);
    CHECK(np >= 1 && me >= 0 && me < np, "bad FERRY_RANK=%s FERRY_SIZE=%s", r, s);
    CHECK(np <= (int)(sizeof ctl_peer / sizeof ctl_peer[0]), "too many nodes: %d", np);
    if (np < min_nodes) {
        if (me == 0)
            printf("ok %s (skipped: needs %d nodes)\n", TEST_NAME, min_nodes);
        exit(0);
    }
    l = getenv("FERRY_MCAPI_TEST_LIMIT");
    if (l != NULL && atoi(l) > 0)
        limit = (unsigned)atoi(l);
    signal(SIGALRM, on_watchdog);
    alarm(limit);
}

/* The launch mode this node was started in, as impl_info reports it. */
static mcapi_uint_t expected_launch(void)
{
    if (getenv("FERRY_MCAPI_HOSTS") != NULL)
        return FERRY_MCAPI_LAUNCH_HOSTS;
    if (getenv("FERRY_MCAPI_RENDEZVOUS") != NULL)
        return FERRY_MCAPI_LAUNCH_RENDEZVOUS;
    return FERRY_MCAPI_LAUNCH_JOB;
}

static void node_init(void)
{
    mcapi_param_t param;
    mcapi_info_t info;
    mcapi_status_t st;
    memset(&param, 0, sizeof param);
    mcapi_initialize(DOMAIN, (mcapi_node_t)me, NULL, &param, &info, &st);
    OK(st);
}

static mcapi_endpoint_t create_ep(mcapi_port_t port)
{
    mcapi_status_t st;
    mcapi_endpoint_t e = mcapi_endpoint_create(port, &st);
    OK(st);
    return e;
}

static mcapi_endpoint_t get_ep(int node, mcapi_port_t port)
{
    mcapi_status_t st;
    mcapi_endpoint_t e = mcapi_endpoint_get(DOMAIN, (mcapi_node_t)node, port, T_LONG, &st);
    OK(st);
    return e;
}

/* Waits for a request written by a non-blocking call that returned st; returns the status the
 * operation ended with (st itself when the call failed at once and wrote no request). */
static mcapi_status_t finish_size(mcapi_status_t st, mcapi_request_t *req, size_t *size)
{
    size_t dummy;
    if (st != MCAPI_SUCCESS && st != MCAPI_PENDING)
        return st;
    mcapi_wait(req, size != NULL ? size : &dummy, T_LONG, &st);
    return st;
}

static mcapi_status_t finish_i(mcapi_status_t st, mcapi_request_t *req)
{
    return finish_size(st, req, NULL);
}

/* A non-blocking call that must fail with `want`: at once (no request written) or through its
 * wait, which must then return MCAPI_FALSE (MCAPI 2.000 4.6.2). MCAPI_SUCCESS from the call is
 * a failure: it says the operation succeeded within the call. */
#define EXPECT_FAIL_I(st, want, req) expect_fail_i(__LINE__, (st), (want), (req))
static void expect_fail_i(int line, mcapi_status_t st, mcapi_status_t want, mcapi_request_t *req)
{
    size_t size;
    mcapi_boolean_t r;
    if (st == MCAPI_SUCCESS)
        fail(line, "call returned MCAPI_SUCCESS, expected %s", stname(want));
    if (st == MCAPI_PENDING) {
        r = mcapi_wait(req, &size, T_LONG, &st);
        if (r != MCAPI_FALSE)
            fail(line, "wait returned MCAPI_TRUE with %s, expected MCAPI_FALSE", stname(st));
    }
    if (st != want)
        fail(line, "status %s, expected %s", stname(st), stname(want));
}

/* Creates this node's control endpoint on port `port` and finds the peers' ones. */
static void ctl_setup(mcapi_port_t port)
{
    int i;
    ctl_ep = create_ep(port);
    for (i = 0; i < np; i++)
        ctl_peer[i] = i == me ? ctl_ep : get_ep(i, port);
    ctl_round = 0;
}

/* Sends one 32-bit word to node `to`'s control endpoint. */
static void ctl_send(int to, uint32_t word)
{
    mcapi_status_t st;
    mcapi_msg_send(ctl_ep, ctl_peer[to], &word, sizeof word, 0, &st);
    OK(st);
}

/* Barrier words that reached node 0 while it waited for another control word: nodes that
 * skip a part of a test enter the next barrier early. */
static uint32_t early_barrier_words[64];
static int n_early = 0;

/* Receives one 32-bit word on the control endpoint. */
static uint32_t ctl_recv_any(void)
{
    mcapi_status_t st;
    uint32_t word = 0;
    size_t got = 0;
    mcapi_msg_recv(ctl_ep, &word, sizeof word, &got, &st);
    OK(st);
    CHECK(got == sizeof word, "control message of %zu bytes", got);
    return word;
}

/* Receives one control word that is not a barrier word (those are kept for the barrier). */
static uint32_t ctl_recv(void)
{
    uint32_t word;
    for (;;) {
        word = ctl_recv_any();
        if ((word & 0xF0000000u) != 0xB0000000u)
            return word;
        CHECK(n_early < 64, "too many early barrier words");
        early_barrier_words[n_early++] = word;
    }
}

/* No node leaves before every node has entered. Node 0 gathers, then releases. */
static void barrier(void)
{
    int i, j;
    uint32_t tag = 0xB0000000u | ++ctl_round, w;
    if (np == 1)
        return;
    if (me == 0) {
        for (i = 1; i < np; i++) {
            if (n_early > 0) {
                w = early_barrier_words[0];
                for (j = 1; j < n_early; j++)
                    early_barrier_words[j - 1] = early_barrier_words[j];
                n_early--;
            } else {
                w = ctl_recv_any();
            }
            CHECK(w == tag, "barrier %u: got word %#x", ctl_round, (unsigned)w);
        }
        for (i = 1; i < np; i++)
            ctl_send(i, tag);
    } else {
        ctl_send(0, tag);
        w = ctl_recv_any();
        CHECK(w == tag, "barrier %u: got word %#x", ctl_round, (unsigned)w);
    }
}

/* The end of a passing program: every node gets here, finalizes, node 0 says ok. */
static int node_done(void)
{
    mcapi_status_t st;
    barrier();
    mcapi_finalize(&st);
    OK(st);
    if (me == 0)
        printf("ok %s\n", TEST_NAME);
    return 0;
}

/* Deterministic bytes for (seed, i): what a receiver checks a payload against. */
static unsigned char pattern(uint32_t seed, size_t i)
{
    uint32_t x = seed * 2654435761u + (uint32_t)i * 40503u + (uint32_t)(i >> 16);
    x ^= x >> 13;
    x *= 0x5bd1e995u;
    x ^= x >> 15;
    return (unsigned char)x;
}

static void fill(void *buf, size_t n, uint32_t seed)
{
    size_t i;
    for (i = 0; i < n; i++)
        ((unsigned char *)buf)[i] = pattern(seed, i);
}

/* The index of the first byte that differs from the pattern, or n. */
static size_t verify(const void *buf, size_t n, uint32_t seed)
{
    size_t i;
    for (i = 0; i < n; i++)
        if (((const unsigned char *)buf)[i] != pattern(seed, i))
            return i;
    return n;
}

static void *xmalloc(size_t n)
{
    void *p = malloc(n != 0 ? n : 1);
    if (p == NULL) {
        fprintf(stderr, "FAIL %s: node %d: out of memory\n", TEST_NAME, me);
        exit(1);
    }
    return p;
}

#endif /* FERRY_MCAPI_TESTUTIL_H */

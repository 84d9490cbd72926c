/*
 * mcapibench.h — what the MCAPI benchmarks of bench/mcapi share: node start-up, a control
 * endpoint for the handshakes that bracket each timed phase, size options, the clock, and
 * stopping with the failing call's name. Header-only; each program defines BENCH_NAME first.
 *
 * A benchmark runs as two MCAPI nodes of domain 0, node id = FERRY_RANK (set by `ferry run`, or
 * by hand with FERRY_SIZE and FERRY_MCAPI_RENDEZVOUS, as docs/mcapi.md says). Node 0 prints the
 * results. Output contract of every program here: lines starting with '#' are comments (the
 * first says what is measured, the last names the columns); every other line is one result,
 * `<size> <value>`, printed and flushed as soon as it is measured, so a run cut short keeps
 * what it measured. A failed call prints `<name>: node <n>: <call>: <status>` to stderr and
 * exits 1.
 *
 * FERRY_BENCH_WATCHDOG=<seconds> arms a watchdog per phase (one size of a sweep): a phase that
 * runs longer prints `<name>: node <n>: no progress for <s> s in <phase>, size <size>` and ends
 * the node with status 3, so that a call of the library that never returns costs a bounded
 * time and names where it happened.
 */
#ifndef FERRY_MCAPIBENCH_H
#define FERRY_MCAPIBENCH_H

#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include <mcapi.h>

#include "../plain.h"

#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#ifndef BENCH_NAME
#error "define BENCH_NAME before including mcapibench.h"
#endif

#define BENCH_DOMAIN 0
/* Ports: the control endpoint of every node, then the benchmark's own endpoints. */
#define BENCH_CTL_PORT 100
#define BENCH_TIMEOUT 60000u /* ms a node waits for its peer's endpoints */

static int bench_node = -1;
static mcapi_endpoint_t bench_ctl, bench_peer_ctl;
static unsigned bench_watchdog;   /* seconds per phase, 0: none */
static char bench_watch_msg[160]; /* written before each phase, printed by the handler */

__attribute__((noreturn))
static inline void bench_fail(const char *call, mcapi_status_t st)
{
    char name[MCAPI_MAX_STATUS_SIZE];
    if (mcapi_display_status(st, name, sizeof name) == NULL)
        snprintf(name, sizeof name, "status %u", (unsigned)st);
    fprintf(stderr, "%s: node %d: %s: %s\n", BENCH_NAME, bench_node, call, name);
    fflush(stdout);
    exit(1);
}

/* Stops the program unless st is MCAPI_SUCCESS. */
static inline void bench_check(const char *call, mcapi_status_t st)
{
    if (st != MCAPI_SUCCESS)
        bench_fail(call, st);
}

static inline void *bench_alloc(size_t n)
{
    void *p = malloc(n != 0 ? n : 1);
    if (p == NULL) {
        fprintf(stderr, "%s: node %d: cannot allocate %zu bytes\n", BENCH_NAME, bench_node, n);
        exit(1);
    }
    memset(p, 'a' + bench_node % 26, n != 0 ? n : 1);
    return p;
}

static void bench_on_watchdog(int sig)
{
    (void)sig;
    if (write(2, bench_watch_msg, strlen(bench_watch_msg)) < 0) {
    }
    _exit(3);
}

/* Starts a phase: the watchdog, if armed, restarts for it. */
static inline void bench_phase(const char *what, long size)
{
    if (bench_watchdog == 0)
        return;
    snprintf(bench_watch_msg, sizeof bench_watch_msg,
             "%s: node %d: no progress for %u s in %s, size %ld\n", BENCH_NAME, bench_node,
             bench_watchdog, what, size);
    alarm(bench_watchdog);
}

/* Initialises this node (id FERRY_RANK) and its control endpoint, and finds node 0's or node
 * 1's. Returns the node id; the job must have at least 2 nodes (others only finalize). */
static inline int bench_start(void)
{
    const char *r = getenv("FERRY_RANK"), *s = getenv("FERRY_SIZE");
    mcapi_param_t param;
    mcapi_info_t info;
    mcapi_status_t st;
    if (r == NULL || s == NULL || atoi(s) < 2) {
        fprintf(stderr, "%s: needs FERRY_RANK and FERRY_SIZE >= 2 (run under `ferry run -n 2`)\n",
                BENCH_NAME);
        exit(2);
    }
    bench_node = atoi(r);
    const char *w = getenv("FERRY_BENCH_WATCHDOG");
    if (w != NULL && atoi(w) > 0) {
        bench_watchdog = (unsigned)atoi(w);
        signal(SIGALRM, bench_on_watchdog);
    }
    bench_phase("start-up", 0);
    memset(&param, 0, sizeof param);
    mcapi_initialize(BENCH_DOMAIN, (mcapi_node_t)bench_node, NULL, &param, &info, &st);
    bench_check("mcapi_initialize", st);
    if (bench_node > 1)
        return bench_node;
    bench_ctl = mcapi_endpoint_create(BENCH_CTL_PORT, &st);
    bench_check("mcapi_endpoint_create (control)", st);
    bench_peer_ctl = mcapi_endpoint_get(BENCH_DOMAIN, (mcapi_node_t)(1 - bench_node),
                                        BENCH_CTL_PORT, BENCH_TIMEOUT, &st);
    bench_check("mcapi_endpoint_get (control)", st);
    return bench_node;
}

/* Sends one word to the peer's control endpoint. */
static inline void bench_signal(uint32_t word)
{
    mcapi_status_t st;
    mcapi_msg_send(bench_ctl, bench_peer_ctl, &word, sizeof word, 0, &st);
    bench_check("mcapi_msg_send (control)", st);
}

/* Waits for one word on the control endpoint and checks it is `want`. */
static inline void bench_await(uint32_t want)
{
    mcapi_status_t st;
    uint32_t word = 0;
    size_t got = 0;
    mcapi_msg_recv(bench_ctl, &word, sizeof word, &got, &st);
    bench_check("mcapi_msg_recv (control)", st);
    if (got != sizeof word || word != want) {
        fprintf(stderr, "%s: node %d: control word %#x (%zu bytes), expected %#x\n", BENCH_NAME,
                bench_node, (unsigned)word, got, (unsigned)want);
        exit(1);
    }
}

/* Both nodes have reached the same point: node 1 says so, node 0 answers. */
static inline void bench_sync(uint32_t tag)
{
    if (bench_node == 1) {
        bench_signal(tag);
        bench_await(tag);
    } else if (bench_node == 0) {
        bench_await(tag);
        bench_signal(tag);
    }
}

static inline void bench_finish(void)
{
    mcapi_status_t st;
    bench_phase("finish", 0);
    if (bench_node <= 1)
        bench_sync(0xF1F1F1F1u);
    mcapi_finalize(&st);
    bench_check("mcapi_finalize", st);
}

/* Waits for a request that a non-blocking call wrote (its status st said so). */
static inline void bench_wait(const char *call, mcapi_request_t *req, mcapi_status_t st)
{
    size_t size;
    if (st != MCAPI_SUCCESS && st != MCAPI_PENDING)
        bench_fail(call, st);
    mcapi_wait(req, &size, BENCH_TIMEOUT, &st);
    bench_check(call, st);
}

#endif /* FERRY_MCAPIBENCH_H */

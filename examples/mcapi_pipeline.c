/*
 * A three-stage pipeline of MCAPI nodes: node 0 produces blocks and sends them over a packet
 * channel to node 1, which sums each block and sends the sums over a scalar channel to node 2,
 * which checks them and reports with a message back to node 0.
 *
 *   bin/mcapicc -O2 -o mcapi_pipeline examples/mcapi_pipeline.c
 *   target/release/ferry run -n 3 ./mcapi_pipeline
 *
 * Each process takes its node id from FERRY_RANK, which `ferry run` exports.
 */
#include <mcapi.h>

#include <stdio.h>
#include <stdlib.h>

#define DOMAIN 0
#define BLOCKS 1000
#define WORDS 256 /* 32-bit words per block: 1 KiB packets */
#define PORT_OUT 1
#define PORT_IN 2
#define PORT_REPORT 3

static void check(mcapi_status_t st, const char *what)
{
    char name[MCAPI_MAX_STATUS_SIZE];
    if (st != MCAPI_SUCCESS) {
        fprintf(stderr, "%s: %s\n", what, mcapi_display_status(st, name, sizeof name));
        exit(1);
    }
}

/* A non-blocking call that started (MCAPI_SUCCESS or MCAPI_PENDING) leaves a request that a
 * wait completes and releases. */
static void finish(mcapi_status_t st, mcapi_request_t *req, const char *what)
{
    size_t size;
    if (st == MCAPI_SUCCESS || st == MCAPI_PENDING)
        mcapi_wait(req, &size, MCAPI_TIMEOUT_INFINITE, &st);
    check(st, what);
}

int main(void)
{
    mcapi_status_t st;
    mcapi_info_t info;
    mcapi_request_t req;
    const char *rank = getenv("FERRY_RANK");
    int me = rank ? atoi(rank) : 0;
    mcapi_endpoint_t out, in, report;

    mcapi_initialize(DOMAIN, (mcapi_node_t)me, NULL, NULL, &info, &st);
    check(st, "mcapi_initialize");
    if (info.number_of_nodes < 3) {
        fprintf(stderr, "run with 3 nodes: ferry run -n 3\n");
        return 1;
    }
    out = mcapi_endpoint_create(PORT_OUT, &st);
    check(st, "create the out endpoint");
    in = mcapi_endpoint_create(PORT_IN, &st);
    check(st, "create the in endpoint");
    report = mcapi_endpoint_create(PORT_REPORT, &st);
    check(st, "create the report endpoint");

    if (me == 0) {
        /* Node 0 connects both channels: any node may. */
        mcapi_endpoint_t n1_in = mcapi_endpoint_get(DOMAIN, 1, PORT_IN, MCAPI_TIMEOUT_INFINITE, &st);
        check(st, "get node 1's in endpoint");
        mcapi_endpoint_t n1_out = mcapi_endpoint_get(DOMAIN, 1, PORT_OUT, MCAPI_TIMEOUT_INFINITE, &st);
        check(st, "get node 1's out endpoint");
        mcapi_endpoint_t n2_in = mcapi_endpoint_get(DOMAIN, 2, PORT_IN, MCAPI_TIMEOUT_INFINITE, &st);
        check(st, "get node 2's in endpoint");
        mcapi_pktchan_connect_i(out, n1_in, &req, &st);
        finish(st, &req, "connect the packet channel");
        mcapi_sclchan_connect_i(n1_out, n2_in, &req, &st);
        finish(st, &req, "connect the scalar channel");

        mcapi_pktchan_send_hndl_t tx;
        mcapi_pktchan_send_open_i(&tx, out, &req, &st);
        finish(st, &req, "open the packet channel");
        static uint32_t block[WORDS];
        uint64_t expect = 0;
        for (int b = 0; b < BLOCKS; b++) {
            for (int w = 0; w < WORDS; w++) {
                block[w] = (uint32_t)(b * 7 + w);
                expect += block[w];
            }
            mcapi_pktchan_send(tx, block, sizeof block, &st);
            check(st, "send a block");
        }
        mcapi_pktchan_send_close_i(tx, &req, &st);
        finish(st, &req, "close the packet channel");

        char text[128];
        size_t got;
        mcapi_msg_recv(report, text, sizeof text - 1, &got, &st);
        check(st, "receive the report");
        text[got] = '\0';
        printf("node 0 sent %d blocks of %zu bytes (sum of all words %llu); node 2 says: %s\n",
               BLOCKS, sizeof block, (unsigned long long)expect, text);
    } else if (me == 1) {
        mcapi_pktchan_recv_hndl_t rx;
        mcapi_sclchan_send_hndl_t sums;
        mcapi_pktchan_recv_open_i(&rx, in, &req, &st);
        finish(st, &req, "open the packet channel");
        mcapi_sclchan_send_open_i(&sums, out, &req, &st);
        finish(st, &req, "open the scalar channel");
        for (int b = 0; b < BLOCKS; b++) {
            void *pkt;
            size_t size;
            uint64_t sum = 0;
            mcapi_pktchan_recv(rx, &pkt, &size, &st); /* the packet stays in the library's buffer */
            check(st, "receive a block");
            for (size_t w = 0; w < size / sizeof(uint32_t); w++)
                sum += ((uint32_t *)pkt)[w];
            mcapi_pktchan_release(pkt, &st);
            check(st, "release a block");
            mcapi_sclchan_send_uint64(sums, sum, &st);
            check(st, "send a sum");
        }
        mcapi_sclchan_send_close_i(sums, &req, &st);
        finish(st, &req, "close the scalar channel");
        mcapi_pktchan_recv_close_i(rx, &req, &st);
        finish(st, &req, "close the packet channel");
    } else if (me == 2) {
        mcapi_sclchan_recv_hndl_t sums;
        mcapi_sclchan_recv_open_i(&sums, in, &req, &st);
        finish(st, &req, "open the scalar channel");
        uint64_t total = 0;
        for (int b = 0; b < BLOCKS; b++) {
            total += mcapi_sclchan_recv_uint64(sums, &st);
            check(st, "receive a sum");
        }
        mcapi_sclchan_recv_close_i(sums, &req, &st);
        finish(st, &req, "close the scalar channel");
        mcapi_endpoint_t n0_report = mcapi_endpoint_get(DOMAIN, 0, PORT_REPORT, MCAPI_TIMEOUT_INFINITE, &st);
        check(st, "get node 0's report endpoint");
        char text[128];
        int n = snprintf(text, sizeof text, "%d sums received, total %llu", BLOCKS, (unsigned long long)total);
        mcapi_msg_send(report, n0_report, text, (size_t)n, 0, &st);
        check(st, "send the report");
    }
    mcapi_finalize(&st);
    check(st, "mcapi_finalize");
    return 0;
}

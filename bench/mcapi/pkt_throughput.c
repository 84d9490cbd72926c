/*
 * pkt_throughput.c — MCAPI packet-channel throughput from node 0 to node 1.
 *
 * Node 0 connects its send endpoint to node 1's receive endpoint once; both open their side.
 * For each packet size (1 KiB doubling up to MAXSIZE, 256 KiB by default), node 0 sends
 * BYTES / size packets with blocking mcapi_pktchan_send from one buffer; node 1 receives each
 * with mcapi_pktchan_recv, checks its size and mark, and releases it with
 * mcapi_pktchan_release. After the last packet node 1 sends a 4-byte message back. Node 0
 * times from its first send to the arrival of that message, so the time covers the last
 * receive plus one small message; the result is bytes / time in MB/s (1 MB = 10^6 bytes).
 * Before the timed packets of a size, 1/16 of their number (at least 4) go untimed.
 *
 * With -T SECONDS, node 0 stops sending a size once that long has passed (after at least 16
 * packets); the third column gives the bytes actually timed. Node 0 marks the last packet of
 * a size (byte 0 = 1, else 0), which is how node 1 knows where a size ends.
 *
 * Output (see mcapibench.h):
 *     # bench/mcapi/pkt_throughput: node 0 -> node 1, 1073741824 bytes per packet size
 *     # size MB/s bytes
 *     1024 812.345 1073741824
 *     ...
 *
 *     usage: pkt_throughput [-s MINSIZE] [-m MAXSIZE] [-b BYTES] [-T SECONDS]
 *     (defaults 1K, 256K, 1G, no time limit; BYTES also from FERRY_BENCH_BYTES)
 */
#define BENCH_NAME "pkt_throughput"
#include "mcapibench.h"

#define PORT_SEND 102 /* node 0 */
#define PORT_RECV 103 /* node 1 */

static void usage_exit(void)
{
    fprintf(stderr, "usage: pkt_throughput [-s MINSIZE] [-m MAXSIZE] [-b BYTES] [-T SECONDS]\n");
    exit(2);
}

int main(int argc, char **argv)
{
    long min = 1L << 10, max = 256L << 10, bytes = 1L << 30;
    double limit = 0.0;
    const char *env = getenv("FERRY_BENCH_BYTES");
    if (env != NULL)
        bytes = bench_parse_size(env);
    for (int a = 1; a < argc; a++) {
        if (strcmp(argv[a], "-s") == 0 && a + 1 < argc)
            min = bench_parse_size(argv[++a]);
        else if (strcmp(argv[a], "-m") == 0 && a + 1 < argc)
            max = bench_parse_size(argv[++a]);
        else if (strcmp(argv[a], "-b") == 0 && a + 1 < argc)
            bytes = bench_parse_size(argv[++a]);
        else if (strcmp(argv[a], "-T") == 0 && a + 1 < argc)
            limit = atof(argv[++a]);
        else
            usage_exit();
    }
    if (min < 1 || max < min || max > MCAPI_MAX_PKT_SIZE || bytes < max || limit < 0.0)
        usage_exit();

    int me = bench_start();
    if (me > 1) {
        bench_finish();
        return 0;
    }

    mcapi_status_t st;
    mcapi_request_t req;
    mcapi_pktchan_send_hndl_t sh = 0;
    mcapi_pktchan_recv_hndl_t rh = 0;
    unsigned char *buf = NULL;
    if (me == 0) {
        mcapi_endpoint_t s = mcapi_endpoint_create(PORT_SEND, &st);
        bench_check("mcapi_endpoint_create", st);
        mcapi_endpoint_t r = mcapi_endpoint_get(BENCH_DOMAIN, 1, PORT_RECV, BENCH_TIMEOUT, &st);
        bench_check("mcapi_endpoint_get", st);
        mcapi_pktchan_connect_i(s, r, &req, &st);
        bench_wait("mcapi_pktchan_connect_i", &req, st);
        mcapi_pktchan_send_open_i(&sh, s, &req, &st);
        bench_wait("mcapi_pktchan_send_open_i", &req, st);
        buf = bench_alloc((size_t)max);
        printf("# bench/mcapi/pkt_throughput: node 0 -> node 1, %ld bytes per packet size\n",
               bytes);
        printf("# size MB/s bytes\n");
        fflush(stdout);
    } else {
        mcapi_endpoint_t r = mcapi_endpoint_create(PORT_RECV, &st);
        bench_check("mcapi_endpoint_create", st);
        mcapi_pktchan_recv_open_i(&rh, r, &req, &st);
        bench_wait("mcapi_pktchan_recv_open_i", &req, st);
    }

    uint32_t tag = 1;
    for (long size = min; size <= max; size *= 2) {
        long count = bytes / size;
        long warmup = count / 16 < 4 ? 4 : count / 16;
        bench_phase("packets", size);
        bench_sync(tag);
        if (me == 0) {
            double t0 = 0.0;
            long timed = 0;
            int last = 0;
            for (long k = 0; !last; k++) {
                if (k == warmup)
                    t0 = bench_now();
                last = k + 1 == warmup + count ||
                       (limit > 0.0 && k >= warmup + 16 && bench_now() - t0 > limit);
                buf[0] = (unsigned char)last;
                mcapi_pktchan_send(sh, buf, (size_t)size, &st);
                bench_check("mcapi_pktchan_send", st);
                if (k >= warmup)
                    timed++;
            }
            bench_await(tag);
            double elapsed = bench_now() - t0;
            double sent = (double)timed * (double)size;
            printf("%ld %.3f %.0f\n", size, sent / elapsed / 1e6, sent);
            fflush(stdout);
        } else {
            for (long k = 0;; k++) {
                void *pkt = NULL;
                size_t got = 0;
                mcapi_pktchan_recv(rh, &pkt, &got, &st);
                bench_check("mcapi_pktchan_recv", st);
                unsigned char mark = ((unsigned char *)pkt)[0];
                if (got != (size_t)size || mark > 1) {
                    fprintf(stderr, "pkt_throughput: node 1: size %ld, packet %ld: got %zu bytes"
                            " marked %u\n", size, k, got, mark);
                    return 1;
                }
                mcapi_pktchan_release(pkt, &st);
                bench_check("mcapi_pktchan_release", st);
                if (mark == 1)
                    break;
            }
            bench_signal(tag);
        }
        tag++;
    }

    if (me == 0) {
        mcapi_pktchan_send_close_i(sh, &req, &st);
        bench_wait("mcapi_pktchan_send_close_i", &req, st);
    } else {
        mcapi_pktchan_recv_close_i(rh, &req, &st);
        bench_wait("mcapi_pktchan_recv_close_i", &req, st);
    }
    free(buf);
    bench_finish();
    return 0;
}

/*
 * scl_interval.c — MCAPI scalar channels: the interval between 64-bit values in a stream, and
 * the latency of a scalar ping-pong.
 *
 * Node 0 connects two scalar channels: node 0 -> node 1 and node 1 -> node 0.
 *
 * Stream: node 0 sends COUNT values (0, 1, 2, ...) with mcapi_sclchan_send_uint64; node 1
 * receives each with mcapi_sclchan_recv_uint64 and checks it, then sends a 4-byte message
 * back. Node 0 times from its first send to the arrival of that message (the last receive
 * plus one small message); the result is that time / COUNT, in ns per value. COUNT / 10
 * untimed values go first.
 *
 * Ping-pong: node 0 sends a value, node 1 sends it back on the other channel; ITERS timed
 * round trips after ITERS / 10 untimed ones; the result is half the mean round trip, in us.
 *
 * Output (see mcapibench.h):
 *     # bench/mcapi/scl_interval: uint64 scalars, node 0 -> node 1 stream and ping-pong
 *     # measure count value
 *     stream_interval_ns 100000 812.345
 *     pingpong_latency_us 10000 3.456
 *
 *     usage: scl_interval [-n COUNT] [-i ITERS]   (defaults 100000, 10000; -i 0: no ping-pong)
 */
#define BENCH_NAME "scl_interval"
#include "mcapibench.h"

#define PORT_OUT_S 104 /* node 0: sends the stream and the pings */
#define PORT_OUT_R 105 /* node 1: receives them */
#define PORT_BACK_S 106 /* node 1: sends the pongs */
#define PORT_BACK_R 107 /* node 0: receives them */

static void usage_exit(void)
{
    fprintf(stderr, "usage: scl_interval [-n COUNT] [-i ITERS]\n");
    exit(2);
}

static void expect_value(const char *what, long k, uint64_t got, uint64_t want)
{
    if (got != want) {
        fprintf(stderr, "scl_interval: node %d: %s %ld: value %llu, expected %llu\n",
                bench_node, what, k, (unsigned long long)got, (unsigned long long)want);
        exit(1);
    }
}

int main(int argc, char **argv)
{
    long count = 100000, iters = 10000;
    for (int a = 1; a < argc; a++) {
        if (strcmp(argv[a], "-n") == 0 && a + 1 < argc)
            count = bench_parse_size(argv[++a]);
        else if (strcmp(argv[a], "-i") == 0 && a + 1 < argc)
            iters = bench_parse_size(argv[++a]);
        else
            usage_exit();
    }
    if (count < 1 || iters < 0)
        usage_exit();

    int me = bench_start();
    if (me > 1) {
        bench_finish();
        return 0;
    }

    mcapi_status_t st;
    mcapi_request_t req;
    mcapi_sclchan_send_hndl_t out = 0;
    mcapi_sclchan_recv_hndl_t in = 0;
    /* Node 0 sends on PORT_OUT_S and receives on PORT_BACK_R; node 1 the reverse. */
    mcapi_endpoint_t send_ep = mcapi_endpoint_create(me == 0 ? PORT_OUT_S : PORT_BACK_S, &st);
    bench_check("mcapi_endpoint_create", st);
    mcapi_endpoint_t recv_ep = mcapi_endpoint_create(me == 0 ? PORT_BACK_R : PORT_OUT_R, &st);
    bench_check("mcapi_endpoint_create", st);
    if (me == 0) {
        mcapi_endpoint_t r = mcapi_endpoint_get(BENCH_DOMAIN, 1, PORT_OUT_R, BENCH_TIMEOUT, &st);
        bench_check("mcapi_endpoint_get", st);
        mcapi_endpoint_t s = mcapi_endpoint_get(BENCH_DOMAIN, 1, PORT_BACK_S, BENCH_TIMEOUT, &st);
        bench_check("mcapi_endpoint_get", st);
        mcapi_sclchan_connect_i(send_ep, r, &req, &st);
        bench_wait("mcapi_sclchan_connect_i", &req, st);
        mcapi_sclchan_connect_i(s, recv_ep, &req, &st);
        bench_wait("mcapi_sclchan_connect_i", &req, st);
    }
    /* Opens complete once the channel is connected and the other side opened. */
    mcapi_request_t open_s, open_r;
    mcapi_sclchan_send_open_i(&out, send_ep, &open_s, &st);
    if (st != MCAPI_SUCCESS && st != MCAPI_PENDING)
        bench_fail("mcapi_sclchan_send_open_i", st);
    mcapi_sclchan_recv_open_i(&in, recv_ep, &open_r, &st);
    bench_wait("mcapi_sclchan_recv_open_i", &open_r, st);
    bench_wait("mcapi_sclchan_send_open_i", &open_s, MCAPI_PENDING);

    if (me == 0) {
        printf("# bench/mcapi/scl_interval: uint64 scalars, node 0 -> node 1 stream and ping-pong\n");
        printf("# measure count value\n");
        fflush(stdout);
    }

    long warmup = count / 10 < 2 ? 2 : count / 10;
    bench_phase("stream", count);
    bench_sync(1);
    if (me == 0) {
        double t0 = 0.0;
        for (long k = 0; k < warmup + count; k++) {
            if (k == warmup)
                t0 = bench_now();
            mcapi_sclchan_send_uint64(out, (uint64_t)k, &st);
            bench_check("mcapi_sclchan_send_uint64", st);
        }
        bench_await(1);
        double elapsed = bench_now() - t0;
        printf("stream_interval_ns %ld %.1f\n", count, elapsed * 1e9 / (double)count);
        fflush(stdout);
    } else {
        for (long k = 0; k < warmup + count; k++) {
            uint64_t v = mcapi_sclchan_recv_uint64(in, &st);
            bench_check("mcapi_sclchan_recv_uint64", st);
            expect_value("stream value", k, v, (uint64_t)k);
        }
        bench_signal(1);
    }

    if (iters > 0) {
        long pp_warmup = iters / 10 < 2 ? 2 : iters / 10;
        double t0 = 0.0;
        bench_phase("ping-pong", iters);
        bench_sync(2);
        for (long k = 0; k < pp_warmup + iters; k++) {
            if (k == pp_warmup)
                t0 = bench_now();
            if (me == 0) {
                mcapi_sclchan_send_uint64(out, (uint64_t)k, &st);
                bench_check("mcapi_sclchan_send_uint64", st);
                uint64_t v = mcapi_sclchan_recv_uint64(in, &st);
                bench_check("mcapi_sclchan_recv_uint64", st);
                expect_value("pong", k, v, (uint64_t)k);
            } else {
                uint64_t v = mcapi_sclchan_recv_uint64(in, &st);
                bench_check("mcapi_sclchan_recv_uint64", st);
                expect_value("ping", k, v, (uint64_t)k);
                mcapi_sclchan_send_uint64(out, v, &st);
                bench_check("mcapi_sclchan_send_uint64", st);
            }
        }
        double elapsed = bench_now() - t0;
        if (me == 0) {
            printf("pingpong_latency_us %ld %.3f\n", iters, elapsed * 1e6 / (2.0 * (double)iters));
            fflush(stdout);
        }
    }

    mcapi_sclchan_send_close_i(out, &open_s, &st);
    if (st != MCAPI_SUCCESS && st != MCAPI_PENDING)
        bench_fail("mcapi_sclchan_send_close_i", st);
    mcapi_sclchan_recv_close_i(in, &open_r, &st);
    bench_wait("mcapi_sclchan_recv_close_i", &open_r, st);
    bench_wait("mcapi_sclchan_send_close_i", &open_s, MCAPI_PENDING);
    bench_finish();
    return 0;
}

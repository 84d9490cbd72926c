/*
 * msg_pingpong.c — MCAPI message latency: a ping-pong of connectionless messages between
 * node 0 and node 1.
 *
 * For each size (1 B doubling up to MAXSIZE), node 0 sends a message with mcapi_msg_send to
 * node 1's endpoint, node 1 receives it with mcapi_msg_recv into its own buffer and sends the
 * same bytes back, and node 0 receives them. The nodes synchronise, run ITERS / 10 untimed
 * round trips (at least 2), then ITERS timed ones; the result is half the mean round-trip
 * time of the timed ones. With -T SECONDS, node 0 ends the timed round trips of a size once
 * they took that long (after at least 20): a slow size then counts fewer than ITERS, and the
 * third column says how many. The fourth is half the median round trip of the timed ones, which
 * shows how far a few slow round trips pull the mean. Node 0 marks each message with the round in the low 7 bits of its
 * first and last byte and sets the high bit on the last one, which tells node 1 to stop; each
 * received message is checked for its size and its mark.
 *
 * Output (see mcapibench.h):
 *     # bench/mcapi/msg_pingpong: node 0 <-> node 1, half the mean round trip of 10000
 *     # size latency_us round_trips median_us
 *     1 4.321 10000 4.298
 *     ...
 *
 *     usage: msg_pingpong [-s MINSIZE] [-m MAXSIZE] [-i ITERS] [-T SECONDS]
 *     (defaults 1, 64K, 10000, no time limit)
 */
#define BENCH_NAME "msg_pingpong"
#include "mcapibench.h"

#define PORT 101

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void usage_exit(void)
{
    fprintf(stderr, "usage: msg_pingpong [-s MINSIZE] [-m MAXSIZE] [-i ITERS] [-T SECONDS]\n");
    exit(2);
}

int main(int argc, char **argv)
{
    long min = 1, max = 64L << 10, iters = 10000;
    double limit = 0.0;
    for (int a = 1; a < argc; a++) {
        if (strcmp(argv[a], "-s") == 0 && a + 1 < argc)
            min = bench_parse_size(argv[++a]);
        else if (strcmp(argv[a], "-m") == 0 && a + 1 < argc)
            max = bench_parse_size(argv[++a]);
        else if (strcmp(argv[a], "-i") == 0 && a + 1 < argc)
            iters = bench_parse_size(argv[++a]);
        else if (strcmp(argv[a], "-T") == 0 && a + 1 < argc)
            limit = atof(argv[++a]);
        else
            usage_exit();
    }
    if (min < 1 || max < min || max > MCAPI_MAX_MSG_SIZE || iters < 1 || limit < 0.0)
        usage_exit();

    int me = bench_start();
    if (me > 1) {
        bench_finish();
        return 0;
    }

    mcapi_status_t st;
    mcapi_endpoint_t mine = mcapi_endpoint_create(PORT, &st);
    bench_check("mcapi_endpoint_create", st);
    mcapi_endpoint_t peer =
        mcapi_endpoint_get(BENCH_DOMAIN, (mcapi_node_t)(1 - me), PORT, BENCH_TIMEOUT, &st);
    bench_check("mcapi_endpoint_get", st);
    unsigned char *buf = bench_alloc((size_t)max);
    double *trip = bench_alloc((size_t)iters * sizeof *trip); /* node 0: each round trip, s */

    if (me == 0) {
        printf("# bench/mcapi/msg_pingpong: node 0 <-> node 1, half the mean round trip of %ld\n",
               iters);
        printf("# size latency_us round_trips median_us\n");
        fflush(stdout);
    }

    uint32_t tag = 1;
    for (long size = min; size <= max; size *= 2) {
        long warmup = iters / 10 < 2 ? 2 : iters / 10;
        long timed = 0;
        double t0 = 0.0, t_prev = 0.0;
        int last = 0;
        bench_phase("ping-pong", size);
        bench_sync(tag++);
        for (long k = 0; !last; k++) {
            unsigned char mark = (unsigned char)(k & 0x7f);
            size_t got = 0;
            if (k == warmup)
                t0 = t_prev = bench_now();
            if (me == 0) {
                last = k + 1 == warmup + iters ||
                       (limit > 0.0 && k >= warmup + 20 && bench_now() - t0 > limit);
                mark |= last ? 0x80 : 0;
                buf[0] = buf[size - 1] = mark;
                mcapi_msg_send(mine, peer, buf, (size_t)size, 0, &st);
                bench_check("mcapi_msg_send", st);
                mcapi_msg_recv(mine, buf, (size_t)size, &got, &st);
                bench_check("mcapi_msg_recv", st);
            } else {
                mcapi_msg_recv(mine, buf, (size_t)size, &got, &st);
                bench_check("mcapi_msg_recv", st);
                mcapi_msg_send(mine, peer, buf, got, 0, &st);
                bench_check("mcapi_msg_send", st);
                last = got > 0 && (buf[0] & 0x80) != 0;
                mark |= last ? 0x80 : 0;
            }
            if (got != (size_t)size || buf[0] != mark || buf[got - 1] != mark) {
                fprintf(stderr, "msg_pingpong: node %d: size %ld, round %ld: got %zu bytes"
                        " marked %u/%u, expected mark %u\n", me, size, k, got, buf[0],
                        buf[got > 0 ? got - 1 : 0], mark);
                return 1;
            }
            if (k >= warmup) {
                double t = bench_now();
                trip[timed++] = t - t_prev;
                t_prev = t;
            }
        }
        double elapsed = t_prev - t0;
        if (me == 0) {
            qsort(trip, (size_t)timed, sizeof *trip, by_value);
            double median = timed % 2 ? trip[timed / 2] : (trip[timed / 2 - 1] + trip[timed / 2]) / 2;
            printf("%ld %.3f %ld %.3f\n", size, elapsed * 1e6 / (2.0 * (double)timed), timed,
                   median * 1e6 / 2.0);
            fflush(stdout);
        }
    }

    free(trip);
    free(buf);
    bench_finish();
    return 0;
}

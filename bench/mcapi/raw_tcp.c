/*
 * raw_tcp.c — the ceiling for the MCAPI benchmarks on TCP: the same two measurements over a
 * plain TCP socket on the loopback device, between this process and a child it forks. No
 * Ferry, no MPI, no MCAPI.
 *
 * The parent listens on 127.0.0.1 (an ephemeral port), forks, and the child connects; both
 * set TCP_NODELAY. The parent measures and prints; the child answers.
 *
 * pingpong: for each size (1 B doubling up to MAXSIZE, 64 KiB by default) the parent writes a
 * message of that size and the child reads all of it and writes it back; ITERS / 10 untimed
 * round trips, then ITERS timed ones; the result is half the mean round trip, in us (and, as
 * msg_pingpong prints, the count and half the median round trip).
 *
 * stream: for each chunk size (1 KiB doubling up to MAXSIZE, 256 KiB by default) the parent
 * writes BYTES / size chunks with send() of one chunk each; the child reads into a buffer of
 * one chunk until it has all the bytes, then writes one byte back. The parent times from its
 * first write to the arrival of that byte; the result is bytes / time in MB/s (1 MB = 10^6
 * bytes). 1/16 of the chunks (at least 4) go untimed first.
 *
 * Output (as the programs of bench/mcapi; see mcapibench.h):
 *     # raw_tcp pingpong: TCP_NODELAY over 127.0.0.1, half the mean round trip of 10000
 *     # size latency_us round_trips median_us
 *     1 8.765 10000 8.700
 *     ...
 *     # raw_tcp stream: TCP_NODELAY over 127.0.0.1, 1073741824 bytes per chunk size
 *     # size MB/s bytes
 *     1024 512.345 1073741824
 *
 *     usage: raw_tcp pingpong [-s MINSIZE] [-m MAXSIZE] [-i ITERS]
 *            raw_tcp stream [-s MINSIZE] [-m MAXSIZE] [-b BYTES]
 *     (BYTES also from FERRY_BENCH_BYTES)
 */
#define _POSIX_C_SOURCE 200809L

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../plain.h"

__attribute__((noreturn))
static void die(const char *what)
{
    fprintf(stderr, "raw_tcp: %s: %s\n", what, strerror(errno));
    exit(1);
}

static void write_all(int fd, const void *buf, size_t n)
{
    const char *p = buf;
    while (n > 0) {
        ssize_t k = send(fd, p, n, 0);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            die("send");
        p += k;
        n -= (size_t)k;
    }
}

static void read_all(int fd, void *buf, size_t n)
{
    char *p = buf;
    while (n > 0) {
        ssize_t k = recv(fd, p, n, 0);
        if (k < 0 && errno == EINTR)
            continue;
        if (k == 0)
            errno = ECONNRESET;
        if (k <= 0)
            die("recv");
        p += k;
        n -= (size_t)k;
    }
}

static void nodelay(int fd)
{
    int one = 1;
    if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) != 0)
        die("setsockopt TCP_NODELAY");
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The parent's side of the ping-pong: prints one line per size. */
static void pingpong_measure(int fd, char *buf, long min, long max, long iters)
{
    double *trip = malloc((size_t)iters * sizeof *trip);
    if (trip == NULL)
        die("malloc");
    printf("# raw_tcp pingpong: TCP_NODELAY over 127.0.0.1, half the mean round trip of %ld\n",
           iters);
    printf("# size latency_us round_trips median_us\n");
    fflush(stdout);
    long warmup = iters / 10 < 2 ? 2 : iters / 10;
    for (long size = min; size <= max; size *= 2) {
        double t0 = 0.0, t_prev = 0.0;
        for (long k = 0; k < warmup + iters; k++) {
            if (k == warmup)
                t0 = t_prev = bench_now();
            write_all(fd, buf, (size_t)size);
            read_all(fd, buf, (size_t)size);
            if (k >= warmup) {
                double t = bench_now();
                trip[k - warmup] = t - t_prev;
                t_prev = t;
            }
        }
        qsort(trip, (size_t)iters, sizeof *trip, by_value);
        double median = iters % 2 ? trip[iters / 2] : (trip[iters / 2 - 1] + trip[iters / 2]) / 2;
        printf("%ld %.3f %ld %.3f\n", size, (t_prev - t0) * 1e6 / (2.0 * (double)iters), iters,
               median * 1e6 / 2.0);
        fflush(stdout);
    }
    free(trip);
}

static void pingpong_answer(int fd, char *buf, long min, long max, long iters)
{
    long warmup = iters / 10 < 2 ? 2 : iters / 10;
    for (long size = min; size <= max; size *= 2)
        for (long k = 0; k < warmup + iters; k++) {
            read_all(fd, buf, (size_t)size);
            write_all(fd, buf, (size_t)size);
        }
}

static void stream_measure(int fd, char *buf, long min, long max, long bytes)
{
    printf("# raw_tcp stream: TCP_NODELAY over 127.0.0.1, %ld bytes per chunk size\n", bytes);
    printf("# size MB/s bytes\n");
    fflush(stdout);
    for (long size = min; size <= max; size *= 2) {
        long count = bytes / size, warmup = count / 16 < 4 ? 4 : count / 16;
        char ack;
        double t0 = 0.0;
        for (long k = 0; k < warmup + count; k++) {
            if (k == warmup)
                t0 = bench_now();
            write_all(fd, buf, (size_t)size);
        }
        read_all(fd, &ack, 1);
        double elapsed = bench_now() - t0;
        printf("%ld %.3f %ld\n", size, (double)(count * size) / elapsed / 1e6, count * size);
        fflush(stdout);
    }
}

static void stream_answer(int fd, char *buf, long min, long max, long bytes)
{
    for (long size = min; size <= max; size *= 2) {
        long count = bytes / size, warmup = count / 16 < 4 ? 4 : count / 16;
        for (long k = 0; k < warmup + count; k++)
            read_all(fd, buf, (size_t)size);
        write_all(fd, "!", 1);
    }
}

static void usage_exit(void)
{
    fprintf(stderr, "usage: raw_tcp pingpong [-s MINSIZE] [-m MAXSIZE] [-i ITERS]\n"
                    "       raw_tcp stream [-s MINSIZE] [-m MAXSIZE] [-b BYTES]\n");
    exit(2);
}

int main(int argc, char **argv)
{
    if (argc < 2)
        usage_exit();
    int stream = strcmp(argv[1], "stream") == 0;
    if (!stream && strcmp(argv[1], "pingpong") != 0)
        usage_exit();
    long min = stream ? 1L << 10 : 1, max = stream ? 256L << 10 : 64L << 10;
    long iters = 10000, bytes = 1L << 30;
    const char *env = getenv("FERRY_BENCH_BYTES");
    if (env != NULL)
        bytes = bench_parse_size(env);
    for (int a = 2; a < argc; a++) {
        if (strcmp(argv[a], "-s") == 0 && a + 1 < argc)
            min = bench_parse_size(argv[++a]);
        else if (strcmp(argv[a], "-m") == 0 && a + 1 < argc)
            max = bench_parse_size(argv[++a]);
        else if (!stream && strcmp(argv[a], "-i") == 0 && a + 1 < argc)
            iters = bench_parse_size(argv[++a]);
        else if (stream && strcmp(argv[a], "-b") == 0 && a + 1 < argc)
            bytes = bench_parse_size(argv[++a]);
        else
            usage_exit();
    }
    if (min < 1 || max < min || max > (1L << 30) || iters < 1 || bytes < max)
        usage_exit();

    int lfd = socket(AF_INET, SOCK_STREAM, 0);
    if (lfd < 0)
        die("socket");
    struct sockaddr_in addr;
    socklen_t len = sizeof addr;
    memset(&addr, 0, sizeof addr);
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = 0;
    if (bind(lfd, (struct sockaddr *)&addr, sizeof addr) != 0 || listen(lfd, 1) != 0 ||
        getsockname(lfd, (struct sockaddr *)&addr, &len) != 0)
        die("bind/listen on 127.0.0.1");

    char *buf = malloc((size_t)max);
    if (buf == NULL)
        die("malloc");
    memset(buf, 'r', (size_t)max);
    fflush(stdout);
    pid_t child = fork();
    if (child < 0)
        die("fork");
    if (child == 0) {
        close(lfd);
        int fd = socket(AF_INET, SOCK_STREAM, 0);
        if (fd < 0 || connect(fd, (struct sockaddr *)&addr, sizeof addr) != 0)
            die("connect");
        nodelay(fd);
        if (stream)
            stream_answer(fd, buf, min, max, bytes);
        else
            pingpong_answer(fd, buf, min, max, iters);
        close(fd);
        _exit(0);
    }
    int fd = accept(lfd, NULL, NULL);
    if (fd < 0)
        die("accept");
    close(lfd);
    nodelay(fd);
    if (stream)
        stream_measure(fd, buf, min, max, bytes);
    else
        pingpong_measure(fd, buf, min, max, iters);
    close(fd);
    int status = 0;
    if (waitpid(child, &status, 0) != child || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        fprintf(stderr, "raw_tcp: the child failed\n");
        return 1;
    }
    free(buf);
    return 0;
}

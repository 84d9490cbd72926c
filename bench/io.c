/*
 * io.c — MPI-IO bandwidth (MB/s, 10^6 B/s, best of -i rounds) on a file in each of two
 * directories: tmpfs (/dev/shm) and a disk (-d, default /var/tmp), as `shm` and `disk`.
 *   io.<fs>.coll_write_bandwidth, io.<fs>.coll_read_bandwidth: every rank writes (reads)
 *       every np-th block of the file through a vector view, with one MPI_File_write_all
 *       (read_all) at the default hints
 *   io.<fs>.coll_write_cb1_bandwidth: the same write with the hint cb_nodes=1
 *   io.<fs>.indep_write_bandwidth, io.<fs>.indep_read_bandwidth: rank 0 alone writes
 *       (reads) 1/np of the file contiguously with MPI_File_write (read), one block a call
 *   io.<fs>.plain_write_bandwidth, io.<fs>.plain_read_bandwidth: the same with a loop of
 *       pwrite (pread) on a file descriptor of its own (rounds of the two alternate)
 *   io.<fs>.coll_write_cbon_bandwidth, io.<fs>.coll_read_cbon_bandwidth: the collective
 *       write and read with the hints romio_cb_write=enable and romio_cb_read=enable
 * Size: the block in bytes (-s MIN -m MAX, doubling; default 64K). -f: the file's bytes
 * (default 256M, a multiple of np blocks). Writes go to a file emptied beforehand (outside
 * the timing) and are not synced: they measure the path to the page cache, as reads do.
 * Output contract: bench/benchutil.h.
 */
#define _GNU_SOURCE
#include <mpi.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "benchutil.h"

static int rank, np;
static long iters = 3, filebytes = 256L << 20;

static double best_of(double t, double best)
{
    return best == 0 || t < best ? t : best;
}

static double elapsed_max(double t0)
{
    double t = MPI_Wtime() - t0, tmax;
    MPI_Allreduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return tmax;
}

static void emptied(const char *path)
{
    if (rank == 0) {
        int fd = open(path, O_CREAT | O_TRUNC | O_WRONLY, 0644);
        if (fd >= 0)
            close(fd);
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

/* Collective write or read of every np-th block; the best time of `iters`. */
static double collective(const char *path, long block, int write, MPI_Info info)
{
    long nblocks = filebytes / block / np;
    char *buf = malloc(nblocks * block);
    memset(buf, rank + 1, nblocks * block);
    MPI_Datatype vec, ft;
    MPI_Type_vector((int)nblocks, (int)block, (int)(np * block), MPI_BYTE, &vec);
    MPI_Type_create_resized(vec, 0, (MPI_Aint)nblocks * np * block, &ft);
    MPI_Type_commit(&ft);
    double best = 0;
    for (long i = 0; i < iters; i++) {
        if (write)
            emptied(path);
        MPI_File fh;
        MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh);
        MPI_File_set_view(fh, (MPI_Offset)rank * block, MPI_BYTE, ft, "native", info);
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        if (write)
            MPI_File_write_all(fh, buf, (int)(nblocks * block), MPI_BYTE, MPI_STATUS_IGNORE);
        else
            MPI_File_read_all(fh, buf, (int)(nblocks * block), MPI_BYTE, MPI_STATUS_IGNORE);
        best = best_of(elapsed_max(t0), best);
        MPI_File_close(&fh);
    }
    if (!write) {
        /* Every byte of block j is (j % np) + 1, as the writes left it. */
        for (long j = 0; j < nblocks; j++)
            if (buf[j * block] != rank + 1 || buf[j * block + block - 1] != rank + 1) {
                fprintf(stderr, "io: rank %d read block %ld wrong\n", rank, j);
                MPI_Abort(MPI_COMM_WORLD, 1);
            }
    }
    MPI_Type_free(&ft);
    MPI_Type_free(&vec);
    free(buf);
    return best;
}

/* Rank 0 alone: 1/np of the file in blocks, through MPI or plain pwrite/pread; one round. */
static double alone(const char *path, long block, int write, int plain)
{
    long nblocks = filebytes / block / np;
    char *buf = malloc(block);
    memset(buf, 7, block);
    double best = 0;
    for (long i = 0; i < 1; i++) {
        if (write)
            emptied(path);
        MPI_File fh;
        MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh);
        int fd = plain && rank == 0 ? open(path, O_RDWR) : -1;
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        if (rank == 0) {
            for (long j = 0; j < nblocks; j++) {
                ssize_t n;
                if (plain)
                    n = write ? pwrite(fd, buf, block, j * block) : pread(fd, buf, block, j * block);
                else {
                    MPI_Status st;
                    int c;
                    if (write)
                        MPI_File_write(fh, buf, (int)block, MPI_BYTE, &st);
                    else
                        MPI_File_read(fh, buf, (int)block, MPI_BYTE, &st);
                    MPI_Get_count(&st, MPI_BYTE, &c);
                    n = c;
                }
                if (n != block) {
                    fprintf(stderr, "io: block %ld moved %ld bytes\n", j, (long)n);
                    MPI_Abort(MPI_COMM_WORLD, 1);
                }
            }
        }
        best = best_of(elapsed_max(t0), best);
        if (fd >= 0)
            close(fd);
        MPI_File_close(&fh);
    }
    free(buf);
    return best;
}

int main(int argc, char **argv)
{
    long min = 64 << 10, max = 64 << 10;
    const char *disk = "/var/tmp";
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    for (int a = 1; a < argc; a++) {
        if (a + 1 >= argc)
            bench_usage_and_exit(argv[0], rank);
        if (strcmp(argv[a], "-s") == 0)
            min = bench_parse_size(argv[++a]);
        else if (strcmp(argv[a], "-m") == 0)
            max = bench_parse_size(argv[++a]);
        else if (strcmp(argv[a], "-i") == 0)
            iters = bench_parse_size(argv[++a]);
        else if (strcmp(argv[a], "-f") == 0)
            filebytes = bench_parse_size(argv[++a]);
        else if (strcmp(argv[a], "-d") == 0)
            disk = argv[++a];
        else
            bench_usage_and_exit(argv[0], rank);
    }
    if (min <= 0 || max < min || iters <= 0 || filebytes < (long)np * max)
        bench_usage_and_exit(argv[0], rank);
    bench_print_header(rank, "MB/s", "MPI-IO, every rank every %d-th block of a %ld-byte file; rank 0 alone 1/%d of it", np, filebytes, np);
    const char *dirs[2][2] = { { "shm", "/dev/shm" }, { "disk", disk } };
    MPI_Info cb1;
    MPI_Info_create(&cb1);
    MPI_Info_set(cb1, "cb_nodes", "1");
    MPI_Info cbon;
    MPI_Info_create(&cbon);
    MPI_Info_set(cbon, "romio_cb_write", "enable");
    MPI_Info_set(cbon, "romio_cb_read", "enable");
    int id = (int)MPI_Wtime() ^ (int)getpid();
    MPI_Bcast(&id, 1, MPI_INT, 0, MPI_COMM_WORLD);
    for (int d = 0; d < 2; d++) {
        char path[512], name[128];
        snprintf(path, sizeof path, "%s/ferry-bench-io-%d.bin", dirs[d][1], id);
        for (long block = min; block <= max; block *= 2) {
            long nblocks = filebytes / block / np;
            double all = (double)nblocks * np * block, part = (double)nblocks * block;
#define ROW(what, bytes, t) do { snprintf(name, sizeof name, "io.%s." what "_bandwidth", dirs[d][0]); \
                                 bench_print_row(rank, name, block, (bytes) / (t) / 1e6); } while (0)
            ROW("coll_write", all, collective(path, block, 1, MPI_INFO_NULL));
            ROW("coll_read", all, collective(path, block, 0, MPI_INFO_NULL));
            ROW("coll_write_cb1", all, collective(path, block, 1, cb1));
            /* Plain and MPI rounds alternate, each first in turn, so that the state of
             * the page cache and of the disk's write-back favours neither. */
            double pw = 0, iw = 0, pr = 0, ir = 0;
            for (long i = 0; i < iters; i++) {
                int first = (int)(i & 1);
                for (int k = 0; k < 2; k++) {
                    int plain = k == first;
                    double t = alone(path, block, 1, plain);
                    if (plain) pw = best_of(t, pw); else iw = best_of(t, iw);
                }
                for (int k = 0; k < 2; k++) {
                    int plain = k == first;
                    double t = alone(path, block, 0, plain);
                    if (plain) pr = best_of(t, pr); else ir = best_of(t, ir);
                }
            }
            ROW("plain_write", part, pw);
            ROW("indep_write", part, iw);
            ROW("plain_read", part, pr);
            ROW("indep_read", part, ir);
            /* Collective buffering asked for (romio_cb_write/read=enable). */
            ROW("coll_write_cbon", all, collective(path, block, 1, cbon));
            ROW("coll_read_cbon", all, collective(path, block, 0, cbon));
        }
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 0)
            unlink(path);
    }
    MPI_Info_free(&cb1);
    MPI_Info_free(&cbon);
    MPI_Finalize();
    return 0;
}

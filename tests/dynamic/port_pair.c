/*
 * Two jobs meet through a port (tests/dynamic.sh starts them): `port_pair server FILE` opens a
 * port at rank 0, writes its name into FILE and accepts; `port_pair client FILE` reads the name
 * and connects. Over the intercommunicator: point-to-point between every pair of processes of
 * the two jobs, barrier, bcast from the server's rank 0 (MPI_ROOT), allreduce (each group gets
 * the other's sum), MPI_Intercomm_merge (server first) with an allreduce on the merged
 * communicator (again with the same high on both sides: the accepting side first), then
 * MPI_Comm_disconnect (which leaves the other job) and an allreduce of each job alone. The client first checks the failures: a port name
 * nobody listens on and closing a port never opened give MPI_ERR_PORT.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CHECK(cond, ...) do { if (!(cond)) { fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); MPI_Abort(MPI_COMM_WORLD, 1); } } while (0)

static int error_class(int rc) { int c; MPI_Error_class(rc, &c); return c; }

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    CHECK(argc == 3, "usage: port_pair server|client FILE");
    int server = strcmp(argv[1], "server") == 0;
    const char *file = argv[2];
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    char port[MPI_MAX_PORT_NAME] = "";
    MPI_Comm inter;
    if (server) {
        if (rank == 0) {
            MPI_Open_port(MPI_INFO_NULL, port);
            char tmp[4096];
            snprintf(tmp, sizeof tmp, "%s.tmp", file);
            FILE *f = fopen(tmp, "w");
            CHECK(f && fputs(port, f) >= 0 && fclose(f) == 0, "cannot write %s", tmp);
            CHECK(rename(tmp, file) == 0, "cannot rename %s", tmp);
        }
        MPI_Comm_accept(port, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter);
    } else {
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
        char bogus[MPI_MAX_PORT_NAME];
        snprintf(bogus, sizeof bogus, "ferry-port:127.0.0.1:1/%064d", 0);
        MPI_Comm none = MPI_COMM_NULL;
        int rc = MPI_Comm_connect(bogus, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &none);
        CHECK(error_class(rc) == MPI_ERR_PORT, "connect to a dead port: class %d", error_class(rc));
        rc = MPI_Close_port("not a port");
        CHECK(error_class(rc) == MPI_ERR_PORT, "close of a port never opened: class %d", error_class(rc));
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
        if (rank == 0) {
            for (int i = 0; i < 2000 && access(file, R_OK) != 0; i++) usleep(10000);
            FILE *f = fopen(file, "r");
            CHECK(f && fgets(port, sizeof port, f), "no port name in %s", file);
            fclose(f);
        }
        MPI_Comm_connect(port, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter);
    }
    int flag, rsize;
    MPI_Comm_test_inter(inter, &flag);
    MPI_Comm_remote_size(inter, &rsize);
    CHECK(flag, "not an intercommunicator");
    int lrank, lsize;
    MPI_Comm_rank(inter, &lrank);
    MPI_Comm_size(inter, &lsize);
    CHECK(lrank == rank && lsize == size, "local group %d/%d", lrank, lsize);

    /* Every process sends its value to every remote process and receives theirs. */
    int me = (server ? 1000 : 2000) + rank;
    int *got = calloc(rsize, sizeof(int));
    MPI_Request *reqs = malloc(2 * rsize * sizeof(MPI_Request));
    MPI_Status *sts = malloc(2 * rsize * sizeof(MPI_Status));
    for (int r = 0; r < rsize; r++) {
        MPI_Irecv(&got[r], 1, MPI_INT, r, 7, inter, &reqs[r]);
        MPI_Isend(&me, 1, MPI_INT, r, 7, inter, &reqs[rsize + r]);
    }
    MPI_Waitall(2 * rsize, reqs, sts);
    for (int r = 0; r < rsize; r++)
        CHECK(got[r] == (server ? 2000 : 1000) + r, "from remote %d: %d", r, got[r]);
    /* A large message each way between the two rank 0s (rendezvous across the bridge). */
    if (rank == 0) {
        int n = 1 << 18;
        int *big = malloc(n * sizeof(int)), *in = malloc(n * sizeof(int));
        for (int i = 0; i < n; i++) big[i] = i ^ me;
        MPI_Sendrecv(big, n, MPI_INT, 0, 8, in, n, MPI_INT, 0, 8, inter, MPI_STATUS_IGNORE);
        int other = server ? 2000 : 1000;
        for (int i = 0; i < n; i++) CHECK(in[i] == (i ^ other), "large message word %d", i);
        free(big); free(in);
    }

    MPI_Barrier(inter);
    int value = server ? 42 : -1;
    int root = server ? (rank == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0;
    MPI_Bcast(&value, 1, MPI_INT, root, inter);
    CHECK(server || value == 42, "bcast gave %d", value);
    int sum = 0;
    MPI_Allreduce(&me, &sum, 1, MPI_INT, MPI_SUM, inter);
    int expect = 0;
    for (int r = 0; r < rsize; r++) expect += (server ? 2000 : 1000) + r;
    CHECK(sum == expect, "allreduce gave %d, expected %d", sum, expect);

    MPI_Comm merged;
    MPI_Intercomm_merge(inter, server ? 0 : 1, &merged);
    int mrank, msize, total = 0, one = 1;
    MPI_Comm_rank(merged, &mrank);
    MPI_Comm_size(merged, &msize);
    CHECK(msize == size + rsize, "merged size %d", msize);
    CHECK(mrank == (server ? rank : rsize + rank), "merged rank %d", mrank);
    MPI_Allreduce(&one, &total, 1, MPI_INT, MPI_SUM, merged);
    CHECK(total == msize, "merged allreduce gave %d", total);
    MPI_Comm_free(&merged);
    /* Both sides pass the same high: the accepting side (the server) comes first. */
    MPI_Intercomm_merge(inter, 0, &merged);
    MPI_Comm_rank(merged, &mrank);
    CHECK(mrank == (server ? rank : rsize + rank), "merged (same high) rank %d", mrank);
    MPI_Allreduce(&mrank, &total, 1, MPI_INT, MPI_SUM, merged);
    CHECK(total == msize * (msize - 1) / 2, "merged (same high) allreduce gave %d", total);
    MPI_Comm_free(&merged);

    MPI_Comm_disconnect(&inter);
    CHECK(inter == MPI_COMM_NULL, "disconnect leaves MPI_COMM_NULL");
    /* The job goes on by itself. */
    int world_sum = 0;
    MPI_Allreduce(&one, &world_sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    CHECK(world_sum == size, "world allreduce after disconnect gave %d", world_sum);
    if (server && rank == 0) MPI_Close_port(port);
    free(got); free(reqs); free(sts);
    MPI_Finalize();
    if (rank == 0) printf("port_pair %s: ok (%d local, %d remote)\n", argv[1], size, rsize);
    return 0;
}

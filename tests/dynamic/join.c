/* MPI_Comm_join between two singletons over a socketpair made before fork (tests/spawn.sh):
 * each end joins, they trade a message both ways over the intercommunicator, merge, reduce,
 * and disconnect; the socket stays open and usable afterwards. Prints "join <side>: ok". */
#include <mpi.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#define CHECK(c, ...) do { if (!(c)) { fprintf(stderr, "join: " __VA_ARGS__); fputc('\n', stderr); return 1; } } while (0)

static int side(int fd, int first) {
    MPI_Init(NULL, NULL);
    MPI_Comm inter, merged;
    CHECK(MPI_Comm_join(fd, &inter) == MPI_SUCCESS, "MPI_Comm_join failed");
    int rsize, v = first ? 11 : 22, got, sum;
    MPI_Comm_remote_size(inter, &rsize);
    CHECK(rsize == 1, "remote size %d", rsize);
    MPI_Sendrecv(&v, 1, MPI_INT, 0, 5, &got, 1, MPI_INT, 0, 5, inter, MPI_STATUS_IGNORE);
    CHECK(got == (first ? 22 : 11), "got %d", got);
    MPI_Intercomm_merge(inter, first ? 0 : 1, &merged);
    MPI_Allreduce(&v, &sum, 1, MPI_INT, MPI_SUM, merged);
    CHECK(sum == 33, "merged sum %d", sum);
    MPI_Comm_free(&merged);
    MPI_Comm_disconnect(&inter);
    char c = 'x';
    CHECK(write(fd, &c, 1) == 1 && read(fd, &c, 1) == 1 && c == 'x', "the socket is not usable after the join");
    MPI_Finalize();
    printf("join %s: ok\n", first ? "first" : "second");
    return 0;
}

int main(void) {
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0) { perror("socketpair"); return 1; }
    pid_t pid = fork();
    if (pid < 0) { perror("fork"); return 1; }
    if (pid == 0) {
        close(sv[0]);
        return side(sv[1], 0);
    }
    close(sv[1]);
    int rc = side(sv[0], 1), status = 0;
    waitpid(pid, &status, 0);
    return rc != 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0;
}

/* ranks: 2 */
/* Behaviours that once failed, each with the check that would have caught it:
 *  - zero-byte sends and receives with NULL buffers, also to self and buffered;
 *  - a peer busy for longer than FERRY_CONNECT_TIMEOUT before its first MPI call, and a
 *    reader slower than that while the sender finalizes (both used to kill or hang the job);
 *  - a rendezvous Isend freed with MPI_Request_free before MPI_Finalize;
 *  - a non-contiguous receive freed with MPI_Request_free still lands in the user buffer;
 *  - Waitany/Testany report the index of a request that completed with an error;
 *  - Sendrecv and Mrecv fill the status when the message is truncated. */
#include <string.h>
#include <unistd.h>

#define TEST_NAME "regressions"
#include "testutil.h"

int main(int argc, char **argv)
{
    /* Shorter than the delays below, so a timeout that should not apply would fire. */
    setenv("FERRY_CONNECT_TIMEOUT", "1", 1);
    TEST_INIT(&argc, &argv);
    int other = 1 - me;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

    /* A busy peer: rank 1 computes for 2.5 s before its first call; rank 0 sends at once. */
    int v = 41;
    if (me == 0) {
        CHECK(MPI_Send(&v, 1, MPI_INT, 1, 1, MPI_COMM_WORLD) == MPI_SUCCESS, "send to a busy peer");
    } else {
        usleep(2500000);
        CHECK(MPI_Recv(&v, 1, MPI_INT, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE) == MPI_SUCCESS && v == 41, "recv");
    }

    /* Zero bytes from NULL, to the peer, to self, buffered. */
    MPI_Request r[2];
    MPI_Status st;
    int count = -1;
    CHECK(MPI_Isend(NULL, 0, MPI_INT, me, 2, MPI_COMM_WORLD, &r[0]) == MPI_SUCCESS, "isend self");
    CHECK(MPI_Recv(NULL, 0, MPI_INT, me, 2, MPI_COMM_WORLD, &st) == MPI_SUCCESS, "recv self");
    MPI_Get_count(&st, MPI_INT, &count);
    CHECK(count == 0, "zero-byte self count %d", count);
    MPI_Wait(&r[0], MPI_STATUS_IGNORE);
    CHECK(MPI_Sendrecv(NULL, 0, MPI_BYTE, other, 3, NULL, 0, MPI_BYTE, other, 3, MPI_COMM_WORLD, &st) == MPI_SUCCESS, "sendrecv");
    static char bsend_buf[1024];
    MPI_Buffer_attach(bsend_buf, sizeof bsend_buf);
    CHECK(MPI_Bsend(NULL, 0, MPI_INT, other, 4, MPI_COMM_WORLD) == MPI_SUCCESS, "bsend of nothing");
    CHECK(MPI_Recv(NULL, 0, MPI_INT, other, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE) == MPI_SUCCESS, "recv of nothing");
    void *b;
    int bs;
    MPI_Buffer_detach(&b, &bs);

    /* A freed non-contiguous receive still unpacks. */
    MPI_Datatype every_other;
    MPI_Type_vector(4, 1, 2, MPI_INT, &every_other);
    MPI_Type_commit(&every_other);
    int strided[8] = {0};
    int plain[4] = {1, 2, 3, 4};
    if (me == 1) {
        MPI_Irecv(strided, 1, every_other, 0, 5, MPI_COMM_WORLD, &r[0]);
        MPI_Request_free(&r[0]);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (me == 0) MPI_Send(plain, 4, MPI_INT, 1, 5, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
    if (me == 1) {
        /* Completion of the freed request is observed through progress in later calls. */
        for (int i = 0; i < 200 && strided[6] != 4; i++) {
            int f;
            MPI_Iprobe(MPI_ANY_SOURCE, 999, MPI_COMM_WORLD, &f, MPI_STATUS_IGNORE);
            usleep(1000);
        }
        int want[8] = {1, 0, 2, 0, 3, 0, 4, 0};
        CHECK(memcmp(strided, want, sizeof want) == 0, "freed strided receive: %d %d %d %d", strided[0], strided[2], strided[4], strided[6]);
    }
    MPI_Type_free(&every_other);

    /* Waitany/Testany name the request that failed. */
    int small[2], big[8] = {0};
    if (me == 0) {
        MPI_Send(big, 8, MPI_INT, 1, 6, MPI_COMM_WORLD);
        MPI_Send(big, 8, MPI_INT, 1, 7, MPI_COMM_WORLD);
    } else {
        r[0] = MPI_REQUEST_NULL;
        MPI_Irecv(small, 2, MPI_INT, 0, 6, MPI_COMM_WORLD, &r[1]);
        int idx = -7;
        int rc = MPI_Waitany(2, r, &idx, &st);
        CHECK(rc == MPI_ERR_TRUNCATE && idx == 1, "waitany rc %d idx %d", rc, idx);
        MPI_Irecv(small, 2, MPI_INT, 0, 7, MPI_COMM_WORLD, &r[1]);
        int flag = 0;
        idx = -7;
        while (!flag) {
            rc = MPI_Testany(2, r, &idx, &flag, &st);
        }
        CHECK(rc == MPI_ERR_TRUNCATE && idx == 1, "testany rc %d idx %d", rc, idx);
    }

    /* Sendrecv and Mrecv fill the status on truncation. */
    st.MPI_SOURCE = -99;
    int rc = MPI_Sendrecv(big, 8, MPI_INT, other, 8, small, 2, MPI_INT, other, 8, MPI_COMM_WORLD, &st);
    CHECK(rc == MPI_ERR_TRUNCATE && st.MPI_SOURCE == other && st.MPI_TAG == 8, "sendrecv rc %d source %d", rc, st.MPI_SOURCE);
    if (me == 0) {
        MPI_Send(big, 8, MPI_INT, 1, 9, MPI_COMM_WORLD);
    } else {
        MPI_Message m;
        MPI_Mprobe(0, 9, MPI_COMM_WORLD, &m, &st);
        st.MPI_SOURCE = -99;
        rc = MPI_Mrecv(small, 2, MPI_INT, &m, &st);
        CHECK(rc == MPI_ERR_TRUNCATE && st.MPI_SOURCE == 0 && st.MPI_TAG == 9, "mrecv rc %d source %d", rc, st.MPI_SOURCE);
    }

    /* A rendezvous send freed before finalize, and a reader slower than the connect
     * timeout while the sender finalizes: both must still deliver. */
    enum { N = 1 << 18 };
    int *data = malloc(N * sizeof(int));
    for (int i = 0; i < N; i++) data[i] = i;
    if (me == 0) {
        MPI_Isend(data, N, MPI_INT, 1, 10, MPI_COMM_WORLD, &r[0]);
        MPI_Request_free(&r[0]);
    } else {
        usleep(1500000);
        memset(data, 0, N * sizeof(int));
        MPI_Recv(data, N, MPI_INT, 0, 10, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        for (int i = 0; i < N; i++) CHECK(data[i] == i, "freed rendezvous send: element %d is %d", i, data[i]);
    }
    MPI_Finalize();
    /* rank 0's buffer must stay valid until its freed send completes, i.e. until finalize */
    free(data);
    return 0;
}

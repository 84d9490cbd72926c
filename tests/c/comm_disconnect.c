/* ranks: 1 2 4 */
/* mpich: skip MPICH 4.0.2 returns from MPI_Comm_disconnect before a pending receive on the communicator is complete (and hangs at one rank) */
/*
 * MPI_Comm_disconnect on a duplicate of MPI_COMM_WORLD: it returns only once this process's
 * pending communication on it is complete (a receive whose message is sent 200 ms later is
 * complete at once afterwards), runs the attributes' delete callbacks, and sets the handle
 * to MPI_COMM_NULL; the requests stay the program's to complete. Errors: the predefined
 * communicators, MPI_COMM_NULL and a NULL handle pointer.
 */
#define TEST_NAME "comm_disconnect"
#include "testutil.h"

static int deleted = 0;

static int on_delete(MPI_Comm c, int key, void *val, void *extra)
{
    (void)c, (void)key, (void)extra;
    deleted += *(int *)val;
    return MPI_SUCCESS;
}

int main(int argc, char **argv)
{
    TEST_INIT(&argc, &argv);
    MPI_Comm d;
    CALL(MPI_Comm_dup(MPI_COMM_WORLD, &d));
    int key, val = 7;
    CALL(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, on_delete, &key, NULL));
    CALL(MPI_Comm_set_attr(d, key, &val));

    int right = (me + 1) % np, left = (me + np - 1) % np;
    int got = -1, mine = 100 + me, done = 0;
    MPI_Request rr, sr;
    CALL(MPI_Irecv(&got, 1, MPI_INT, left, 5, d, &rr));
    pause_ms(200);
    CALL(MPI_Isend(&mine, 1, MPI_INT, right, 5, d, &sr));
    CALL(MPI_Comm_disconnect(&d));
    CHECK(d == MPI_COMM_NULL, "disconnect left the handle %#x", (unsigned)d);
    CHECK(deleted == 7, "the delete callback ran %s", deleted ? "wrongly" : "not");
    CALL(MPI_Test(&rr, &done, MPI_STATUS_IGNORE));
    CHECK(done, "the receive was not complete after MPI_Comm_disconnect");
    CHECK(got == 100 + left, "received %d from %d", got, left);
    CALL(MPI_Wait(&sr, MPI_STATUS_IGNORE));
    CALL(MPI_Comm_free_keyval(&key));

#ifdef FERRY_MPI_H
    /* MPICH 4.0 disconnects MPI_COMM_WORLD without a word. */
    CALL(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MPI_Comm w = MPI_COMM_WORLD, n = MPI_COMM_NULL;
    EXPECT(MPI_ERR_COMM, MPI_Comm_disconnect(&w));
    EXPECT(MPI_ERR_COMM, MPI_Comm_disconnect(&n));
    CHECK(w == MPI_COMM_WORLD, "a refused disconnect changed the handle");
#endif
    CALL(MPI_Finalize());
    finalized = 1;
    return 0;
}

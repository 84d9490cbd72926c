/* ranks: 2 */
/*
 * Persistent sends and receives whose derived datatype is freed right after
 * the init call: MPI_Type_free leaves a type usable by the operations that use
 * it, so every MPI_Start still sends and receives with it (a dup of MPI_INT,
 * and a vector whose gaps must stay untouched), 16 times over, the receive
 * from MPI_ANY_SOURCE. A new type made in between may take the freed handle
 * back; the requests are not confused by it.
 */
#define TEST_NAME "persistent_freed_type"
#include "testutil.h"

#define ITER 16

int main(int argc, char **argv)
{
    TEST_INIT(&argc, &argv);
    MPI_Request req;
    MPI_Datatype t, other;
    int v = -1, vec[5];
    if (me == 0) {
        CALL(MPI_Type_dup(MPI_INT, &t));
        CALL(MPI_Send_init(&v, 1, t, 1, 0, MPI_COMM_WORLD, &req));
        CALL(MPI_Type_free(&t));
        CALL(MPI_Type_contiguous(3, MPI_DOUBLE, &other));
        CALL(MPI_Type_commit(&other));
        for (int i = 0; i < ITER; i++) {
            v = 42 + i;
            CALL(MPI_Start(&req));
            CALL(MPI_Wait(&req, MPI_STATUS_IGNORE));
        }
        CALL(MPI_Request_free(&req));
        CALL(MPI_Type_free(&other));
    } else {
        for (int i = 0; i < ITER; i++) {
            CALL(MPI_Recv(&v, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            CHECK(v == 42 + i, "send %d: got %d", i, v);
        }
    }

    if (me == 1) {
        CALL(MPI_Type_vector(3, 1, 2, MPI_INT, &t));
        CALL(MPI_Type_commit(&t));
        CALL(MPI_Recv_init(vec, 1, t, MPI_ANY_SOURCE, 1, MPI_COMM_WORLD, &req));
        CALL(MPI_Type_free(&t));
        for (int i = 0; i < ITER; i++) {
            for (int k = 0; k < 5; k++)
                vec[k] = -1;
            CALL(MPI_Start(&req));
            CALL(MPI_Wait(&req, MPI_STATUS_IGNORE));
            CHECK(vec[0] == i && vec[1] == -1 && vec[2] == i + 1 && vec[3] == -1 && vec[4] == i + 2,
                  "receive %d: %d %d %d %d %d", i, vec[0], vec[1], vec[2], vec[3], vec[4]);
        }
        CALL(MPI_Request_free(&req));
    } else {
        for (int i = 0; i < ITER; i++) {
            int out[3] = {i, i + 1, i + 2};
            CALL(MPI_Send(out, 3, MPI_INT, 1, 1, MPI_COMM_WORLD));
        }
    }
    CALL(MPI_Finalize());
    return 0;
}

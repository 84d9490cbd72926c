/* ranks: 1 2 3 4 5 8 */
/*
 * Non-blocking collectives: several in flight at once on one communicator, overlapped
 * with point-to-point traffic on the same communicator, completed by Waitall, by polling
 * Test, and by Waitany; results checked exactly.
 */
#define TEST_NAME "coll_nonblocking"
#include "testutil.h"

int main(int argc, char **argv)
{
    TEST_INIT(&argc, &argv);
    enum { N = 20000 };
    int *a = xmalloc(N * sizeof(int)), *b = xmalloc(N * sizeof(int));
    for (int i = 0; i < N; i++) a[i] = i + me;
    int root = 1 % np, v = me == root ? 77 : 0, x = me, y = -1;
    MPI_Request r[3];
    CALL(MPI_Iallreduce(a, b, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &r[0]));
    CALL(MPI_Ibcast(&v, 1, MPI_INT, root, MPI_COMM_WORLD, &r[1]));
    CALL(MPI_Isend(&x, 1, MPI_INT, (me + 1) % np, 5, MPI_COMM_WORLD, &r[2]));
    CALL(MPI_Recv(&y, 1, MPI_INT, (me + np - 1) % np, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    CALL(MPI_Waitall(3, r, statuses_ignore()));
    for (int i = 0; i < N; i++)
        CHECK(b[i] == np * i + np * (np - 1) / 2, "iallreduce element %d is %d", i, b[i]);
    CHECK(v == 77, "ibcast gave %d", v);
    CHECK(y == (me + np - 1) % np, "point-to-point message %d", y);

    int g[64];
    CHECK(np <= 64, "at most 64 ranks");
    MPI_Request q;
    CALL(MPI_Iallgather(&me, 1, MPI_INT, g, 1, MPI_INT, MPI_COMM_WORLD, &q));
    int flag = 0;
    while (!flag)
        CALL(MPI_Test(&q, &flag, MPI_STATUS_IGNORE));
    for (int i = 0; i < np; i++)
        CHECK(g[i] == i, "iallgather block %d is %d", i, g[i]);

    int s = 0, e = -1, red = 0, one = 1;
    MPI_Request m[3];
    CALL(MPI_Iscan(&one, &s, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &m[0]));
    CALL(MPI_Iexscan(&one, &e, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &m[1]));
    CALL(MPI_Ireduce(&one, &red, 1, MPI_INT, MPI_SUM, np - 1, MPI_COMM_WORLD, &m[2]));
    for (int k = 0; k < 3; k++) {
        int idx = -1;
        CALL(MPI_Waitany(3, m, &idx, MPI_STATUS_IGNORE));
        CHECK(idx >= 0 && idx < 3, "waitany index %d", idx);
    }
    CHECK(s == me + 1, "iscan %d", s);
    CHECK(me == 0 || e == me, "iexscan %d", e);
    CHECK(me != np - 1 || red == np, "ireduce %d", red);

    int blocks[64], mine[1] = { me * 3 }, got = -1;
    MPI_Request gs[2];
    CALL(MPI_Igather(mine, 1, MPI_INT, blocks, 1, MPI_INT, 0, MPI_COMM_WORLD, &gs[0]));
    CALL(MPI_Wait(&gs[0], MPI_STATUS_IGNORE));
    CALL(MPI_Iscatter(blocks, 1, MPI_INT, &got, 1, MPI_INT, 0, MPI_COMM_WORLD, &gs[1]));
    CALL(MPI_Wait(&gs[1], MPI_STATUS_IGNORE));
    CHECK(got == me * 3, "igather then iscatter returned %d", got);
    free(a);
    free(b);
    CALL(MPI_Finalize());
    return 0;
}

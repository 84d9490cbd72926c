/* ranks: 1 2 3 */
/*
 * A session beside the World Model: MPI_Session_init after MPI_Init; the
 * group of mpi://WORLD equals that of MPI_COMM_WORLD and a communicator made
 * from it is congruent to MPI_COMM_WORLD yet its messages never match those
 * of MPI_COMM_WORLD; communicators made from groups with the same string tag
 * one after the other are distinct. The session (and its communicator)
 * keeps working after MPI_Finalize, which makes MPI_Finalized true, until
 * MPI_Session_finalize. An invalid session handle gives MPI_ERR_SESSION.
 */
#define TEST_NAME "sessions_world"
#include "testutil.h"

int main(int argc, char **argv)
{
    TEST_INIT(&argc, &argv);
    CALL(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
    CALL(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MPI_Session s;
    CALL(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s));

    MPI_Group g, wg;
    CALL(MPI_Group_from_session_pset(s, "mpi://WORLD", &g));
    CALL(MPI_Comm_group(MPI_COMM_WORLD, &wg));
    int res = -1;
    CALL(MPI_Group_compare(g, wg, &res));
    CHECK(res == MPI_IDENT, "group compare %d", res);
    CALL(MPI_Group_free(&wg));

    MPI_Comm c, c2;
    CALL(MPI_Comm_create_from_group(g, "org.ferry.test", MPI_INFO_NULL, MPI_ERRORS_RETURN, &c));
    CALL(MPI_Comm_create_from_group(g, "org.ferry.test", MPI_INFO_NULL, MPI_ERRORS_RETURN, &c2));
    CALL(MPI_Comm_compare(c, MPI_COMM_WORLD, &res));
    CHECK(res == MPI_CONGRUENT, "compare with MPI_COMM_WORLD: %d", res);
    CALL(MPI_Comm_compare(c, c2, &res));
    CHECK(res == MPI_CONGRUENT, "compare of the two: %d", res);

    /* Same tag and peers on three communicators: each receive gets its own. */
    int right = (me + 1) % np, left = (me + np - 1) % np;
    int v[3] = { 10 + me, 20 + me, 30 + me }, w[3] = { -1, -1, -1 };
    MPI_Request rq[3];
    CALL(MPI_Irecv(&w[2], 1, MPI_INT, left, 0, c2, &rq[2]));
    CALL(MPI_Irecv(&w[1], 1, MPI_INT, left, 0, c, &rq[1]));
    CALL(MPI_Irecv(&w[0], 1, MPI_INT, left, 0, MPI_COMM_WORLD, &rq[0]));
    CALL(MPI_Send(&v[0], 1, MPI_INT, right, 0, MPI_COMM_WORLD));
    CALL(MPI_Send(&v[1], 1, MPI_INT, right, 0, c));
    CALL(MPI_Send(&v[2], 1, MPI_INT, right, 0, c2));
    CALL(MPI_Waitall(3, rq, statuses_ignore()));
    for (int i = 0; i < 3; i++)
        CHECK(w[i] == 10 * (i + 1) + left, "communicator %d got %d", i, w[i]);

    int n = -1;
    EXPECT(MPI_ERR_SESSION, MPI_Session_get_num_psets(MPI_SESSION_NULL, MPI_INFO_NULL, &n));

    CALL(MPI_Comm_free(&c2));
    CALL(MPI_Finalize());
    finalized = 1;
    int flag = 0;
    CALL(MPI_Finalized(&flag));
    CHECK(flag, "MPI_Finalized false after MPI_Finalize");

    /* The session lives on. */
    int sum = -1;
    CALL(MPI_Allreduce(&me, &sum, 1, MPI_INT, MPI_SUM, c));
    CHECK(sum == np * (np - 1) / 2, "allreduce after MPI_Finalize: %d", sum);
    CALL(MPI_Comm_free(&c));
    CALL(MPI_Group_free(&g));
    CALL(MPI_Session_finalize(&s));
    if (me == 0)
        printf("sessions_world: ok\n");
    return 0;
}

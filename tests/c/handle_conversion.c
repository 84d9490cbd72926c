/* ranks: 1 2 */
/*
 * C <-> Fortran handle conversion (MPI_Comm_c2f/f2c and the others of mpi.h): a handle
 * converted to Fortran and back is the same handle, and works in calls: a duplicate of
 * MPI_COMM_WORLD, a committed datatype, a group, an info object, a persistent request, a
 * user op, a user error handler, a window, a session and MPI_MESSAGE_NO_PROC. The Fortran
 * value of a predefined handle is the same on every rank.
 */
#define TEST_NAME "handle_conversion"
#include "testutil.h"

static void on_error(MPI_Comm *c, int *code, ...) { (void)c, (void)code; }
static void add(void *in, void *inout, int *len, MPI_Datatype *t)
{
    (void)t;
    for (int i = 0; i < *len; i++)
        ((int *)inout)[i] += ((int *)in)[i];
}

int main(int argc, char **argv)
{
    TEST_INIT(&argc, &argv);
    MPI_Comm d;
    CALL(MPI_Comm_dup(MPI_COMM_WORLD, &d));
    MPI_Fint fd = MPI_Comm_c2f(d);
    MPI_Comm back = MPI_Comm_f2c(fd);
    CHECK(back == d, "comm round trip");
    int n = -1;
    CALL(MPI_Comm_size(back, &n));
    CHECK(n == np, "size through the converted handle: %d", n);
    MPI_Fint fw = MPI_Comm_c2f(MPI_COMM_WORLD), w0 = fw;
    CALL(MPI_Bcast(&w0, 1, MPI_INT, 0, MPI_COMM_WORLD));
    CHECK(w0 == fw, "MPI_COMM_WORLD's Fortran value differs between ranks");

    MPI_Datatype t;
    CALL(MPI_Type_contiguous(3, MPI_INT, &t));
    CALL(MPI_Type_commit(&t));
    int sz = -1;
    CALL(MPI_Type_size(MPI_Type_f2c(MPI_Type_c2f(t)), &sz));
    CHECK(sz == 12, "type size through the converted handle: %d", sz);
    CHECK(MPI_Type_f2c(MPI_Type_c2f(MPI_INT)) == MPI_INT, "MPI_INT round trip");

    MPI_Group g;
    CALL(MPI_Comm_group(d, &g));
    int gs = -1;
    CALL(MPI_Group_size(MPI_Group_f2c(MPI_Group_c2f(g)), &gs));
    CHECK(gs == np, "group size %d", gs);

    MPI_Info info;
    CALL(MPI_Info_create(&info));
    CALL(MPI_Info_set(MPI_Info_f2c(MPI_Info_c2f(info)), "k", "v"));
    int nkeys = -1;
    CALL(MPI_Info_get_nkeys(info, &nkeys));
    CHECK(nkeys == 1, "info keys %d", nkeys);

    int x = me, y = -1;
    MPI_Request r;
    CALL(MPI_Send_init(&x, 1, MPI_INT, me, 3, d, &r));
    MPI_Request rb = MPI_Request_f2c(MPI_Request_c2f(r));
    CHECK(rb == r, "request round trip");
    CALL(MPI_Start(&rb));
    CALL(MPI_Recv(&y, 1, MPI_INT, me, 3, d, MPI_STATUS_IGNORE));
    CALL(MPI_Wait(&rb, MPI_STATUS_IGNORE));
    CALL(MPI_Request_free(&rb));
    CHECK(y == me, "self message %d", y);

    MPI_Op op;
    CALL(MPI_Op_create(add, 1, &op));
    int s = -1;
    CALL(MPI_Allreduce(&x, &s, 1, MPI_INT, MPI_Op_f2c(MPI_Op_c2f(op)), d));
    CHECK(s == np * (np - 1) / 2, "allreduce with the converted op: %d", s);

    MPI_Errhandler eh;
    CALL(MPI_Comm_create_errhandler(on_error, &eh));
    CALL(MPI_Comm_set_errhandler(d, MPI_Errhandler_f2c(MPI_Errhandler_c2f(eh))));

    MPI_Win win;
    int mem = 0;
    CALL(MPI_Win_create(&mem, sizeof mem, sizeof mem, MPI_INFO_NULL, d, &win));
    MPI_Win wb = MPI_Win_f2c(MPI_Win_c2f(win));
    CALL(MPI_Win_fence(0, wb));
    CALL(MPI_Win_fence(0, wb));
    CALL(MPI_Win_free(&wb));

    MPI_Message m = MPI_MESSAGE_NO_PROC;
    CHECK(MPI_Message_f2c(MPI_Message_c2f(m)) == MPI_MESSAGE_NO_PROC, "message round trip");
    MPI_Session ses;
    CALL(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &ses));
    MPI_Session sb = MPI_Session_f2c(MPI_Session_c2f(ses));
    int npsets = -1;
    CALL(MPI_Session_get_num_psets(sb, MPI_INFO_NULL, &npsets));
    CHECK(npsets >= 2, "psets %d", npsets);
    CALL(MPI_Session_finalize(&sb));

    CALL(MPI_Errhandler_free(&eh));
    CALL(MPI_Op_free(&op));
    CALL(MPI_Info_free(&info));
    CALL(MPI_Group_free(&g));
    CALL(MPI_Type_free(&t));
    CALL(MPI_Comm_free(&d));
    CALL(MPI_Finalize());
    finalized = 1;
    return 0;
}

/* ranks: 1 2 3 4 8 */
/*
 * MPI_Comm_idup and MPI_Comm_idup_with_info: an idup does not wait for the
 * other members (rank 0 idups and then sends to rank 1, which receives
 * before it idups); the duplicate is congruent, carries the copied
 * attributes and the given hints, and its messages never match those of
 * the parent or of another duplicate. Idups interleaved with blocking
 * creations on another communicator in a different order on different
 * ranks still give distinct communicators. Forty idups of one communicator
 * and idups of idups work; idups of idups started in opposite orders on
 * different ranks complete without waiting for each other. Bad arguments give MPI_ERR_COMM and MPI_ERR_ARG.
 * MPI_Pcontrol is accepted at any level.
 */
#include <string.h>

#define TEST_NAME "idup"
#include "testutil.h"

/* Sends this rank's world rank and `salt` around a ring of `comm` with a
 * wildcard receive; a message of another communicator would show as a
 * wrong value. */
static void ring(MPI_Comm comm, int salt, const char *what)
{
    int r, n;
    CALL(MPI_Comm_rank(comm, &r));
    CALL(MPI_Comm_size(comm, &n));
    int out[2] = { me, salt }, in[2] = { -1, -1 };
    MPI_Request req;
    CALL(MPI_Irecv(in, 2, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, comm, &req));
    CALL(MPI_Send(out, 2, MPI_INT, (r + 1) % n, 7, comm));
    CALL(MPI_Wait(&req, MPI_STATUS_IGNORE));
    CHECK(in[1] == salt, "%s: got salt %d, expected %d (a message of another communicator)",
          what, in[1], salt);
}

static int copies = 0;
static int copy_fn(MPI_Comm old, int key, void *extra, void *in, void *out, int *flag)
{
    (void)old, (void)key, (void)extra;
    copies++;
    *(void **)out = in;
    *flag = 1;
    return MPI_SUCCESS;
}

int main(int argc, char **argv)
{
    TEST_INIT(&argc, &argv);
    CALL(MPI_Pcontrol(0));
    CALL(MPI_Pcontrol(1, "phase", 2));

    /* Rank 0 idups first and then sends; rank 1 receives first and idups after: an idup
     * that waited for every member would deadlock here. */
    MPI_Comm dup;
    MPI_Request req;
    int token = 42;
    if (me == 0) {
        CALL(MPI_Comm_idup(MPI_COMM_WORLD, &dup, &req));
        if (np > 1)
            CALL(MPI_Send(&token, 1, MPI_INT, 1, 1, MPI_COMM_WORLD));
    } else {
        if (me == 1)
            CALL(MPI_Recv(&token, 1, MPI_INT, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        CALL(MPI_Comm_idup(MPI_COMM_WORLD, &dup, &req));
    }
    CALL(MPI_Wait(&req, MPI_STATUS_IGNORE));
    CHECK(req == MPI_REQUEST_NULL, "the idup's request is not freed by MPI_Wait");
    int cmp;
    CALL(MPI_Comm_compare(MPI_COMM_WORLD, dup, &cmp));
    CHECK(cmp == MPI_CONGRUENT, "the idup compares %d to its parent, expected CONGRUENT", cmp);
    ring(dup, 1, "idup of world");
    ring(MPI_COMM_WORLD, 2, "world after the idup");

    /* Attributes are copied by the idup, as by MPI_Comm_dup. */
    int key, value = 5, *got, flag = 0;
    CALL(MPI_Comm_create_keyval(copy_fn, MPI_COMM_NULL_DELETE_FN, &key, NULL));
    CALL(MPI_Comm_set_attr(dup, key, &value));
    MPI_Comm dup2;
    CALL(MPI_Comm_idup(dup, &dup2, &req));
    CALL(MPI_Wait(&req, MPI_STATUS_IGNORE));
    CALL(MPI_Comm_get_attr(dup2, key, &got, &flag));
    CHECK(flag && got == &value && copies == 1, "attribute not copied by the idup (flag %d, copies %d)",
          flag, copies);
    ring(dup2, 3, "idup of an idup");
    CALL(MPI_Comm_free_keyval(&key));

    /* Hints given to idup_with_info are the duplicate's. */
    MPI_Info info, got_info;
    CALL(MPI_Info_create(&info));
    CALL(MPI_Info_set(info, "mpi_assert_no_any_tag", "false"));
    MPI_Comm dup3;
    CALL(MPI_Comm_idup_with_info(MPI_COMM_WORLD, info, &dup3, &req));
    CALL(MPI_Info_free(&info));
    CALL(MPI_Wait(&req, MPI_STATUS_IGNORE));
    CALL(MPI_Comm_get_info(dup3, &got_info));
    char v[MPI_MAX_INFO_VAL + 1];
    CALL(MPI_Info_get(got_info, "mpi_assert_no_any_tag", MPI_MAX_INFO_VAL, v, &flag));
    CHECK(flag && strcmp(v, "false") == 0, "the hint given to idup_with_info is lost");
    CALL(MPI_Info_free(&got_info));
    ring(dup3, 4, "idup_with_info");

    /* An idup of world and a blocking dup of a half, in opposite orders on even and odd
     * ranks: four live communicators that must all be told apart. */
    MPI_Comm half, half_dup, world_dup;
    CALL(MPI_Comm_split(MPI_COMM_WORLD, me % 2, me, &half));
    if (me % 2 == 0) {
        CALL(MPI_Comm_idup(MPI_COMM_WORLD, &world_dup, &req));
        CALL(MPI_Comm_dup(half, &half_dup));
    } else {
        CALL(MPI_Comm_dup(half, &half_dup));
        CALL(MPI_Comm_idup(MPI_COMM_WORLD, &world_dup, &req));
    }
    CALL(MPI_Wait(&req, MPI_STATUS_IGNORE));
    ring(world_dup, 5, "idup beside a dup");
    ring(half_dup, 6, "dup beside an idup");
    ring(half, 7, "the half");
    ring(dup, 8, "the first idup again");

    /* Many idups of one communicator: more than it has context ids set aside. */
    enum { MANY = 40 };
    MPI_Comm many[MANY];
    MPI_Request reqs[MANY];
    MPI_Status sts[MANY];
    for (int i = 0; i < MANY; i++)
        CALL(MPI_Comm_idup(half, &many[i], &reqs[i]));
    CALL(MPI_Waitall(MANY, reqs, sts));
    for (int i = 0; i < MANY; i++)
        ring(many[i], 100 + i, "one of many idups");
    for (int i = 0; i < MANY; i++)
        CALL(MPI_Comm_free(&many[i]));

    /* Idups of two idups, started in opposite orders on even and odd ranks, completed
     * together: neither may wait for the other's members (an idup that agreed its context
     * with messages, as a dup does, would hang here). */
    MPI_Comm a, b, ad, bd;
    MPI_Request two[2];
    CALL(MPI_Comm_idup(MPI_COMM_WORLD, &a, &two[0]));
    CALL(MPI_Comm_idup(MPI_COMM_WORLD, &b, &two[1]));
    CALL(MPI_Waitall(2, two, sts));
    if (me % 2 == 0) {
        CALL(MPI_Comm_idup(a, &ad, &two[0]));
        CALL(MPI_Comm_idup(b, &bd, &two[1]));
    } else {
        CALL(MPI_Comm_idup(b, &bd, &two[0]));
        CALL(MPI_Comm_idup(a, &ad, &two[1]));
    }
    CALL(MPI_Waitall(2, two, sts));
    ring(ad, 200, "an idup of an idup");
    ring(bd, 201, "another idup of an idup");
    ring(a, 202, "the first of two idups");
    ring(b, 203, "the second of two idups");
    MPI_Comm *crossed[] = { &bd, &ad, &b, &a };
    for (int i = 0; i < 4; i++)
        CALL(MPI_Comm_free(crossed[i]));

    /* Errors. */
    CALL(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MPI_Comm bad;
    expect_class(MPI_Comm_idup(MPI_COMM_NULL, &bad, &req), MPI_ERR_COMM, "idup(MPI_COMM_NULL)",
                 __LINE__);
    expect_class(MPI_Comm_idup(MPI_COMM_WORLD, &bad, NULL), MPI_ERR_ARG, "idup(request NULL)",
                 __LINE__);

    CALL(MPI_Comm_free(&world_dup));
    CALL(MPI_Comm_free(&half_dup));
    CALL(MPI_Comm_free(&half));
    CALL(MPI_Comm_free(&dup3));
    CALL(MPI_Comm_free(&dup2));
    CALL(MPI_Comm_free(&dup));
    CALL(MPI_Finalize());
    return 0;
}

/* ranks: 1 2 4 5 8 */
/*
 * Communicators from groups and by host: Comm_test_inter (false for every
 * intracommunicator), Comm_create with the even ranks (the others get
 * MPI_COMM_NULL), with the world reversed, with disjoint halves and with
 * MPI_GROUP_EMPTY; Comm_create_group over the even and the odd ranks (a
 * process outside the group gets MPI_COMM_NULL at once); Comm_split_type
 * with MPI_COMM_TYPE_SHARED (one host here: every rank, ordered by key),
 * MPI_COMM_TYPE_HW_GUIDED ("mpi_shared_memory": the host; other resources and
 * none: MPI_COMM_NULL), MPI_COMM_TYPE_HW_UNGUIDED (one host: MPI_COMM_NULL) and
 * MPI_UNDEFINED. On each new communicator an Allreduce, a Bcast and a ring
 * of Sendrecv check ranks, order and isolation. Then the argument errors
 * under MPI_ERRORS_RETURN.
 */
#include <string.h>

#define TEST_NAME "comm_create"
#include "testutil.h"

/* Checks that `comm` holds the world ranks want[0..n) in that order: its
 * size and this rank, a ring of world ranks, an Allreduce and a Bcast. */
static void check_comm(MPI_Comm comm, const int *want, int n, const char *what)
{
    int size = -1, rank = -1, pos = -1, flag = 1;
    for (int i = 0; i < n; i++)
        if (want[i] == me)
            pos = i;
    CHECK(pos >= 0, "%s: this rank got a communicator it is not in", what);
    CALL(MPI_Comm_size(comm, &size));
    CALL(MPI_Comm_rank(comm, &rank));
    CHECK(size == n && rank == pos, "%s: size %d rank %d, expected %d and %d", what, size,
          rank, n, pos);
    CALL(MPI_Comm_test_inter(comm, &flag));
    CHECK(flag == 0, "%s: Comm_test_inter says it is an intercommunicator", what);

    int right = (rank + 1) % n, left = (rank + n - 1) % n, got = -1;
    MPI_Status st;
    CALL(MPI_Sendrecv(&me, 1, MPI_INT, right, 5, &got, 1, MPI_INT, left, 5, comm, &st));
    CHECK(got == want[left], "%s: left neighbour is world rank %d, expected %d", what, got,
          want[left]);
    CHECK(st.MPI_SOURCE == left, "%s: status source %d, expected %d", what, st.MPI_SOURCE,
          left);

    int sum = -1, want_sum = 0;
    for (int i = 0; i < n; i++)
        want_sum += want[i];
    CALL(MPI_Allreduce(&me, &sum, 1, MPI_INT, MPI_SUM, comm));
    CHECK(sum == want_sum, "%s: Allreduce gave %d, expected %d", what, sum, want_sum);

    int root = n - 1, v = rank == root ? 1000 + me : -1;
    CALL(MPI_Bcast(&v, 1, MPI_INT, root, comm));
    CHECK(v == 1000 + want[root], "%s: Bcast gave %d, expected %d", what, v, 1000 + want[root]);
}

static void create(MPI_Group world)
{
    int want[64], n = 0;
    MPI_Group g;
    MPI_Comm c;

    /* The evens. */
    int tr[1][3] = { { 0, np - 1, 2 } };
    CALL(MPI_Group_range_incl(world, 1, tr, &g));
    CALL(MPI_Comm_create(MPI_COMM_WORLD, g, &c));
    for (int i = 0; i < np; i += 2)
        want[n++] = i;
    if (me % 2 == 0) {
        check_comm(c, want, n, "create(evens)");
        CALL(MPI_Comm_free(&c));
    } else {
        CHECK(c == MPI_COMM_NULL, "create(evens) gave an odd rank %#x", (unsigned)c);
    }
    CALL(MPI_Group_free(&g));

    /* The world reversed, made from a duplicate of the world. */
    MPI_Comm dup;
    CALL(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    int ranks[64];
    for (int i = 0; i < np; i++)
        ranks[i] = want[i] = np - 1 - i;
    CALL(MPI_Group_incl(world, np, ranks, &g));
    CALL(MPI_Comm_create(dup, g, &c));
    check_comm(c, want, np, "create(reversed)");
    int cmp = -1;
    CALL(MPI_Comm_compare(c, MPI_COMM_WORLD, &cmp));
    CHECK(cmp == (np == 1 ? MPI_CONGRUENT : MPI_SIMILAR), "create(reversed) compares %d to the world", cmp);
    CALL(MPI_Comm_free(&c));
    CALL(MPI_Group_free(&g));

    /* Disjoint halves: each rank names its own half. */
    int half = np / 2, lower = me < half;
    int range[1][3] = { { lower ? 0 : half, lower ? half - 1 : np - 1, 1 } };
    CALL(MPI_Group_range_incl(world, 1, range, &g));
    CALL(MPI_Comm_create(dup, g, &c));
    n = 0;
    for (int i = range[0][0]; i <= range[0][1]; i++)
        want[n++] = i;
    check_comm(c, want, n, lower ? "create(lower half)" : "create(upper half)");
    CALL(MPI_Comm_free(&c));
    CALL(MPI_Group_free(&g));

    /* The empty group: nobody gets a communicator. */
    CALL(MPI_Comm_create(dup, MPI_GROUP_EMPTY, &c));
    CHECK(c == MPI_COMM_NULL, "create(MPI_GROUP_EMPTY) gave %#x", (unsigned)c);
    CALL(MPI_Comm_free(&dup));
}

static void create_group(MPI_Group world)
{
    /* The evens and the odds each make theirs, with different tags. */
    int odd = me % 2, want[64], n = 0;
    int tr[1][3] = { { odd, np - 1, 2 } };
    MPI_Group g;
    MPI_Comm c;
    CALL(MPI_Group_range_incl(world, 1, tr, &g));
    CALL(MPI_Comm_create_group(MPI_COMM_WORLD, g, odd ? 11 : 12, &c));
    for (int i = odd; i < np; i += 2)
        want[n++] = i;
    check_comm(c, want, n, odd ? "create_group(odds)" : "create_group(evens)");
    CALL(MPI_Comm_free(&c));
    CALL(MPI_Group_free(&g));

    /* A group without this rank: MPI_COMM_NULL, no one else involved. */
    int mine[1] = { me };
    CALL(MPI_Group_excl(world, 1, mine, &g));
    if (np > 1) {
        /* Rank 0 stays out; the others make theirs. */
        if (me == 0) {
            CALL(MPI_Comm_create_group(MPI_COMM_WORLD, g, 3, &c));
            CHECK(c == MPI_COMM_NULL, "create_group without this rank gave %#x", (unsigned)c);
        } else {
            MPI_Group rest;
            int zero[1] = { 0 };
            CALL(MPI_Group_excl(world, 1, zero, &rest));
            CALL(MPI_Comm_create_group(MPI_COMM_WORLD, rest, 3, &c));
            n = 0;
            for (int i = 1; i < np; i++)
                want[n++] = i;
            check_comm(c, want, n, "create_group(all but 0)");
            CALL(MPI_Comm_free(&c));
            CALL(MPI_Group_free(&rest));
        }
    }
    CALL(MPI_Group_free(&g));
}

static void split_type(void)
{
    /* One host: every rank, in reverse order by key. */
    int want[64];
    MPI_Comm c;
    CALL(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, np - me, MPI_INFO_NULL, &c));
    for (int i = 0; i < np; i++)
        want[i] = np - 1 - i;
    check_comm(c, want, np, "split_type(shared, reversed)");
    CALL(MPI_Comm_free(&c));

    /* The odd ranks stay out with MPI_UNDEFINED. */
    int n = 0;
    CALL(MPI_Comm_split_type(MPI_COMM_WORLD, me % 2 ? MPI_UNDEFINED : MPI_COMM_TYPE_SHARED, 0,
                             MPI_INFO_NULL, &c));
    for (int i = 0; i < np; i += 2)
        want[n++] = i;
    if (me % 2) {
        CHECK(c == MPI_COMM_NULL, "split_type(MPI_UNDEFINED) gave %#x", (unsigned)c);
    } else {
        check_comm(c, want, n, "split_type(shared, evens)");
        CALL(MPI_Comm_free(&c));
    }

    /* MPI-4's hardware-guided split by "mpi_shared_memory" is the host; without a resource
     * it names nothing; the unguided split of one host's ranks has no smaller part. */
    MPI_Info info;
    CALL(MPI_Info_create(&info));
    CALL(MPI_Info_set(info, "mpi_hw_resource_type", "mpi_shared_memory"));
    CALL(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_HW_GUIDED, me, info, &c));
    for (int i = 0; i < np; i++)
        want[i] = i;
    check_comm(c, want, np, "split_type(hw guided, shared memory)");
    MPI_Info got;
    char value[MPI_MAX_INFO_VAL];
    int flag = 0;
    CALL(MPI_Comm_get_info(c, &got));
    CALL(MPI_Info_get(got, "mpi_hw_resource_type", MPI_MAX_INFO_VAL - 1, value, &flag));
#ifdef FERRY_MPI_H
    /* Ferry names the resource on the new communicator (MPICH 4.0 does not). */
    CHECK(flag && strcmp(value, "mpi_shared_memory") == 0, "hw guided split: resource %s", flag ? value : "(none)");
#endif
    CALL(MPI_Info_free(&got));
    CALL(MPI_Comm_free(&c));
    CALL(MPI_Info_set(info, "mpi_hw_resource_type", "no_such_resource"));
    CALL(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_HW_GUIDED, me, info, &c));
    CHECK(c == MPI_COMM_NULL, "hw guided split by an unknown resource gave %#x", (unsigned)c);
    CALL(MPI_Info_free(&info));
    CALL(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_HW_GUIDED, me, MPI_INFO_NULL, &c));
    CHECK(c == MPI_COMM_NULL, "hw guided split without a resource gave %#x", (unsigned)c);
    CALL(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_HW_UNGUIDED, me, MPI_INFO_NULL, &c));
    CHECK(c == MPI_COMM_NULL, "hw unguided split of one host gave %#x", (unsigned)c);
    /* MPICH's neighbourhood split without the hints that name one: MPI_COMM_NULL. */
    CALL(MPI_Comm_split_type(MPI_COMM_WORLD, MPIX_COMM_TYPE_NEIGHBORHOOD, me, MPI_INFO_NULL, &c));
    CHECK(c == MPI_COMM_NULL, "neighbourhood split without hints gave %#x", (unsigned)c);
}

static void errors(MPI_Group world)
{
    CALL(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    CALL(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
    MPI_Comm c = MPI_COMM_NULL;
    int flag = 0;
    EXPECT(MPI_ERR_COMM, MPI_Comm_test_inter(MPI_COMM_NULL, &flag));
    EXPECT(MPI_ERR_GROUP, MPI_Comm_create(MPI_COMM_WORLD, MPI_GROUP_NULL, &c));
    EXPECT(MPI_ERR_GROUP, MPI_Comm_create_group(MPI_COMM_WORLD, MPI_GROUP_NULL, 0, &c));
    EXPECT(MPI_ERR_COMM, MPI_Comm_create(MPI_COMM_NULL, world, &c));
    EXPECT(MPI_ERR_ARG, MPI_Comm_split_type(MPI_COMM_WORLD, 77, 0, MPI_INFO_NULL, &c));
    EXPECT(MPI_ERR_COMM, MPI_Comm_split_type(MPI_COMM_NULL, MPI_COMM_TYPE_SHARED, 0,
                                             MPI_INFO_NULL, &c));
    CHECK(c == MPI_COMM_NULL, "a failed call set the new communicator to %#x", (unsigned)c);
    /* Still usable afterwards. */
    CALL(MPI_Comm_create(MPI_COMM_WORLD, world, &c));
    int size = -1;
    CALL(MPI_Comm_size(c, &size));
    CHECK(size == np, "create(world) after the errors: size %d", size);
    CALL(MPI_Comm_free(&c));
}

int main(int argc, char **argv)
{
    TEST_INIT(&argc, &argv);
    CHECK(np <= 64, "at most 64 ranks");
    int flag = 1;
    CALL(MPI_Comm_test_inter(MPI_COMM_WORLD, &flag));
    CHECK(flag == 0, "MPI_COMM_WORLD is an intercommunicator");
    CALL(MPI_Comm_test_inter(MPI_COMM_SELF, &flag));
    CHECK(flag == 0, "MPI_COMM_SELF is an intercommunicator");

    MPI_Group world;
    CALL(MPI_Comm_group(MPI_COMM_WORLD, &world));
    create(world);
    create_group(world);
    split_type();
    errors(world);
    CALL(MPI_Group_free(&world));

    CALL(MPI_Barrier(MPI_COMM_WORLD));
    CALL(MPI_Finalize());
    finalized = 1;
    return 0;
}

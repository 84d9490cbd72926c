/* ranks: 2 3 4 8 */
/*
 * Intercommunicators: MPI_Intercomm_create from the two halves of MPI_COMM_WORLD (and from
 * interleaved halves with leaders other than rank 0), the queries (test_inter, sizes,
 * local and remote groups), point-to-point both ways with MPI_ANY_SOURCE, probes,
 * persistent and non-blocking requests, Sendrecv, MPI_Intercomm_merge with both orders,
 * and dup / split / create / compare of an intercommunicator.
 */
#define TEST_NAME "intercomm_basic"
#include "testutil.h"

#include <string.h>

/* Group A: world ranks 0 .. a-1; group B: the rest (a >= b). */
static int a, b, in_a;

/* The group of world ranks lo .. hi-1. */
static MPI_Group world_range(int lo, int hi)
{
    MPI_Group world, g;
    int range[1][3] = { { lo, hi - 1, 1 } };
    CALL(MPI_Comm_group(MPI_COMM_WORLD, &world));
    CALL(MPI_Group_range_incl(world, 1, range, &g));
    CALL(MPI_Group_free(&world));
    return g;
}

static void check_queries(MPI_Comm inter, MPI_Comm local)
{
    int flag = 0, size, rsize, rank, lrank, cmp;
    CALL(MPI_Comm_test_inter(inter, &flag));
    CHECK(flag, "an intercommunicator says it is not one");
    CALL(MPI_Comm_test_inter(local, &flag));
    CHECK(!flag, "an intracommunicator says it is an intercommunicator");
    CALL(MPI_Comm_size(inter, &size));
    CALL(MPI_Comm_remote_size(inter, &rsize));
    CALL(MPI_Comm_rank(inter, &rank));
    CALL(MPI_Comm_rank(local, &lrank));
    CHECK(size == (in_a ? a : b) && rsize == (in_a ? b : a), "sizes %d/%d", size, rsize);
    CHECK(rank == lrank, "rank %d in the intercommunicator, %d in the local group", rank, lrank);

    MPI_Group lg, rg, want_l, want_r;
    CALL(MPI_Comm_group(inter, &lg));
    CALL(MPI_Comm_remote_group(inter, &rg));
    want_l = in_a ? world_range(0, a) : world_range(a, np);
    want_r = in_a ? world_range(a, np) : world_range(0, a);
    CALL(MPI_Group_compare(lg, want_l, &cmp));
    CHECK(cmp == MPI_IDENT, "local group compares %d", cmp);
    CALL(MPI_Group_compare(rg, want_r, &cmp));
    CHECK(cmp == MPI_IDENT, "remote group compares %d", cmp);
    MPI_Group_free(&lg);
    MPI_Group_free(&rg);
    MPI_Group_free(&want_l);
    MPI_Group_free(&want_r);
}

/* Every local rank r sends to remote rank r % rsize; every remote rank receives from the
 * ranks that send to it, with MPI_ANY_SOURCE, and checks the status names a remote rank. */
static void check_p2p(MPI_Comm inter)
{
    int size, rsize, rank;
    CALL(MPI_Comm_size(inter, &size));
    CALL(MPI_Comm_remote_size(inter, &rsize));
    CALL(MPI_Comm_rank(inter, &rank));
    int senders = 0;
    for (int r = 0; r < rsize; r++)
        senders += (r % size == rank);

    /* Blocking send, ANY_SOURCE receive, probe first. */
    int out = 1000 * in_a + rank;
    MPI_Request sreq;
    CALL(MPI_Isend(&out, 1, MPI_INT, rank % rsize, 7, inter, &sreq));
    int seen[64] = { 0 };
    for (int k = 0; k < senders; k++) {
        MPI_Status st;
        int in = -1, count = -1;
        CALL(MPI_Probe(MPI_ANY_SOURCE, 7, inter, &st));
        CHECK(st.MPI_SOURCE >= 0 && st.MPI_SOURCE < rsize && st.MPI_SOURCE % size == rank, "probe source %d", st.MPI_SOURCE);
        /* Tag 7: a partner that is done may already send the tag-8 message below. */
        CALL(MPI_Recv(&in, 1, MPI_INT, MPI_ANY_SOURCE, 7, inter, &st));
        CALL(MPI_Get_count(&st, MPI_INT, &count));
        CHECK(count == 1 && st.MPI_TAG == 7, "count %d tag %d", count, st.MPI_TAG);
        CHECK(in == 1000 * !in_a + st.MPI_SOURCE, "got %d from remote rank %d", in, st.MPI_SOURCE);
        CHECK(!seen[st.MPI_SOURCE], "remote rank %d twice", st.MPI_SOURCE);
        seen[st.MPI_SOURCE] = 1;
    }
    CALL(MPI_Wait(&sreq, MPI_STATUS_IGNORE));

    /* Sendrecv with the remote rank of the same number (both sides have rank 0 .. b-1). */
    if (rank < (in_a ? b : a) && rank < rsize) {
        int got = -1;
        MPI_Status st;
        CALL(MPI_Sendrecv(&out, 1, MPI_INT, rank, 8, &got, 1, MPI_INT, rank, 8, inter, &st));
        CHECK(got == 1000 * !in_a + rank && st.MPI_SOURCE == rank, "sendrecv got %d from %d", got, st.MPI_SOURCE);
    }

    /* Persistent requests, started twice: rank 0 of each side talks to remote rank 0. */
    if (rank == 0) {
        int pin = -1, pout = 0;
        MPI_Request reqs[2];
        CALL(MPI_Send_init(&pout, 1, MPI_INT, 0, 9, inter, &reqs[0]));
        CALL(MPI_Recv_init(&pin, 1, MPI_INT, MPI_ANY_SOURCE, 9, inter, &reqs[1]));
        for (int round = 0; round < 2; round++) {
            MPI_Status sts[2];
            pout = 10 * round + in_a;
            CALL(MPI_Startall(2, reqs));
            CALL(MPI_Waitall(2, reqs, sts));
            CHECK(pin == 10 * round + !in_a && sts[1].MPI_SOURCE == 0, "persistent round %d got %d from %d", round, pin, sts[1].MPI_SOURCE);
        }
        MPI_Request_free(&reqs[0]);
        MPI_Request_free(&reqs[1]);
        /* MPI_PROC_NULL is a valid peer; Iprobe finds nothing left. */
        MPI_Status st;
        int flag = -1;
        CALL(MPI_Send(&pout, 1, MPI_INT, MPI_PROC_NULL, 9, inter));
        CALL(MPI_Recv(&pin, 1, MPI_INT, MPI_PROC_NULL, 9, inter, &st));
        CHECK(st.MPI_SOURCE == MPI_PROC_NULL, "proc null source %d", st.MPI_SOURCE);
        CALL(MPI_Iprobe(MPI_ANY_SOURCE, 9, inter, &flag, &st));
        CHECK(!flag, "a message left over");
    }
    CALL(MPI_Barrier(MPI_COMM_WORLD));
}

/* Merge with `high` for group A: the low group comes first. */
static void check_merge(MPI_Comm inter, int a_high)
{
    MPI_Comm merged;
    int size, rank, lrank, flag = 1;
    CALL(MPI_Intercomm_merge(inter, in_a ? a_high : !a_high, &merged));
    CALL(MPI_Comm_test_inter(merged, &flag));
    CHECK(!flag, "a merged communicator is an intercommunicator");
    CALL(MPI_Comm_size(merged, &size));
    CALL(MPI_Comm_rank(merged, &rank));
    CALL(MPI_Comm_rank(inter, &lrank));
    CHECK(size == np, "merged size %d", size);
    int first = in_a ? !a_high : a_high; /* this group comes first */
    int want = first ? lrank : (in_a ? b : a) + lrank;
    CHECK(rank == want, "merged rank %d, expected %d (a_high %d)", rank, want, a_high);
    /* The merged communicator works: the sum of world ranks. */
    int sum = 0;
    CALL(MPI_Allreduce(&me, &sum, 1, MPI_INT, MPI_SUM, merged));
    CHECK(sum == np * (np - 1) / 2, "sum %d on the merged communicator", sum);
    CALL(MPI_Comm_free(&merged));
}

static void check_derived(MPI_Comm inter)
{
    MPI_Comm dup, split, created;
    int cmp, flag, rank, size, rsize;
    CALL(MPI_Comm_rank(inter, &rank));
    CALL(MPI_Comm_dup(inter, &dup));
    CALL(MPI_Comm_compare(inter, dup, &cmp));
    CHECK(cmp == MPI_CONGRUENT, "dup compares %d", cmp);
    CALL(MPI_Comm_compare(inter, MPI_COMM_WORLD, &cmp));
    CHECK(cmp == MPI_UNEQUAL, "inter vs world compares %d", cmp);
    CALL(MPI_Comm_test_inter(dup, &flag));
    CHECK(flag, "a dup of an intercommunicator is not one");
    /* Idup: the same groups; usable once the request completes. */
    MPI_Comm idup;
    MPI_Request ireq;
    CALL(MPI_Comm_idup(inter, &idup, &ireq));
    CALL(MPI_Wait(&ireq, MPI_STATUS_IGNORE));
    CALL(MPI_Comm_compare(inter, idup, &cmp));
    CHECK(cmp == MPI_CONGRUENT, "idup compares %d", cmp);
    int isum = -1;
    CALL(MPI_Allreduce(&rank, &isum, 1, MPI_INT, MPI_SUM, idup));
    CALL(MPI_Comm_remote_size(inter, &rsize));
    CHECK(isum == rsize * (rsize - 1) / 2, "allreduce on the idup: %d", isum);
    CALL(MPI_Comm_free(&idup));
    /* Traffic on the dup and the original do not mix. */
    if (rank == 0) {
        int x = 1, y = 2, gx = 0, gy = 0;
        MPI_Request r[4];
        CALL(MPI_Irecv(&gx, 1, MPI_INT, 0, 0, inter, &r[0]));
        CALL(MPI_Irecv(&gy, 1, MPI_INT, 0, 0, dup, &r[1]));
        CALL(MPI_Isend(&y, 1, MPI_INT, 0, 0, dup, &r[2]));
        CALL(MPI_Isend(&x, 1, MPI_INT, 0, 0, inter, &r[3]));
        MPI_Status sts[4];
        CALL(MPI_Waitall(4, r, sts));
        CHECK(gx == 1 && gy == 2, "dup traffic mixed: %d %d", gx, gy);
    }

    /* Split by rank parity on both sides, reversed key: intercommunicators between the
     * matching parities; a parity with members on one side only gives MPI_COMM_NULL. */
    CALL(MPI_Comm_size(inter, &size));
    CALL(MPI_Comm_remote_size(inter, &rsize));
    CALL(MPI_Comm_split(inter, rank % 2, -rank, &split));
    int local_n = (size - rank % 2 + 1) / 2, remote_n = (rsize - rank % 2 + 1) / 2;
    if (remote_n == 0) {
        CHECK(split == MPI_COMM_NULL, "split without remote members is not MPI_COMM_NULL");
    } else {
        int ssize, srsize, srank;
        CHECK(split != MPI_COMM_NULL, "split gave MPI_COMM_NULL");
        CALL(MPI_Comm_test_inter(split, &flag));
        CHECK(flag, "a split of an intercommunicator is not one");
        CALL(MPI_Comm_size(split, &ssize));
        CALL(MPI_Comm_remote_size(split, &srsize));
        CALL(MPI_Comm_rank(split, &srank));
        CHECK(ssize == local_n && srsize == remote_n, "split sizes %d/%d, expected %d/%d", ssize, srsize, local_n, remote_n);
        CHECK(srank == local_n - 1 - rank / 2, "split rank %d", srank);
        int v = rank, sum = -1;
        CALL(MPI_Allreduce(&v, &sum, 1, MPI_INT, MPI_SUM, split));
        int want = 0;
        for (int r = rank % 2; r < rsize; r += 2)
            want += r;
        CHECK(sum == want, "allreduce on the split: %d, expected %d", sum, want);
        CALL(MPI_Comm_free(&split));
    }

    /* Create: each side keeps its rank 0 only (a side of one keeps itself). */
    MPI_Group lg, first;
    int zero = 0;
    CALL(MPI_Comm_group(inter, &lg));
    CALL(MPI_Group_incl(lg, 1, &zero, &first));
    CALL(MPI_Comm_create(inter, first, &created));
    if (rank == 0) {
        int csize, crsize;
        CHECK(created != MPI_COMM_NULL, "create gave MPI_COMM_NULL to a member");
        CALL(MPI_Comm_size(created, &csize));
        CALL(MPI_Comm_remote_size(created, &crsize));
        CHECK(csize == 1 && crsize == 1, "created sizes %d/%d", csize, crsize);
        int v = me, got = -1;
        CALL(MPI_Sendrecv(&v, 1, MPI_INT, 0, 3, &got, 1, MPI_INT, 0, 3, created, MPI_STATUS_IGNORE));
        CHECK(got == (in_a ? a : 0), "created comm got %d", got);
        char name[MPI_MAX_OBJECT_NAME];
        int len = -1;
        CALL(MPI_Comm_get_name(created, name, &len));
        CHECK(len == 0 && name[0] == 0, "a new communicator is named '%s'", name);
        CALL(MPI_Comm_set_name(created, "pair"));
        CALL(MPI_Comm_get_name(created, name, &len));
        CHECK(len == 4 && strcmp(name, "pair") == 0, "name '%s' (%d)", name, len);
        MPI_Comm again;
        CALL(MPI_Comm_dup(created, &again));
        CALL(MPI_Comm_get_name(again, name, &len));
        CHECK(len == 0, "a duplicate inherited the name '%s'", name);
        CALL(MPI_Comm_free(&again));
        CALL(MPI_Comm_free(&created));
    } else {
        CHECK(created == MPI_COMM_NULL, "create gave a communicator to a non-member");
    }
    MPI_Group_free(&lg);
    MPI_Group_free(&first);
    CALL(MPI_Comm_free(&dup));
}

int main(int argc, char **argv)
{
    TEST_INIT(&argc, &argv);
    b = np / 2;
    a = np - b;
    in_a = me < a;
    MPI_Comm local, inter;
    CALL(MPI_Comm_split(MPI_COMM_WORLD, in_a, me, &local));
    CALL(MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, in_a ? a : 0, 42, &inter));
    char name[MPI_MAX_OBJECT_NAME];
    int len = -1;
    CALL(MPI_Comm_get_name(MPI_COMM_WORLD, name, &len));
    CHECK(len == 14 && strcmp(name, "MPI_COMM_WORLD") == 0, "MPI_COMM_WORLD is named '%s'", name);
    check_queries(inter, local);
    check_p2p(inter);
    check_merge(inter, 0);
    check_merge(inter, 1);
    check_derived(inter);

    /* Interleaved halves (even and odd world ranks), leaders the last local ranks, over a
     * duplicate of MPI_COMM_WORLD as peer: world rank w is rank w / 2 on its side. */
    MPI_Comm peer, local2, inter2;
    int lsize, rsize, rank;
    CALL(MPI_Comm_dup(MPI_COMM_WORLD, &peer));
    CALL(MPI_Comm_split(peer, me % 2, me, &local2));
    CALL(MPI_Comm_size(local2, &lsize));
    int evens = (np + 1) / 2, odds = np / 2;
    int remote_leader = me % 2 ? 2 * (evens - 1) : 2 * odds - 1;
    CALL(MPI_Intercomm_create(local2, lsize - 1, peer, remote_leader, 0, &inter2));
    CALL(MPI_Comm_remote_size(inter2, &rsize));
    CALL(MPI_Comm_rank(inter2, &rank));
    CHECK(rank == me / 2 && rsize == (me % 2 ? evens : odds), "interleaved: rank %d remote size %d", rank, rsize);
    int x = me, got = -1;
    MPI_Request sreq;
    CALL(MPI_Isend(&x, 1, MPI_INT, rank % rsize, 1, inter2, &sreq));
    int senders = 0;
    for (int r = 0; r < rsize; r++)
        senders += (r % lsize == rank);
    for (int k = 0; k < senders; k++) {
        MPI_Status st;
        CALL(MPI_Recv(&got, 1, MPI_INT, MPI_ANY_SOURCE, 1, inter2, &st));
        /* The source is the sender's rank on its side: world rank 2 * source + parity. */
        CHECK(got == 2 * st.MPI_SOURCE + !(me % 2), "interleaved got %d from remote rank %d", got, st.MPI_SOURCE);
    }
    CALL(MPI_Wait(&sreq, MPI_STATUS_IGNORE));

    CALL(MPI_Comm_free(&inter2));
    CALL(MPI_Comm_free(&local2));
    CALL(MPI_Comm_free(&peer));
    CALL(MPI_Comm_free(&inter));
    CALL(MPI_Comm_free(&local));
    CALL(MPI_Finalize());
    finalized = 1;
    if (me == 0)
        printf("intercomm_basic: ok\n");
    return 0;
}

/* ranks: 1 2 3 4 5 8 */
/*
 * Communicators: Comm_dup, Comm_split (by colour, keys reversing the order,
 * equal keys falling back to the old order, MPI_UNDEFINED giving
 * MPI_COMM_NULL, a split of a split), Comm_compare (IDENT, CONGRUENT,
 * SIMILAR, UNEQUAL), Comm_free resetting the handle, many dup/free cycles.
 * Messages on different communicators never match each other, even with the
 * same source, tag and wildcards. MPI_Comm_get_parent gives MPI_COMM_NULL.
 */
#include <string.h>

#define TEST_NAME "comms"
#include "testutil.h"

static const char *cmp_name(int r)
{
    return r == MPI_IDENT ? "IDENT" : r == MPI_CONGRUENT ? "CONGRUENT" :
           r == MPI_SIMILAR ? "SIMILAR" : r == MPI_UNEQUAL ? "UNEQUAL" : "?";
}

static void expect_compare(MPI_Comm a, MPI_Comm b, int want, const char *what)
{
    int r = -1;
    CALL(MPI_Comm_compare(a, b, &r));
    CHECK(r == want, "Comm_compare(%s) = %s, expected %s", what, cmp_name(r), cmp_name(want));
}

/* Every rank sends its world rank to its right neighbour in `comm` and
 * checks that the left neighbour's world rank is `want_left`. */
static void ring_check(MPI_Comm comm, int want_left, const char *what)
{
    int r, n;
    CALL(MPI_Comm_rank(comm, &r));
    CALL(MPI_Comm_size(comm, &n));
    int right = (r + 1) % n, left = (r + n - 1) % n;
    int got = -1;
    MPI_Status st;
    CALL(MPI_Sendrecv(&me, 1, MPI_INT, right, 3, &got, 1, MPI_INT, left, 3, comm, &st));
    CHECK(got == want_left, "%s: left neighbour is world rank %d, expected %d", what, got,
          want_left);
    CHECK(st.MPI_SOURCE == left, "%s: status source %d is not the local rank %d", what,
          st.MPI_SOURCE, left);
}

static void dup_and_isolation(void)
{
    MPI_Comm dup;
    int r = -1, n = -1;
    CALL(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    CALL(MPI_Comm_rank(dup, &r));
    CALL(MPI_Comm_size(dup, &n));
    CHECK(r == me && n == np, "dup: rank %d size %d", r, n);
    expect_compare(MPI_COMM_WORLD, MPI_COMM_WORLD, MPI_IDENT, "world, world");
    expect_compare(dup, dup, MPI_IDENT, "dup, dup");
    expect_compare(MPI_COMM_WORLD, dup, MPI_CONGRUENT, "world, dup");
    expect_compare(MPI_COMM_WORLD, MPI_COMM_SELF, np == 1 ? MPI_CONGRUENT : MPI_UNEQUAL,
                   "world, self");

    /* Same source, same tag: first on dup, then on world. A wildcard receive
     * on world must take the world message although the dup one came first. */
    int right = (me + 1) % np, left = (me + np - 1) % np;
    char on_dup = 'D', on_world = 'W', got = 0;
    MPI_Request reqs[2];
    MPI_Status st;
    CALL(MPI_Isend(&on_dup, 1, MPI_CHAR, right, 0, dup, &reqs[0]));
    CALL(MPI_Isend(&on_world, 1, MPI_CHAR, right, 0, MPI_COMM_WORLD, &reqs[1]));
    CALL(MPI_Recv(&got, 1, MPI_CHAR, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
    CHECK(got == 'W', "receive on world got the message sent on the duplicate");
    CALL(MPI_Recv(&got, 1, MPI_CHAR, left, 0, dup, &st));
    CHECK(got == 'D', "receive on the duplicate got %c", got);
    CALL(MPI_Waitall(2, reqs, statuses_ignore()));

    /* A wildcard receive pre-posted on dup must not take a message that
     * arrives on world, although it was posted first. */
    MPI_Request rq;
    char pending = 0;
    CALL(MPI_Irecv(&pending, 1, MPI_CHAR, MPI_ANY_SOURCE, MPI_ANY_TAG, dup, &rq));
    CALL(MPI_Sendrecv(&on_world, 1, MPI_CHAR, right, 1, &got, 1, MPI_CHAR, left, 1,
                      MPI_COMM_WORLD, &st));
    CHECK(got == 'W' && st.MPI_TAG == 1, "Sendrecv on world got %c tag %d", got, st.MPI_TAG);
    int flag = 0;
    CALL(MPI_Test(&rq, &flag, &st));
    /* The only message that may complete it is the one sent on dup below
     * (the left neighbour may already have sent it). */
    CHECK(!flag || (pending == 'D' && st.MPI_TAG == 2),
          "a receive posted on the duplicate matched a message sent on world");
    CALL(MPI_Send(&on_dup, 1, MPI_CHAR, right, 2, dup));
    if (!flag)
        CALL(MPI_Wait(&rq, &st));
    CHECK(pending == 'D' && st.MPI_TAG == 2 && st.MPI_SOURCE == left,
          "pending receive on the duplicate got %c tag %d", pending, st.MPI_TAG);

    CALL(MPI_Comm_free(&dup));
    CHECK(dup == MPI_COMM_NULL, "Comm_free did not reset the handle");
}

static void split_parity_reversed(void)
{
    /* Colour by parity, key reversing the order within each colour. */
    MPI_Comm sub;
    int color = me % 2;
    CALL(MPI_Comm_split(MPI_COMM_WORLD, color, np - me, &sub));
    int members = (np - color + 1) / 2; /* ranks color, color+2, ... < np */
    int r = -1, n = -1;
    CALL(MPI_Comm_rank(sub, &r));
    CALL(MPI_Comm_size(sub, &n));
    CHECK(n == members, "parity split: size %d, expected %d", n, members);
    /* Members sorted by decreasing world rank. */
    int highest = color + 2 * (members - 1);
    CHECK(r == (highest - me) / 2, "parity split: rank %d, expected %d", r, (highest - me) / 2);
    /* Left neighbour in sub = the member with the next higher world rank
     * (wrapping to the lowest). */
    int want_left = me + 2 <= highest ? me + 2 : color;
    ring_check(sub, want_left, "parity split");
    expect_compare(MPI_COMM_WORLD, sub, np == 1 ? MPI_CONGRUENT : MPI_UNEQUAL, "world, parity");

    /* The same tag on world and sub between the same processes. */
    MPI_Comm dup;
    CALL(MPI_Comm_dup(sub, &dup));
    expect_compare(sub, dup, MPI_CONGRUENT, "sub, dup of sub");
    int v_sub = 100 + me, v_dup = 200 + me, got_a = -1, got_b = -1;
    int right = (r + 1) % n, left = (r + n - 1) % n;
    MPI_Request reqs[2];
    CALL(MPI_Isend(&v_sub, 1, MPI_INT, right, 9, sub, &reqs[0]));
    CALL(MPI_Isend(&v_dup, 1, MPI_INT, right, 9, dup, &reqs[1]));
    CALL(MPI_Recv(&got_b, 1, MPI_INT, left, 9, dup, MPI_STATUS_IGNORE));
    CALL(MPI_Recv(&got_a, 1, MPI_INT, left, 9, sub, MPI_STATUS_IGNORE));
    CHECK(got_a == 100 + want_left && got_b == 200 + want_left,
          "sub/dup of sub messages crossed: %d %d", got_a, got_b);
    CALL(MPI_Waitall(2, reqs, statuses_ignore()));

    /* Split of a split: halve the sub-communicator by local rank. */
    MPI_Comm subsub;
    CALL(MPI_Comm_split(sub, r < n / 2 ? 0 : 1, r, &subsub));
    int rr = -1, nn = -1;
    CALL(MPI_Comm_rank(subsub, &rr));
    CALL(MPI_Comm_size(subsub, &nn));
    int want_n = r < n / 2 ? n / 2 : n - n / 2;
    int want_r = r < n / 2 ? r : r - n / 2;
    CHECK(nn == want_n && rr == want_r, "split of split: rank %d size %d, expected %d %d", rr,
          nn, want_r, want_n);
    CALL(MPI_Barrier(subsub));

    CALL(MPI_Comm_free(&subsub));
    CALL(MPI_Comm_free(&dup));
    CALL(MPI_Comm_free(&sub));
}

static void split_all_reversed(void)
{
    MPI_Comm rev;
    CALL(MPI_Comm_split(MPI_COMM_WORLD, 7, -me, &rev));
    int r = -1, n = -1;
    CALL(MPI_Comm_rank(rev, &r));
    CALL(MPI_Comm_size(rev, &n));
    CHECK(n == np && r == np - 1 - me, "reversed split: rank %d size %d", r, n);
    expect_compare(MPI_COMM_WORLD, rev, np == 1 ? MPI_CONGRUENT : MPI_SIMILAR,
                   "world, reversed");
    ring_check(rev, (me + 1) % np, "reversed split");
    CALL(MPI_Comm_free(&rev));

    /* Equal keys keep the old order. */
    MPI_Comm same;
    CALL(MPI_Comm_split(MPI_COMM_WORLD, 0, 0, &same));
    CALL(MPI_Comm_rank(same, &r));
    CHECK(r == me, "equal-key split: rank %d", r);
    expect_compare(MPI_COMM_WORLD, same, MPI_CONGRUENT, "world, equal-key split");
    CALL(MPI_Comm_free(&same));
}

static void split_undefined(void)
{
    /* Ranks 2, 5, 8, ... stay out. */
    int out = me % 3 == 2;
    MPI_Comm c;
    CALL(MPI_Comm_split(MPI_COMM_WORLD, out ? MPI_UNDEFINED : 1, 0, &c));
    if (out) {
        CHECK(c == MPI_COMM_NULL, "MPI_UNDEFINED colour did not give MPI_COMM_NULL");
        return;
    }
    CHECK(c != MPI_COMM_NULL, "a member got MPI_COMM_NULL");
    int r = -1, n = -1;
    CALL(MPI_Comm_rank(c, &r));
    CALL(MPI_Comm_size(c, &n));
    int want_n = 0;
    for (int k = 0; k < np; k++)
        want_n += k % 3 != 2;
    int want_r = me - me / 3;
    CHECK(n == want_n && r == want_r, "undefined split: rank %d size %d, expected %d %d", r, n,
          want_r, want_n);
    int left_local = (r + n - 1) % n;
    /* World rank of the local rank q: q + q / 2 (skip every third). */
    ring_check(c, left_local + left_local / 2, "undefined split");
    CALL(MPI_Comm_free(&c));
}

/* Many dup/free cycles with traffic on each: context ids must be reusable
 * without messages leaking from one incarnation to the next. */
static void dup_free_cycles(void)
{
    int right = (me + 1) % np, left = (me + np - 1) % np;
    for (int k = 0; k < 50; k++) {
        MPI_Comm c;
        CALL(MPI_Comm_dup(MPI_COMM_WORLD, &c));
        int out = k * 1000 + me, in = -1;
        CALL(MPI_Sendrecv(&out, 1, MPI_INT, right, 0, &in, 1, MPI_INT, left, 0, c,
                          MPI_STATUS_IGNORE));
        CHECK(in == k * 1000 + left, "cycle %d received %d", k, in);
        CALL(MPI_Comm_free(&c));
    }
}

int main(int argc, char **argv)
{
    TEST_INIT(&argc, &argv);

    dup_and_isolation();
    CALL(MPI_Barrier(MPI_COMM_WORLD));
    split_parity_reversed();
    split_all_reversed();
    split_undefined();
    dup_free_cycles();

    /* A process started by the launcher, not spawned, has no parent. */
    MPI_Comm parent = MPI_COMM_WORLD;
    CALL(MPI_Comm_get_parent(&parent));
    CHECK(parent == MPI_COMM_NULL, "MPI_Comm_get_parent gave %#x, not MPI_COMM_NULL", (unsigned)parent);

    CALL(MPI_Barrier(MPI_COMM_WORLD));
    CALL(MPI_Finalize());
    return 0;
}

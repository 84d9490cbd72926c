/* ranks: 1 2 4 5 8 */
/*
 * Groups: Comm_group, Group_size/rank, translate_ranks (MPI_PROC_NULL kept,
 * non-members MPI_UNDEFINED), compare (IDENT, SIMILAR, UNEQUAL), union,
 * intersection and difference in the order the standard fixes (the first
 * group's order, then the second's), empty results equal to MPI_GROUP_EMPTY,
 * incl/excl, range_incl/range_excl with several triplets and negative
 * strides, Group_free resetting the handle. Then argument errors under
 * MPI_ERRORS_RETURN: MPI_GROUP_NULL -> MPI_ERR_GROUP, a rank out of range or
 * named twice -> MPI_ERR_RANK, a bad triplet or a negative count ->
 * MPI_ERR_ARG. Every rank makes the same calls: group calls are local.
 */
#include <string.h>

#define TEST_NAME "groups"
#include "testutil.h"

static MPI_Group world;

/* The world ranks of `g`'s members, in group order, into out[]; returns the size. */
static int members(MPI_Group g, int *out)
{
    int n = -1;
    CALL(MPI_Group_size(g, &n));
    int *r = xmalloc(sizeof(int) * (size_t)n);
    for (int i = 0; i < n; i++)
        r[i] = i;
    CALL(MPI_Group_translate_ranks(g, n, r, world, out));
    free(r);
    return n;
}

/* Checks that `g` holds exactly the world ranks want[0..n) in that order. */
static void expect_members(MPI_Group g, const int *want, int n, const char *what)
{
    int got[64];
    int m = members(g, got);
    CHECK(m == n, "%s: size %d, expected %d", what, m, n);
    for (int i = 0; i < n; i++)
        CHECK(got[i] == want[i], "%s: member %d is world rank %d, expected %d", what, i,
              got[i], want[i]);
    /* Group_rank agrees with the position of this process. */
    int pos = MPI_UNDEFINED, rank = -5;
    for (int i = 0; i < n; i++)
        if (want[i] == me)
            pos = i;
    CALL(MPI_Group_rank(g, &rank));
    CHECK(rank == pos, "%s: Group_rank %d, expected %d", what, rank, pos);
}

static void expect_compare(MPI_Group a, MPI_Group b, int want, const char *what)
{
    int r = -1;
    CALL(MPI_Group_compare(a, b, &r));
    CHECK(r == want, "Group_compare(%s) = %d, expected %d", what, r, want);
}

static void basics(void)
{
    int n = -1, r = -1;
    CALL(MPI_Group_size(world, &n));
    CALL(MPI_Group_rank(world, &r));
    CHECK(n == np && r == me, "world group: size %d rank %d", n, r);
    MPI_Group self, world2;
    CALL(MPI_Comm_group(MPI_COMM_SELF, &self));
    CALL(MPI_Group_size(self, &n));
    CALL(MPI_Group_rank(self, &r));
    CHECK(n == 1 && r == 0, "self group: size %d rank %d", n, r);
    CALL(MPI_Comm_group(MPI_COMM_WORLD, &world2));
    expect_compare(world, world2, MPI_IDENT, "world, world again");
    expect_compare(world, self, np == 1 ? MPI_IDENT : MPI_UNEQUAL, "world, self");
    CALL(MPI_Group_size(MPI_GROUP_EMPTY, &n));
    CALL(MPI_Group_rank(MPI_GROUP_EMPTY, &r));
    CHECK(n == 0 && r == MPI_UNDEFINED, "MPI_GROUP_EMPTY: size %d rank %d", n, r);
    CALL(MPI_Group_free(&self));
    CHECK(self == MPI_GROUP_NULL, "Group_free left the handle %#x", (unsigned)self);
    CALL(MPI_Group_free(&world2));
    CHECK(world2 == MPI_GROUP_NULL, "Group_free left the handle %#x", (unsigned)world2);
}

static void translate_and_compare(MPI_Group rev, MPI_Group evens)
{
    int in[66], out[66];
    for (int i = 0; i < np; i++)
        in[i] = i;
    in[np] = MPI_PROC_NULL;
    CALL(MPI_Group_translate_ranks(world, np + 1, in, rev, out));
    for (int i = 0; i < np; i++)
        CHECK(out[i] == np - 1 - i, "world rank %d is rank %d of the reversed group", i, out[i]);
    CHECK(out[np] == MPI_PROC_NULL, "MPI_PROC_NULL translated to %d", out[np]);
    CALL(MPI_Group_translate_ranks(world, np, in, evens, out));
    for (int i = 0; i < np; i++) {
        int want = i % 2 == 0 ? i / 2 : MPI_UNDEFINED;
        CHECK(out[i] == want, "world rank %d is %d in the evens, expected %d", i, out[i], want);
    }
    CALL(MPI_Group_translate_ranks(world, 0, in, evens, out));
    expect_compare(world, rev, np == 1 ? MPI_IDENT : MPI_SIMILAR, "world, reversed");
    expect_compare(world, evens, np == 1 ? MPI_IDENT : MPI_UNEQUAL, "world, evens");
    expect_compare(MPI_GROUP_EMPTY, MPI_GROUP_EMPTY, MPI_IDENT, "empty, empty");
    expect_compare(world, MPI_GROUP_EMPTY, MPI_UNEQUAL, "world, empty");
}

static void set_operations(MPI_Group rev, MPI_Group evens)
{
    int want[64], n = 0;
    MPI_Group g;

    /* union(evens, rev): the evens ascending, then the odds in rev's order (descending). */
    CALL(MPI_Group_union(evens, rev, &g));
    for (int i = 0; i < np; i += 2)
        want[n++] = i;
    for (int i = np - 1; i >= 0; i--)
        if (i % 2 == 1)
            want[n++] = i;
    expect_members(g, want, n, "union(evens, reversed)");
    CALL(MPI_Group_free(&g));

    /* union(rev, evens) = rev: the evens add nothing. */
    CALL(MPI_Group_union(rev, evens, &g));
    expect_compare(g, rev, MPI_IDENT, "union(reversed, evens), reversed");
    CALL(MPI_Group_free(&g));

    /* intersection(rev, evens): the evens in rev's order (descending). */
    CALL(MPI_Group_intersection(rev, evens, &g));
    n = 0;
    for (int i = np - 1; i >= 0; i--)
        if (i % 2 == 0)
            want[n++] = i;
    expect_members(g, want, n, "intersection(reversed, evens)");
    CALL(MPI_Group_free(&g));

    /* difference(rev, evens): the odds, descending. */
    CALL(MPI_Group_difference(rev, evens, &g));
    n = 0;
    for (int i = np - 1; i >= 0; i--)
        if (i % 2 == 1)
            want[n++] = i;
    expect_members(g, want, n, "difference(reversed, evens)");
    if (n == 0)
        CHECK(g == MPI_GROUP_EMPTY, "an empty difference is %#x, not MPI_GROUP_EMPTY", (unsigned)g);
    CALL(MPI_Group_free(&g));

    /* Empty results are MPI_GROUP_EMPTY. */
    CALL(MPI_Group_difference(world, rev, &g));
    CHECK(g == MPI_GROUP_EMPTY, "difference(world, reversed) is %#x", (unsigned)g);
    CALL(MPI_Group_intersection(evens, MPI_GROUP_EMPTY, &g));
    CHECK(g == MPI_GROUP_EMPTY, "intersection with the empty group is %#x", (unsigned)g);
    CALL(MPI_Group_union(MPI_GROUP_EMPTY, MPI_GROUP_EMPTY, &g));
    CHECK(g == MPI_GROUP_EMPTY, "union of empty groups is %#x", (unsigned)g);
    CALL(MPI_Group_incl(world, 0, want, &g));
    CHECK(g == MPI_GROUP_EMPTY, "incl of no rank is %#x", (unsigned)g);
    /* Freeing MPI_GROUP_EMPTY (what empty results are) only resets the handle. */
    CALL(MPI_Group_free(&g));
    CHECK(g == MPI_GROUP_NULL, "Group_free(MPI_GROUP_EMPTY) left %#x", (unsigned)g);
    int size = -1;
    CALL(MPI_Group_size(MPI_GROUP_EMPTY, &size));
    CHECK(size == 0, "MPI_GROUP_EMPTY has size %d after a free", size);
}

static void incl_excl_ranges(void)
{
    int want[64], n = 0, ranks[64];
    MPI_Group g;

    /* excl of rank 0 and the last: the middle in world order. */
    ranks[0] = np - 1;
    ranks[1] = 0;
    CALL(MPI_Group_excl(world, np > 1 ? 2 : 1, ranks, &g));
    for (int i = 1; i < np - 1; i++)
        want[n++] = i;
    expect_members(g, want, n, "excl(last, 0)");
    CALL(MPI_Group_free(&g));

    /* incl keeps the order given. */
    n = 0;
    for (int i = 0; i < np; i += 3)
        ranks[n] = i, want[n++] = i;
    for (int i = 0; i < n / 2; i++) {
        int t = ranks[i];
        ranks[i] = ranks[n - 1 - i], ranks[n - 1 - i] = t;
        want[i] = ranks[i], want[n - 1 - i] = ranks[n - 1 - i];
    }
    CALL(MPI_Group_incl(world, n, ranks, &g));
    expect_members(g, want, n, "incl(every third, descending)");
    CALL(MPI_Group_free(&g));

    /* Triplets: (last, 0, -2) then (first not yet named, ...) ascending by 2. */
    int tr[2][3] = { { np - 1, 0, -2 }, { 0, 0, 1 } };
    int ntr = 1;
    n = 0;
    for (int i = np - 1; i >= 0; i -= 2)
        want[n++] = i;
    if ((np - 1) % 2 == 1) { /* rank 0 not named yet: add it with a second triplet */
        ntr = 2;
        want[n++] = 0;
    }
    CALL(MPI_Group_range_incl(world, ntr, tr, &g));
    expect_members(g, want, n, "range_incl((last, 0, -2) [, (0, 0, 1)])");
    CALL(MPI_Group_free(&g));

    /* range_excl of the same: what is left, in world order. */
    CALL(MPI_Group_range_excl(world, ntr, tr, &g));
    int m = 0, left[64] = { 0 };
    for (int i = 0; i < np; i++) {
        int named = 0;
        for (int k = 0; k < n; k++)
            named |= want[k] == i;
        if (!named)
            left[m++] = i;
    }
    expect_members(g, left, m, "range_excl((last, 0, -2) [, (0, 0, 1)])");
    if (m == 0)
        CHECK(g == MPI_GROUP_EMPTY, "an empty range_excl is %#x", (unsigned)g);
    CALL(MPI_Group_free(&g));

    /* A stride past the last rank names the first only; a stride of 3 up. */
    int tr3[1][3] = { { 0, np - 1, 3 } };
    CALL(MPI_Group_range_incl(world, 1, tr3, &g));
    n = 0;
    for (int i = 0; i < np; i += 3)
        want[n++] = i;
    expect_members(g, want, n, "range_incl((0, last, 3))");
    CALL(MPI_Group_free(&g));
}

static void errors(void)
{
    CALL(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    CALL(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
    MPI_Group g = MPI_GROUP_NULL, null = MPI_GROUP_NULL;
    int x = 0, ranks[4] = { 0, 0, 0, 0 }, out[4];

    EXPECT(MPI_ERR_GROUP, MPI_Group_size(MPI_GROUP_NULL, &x));
    EXPECT(MPI_ERR_GROUP, MPI_Group_rank(MPI_GROUP_NULL, &x));
    EXPECT(MPI_ERR_GROUP, MPI_Group_free(&null));
    EXPECT(MPI_ERR_GROUP, MPI_Group_compare(MPI_GROUP_NULL, world, &x));
    EXPECT(MPI_ERR_GROUP, MPI_Group_union(world, MPI_GROUP_NULL, &g));
    EXPECT(MPI_ERR_GROUP, MPI_Group_incl(MPI_GROUP_NULL, 1, ranks, &g));
    EXPECT(MPI_ERR_COMM, MPI_Comm_group(MPI_COMM_NULL, &g));

    ranks[0] = np;
    EXPECT(MPI_ERR_RANK, MPI_Group_incl(world, 1, ranks, &g));
    EXPECT(MPI_ERR_RANK, MPI_Group_excl(world, 1, ranks, &g));
    EXPECT(MPI_ERR_RANK, MPI_Group_translate_ranks(world, 1, ranks, world, out));
    ranks[0] = -1;
    EXPECT(MPI_ERR_RANK, MPI_Group_incl(world, 1, ranks, &g));
    ranks[0] = 0;
#ifndef MPICH_DEVIATIONS
    /* MPICH 4.0 does not check that the ranks of Group_incl are distinct. */
    EXPECT(MPI_ERR_RANK, MPI_Group_incl(world, 2, ranks, &g));
#endif
    EXPECT(MPI_ERR_ARG, MPI_Group_incl(world, -1, ranks, &g));

    int past[1][3] = { { 0, np, 1 } }, zero[1][3] = { { 0, 0, 0 } };
    int away[1][3] = { { np - 1, 0, 1 } };
    EXPECT(MPI_ERR_ARG, MPI_Group_range_incl(world, 1, past, &g));
    EXPECT(MPI_ERR_ARG, MPI_Group_range_excl(world, 1, past, &g));
    EXPECT(MPI_ERR_ARG, MPI_Group_range_incl(world, 1, zero, &g));
    if (np > 1)
        EXPECT(MPI_ERR_ARG, MPI_Group_range_incl(world, 1, away, &g));
    CHECK(g == MPI_GROUP_NULL, "a failed call set the new group to %#x", (unsigned)g);

    /* The group functions still work. */
    CALL(MPI_Group_size(world, &x));
    CHECK(x == np, "world group size %d after the errors", x);
}

int main(int argc, char **argv)
{
    TEST_INIT(&argc, &argv);
    CHECK(np <= 64, "at most 64 ranks");
    CALL(MPI_Comm_group(MPI_COMM_WORLD, &world));
    basics();

    int ranks[64];
    for (int i = 0; i < np; i++)
        ranks[i] = np - 1 - i;
    MPI_Group rev, evens;
    CALL(MPI_Group_incl(world, np, ranks, &rev));
    int tr[1][3] = { { 0, np - 1, 2 } };
    CALL(MPI_Group_range_incl(world, 1, tr, &evens));

    translate_and_compare(rev, evens);
    set_operations(rev, evens);
    incl_excl_ranges();
    errors();

    CALL(MPI_Group_free(&rev));
    CALL(MPI_Group_free(&evens));
    CALL(MPI_Group_free(&world));
    CALL(MPI_Barrier(MPI_COMM_WORLD));
    CALL(MPI_Finalize());
    finalized = 1;
    return 0;
}

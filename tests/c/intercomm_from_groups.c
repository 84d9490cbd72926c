/* ranks: 2 3 4 5 8 */
/*
 * MPI_Intercomm_create_from_groups (MPI-4 7.6.2), with groups from a
 * session's mpi://WORLD before MPI_Init and from
 * MPI_Comm_group(MPI_COMM_WORLD) after it: the new
 * intercommunicator has the two groups in their order (local and remote
 * size, rank, remote group), carries messages to every remote rank, an
 * allreduce and a barrier, merges into one intracommunicator, and has the
 * error handler it was given. Two creations with different string tags
 * over the same groups make two separate intercommunicators, and so do two
 * over different groups, whose members reach them at different times. An
 * empty group makes MPI_COMM_NULL. Errors: MPI_GROUP_NULL, a process in
 * neither group or in both (MPI_ERR_GROUP), a leader out of range
 * (MPI_ERR_RANK), a NULL string tag (MPI_ERR_ARG), raised on the error
 * handler given; in Ferry also leaders that disagree on the groups.
 */
#include <string.h>

#define TEST_NAME "intercomm_from_groups"
#include "testutil.h"

static int handler_calls = 0, last_code = -1;

static void on_error(MPI_Comm *comm, int *code, ...)
{
    (void)comm;
    handler_calls++;
    last_code = *code;
}

static int error_class(int code)
{
    int cls = -1;
    CALL(MPI_Error_class(code, &cls));
    return cls;
}

/* The group of `wg` ranks first, first + 1, ..., first + n - 1, reversed when `reverse`. */
static MPI_Group range_group(MPI_Group wg, int first, int n, int reverse)
{
    int *ranks = xmalloc(sizeof(int) * (size_t)n);
    for (int i = 0; i < n; i++)
        ranks[i] = reverse ? first + n - 1 - i : first + i;
    MPI_Group g;
    CALL(MPI_Group_incl(wg, n, ranks, &g));
    free(ranks);
    return g;
}

/* The rank in `wg` of rank `r` of group `g`. */
static int world_of(MPI_Group g, int r, MPI_Group wg)
{
    int w = -1;
    CALL(MPI_Group_translate_ranks(g, 1, &r, wg, &w));
    return w;
}

/* Everything an intercommunicator `ic` made from local group `lg` and remote group `rg`
 * (groups of `wg`, in which this process is `wme`) must do; `second` says whether the
 * local group is the one MPI_Intercomm_merge puts second. */
static void check_intercomm(MPI_Comm ic, MPI_Group lg, MPI_Group rg, MPI_Group wg, int wme, int second)
{
    int flag = 0, size, rsize, lsize, gsize, rank, grank, res;
    CALL(MPI_Comm_test_inter(ic, &flag));
    CHECK(flag, "not an intercommunicator");
    CALL(MPI_Group_size(lg, &lsize));
    CALL(MPI_Group_size(rg, &gsize));
    CALL(MPI_Comm_size(ic, &size));
    CALL(MPI_Comm_remote_size(ic, &rsize));
    CHECK(size == lsize && rsize == gsize, "sizes %d/%d, groups %d/%d", size, rsize, lsize, gsize);
    CALL(MPI_Comm_rank(ic, &rank));
    CALL(MPI_Group_rank(lg, &grank));
    CHECK(rank == grank, "rank %d, rank in the local group %d", rank, grank);
    MPI_Group got;
    CALL(MPI_Comm_remote_group(ic, &got));
    CALL(MPI_Group_compare(got, rg, &res));
    CHECK(res == MPI_IDENT, "remote group compares %d", res);
    CALL(MPI_Group_free(&got));
    CALL(MPI_Comm_group(ic, &got));
    CALL(MPI_Group_compare(got, lg, &res));
    CHECK(res == MPI_IDENT, "local group compares %d", res);
    CALL(MPI_Group_free(&got));

    /* To and from every remote rank: each value says who sent it. */
    int mine = 1000 * rank + wme;
    int *vals = xmalloc(sizeof(int) * (size_t)rsize);
    MPI_Request *rq = xmalloc(sizeof(MPI_Request) * 2 * (size_t)rsize);
    for (int i = 0; i < rsize; i++) {
        vals[i] = -1;
        CALL(MPI_Irecv(&vals[i], 1, MPI_INT, i, 7, ic, &rq[i]));
        CALL(MPI_Isend(&mine, 1, MPI_INT, i, 7, ic, &rq[rsize + i]));
    }
    CALL(MPI_Waitall(2 * rsize, rq, statuses_ignore()));
    int remote_sum = 0, local_sum = 0;
    for (int i = 0; i < rsize; i++) {
        int w = world_of(rg, i, wg);
        CHECK(vals[i] == 1000 * i + w, "from remote rank %d: %d, expected %d", i, vals[i], 1000 * i + w);
        remote_sum += w;
    }
    for (int i = 0; i < lsize; i++)
        local_sum += world_of(lg, i, wg);
    free(vals);
    free(rq);

    /* On an intercommunicator each group gets the reduction of the other's values. */
    int sum = -1;
    CALL(MPI_Allreduce(&wme, &sum, 1, MPI_INT, MPI_SUM, ic));
    CHECK(sum == remote_sum, "allreduce %d, expected %d", sum, remote_sum);
    CALL(MPI_Barrier(ic));

    MPI_Comm merged;
    CALL(MPI_Intercomm_merge(ic, second, &merged));
    int msize, mrank;
    CALL(MPI_Comm_size(merged, &msize));
    CALL(MPI_Comm_rank(merged, &mrank));
    CHECK(msize == lsize + rsize, "merged size %d", msize);
    CHECK(mrank == (second ? rsize + rank : rank), "merged rank %d (rank %d, second %d)", mrank, rank, second);
    CALL(MPI_Allreduce(&wme, &sum, 1, MPI_INT, MPI_SUM, merged));
    CHECK(sum == remote_sum + local_sum, "merged allreduce %d, expected %d", sum, remote_sum + local_sum);
    CALL(MPI_Comm_free(&merged));
}

/* The two halves of `wg` (of size n, this process `wme`): A the first n / 2 ranks in
 * reverse order, B the rest; A's leader is its rank-0 member (world rank n / 2 - 1), B's
 * its last. */
struct halves {
    MPI_Group local, remote;
    int local_leader, remote_leader, in_b;
};

static struct halves halves(MPI_Group wg, int n, int wme)
{
    int h = n / 2;
    MPI_Group a = range_group(wg, 0, h, 1), b = range_group(wg, h, n - h, 0);
    struct halves s;
    s.in_b = wme >= h;
    s.local = s.in_b ? b : a;
    s.remote = s.in_b ? a : b;
    s.local_leader = s.in_b ? n - h - 1 : 0;
    s.remote_leader = s.in_b ? 0 : n - h - 1;
    return s;
}

static void free_halves(struct halves *s)
{
    CALL(MPI_Group_free(&s->local));
    CALL(MPI_Group_free(&s->remote));
}

static void world_model(void)
{
    MPI_Group wg;
    CALL(MPI_Comm_group(MPI_COMM_WORLD, &wg));
    struct halves s = halves(wg, np, me);

    MPI_Comm ic;
    CALL(MPI_Intercomm_create_from_groups(s.local, s.local_leader, s.remote, s.remote_leader, "org.ferry.halves",
                                          MPI_INFO_NULL, MPI_ERRORS_RETURN, &ic));
    MPI_Errhandler eh;
    CALL(MPI_Comm_get_errhandler(ic, &eh));
    CHECK(eh == MPI_ERRORS_RETURN, "the new intercommunicator's error handler is %#x", (unsigned)eh);
    check_intercomm(ic, s.local, s.remote, wg, me, s.in_b);

    /* The error handler given goes with the new intercommunicator. */
    MPI_Errhandler mine;
    CALL(MPI_Comm_create_errhandler(on_error, &mine));
    MPI_Comm ic2;
    CALL(MPI_Intercomm_create_from_groups(s.local, s.local_leader, s.remote, s.remote_leader, "org.ferry.halves.2",
                                          MPI_INFO_NULL, mine, &ic2));
    CALL(MPI_Comm_get_errhandler(ic2, &eh));
    CHECK(eh == mine, "the new intercommunicator's error handler is %#x, not %#x", (unsigned)eh, (unsigned)mine);
    int rsize, res;
    CALL(MPI_Comm_remote_size(ic2, &rsize));
    handler_calls = 0;
    int rc = MPI_Send(&rsize, 1, MPI_INT, rsize, 0, ic2);
    CHECK(handler_calls == 1 && error_class(rc) == MPI_ERR_RANK, "handler calls %d, class %d", handler_calls, error_class(rc));

    /* Same groups, another tag: another context. */
    CALL(MPI_Comm_compare(ic, ic2, &res));
    CHECK(res == MPI_CONGRUENT, "the two intercommunicators compare %d", res);
    int v[2] = { 10 + me, 20 + me }, w[2] = { -1, -1 };
    MPI_Request rq[4];
    CALL(MPI_Irecv(&w[1], 1, MPI_INT, 0, 3, ic2, &rq[0]));
    CALL(MPI_Irecv(&w[0], 1, MPI_INT, 0, 3, ic, &rq[1]));
    int rank;
    CALL(MPI_Comm_rank(ic, &rank));
    if (rank == 0)
        for (int i = 0; i < rsize; i++) {
            CALL(MPI_Isend(&v[0], 1, MPI_INT, i, 3, ic, &rq[2]));
            CALL(MPI_Isend(&v[1], 1, MPI_INT, i, 3, ic2, &rq[3]));
            CALL(MPI_Waitall(2, &rq[2], statuses_ignore()));
        }
    CALL(MPI_Waitall(2, rq, statuses_ignore()));
    int first = world_of(s.remote, 0, wg);
    CHECK(w[0] == 10 + first && w[1] == 20 + first, "got %d and %d from world rank %d", w[0], w[1], first);
    CALL(MPI_Comm_free(&ic2));
    CALL(MPI_Comm_free(&ic));

    /* Two creations over different groups: the halves, and even against odd ranks. The
     * members leave the first at different times, so one's messages may reach a process
     * still in the other. */
    MPI_Group even = MPI_GROUP_EMPTY, odd = MPI_GROUP_EMPTY;
    int ne = (np + 1) / 2, *evens = xmalloc(sizeof(int) * (size_t)ne), *odds = xmalloc(sizeof(int) * (size_t)ne);
    for (int i = 0; i < ne; i++) {
        evens[i] = 2 * i;
        odds[i] = 2 * i + 1;
    }
    CALL(MPI_Group_incl(wg, ne, evens, &even));
    CALL(MPI_Group_incl(wg, np / 2, odds, &odd));
    free(evens);
    free(odds);
    int is_odd = me % 2;
    MPI_Comm x, y;
    CALL(MPI_Intercomm_create_from_groups(s.local, s.local_leader, s.remote, s.remote_leader, "x", MPI_INFO_NULL,
                                          MPI_ERRORS_RETURN, &x));
    CALL(MPI_Intercomm_create_from_groups(is_odd ? odd : even, 0, is_odd ? even : odd, 0, "y", MPI_INFO_NULL,
                                          MPI_ERRORS_RETURN, &y));
    check_intercomm(y, is_odd ? odd : even, is_odd ? even : odd, wg, me, is_odd);
    check_intercomm(x, s.local, s.remote, wg, me, s.in_b);
    CALL(MPI_Comm_free(&x));
    CALL(MPI_Comm_free(&y));
    CALL(MPI_Group_free(&even));
    CALL(MPI_Group_free(&odd));

#ifdef FERRY_MPI_H
    /* With an empty group the call is local and makes no communicator (MPICH 4.0.2 crashes
     * on it). */
    ic = MPI_COMM_WORLD;
    CALL(MPI_Intercomm_create_from_groups(MPI_GROUP_EMPTY, 0, s.remote, 0, "empty", MPI_INFO_NULL, MPI_ERRORS_RETURN, &ic));
    CHECK(ic == MPI_COMM_NULL, "an empty local group made %#x", (unsigned)ic);
    ic = MPI_COMM_WORLD;
    CALL(MPI_Intercomm_create_from_groups(s.local, s.local_leader, MPI_GROUP_EMPTY, 0, "empty", MPI_INFO_NULL, MPI_ERRORS_RETURN, &ic));
    CHECK(ic == MPI_COMM_NULL, "an empty remote group made %#x", (unsigned)ic);
#endif

    /* Errors, each found by every caller without a message, so nobody waits. */
#ifndef FERRY_MPI_H
    /* MPICH 4.0.2 raises them on MPI_COMM_WORLD's handler, not on the one given. */
    CALL(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
#endif
    int lsize;
    CALL(MPI_Group_size(s.local, &lsize));
    EXPECT(MPI_ERR_GROUP, MPI_Intercomm_create_from_groups(MPI_GROUP_NULL, 0, s.remote, 0, "e", MPI_INFO_NULL, MPI_ERRORS_RETURN, &ic));
    EXPECT(MPI_ERR_GROUP, MPI_Intercomm_create_from_groups(s.local, 0, MPI_GROUP_NULL, 0, "e", MPI_INFO_NULL, MPI_ERRORS_RETURN, &ic));
#ifdef FERRY_MPI_H
    /* MPICH 4.0.2 checks none of the arguments below: it crashes (a NULL string tag) or
     * goes on. */
    EXPECT(MPI_ERR_ARG, MPI_Intercomm_create_from_groups(s.local, 0, s.remote, 0, NULL, MPI_INFO_NULL, MPI_ERRORS_RETURN, &ic));
    EXPECT(MPI_ERR_RANK, MPI_Intercomm_create_from_groups(s.local, lsize, s.remote, 0, "e", MPI_INFO_NULL, MPI_ERRORS_RETURN, &ic));
    EXPECT(MPI_ERR_RANK, MPI_Intercomm_create_from_groups(s.local, -1, s.remote, 0, "e", MPI_INFO_NULL, MPI_ERRORS_RETURN, &ic));
    /* In the remote group only; in both. */
    EXPECT(MPI_ERR_GROUP, MPI_Intercomm_create_from_groups(s.remote, 0, s.local, 0, "e", MPI_INFO_NULL, MPI_ERRORS_RETURN, &ic));
    EXPECT(MPI_ERR_GROUP, MPI_Intercomm_create_from_groups(wg, 0, s.local, 0, "e", MPI_INFO_NULL, MPI_ERRORS_RETURN, &ic));
    /* Every process leads a group of its own: each sees the remote leader out of range. */
    MPI_Group self_g = range_group(wg, me, 1, 0), partner_g = range_group(wg, (me + 1) % np, 1, 0);
    EXPECT(MPI_ERR_RANK, MPI_Intercomm_create_from_groups(self_g, 0, partner_g, 1, "e", MPI_INFO_NULL, MPI_ERRORS_RETURN, &ic));
    /* In neither group. */
    EXPECT(MPI_ERR_GROUP, MPI_Intercomm_create_from_groups(partner_g, 0, partner_g, 0, "e", MPI_INFO_NULL, MPI_ERRORS_RETURN, &ic));
    /* The error goes to the handler given. */
    handler_calls = 0;
    last_code = -1;
    rc = MPI_Intercomm_create_from_groups(s.local, 0, s.remote, 0, NULL, MPI_INFO_NULL, mine, &ic);
    CHECK(handler_calls == 1 && error_class(last_code) == MPI_ERR_ARG && error_class(rc) == MPI_ERR_ARG,
          "handler calls %d, code class %d, returned class %d", handler_calls, error_class(last_code), error_class(rc));

    /* Leaders that disagree on the groups: world rank 0 alone names {1} as the other side,
     * while 1 and 2 form a group of two. Both leaders see it; all three fail. MPI leaves
     * such a program undefined; Ferry says so. */
    if (np >= 3 && me <= 2) {
        MPI_Group zero = range_group(wg, 0, 1, 0), one = range_group(wg, 1, 1, 0), pair = range_group(wg, 1, 2, 0);
        if (me == 0)
            EXPECT(MPI_ERR_GROUP, MPI_Intercomm_create_from_groups(zero, 0, one, 0, "m", MPI_INFO_NULL, MPI_ERRORS_RETURN, &ic));
        else
            EXPECT(MPI_ERR_GROUP, MPI_Intercomm_create_from_groups(pair, 0, zero, 0, "m", MPI_INFO_NULL, MPI_ERRORS_RETURN, &ic));
        CALL(MPI_Group_free(&zero));
        CALL(MPI_Group_free(&one));
        CALL(MPI_Group_free(&pair));
    }
    CALL(MPI_Group_free(&self_g));
    CALL(MPI_Group_free(&partner_g));
#endif
    /* Freed last: Ferry counts no references, so the first free retires the handler. */
    CALL(MPI_Errhandler_free(&eh));
    CALL(MPI_Errhandler_free(&mine));
    free_halves(&s);
    CALL(MPI_Group_free(&wg));
}

/* The same from a session's process set, before MPI_Init: the sessions model alone. */
static void sessions_model(MPI_Session session)
{
    MPI_Group sw;
    CALL(MPI_Group_from_session_pset(session, "mpi://WORLD", &sw));
    CALL(MPI_Group_size(sw, &np));
    CALL(MPI_Group_rank(sw, &me));
    struct halves s = halves(sw, np, me);
    MPI_Comm ic;
    CALL(MPI_Intercomm_create_from_groups(s.local, s.local_leader, s.remote, s.remote_leader, "org.ferry.session",
                                          MPI_INFO_NULL, MPI_ERRORS_RETURN, &ic));
    check_intercomm(ic, s.local, s.remote, sw, me, s.in_b);
#ifdef FERRY_MPI_H
    /* An error on a session's groups goes to the handler given too. */
    EXPECT(MPI_ERR_RANK, MPI_Intercomm_create_from_groups(s.local, np, s.remote, 0, "e", MPI_INFO_NULL, MPI_ERRORS_RETURN, &ic));
#endif
    CALL(MPI_Comm_free(&ic));
    free_halves(&s);
    CALL(MPI_Group_free(&sw));
}

int main(int argc, char **argv)
{
    /* The session stays open through the world model: MPI_Init after the last session
     * ended could not start MPI again. */
    MPI_Session session;
#ifndef FERRY_MPI_H
    /* MPICH 4.0.2 crashes making an intercommunicator under sessions only: there the
     * sessions part runs beside the world model. */
    TEST_INIT(&argc, &argv);
#endif
    CALL(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &session));
    sessions_model(session);
#ifdef FERRY_MPI_H
    int flag = 1;
    CALL(MPI_Initialized(&flag));
    CHECK(!flag, "MPI_Initialized true under a session only");
    TEST_INIT(&argc, &argv);
#endif
    world_model();
    CALL(MPI_Finalize());
    CALL(MPI_Session_finalize(&session));
    return 0;
}

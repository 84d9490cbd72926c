/* ranks: 1 2 */
/*
 * Generalized requests: the query function runs at each completion that
 * reports a status (Request_get_status, Wait, Test, Waitall, Testany) and
 * its status reaches the caller; the free function runs once, after the
 * query, when a wait completes the request, or when both MPI_Request_free
 * and MPI_Grequest_complete have happened; the cancel function runs on
 * MPI_Cancel with the complete flag, and may call MPI_Grequest_complete
 * itself. Every rank works alone.
 */
#include <string.h>

#define TEST_NAME "grequest"
#include "testutil.h"

struct state {
    int queries, frees, cancels, last_complete, cancelled, elements;
    char log[32];
    MPI_Request *self;
};

static void note(struct state *s, char c)
{
    size_t n = strlen(s->log);
    if (n + 1 < sizeof s->log) {
        s->log[n] = c;
        s->log[n + 1] = 0;
    }
}

static int query_fn(void *extra, MPI_Status *st)
{
    struct state *s = extra;
    s->queries++;
    note(s, 'q');
    MPI_Status_set_elements(st, MPI_INT, s->elements);
    MPI_Status_set_cancelled(st, s->cancelled);
    st->MPI_SOURCE = 3;
    st->MPI_TAG = 11;
    return MPI_SUCCESS;
}

static int free_fn(void *extra)
{
    struct state *s = extra;
    s->frees++;
    note(s, 'f');
    return MPI_SUCCESS;
}

static int cancel_fn(void *extra, int complete)
{
    struct state *s = extra;
    s->cancels++;
    s->last_complete = complete;
    note(s, 'c');
    if (!complete) {
        s->cancelled = 1;
        return MPI_Grequest_complete(*s->self);
    }
    return MPI_SUCCESS;
}

static MPI_Request start(struct state *s, MPI_Request *r, int elements)
{
    memset(s, 0, sizeof *s);
    s->elements = elements;
    s->self = r;
    CALL(MPI_Grequest_start(query_fn, free_fn, cancel_fn, s, r));
    CHECK(*r != MPI_REQUEST_NULL, "Grequest_start gave MPI_REQUEST_NULL");
    return *r;
}

static void wait_after_complete(void)
{
    struct state s;
    MPI_Request r;
    MPI_Status st;
    int flag = -1, count = -1;
    start(&s, &r, 5);
    CALL(MPI_Test(&r, &flag, &st));
    CHECK(flag == 0 && s.queries == 0 && s.frees == 0, "Test of an incomplete request: flag %d, %s", flag, s.log);
    CALL(MPI_Request_get_status(r, &flag, &st));
    CHECK(flag == 0, "Request_get_status of an incomplete request gave flag %d", flag);
    CALL(MPI_Grequest_complete(r));
    CALL(MPI_Request_get_status(r, &flag, &st));
    CHECK(flag == 1 && r != MPI_REQUEST_NULL && strcmp(s.log, "q") == 0, "Request_get_status: flag %d log %s", flag, s.log);
    CALL(MPI_Get_count(&st, MPI_INT, &count));
    CHECK(count == 5 && st.MPI_SOURCE == 3 && st.MPI_TAG == 11, "get_status status: count %d source %d tag %d", count,
          st.MPI_SOURCE, st.MPI_TAG);
    memset(&st, 0, sizeof st);
    CALL(MPI_Wait(&r, &st));
    CHECK(r == MPI_REQUEST_NULL, "Wait did not reset the request");
    CHECK(strcmp(s.log, "qqf") == 0, "callbacks for get_status + Wait: %s, want qqf", s.log);
    CALL(MPI_Get_count(&st, MPI_INT, &count));
    CHECK(count == 5 && st.MPI_SOURCE == 3 && st.MPI_TAG == 11, "Wait status: count %d source %d tag %d", count, st.MPI_SOURCE,
          st.MPI_TAG);
    CALL(MPI_Test_cancelled(&st, &flag));
    CHECK(flag == 0, "Test_cancelled of a completed request gave %d", flag);
}

static void test_completes(void)
{
    struct state s;
    MPI_Request r;
    int flag = 0, count = -1;
    MPI_Status st;
    start(&s, &r, 9);
    CALL(MPI_Grequest_complete(r));
    CALL(MPI_Test(&r, &flag, &st));
    CHECK(flag == 1 && r == MPI_REQUEST_NULL && strcmp(s.log, "qf") == 0, "Test: flag %d log %s", flag, s.log);
    CALL(MPI_Get_elements(&st, MPI_INT, &count));
    CHECK(count == 9, "Test status: %d elements", count);
}

static void free_before_complete(void)
{
    struct state s;
    MPI_Request r;
    MPI_Request copy = start(&s, &r, 0);
    CALL(MPI_Request_free(&r));
    CHECK(r == MPI_REQUEST_NULL && s.frees <= 1 && s.queries == 0, "Request_free of an incomplete request: log %s", s.log);
    CALL(MPI_Grequest_complete(copy));
    /* Freed once both calls have happened (the standard: at the later one). */
    CHECK(strcmp(s.log, "f") == 0, "Grequest_complete after Request_free: log %s, want f", s.log);
}

static void free_after_complete(void)
{
    struct state s;
    MPI_Request r;
    start(&s, &r, 0);
    CALL(MPI_Grequest_complete(r));
    CHECK(s.frees == 0, "Grequest_complete freed a request not freed");
    CALL(MPI_Request_free(&r));
    CHECK(strcmp(s.log, "f") == 0, "Request_free of a complete request: log %s, want f", s.log);
}

static void cancels(void)
{
    struct state s;
    MPI_Request r;
    MPI_Status st;
    int flag = -1;
    /* Cancelled while incomplete: the cancel function completes it. */
    start(&s, &r, 1);
    CALL(MPI_Cancel(&r));
    CHECK(s.cancels == 1 && s.last_complete == 0, "cancel: %d calls, complete %d", s.cancels, s.last_complete);
    CALL(MPI_Wait(&r, &st));
    CHECK(strcmp(s.log, "cqf") == 0, "cancel + Wait: log %s, want cqf", s.log);
    CALL(MPI_Test_cancelled(&st, &flag));
    CHECK(flag == 1, "query set cancelled, Test_cancelled gave %d", flag);
    /* Cancelled once complete: the cancel function is told so. */
    start(&s, &r, 1);
    CALL(MPI_Grequest_complete(r));
    CALL(MPI_Cancel(&r));
    CHECK(s.cancels == 1 && s.last_complete == 1, "cancel after complete: %d calls, complete %d", s.cancels, s.last_complete);
    CALL(MPI_Wait(&r, &st));
    CALL(MPI_Test_cancelled(&st, &flag));
    CHECK(flag == 0 && strcmp(s.log, "cqf") == 0, "cancel after complete: cancelled %d log %s", flag, s.log);
}

static void many(void)
{
    struct state s[3];
    MPI_Request r[3];
    MPI_Status sts[3], st;
    int index = -1, flag = -1, count = -1;
    for (int i = 0; i < 3; i++)
        start(&s[i], &r[i], 10 + i);
    CALL(MPI_Grequest_complete(r[2]));
    CALL(MPI_Testany(3, r, &index, &flag, &st));
    CHECK(flag == 1 && index == 2 && r[2] == MPI_REQUEST_NULL, "Testany: flag %d index %d", flag, index);
    CALL(MPI_Get_count(&st, MPI_INT, &count));
    CHECK(count == 12 && strcmp(s[2].log, "qf") == 0 && s[0].queries == 0, "Testany: count %d log %s", count, s[2].log);
    CALL(MPI_Testall(3, r, &flag, sts));
    CHECK(flag == 0 && s[0].queries == 0 && s[1].queries == 0, "Testall with incomplete requests: flag %d", flag);
    CALL(MPI_Grequest_complete(r[0]));
    CALL(MPI_Grequest_complete(r[1]));
    CALL(MPI_Waitall(3, r, sts));
    for (int i = 0; i < 2; i++) {
        CALL(MPI_Get_count(&sts[i], MPI_INT, &count));
        CHECK(count == 10 + i && strcmp(s[i].log, "qf") == 0, "Waitall request %d: count %d log %s", i, count, s[i].log);
        CHECK(r[i] == MPI_REQUEST_NULL, "Waitall left request %d", i);
    }
}

static void errors(void)
{
    struct state s;
    MPI_Request r;
    int rc, class;
    CALL(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    start(&s, &r, 0);
    CALL(MPI_Grequest_complete(r));
    CALL(MPI_Wait(&r, MPI_STATUS_IGNORE));
    rc = MPI_Grequest_start(query_fn, free_fn, cancel_fn, &s, NULL);
    MPI_Error_class(rc, &class);
    CHECK(rc != MPI_SUCCESS, "Grequest_start with a NULL request succeeded");
    CALL(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
}

int main(int argc, char **argv)
{
    TEST_INIT(&argc, &argv);
    wait_after_complete();
    test_completes();
    free_before_complete();
    free_after_complete();
    cancels();
    many();
    errors();
    CALL(MPI_Finalize());
    finalized = 1;
    return 0;
}

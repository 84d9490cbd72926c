/* ranks: 1 2 4 */
/*
 * The event part of the tools interface (MPI-4): sources and event types
 * listed with their descriptions, under any MPI. Under Ferry also: its clock
 * source (ordered, nanoseconds, timestamps that grow); the event type
 * ferry_coll_begin in the one category, bound to communicators, with four
 * elements; a registration on a duplicate of MPI_COMM_WORLD with hints handed
 * back, whose callback is called once per collective begun on that
 * communicator only (blocking and non-blocking numbered apart), reads each
 * element and the whole record, the timestamp and the source, and may call
 * MPI; the instance is invalid once the callback has returned; the callback
 * of the least demanding safety level is the one called; a registration
 * freed inside its own callback gets its free callback only after that
 * callback returns; a freed registration gets no more events; and the error
 * codes of bad indices, names, handles, safety levels, a registration on no
 * communicator or on a freed one, and of calls after MPI_T_finalize. Last,
 * ferry_request_left: MPI_Finalize reports a receive still held and an
 * inactive persistent send never freed (in handle order), each with its
 * communicator, and not a receive the program freed.
 */
#include <string.h>

#define TEST_NAME "tools_events"
#include "testutil.h"

static int ferry;

#define TCALL(call) do { int t_ = (call); \
        if (t_ != MPI_SUCCESS) fail(__LINE__, "%s returned %d", #call, t_); } while (0)
#define TEXPECT(want, call) do { int t_ = (call); \
        if (t_ != (want)) fail(__LINE__, "%s returned %d, expected %d", #call, t_, (want)); } while (0)

/* Every source and event type, as a tool would list them. */
static void list(void)
{
    int n = -1;
    TCALL(MPI_T_source_get_num(&n));
    CHECK(n >= 0, "%d sources", n);
    for (int i = 0; i < n; i++) {
        char name[256], desc[1024];
        int name_len = sizeof name, desc_len = sizeof desc;
        MPI_T_source_order order;
        MPI_Count tps = 0, max = 0;
        MPI_Info info = MPI_INFO_NULL;
        TCALL(MPI_T_source_get_info(i, name, &name_len, desc, &desc_len, &order, &tps, &max, &info));
        if (info != MPI_INFO_NULL)
            CALL(MPI_Info_free(&info));
        if (me == 0)
            printf("source %d: %s, %lld ticks/s (%s)\n", i, name, (long long)tps, desc);
    }
    TCALL(MPI_T_event_get_num(&n));
    CHECK(n >= 0, "%d event types", n);
    for (int i = 0; i < n; i++) {
        char name[256], desc[2048];
        int name_len = sizeof name, desc_len = sizeof desc, verbosity, bind, num = 0;
        MPI_T_enum en;
        /* The number of elements alone first, then the arrays. */
        TCALL(MPI_T_event_get_info(i, name, &name_len, &verbosity, NULL, NULL, &num, &en, NULL, desc, &desc_len, &bind));
        CHECK(num >= 0, "event %d: %d elements", i, num);
        MPI_Datatype *types = xmalloc((num + 1) * sizeof *types);
        MPI_Aint *displs = xmalloc((num + 1) * sizeof *displs);
        TCALL(MPI_T_event_get_info(i, NULL, NULL, NULL, types, displs, &num, NULL, NULL, NULL, NULL, NULL));
        int idx = -1;
        TCALL(MPI_T_event_get_index(name, &idx));
        CHECK(idx == i, "event %s: index %d, listed at %d", name, idx, i);
        if (me == 0)
            printf("event %d: %s, %d elements (%s)\n", i, name, num, desc);
        free(types);
        free(displs);
    }
}

/* ---- What the callbacks saw -------------------------------------------------------------- */
struct seen {
    int calls;
    unsigned seq;
    int blocking, size, rank, world_rank, source;
    unsigned char record[16];
    MPI_Count stamp;
    MPI_T_event_instance instance;
    MPI_T_event_registration reg;
    MPI_T_cb_safety safety;
};
static struct seen seen;

static void on_coll_begin(MPI_T_event_instance ev, MPI_T_event_registration reg, MPI_T_cb_safety safety, void *user)
{
    CHECK(user == &seen, "user data %p, expected %p", user, (void *)&seen);
    seen.calls++;
    seen.instance = ev;
    seen.reg = reg;
    seen.safety = safety;
    TCALL(MPI_T_event_read(ev, 0, &seen.seq));
    TCALL(MPI_T_event_read(ev, 1, &seen.blocking));
    TCALL(MPI_T_event_read(ev, 2, &seen.size));
    TCALL(MPI_T_event_read(ev, 3, &seen.rank));
    TCALL(MPI_T_event_copy(ev, seen.record));
    TCALL(MPI_T_event_get_timestamp(ev, &seen.stamp));
    TCALL(MPI_T_event_get_source(ev, &seen.source));
    int x;
    TEXPECT(MPI_T_ERR_INVALID_INDEX, MPI_T_event_read(ev, 4, &x));
    TEXPECT(MPI_T_ERR_INVALID_INDEX, MPI_T_event_read(ev, -1, &x));
    /* The least demanding level's callback may call MPI. */
    TCALL(MPI_Comm_rank(MPI_COMM_WORLD, &seen.world_rank));
}

static int wrong_calls;
static void wrong_level(MPI_T_event_instance ev, MPI_T_event_registration reg, MPI_T_cb_safety safety, void *user)
{
    (void)ev, (void)reg, (void)safety, (void)user;
    wrong_calls++;
}

/* Freed inside its own callback: the free callback must wait for it to return. */
static int self_calls, self_returned, self_freed;
static void on_free(MPI_T_event_registration reg, MPI_T_cb_safety safety, void *user)
{
    (void)reg, (void)safety;
    CHECK(user == &self_freed, "free callback's user data %p", user);
    CHECK(self_returned == self_calls, "free callback ran before the event callback returned");
    self_freed++;
}
static void free_myself(MPI_T_event_instance ev, MPI_T_event_registration reg, MPI_T_cb_safety safety, void *user)
{
    (void)ev, (void)safety, (void)user;
    self_calls++;
    TCALL(MPI_T_event_handle_free(reg, &self_freed, on_free));
    CHECK(self_freed == 0, "free callback ran inside the event callback");
    self_returned++;
}

static void check_record(int line, unsigned seq, int blocking)
{
    if (seen.calls != 1)
        fail(line, "%d callback calls, expected 1", seen.calls);
    if (seen.seq != seq || seen.blocking != blocking || seen.size != np || seen.rank != me)
        fail(line, "elements seq %u blocking %d size %d rank %d, expected %u %d %d %d", seen.seq, seen.blocking, seen.size,
             seen.rank, seq, blocking, np, me);
    int want[4] = {(int)seq, blocking, np, me};
    if (memcmp(seen.record, want, sizeof want) != 0)
        fail(line, "MPI_T_event_copy's record differs from the elements read");
    if (seen.source != 0 || seen.world_rank != me || seen.safety != MPI_T_CB_REQUIRE_NONE)
        fail(line, "source %d, world rank %d, safety %d", seen.source, seen.world_rank, (int)seen.safety);
}

static int coll_begin_index(void)
{
    int idx = -1, num = 4, bind = 0, n = 0;
    TCALL(MPI_T_event_get_index("ferry_coll_begin", &idx));
    MPI_Datatype types[4];
    MPI_Aint displs[4];
    TCALL(MPI_T_event_get_info(idx, NULL, NULL, NULL, types, displs, &num, NULL, NULL, NULL, NULL, &bind));
    CHECK(num == 4 && bind == MPI_T_BIND_MPI_COMM, "ferry_coll_begin: %d elements, bind %d", num, bind);
    CHECK(types[0] == MPI_UNSIGNED && types[1] == MPI_INT && types[2] == MPI_INT && types[3] == MPI_INT, "element types");
    CHECK(displs[0] == 0 && displs[1] == 4 && displs[2] == 8 && displs[3] == 12, "displacements");
    /* Too little room: only what fits is written, the count is the whole. */
    num = 1;
    types[1] = MPI_DATATYPE_NULL;
    TCALL(MPI_T_event_get_info(idx, NULL, NULL, NULL, types, displs, &num, NULL, NULL, NULL, NULL, NULL));
    CHECK(num == 4 && types[1] == MPI_DATATYPE_NULL, "num %d after a room of 1", num);
    /* In the one category, like every event type. */
    int ncat = 0, nev = 0, events[4] = {-1, -1, -1, -1};
    TCALL(MPI_T_category_get_num(&ncat));
    TCALL(MPI_T_event_get_num(&n));
    TCALL(MPI_T_category_get_num_events(0, &nev));
    CHECK(nev == n, "category 0 holds %d event types of %d", nev, n);
    TCALL(MPI_T_category_get_events(0, 4, events));
    for (int i = 0; i < n && i < 4; i++)
        CHECK(events[i] == i, "category 0's event %d is %d", i, events[i]);
    TEXPECT(MPI_T_ERR_INVALID_INDEX, MPI_T_category_get_num_events(ncat, &nev));
    TEXPECT(MPI_T_ERR_INVALID_INDEX, MPI_T_category_get_events(-1, 4, events));
    return idx;
}

static void clock_source(void)
{
    char name[64];
    int name_len = sizeof name;
    MPI_T_source_order order = MPI_T_SOURCE_UNORDERED;
    MPI_Count tps = 0, max = 0, t0 = -1, t1 = -1;
    TCALL(MPI_T_source_get_info(0, name, &name_len, NULL, NULL, &order, &tps, &max, NULL));
    CHECK(strcmp(name, "ferry_monotonic_clock") == 0 && order == MPI_T_SOURCE_ORDERED && tps == 1000000000 && max > 0,
          "source 0: %s order %d tps %lld", name, (int)order, (long long)tps);
    TCALL(MPI_T_source_get_timestamp(0, &t0));
    pause_ms(2);
    TCALL(MPI_T_source_get_timestamp(0, &t1));
    CHECK(t0 >= 0 && t1 - t0 >= 1000000, "timestamps %lld then %lld, 2 ms apart", (long long)t0, (long long)t1);
    TEXPECT(MPI_T_ERR_INVALID_INDEX, MPI_T_source_get_timestamp(1, &t0));
    TEXPECT(MPI_T_ERR_INVALID_INDEX, MPI_T_source_get_info(-1, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL));
    TEXPECT(MPI_T_ERR_INVALID, MPI_T_source_get_timestamp(0, NULL));
}

static void events_on_a_communicator(int idx)
{
    MPI_Comm c;
    CALL(MPI_Comm_dup(MPI_COMM_WORLD, &c));
    MPI_Info info;
    CALL(MPI_Info_create(&info));
    CALL(MPI_Info_set(info, "tool", "tools_events"));
    MPI_T_event_registration reg;
    TCALL(MPI_T_event_handle_alloc(idx, &c, info, &reg));
    CALL(MPI_Info_free(&info));

    /* Hints handed back, merged by set_info. */
    CALL(MPI_Info_create(&info));
    CALL(MPI_Info_set(info, "more", "yes"));
    TCALL(MPI_T_event_handle_set_info(reg, info));
    CALL(MPI_Info_free(&info));
    MPI_Info used;
    char v[64];
    int flag = 0, nkeys = 0;
    TCALL(MPI_T_event_handle_get_info(reg, &used));
    CALL(MPI_Info_get_nkeys(used, &nkeys));
    CALL(MPI_Info_get(used, "tool", sizeof v - 1, v, &flag));
    CHECK(nkeys == 2 && flag && strcmp(v, "tools_events") == 0, "handle hints: %d keys, tool=%s", nkeys, flag ? v : "(none)");
    CALL(MPI_Info_free(&used));

    /* Registered but no callback yet: nothing is called, nothing breaks. */
    CALL(MPI_Barrier(c));
    TCALL(MPI_T_event_register_callback(reg, MPI_T_CB_REQUIRE_THREAD_SAFE, MPI_INFO_NULL, NULL, wrong_level));
    CALL(MPI_Info_create(&info));
    CALL(MPI_Info_set(info, "level", "none"));
    TCALL(MPI_T_event_register_callback(reg, MPI_T_CB_REQUIRE_NONE, info, &seen, on_coll_begin));
    CALL(MPI_Info_free(&info));
    TCALL(MPI_T_event_callback_get_info(reg, MPI_T_CB_REQUIRE_NONE, &used));
    CALL(MPI_Info_get(used, "level", sizeof v - 1, v, &flag));
    CHECK(flag && strcmp(v, "none") == 0, "callback hint level=%s", flag ? v : "(none)");
    CALL(MPI_Info_free(&used));
    TCALL(MPI_T_event_callback_set_info(reg, MPI_T_CB_REQUIRE_THREAD_SAFE, MPI_INFO_NULL));
    TEXPECT(MPI_T_ERR_INVALID, MPI_T_event_callback_get_info(reg, MPI_T_CB_REQUIRE_ASYNC_SIGNAL_SAFE, &used));
    TEXPECT(MPI_T_ERR_INVALID, MPI_T_event_callback_set_info(reg, MPI_T_CB_REQUIRE_MPI_RESTRICTED, MPI_INFO_NULL));
    TEXPECT(MPI_T_ERR_INVALID, MPI_T_event_register_callback(reg, (MPI_T_cb_safety)7, MPI_INFO_NULL, NULL, wrong_level));
    TCALL(MPI_T_event_set_dropped_handler(reg, NULL));

    /* The second blocking call on c (the first had no callback). */
    MPI_Count before, after;
    TCALL(MPI_T_source_get_timestamp(0, &before));
    memset(&seen, 0, sizeof seen);
    CALL(MPI_Barrier(c));
    TCALL(MPI_T_source_get_timestamp(0, &after));
    check_record(__LINE__, 1, 1);
    CHECK(seen.reg == reg, "callback's registration %p, expected %p", (void *)seen.reg, (void *)reg);
    CHECK(before <= seen.stamp && seen.stamp <= after, "event stamp %lld outside [%lld, %lld]", (long long)seen.stamp,
          (long long)before, (long long)after);
    /* The instance lived only during the callback. */
    int x;
    MPI_Count ts;
    TEXPECT(MPI_T_ERR_INVALID_HANDLE, MPI_T_event_read(seen.instance, 0, &x));
    TEXPECT(MPI_T_ERR_INVALID_HANDLE, MPI_T_event_copy(seen.instance, seen.record));
    TEXPECT(MPI_T_ERR_INVALID_HANDLE, MPI_T_event_get_timestamp(seen.instance, &ts));
    TEXPECT(MPI_T_ERR_INVALID_HANDLE, MPI_T_event_get_source(seen.instance, &x));

    /* Non-blocking calls are numbered apart. */
    MPI_Request r;
    memset(&seen, 0, sizeof seen);
    CALL(MPI_Ibarrier(c, &r));
    check_record(__LINE__, 0, 0);
    CALL(MPI_Wait(&r, MPI_STATUS_IGNORE));
    memset(&seen, 0, sizeof seen);
    int one = 1, sum = 0;
    CALL(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, c));
    check_record(__LINE__, 2, 1);
    /* Another communicator's collectives are not this registration's. */
    memset(&seen, 0, sizeof seen);
    CALL(MPI_Barrier(MPI_COMM_WORLD));
    CHECK(seen.calls == 0, "%d calls for MPI_COMM_WORLD's barrier", seen.calls);
    CHECK(wrong_calls == 0, "the THREAD_SAFE callback was called %d times", wrong_calls);

    /* Without the NONE callback, the next level's is called. */
    TCALL(MPI_T_event_register_callback(reg, MPI_T_CB_REQUIRE_NONE, MPI_INFO_NULL, NULL, NULL));
    CALL(MPI_Barrier(c));
    CHECK(wrong_calls == 1 && seen.calls == 0, "after NULL at NONE: %d, %d calls", wrong_calls, seen.calls);

    /* A second registration that frees itself in its callback. */
    MPI_T_event_registration selfish;
    TCALL(MPI_T_event_handle_alloc(idx, &c, MPI_INFO_NULL, &selfish));
    TCALL(MPI_T_event_register_callback(selfish, MPI_T_CB_REQUIRE_MPI_RESTRICTED, MPI_INFO_NULL, NULL, free_myself));
    CALL(MPI_Barrier(c));
    CHECK(self_calls == 1 && self_returned == 1 && self_freed == 1, "self-free: %d calls, %d returns, %d frees", self_calls,
          self_returned, self_freed);
    CHECK(wrong_calls == 2, "the first registration saw %d events", wrong_calls);
    CALL(MPI_Barrier(c));
    CHECK(self_calls == 1 && wrong_calls == 3, "after the self-free: %d, %d calls", self_calls, wrong_calls);
    TEXPECT(MPI_T_ERR_INVALID_HANDLE, MPI_T_event_handle_free(selfish, NULL, NULL));

    /* Free: the free callback runs at once (no event is being delivered). */
    int before_free = self_freed;
    self_returned = self_calls;
    TCALL(MPI_T_event_handle_free(reg, &self_freed, on_free));
    CHECK(self_freed == before_free + 1, "free callback not called");
    CALL(MPI_Barrier(c));
    CHECK(wrong_calls == 3, "a freed registration got an event");
    TEXPECT(MPI_T_ERR_INVALID_HANDLE, MPI_T_event_register_callback(reg, MPI_T_CB_REQUIRE_NONE, MPI_INFO_NULL, NULL, wrong_level));
    TEXPECT(MPI_T_ERR_INVALID_HANDLE, MPI_T_event_handle_get_info(reg, &used));
    TEXPECT(MPI_T_ERR_INVALID_HANDLE, MPI_T_event_handle_set_info(reg, MPI_INFO_NULL));
    TEXPECT(MPI_T_ERR_INVALID_HANDLE, MPI_T_event_set_dropped_handler(reg, NULL));
    TEXPECT(MPI_T_ERR_INVALID_HANDLE, MPI_T_event_handle_free(reg, NULL, NULL));

    /* Registrations on no communicator, a freed one, or of no event type. */
    MPI_Comm gone = c;
    CALL(MPI_Comm_free(&c));
    TEXPECT(MPI_T_ERR_INVALID_HANDLE, MPI_T_event_handle_alloc(idx, &gone, MPI_INFO_NULL, &reg));
    TEXPECT(MPI_T_ERR_INVALID_HANDLE, MPI_T_event_handle_alloc(idx, NULL, MPI_INFO_NULL, &reg));
    MPI_Comm world = MPI_COMM_WORLD;
    TEXPECT(MPI_T_ERR_INVALID_INDEX, MPI_T_event_handle_alloc(-1, &world, MPI_INFO_NULL, &reg));
    TEXPECT(MPI_T_ERR_INVALID, MPI_T_event_handle_alloc(idx, &world, MPI_INFO_NULL, NULL));
}

/* ---- Requests left at MPI_Finalize -------------------------------------------------------- */
static int left_n, left_h[8], left_c[8];
static void on_left(MPI_T_event_instance ev, MPI_T_event_registration reg, MPI_T_cb_safety safety, void *user)
{
    (void)reg, (void)safety, (void)user;
    if (left_n < 8) {
        TCALL(MPI_T_event_read(ev, 0, &left_h[left_n]));
        TCALL(MPI_T_event_read(ev, 1, &left_c[left_n]));
    }
    left_n++;
}

/* Leave requests behind and finalize MPI; the registration stays for the caller. */
static MPI_T_event_registration finalize_leaving_requests(void)
{
    int idx = -1, bind = 0, num = 0;
    TCALL(MPI_T_event_get_index("ferry_request_left", &idx));
    TCALL(MPI_T_event_get_info(idx, NULL, NULL, NULL, NULL, NULL, &num, NULL, NULL, NULL, NULL, &bind));
    CHECK(num == 2 && bind == MPI_T_BIND_NO_OBJECT, "ferry_request_left: %d elements, bind %d", num, bind);
    MPI_Comm d;
    CALL(MPI_Comm_dup(MPI_COMM_WORLD, &d));
    static int b1, b2, b3;
    MPI_Request held, freed, inactive;
    CALL(MPI_Irecv(&b1, 1, MPI_INT, me, 999, d, &held));
    CALL(MPI_Irecv(&b2, 1, MPI_INT, me, 998, d, &freed));
    CALL(MPI_Request_free(&freed));
    CALL(MPI_Send_init(&b3, 1, MPI_INT, me, 997, d, &inactive));
    MPI_T_event_registration reg;
    TCALL(MPI_T_event_handle_alloc(idx, NULL, MPI_INFO_NULL, &reg));
    TCALL(MPI_T_event_register_callback(reg, MPI_T_CB_REQUIRE_NONE, MPI_INFO_NULL, NULL, on_left));
    CALL(MPI_Barrier(MPI_COMM_WORLD));
    CHECK(left_n == 0, "%d requests reported before MPI_Finalize", left_n);
    CALL(MPI_Finalize());
    finalized = 1;
    MPI_Request first = held < inactive ? held : inactive, second = held < inactive ? inactive : held;
    CHECK(left_n == 2, "%d requests reported at MPI_Finalize, expected 2", left_n);
    CHECK(left_h[0] == first && left_h[1] == second, "requests %#x %#x, expected %#x %#x", left_h[0], left_h[1], first, second);
    CHECK(left_c[0] == d && left_c[1] == d, "communicators %#x %#x, expected %#x", left_c[0], left_c[1], d);
    return reg;
}

int main(int argc, char **argv)
{
    char version[MPI_MAX_LIBRARY_VERSION_STRING];
    int vlen, provided = -1, n;
    MPI_Get_library_version(version, &vlen);
    ferry = strstr(version, "Ferry") != NULL;
    TEXPECT(MPI_T_ERR_NOT_INITIALIZED, MPI_T_event_get_num(&n));
    TEXPECT(MPI_T_ERR_NOT_INITIALIZED, MPI_T_source_get_num(&n));
    TCALL(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided));
    int idx = -1;
    if (ferry) {
        idx = coll_begin_index();
        /* Before MPI_Init no communicator exists to bind to. */
        MPI_Comm world = MPI_COMM_WORLD;
        MPI_T_event_registration reg;
        TEXPECT(MPI_T_ERR_INVALID_HANDLE, MPI_T_event_handle_alloc(idx, &world, MPI_INFO_NULL, &reg));
    }
    TEST_INIT(&argc, &argv);
    list();
    if (ferry) {
        clock_source();
        TEXPECT(MPI_T_ERR_INVALID_NAME, MPI_T_event_get_index("no_such_event", &n));
        TEXPECT(MPI_T_ERR_INVALID_NAME, MPI_T_event_get_index(NULL, &n));
        TEXPECT(MPI_T_ERR_INVALID_INDEX, MPI_T_event_get_info(99, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL));
        TEXPECT(MPI_T_ERR_INVALID_HANDLE, MPI_T_event_handle_free(NULL, NULL, NULL));
        TEXPECT(MPI_T_ERR_INVALID_HANDLE, MPI_T_event_read((MPI_T_event_instance)&n, 0, &n));
        events_on_a_communicator(idx);
        MPI_T_event_registration reg = finalize_leaving_requests();
        /* The interface outlives MPI. */
        TCALL(MPI_T_event_handle_free(reg, NULL, NULL));
    } else {
        CALL(MPI_Barrier(MPI_COMM_WORLD));
        CALL(MPI_Finalize());
        finalized = 1;
    }
    TCALL(MPI_T_finalize());
    TEXPECT(MPI_T_ERR_NOT_INITIALIZED, MPI_T_event_get_num(&n));
    TEXPECT(MPI_T_ERR_NOT_INITIALIZED, MPI_T_category_get_num_events(0, &n));
    TEXPECT(MPI_T_ERR_NOT_INITIALIZED, MPI_T_source_get_timestamp(0, NULL));
    if (me == 0)
        printf("tools_events: ok\n");
    return 0;
}

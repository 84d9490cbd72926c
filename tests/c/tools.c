/* ranks: 1 2 */
/* env: FERRY_EAGER_LIMIT=12345 MPIR_CVAR_BCAST_SHORT_MSG_SIZE=4321 FERRY_COLL_STATS=1 */
/* expect: pass stderr="coll-stats: bcast bcast.pipelined_chain" */
/*
 * The tools information interface: initialised before MPI_Init (and twice,
 * so one MPI_T_finalize leaves it usable), every control variable listed
 * with its name and description, one set in the environment read back
 * (Ferry: the string FERRY_EAGER_LIMIT; MPICH: the int
 * MPIR_CVAR_BCAST_SHORT_MSG_SIZE), the categories, a pvar session, and the
 * error codes of a bad index, name and handle and of calls after the last
 * MPI_T_finalize. Under Ferry also: a fixed knob refuses writes
 * (MPI_T_ERR_CVAR_SET_NEVER), FERRY_BCAST_ALGORITHM written after MPI_Init
 * reads back and picks the broadcast that runs (the statistics show it), a
 * bad algorithm is MPI_T_ERR_INVALID, and the performance variables
 * ferry_coll_calls (counting two collectives on a communicator) and
 * ferry_requests_active (two requests more, then none) read what they should;
 * they cannot be started, written or reset.
 */
#include <string.h>

#define TEST_NAME "tools"
#include "testutil.h"

static int ferry;

#define TCALL(call) do { int t_ = (call); \
        if (t_ != MPI_SUCCESS) fail(__LINE__, "%s returned %d", #call, t_); } while (0)
#define TEXPECT(want, call) do { int t_ = (call); \
        if (t_ != (want)) fail(__LINE__, "%s returned %d, expected %d", #call, t_, (want)); } while (0)

static void list_cvars(void)
{
    int n = 0;
    TCALL(MPI_T_cvar_get_num(&n));
    CHECK(n > 0, "%d control variables", n);
    for (int i = 0; i < n; i++) {
        char name[256], desc[1024];
        int name_len = sizeof name, desc_len = sizeof desc, verbosity, bind, scope;
        MPI_Datatype dt;
        MPI_T_enum en;
        TCALL(MPI_T_cvar_get_info(i, name, &name_len, &verbosity, &dt, &en, desc, &desc_len, &bind, &scope));
        CHECK(name_len > 1 && (int)strlen(name) == name_len - 1, "cvar %d: name length %d", i, name_len);
        int idx = -1;
        TCALL(MPI_T_cvar_get_index(name, &idx));
        CHECK(idx == i, "cvar %s: index %d, listed at %d", name, idx, i);
        if (ferry && me == 0 && i < 3)
            printf("cvar %d: %s (%s)\n", i, name, desc);
    }
    /* The length alone: a NULL buffer asks for it. */
    int len = 0;
    TCALL(MPI_T_cvar_get_info(0, NULL, &len, NULL, NULL, NULL, NULL, NULL, NULL, NULL));
    CHECK(len > 1, "length of cvar 0's name: %d", len);
    TEXPECT(MPI_T_ERR_INVALID_INDEX, MPI_T_cvar_get_info(n, NULL, &len, NULL, NULL, NULL, NULL, NULL, NULL, NULL));
    int idx;
    TEXPECT(MPI_T_ERR_INVALID_NAME, MPI_T_cvar_get_index("NO_SUCH_VARIABLE", &idx));
}

/* Read the variable the environment sets (the env: line above; the abi: case runs without
 * it, and then Ferry's reads the default). */
static void read_from_environment(void)
{
    const char *name = ferry ? "FERRY_EAGER_LIMIT" : "MPIR_CVAR_BCAST_SHORT_MSG_SIZE";
    const char *set = getenv(name);
    const char *want = set && *set ? set : ferry ? "262144" : NULL;
    int idx = -1, count = 0;
    TCALL(MPI_T_cvar_get_index(name, &idx));
    MPI_Datatype dt;
    TCALL(MPI_T_cvar_get_info(idx, NULL, NULL, NULL, &dt, NULL, NULL, NULL, NULL, NULL));
    MPI_T_cvar_handle h;
    TCALL(MPI_T_cvar_handle_alloc(idx, NULL, &h, &count));
    CHECK(count >= 1, "count %d", count);
    if (dt == MPI_CHAR) {
        char *v = xmalloc((size_t)count);
        TCALL(MPI_T_cvar_read(h, v));
        CHECK(strcmp(v, want) == 0, "%s reads \"%s\", expected \"%s\"", name, v, want);
        free(v);
    } else {
        CHECK(dt == MPI_INT && count == 1, "%s: datatype %d count %d", name, (int)dt, count);
        int v = 0;
        TCALL(MPI_T_cvar_read(h, &v));
        CHECK(!want || v == atoi(want), "%s reads %d, expected %s", name, v, want);
    }
    TCALL(MPI_T_cvar_handle_free(&h));
    CHECK(h == MPI_T_CVAR_HANDLE_NULL, "handle_free leaves a handle");
}

/* Ferry's performance variables: collective calls on a communicator, requests held. */
static void ferry_pvars(MPI_T_pvar_session s, int n)
{
    CHECK(n == 2, "Ferry has %d performance variables", n);
    int coll = -1, reqs = -1, count = 0, cls, bind, ro, cont;
    MPI_Datatype dt;
    TCALL(MPI_T_pvar_get_index("ferry_coll_calls", MPI_T_PVAR_CLASS_COUNTER, &coll));
    TCALL(MPI_T_pvar_get_index("ferry_requests_active", MPI_T_PVAR_CLASS_LEVEL, &reqs));
    TEXPECT(MPI_T_ERR_INVALID_NAME, MPI_T_pvar_get_index("ferry_coll_calls", MPI_T_PVAR_CLASS_LEVEL, &coll));
    TCALL(MPI_T_pvar_get_info(coll, NULL, NULL, NULL, &cls, &dt, NULL, NULL, NULL, &bind, &ro, &cont, NULL));
    CHECK(cls == MPI_T_PVAR_CLASS_COUNTER && dt == MPI_UNSIGNED && bind == MPI_T_BIND_MPI_COMM && ro && cont,
          "ferry_coll_calls: class %d datatype %d bind %d", cls, (int)dt, bind);

    MPI_Comm c;
    CALL(MPI_Comm_dup(MPI_COMM_WORLD, &c));
    MPI_T_pvar_handle hc, hr;
    TCALL(MPI_T_pvar_handle_alloc(s, coll, &c, &hc, &count));
    CHECK(count == 1, "count %d", count);
    unsigned before = 99, after = 0;
    TCALL(MPI_T_pvar_read(s, hc, &before));
    CALL(MPI_Barrier(c));
    int x = 1, y;
    CALL(MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, c));
    TCALL(MPI_T_pvar_read(s, hc, &after));
    CHECK(after == before + 2, "ferry_coll_calls went from %u to %u over two collectives", before, after);
    TEXPECT(MPI_T_ERR_PVAR_NO_STARTSTOP, MPI_T_pvar_start(s, hc));
    TEXPECT(MPI_T_ERR_PVAR_NO_WRITE, MPI_T_pvar_write(s, hc, &after));
    TCALL(MPI_T_pvar_start(s, MPI_T_PVAR_ALL_HANDLES));
    TCALL(MPI_T_pvar_reset(s, MPI_T_PVAR_ALL_HANDLES));
    /* Bound to a communicator that is gone: the handle reads nothing. */
    CALL(MPI_Comm_free(&c));
    TEXPECT(MPI_T_ERR_INVALID_HANDLE, MPI_T_pvar_read(s, hc, &after));
    TCALL(MPI_T_pvar_handle_free(s, &hc));
    CHECK(hc == MPI_T_PVAR_HANDLE_NULL, "pvar handle_free leaves a handle");

    TCALL(MPI_T_pvar_handle_alloc(s, reqs, NULL, &hr, &count));
    unsigned long long held0 = 99, held1 = 0, held2 = 0;
    TCALL(MPI_T_pvar_read(s, hr, &held0));
    MPI_Request rq[2];
    int in = 0, out = me;
    CALL(MPI_Irecv(&in, 1, MPI_INT, 0, 5, MPI_COMM_SELF, &rq[0]));
    CALL(MPI_Send_init(&out, 1, MPI_INT, 0, 5, MPI_COMM_SELF, &rq[1]));
    TCALL(MPI_T_pvar_read(s, hr, &held1));
    CHECK(held1 == held0 + 2, "ferry_requests_active %llu, then %llu with two more", held0, held1);
    CALL(MPI_Start(&rq[1]));
    CALL(MPI_Waitall(2, rq, statuses_ignore()));
    CALL(MPI_Request_free(&rq[1]));
    TCALL(MPI_T_pvar_read(s, hr, &held2));
    CHECK(held2 == held0, "ferry_requests_active %llu after completing them, %llu before", held2, held0);
    /* Left for MPI_T_pvar_session_free to free. */
}

static void categories_and_pvars(void)
{
    int n = 0;
    TCALL(MPI_T_category_get_num(&n));
    CHECK(n >= 1, "%d categories", n);
    char name[128];
    int len = sizeof name, ncvars = -1, npvars = -1, ncats = -1;
    TCALL(MPI_T_category_get_info(0, name, &len, NULL, NULL, &ncvars, &npvars, &ncats));
    int idx = -1;
    TCALL(MPI_T_category_get_index(name, &idx));
    CHECK(idx == 0, "category %s at %d", name, idx);
    if (ncvars > 0) {
        int *cv = xmalloc(sizeof(int) * (size_t)ncvars);
        TCALL(MPI_T_category_get_cvars(0, ncvars, cv));
        free(cv);
    }
    TEXPECT(MPI_T_ERR_INVALID_INDEX, MPI_T_category_get_info(n, NULL, NULL, NULL, NULL, NULL, NULL, NULL));
    int stamp = -1;
    TCALL(MPI_T_category_changed(&stamp));

    MPI_T_pvar_session s;
    TCALL(MPI_T_pvar_session_create(&s));
    int np_ = -1;
    TCALL(MPI_T_pvar_get_num(&np_));
    if (ferry)
        ferry_pvars(s, np_);
    TCALL(MPI_T_pvar_session_free(&s));
    CHECK(s == MPI_T_PVAR_SESSION_NULL, "session_free leaves a session");
    TEXPECT(MPI_T_ERR_INVALID_SESSION, MPI_T_pvar_session_free(&s));
}

/* Ferry's writable knobs: the broadcast algorithm, chosen while the job runs. */
static void write_algorithm(void)
{
    int idx, count;
    MPI_T_cvar_handle h;
    TCALL(MPI_T_cvar_get_index("FERRY_EAGER_LIMIT", &idx));
    TCALL(MPI_T_cvar_handle_alloc(idx, NULL, &h, &count));
    char v[1024] = "1000";
    TEXPECT(MPI_T_ERR_CVAR_SET_NEVER, MPI_T_cvar_write(h, v));
    TCALL(MPI_T_cvar_handle_free(&h));
    TEXPECT(MPI_T_ERR_INVALID_HANDLE, MPI_T_cvar_read(h, v));

    TCALL(MPI_T_cvar_get_index("FERRY_BCAST_ALGORITHM", &idx));
    int scope;
    TCALL(MPI_T_cvar_get_info(idx, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, &scope));
    CHECK(scope == MPI_T_SCOPE_ALL_EQ, "scope of FERRY_BCAST_ALGORITHM: %d", scope);
    TCALL(MPI_T_cvar_handle_alloc(idx, NULL, &h, &count));
    char *val = xmalloc((size_t)count);
    memset(val, 0, (size_t)count);
    strcpy(val, "bcast.no_such_thing");
    TEXPECT(MPI_T_ERR_INVALID, MPI_T_cvar_write(h, val));
    strcpy(val, "bcast.pipelined_chain");
    TCALL(MPI_T_cvar_write(h, val));
    memset(val, 0, (size_t)count);
    TCALL(MPI_T_cvar_read(h, val));
    CHECK(strcmp(val, "bcast.pipelined_chain") == 0, "FERRY_BCAST_ALGORITHM reads \"%s\"", val);
    int x = me == 0 ? 99 : 0;
    CALL(MPI_Bcast(&x, 1, MPI_INT, 0, MPI_COMM_WORLD));
    CHECK(x == 99, "Bcast %d", x);
    /* Back to the decision table. */
    val[0] = 0;
    TCALL(MPI_T_cvar_write(h, val));
    TCALL(MPI_T_cvar_handle_free(&h));
    free(val);
}

int main(int argc, char **argv)
{
    char version[MPI_MAX_LIBRARY_VERSION_STRING];
    int vlen, provided = -1;
    MPI_Get_library_version(version, &vlen);
    ferry = strstr(version, "Ferry") != NULL;
    TEXPECT(MPI_T_ERR_NOT_INITIALIZED, MPI_T_cvar_get_num(&vlen));
    TCALL(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided));
    TCALL(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided));
    CHECK(provided >= MPI_THREAD_SINGLE, "provided %d", provided);
    read_from_environment();
    TEST_INIT(&argc, &argv);
    list_cvars();
    read_from_environment();
    categories_and_pvars();
    if (ferry)
        write_algorithm();
    TCALL(MPI_T_finalize());
    int n = 0;
    TCALL(MPI_T_cvar_get_num(&n));
    TCALL(MPI_T_finalize());
    TEXPECT(MPI_T_ERR_NOT_INITIALIZED, MPI_T_cvar_get_num(&n));
    CALL(MPI_Barrier(MPI_COMM_WORLD));
    if (me == 0)
        printf("tools: ok\n");
    CALL(MPI_Finalize());
    return 0;
}

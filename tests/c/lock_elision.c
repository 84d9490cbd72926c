/* ranks: 2 3 */
/* env: FERRY_LOCK_ELISION=1 */
/* env: FERRY_LOCK_ELISION=0 */
/*
 * Below MPI_THREAD_MULTIPLE the program makes one MPI call at a time, and
 * Ferry's calls skip the runtime's lock until something else can reach the
 * runtime; then they take it for good. Run with the lock skipped and kept:
 *  1. MPI_THREAD_SERIALIZED: two threads of each rank take turns (by the
 *     program's own mutex and condition variable) making the calls: ping-pongs
 *     with a partner and allreduces, every value checked, so each call sees
 *     what the other thread's calls left in the runtime.
 *  2. A second thread of rank 0 initialises the tool interface while the
 *     main thread is inside an MPI_Recv that rank 1 answers only 300 ms later,
 *     then reads a performance variable, which needs the runtime: the read must
 *     wait until the receive has ended, so the receive's buffer is filled when
 *     it returns. Then once more, the tool interface being up (the lock taken).
 *     Before its read, the thread asks MPI_Is_thread_main and MPI_Query_thread,
 *     which any thread may call at any time: they answer at once.
 *  3. Calls go on, with the lock: point to point and a collective, checked.
 * Other ranks join the collectives only.
 */
#define TEST_NAME "lock_elision"
#include "testutil.h"

#include <pthread.h>
#include <stdatomic.h>

#define TURNS 400

static pthread_mutex_t turn_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t turn_cv = PTHREAD_COND_INITIALIZER;
static int turn; /* the next step; thread t makes the steps with step % 2 == t */

static int partner(void)
{
    if (np % 2 == 1 && me == np - 1)
        return MPI_PROC_NULL;
    return me ^ 1;
}

/* One step of the serialized phase: a ping-pong with the partner, and every
 * eighth step an allreduce over all ranks. */
static void step(int s)
{
    int p = partner();
    int out = me * 100000 + s, in = -1;
    if (p != MPI_PROC_NULL) {
        if (me < p) {
            CALL(MPI_Send(&out, 1, MPI_INT, p, s, MPI_COMM_WORLD));
            CALL(MPI_Recv(&in, 1, MPI_INT, p, s, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        } else {
            CALL(MPI_Recv(&in, 1, MPI_INT, p, s, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            CALL(MPI_Send(&out, 1, MPI_INT, p, s, MPI_COMM_WORLD));
        }
        CHECK(in == p * 100000 + s, "step %d: got %d from %d", s, in, p);
    }
    if (s % 8 == 0) {
        int sum = 0;
        CALL(MPI_Allreduce(&s, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
        CHECK(sum == s * np, "step %d: allreduce %d", s, sum);
    }
}

static void *take_turns(void *arg)
{
    int t = (int)(long)arg;
    for (;;) {
        pthread_mutex_lock(&turn_mu);
        while (turn < TURNS && turn % 2 != t)
            pthread_cond_wait(&turn_cv, &turn_mu);
        int s = turn;
        pthread_mutex_unlock(&turn_mu);
        if (s >= TURNS)
            return NULL;
        step(s);
        pthread_mutex_lock(&turn_mu);
        turn++;
        pthread_cond_broadcast(&turn_cv);
        pthread_mutex_unlock(&turn_mu);
    }
}

#define TCALL(call) do { int t_ = (call); \
        if (t_ != MPI_SUCCESS) fail(__LINE__, "%s returned %d", #call, t_); } while (0)

/* The main thread's receive buffer, filled inside the MPI_Recv that the tool
 * thread's read must wait for. */
static int received;
static atomic_int main_inside; /* the main thread is about to make its blocking call */
static int delay_ms;
static MPI_T_pvar_session tsession;
static MPI_T_pvar_handle held;

static void *tool(void *arg)
{
    (void)arg;
    while (!atomic_load(&main_inside))
        pause_ms(1);
    pause_ms(delay_ms);
    /* Any thread may ask these while another is inside MPI: answered at once. */
    int is_main = -1, level = -1;
    CALL(MPI_Is_thread_main(&is_main));
    CALL(MPI_Query_thread(&level));
    CHECK(is_main == 0 && level == MPI_THREAD_SERIALIZED, "second thread: main %d, level %d", is_main, level);
    CHECK(__atomic_load_n(&received, __ATOMIC_ACQUIRE) == 0, "the thread queries waited for the main thread's MPI_Recv");
    if (!tsession) {
        int provided = -1, idx = -1, count = 0;
        TCALL(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided));
        TCALL(MPI_T_pvar_get_index("ferry_requests_active", MPI_T_PVAR_CLASS_LEVEL, &idx));
        TCALL(MPI_T_pvar_session_create(&tsession));
        TCALL(MPI_T_pvar_handle_alloc(tsession, idx, NULL, &held, &count));
    }
    unsigned long long n = 0;
    TCALL(MPI_T_pvar_read(tsession, held, &n));
    /* The read took the runtime, which the main thread's MPI_Recv held until it ended. */
    int got = __atomic_load_n(&received, __ATOMIC_ACQUIRE);
    CHECK(got == 4242, "the tool read the runtime while MPI_Recv was inside it (buffer %d)", got);
    return NULL;
}

/* Rank 0's main thread waits in MPI_Recv for rank 1, which answers 300 ms
 * later, while rank 0's tool thread reads a performance variable after
 * `after` ms. */
static void tool_during_recv(int after, int tag)
{
    if (me == 0) {
        pthread_t th;
        received = 0;
        atomic_store(&main_inside, 0);
        delay_ms = after;
        CHECK(pthread_create(&th, NULL, tool, NULL) == 0, "pthread_create");
        atomic_store(&main_inside, 1);
        CALL(MPI_Recv(&received, 1, MPI_INT, 1, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        CHECK(pthread_join(th, NULL) == 0, "pthread_join");
    } else if (me == 1) {
        int out = 4242;
        pause_ms(300);
        CALL(MPI_Send(&out, 1, MPI_INT, 0, tag, MPI_COMM_WORLD));
    }
}

int main(int argc, char **argv)
{
    int provided = -1;
    CALL(MPI_Init_thread(&argc, &argv, MPI_THREAD_SERIALIZED, &provided));
    CHECK(provided >= MPI_THREAD_SERIALIZED, "provided %d", provided);
    CALL(MPI_Comm_rank(MPI_COMM_WORLD, &me));
    CALL(MPI_Comm_size(MPI_COMM_WORLD, &np));

    /* 1. Two threads take turns. */
    pthread_t th[2];
    for (long t = 0; t < 2; t++)
        CHECK(pthread_create(&th[t], NULL, take_turns, (void *)t) == 0, "pthread_create");
    for (int t = 0; t < 2; t++)
        CHECK(pthread_join(th[t], NULL) == 0, "pthread_join");

    /* 2. The tool interface comes up, and reads, while the main thread is inside. */
    CALL(MPI_Barrier(MPI_COMM_WORLD));
    tool_during_recv(30, 1);
    tool_during_recv(100, 2);

    /* 3. Calls go on with the lock. */
    CALL(MPI_Barrier(MPI_COMM_WORLD));
    turn = 0;
    for (int s = 0; s < 64; s++)
        step(s);
    if (me == 0) {
        TCALL(MPI_T_pvar_handle_free(tsession, &held));
        TCALL(MPI_T_pvar_session_free(&tsession));
        TCALL(MPI_T_finalize());
    }
    CALL(MPI_Finalize());
    return 0;
}

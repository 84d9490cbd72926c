/* ranks: 1 2 4 5 */
/*
 * MPI_Init_thread asking for MPI_THREAD_MULTIPLE: the level provided may be
 * anything from MPI_THREAD_SINGLE up, but must be reported consistently by
 * Query_thread, before and after other calls; Is_thread_main is true on the
 * thread that initialised; Initialized/Finalized around the whole life.
 */
#define TEST_NAME "init_thread"
#include "testutil.h"

static const char *level_name(int level)
{
    return level == MPI_THREAD_SINGLE ? "MPI_THREAD_SINGLE" :
           level == MPI_THREAD_FUNNELED ? "MPI_THREAD_FUNNELED" :
           level == MPI_THREAD_SERIALIZED ? "MPI_THREAD_SERIALIZED" :
           level == MPI_THREAD_MULTIPLE ? "MPI_THREAD_MULTIPLE" : "not a thread level";
}

int main(int argc, char **argv)
{
    CHECK(MPI_THREAD_SINGLE < MPI_THREAD_FUNNELED &&
          MPI_THREAD_FUNNELED < MPI_THREAD_SERIALIZED &&
          MPI_THREAD_SERIALIZED < MPI_THREAD_MULTIPLE, "thread levels are not ordered");

    int flag = -1;
    CALL(MPI_Initialized(&flag));
    CHECK(flag == 0, "Initialized before Init_thread gave %d", flag);

    int provided = -12345;
    CALL(MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided));
    CALL(MPI_Comm_rank(MPI_COMM_WORLD, &me));
    CALL(MPI_Comm_size(MPI_COMM_WORLD, &np));
    CHECK(provided >= MPI_THREAD_SINGLE && provided <= MPI_THREAD_MULTIPLE,
          "Init_thread provided %d, %s", provided, level_name(provided));

    CALL(MPI_Initialized(&flag));
    CHECK(flag == 1, "Initialized after Init_thread gave %d", flag);
    CALL(MPI_Finalized(&flag));
    CHECK(flag == 0, "Finalized after Init_thread gave %d", flag);

    int queried = -1;
    CALL(MPI_Query_thread(&queried));
    CHECK(queried == provided, "Query_thread says %s, Init_thread provided %s",
          level_name(queried), level_name(provided));

    int is_main = -1;
    CALL(MPI_Is_thread_main(&is_main));
    CHECK(is_main == 1, "Is_thread_main on the initialising thread gave %d", is_main);

    /* Every rank reports the same level: the library is one build. */
    int right = (me + 1) % np, left = (me + np - 1) % np, theirs = -1;
    CALL(MPI_Sendrecv(&provided, 1, MPI_INT, right, 0, &theirs, 1, MPI_INT, left, 0,
                      MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    CHECK(theirs == provided, "rank %d was provided %s, this rank %s", left,
          level_name(theirs), level_name(provided));

    queried = -1;
    CALL(MPI_Query_thread(&queried));
    CHECK(queried == provided, "Query_thread changed to %s", level_name(queried));
    if (me == 0)
        printf("init_thread: requested MPI_THREAD_MULTIPLE, provided %s\n",
               level_name(provided));

    CALL(MPI_Barrier(MPI_COMM_WORLD));
    CALL(MPI_Finalize());
    finalized = 1;
    CALL(MPI_Finalized(&flag));
    CHECK(flag == 1, "Finalized after Finalize gave %d", flag);
    return 0;
}

/*
 * threadutil.h — what the MPI_THREAD_MULTIPLE programs share, after
 * testutil.h: starting NT threads of one function and joining them, and an
 * MPI_Init_thread that insists on MPI_THREAD_MULTIPLE. Define NT first.
 */
#ifndef FERRY_THREADUTIL_H
#define FERRY_THREADUTIL_H

#include <pthread.h>

#ifndef NT
#error "define NT (threads per rank) before including threadutil.h"
#endif

/* Runs f(0) .. f(NT-1) on NT threads at once and waits for all of them. */
static void run_threads(void *(*f)(void *))
{
    pthread_t th[NT];
    for (long t = 0; t < NT; t++)
        CHECK(pthread_create(&th[t], NULL, f, (void *)t) == 0, "pthread_create");
    for (int t = 0; t < NT; t++)
        CHECK(pthread_join(th[t], NULL) == 0, "pthread_join");
}

/* MPI_Init_thread asking for MPI_THREAD_MULTIPLE, which must be provided; then `me`, `np`. */
#define TEST_INIT_MULTIPLE(argcp, argvp) do { \
        int provided_ = -1; \
        CALL(MPI_Init_thread(argcp, argvp, MPI_THREAD_MULTIPLE, &provided_)); \
        CALL(MPI_Comm_rank(MPI_COMM_WORLD, &me)); \
        CALL(MPI_Comm_size(MPI_COMM_WORLD, &np)); \
        CHECK(provided_ == MPI_THREAD_MULTIPLE, "Init_thread provided %d", provided_); } while (0)

#endif

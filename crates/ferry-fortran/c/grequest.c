/*
 * grequest.c -- MPI_GREQUEST_START from Fortran, written by hand: the Fortran query, free and
 * cancel procedures take the extra state by reference and return through IERROR, where C's
 * take it by value and return an int, so C calls them through the trampolines below.
 */
#include "ferry_fortran.h"

typedef void(ferry_f_query_fn)(MPI_Aint *extra_state, MPI_Fint *status, MPI_Fint *ierror);
typedef void(ferry_f_free_fn)(MPI_Aint *extra_state, MPI_Fint *ierror);
typedef void(ferry_f_cancel_fn)(MPI_Aint *extra_state, MPI_Fint *complete, MPI_Fint *ierror);

/* The program's procedures and extra state, given to C as the extra state; freed after the
 * free procedure, which the library calls once, when the request goes. */
struct ferry_f_grequest {
    ferry_f_query_fn *query;
    ferry_f_free_fn *free;
    ferry_f_cancel_fn *cancel;
    MPI_Aint extra_state;
};

static int query_trampoline(void *extra, MPI_Status *status)
{
    struct ferry_f_grequest *g = extra;
    MPI_Fint ierror = MPI_SUCCESS;
    g->query(&g->extra_state, (MPI_Fint *)status, &ierror);
    return ierror;
}

static int free_trampoline(void *extra)
{
    struct ferry_f_grequest *g = extra;
    MPI_Fint ierror = MPI_SUCCESS;
    g->free(&g->extra_state, &ierror);
    free(g);
    return ierror;
}

static int cancel_trampoline(void *extra, int complete)
{
    struct ferry_f_grequest *g = extra;
    MPI_Fint fcomplete = complete != 0, ierror = MPI_SUCCESS;
    g->cancel(&g->extra_state, &fcomplete, &ierror);
    return ierror;
}

#define GREQUEST_START(name, weak, start)                                                      \
    weak void name(ferry_f_query_fn *query_fn, ferry_f_free_fn *free_fn,                       \
                   ferry_f_cancel_fn *cancel_fn, MPI_Aint *extra_state, MPI_Fint *request,     \
                   MPI_Fint *ierror)                                                           \
    {                                                                                          \
        struct ferry_f_grequest *g = malloc(sizeof *g);                                        \
        if (!g) {                                                                              \
            *ierror = ferry_f_no_memory();                                                     \
            return;                                                                            \
        }                                                                                      \
        g->query = query_fn;                                                                   \
        g->free = free_fn;                                                                     \
        g->cancel = cancel_fn;                                                                 \
        g->extra_state = *extra_state;                                                         \
        *ierror = start(query_trampoline, free_trampoline, cancel_trampoline, g, request);     \
        if (*ierror != MPI_SUCCESS)                                                            \
            free(g);                                                                           \
    }

GREQUEST_START(mpi_grequest_start_, FERRY_F_WEAK, MPI_Grequest_start)
FERRY_F_SPELLINGS(mpi_grequest_start_, "mpi_grequest_start", "MPI_GREQUEST_START")
GREQUEST_START(pmpi_grequest_start_, , PMPI_Grequest_start)
FERRY_F_SPELLINGS(pmpi_grequest_start_, "pmpi_grequest_start", "PMPI_GREQUEST_START")

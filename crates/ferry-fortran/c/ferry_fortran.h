/*
 * ferry_fortran.h -- what the Fortran bindings of Ferry's MPI library share: MPICH's symbol
 * spellings, the common blocks of include/mpif.h, and the conversions from Fortran arguments
 * to C ones. The bindings are C functions that gfortran calls: every argument by reference,
 * INTEGER handles equal to the C handle values (MPICH's ABI), CHARACTER lengths as hidden
 * size_t arguments after all others.
 */
#ifndef FERRY_FORTRAN_H
#define FERRY_FORTRAN_H

#include <stddef.h>
#include <stdlib.h>

#include "mpi.h"

/* mpi_x_ is weak, as in MPICH, so that a profiling layer linked ahead of it may take the name;
 * pmpi_x_ is the strong one. Each has three more spellings, for compilers and options that
 * add no underscore or two, or that upper-case names: FERRY_F_SPELLINGS(mpi_x_, "mpi_x",
 * "MPI_X") makes mpi_x__, mpi_x and MPI_X aliases of mpi_x_. Symbols are named by strings,
 * as some of them are also macros of mpi.h (MPI_COMM_DUP_FN). */
#define FERRY_F_WEAK __attribute__((weak))
#define FERRY_F_CAT2(a, b) a##b
#define FERRY_F_CAT(a, b) FERRY_F_CAT2(a, b)
#define FERRY_F_ALIAS(target, symbol)                                                          \
    extern __typeof__(target) FERRY_F_CAT(ferry_f_alias_, __COUNTER__) __asm__(symbol)          \
        __attribute__((weak, alias(#target)));
#define FERRY_F_SPELLINGS(target, lower, upper)                                                \
    FERRY_F_ALIAS(target, lower "__") FERRY_F_ALIAS(target, lower) FERRY_F_ALIAS(target, upper)

/*
 * The common blocks of mpif.h, under MPICH's names and with its layout, so that programs built
 * with MPICH's mpif.h or mpi module find the same objects. A program that uses them has its
 * own copy of each block, which takes the place of these (the library reaches them through
 * the dynamic symbol), so the addresses below are the ones the program passes.
 */
struct ferry_f_priv1 {
    MPI_Fint bottom;           /* MPI_BOTTOM */
    MPI_Fint in_place;         /* MPI_IN_PLACE */
    MPI_Fint status_ignore[5]; /* MPI_STATUS_IGNORE */
};
struct ferry_f_priv2 {
    MPI_Fint statuses_ignore[5]; /* MPI_STATUSES_IGNORE */
    MPI_Fint errcodes_ignore[1]; /* MPI_ERRCODES_IGNORE */
};
extern struct ferry_f_priv1 mpipriv1_;
extern struct ferry_f_priv2 mpipriv2_;
extern MPI_Fint mpifcmb5_; /* MPI_UNWEIGHTED */
extern MPI_Fint mpifcmb9_; /* MPI_WEIGHTS_EMPTY */

/* A choice buffer: MPI_BOTTOM and MPI_IN_PLACE are the addresses of their common objects. */
static inline void *ferry_f_buffer(void *p)
{
    if (p == (void *)&mpipriv1_.bottom)
        return MPI_BOTTOM;
    if (p == (void *)&mpipriv1_.in_place)
        return MPI_IN_PLACE;
    return p;
}

/* The Fortran status is MPICH's C MPI_Status, five INTEGERs in the same order. */
static inline MPI_Status *ferry_f_status(MPI_Fint *p)
{
    return p == mpipriv1_.status_ignore ? MPI_STATUS_IGNORE : (MPI_Status *)p;
}

static inline MPI_Status *ferry_f_statuses(MPI_Fint *p)
{
    return p == mpipriv2_.statuses_ignore ? MPI_STATUSES_IGNORE : (MPI_Status *)p;
}

static inline int *ferry_f_weights(MPI_Fint *p)
{
    if (p == &mpifcmb5_)
        return MPI_UNWEIGHTED;
    if (p == &mpifcmb9_)
        return MPI_WEIGHTS_EMPTY;
    return p;
}

/* C's 0-based indices to Fortran's 1-based ones (none when count is MPI_UNDEFINED). */
static inline void ferry_f_one_based(MPI_Fint *indices, int count)
{
    for (int i = 0; i < count; i++)
        indices[i] += 1;
}

/* The helpers below are the library's own business: not exported. */
#define FERRY_F_INTERNAL __attribute__((visibility("hidden")))

/* A CHARACTER argument as a new NUL-terminated string without its trailing blanks (and its
 * leading ones when trim_leading); NULL when memory runs out. */
FERRY_F_INTERNAL char *ferry_f_string_in(const char *s, size_t len, int trim_leading);
/* A zeroed buffer of size bytes (at least one) for a C function to write a string into. */
FERRY_F_INTERNAL char *ferry_f_string_buffer(long size);
/* Copies a C string into a CHARACTER argument of length len: truncated or blank-padded. */
FERRY_F_INTERNAL void ferry_f_string_out(const char *c, char *f, size_t len);
/* MPI_ERR_NO_MEM, through MPI_COMM_WORLD's error handler. */
FERRY_F_INTERNAL int ferry_f_no_memory(void);

#endif /* FERRY_FORTRAN_H */

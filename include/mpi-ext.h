/*
 * mpi-ext.h — Ferry's MPI extensions: fault-tolerant MPI (the ULFM proposal, as MPICH and
 * Open MPI offer it under MPIX_ names). Include it after mpi.h. The error classes have
 * MPICH's values, so programs built with MPICH's header agree with this library.
 *
 * The extensions act only in a job run with recovery enabled (`ferry run
 * --enable-recovery`, or FERRY_RECOVERY=1 under another launcher); without it a process's
 * failure ends the job as before. See docs/fault-tolerance.md for what is built and what
 * is partial.
 */
#ifndef FERRY_MPI_EXT_H
#define FERRY_MPI_EXT_H

#include <mpi.h>

#if defined(__cplusplus)
extern "C" {
#endif

/* Open MPI's test for the fault-tolerance extension. */
#define OMPI_HAVE_MPI_EXT_FTMPI 1
#define MPIX_FT 1

/* Error classes of process failure (MPICH's values). */
#define MPIX_ERR_PROC_FAILED          101
#define MPIX_ERR_PROC_FAILED_PENDING  102
#define MPIX_ERR_REVOKED              103
/* MPI-4.1 draft spellings of the same classes. */
#define MPI_ERR_PROC_FAILED           MPIX_ERR_PROC_FAILED
#define MPI_ERR_PROC_FAILED_PENDING   MPIX_ERR_PROC_FAILED_PENDING
#define MPI_ERR_REVOKED               MPIX_ERR_REVOKED

#if defined(__cplusplus)
}
#endif

#endif /* FERRY_MPI_EXT_H */

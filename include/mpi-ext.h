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

/* The error classes of process failure, MPIX_ERR_PROC_FAILED, MPIX_ERR_PROC_FAILED_PENDING
 * and MPIX_ERR_REVOKED, are in mpi.h, as in MPICH's. MPI-4.1 draft spellings of them: */
#define MPI_ERR_PROC_FAILED           MPIX_ERR_PROC_FAILED
#define MPI_ERR_PROC_FAILED_PENDING   MPIX_ERR_PROC_FAILED_PENDING
#define MPI_ERR_REVOKED               MPIX_ERR_REVOKED

/* Revoke: every operation on comm, pending or later, at every member, fails with
 * MPIX_ERR_REVOKED (agree and shrink excepted). */
int MPIX_Comm_revoke(MPI_Comm comm);
int MPIX_Comm_is_revoked(MPI_Comm comm, int *flag);
/* A new communicator of the survivors (agreeing on who failed). */
int MPIX_Comm_shrink(MPI_Comm comm, MPI_Comm *newcomm);
/* Fault-tolerant agreement: flag ANDed over the survivors. MPIX_Comm_iagree completes
 * before it returns (docs/fault-tolerance.md). */
int MPIX_Comm_agree(MPI_Comm comm, int *flag);
int MPIX_Comm_iagree(MPI_Comm comm, int *flag, MPI_Request *request);
/* Acknowledging failures. */
int MPIX_Comm_failure_ack(MPI_Comm comm);
int MPIX_Comm_failure_get_acked(MPI_Comm comm, MPI_Group *failedgrp);
/* MPI-4.1 draft names. */
int MPIX_Comm_get_failed(MPI_Comm comm, MPI_Group *failedgrp);
int MPIX_Comm_ack_failed(MPI_Comm comm, int num_to_ack, int *num_acked);

int PMPIX_Comm_revoke(MPI_Comm comm);
int PMPIX_Comm_is_revoked(MPI_Comm comm, int *flag);
int PMPIX_Comm_shrink(MPI_Comm comm, MPI_Comm *newcomm);
int PMPIX_Comm_agree(MPI_Comm comm, int *flag);
int PMPIX_Comm_iagree(MPI_Comm comm, int *flag, MPI_Request *request);
int PMPIX_Comm_failure_ack(MPI_Comm comm);
int PMPIX_Comm_failure_get_acked(MPI_Comm comm, MPI_Group *failedgrp);
int PMPIX_Comm_get_failed(MPI_Comm comm, MPI_Group *failedgrp);
int PMPIX_Comm_ack_failed(MPI_Comm comm, int num_to_ack, int *num_acked);

#if defined(__cplusplus)
}
#endif

#endif /* FERRY_MPI_EXT_H */

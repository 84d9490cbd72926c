/*
 * pcontrol.c -- MPI_PCONTROL from Fortran, written by hand: C's MPI_Pcontrol is variadic, and
 * the Fortran binding takes the level alone, with no IERROR to write.
 */
#include "ferry_fortran.h"

FERRY_F_WEAK void mpi_pcontrol_(MPI_Fint *level)
{
    MPI_Pcontrol(*level);
}
FERRY_F_SPELLINGS(mpi_pcontrol_, "mpi_pcontrol", "MPI_PCONTROL")

void pmpi_pcontrol_(MPI_Fint *level)
{
    PMPI_Pcontrol(*level);
}
FERRY_F_SPELLINGS(pmpi_pcontrol_, "pmpi_pcontrol", "PMPI_PCONTROL")

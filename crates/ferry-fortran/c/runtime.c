/*
 * runtime.c -- the objects and helpers behind the generated Fortran bindings: the common
 * blocks of mpif.h, the C library's view of the Fortran STATUS_IGNOREs, CHARACTER
 * conversions, and MPI_F_SYNC_REG.
 */
#include <string.h>

#include "ferry_fortran.h"

/* Zero-initialised, as MPICH's; a program's own copies take their place (ferry_fortran.h). */
struct ferry_f_priv1 mpipriv1_;
struct ferry_f_priv2 mpipriv2_;
MPI_Fint mpifcmb5_;
MPI_Fint mpifcmb9_;

/* The C library's MPI_F_STATUS_IGNORE and MPI_F_STATUSES_IGNORE (MPI's names for the Fortran
 * objects, seen from C) point at the blocks above, as MPICH's Fortran layer sets them. */
extern MPI_Fint *MPI_F_STATUS_IGNORE;
extern MPI_Fint *MPI_F_STATUSES_IGNORE;

__attribute__((constructor)) static void ferry_f_publish_ignores(void)
{
    MPI_F_STATUS_IGNORE = mpipriv1_.status_ignore;
    MPI_F_STATUSES_IGNORE = mpipriv2_.statuses_ignore;
}

char *ferry_f_string_in(const char *s, size_t len, int trim_leading)
{
    size_t start = 0;
    while (len > 0 && s[len - 1] == ' ')
        len--;
    if (trim_leading)
        while (start < len && s[start] == ' ')
            start++;
    char *c = malloc(len - start + 1);
    if (!c)
        return NULL;
    memcpy(c, s + start, len - start);
    c[len - start] = '\0';
    return c;
}

char *ferry_f_string_buffer(long size)
{
    return calloc(size > 0 ? (size_t)size : 1, 1);
}

void ferry_f_string_out(const char *c, char *f, size_t len)
{
    size_t n = strlen(c);
    if (n > len)
        n = len;
    memcpy(f, c, n);
    memset(f + n, ' ', len - n);
}

int ferry_f_no_memory(void)
{
    MPI_Comm_call_errhandler(MPI_COMM_WORLD, MPI_ERR_NO_MEM);
    return MPI_ERR_NO_MEM;
}

/* MPI_F_SYNC_REG(BUF): does nothing, on purpose. A call that names BUF is what matters: the
 * compiler must store BUF before it and load it after, so a value a nonblocking operation
 * wrote there is not hidden by a copy kept in a register. */
static void sync_reg(void *buf)
{
    (void)buf;
}
FERRY_F_ALIAS(sync_reg, "mpi_f_sync_reg_")
FERRY_F_SPELLINGS(sync_reg, "mpi_f_sync_reg", "MPI_F_SYNC_REG")
FERRY_F_ALIAS(sync_reg, "pmpi_f_sync_reg_")
FERRY_F_SPELLINGS(sync_reg, "pmpi_f_sync_reg", "PMPI_F_SYNC_REG")

/*
 * info.c -- MPI_INFO_GET_STRING from Fortran, written by hand: C counts the NUL in BUFLEN
 * (the buffer's size on entry, the value's size + 1 on return), Fortran has no NUL, so the
 * Fortran BUFLEN is the number of characters to fill on entry and the value's length on return.
 */
#include "ferry_fortran.h"

#define INFO_GET_STRING(name, weak, get)                                                      \
    weak void name(MPI_Fint *info, char *key, MPI_Fint *buflen, char *value, MPI_Fint *flag,  \
                   MPI_Fint *ierror, size_t key_len, size_t value_len)                        \
    {                                                                                         \
        /* A negative length goes to C as it is, which refuses it. */                         \
        int c_buflen = *buflen > 0 ? *buflen + 1 : *buflen;                                   \
        char *c_key = ferry_f_string_in(key, key_len, 1);                                     \
        char *c_value = ferry_f_string_buffer(c_buflen);                                      \
        int rc;                                                                               \
        if (!c_key || !c_value) {                                                             \
            rc = ferry_f_no_memory();                                                         \
        } else {                                                                              \
            rc = get(*info, c_key, &c_buflen, c_value, flag);                                 \
            if (rc == MPI_SUCCESS && *flag) {                                                 \
                if (*buflen > 0)                                                              \
                    ferry_f_string_out(c_value, value, value_len);                            \
                *buflen = c_buflen - 1;                                                       \
            }                                                                                 \
        }                                                                                     \
        free(c_key);                                                                          \
        free(c_value);                                                                        \
        *ierror = rc;                                                                         \
    }

INFO_GET_STRING(mpi_info_get_string_, FERRY_F_WEAK, MPI_Info_get_string)
FERRY_F_SPELLINGS(mpi_info_get_string_, "mpi_info_get_string", "MPI_INFO_GET_STRING")
INFO_GET_STRING(pmpi_info_get_string_, , PMPI_Info_get_string)
FERRY_F_SPELLINGS(pmpi_info_get_string_, "pmpi_info_get_string", "PMPI_INFO_GET_STRING")

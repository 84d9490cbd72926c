/*
 * The signature of every function include/mpi.h declares, written out once and checked against
 * both headers: check.sh compiles this file against Ferry's mpi.h and against MPICH's, as C and
 * as C++, with incompatible pointer conversions as errors, so a prototype that differs from
 * MPICH's in any parameter type or qualifier fails to build. check.sh also requires the list of
 * SIG lines to equal the list of functions Ferry's header declares.
 */
#include <mpi.h>

#if defined(__cplusplus)
#define SIG(ret, name, params)                                                                 \
    extern ret (*const check_##name) params;                                                   \
    ret (*const check_##name) params = name;                                                   \
    extern ret (*const check_P##name) params;                                                  \
    ret (*const check_P##name) params = P##name;
#else
#define SIG(ret, name, params)                                                                 \
    ret (*const check_##name) params = name;                                                   \
    ret (*const check_P##name) params = P##name;
#endif

SIG(int, MPI_Init, (int *, char ***))
SIG(int, MPI_Init_thread, (int *, char ***, int, int *))
SIG(int, MPI_Initialized, (int *))
SIG(int, MPI_Finalize, (void))
SIG(int, MPI_Finalized, (int *))
SIG(int, MPI_Query_thread, (int *))
SIG(int, MPI_Is_thread_main, (int *))
SIG(int, MPI_Abort, (MPI_Comm, int))
SIG(double, MPI_Wtime, (void))
SIG(double, MPI_Wtick, (void))
SIG(int, MPI_Get_processor_name, (char *, int *))
SIG(int, MPI_Get_version, (int *, int *))
SIG(int, MPI_Get_library_version, (char *, int *))
SIG(int, MPI_Comm_size, (MPI_Comm, int *))
SIG(int, MPI_Comm_rank, (MPI_Comm, int *))
SIG(int, MPI_Comm_dup, (MPI_Comm, MPI_Comm *))
SIG(int, MPI_Comm_split, (MPI_Comm, int, int, MPI_Comm *))
SIG(int, MPI_Comm_free, (MPI_Comm *))
SIG(int, MPI_Comm_compare, (MPI_Comm, MPI_Comm, int *))
SIG(int, MPI_Send, (const void *, int, MPI_Datatype, int, int, MPI_Comm))
SIG(int, MPI_Recv, (void *, int, MPI_Datatype, int, int, MPI_Comm, MPI_Status *))
SIG(int, MPI_Ssend, (const void *, int, MPI_Datatype, int, int, MPI_Comm))
SIG(int, MPI_Rsend, (const void *, int, MPI_Datatype, int, int, MPI_Comm))
SIG(int, MPI_Bsend, (const void *, int, MPI_Datatype, int, int, MPI_Comm))
SIG(int, MPI_Buffer_attach, (void *, int))
SIG(int, MPI_Buffer_detach, (void *, int *))
SIG(int, MPI_Isend, (const void *, int, MPI_Datatype, int, int, MPI_Comm, MPI_Request *))
SIG(int, MPI_Irecv, (void *, int, MPI_Datatype, int, int, MPI_Comm, MPI_Request *))
SIG(int, MPI_Issend, (const void *, int, MPI_Datatype, int, int, MPI_Comm, MPI_Request *))
SIG(int, MPI_Ibsend, (const void *, int, MPI_Datatype, int, int, MPI_Comm, MPI_Request *))
SIG(int, MPI_Irsend, (const void *, int, MPI_Datatype, int, int, MPI_Comm, MPI_Request *))
SIG(int, MPI_Sendrecv, (const void *, int, MPI_Datatype, int, int, void *, int, MPI_Datatype, int, int, MPI_Comm, MPI_Status *))
SIG(int, MPI_Sendrecv_replace, (void *, int, MPI_Datatype, int, int, int, int, MPI_Comm, MPI_Status *))
SIG(int, MPI_Wait, (MPI_Request *, MPI_Status *))
SIG(int, MPI_Waitall, (int, MPI_Request[], MPI_Status[]))
SIG(int, MPI_Waitany, (int, MPI_Request[], int *, MPI_Status *))
SIG(int, MPI_Waitsome, (int, MPI_Request[], int *, int[], MPI_Status[]))
SIG(int, MPI_Test, (MPI_Request *, int *, MPI_Status *))
SIG(int, MPI_Testall, (int, MPI_Request[], int *, MPI_Status[]))
SIG(int, MPI_Testany, (int, MPI_Request[], int *, int *, MPI_Status *))
SIG(int, MPI_Testsome, (int, MPI_Request[], int *, int[], MPI_Status[]))
SIG(int, MPI_Request_free, (MPI_Request *))
SIG(int, MPI_Cancel, (MPI_Request *))
SIG(int, MPI_Test_cancelled, (const MPI_Status *, int *))
SIG(int, MPI_Probe, (int, int, MPI_Comm, MPI_Status *))
SIG(int, MPI_Iprobe, (int, int, MPI_Comm, int *, MPI_Status *))
SIG(int, MPI_Mprobe, (int, int, MPI_Comm, MPI_Message *, MPI_Status *))
SIG(int, MPI_Improbe, (int, int, MPI_Comm, int *, MPI_Message *, MPI_Status *))
SIG(int, MPI_Mrecv, (void *, int, MPI_Datatype, MPI_Message *, MPI_Status *))
SIG(int, MPI_Imrecv, (void *, int, MPI_Datatype, MPI_Message *, MPI_Request *))
SIG(int, MPI_Get_count, (const MPI_Status *, MPI_Datatype, int *))
SIG(int, MPI_Get_elements, (const MPI_Status *, MPI_Datatype, int *))
SIG(int, MPI_Get_elements_x, (const MPI_Status *, MPI_Datatype, MPI_Count *))
SIG(int, MPI_Comm_set_errhandler, (MPI_Comm, MPI_Errhandler))
SIG(int, MPI_Comm_get_errhandler, (MPI_Comm, MPI_Errhandler *))
SIG(int, MPI_Errhandler_free, (MPI_Errhandler *))
SIG(int, MPI_Error_string, (int, char *, int *))
SIG(int, MPI_Error_class, (int, int *))
SIG(int, MPI_Type_contiguous, (int, MPI_Datatype, MPI_Datatype *))
SIG(int, MPI_Type_vector, (int, int, int, MPI_Datatype, MPI_Datatype *))
SIG(int, MPI_Type_create_hvector, (int, int, MPI_Aint, MPI_Datatype, MPI_Datatype *))
SIG(int, MPI_Type_indexed, (int, const int[], const int[], MPI_Datatype, MPI_Datatype *))
SIG(int, MPI_Type_create_struct, (int, const int[], const MPI_Aint[], const MPI_Datatype[], MPI_Datatype *))
SIG(int, MPI_Type_create_resized, (MPI_Datatype, MPI_Aint, MPI_Aint, MPI_Datatype *))
SIG(int, MPI_Type_commit, (MPI_Datatype *))
SIG(int, MPI_Type_free, (MPI_Datatype *))
SIG(int, MPI_Type_dup, (MPI_Datatype, MPI_Datatype *))
SIG(int, MPI_Type_size, (MPI_Datatype, int *))
SIG(int, MPI_Type_get_extent, (MPI_Datatype, MPI_Aint *, MPI_Aint *))
SIG(int, MPI_Type_get_true_extent, (MPI_Datatype, MPI_Aint *, MPI_Aint *))
SIG(int, MPI_Barrier, (MPI_Comm))
SIG(int, MPI_Bcast, (void *, int, MPI_Datatype, int, MPI_Comm))
SIG(int, MPI_Gather, (const void *, int, MPI_Datatype, void *, int, MPI_Datatype, int, MPI_Comm))
SIG(int, MPI_Gatherv, (const void *, int, MPI_Datatype, void *, const int[], const int[], MPI_Datatype, int, MPI_Comm))
SIG(int, MPI_Scatter, (const void *, int, MPI_Datatype, void *, int, MPI_Datatype, int, MPI_Comm))
SIG(int, MPI_Scatterv, (const void *, const int[], const int[], MPI_Datatype, void *, int, MPI_Datatype, int, MPI_Comm))
SIG(int, MPI_Allgather, (const void *, int, MPI_Datatype, void *, int, MPI_Datatype, MPI_Comm))
SIG(int, MPI_Allgatherv, (const void *, int, MPI_Datatype, void *, const int[], const int[], MPI_Datatype, MPI_Comm))
SIG(int, MPI_Reduce, (const void *, void *, int, MPI_Datatype, MPI_Op, int, MPI_Comm))
SIG(int, MPI_Allreduce, (const void *, void *, int, MPI_Datatype, MPI_Op, MPI_Comm))
SIG(int, MPI_Reduce_scatter_block, (const void *, void *, int, MPI_Datatype, MPI_Op, MPI_Comm))
SIG(int, MPI_Scan, (const void *, void *, int, MPI_Datatype, MPI_Op, MPI_Comm))
SIG(int, MPI_Exscan, (const void *, void *, int, MPI_Datatype, MPI_Op, MPI_Comm))

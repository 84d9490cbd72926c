/*
 * mpi.h -- the C interface of Ferry's MPI library.
 *
 * It follows the MPICH ABI on x86_64 (the ABI shared by MPICH 4.x, Intel MPI, Cray MPICH and
 * MVAPICH): handles are ints with MPICH's values, MPI_Status has MPICH's layout, and every
 * prototype has MPICH's signature, so a program built against either header runs on either
 * library. Only the functions Ferry implements are declared; anything else is a compile error
 * rather than a link error or a wrong answer. tests/abi/check.sh compares this file with
 * MPICH's header.
 */
#ifndef FERRY_MPI_H
#define FERRY_MPI_H

#if defined(__cplusplus)
extern "C" {
#endif

/* Version of the standard whose interface this header declares: MPI-4.0 without dynamic
 * processes (spawn, ports) and with part of its I/O (ferry_mpi_io.h), as README.md says. */
#define MPI_VERSION    4
#define MPI_SUBVERSION 0

/* ---- Handle and integer types ------------------------------------------------------------ */

typedef int MPI_Comm;
typedef int MPI_Datatype;
typedef int MPI_Request;
typedef int MPI_Op;
typedef int MPI_Errhandler;
typedef int MPI_Group;
typedef int MPI_Info;
typedef int MPI_Message;
typedef int MPI_Win;
typedef int MPI_Session;

/* Address-sized and 64-bit integers; MPICH spells all three as long on LP64 targets. */
typedef long MPI_Aint;
typedef long MPI_Offset;
typedef long MPI_Count;
typedef int MPI_Fint;

/* A user-defined reduction (MPI_Op_create): inoutvec[i] = invec[i] op inoutvec[i], i < *len. */
typedef void(MPI_User_function)(void *invec, void *inoutvec, int *len, MPI_Datatype *datatype);
/* The same with a large count (MPI_Op_create_c). */
typedef void(MPI_User_function_c)(void *invec, void *inoutvec, MPI_Count *len,
                                  MPI_Datatype *datatype);

/* Attribute copy and delete callbacks (keyvals) and communicator error handlers. */
typedef int(MPI_Comm_copy_attr_function)(MPI_Comm oldcomm, int keyval, void *extra_state,
                                         void *attribute_val_in, void *attribute_val_out,
                                         int *flag);
typedef int(MPI_Comm_delete_attr_function)(MPI_Comm comm, int keyval, void *attribute_val,
                                           void *extra_state);
typedef int(MPI_Type_copy_attr_function)(MPI_Datatype oldtype, int keyval, void *extra_state,
                                         void *attribute_val_in, void *attribute_val_out,
                                         int *flag);
typedef int(MPI_Type_delete_attr_function)(MPI_Datatype datatype, int keyval,
                                           void *attribute_val, void *extra_state);
typedef void(MPI_Comm_errhandler_function)(MPI_Comm *comm, int *errorcode, ...);
/* Their MPI-1 names (MPI_Keyval_create, MPI_Errhandler_create). */
typedef int(MPI_Copy_function)(MPI_Comm oldcomm, int keyval, void *extra_state,
                               void *attribute_val_in, void *attribute_val_out, int *flag);
typedef int(MPI_Delete_function)(MPI_Comm comm, int keyval, void *attribute_val,
                                 void *extra_state);
typedef void(MPI_Handler_function)(MPI_Comm *comm, int *errorcode, ...);
typedef void(MPI_Win_errhandler_function)(MPI_Win *win, int *errorcode, ...);
typedef int(MPI_Win_copy_attr_function)(MPI_Win oldwin, int win_keyval, void *extra_state,
                                        void *attribute_val_in, void *attribute_val_out, int *flag);
typedef int(MPI_Win_delete_attr_function)(MPI_Win win, int win_keyval, void *attribute_val,
                                          void *extra_state);
typedef void(MPI_Session_errhandler_function)(MPI_Session *session, int *errorcode, ...);

/*
 * The first two fields are private to the library: they hold the received byte count (low 32
 * bits, then the high bits shifted left by one) and the cancelled flag (bit 0).
 */
typedef struct MPI_Status {
    int count_lo;
    int count_hi_and_cancelled;
    int MPI_SOURCE;
    int MPI_TAG;
    int MPI_ERROR;
} MPI_Status;

/*
 * The mpi_f08 module's TYPE(MPI_Status) as C sees it, and the Fortran INTEGER status of the
 * mpi module and mpif.h (MPI_F_STATUS_SIZE integers, the public fields at the indices below),
 * both laid out as MPICH lays them out; MPI_Status_c2f08 and its kin convert (MPI-4 19.3.5).
 */
typedef struct {
    MPI_Fint count_lo;
    MPI_Fint count_hi_and_cancelled;
    MPI_Fint MPI_SOURCE;
    MPI_Fint MPI_TAG;
    MPI_Fint MPI_ERROR;
} MPI_F08_status;
#define MPI_F_STATUS_SIZE 5
#define MPI_F_SOURCE 2
#define MPI_F_TAG 3
#define MPI_F_ERROR 4
/* The mpi_f08 module's MPI_STATUS_IGNORE and MPI_STATUSES_IGNORE seen from C. */
extern MPI_F08_status *MPI_F08_STATUS_IGNORE;
extern MPI_F08_status *MPI_F08_STATUSES_IGNORE;

/* The callbacks of a generalized request (MPI_Grequest_start). */
typedef int(MPI_Grequest_query_function)(void *extra_state, MPI_Status *status);
typedef int(MPI_Grequest_free_function)(void *extra_state);
typedef int(MPI_Grequest_cancel_function)(void *extra_state, int complete);

/* ---- Null handles ------------------------------------------------------------------------- */

#define MPI_COMM_NULL         ((MPI_Comm)0x04000000)
#define MPI_GROUP_NULL        ((MPI_Group)0x08000000)
#define MPI_DATATYPE_NULL     ((MPI_Datatype)0x0c000000)
#define MPI_ERRHANDLER_NULL   ((MPI_Errhandler)0x14000000)
#define MPI_OP_NULL           ((MPI_Op)0x18000000)
#define MPI_INFO_NULL         ((MPI_Info)0x1c000000)
#define MPI_INFO_ENV          ((MPI_Info)0x5c000001)
#define MPI_REQUEST_NULL      ((MPI_Request)0x2c000000)
#define MPI_MESSAGE_NULL      ((MPI_Message)0x2c000000)
#define MPI_MESSAGE_NO_PROC   ((MPI_Message)0x6c000000)

/* Predefined reduction operations */
#define MPI_MAX       ((MPI_Op)0x58000001)
#define MPI_MIN       ((MPI_Op)0x58000002)
#define MPI_SUM       ((MPI_Op)0x58000003)
#define MPI_PROD      ((MPI_Op)0x58000004)
#define MPI_LAND      ((MPI_Op)0x58000005)
#define MPI_BAND      ((MPI_Op)0x58000006)
#define MPI_LOR       ((MPI_Op)0x58000007)
#define MPI_BOR       ((MPI_Op)0x58000008)
#define MPI_LXOR      ((MPI_Op)0x58000009)
#define MPI_BXOR      ((MPI_Op)0x5800000a)
#define MPI_MINLOC    ((MPI_Op)0x5800000b)
#define MPI_MAXLOC    ((MPI_Op)0x5800000c)
#define MPI_REPLACE   ((MPI_Op)0x5800000d)
#define MPI_NO_OP     ((MPI_Op)0x5800000e)

/* ---- Predefined communicators, group and error handlers --------------------------------------- */

#define MPI_COMM_WORLD        ((MPI_Comm)0x44000000)
#define MPI_COMM_SELF         ((MPI_Comm)0x44000001)
#define MPI_GROUP_EMPTY       ((MPI_Group)0x48000000)

#define MPI_ERRORS_ARE_FATAL  ((MPI_Errhandler)0x54000000)
#define MPI_ERRORS_RETURN     ((MPI_Errhandler)0x54000001)
#define MPI_ERRORS_ABORT      ((MPI_Errhandler)0x54000003)

/* ---- Predefined datatypes ----------------------------------------------------------------- */
/* Builtin handles carry the size of one element in bits 8..15. */

#define MPI_CHAR                   ((MPI_Datatype)0x4c000101)
#define MPI_SIGNED_CHAR            ((MPI_Datatype)0x4c000118)
#define MPI_UNSIGNED_CHAR          ((MPI_Datatype)0x4c000102)
#define MPI_BYTE                   ((MPI_Datatype)0x4c00010d)
#define MPI_WCHAR                  ((MPI_Datatype)0x4c00040e)
#define MPI_SHORT                  ((MPI_Datatype)0x4c000203)
#define MPI_UNSIGNED_SHORT         ((MPI_Datatype)0x4c000204)
#define MPI_INT                    ((MPI_Datatype)0x4c000405)
#define MPI_UNSIGNED               ((MPI_Datatype)0x4c000406)
#define MPI_LONG                   ((MPI_Datatype)0x4c000807)
#define MPI_UNSIGNED_LONG          ((MPI_Datatype)0x4c000808)
#define MPI_LONG_LONG_INT          ((MPI_Datatype)0x4c000809)
#define MPI_LONG_LONG              MPI_LONG_LONG_INT
#define MPI_UNSIGNED_LONG_LONG     ((MPI_Datatype)0x4c000819)
#define MPI_FLOAT                  ((MPI_Datatype)0x4c00040a)
#define MPI_DOUBLE                 ((MPI_Datatype)0x4c00080b)
#define MPI_LONG_DOUBLE            ((MPI_Datatype)0x4c00100c)
#define MPI_PACKED                 ((MPI_Datatype)0x4c00010f)
/* MPI-1's bound markers (removed in MPI-3; MPICH's header keeps them): MPI_Type_struct and
   MPI_Type_create_struct take their displacements as the lower and upper bound. */
#define MPI_LB                     ((MPI_Datatype)0x4c000010)
#define MPI_UB                     ((MPI_Datatype)0x4c000011)

#define MPI_INT8_T                 ((MPI_Datatype)0x4c000137)
#define MPI_INT16_T                ((MPI_Datatype)0x4c000238)
#define MPI_INT32_T                ((MPI_Datatype)0x4c000439)
#define MPI_INT64_T                ((MPI_Datatype)0x4c00083a)
#define MPI_UINT8_T                ((MPI_Datatype)0x4c00013b)
#define MPI_UINT16_T               ((MPI_Datatype)0x4c00023c)
#define MPI_UINT32_T               ((MPI_Datatype)0x4c00043d)
#define MPI_UINT64_T               ((MPI_Datatype)0x4c00083e)

#define MPI_C_BOOL                 ((MPI_Datatype)0x4c00013f)
/* Fortran LOGICAL (4 bytes), for C code that handles Fortran data. */
#define MPI_LOGICAL                ((MPI_Datatype)0x4c00041d)
#define MPI_C_FLOAT_COMPLEX        ((MPI_Datatype)0x4c000840)
#define MPI_C_COMPLEX              MPI_C_FLOAT_COMPLEX
#define MPI_C_DOUBLE_COMPLEX       ((MPI_Datatype)0x4c001041)
#define MPI_C_LONG_DOUBLE_COMPLEX  ((MPI_Datatype)0x4c002042)

#define MPI_AINT                   ((MPI_Datatype)0x4c000843)
#define MPI_OFFSET                 ((MPI_Datatype)0x4c000844)
#define MPI_COUNT                  ((MPI_Datatype)0x4c000845)

/* MPICH's extension: C's _Float16, IEEE half precision (2 bytes). Reductions: MPI_SUM, MPI_PROD,
 * MPI_MAX, MPI_MIN, computed in float and rounded once to nearest, ties to even. */
#define MPIX_C_FLOAT16             ((MPI_Datatype)0x4c000246)

/* Value-and-index pairs for MINLOC/MAXLOC: struct { T value; int index; }, padded as C pads. */
#define MPI_FLOAT_INT              ((MPI_Datatype)0x8c000000)
#define MPI_DOUBLE_INT             ((MPI_Datatype)0x8c000001)
#define MPI_LONG_INT               ((MPI_Datatype)0x8c000002)
#define MPI_SHORT_INT              ((MPI_Datatype)0x8c000003)
#define MPI_LONG_DOUBLE_INT        ((MPI_Datatype)0x8c000004)
#define MPI_2INT                   ((MPI_Datatype)0x4c000816)

/* ---- Special values ----------------------------------------------------------------------- */

#define MPI_PROC_NULL         (-1)
#define MPI_ANY_SOURCE        (-2)
#define MPI_ROOT              (-3)
#define MPI_ANY_TAG           (-1)
#define MPI_UNDEFINED         (-32766)
#define MPI_KEYVAL_INVALID    0x24000000

/* Topology kinds (MPI_Topo_test), and the weights sentinels of distributed graphs. */
#define MPI_GRAPH             1
#define MPI_CART              2
#define MPI_DIST_GRAPH        3
extern int * const MPI_UNWEIGHTED;
extern int * const MPI_WEIGHTS_EMPTY;

/* Predefined attributes of MPI_COMM_WORLD (MPI_Comm_get_attr). */
#define MPI_TAG_UB            0x64400001
#define MPI_HOST              0x64400003
#define MPI_IO                0x64400005
#define MPI_WTIME_IS_GLOBAL   0x64400007
#define MPI_UNIVERSE_SIZE     0x64400009
#define MPI_LASTUSEDCODE      0x6440000b
#define MPI_APPNUM            0x6440000d

/* Predefined attribute callbacks; the DUP ones copy the value (MPICH's MPIR_Dup_fn). */
int MPIR_Dup_fn(MPI_Comm oldcomm, int keyval, void *extra_state, void *attribute_val_in,
                void *attribute_val_out, int *flag);
#define MPI_COMM_NULL_COPY_FN    ((MPI_Comm_copy_attr_function *)0)
#define MPI_COMM_NULL_DELETE_FN  ((MPI_Comm_delete_attr_function *)0)
#define MPI_COMM_DUP_FN          ((MPI_Comm_copy_attr_function *)MPIR_Dup_fn)
#define MPI_TYPE_NULL_COPY_FN    ((MPI_Type_copy_attr_function *)0)
#define MPI_TYPE_NULL_DELETE_FN  ((MPI_Type_delete_attr_function *)0)
#define MPI_TYPE_DUP_FN          ((MPI_Type_copy_attr_function *)MPIR_Dup_fn)
#define MPI_NULL_COPY_FN         ((MPI_Copy_function *)0)
#define MPI_NULL_DELETE_FN       ((MPI_Delete_function *)0)
#define MPI_WIN_NULL_COPY_FN     ((MPI_Win_copy_attr_function *)0)
#define MPI_WIN_NULL_DELETE_FN   ((MPI_Win_delete_attr_function *)0)
#define MPI_WIN_DUP_FN           ((MPI_Win_copy_attr_function *)MPIR_Dup_fn)

#define MPI_BOTTOM            ((void *)0)
#define MPI_IN_PLACE          ((void *)-1)
#define MPI_STATUS_IGNORE     ((MPI_Status *)1)
#define MPI_STATUSES_IGNORE   ((MPI_Status *)1)

/* Handle conversion between C and Fortran: with MPICH's ABI a Fortran handle is the C handle's
 * integer value, so each conversion is a cast (macros, as in MPICH's header: no symbols). */
#define MPI_Comm_c2f(h) ((MPI_Fint)(h))
#define MPI_Comm_f2c(h) ((MPI_Comm)(h))
#define MPI_Type_c2f(h) ((MPI_Fint)(h))
#define MPI_Type_f2c(h) ((MPI_Datatype)(h))
#define MPI_Group_c2f(h) ((MPI_Fint)(h))
#define MPI_Group_f2c(h) ((MPI_Group)(h))
#define MPI_Info_c2f(h) ((MPI_Fint)(h))
#define MPI_Info_f2c(h) ((MPI_Info)(h))
#define MPI_Request_c2f(h) ((MPI_Fint)(h))
#define MPI_Request_f2c(h) ((MPI_Request)(h))
#define MPI_Op_c2f(h) ((MPI_Fint)(h))
#define MPI_Op_f2c(h) ((MPI_Op)(h))
#define MPI_Errhandler_c2f(h) ((MPI_Fint)(h))
#define MPI_Errhandler_f2c(h) ((MPI_Errhandler)(h))
#define MPI_Win_c2f(h) ((MPI_Fint)(h))
#define MPI_Win_f2c(h) ((MPI_Win)(h))
#define MPI_Message_c2f(h) ((MPI_Fint)(h))
#define MPI_Message_f2c(h) ((MPI_Message)(h))
#define MPI_Session_c2f(h) ((MPI_Fint)(h))
#define MPI_Session_f2c(h) ((MPI_Session)(h))
#define PMPI_Comm_c2f(h) ((MPI_Fint)(h))
#define PMPI_Comm_f2c(h) ((MPI_Comm)(h))
#define PMPI_Type_c2f(h) ((MPI_Fint)(h))
#define PMPI_Type_f2c(h) ((MPI_Datatype)(h))
#define PMPI_Group_c2f(h) ((MPI_Fint)(h))
#define PMPI_Group_f2c(h) ((MPI_Group)(h))
#define PMPI_Info_c2f(h) ((MPI_Fint)(h))
#define PMPI_Info_f2c(h) ((MPI_Info)(h))
#define PMPI_Request_c2f(h) ((MPI_Fint)(h))
#define PMPI_Request_f2c(h) ((MPI_Request)(h))
#define PMPI_Op_c2f(h) ((MPI_Fint)(h))
#define PMPI_Op_f2c(h) ((MPI_Op)(h))
#define PMPI_Errhandler_c2f(h) ((MPI_Fint)(h))
#define PMPI_Errhandler_f2c(h) ((MPI_Errhandler)(h))
#define PMPI_Win_c2f(h) ((MPI_Fint)(h))
#define PMPI_Win_f2c(h) ((MPI_Win)(h))
#define PMPI_Message_c2f(h) ((MPI_Fint)(h))
#define PMPI_Message_f2c(h) ((MPI_Message)(h))
#define PMPI_Session_c2f(h) ((MPI_Fint)(h))
#define PMPI_Session_f2c(h) ((MPI_Session)(h))

/* Upper bound on the bookkeeping MPI_Bsend adds to each message in the attached buffer. */
#define MPI_BSEND_OVERHEAD    96

#define MPI_MAX_PROCESSOR_NAME          128
#define MPI_MAX_ERROR_STRING            512
#define MPI_MAX_LIBRARY_VERSION_STRING  8192
#define MPI_MAX_INFO_KEY                255
#define MPI_MAX_INFO_VAL                1024

#define MPI_THREAD_SINGLE     0
#define MPI_THREAD_FUNNELED   1
#define MPI_THREAD_SERIALIZED 2
#define MPI_THREAD_MULTIPLE   3

/* Results of MPI_Comm_compare. */
#define MPI_IDENT             0
#define MPI_CONGRUENT         1
#define MPI_SIMILAR           2
#define MPI_UNEQUAL           3

/* Split types of MPI_Comm_split_type: the ranks of one host; MPI-4's hardware-guided split
 * (info key "mpi_hw_resource_type", Ferry knows "mpi_shared_memory") and unguided split. */
#define MPI_COMM_TYPE_SHARED  1
#define MPI_COMM_TYPE_HW_GUIDED 2
#define MPI_COMM_TYPE_HW_UNGUIDED 3
/* MPICH's split by a neighbourhood that info hints name: Ferry knows none (MPI_COMM_NULL). */
#define MPIX_COMM_TYPE_NEIGHBORHOOD 4

/* ---- Error classes ------------------------------------------------------------------------ */

#define MPI_SUCCESS                   0
#define MPI_ERR_BUFFER                1
#define MPI_ERR_COUNT                 2
#define MPI_ERR_TYPE                  3
#define MPI_ERR_TAG                   4
#define MPI_ERR_COMM                  5
#define MPI_ERR_RANK                  6
#define MPI_ERR_ROOT                  7
#define MPI_ERR_GROUP                 8
#define MPI_ERR_OP                    9
#define MPI_ERR_TOPOLOGY              10
#define MPI_ERR_DIMS                  11
#define MPI_ERR_ARG                   12
#define MPI_ERR_UNKNOWN               13
#define MPI_ERR_TRUNCATE              14
#define MPI_ERR_OTHER                 15
#define MPI_ERR_INTERN                16
#define MPI_ERR_IN_STATUS             17
#define MPI_ERR_PENDING               18
#define MPI_ERR_REQUEST               19
#define MPI_ERR_ACCESS                20
#define MPI_ERR_AMODE                 21
#define MPI_ERR_BAD_FILE              22
#define MPI_ERR_CONVERSION            23
#define MPI_ERR_DUP_DATAREP           24
#define MPI_ERR_FILE_EXISTS           25
#define MPI_ERR_FILE_IN_USE           26
#define MPI_ERR_FILE                  27
#define MPI_ERR_INFO                  28
#define MPI_ERR_INFO_KEY              29
#define MPI_ERR_INFO_VALUE            30
#define MPI_ERR_INFO_NOKEY            31
#define MPI_ERR_IO                    32
#define MPI_ERR_NAME                  33
#define MPI_ERR_NO_MEM                34
#define MPI_ERR_NOT_SAME              35
#define MPI_ERR_NO_SPACE              36
#define MPI_ERR_NO_SUCH_FILE          37
#define MPI_ERR_PORT                  38
#define MPI_ERR_QUOTA                 39
#define MPI_ERR_READ_ONLY             40
#define MPI_ERR_SERVICE               41
#define MPI_ERR_SPAWN                 42
#define MPI_ERR_UNSUPPORTED_DATAREP   43
#define MPI_ERR_UNSUPPORTED_OPERATION 44
#define MPI_ERR_WIN                   45
#define MPI_ERR_BASE                  46
#define MPI_ERR_LOCKTYPE              47
#define MPI_ERR_KEYVAL                48
#define MPI_ERR_RMA_CONFLICT          49
#define MPI_ERR_RMA_SYNC              50
#define MPI_ERR_SIZE                  51
#define MPI_ERR_DISP                  52
#define MPI_ERR_ASSERT                53
#define MPI_ERR_RMA_RANGE             55
#define MPI_ERR_RMA_ATTACH            56
#define MPI_ERR_RMA_SHARED            57
#define MPI_ERR_RMA_FLAVOR            58
#define MPI_T_ERR_MEMORY              59
#define MPI_T_ERR_NOT_INITIALIZED     60
#define MPI_T_ERR_CANNOT_INIT         61
#define MPI_T_ERR_INVALID_INDEX       62
#define MPI_T_ERR_INVALID_ITEM        63
#define MPI_T_ERR_INVALID_HANDLE      64
#define MPI_T_ERR_OUT_OF_HANDLES      65
#define MPI_T_ERR_OUT_OF_SESSIONS     66
#define MPI_T_ERR_INVALID_SESSION     67
#define MPI_T_ERR_CVAR_SET_NOT_NOW    68
#define MPI_T_ERR_CVAR_SET_NEVER      69
#define MPI_T_ERR_PVAR_NO_STARTSTOP   70
#define MPI_T_ERR_PVAR_NO_WRITE       71
#define MPI_T_ERR_PVAR_NO_ATOMIC      72
#define MPI_T_ERR_INVALID_NAME        73
#define MPI_T_ERR_INVALID             74
#define MPI_ERR_SESSION               75
#define MPI_ERR_PROC_ABORTED          76
#define MPI_ERR_VALUE_TOO_LARGE       77
#define MPI_T_ERR_NOT_SUPPORTED       78
/* Process failure (fault-tolerant MPI, see mpi-ext.h for the calls), at MPICH's values. */
#define MPIX_ERR_PROC_FAILED          101
#define MPIX_ERR_PROC_FAILED_PENDING  102
#define MPIX_ERR_REVOKED              103
#define MPI_ERR_LASTCODE              0x3fffffff

/* ---- Datatype introspection and distributed arrays ---------------------------------------- */
/* Constructors as MPI_Type_get_envelope names them. */
#define MPI_COMBINER_NAMED              1
#define MPI_COMBINER_DUP                2
#define MPI_COMBINER_CONTIGUOUS         3
#define MPI_COMBINER_VECTOR             4
#define MPI_COMBINER_HVECTOR_INTEGER    5
#define MPI_COMBINER_HVECTOR            6
#define MPI_COMBINER_INDEXED            7
#define MPI_COMBINER_HINDEXED_INTEGER   8
#define MPI_COMBINER_HINDEXED           9
#define MPI_COMBINER_INDEXED_BLOCK      10
#define MPI_COMBINER_STRUCT_INTEGER     11
#define MPI_COMBINER_STRUCT             12
#define MPI_COMBINER_SUBARRAY           13
#define MPI_COMBINER_DARRAY             14
#define MPI_COMBINER_F90_REAL           15
#define MPI_COMBINER_F90_COMPLEX        16
#define MPI_COMBINER_F90_INTEGER        17
#define MPI_COMBINER_RESIZED            18
#define MPI_COMBINER_HINDEXED_BLOCK     19
/* Array orders and distributions (MPI_Type_create_subarray, MPI_Type_create_darray). */
#define MPI_ORDER_C                     56
#define MPI_ORDER_FORTRAN               57
#define MPI_DISTRIBUTE_BLOCK            121
#define MPI_DISTRIBUTE_CYCLIC           122
#define MPI_DISTRIBUTE_NONE             123
#define MPI_DISTRIBUTE_DFLT_DARG        (-49767)
/* Type classes (MPI_Type_match_size) and the longest object name with its NUL. */
#define MPI_TYPECLASS_REAL              1
#define MPI_TYPECLASS_INTEGER           2
#define MPI_TYPECLASS_COMPLEX           3
#define MPI_MAX_OBJECT_NAME             128
/* The longest port name with its NUL (MPI_Open_port). */
#define MPI_MAX_PORT_NAME               256
/* MPI_Comm_spawn(_multiple): no arguments, and no per-process error codes wanted. */
#define MPI_ARGV_NULL                   ((char **)0)
#define MPI_ARGVS_NULL                  ((char ***)0)
#define MPI_ERRCODES_IGNORE             ((int *)0)
/* MPI-4 sessions: the null session, the longest process set name and string tag. */
#define MPI_SESSION_NULL                ((MPI_Session)0x38000000)
#define MPI_MAX_PSET_NAME_LEN           256
#define MPI_MAX_STRINGTAG_LEN           256

/* ---- The tools information interface (MPI_T_*) ----------------------------------------- */
/* Opaque handles, as MPICH spells them (pointers to structures the library defines). */
struct MPIR_T_enum_s;
struct MPIR_T_cvar_handle_s;
struct MPIR_T_pvar_handle_s;
struct MPIR_T_pvar_session_s;
struct MPIR_T_event_registration_s;
struct MPIR_T_event_instance_s;
typedef struct MPIR_T_enum_s *MPI_T_enum;
typedef struct MPIR_T_cvar_handle_s *MPI_T_cvar_handle;
typedef struct MPIR_T_pvar_handle_s *MPI_T_pvar_handle;
typedef struct MPIR_T_pvar_session_s *MPI_T_pvar_session;
typedef struct MPIR_T_event_registration_s *MPI_T_event_registration;
typedef struct MPIR_T_event_instance_s *MPI_T_event_instance;
extern struct MPIR_T_pvar_handle_s *const MPI_T_PVAR_ALL_HANDLES;
#define MPI_T_ENUM_NULL         ((MPI_T_enum)0)
#define MPI_T_CVAR_HANDLE_NULL  ((MPI_T_cvar_handle)0)
#define MPI_T_PVAR_HANDLE_NULL  ((MPI_T_pvar_handle)0)
#define MPI_T_PVAR_SESSION_NULL ((MPI_T_pvar_session)0)
/* Verbosity, binding, scope and performance-variable class, with MPICH's values. */
enum {
    MPI_T_VERBOSITY_INVALID = 0,
    MPI_T_VERBOSITY_USER_BASIC = 221,
    MPI_T_VERBOSITY_USER_DETAIL,
    MPI_T_VERBOSITY_USER_ALL,
    MPI_T_VERBOSITY_TUNER_BASIC,
    MPI_T_VERBOSITY_TUNER_DETAIL,
    MPI_T_VERBOSITY_TUNER_ALL,
    MPI_T_VERBOSITY_MPIDEV_BASIC,
    MPI_T_VERBOSITY_MPIDEV_DETAIL,
    MPI_T_VERBOSITY_MPIDEV_ALL
};
enum {
    MPI_T_BIND_INVALID = 0,
    MPI_T_BIND_NO_OBJECT = 9700,
    MPI_T_BIND_MPI_COMM,
    MPI_T_BIND_MPI_DATATYPE,
    MPI_T_BIND_MPI_ERRHANDLER,
    MPI_T_BIND_MPI_FILE,
    MPI_T_BIND_MPI_GROUP,
    MPI_T_BIND_MPI_OP,
    MPI_T_BIND_MPI_REQUEST,
    MPI_T_BIND_MPI_WIN,
    MPI_T_BIND_MPI_MESSAGE,
    MPI_T_BIND_MPI_INFO
};
enum {
    MPI_T_SCOPE_INVALID = 0,
    MPI_T_SCOPE_CONSTANT = 60438,
    MPI_T_SCOPE_READONLY,
    MPI_T_SCOPE_LOCAL,
    MPI_T_SCOPE_GROUP,
    MPI_T_SCOPE_GROUP_EQ,
    MPI_T_SCOPE_ALL,
    MPI_T_SCOPE_ALL_EQ
};
enum {
    MPI_T_PVAR_CLASS_INVALID = 0,
    MPI_T_PVAR_CLASS_STATE = 240,
    MPI_T_PVAR_CLASS_LEVEL,
    MPI_T_PVAR_CLASS_SIZE,
    MPI_T_PVAR_CLASS_PERCENTAGE,
    MPI_T_PVAR_CLASS_HIGHWATERMARK,
    MPI_T_PVAR_CLASS_LOWWATERMARK,
    MPI_T_PVAR_CLASS_COUNTER,
    MPI_T_PVAR_CLASS_AGGREGATE,
    MPI_T_PVAR_CLASS_TIMER,
    MPI_T_PVAR_CLASS_GENERIC
};
/* Events (MPI-4): callback safety requirements, source ordering and the callbacks' types. */
typedef enum MPI_T_cb_safety {
    MPI_T_CB_REQUIRE_NONE = 0,
    MPI_T_CB_REQUIRE_MPI_RESTRICTED,
    MPI_T_CB_REQUIRE_THREAD_SAFE,
    MPI_T_CB_REQUIRE_ASYNC_SIGNAL_SAFE
} MPI_T_cb_safety;
typedef enum MPI_T_source_order {
    MPI_T_SOURCE_ORDERED = 0,
    MPI_T_SOURCE_UNORDERED
} MPI_T_source_order;
typedef void (MPI_T_event_cb_function)(MPI_T_event_instance event_instance,
                                       MPI_T_event_registration event_registration,
                                       MPI_T_cb_safety cb_safety, void *user_data);
typedef void (MPI_T_event_free_cb_function)(MPI_T_event_registration event_registration,
                                            MPI_T_cb_safety cb_safety, void *user_data);
typedef void (MPI_T_event_dropped_cb_function)(MPI_Count count,
                                               MPI_T_event_registration event_registration,
                                               int source_index, MPI_T_cb_safety cb_safety,
                                               void *user_data);
/* ---- One-sided communication (windows) ---------------------------------------------------- */
#define MPI_WIN_NULL          ((MPI_Win)0x20000000)
/* Lock types and assertions of the synchronisation calls. */
#define MPI_LOCK_EXCLUSIVE    234
#define MPI_LOCK_SHARED       235
#define MPI_MODE_NOCHECK      1024
#define MPI_MODE_NOSTORE      2048
#define MPI_MODE_NOPUT        4096
#define MPI_MODE_NOPRECEDE    8192
#define MPI_MODE_NOSUCCEED    16384
/* Predefined attribute keys of a window, and the values of two of them. */
#define MPI_WIN_BASE          0x66000001
#define MPI_WIN_SIZE          0x66000003
#define MPI_WIN_DISP_UNIT     0x66000005
#define MPI_WIN_CREATE_FLAVOR 0x66000007
#define MPI_WIN_MODEL         0x66000009
#define MPI_WIN_FLAVOR_CREATE   1
#define MPI_WIN_FLAVOR_ALLOCATE 2
#define MPI_WIN_FLAVOR_DYNAMIC  3
#define MPI_WIN_FLAVOR_SHARED   4
#define MPI_WIN_SEPARATE        1
#define MPI_WIN_UNIFIED         2

/* ---- Functions, and the same under their PMPI_ names (the profiling interface) ---------- */

#include "ferry_mpi_functions.h"
#include "ferry_pmpi_functions.h"
#include "ferry_mpi_large_count.h"
#include "ferry_mpi_io.h"

#if defined(__cplusplus)
}
#endif

#endif /* FERRY_MPI_H */

/*
 * attributes.c -- the Fortran bindings of attribute caching, written by hand: a Fortran
 * attribute is an INTEGER(KIND=MPI_ADDRESS_KIND) value where C stores a pointer, the
 * predefined attributes have Fortran keyvals of their own (MPICH's: the C keyval + 1) whose
 * values Fortran reads as integers where C reads a pointer to one, and Fortran copy and
 * delete callbacks take every argument by reference with IERROR last.
 */
#include "ferry_fortran.h"

typedef void(ferry_f_copy_fn)(MPI_Fint *oldobj, MPI_Fint *keyval, MPI_Aint *extra_state,
                              MPI_Aint *value_in, MPI_Aint *value_out, MPI_Fint *flag,
                              MPI_Fint *ierror);
typedef void(ferry_f_delete_fn)(MPI_Fint *obj, MPI_Fint *keyval, MPI_Aint *value,
                                MPI_Aint *extra_state, MPI_Fint *ierror);

/* A keyval made from Fortran: its callbacks and the program's extra state, given to C as the
 * extra state. It lives as long as the library: attributes may outlive MPI_Comm_free_keyval. */
struct ferry_f_keyval {
    ferry_f_copy_fn *copy;
    ferry_f_delete_fn *del;
    MPI_Aint extra_state;
};

/* Communicators and datatypes are both ints, so one trampoline serves both kinds. */
static int copy_trampoline(int oldobj, int keyval, void *extra, void *in, void *out, int *flag)
{
    struct ferry_f_keyval *k = extra;
    MPI_Fint obj = oldobj, key = keyval, fflag = 0, ierror = MPI_SUCCESS;
    MPI_Aint value_in = (MPI_Aint)in, value_out = 0;
    k->copy(&obj, &key, &k->extra_state, &value_in, &value_out, &fflag, &ierror);
    *flag = fflag != 0;
    if (*flag)
        *(void **)out = (void *)value_out;
    return ierror;
}

static int delete_trampoline(int obj, int keyval, void *value, void *extra)
{
    struct ferry_f_keyval *k = extra;
    MPI_Fint o = obj, key = keyval, ierror = MPI_SUCCESS;
    MPI_Aint v = (MPI_Aint)value;
    k->del(&o, &key, &v, &k->extra_state, &ierror);
    return ierror;
}

/* MPI_COMM_NULL_COPY_FN, MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN and the TYPE ones: Fortran
 * procedures a program passes to the keyval constructors (or calls). */
static void null_copy(MPI_Fint *oldobj, MPI_Fint *keyval, MPI_Aint *extra_state, MPI_Aint *value_in,
                      MPI_Aint *value_out, MPI_Fint *flag, MPI_Fint *ierror)
{
    (void)oldobj, (void)keyval, (void)extra_state, (void)value_in, (void)value_out;
    *flag = 0;
    *ierror = MPI_SUCCESS;
}

static void dup_copy(MPI_Fint *oldobj, MPI_Fint *keyval, MPI_Aint *extra_state, MPI_Aint *value_in,
                     MPI_Aint *value_out, MPI_Fint *flag, MPI_Fint *ierror)
{
    (void)oldobj, (void)keyval, (void)extra_state;
    *value_out = *value_in;
    *flag = 1;
    *ierror = MPI_SUCCESS;
}

static void null_delete(MPI_Fint *obj, MPI_Fint *keyval, MPI_Aint *value, MPI_Aint *extra_state,
                        MPI_Fint *ierror)
{
    (void)obj, (void)keyval, (void)value, (void)extra_state;
    *ierror = MPI_SUCCESS;
}

/* All eight spellings MPICH gives each of them (mpi_x_, mpi_x__, mpi_x, MPI_X, and PMPI's). */
#define CALLBACK_SPELLINGS(target, lower, upper)                                               \
    FERRY_F_ALIAS(target, lower "_") FERRY_F_SPELLINGS(target, lower, upper)                    \
    FERRY_F_ALIAS(target, "p" lower "_") FERRY_F_SPELLINGS(target, "p" lower, "P" upper)
CALLBACK_SPELLINGS(null_copy, "mpi_comm_null_copy_fn", "MPI_COMM_NULL_COPY_FN")
CALLBACK_SPELLINGS(null_copy, "mpi_type_null_copy_fn", "MPI_TYPE_NULL_COPY_FN")
CALLBACK_SPELLINGS(dup_copy, "mpi_comm_dup_fn", "MPI_COMM_DUP_FN")
CALLBACK_SPELLINGS(dup_copy, "mpi_type_dup_fn", "MPI_TYPE_DUP_FN")
CALLBACK_SPELLINGS(null_delete, "mpi_comm_null_delete_fn", "MPI_COMM_NULL_DELETE_FN")
CALLBACK_SPELLINGS(null_delete, "mpi_type_null_delete_fn", "MPI_TYPE_NULL_DELETE_FN")

/* The C keyval of a predefined attribute given by its Fortran keyval, or 0 for any other. */
static int predefined_c_keyval(MPI_Fint keyval)
{
    switch (keyval) {
    case MPI_TAG_UB + 1:
    case MPI_HOST + 1:
    case MPI_IO + 1:
    case MPI_WTIME_IS_GLOBAL + 1:
    case MPI_UNIVERSE_SIZE + 1:
    case MPI_LASTUSEDCODE + 1:
    case MPI_APPNUM + 1:
        return keyval - 1;
    default:
        return 0;
    }
}

/* The body of a keyval constructor: comm or type (`create` is the C function to call). */
#define CREATE_KEYVAL(name, weak, create, unused)                                                    \
    weak void name(ferry_f_copy_fn *copy_fn, ferry_f_delete_fn *delete_fn, MPI_Fint *keyval,   \
                   MPI_Aint *extra_state, MPI_Fint *ierror)                                    \
    {                                                                                          \
        struct ferry_f_keyval *k = malloc(sizeof *k);                                          \
        if (!k) {                                                                              \
            *ierror = ferry_f_no_memory();                                                     \
            return;                                                                            \
        }                                                                                      \
        k->copy = copy_fn;                                                                     \
        k->del = delete_fn;                                                                    \
        k->extra_state = *extra_state;                                                         \
        *ierror = create(copy_trampoline, delete_trampoline, keyval, k);                       \
        if (*ierror != MPI_SUCCESS)                                                            \
            free(k);                                                                           \
    }

#define SET_ATTR(name, weak, set, value_type)                                                  \
    weak void name(MPI_Fint *obj, MPI_Fint *keyval, value_type *value, MPI_Fint *ierror)       \
    {                                                                                          \
        *ierror = set(*obj, *keyval, (void *)(MPI_Aint)*value);                                \
    }

/* A predefined attribute's C value is a pointer to an int; the others hold the value. */
#define GET_ATTR(name, weak, get, value_type)                                                  \
    weak void name(MPI_Fint *obj, MPI_Fint *keyval, value_type *value, MPI_Fint *flag,         \
                   MPI_Fint *ierror)                                                           \
    {                                                                                          \
        int predefined = predefined_c_keyval(*keyval);                                         \
        void *v = NULL;                                                                        \
        *ierror = get(*obj, predefined ? predefined : *keyval, &v, flag);                      \
        if (*ierror == MPI_SUCCESS && *flag)                                                   \
            *value = (value_type)(predefined ? *(int *)v : (MPI_Aint)v);                       \
    }

/* Each binding as mpi_x_ and pmpi_x_ with their spellings. */
#define BOTH(macro, lower, upper, cname, value_type)                                           \
    macro(mpi_##lower##_, FERRY_F_WEAK, MPI_##cname, value_type)                               \
    FERRY_F_SPELLINGS(mpi_##lower##_, "mpi_" #lower, "MPI_" #upper)                 \
    macro(pmpi_##lower##_, , PMPI_##cname, value_type)                                         \
    FERRY_F_SPELLINGS(pmpi_##lower##_, "pmpi_" #lower, "PMPI_" #upper)

BOTH(CREATE_KEYVAL, comm_create_keyval, COMM_CREATE_KEYVAL, Comm_create_keyval, -)
BOTH(CREATE_KEYVAL, type_create_keyval, TYPE_CREATE_KEYVAL, Type_create_keyval, -)
BOTH(SET_ATTR, comm_set_attr, COMM_SET_ATTR, Comm_set_attr, MPI_Aint)
BOTH(SET_ATTR, type_set_attr, TYPE_SET_ATTR, Type_set_attr, MPI_Aint)
BOTH(SET_ATTR, attr_put, ATTR_PUT, Attr_put, MPI_Fint)
BOTH(GET_ATTR, comm_get_attr, COMM_GET_ATTR, Comm_get_attr, MPI_Aint)
BOTH(GET_ATTR, type_get_attr, TYPE_GET_ATTR, Type_get_attr, MPI_Aint)
BOTH(GET_ATTR, attr_get, ATTR_GET, Attr_get, MPI_Fint)

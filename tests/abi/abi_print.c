/*
 * Prints the ABI facts of whichever mpi.h it is compiled against, one "KEY VALUE" per line:
 * every constant of abi_constants.def, and the size, alignment, signedness and C type of the
 * handle and integer types and the layout of MPI_Status. check.sh compiles it against Ferry's
 * header and against MPICH's and diffs the two outputs; crates/ferry-mpi/tests/abi_consts.rs
 * compares Ferry's output with the Rust constants. Needs C11 (_Generic, _Alignof).
 */
#include <mpi.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define INT(name) printf("%s %lld\n", #name, (long long)(name));
#define PTR(name) printf("%s %lld\n", #name, (long long)(intptr_t)(name));
/* A function the library defines: its address differs between libraries (and this program
 * links none), so only that it names a function pointer: sizeof does not use the function. */
#define FN(name) printf("%s %d\n", #name, (int)(sizeof(name) == sizeof(void (*)(void))));

#define CTYPE(x)                                                                               \
    _Generic((x),                                                                              \
        signed char: "signed char", unsigned char: "unsigned char",                           \
        short: "short", unsigned short: "unsigned short",                                     \
        int: "int", unsigned int: "unsigned int",                                             \
        long: "long", unsigned long: "unsigned long",                                         \
        long long: "long long", unsigned long long: "unsigned long long",                     \
        default: "other")

#define TYPE(t)                                                                                \
    printf("sizeof(%s) %zu\n", #t, sizeof(t));                                                 \
    printf("alignof(%s) %zu\n", #t, _Alignof(t));                                              \
    printf("signed(%s) %d\n", #t, (t)-1 < (t)0);                                               \
    printf("ctype(%s) %s\n", #t, CTYPE((t)0));

#define FIELD(t, f)                                                                            \
    printf("offsetof(%s,%s) %zu\n", #t, #f, offsetof(t, f));                                   \
    printf("sizeof(%s.%s) %zu\n", #t, #f, sizeof(((t *)0)->f));

int main(void)
{
#include "abi_constants.def"

    TYPE(MPI_Comm)
    TYPE(MPI_Datatype)
    TYPE(MPI_Request)
    TYPE(MPI_Op)
    TYPE(MPI_Errhandler)
    TYPE(MPI_Group)
    TYPE(MPI_Info)
    TYPE(MPI_Message)
    TYPE(MPI_Aint)
    TYPE(MPI_Offset)
    TYPE(MPI_Count)
    TYPE(MPI_Fint)

    printf("sizeof(MPI_Status) %zu\n", sizeof(MPI_Status));
    printf("alignof(MPI_Status) %zu\n", _Alignof(MPI_Status));
    FIELD(MPI_Status, count_lo)
    FIELD(MPI_Status, count_hi_and_cancelled)
    FIELD(MPI_Status, MPI_SOURCE)
    FIELD(MPI_Status, MPI_TAG)
    FIELD(MPI_Status, MPI_ERROR)

    printf("sizeof(MPI_F08_status) %zu\n", sizeof(MPI_F08_status));
    printf("alignof(MPI_F08_status) %zu\n", _Alignof(MPI_F08_status));
    FIELD(MPI_F08_status, count_lo)
    FIELD(MPI_F08_status, count_hi_and_cancelled)
    FIELD(MPI_F08_status, MPI_SOURCE)
    FIELD(MPI_F08_status, MPI_TAG)
    FIELD(MPI_F08_status, MPI_ERROR)
    return 0;
}

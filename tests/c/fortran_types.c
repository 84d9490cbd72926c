/* ranks: 1 2 4 */
/*
 * Fortran's LOGICAL from C: MPI_LOGICAL is a 4-byte type with .TRUE. = 1 and
 * .FALSE. = 0 (gfortran's values) that every entry point accepts: Bcast,
 * Send/Recv, Type_size; MPI_LAND, MPI_LOR and MPI_LXOR give Fortran truth
 * values; arithmetic operations on it are refused with MPI_ERR_OP.
 */
#define TEST_NAME "fortran_types"
#include "testutil.h"

int main(int argc, char **argv)
{
    TEST_INIT(&argc, &argv);
    int size = -1;
    CALL(MPI_Type_size(MPI_LOGICAL, &size));
    CHECK(size == 4, "MPI_LOGICAL has size %d", size);

    /* Bcast of LOGICALs from the last rank. */
    int flags[3] = { -1, -1, -1 };
    if (me == np - 1) {
        flags[0] = 1;
        flags[1] = 0;
        flags[2] = 1;
    }
    CALL(MPI_Bcast(flags, 3, MPI_LOGICAL, np - 1, MPI_COMM_WORLD));
    CHECK(flags[0] == 1 && flags[1] == 0 && flags[2] == 1, "Bcast gave %d %d %d", flags[0],
          flags[1], flags[2]);

    /* Around the ring. */
    int out = me % 2, in = -1;
    CALL(MPI_Sendrecv(&out, 1, MPI_LOGICAL, (me + 1) % np, 3, &in, 1, MPI_LOGICAL,
                      (me + np - 1) % np, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    CHECK(in == ((me + np - 1) % np) % 2, "Sendrecv gave %d", in);

    /* Reductions: element 0 true everywhere, 1 only on rank 0, 2 nowhere. */
    int mine[3] = { 1, me == 0, 0 }, land[3], lor[3], lxor[3];
    CALL(MPI_Allreduce(mine, land, 3, MPI_LOGICAL, MPI_LAND, MPI_COMM_WORLD));
    CALL(MPI_Allreduce(mine, lor, 3, MPI_LOGICAL, MPI_LOR, MPI_COMM_WORLD));
    CALL(MPI_Allreduce(mine, lxor, 3, MPI_LOGICAL, MPI_LXOR, MPI_COMM_WORLD));
    CHECK(land[0] == 1 && land[1] == (np == 1) && land[2] == 0, "LAND gave %d %d %d", land[0],
          land[1], land[2]);
    CHECK(lor[0] == 1 && lor[1] == 1 && lor[2] == 0, "LOR gave %d %d %d", lor[0], lor[1],
          lor[2]);
    CHECK(lxor[0] == np % 2 && lxor[1] == 1 && lxor[2] == 0, "LXOR gave %d %d %d", lxor[0],
          lxor[1], lxor[2]);

    /* Arithmetic is not defined on LOGICAL. */
    CALL(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    int sum = -1, rc = MPI_Allreduce(mine, &sum, 1, MPI_LOGICAL, MPI_SUM, MPI_COMM_WORLD), cls = -1;
    CHECK(rc != MPI_SUCCESS, "MPI_SUM on MPI_LOGICAL succeeded");
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_OP, "MPI_SUM on MPI_LOGICAL gave class %d", cls);
    rc = MPI_Allreduce(mine, &sum, 1, MPI_LOGICAL, MPI_MAX, MPI_COMM_WORLD);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_OP, "MPI_MAX on MPI_LOGICAL gave class %d", cls);

    CALL(MPI_Finalize());
    if (me == 0)
        printf("fortran_types: ok\n");
    return 0;
}

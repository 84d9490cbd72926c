/* ranks: 1 */
/*
 * The status setters read back: MPI_Status_set_elements(_x) through
 * MPI_Get_count and MPI_Get_elements(_x) for basic types (derived types:
 * status_set_derived.c), counts past 2^31 through the _x variants, and
 * MPI_Status_set_cancelled through MPI_Test_cancelled, neither setter
 * disturbing what the other set; their error classes.
 */
#define TEST_NAME "status_set"
#include "testutil.h"

int main(int argc, char **argv)
{
    MPI_Status st;
    int count = -1, flag = -1, rc, class;
    MPI_Count big = -1;
    TEST_INIT(&argc, &argv);

    CALL(MPI_Status_set_elements(&st, MPI_INT, 7));
    CALL(MPI_Status_set_cancelled(&st, 0));
    CALL(MPI_Get_count(&st, MPI_INT, &count));
    CHECK(count == 7, "Get_count(MPI_INT) after set_elements 7: %d", count);
    CALL(MPI_Get_count(&st, MPI_BYTE, &count));
    CHECK(count == 7 * (int)sizeof(int), "Get_count(MPI_BYTE): %d", count);
    CALL(MPI_Get_elements(&st, MPI_INT, &count));
    CHECK(count == 7, "Get_elements(MPI_INT): %d", count);

    CALL(MPI_Status_set_cancelled(&st, 1));
    CALL(MPI_Test_cancelled(&st, &flag));
    CHECK(flag == 1, "Test_cancelled after set_cancelled 1: %d", flag);
    CALL(MPI_Get_elements(&st, MPI_INT, &count));
    CHECK(count == 7, "set_cancelled changed the elements to %d", count);
    CALL(MPI_Status_set_elements(&st, MPI_INT, 2));
    CALL(MPI_Test_cancelled(&st, &flag));
    CHECK(flag == 1, "set_elements cleared the cancelled flag");
    CALL(MPI_Status_set_cancelled(&st, 0));
    CALL(MPI_Test_cancelled(&st, &flag));
    CHECK(flag == 0, "Test_cancelled after set_cancelled 0: %d", flag);

    MPI_Count many = (MPI_Count)3 << 30;
    CALL(MPI_Status_set_elements_x(&st, MPI_BYTE, many));
    CALL(MPI_Get_elements_x(&st, MPI_BYTE, &big));
    CHECK(big == many, "Get_elements_x after set_elements_x %lld: %lld", (long long)many, (long long)big);
    CALL(MPI_Get_count(&st, MPI_BYTE, &count));
    CHECK(count == MPI_UNDEFINED, "Get_count of 3 GiB: %d", count);
    CALL(MPI_Status_set_elements_x(&st, MPI_DOUBLE, many));
    CALL(MPI_Get_elements_x(&st, MPI_DOUBLE, &big));
    CHECK(big == many, "Get_elements_x(MPI_DOUBLE): %lld", (long long)big);
    CALL(MPI_Get_elements_x(&st, MPI_BYTE, &big));
    CHECK(big == many * 8, "bytes of 3G doubles: %lld", (long long)big);

    CALL(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    rc = MPI_Status_set_elements(&st, MPI_INT, -1);
    MPI_Error_class(rc, &class);
    CHECK(class == MPI_ERR_COUNT, "set_elements with count -1 gave class %d", class);
    rc = MPI_Status_set_elements(&st, MPI_DATATYPE_NULL, 1);
    MPI_Error_class(rc, &class);
    CHECK(class == MPI_ERR_TYPE, "set_elements with MPI_DATATYPE_NULL gave class %d", class);
    CALL(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));

    CALL(MPI_Finalize());
    finalized = 1;
    return 0;
}

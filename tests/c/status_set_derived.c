/* ranks: 1 */
/* mpich: skip MPICH's MPI_Status_set_elements counts copies of a derived type, not its basic elements */
/*
 * MPI_Status_set_elements with derived types, as the standard fixes it: the
 * count is of basic elements, so MPI_Get_elements returns it and
 * MPI_Get_count says MPI_UNDEFINED for a partial copy; a struct of an int
 * and a double, cut after one copy and an int.
 */
#include <stddef.h>

#define TEST_NAME "status_set_derived"
#include "testutil.h"

int main(int argc, char **argv)
{
    MPI_Status st;
    int count = -1;
    TEST_INIT(&argc, &argv);
    MPI_Datatype three;
    CALL(MPI_Type_contiguous(3, MPI_INT, &three));
    CALL(MPI_Type_commit(&three));
    CALL(MPI_Status_set_elements(&st, three, 7));
    CALL(MPI_Get_count(&st, three, &count));
    CHECK(count == MPI_UNDEFINED, "Get_count of 7 ints in copies of 3: %d", count);
    CALL(MPI_Get_elements(&st, three, &count));
    CHECK(count == 7, "Get_elements(three): %d", count);
    CALL(MPI_Get_count(&st, MPI_INT, &count));
    CHECK(count == 7, "Get_count(MPI_INT) after set_elements(three, 7): %d", count);
    CALL(MPI_Status_set_elements(&st, three, 6));
    CALL(MPI_Get_count(&st, three, &count));
    CHECK(count == 2, "Get_count of 6 ints in copies of 3: %d", count);

    /* An int then a double: 3 elements are one copy and an int. */
    struct pair { int i; double d; };
    int lens[2] = { 1, 1 };
    MPI_Aint disps[2] = { offsetof(struct pair, i), offsetof(struct pair, d) };
    MPI_Datatype types[2] = { MPI_INT, MPI_DOUBLE }, mixed;
    CALL(MPI_Type_create_struct(2, lens, disps, types, &mixed));
    CALL(MPI_Type_commit(&mixed));
    CALL(MPI_Status_set_elements(&st, mixed, 3));
    CALL(MPI_Get_elements(&st, mixed, &count));
    CHECK(count == 3, "Get_elements(mixed) after set_elements 3: %d", count);
    CALL(MPI_Get_count(&st, MPI_BYTE, &count));
    CHECK(count == (int)(2 * sizeof(int) + sizeof(double)), "bytes of 3 mixed elements: %d", count);

    CALL(MPI_Type_free(&three));
    CALL(MPI_Type_free(&mixed));
    CALL(MPI_Finalize());
    finalized = 1;
    return 0;
}

/* ranks: 1 2 */
/* env: FERRY_COLL_TABLE=tests/c/tables/malformed.table */
/* expect: fail exit=1 stderr="FERRY_COLL_TABLE=tests/c/tables/malformed.table: line 4: " within=20 */
/* mpich: skip FERRY_COLL_TABLE is Ferry's own variable */
/*
 * A decision table file that does not parse ends the job in MPI_Init, before
 * any communication, with a message naming the file and the line; the job
 * never runs on the built-in table instead.
 */
#define TEST_NAME "coll_table_bad"
#include "testutil.h"

int main(int argc, char **argv)
{
    TEST_INIT(&argc, &argv);
    fail(__LINE__, "MPI_Init accepted a malformed FERRY_COLL_TABLE");
}

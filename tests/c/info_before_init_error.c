/* ranks: 1 2 */
/* expect: fail stderr="Fatal error in MPI_Info_set" within=30 */
/*
 * An info call before MPI_Init that fails has no error handler the program
 * could have set: it is fatal, as the handler a process has before MPI is
 * up, and the message names the call (here: MPI_Info_set on a freed handle).
 */
#define TEST_NAME "info_before_init_error"
#include "testutil.h"

int main(void)
{
    MPI_Info info, stale;
    CALL(MPI_Info_create(&info));
    stale = info;
    CALL(MPI_Info_free(&info));
    MPI_Info_set(stale, "key", "value");
    fprintf(stderr, "MPI_Info_set on a freed info object returned\n");
    return 0;
}

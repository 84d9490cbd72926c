/* ranks: 1 2 4 */
/*
 * MPI_Comm_split_type by hardware, on one host or across several (tests/clusters.sh runs it
 * over six hosts): MPI_COMM_TYPE_SHARED gives each host's ranks; MPI_COMM_TYPE_HW_GUIDED with
 * "mpi_shared_memory" gives the same groups; MPI_COMM_TYPE_HW_UNGUIDED gives them too when
 * the job spans several hosts, and MPI_COMM_NULL on one host (nothing smaller than a host).
 * Each new communicator is checked congruent with the host's and used for an Allreduce.
 */
#define TEST_NAME "split_hosts"
#include "testutil.h"

static void same_as_host(MPI_Comm c, MPI_Comm host, const char *what)
{
    int cmp = -1, one = 1, n = 0, hn = 0;
    CHECK(c != MPI_COMM_NULL, "%s gave MPI_COMM_NULL", what);
    CALL(MPI_Comm_compare(c, host, &cmp));
    CHECK(cmp == MPI_CONGRUENT, "%s: not the host's ranks (compare %d)", what, cmp);
    CALL(MPI_Allreduce(&one, &n, 1, MPI_INT, MPI_SUM, c));
    CALL(MPI_Comm_size(host, &hn));
    CHECK(n == hn, "%s: Allreduce over it counted %d of %d", what, n, hn);
}

int main(int argc, char **argv)
{
    TEST_INIT(&argc, &argv);
    MPI_Comm host, c;
    int hrank, leader, hosts = 0;
    CALL(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, me, MPI_INFO_NULL, &host));
    CALL(MPI_Comm_rank(host, &hrank));
    leader = hrank == 0;
    CALL(MPI_Allreduce(&leader, &hosts, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));

    MPI_Info info;
    CALL(MPI_Info_create(&info));
    CALL(MPI_Info_set(info, "mpi_hw_resource_type", "mpi_shared_memory"));
    CALL(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_HW_GUIDED, me, info, &c));
    same_as_host(c, host, "hw guided split by mpi_shared_memory");
    CALL(MPI_Comm_free(&c));
    CALL(MPI_Info_free(&info));

    CALL(MPI_Info_create(&info));
    CALL(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_HW_UNGUIDED, me, info, &c));
    if (hosts > 1) {
        /* The split names the resource it found in the caller's info. */
        char value[MPI_MAX_INFO_VAL];
        int flag = 0;
        CALL(MPI_Info_get(info, "mpi_hw_resource_type", MPI_MAX_INFO_VAL - 1, value, &flag));
        CHECK(flag && value[0], "hw unguided split: no resource named in the info");
        same_as_host(c, host, "hw unguided split across hosts");
        CALL(MPI_Comm_free(&c));
    } else {
        CHECK(c == MPI_COMM_NULL, "hw unguided split of one host gave %#x", (unsigned)c);
    }
    CALL(MPI_Info_free(&info));
    /* A host's communicator has no smaller resource to split into. */
    CALL(MPI_Comm_split_type(host, MPI_COMM_TYPE_HW_UNGUIDED, me, MPI_INFO_NULL, &c));
    CHECK(c == MPI_COMM_NULL, "hw unguided split of a host's ranks gave %#x", (unsigned)c);
    if (me == 0)
        printf("split_hosts: %d host(s)\n", hosts);
    CALL(MPI_Comm_free(&host));
    CALL(MPI_Finalize());
    finalized = 1;
    return 0;
}

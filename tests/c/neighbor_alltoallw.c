/* ranks: 1 2 3 4 */
/*
 * MPI_Neighbor_alltoallw, MPI_Ineighbor_alltoallw and (MPI-4)
 * MPI_Neighbor_alltoallw_init on a 1-D Cartesian communicator (periodic from
 * 3 ranks up, so the ends of the line have MPI_PROC_NULL neighbours whose
 * slots must stay untouched): a different datatype per neighbour on both
 * sides (plain ints one way, a strided vector the other), byte displacements
 * with gaps, and from MPI_BOTTOM with absolute addresses. The persistent request gets temporary arrays, overwritten and
 * freed at once after the init. Error classes of bad arguments.
 */
#define TEST_NAME "neighbor_alltoallw"
#include "testutil.h"

#include <string.h>

#define SENT -7

static int val(int round, int rank, int i) { return round * 10000 + rank * 100 + i; }

int main(int argc, char **argv)
{
    TEST_INIT(&argc, &argv);
    MPI_Comm cart;
    int dims[1] = {np}, periods[1] = {np >= 3};
    CALL(MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &cart));
    int left, right;
    CALL(MPI_Cart_shift(cart, 0, 1, &left, &right));

    /* Every other int of 3: the block to the right is strided in the send
     * buffer, and the block from the left lands strided in the receive one. */
    MPI_Datatype strided;
    CALL(MPI_Type_vector(3, 1, 2, MPI_INT, &strided));
    CALL(MPI_Type_commit(&strided));

    /* Send buffer: [0..1] 2 ints to the left; [4..8] the strided 3 to the right. */
    int sbuf[10], rbuf[12];
    int scounts[2] = {2, 1}, rcounts[2] = {1, 2};
    MPI_Aint sdispls[2] = {0, 4 * sizeof(int)}, rdispls[2] = {2 * sizeof(int), 8 * sizeof(int)};
    MPI_Datatype stypes[2] = {MPI_INT, strided}, rtypes[2] = {strided, MPI_INT};
    /* From the left comes its strided 3 (into rbuf[2], [4], [6]); from the right
     * its 2 plain ints (into rbuf[8..9]). */

    MPI_Request pr;
#ifndef MPICH_DEVIATIONS /* Debian's MPICH 4.0 does not declare the _init form */
    {
        int *sc = malloc(sizeof scounts), *rc = malloc(sizeof rcounts);
        MPI_Aint *sd = malloc(sizeof sdispls), *rd = malloc(sizeof rdispls);
        MPI_Datatype *st = malloc(sizeof stypes), *rt = malloc(sizeof rtypes);
        CHECK(sc && rc && sd && rd && st && rt, "malloc");
        memcpy(sc, scounts, sizeof scounts); memcpy(rc, rcounts, sizeof rcounts);
        memcpy(sd, sdispls, sizeof sdispls); memcpy(rd, rdispls, sizeof rdispls);
        memcpy(st, stypes, sizeof stypes); memcpy(rt, rtypes, sizeof rtypes);
        CALL(MPI_Neighbor_alltoallw_init(sbuf, sc, sd, st, rbuf, rc, rd, rt, cart, MPI_INFO_NULL, &pr));
        memset(sc, 0x5a, sizeof scounts); memset(rc, 0x5a, sizeof rcounts);
        memset(sd, 0x5a, sizeof sdispls); memset(rd, 0x5a, sizeof rdispls);
        memset(st, 0x5a, sizeof stypes); memset(rt, 0x5a, sizeof rtypes);
        free(sc); free(rc); free(sd); free(rd); free(st); free(rt);
    }
#endif

    /* The same exchange from MPI_BOTTOM, with absolute addresses as displacements. */
    MPI_Aint sabs[2], rabs[2], base;
    CALL(MPI_Get_address(sbuf, &base));
    for (int k = 0; k < 2; k++)
        sabs[k] = base + sdispls[k];
    CALL(MPI_Get_address(rbuf, &base));
    for (int k = 0; k < 2; k++)
        rabs[k] = base + rdispls[k];

    for (int round = 0; round < 8; round++) {
        for (int i = 0; i < 10; i++)
            sbuf[i] = SENT;
        sbuf[0] = val(round, me, 0); /* to the left */
        sbuf[1] = val(round, me, 1);
        for (int i = 0; i < 3; i++)
            sbuf[4 + 2 * i] = val(round, me, 10 + i); /* to the right */
        for (int i = 0; i < 12; i++)
            rbuf[i] = SENT;
        int how = round % 4;
#ifdef MPICH_DEVIATIONS
        if (how == 2)
            how = 0;
#endif
        if (how == 0) {
            CALL(MPI_Neighbor_alltoallw(sbuf, scounts, sdispls, stypes, rbuf, rcounts, rdispls, rtypes, cart));
        } else if (how == 1) {
            MPI_Request r;
            CALL(MPI_Ineighbor_alltoallw(sbuf, scounts, sdispls, stypes, rbuf, rcounts, rdispls, rtypes, cart, &r));
            CALL(MPI_Wait(&r, MPI_STATUS_IGNORE));
        } else if (how == 2) {
            CALL(MPI_Start(&pr));
            CALL(MPI_Wait(&pr, MPI_STATUS_IGNORE));
        } else {
            CALL(MPI_Neighbor_alltoallw(MPI_BOTTOM, scounts, sabs, stypes, MPI_BOTTOM, rcounts, rabs, rtypes, cart));
        }
        for (int i = 0; i < 12; i++) {
            int want = SENT;
            if (left != MPI_PROC_NULL && (i == 2 || i == 4 || i == 6))
                want = val(round, left, 10 + (i - 2) / 2);
            if (right != MPI_PROC_NULL && (i == 8 || i == 9))
                want = val(round, right, i - 8);
            CHECK(rbuf[i] == want, "round %d (way %d): rbuf[%d] = %d, expected %d", round, how, i, rbuf[i], want);
        }
    }
#ifndef MPICH_DEVIATIONS
    CALL(MPI_Request_free(&pr));
#endif

    CALL(MPI_Comm_set_errhandler(cart, MPI_ERRORS_RETURN));
    CALL(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    int bad[2] = {-1, 1};
    EXPECT(MPI_ERR_COUNT, MPI_Neighbor_alltoallw(sbuf, bad, sdispls, stypes, rbuf, rcounts, rdispls, rtypes, cart));
    MPI_Datatype nulls[2] = {MPI_DATATYPE_NULL, MPI_DATATYPE_NULL};
    EXPECT(MPI_ERR_TYPE, MPI_Neighbor_alltoallw(sbuf, scounts, sdispls, nulls, rbuf, rcounts, rdispls, rtypes, cart));
#ifndef MPICH_DEVIATIONS /* MPICH 4.0 crashes on a communicator without a topology */
    EXPECT(MPI_ERR_TOPOLOGY, MPI_Neighbor_alltoallw(sbuf, scounts, sdispls, stypes, rbuf, rcounts, rdispls, rtypes, MPI_COMM_WORLD));
#endif
    int one = 1, n = 0;
    CALL(MPI_Allreduce(&one, &n, 1, MPI_INT, MPI_SUM, cart));
    CHECK(n == np, "allreduce after the failed calls: %d", n);

    CALL(MPI_Type_free(&strided));
    CALL(MPI_Comm_free(&cart));
    CALL(MPI_Finalize());
    if (me == 0)
        printf("neighbor_alltoallw: ok\n");
    return 0;
}

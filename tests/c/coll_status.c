/* ranks: 1 2 3 4 5 8 */
/* env: FERRY_STATUS_SOURCE=arrival FERRY_BCAST_ALGORITHM=status_binomial FERRY_SCATTER_ALGORITHM=status_linear FERRY_GATHER_ALGORITHM=status_linear FERRY_COLL_STATS=1 */
/* env: FERRY_STATUS_SOURCE=board FERRY_BCAST_ALGORITHM=status_binomial FERRY_SCATTER_ALGORITHM=status_linear FERRY_GATHER_ALGORITHM=status_linear FERRY_COLL_STATS=1 */
/* expect: pass stderr=" bcast.status_binomial bytes=" */
/*
 * The status-based collectives (run with Ferry's status-based algorithms
 * forced, once with each status source): Bcast, Scatter(v) and Gather(v)
 * whose root orders the ranks by what it knows of them, while some ranks
 * arrive late (they sleep first) so that the root serves them last; roots
 * cycle through every rank; back-to-back calls and several non-blocking ones
 * in flight at once, so that a late rank's "free" token of one call can never
 * be taken for another's. Every result is checked exactly.
 */
#include <string.h>

#define TEST_NAME "coll_status"
#include "testutil.h"

static int n, r;

static int val(int it, int q, int k) { return it * 100003 + q * 1009 + k; }

static void one_round(int it)
{
    int root = it % n, late = (it * 3 + 1) % n, count = it % 2 ? 1000 : 3;
    int *b = xmalloc((size_t)count * sizeof(int)), *all = xmalloc((size_t)(n * count) * sizeof(int));
    int *mine = xmalloc((size_t)count * sizeof(int)), *back = xmalloc((size_t)(n * count) * sizeof(int));
    for (int k = 0; k < count; k++)
        b[k] = r == root ? val(it, root, k) : -1;
    for (int k = 0; k < n * count; k++) {
        all[k] = r == root ? val(it, k / count, k % count) : -1;
        back[k] = -1;
    }
    if (r == late || r == (late + 2) % n)
        pause_ms(5);
    CALL(MPI_Bcast(b, count, MPI_INT, root, MPI_COMM_WORLD));
    CALL(MPI_Scatter(all, count, MPI_INT, mine, count, MPI_INT, root, MPI_COMM_WORLD));
    if (r == late)
        pause_ms(5);
    CALL(MPI_Gather(mine, count, MPI_INT, back, count, MPI_INT, root, MPI_COMM_WORLD));
    for (int k = 0; k < count; k++) {
        CHECK(b[k] == val(it, root, k), "round %d: Bcast element %d is %d", it, k, b[k]);
        CHECK(mine[k] == val(it, r, k), "round %d: Scatter element %d is %d", it, k, mine[k]);
    }
    if (r == root)
        for (int k = 0; k < n * count; k++)
            CHECK(back[k] == val(it, k / count, k % count), "round %d: Gather element %d is %d", it, k, back[k]);

    /* V-variants: rank q has q % 3 elements. */
    int counts[64], displs[64], total = 0, vmine[2] = { -1, -1 }, vall[192], vback[192];
    for (int q = 0; q < n; q++) {
        counts[q] = q % 3;
        displs[q] = total;
        total += counts[q];
    }
    for (int k = 0; k < total; k++) {
        vall[k] = r == root ? val(it, 7, k) : -1;
        vback[k] = -1;
    }
    if (r == (late + 1) % n)
        pause_ms(5);
    CALL(MPI_Scatterv(vall, counts, displs, MPI_INT, vmine, counts[r], MPI_INT, root, MPI_COMM_WORLD));
    CALL(MPI_Gatherv(vmine, counts[r], MPI_INT, vback, counts, displs, MPI_INT, root, MPI_COMM_WORLD));
    for (int k = 0; k < counts[r]; k++)
        CHECK(vmine[k] == val(it, 7, displs[r] + k), "round %d: Scatterv element %d is %d", it, k, vmine[k]);
    if (r == root)
        for (int k = 0; k < total; k++)
            CHECK(vback[k] == val(it, 7, k), "round %d: Gatherv element %d is %d", it, k, vback[k]);

    /* Three non-blocking ones in flight, late ranks again. */
    MPI_Request q[3];
    int x = r == root ? it : -1, y[64], z = -1;
    for (int k = 0; k < n; k++)
        y[k] = r == (root + 1) % n ? val(it, k, 0) : -1;
    if (r == late)
        pause_ms(5);
    CALL(MPI_Ibcast(&x, 1, MPI_INT, root, MPI_COMM_WORLD, &q[0]));
    CALL(MPI_Iscatter(y, 1, MPI_INT, &z, 1, MPI_INT, (root + 1) % n, MPI_COMM_WORLD, &q[1]));
    int g = r + it, gs[64];
    CALL(MPI_Igather(&g, 1, MPI_INT, gs, 1, MPI_INT, (root + 2) % n, MPI_COMM_WORLD, &q[2]));
    CALL(MPI_Waitall(3, q, statuses_ignore()));
    CHECK(x == it, "round %d: Ibcast gave %d", it, x);
    CHECK(z == val(it, r, 0), "round %d: Iscatter gave %d", it, z);
    if (r == (root + 2) % n)
        for (int k = 0; k < n; k++)
            CHECK(gs[k] == k + it, "round %d: Igather element %d is %d", it, k, gs[k]);
    free(b);
    free(all);
    free(mine);
    free(back);
}

int main(int argc, char **argv)
{
    TEST_INIT(&argc, &argv);
    CHECK(np <= 64, "at most 64 ranks");
    n = np;
    r = me;
    for (int it = 0; it < 16; it++)
        one_round(it);
    CALL(MPI_Finalize());
    finalized = 1;
    return 0;
}

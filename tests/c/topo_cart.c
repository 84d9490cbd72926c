/* ranks: 1 2 4 6 8 */
/*
 * Cartesian topologies: MPI_Dims_create against hand-computed results
 * (free and fixed dimensions, the error class of an impossible split),
 * Cart_create over a 2-D grid of the whole world (periodic in the first
 * dimension) and over a grid smaller than the world (MPI_COMM_NULL for the
 * rest), Topo_test, Cartdim_get, Cart_get, Cart_rank / Cart_coords round
 * trips (wrapping in a periodic dimension), Cart_shift in both kinds of
 * dimension, Cart_map, Cart_sub into rows and columns and into no dimension
 * (rank 0 alone, the others MPI_COMM_NULL), the topology kept by
 * Comm_dup, and MPI_ERR_TOPOLOGY on a communicator without a topology.
 */
#include <string.h>

#define TEST_NAME "topo_cart"
#include "testutil.h"

static void dims_case(int nnodes, int ndims, const int *in, const int *want, int line)
{
    int d[4];
    memcpy(d, in, sizeof(int) * (size_t)ndims);
    CALL(MPI_Dims_create(nnodes, ndims, d));
    for (int i = 0; i < ndims; i++)
        if (d[i] != want[i])
            fail(line, "Dims_create(%d, %d): dims[%d] = %d, expected %d", nnodes, ndims, i, d[i], want[i]);
}

int main(int argc, char **argv)
{
    TEST_INIT(&argc, &argv);

    dims_case(6, 2, (int[]){0, 0}, (int[]){3, 2}, __LINE__);
    dims_case(12, 2, (int[]){0, 0}, (int[]){4, 3}, __LINE__);
    dims_case(8, 3, (int[]){0, 0, 0}, (int[]){2, 2, 2}, __LINE__);
    dims_case(24, 3, (int[]){0, 0, 0}, (int[]){4, 3, 2}, __LINE__);
    dims_case(7, 2, (int[]){0, 0}, (int[]){7, 1}, __LINE__);
    dims_case(12, 2, (int[]){0, 3}, (int[]){4, 3}, __LINE__);
    dims_case(16, 3, (int[]){2, 0, 0}, (int[]){2, 4, 2}, __LINE__);
    dims_case(1, 2, (int[]){0, 0}, (int[]){1, 1}, __LINE__);

    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int bad[2] = {0, 3}, cls;
    int rc = MPI_Dims_create(10, 2, bad);
    MPI_Error_class(rc, &cls);
    CHECK(rc != MPI_SUCCESS && cls == MPI_ERR_DIMS, "Dims_create(10, {0, 3}) gave %d, class %d", rc, cls);
    int kind = -1;
    CALL(MPI_Topo_test(MPI_COMM_WORLD, &kind));
    CHECK(kind == MPI_UNDEFINED, "Topo_test(world) = %d", kind);
    int nd = -1;
    rc = MPI_Cartdim_get(MPI_COMM_WORLD, &nd);
    MPI_Error_class(rc, &cls);
    CHECK(rc != MPI_SUCCESS && cls == MPI_ERR_TOPOLOGY, "Cartdim_get(world) gave %d, class %d", rc, cls);

    /* The whole world as a grid, periodic in dimension 0. */
    int dims[2] = {0, 0}, periods[2] = {1, 0};
    CALL(MPI_Dims_create(np, 2, dims));
    MPI_Comm cart;
    CALL(MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart));
    CHECK(cart != MPI_COMM_NULL, "no communicator");
    CALL(MPI_Topo_test(cart, &kind));
    CHECK(kind == MPI_CART, "Topo_test = %d", kind);
    CALL(MPI_Cartdim_get(cart, &nd));
    CHECK(nd == 2, "Cartdim_get = %d", nd);
    int gd[2], gp[2], gc[2], r;
    CALL(MPI_Cart_get(cart, 2, gd, gp, gc));
    CHECK(gd[0] == dims[0] && gd[1] == dims[1] && gp[0] == 1 && gp[1] == 0, "Cart_get dims %d x %d periods %d %d", gd[0], gd[1], gp[0], gp[1]);
    CHECK(gc[0] == me / dims[1] && gc[1] == me % dims[1], "coords (%d, %d)", gc[0], gc[1]);
    CALL(MPI_Cart_rank(cart, gc, &r));
    CHECK(r == me, "Cart_rank of own coords = %d", r);
    for (int q = 0; q < np; q++) {
        int c[2];
        CALL(MPI_Cart_coords(cart, q, 2, c));
        CALL(MPI_Cart_rank(cart, c, &r));
        CHECK(r == q, "round trip of rank %d gave %d", q, r);
    }
    int wrap[2] = {gc[0] + dims[0], gc[1]};
    CALL(MPI_Cart_rank(cart, wrap, &r));
    CHECK(r == me, "wrapped coords gave rank %d", r);
    int src, dst;
    CALL(MPI_Cart_shift(cart, 0, 1, &src, &dst));
    int up = ((gc[0] + dims[0] - 1) % dims[0]) * dims[1] + gc[1];
    int down = ((gc[0] + 1) % dims[0]) * dims[1] + gc[1];
    CHECK(src == up && dst == down, "periodic shift (%d, %d), expected (%d, %d)", src, dst, up, down);
    CALL(MPI_Cart_shift(cart, 1, 1, &src, &dst));
    CHECK(src == (gc[1] > 0 ? me - 1 : MPI_PROC_NULL), "non-periodic shift source %d", src);
    CHECK(dst == (gc[1] < dims[1] - 1 ? me + 1 : MPI_PROC_NULL), "non-periodic shift dest %d", dst);
    CALL(MPI_Cart_shift(cart, 1, 2, &src, &dst));
    CHECK(src == (gc[1] > 1 ? me - 2 : MPI_PROC_NULL), "shift by 2 source %d", src);
    CHECK(dst == (gc[1] < dims[1] - 2 ? me + 2 : MPI_PROC_NULL), "shift by 2 dest %d", dst);

    /* Rows (keep dimension 1) and columns (keep dimension 0). */
    MPI_Comm row, col;
    CALL(MPI_Cart_sub(cart, (int[]){0, 1}, &row));
    CALL(MPI_Cart_sub(cart, (int[]){1, 0}, &col));
    int rs, rr, cs, cr;
    CALL(MPI_Comm_size(row, &rs));
    CALL(MPI_Comm_rank(row, &rr));
    CALL(MPI_Comm_size(col, &cs));
    CALL(MPI_Comm_rank(col, &cr));
    CHECK(rs == dims[1] && rr == gc[1] && cs == dims[0] && cr == gc[0], "sub sizes %d %d ranks %d %d", rs, cs, rr, cr);
    int sum = -1;
    CALL(MPI_Allreduce(&me, &sum, 1, MPI_INT, MPI_SUM, row));
    int want = 0;
    for (int j = 0; j < dims[1]; j++)
        want += gc[0] * dims[1] + j;
    CHECK(sum == want, "row sum %d, expected %d", sum, want);
    CALL(MPI_Cartdim_get(col, &nd));
    CALL(MPI_Cart_get(col, 1, gd, gp, gc));
    CHECK(nd == 1 && gd[0] == dims[0] && gp[0] == 1 && gc[0] == cr, "column grid %d: %d periodic %d at %d", nd, gd[0], gp[0], gc[0]);

    /* Keeping no dimension: a zero-dimensional grid of one process, the grid's rank 0,
     * congruent to MPI_COMM_SELF; every other rank gets MPI_COMM_NULL. */
    MPI_Comm none;
    CALL(MPI_Cart_sub(cart, (int[]){0, 0}, &none));
    if (me == 0) {
        int cmp = -1;
        CHECK(none != MPI_COMM_NULL, "rank 0 got no zero-dimensional grid");
        CALL(MPI_Comm_compare(MPI_COMM_SELF, none, &cmp));
        CALL(MPI_Cartdim_get(none, &nd));
        CHECK(cmp == MPI_CONGRUENT && nd == 0, "zero-dimensional grid: compare %d, ndims %d", cmp, nd);
        CALL(MPI_Comm_free(&none));
    } else {
        CHECK(none == MPI_COMM_NULL, "rank %d got a zero-dimensional grid too", me);
    }

    /* The topology travels with Comm_dup. */
    MPI_Comm dup;
    CALL(MPI_Comm_dup(cart, &dup));
    CALL(MPI_Topo_test(dup, &kind));
    CALL(MPI_Cartdim_get(dup, &nd));
    CHECK(kind == MPI_CART && nd == 2, "dup: kind %d ndims %d", kind, nd);

    /* A grid smaller than the world: the rest get MPI_COMM_NULL. */
    int small = np > 1 ? np - 1 : 1;
    MPI_Comm part;
    CALL(MPI_Cart_create(MPI_COMM_WORLD, 1, &small, (int[]){0}, 1, &part));
    CALL(MPI_Cart_map(MPI_COMM_WORLD, 1, &small, (int[]){0}, &r));
    if (me < small) {
        CHECK(part != MPI_COMM_NULL && r == me, "rank %d: no part of the grid (map %d)", me, r);
        int ps;
        CALL(MPI_Comm_size(part, &ps));
        CHECK(ps == small, "part size %d", ps);
        CALL(MPI_Cart_shift(part, 0, -1, &src, &dst));
        CHECK(src == (me < small - 1 ? me + 1 : MPI_PROC_NULL) && dst == (me > 0 ? me - 1 : MPI_PROC_NULL), "negative shift (%d, %d)", src, dst);
        CALL(MPI_Comm_free(&part));
    } else {
        CHECK(part == MPI_COMM_NULL && r == MPI_UNDEFINED, "rank %d got a part of the grid (map %d)", me, r);
    }

    rc = MPI_Cart_shift(cart, 2, 1, &src, &dst);
    CHECK(rc != MPI_SUCCESS, "Cart_shift along a missing dimension succeeded");
    MPI_Comm_set_errhandler(cart, MPI_ERRORS_RETURN);
    rc = MPI_Cart_coords(cart, np, 2, gc);
    MPI_Error_class(rc, &cls);
    CHECK(rc != MPI_SUCCESS && cls == MPI_ERR_RANK, "Cart_coords of rank %d gave %d, class %d", np, rc, cls);

    CALL(MPI_Comm_free(&dup));
    CALL(MPI_Comm_free(&row));
    CALL(MPI_Comm_free(&col));
    CALL(MPI_Comm_free(&cart));
    CALL(MPI_Finalize());
    finalized = 1;
    return 0;
}

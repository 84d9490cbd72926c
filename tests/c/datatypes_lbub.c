/* ranks: 1 */
/*
 * MPI-1's bound markers, which MPICH's header and library keep: MPI_LB and
 * MPI_UB are named so, hold no data and have extent 0; a struct given them
 * (MPI_Type_struct or MPI_Type_create_struct) takes its lower bound from the
 * MPI_LB entries and its upper bound from the MPI_UB ones, and keeps them in the
 * types built from it; a struct of nothing but an MPI_LB at 10 has size 0,
 * lower bound 10, upper bound 0 and so extent -10. MPI_Type_lb/ub/extent agree
 * with MPI_Type_get_extent, and data sent with a marked type lands where its
 * extent says.
 */
#define TEST_NAME "datatypes_lbub"
#include "testutil.h"

#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

static void bounds(MPI_Datatype t, long lb, long ub, int size, int line)
{
    MPI_Aint l, u, e, gl, ge;
    int s;
    CALL(MPI_Type_lb(t, &l));
    CALL(MPI_Type_ub(t, &u));
    CALL(MPI_Type_extent(t, &e));
    CALL(MPI_Type_get_extent(t, &gl, &ge));
    CALL(MPI_Type_size(t, &s));
    if (l != lb || u != ub || e != ub - lb || gl != lb || ge != ub - lb || s != size)
        fail(line, "lb %ld ub %ld extent %ld (get_extent %ld %ld) size %d, expected %ld %ld size %d",
             (long)l, (long)u, (long)e, (long)gl, (long)ge, s, lb, ub, size);
}

int main(int argc, char **argv)
{
    TEST_INIT(&argc, &argv);
    char name[MPI_MAX_OBJECT_NAME];
    int len;
    CALL(MPI_Type_get_name(MPI_LB, name, &len));
    CHECK(strcmp(name, "MPI_LB") == 0 && len == 6, "MPI_LB is named '%s'", name);
    CALL(MPI_Type_get_name(MPI_UB, name, &len));
    CHECK(strcmp(name, "MPI_UB") == 0, "MPI_UB is named '%s'", name);
    bounds(MPI_LB, 0, 0, 0, __LINE__);
    bounds(MPI_UB, 0, 0, 0, __LINE__);

    /* Nothing but a lower bound. */
    MPI_Datatype only;
    CALL(MPI_Type_create_struct(1, (int[]){1}, (MPI_Aint[]){10}, (MPI_Datatype[]){MPI_LB}, &only));
    bounds(only, 10, 0, 0, __LINE__);

    /* Both bounds around one int (MPI-1's constructor). */
    MPI_Datatype marked, two;
    CALL(MPI_Type_struct(3, (int[]){1, 1, 1}, (MPI_Aint[]){-3, 0, 20}, (MPI_Datatype[]){MPI_LB, MPI_INT, MPI_UB}, &marked));
    bounds(marked, -3, 20, (int)sizeof(int), __LINE__);
    /* The bounds hold in a type built from it. */
    CALL(MPI_Type_contiguous(2, marked, &two));
    bounds(two, -3, 43, 2 * (int)sizeof(int), __LINE__);
    /* A marker overrides the data's own bound: an upper bound below the data's end, and the
     * lower bound the data gives (an int at 8) where no MPI_LB is. */
    MPI_Datatype low;
    CALL(MPI_Type_create_struct(2, (int[]){2, 1}, (MPI_Aint[]){8, 12}, (MPI_Datatype[]){MPI_INT, MPI_UB}, &low));
    bounds(low, 8, 12, 2 * (int)sizeof(int), __LINE__);

    /* Data moved with a marked type: an int at byte 4 of every 12. */
    MPI_Datatype stride;
    CALL(MPI_Type_create_struct(3, (int[]){1, 1, 1}, (MPI_Aint[]){0, 4, 12}, (MPI_Datatype[]){MPI_LB, MPI_INT, MPI_UB}, &stride));
    CALL(MPI_Type_commit(&stride));
    int out[2] = {7, 9}, in[6] = {-1, -1, -1, -1, -1, -1};
    MPI_Request q;
    MPI_Status st;
    CALL(MPI_Irecv(in, 2, stride, 0, 5, MPI_COMM_SELF, &q));
    CALL(MPI_Send(out, 2, MPI_INT, 0, 5, MPI_COMM_SELF));
    CALL(MPI_Wait(&q, &st));
    CHECK(in[0] == -1 && in[1] == 7 && in[2] == -1 && in[3] == -1 && in[4] == 9 && in[5] == -1,
          "received %d %d %d %d %d %d", in[0], in[1], in[2], in[3], in[4], in[5]);
    int count = -1;
    CALL(MPI_Get_count(&st, stride, &count));
    CHECK(count == 2, "count %d", count);

    MPI_Datatype types[3];
    int ni, na, nd, comb;
    CALL(MPI_Type_get_envelope(stride, &ni, &na, &nd, &comb));
    CHECK(comb == MPI_COMBINER_STRUCT && nd == 3, "envelope: combiner %d, %d types", comb, nd);
    int ints[4];
    MPI_Aint addrs[3];
    CALL(MPI_Type_get_contents(stride, ni, na, nd, ints, addrs, types));
    CHECK(types[0] == MPI_LB && types[2] == MPI_UB && addrs[2] == 12, "contents: types %#x %#x, displacement %ld",
          (unsigned)types[0], (unsigned)types[2], (long)addrs[2]);

    CALL(MPI_Type_free(&only));
    CALL(MPI_Type_free(&marked));
    CALL(MPI_Type_free(&two));
    CALL(MPI_Type_free(&low));
    CALL(MPI_Type_free(&stride));
    CALL(MPI_Finalize());
    return 0;
}

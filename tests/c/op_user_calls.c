/* ranks: 1 2 3 4 */
/*
 * MPI calls made from inside a user-defined reduction function, as mpi4py's
 * operations make them: MPI_Type_size, MPI_Type_get_extent(_x),
 * MPI_Type_get_true_extent, their large-count (_c) forms, MPI_Type_get_envelope,
 * MPI_Comm_rank and
 * MPI_Comm_size, during Reduce, Allreduce, Scan, Exscan, Reduce_local and
 * their non-blocking forms, over a predefined type and a derived one. Inside
 * MPI_Reduce_local the function may call anything: it duplicates and frees
 * a datatype there. Before, the first such call ended the job (or hung).
 */
#define TEST_NAME "op_user_calls"
#include "testutil.h"

static MPI_Datatype pair_type; /* two ints, contiguous */
static int calls;              /* function calls seen */
static int local_only;         /* inside MPI_Reduce_local: any call goes */

/* inout[i] += in[i] over ints, after asking MPI about the datatype. */
static void sum_asking(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    int size = -1, rank = -1, nranks = -1, ni = -1, na = -1, nd = -1, comb = -1;
    MPI_Aint lb = -1, extent = -1, tlb = -1, textent = -1;
    MPI_Count xlb = -1, xextent = -1, csize = -1, clb = -1, cext = -1, ctlb = -1, ctext = -1;
    CALL(MPI_Type_size(*dt, &size));
    CALL(MPI_Type_size_c(*dt, &csize));
    CALL(MPI_Type_get_extent_c(*dt, &clb, &cext));
    CALL(MPI_Type_get_true_extent_c(*dt, &ctlb, &ctext));
    CALL(MPI_Type_get_extent(*dt, &lb, &extent));
    CALL(MPI_Type_get_true_extent(*dt, &tlb, &textent));
    CALL(MPI_Type_get_extent_x(*dt, &xlb, &xextent));
    CALL(MPI_Type_get_envelope(*dt, &ni, &na, &nd, &comb));
    CALL(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    CALL(MPI_Comm_size(MPI_COMM_WORLD, &nranks));
    CHECK(rank == me && nranks == np, "Comm_rank/size inside the function: %d of %d", rank, nranks);
    int per = 1;
    if (*dt == MPI_INT) {
        CHECK(comb == MPI_COMBINER_NAMED && ni == 0 && na == 0 && nd == 0, "envelope of MPI_INT: %d %d %d %d",
              ni, na, nd, comb);
    } else {
        CHECK(*dt == pair_type, "the function got datatype %#x", (unsigned)*dt);
        CHECK(comb == MPI_COMBINER_CONTIGUOUS && ni == 1 && na == 0 && nd == 1, "envelope of the pair: %d %d %d %d",
              ni, na, nd, comb);
        per = 2;
    }
    CHECK(csize == size && clb == 0 && cext == size && ctlb == 0 && ctext == size,
          "large-count forms: size %lld extent %lld/%lld true %lld/%lld", (long long)csize, (long long)clb,
          (long long)cext, (long long)ctlb, (long long)ctext);
    CHECK(size == per * (int)sizeof(int) && lb == 0 && extent == size && tlb == 0 && textent == size &&
          xlb == 0 && xextent == size, "size %d extent %ld/%ld true %ld/%ld x %lld/%lld", size, (long)lb,
          (long)extent, (long)tlb, (long)textent, (long long)xlb, (long long)xextent);
    if (local_only) {
        MPI_Datatype copy;
        CALL(MPI_Type_dup(*dt, &copy));
        CALL(MPI_Type_free(&copy));
    }
    for (int i = 0; i < *len * per; i++)
        ((int *)inout)[i] += ((int *)in)[i];
    calls++;
}

int main(int argc, char **argv)
{
    TEST_INIT(&argc, &argv);
    CALL(MPI_Type_contiguous(2, MPI_INT, &pair_type));
    CALL(MPI_Type_commit(&pair_type));
    MPI_Op op;
    CALL(MPI_Op_create(sum_asking, 1, &op));

    enum { N = 5 };
    for (int pass = 0; pass < 2; pass++) {
        MPI_Datatype dt = pass ? pair_type : MPI_INT;
        int per = pass ? 2 : 1, n = N * per;
        int in[2 * N], out[2 * N];
        for (int i = 0; i < n; i++)
            in[i] = me * 10 + i;
        int sum_all = np * (np - 1) / 2 * 10;

        for (int i = 0; i < n; i++)
            out[i] = -1;
        CALL(MPI_Allreduce(in, out, N, dt, op, MPI_COMM_WORLD));
        for (int i = 0; i < n; i++)
            CHECK(out[i] == sum_all + np * i, "allreduce pass %d [%d] = %d", pass, i, out[i]);

        for (int i = 0; i < n; i++)
            out[i] = -1;
        CALL(MPI_Reduce(in, out, N, dt, op, np - 1, MPI_COMM_WORLD));
        if (me == np - 1)
            for (int i = 0; i < n; i++)
                CHECK(out[i] == sum_all + np * i, "reduce pass %d [%d] = %d", pass, i, out[i]);

        CALL(MPI_Scan(in, out, N, dt, op, MPI_COMM_WORLD));
        for (int i = 0; i < n; i++)
            CHECK(out[i] == me * (me + 1) / 2 * 10 + (me + 1) * i, "scan pass %d [%d] = %d", pass, i, out[i]);

        MPI_Request r;
        CALL(MPI_Iallreduce(in, out, N, dt, op, MPI_COMM_WORLD, &r));
        CALL(MPI_Wait(&r, MPI_STATUS_IGNORE));
        for (int i = 0; i < n; i++)
            CHECK(out[i] == sum_all + np * i, "iallreduce pass %d [%d] = %d", pass, i, out[i]);

        CALL(MPI_Exscan(in, out, N, dt, op, MPI_COMM_WORLD));
        if (me > 0)
            for (int i = 0; i < n; i++)
                CHECK(out[i] == (me - 1) * me / 2 * 10 + me * i, "exscan pass %d [%d] = %d", pass, i, out[i]);

        for (int i = 0; i < n; i++)
            out[i] = 1000;
        local_only = 1;
        CALL(MPI_Reduce_local(in, out, N, dt, op));
        local_only = 0;
        for (int i = 0; i < n; i++)
            CHECK(out[i] == 1000 + me * 10 + i, "reduce_local pass %d [%d] = %d", pass, i, out[i]);
    }
    CHECK(calls >= 2, "the function ran %d times", calls);

    /* Outside the function the usual rules apply again. */
    int size = -1;
    CALL(MPI_Type_size(pair_type, &size));
    CHECK(size == 2 * (int)sizeof(int), "Type_size after the reductions: %d", size);
    CALL(MPI_Op_free(&op));
    CALL(MPI_Type_free(&pair_type));
    CALL(MPI_Finalize());
    if (me == 0)
        printf("op_user_calls: ok\n");
    return 0;
}

/* ranks: 1 2 */
/*
 * The MPI-1 names MPICH still declares, against their replacements:
 * MPI_Address = MPI_Get_address; MPI_Type_extent/lb/ub = MPI_Type_get_extent;
 * MPI_Type_hvector/hindexed/struct make the types MPI_Type_create_* make;
 * MPI_Keyval_create/MPI_Attr_delete/MPI_Keyval_free (the delete callback runs);
 * MPI_Errhandler_create/set/get (the handler sees the error). MPI_Status_c2f/f2c
 * round trip a received message's status, and refuse MPI_STATUS_IGNORE with
 * MPI_ERR_OTHER (as MPICH).
 */
#include <string.h>

#define TEST_NAME "mpi1_names"
#include "testutil.h"

#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

static int deleted, handled;

static int on_delete(MPI_Comm comm, int key, void *val, void *extra)
{
    (void)comm; (void)key; (void)extra;
    deleted = *(int *)val;
    return MPI_SUCCESS;
}

static void on_error(MPI_Comm *comm, int *code, ...)
{
    (void)comm;
    int cls = -1;
    MPI_Error_class(*code, &cls);
    handled = cls;
}

static void types(void)
{
    double v[4];
    MPI_Aint a1, a2;
    CALL(MPI_Address(&v[2], &a1));
    CALL(MPI_Get_address(&v[2], &a2));
    CHECK(a1 == a2, "MPI_Address %ld, MPI_Get_address %ld", (long)a1, (long)a2);

    MPI_Datatype r;
    CALL(MPI_Type_create_resized(MPI_INT, -8, 24, &r));
    MPI_Aint ext, lb, ub, glb, gext;
    CALL(MPI_Type_extent(r, &ext));
    CALL(MPI_Type_lb(r, &lb));
    CALL(MPI_Type_ub(r, &ub));
    CALL(MPI_Type_get_extent(r, &glb, &gext));
    CHECK(ext == gext && lb == glb && ub == glb + gext, "extent %ld lb %ld ub %ld", (long)ext,
          (long)lb, (long)ub);
    CALL(MPI_Type_free(&r));

    MPI_Datatype a, b;
    MPI_Aint sa, sb;
    int size_a, size_b;
    CALL(MPI_Type_hvector(3, 2, 20, MPI_INT, &a));
    CALL(MPI_Type_create_hvector(3, 2, 20, MPI_INT, &b));
    CALL(MPI_Type_extent(a, &sa));
    CALL(MPI_Type_extent(b, &sb));
    CALL(MPI_Type_size(a, &size_a));
    CALL(MPI_Type_size(b, &size_b));
    CHECK(sa == sb && size_a == size_b, "hvector: extent %ld/%ld size %d/%d", (long)sa, (long)sb,
          size_a, size_b);
    CALL(MPI_Type_free(&a));
    CALL(MPI_Type_free(&b));

    int bl[2] = {1, 3};
    MPI_Aint di[2] = {0, 16};
    MPI_Datatype ts[2] = {MPI_CHAR, MPI_DOUBLE};
    CALL(MPI_Type_hindexed(2, bl, di, MPI_INT, &a));
    CALL(MPI_Type_create_hindexed(2, bl, di, MPI_INT, &b));
    CALL(MPI_Type_extent(a, &sa));
    CALL(MPI_Type_extent(b, &sb));
    CHECK(sa == sb && sa == 28, "hindexed: extent %ld/%ld", (long)sa, (long)sb);
    CALL(MPI_Type_free(&a));
    CALL(MPI_Type_free(&b));
    CALL(MPI_Type_struct(2, bl, di, ts, &a));
    CALL(MPI_Type_create_struct(2, bl, di, ts, &b));
    CALL(MPI_Type_size(a, &size_a));
    CALL(MPI_Type_size(b, &size_b));
    CALL(MPI_Type_extent(a, &sa));
    CALL(MPI_Type_extent(b, &sb));
    CHECK(size_a == 25 && size_b == 25 && sa == sb, "struct: size %d/%d extent %ld/%ld", size_a,
          size_b, (long)sa, (long)sb);
    CALL(MPI_Type_free(&a));
    CALL(MPI_Type_free(&b));
}

static void attributes_and_handlers(void)
{
    int key = MPI_KEYVAL_INVALID, val = 41 + me, *got = NULL, flag = 0;
    CALL(MPI_Keyval_create(MPI_NULL_COPY_FN, on_delete, &key, NULL));
    CALL(MPI_Attr_put(MPI_COMM_WORLD, key, &val));
    CALL(MPI_Attr_get(MPI_COMM_WORLD, key, &got, &flag));
    CHECK(flag && got == &val, "Attr_get after Keyval_create: flag %d", flag);
    CALL(MPI_Attr_delete(MPI_COMM_WORLD, key));
    CHECK(deleted == val, "the delete callback saw %d", deleted);
    CALL(MPI_Attr_get(MPI_COMM_WORLD, key, &got, &flag));
    CHECK(!flag, "the attribute is still there");
    CALL(MPI_Keyval_free(&key));
    CHECK(key == MPI_KEYVAL_INVALID, "Keyval_free left %d", key);

    MPI_Errhandler eh, old, now;
    CALL(MPI_Errhandler_get(MPI_COMM_WORLD, &old));
    CALL(MPI_Errhandler_create(on_error, &eh));
    CALL(MPI_Errhandler_set(MPI_COMM_WORLD, eh));
    CALL(MPI_Errhandler_get(MPI_COMM_WORLD, &now));
    CHECK(now == eh, "Errhandler_get after set");
    int x = 0;
    int rc = MPI_Send(&x, 1, MPI_INT, np + 5, 0, MPI_COMM_WORLD);
    CHECK(rc != MPI_SUCCESS && handled == MPI_ERR_RANK, "handler saw class %d (rc %d)", handled, rc);
    CALL(MPI_Errhandler_set(MPI_COMM_WORLD, old));
    CALL(MPI_Errhandler_free(&eh));
    CALL(MPI_Errhandler_free(&now));
    CALL(MPI_Errhandler_free(&old));
}

static void status_conversion(void)
{
    MPI_Status st, back;
    int partner = (me + 1) % np, from = (me + np - 1) % np;
    double d[3] = {1, 2, 3}, r[3];
    CALL(MPI_Sendrecv(d, 3, MPI_DOUBLE, partner, 7, r, 3, MPI_DOUBLE, from, 7, MPI_COMM_WORLD, &st));
    /* MPICH's Fortran status: MPI_STATUS_SIZE integers, MPI_SOURCE = 3 and MPI_TAG = 4. */
    MPI_Fint f[sizeof(MPI_Status) / sizeof(MPI_Fint)];
    CALL(MPI_Status_c2f(&st, f));
    CALL(MPI_Status_f2c(f, &back));
    int n = -1;
    CALL(MPI_Get_count(&back, MPI_DOUBLE, &n));
    CHECK(back.MPI_SOURCE == from && back.MPI_TAG == 7 && n == 3, "round trip: source %d tag %d count %d",
          back.MPI_SOURCE, back.MPI_TAG, n);
    CHECK(f[2] == from && f[3] == 7, "Fortran status: source %d tag %d", f[2], f[3]);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    EXPECT(MPI_ERR_OTHER, MPI_Status_c2f(MPI_STATUS_IGNORE, f));
}

int main(int argc, char **argv)
{
    TEST_INIT(&argc, &argv);
    types();
    attributes_and_handlers();
    status_conversion();
    CALL(MPI_Barrier(MPI_COMM_WORLD));
    if (me == 0)
        printf("mpi1_names: ok\n");
    CALL(MPI_Finalize());
    return 0;
}

/* ranks: 1 2 3 */
/* mpich: skip MPICH 4.0.2 defines MPI_Status_c2f08/f082c only in its Fortran library and MPI_Status_f082f/f2f08 nowhere in C */
/*
 * A status in its three forms (MPI-4 19.3.5): C's MPI_Status, the Fortran
 * INTEGER status (MPI_F_STATUS_SIZE integers, MPI_F_SOURCE/TAG/ERROR) and
 * the mpi_f08 status (MPI_F08_status). A received message's status goes
 * C -> F08 -> Fortran -> F08 -> C and C -> Fortran -> C with its source,
 * tag, error, count and cancelled flag intact, including a count above
 * 2^31 (the private fields travel). MPI_F08_STATUS_IGNORE and
 * MPI_F08_STATUSES_IGNORE are distinct, non-null sentinels, which, like
 * MPI_STATUS_IGNORE, cannot be converted (MPI_ERR_OTHER, as MPICH); NULL is
 * MPI_ERR_ARG.
 */
#define TEST_NAME "status_f08"
#include "testutil.h"

static void same(const MPI_Status *a, const MPI_Status *b, int line)
{
    MPI_Count na = -1, nb = -2;
    int ca = -1, cb = -2;
    CALL(MPI_Get_elements_x(a, MPI_BYTE, &na));
    CALL(MPI_Get_elements_x(b, MPI_BYTE, &nb));
    CALL(MPI_Test_cancelled(a, &ca));
    CALL(MPI_Test_cancelled(b, &cb));
    if (a->MPI_SOURCE != b->MPI_SOURCE || a->MPI_TAG != b->MPI_TAG || a->MPI_ERROR != b->MPI_ERROR || na != nb || ca != cb)
        fail(line, "statuses differ: source %d/%d tag %d/%d error %d/%d count %lld/%lld cancelled %d/%d",
             a->MPI_SOURCE, b->MPI_SOURCE, a->MPI_TAG, b->MPI_TAG, a->MPI_ERROR, b->MPI_ERROR,
             (long long)na, (long long)nb, ca, cb);
}

/* Every path between the forms gives `st` back. */
static void round_trips(const MPI_Status *st)
{
    MPI_F08_status f08, f08b;
    MPI_Fint f[MPI_F_STATUS_SIZE], fb[MPI_F_STATUS_SIZE];
    MPI_Status back;

    CALL(MPI_Status_c2f08(st, &f08));
    CHECK(f08.MPI_SOURCE == st->MPI_SOURCE && f08.MPI_TAG == st->MPI_TAG && f08.MPI_ERROR == st->MPI_ERROR,
          "F08 status: source %d tag %d error %d", f08.MPI_SOURCE, f08.MPI_TAG, f08.MPI_ERROR);
    CALL(MPI_Status_f082c(&f08, &back));
    same(st, &back, __LINE__);

    CALL(MPI_Status_f082f(&f08, f));
    CHECK(f[MPI_F_SOURCE] == st->MPI_SOURCE && f[MPI_F_TAG] == st->MPI_TAG && f[MPI_F_ERROR] == st->MPI_ERROR,
          "Fortran status: source %d tag %d error %d", f[MPI_F_SOURCE], f[MPI_F_TAG], f[MPI_F_ERROR]);
    CALL(MPI_Status_f2f08(f, &f08b));
    CALL(MPI_Status_f082c(&f08b, &back));
    same(st, &back, __LINE__);

    CALL(MPI_Status_c2f(st, fb));
    for (int i = 0; i < MPI_F_STATUS_SIZE; i++)
        CHECK(fb[i] == f[i], "MPI_Status_c2f and c2f08 + f082f differ at %d: %d, %d", i, fb[i], f[i]);
    CALL(MPI_Status_f2c(fb, &back));
    same(st, &back, __LINE__);
}

int main(int argc, char **argv)
{
    TEST_INIT(&argc, &argv);
    CHECK(sizeof(MPI_F08_status) == MPI_F_STATUS_SIZE * sizeof(MPI_Fint), "sizeof(MPI_F08_status) %zu",
          sizeof(MPI_F08_status));
    CHECK(MPI_F08_STATUS_IGNORE != NULL && MPI_F08_STATUSES_IGNORE != NULL &&
              MPI_F08_STATUS_IGNORE != MPI_F08_STATUSES_IGNORE,
          "sentinels %p and %p", (void *)MPI_F08_STATUS_IGNORE, (void *)MPI_F08_STATUSES_IGNORE);

    /* A received message's status. */
    int to = (me + 1) % np, from = (me + np - 1) % np;
    short out[5] = {1, 2, 3, 4, 5}, in[5];
    MPI_Status st;
    CALL(MPI_Sendrecv(out, 5, MPI_SHORT, to, 40 + me, in, 5, MPI_SHORT, from, 40 + from, MPI_COMM_WORLD, &st));
    round_trips(&st);
    int n = -1;
    MPI_Status back;
    MPI_F08_status f08;
    CALL(MPI_Status_c2f08(&st, &f08));
    CALL(MPI_Status_f082c(&f08, &back));
    CALL(MPI_Get_count(&back, MPI_SHORT, &n));
    CHECK(n == 5 && back.MPI_SOURCE == from && back.MPI_TAG == 40 + from, "count %d source %d tag %d", n,
          back.MPI_SOURCE, back.MPI_TAG);

    /* A count past 32 bits and the cancelled flag live in the private fields. */
    CALL(MPI_Status_set_elements_x(&st, MPI_BYTE, ((MPI_Count)3 << 32) + 17));
    CALL(MPI_Status_set_cancelled(&st, 1));
    st.MPI_ERROR = MPI_ERR_TRUNCATE;
    round_trips(&st);

    CALL(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MPI_Fint f[MPI_F_STATUS_SIZE];
    EXPECT(MPI_ERR_OTHER, MPI_Status_c2f08(MPI_STATUS_IGNORE, &f08));
    EXPECT(MPI_ERR_OTHER, MPI_Status_f082c(MPI_F08_STATUS_IGNORE, &back));
    EXPECT(MPI_ERR_OTHER, MPI_Status_f082f(MPI_F08_STATUSES_IGNORE, f));
    EXPECT(MPI_ERR_OTHER, MPI_Status_c2f08(&st, MPI_F08_STATUS_IGNORE));
    EXPECT(MPI_ERR_OTHER, MPI_Status_f082c(&f08, MPI_STATUS_IGNORE));
    EXPECT(MPI_ERR_ARG, MPI_Status_f082c(NULL, &back));
    EXPECT(MPI_ERR_ARG, MPI_Status_c2f08(&st, NULL));
    EXPECT(MPI_ERR_ARG, MPI_Status_f2f08(NULL, &f08));
    EXPECT(MPI_ERR_ARG, MPI_Status_f082f(&f08, NULL));
    /* A failed conversion leaves its output alone. */
    f08.MPI_TAG = 12345;
    EXPECT(MPI_ERR_ARG, MPI_Status_f2f08(NULL, &f08));
    CHECK(f08.MPI_TAG == 12345, "a failed conversion wrote %d", f08.MPI_TAG);

    CALL(MPI_Finalize());
    return 0;
}

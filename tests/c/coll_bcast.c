/* ranks: 1 2 3 4 5 7 8 */
/*
 * MPI_Bcast: roots 0, 1 and size-1; counts 0, 1, 7 and 10001 of MPI_INT,
 * 7 of MPI_DOUBLE and MPI_CHAR; a vector datatype (3 blocks of 2 ints,
 * stride 4) on both sides, and matched against plain MPI_INT on the other
 * side in both directions, with the gaps left untouched; nothing written
 * past the end of the buffer. On MPI_COMM_WORLD, on a split of it with
 * reversed keys and on MPI_COMM_SELF.
 */
#include <string.h>

#define TEST_NAME "coll_bcast"
#include "testutil.h"

#define GUARD 8
#define POISON (-777)

static MPI_Comm comm;
static const char *comm_name;
static int n, r;

static int val(int root, int k) { return root * 100003 + k * 7 + 1; }

static void ints(int root, int count)
{
    int *buf = xmalloc((size_t)(count + GUARD) * sizeof(int));
    for (int k = 0; k < count + GUARD; k++)
        buf[k] = r == root && k < count ? val(root, k) : POISON;
    CALL(MPI_Bcast(buf, count, MPI_INT, root, comm));
    for (int k = 0; k < count + GUARD; k++) {
        int want = k < count ? val(root, k) : POISON;
        CHECK(buf[k] == want, "Bcast of %d ints from root %d on %s: element %d is %d, "
              "expected %d", count, root, comm_name, k, buf[k], want);
    }
    free(buf);
}

static void others(int root)
{
    double d[7];
    char c[8];
    for (int k = 0; k < 7; k++) {
        d[k] = r == root ? root * 0.5 - k * 0.25 : -1.0;
        c[k] = r == root ? (char)('a' + k + root) : '#';
    }
    c[7] = '!';
    CALL(MPI_Bcast(d, 7, MPI_DOUBLE, root, comm));
    CALL(MPI_Bcast(c, 7, MPI_CHAR, root, comm));
    for (int k = 0; k < 7; k++) {
        CHECK(d[k] == root * 0.5 - k * 0.25, "Bcast of doubles from %d on %s: element %d "
              "is %g", root, comm_name, k, d[k]);
        CHECK(c[k] == (char)('a' + k + root), "Bcast of chars from %d on %s: element %d is "
              "'%c'", root, comm_name, k, c[k]);
    }
    CHECK(c[7] == '!', "Bcast of 7 chars wrote an eighth");
}

/* A vector of 3 blocks of 2 ints with stride 4: 6 ints over an extent of 10. */
static MPI_Datatype vec;
enum { VEXT = 10 };

static int in_vec(int k) { return k % VEXT % 4 < 2; }

/* mode 0: vector on every rank; 1: vector at the root, ints elsewhere;
 * 2: ints at the root, vector elsewhere. */
static void vectors(int root, int count, int mode)
{
    int root_vec = mode != 2, other_vec = mode != 1;
    int my_vec = r == root ? root_vec : other_vec;
    int len = count * VEXT + GUARD;
    int *buf = xmalloc((size_t)len * sizeof(int));
    /* The root's data: element e of the message is 1000*root + e. */
    for (int k = 0; k < len; k++)
        buf[k] = POISON;
    if (r == root) {
        int e = 0;
        for (int k = 0; k < (root_vec ? count * VEXT : 6 * count); k++)
            if (!root_vec || in_vec(k))
                buf[k] = 1000 * root + e++;
    }
    if (my_vec)
        CALL(MPI_Bcast(buf, count, vec, root, comm));
    else
        CALL(MPI_Bcast(buf, 6 * count, MPI_INT, root, comm));
    int e = 0;
    for (int k = 0; k < len; k++) {
        int inside = my_vec ? k < count * VEXT && in_vec(k) : k < 6 * count;
        int want = inside ? 1000 * root + e++ : POISON;
        CHECK(buf[k] == want, "Bcast of %d vectors (mode %d) from root %d on %s: int %d is "
              "%d, expected %d", count, mode, root, comm_name, k, buf[k], want);
    }
    free(buf);
}

static void run_on(MPI_Comm c, const char *name)
{
    comm = c;
    comm_name = name;
    CALL(MPI_Comm_size(comm, &n));
    CALL(MPI_Comm_rank(comm, &r));
    int roots[3], nroots = 0;
    roots[nroots++] = 0;
    if (n > 1) roots[nroots++] = 1;
    if (n > 2) roots[nroots++] = n - 1;
    static const int counts[] = { 0, 1, 7, 10001 };
    for (int i = 0; i < nroots; i++) {
        int root = roots[i];
        for (int j = 0; j < 4; j++)
            ints(root, counts[j]);
        others(root);
        vectors(root, 1, 0);
        vectors(root, 7, 0);
        vectors(root, 7, 1);
        vectors(root, 7, 2);
        vectors(root, 0, 0);
    }
}

int main(int argc, char **argv)
{
    TEST_INIT(&argc, &argv);
    CALL(MPI_Type_vector(3, 2, 4, MPI_INT, &vec));
    CALL(MPI_Type_commit(&vec));

    run_on(MPI_COMM_WORLD, "MPI_COMM_WORLD");

    MPI_Comm rev;
    CALL(MPI_Comm_split(MPI_COMM_WORLD, 0, np - me, &rev));
    int rr = -1;
    CALL(MPI_Comm_rank(rev, &rr));
    CHECK(rr == np - 1 - me, "split with reversed keys: rank %d, expected %d", rr, np - 1 - me);
    run_on(rev, "reversed split of MPI_COMM_WORLD");
    CALL(MPI_Comm_free(&rev));

    run_on(MPI_COMM_SELF, "MPI_COMM_SELF");

    /* Every root once, on MPI_COMM_WORLD. */
    comm = MPI_COMM_WORLD;
    comm_name = "MPI_COMM_WORLD";
    n = np;
    r = me;
    for (int root = 0; root < np; root++)
        ints(root, 7);

    CALL(MPI_Type_free(&vec));
    CALL(MPI_Finalize());
    finalized = 1;
    return 0;
}

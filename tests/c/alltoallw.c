/* ranks: 1 2 3 5 */
/*
 * MPI_Alltoallw and MPI_Ialltoallw: a datatype per peer (int, double, a
 * strided vector received as contiguous ints), byte displacements in reverse
 * peer order with gaps that must stay untouched, zero counts, MPI_IN_PLACE;
 * error classes with MPI_ERRORS_RETURN.
 */
#define TEST_NAME "alltoallw"
#include "testutil.h"

#include <string.h>

#define SLOT 256 /* bytes per peer in the buffers */
#define GAP 8    /* receive blocks start this far into their slot */

static MPI_Datatype strided[5]; /* vector of k ints, stride 2, for k = 1..4 */

static int kind(int i, int j) { return (i + j) % 3; }
static int count_of(int i, int j) { return kind(i, j) == 2 ? (i + j) % 4 + 1 : (i + j) % 4; }
static int value(int from, int to, int e) { return from * 1000 + to * 10 + e; }

/* Write what `from` sends to `to` at p, in the send layout (strided for kind 2). */
static void fill(char *p, int from, int to)
{
    int k = count_of(from, to);
    for (int e = 0; e < k; e++) {
        if (kind(from, to) == 1)
            ((double *)p)[e] = value(from, to, e);
        else if (kind(from, to) == 0)
            ((int *)p)[e] = value(from, to, e);
        else
            ((int *)p)[2 * e] = value(from, to, e);
    }
}

static void check_block(const char *p, int from, int to, int line)
{
    int k = count_of(from, to);
    for (int e = 0; e < k; e++) {
        double got = kind(from, to) == 1 ? ((const double *)p)[e] : ((const int *)p)[e];
        if (got != value(from, to, e))
            fail(line, "block from %d element %d: %g, expected %d", from, e, got, value(from, to, e));
    }
    size_t used = (size_t)k * (kind(from, to) == 1 ? sizeof(double) : sizeof(int));
    for (size_t b = used; b < SLOT - GAP; b++)
        if ((unsigned char)p[b] != 0x5a)
            fail(line, "byte %zu after the block from %d was written", b, from);
}

static void layout(int *rc, int *rd, MPI_Datatype *rt, int *sc, int *sd, MPI_Datatype *st)
{
    for (int j = 0; j < np; j++) {
        rc[j] = count_of(me, j);
        rd[j] = j * SLOT + GAP;
        rt[j] = kind(me, j) == 1 ? MPI_DOUBLE : MPI_INT;
        sd[j] = (np - 1 - j) * SLOT;
        if (kind(me, j) == 2) {
            sc[j] = 1;
            st[j] = strided[count_of(me, j)];
        } else {
            sc[j] = count_of(me, j);
            st[j] = rt[j];
        }
    }
}

int main(int argc, char **argv)
{
    TEST_INIT(&argc, &argv);
    for (int k = 1; k <= 4; k++) {
        CALL(MPI_Type_vector(k, 1, 2, MPI_INT, &strided[k]));
        CALL(MPI_Type_commit(&strided[k]));
    }
    int *sc = xmalloc(np * sizeof(int)), *sd = xmalloc(np * sizeof(int));
    int *rc = xmalloc(np * sizeof(int)), *rd = xmalloc(np * sizeof(int));
    MPI_Datatype *st = xmalloc(np * sizeof(MPI_Datatype)), *rt = xmalloc(np * sizeof(MPI_Datatype));
    char *sbuf = xmalloc((size_t)np * SLOT), *rbuf = xmalloc((size_t)np * SLOT);
    layout(rc, rd, rt, sc, sd, st);

    for (int round = 0; round < 3; round++) {
        memset(sbuf, 0, (size_t)np * SLOT);
        memset(rbuf, 0x5a, (size_t)np * SLOT);
        for (int j = 0; j < np; j++)
            fill(sbuf + sd[j], me, j);
        if (round == 0) {
            CALL(MPI_Alltoallw(sbuf, sc, sd, st, rbuf, rc, rd, rt, MPI_COMM_WORLD));
        } else if (round == 1) {
            MPI_Request req;
            CALL(MPI_Ialltoallw(sbuf, sc, sd, st, rbuf, rc, rd, rt, MPI_COMM_WORLD, &req));
            CALL(MPI_Wait(&req, MPI_STATUS_IGNORE));
        } else {
            /* In place: the receive layout and types both ways (kind 2 as plain ints). */
            for (int j = 0; j < np; j++) {
                char *p = rbuf + rd[j];
                int k = count_of(me, j);
                for (int e = 0; e < k; e++) {
                    if (kind(me, j) == 1)
                        ((double *)p)[e] = value(me, j, e);
                    else
                        ((int *)p)[e] = value(me, j, e);
                }
            }
            CALL(MPI_Alltoallw(MPI_IN_PLACE, NULL, NULL, NULL, rbuf, rc, rd, rt, MPI_COMM_WORLD));
        }
        for (int j = 0; j < np; j++)
            check_block(rbuf + rd[j], j, me, __LINE__);
        for (int b = 0; b < GAP; b++)
            CHECK((unsigned char)rbuf[b] == 0x5a, "round %d: gap byte %d written", round, b);
    }

    /* Error classes. */
    CALL(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    int cls, rc_;
    int saved = rc[0];
    rc[0] = -1;
    rc_ = MPI_Alltoallw(sbuf, sc, sd, st, rbuf, rc, rd, rt, MPI_COMM_WORLD);
    MPI_Error_class(rc_, &cls);
    CHECK(rc_ != MPI_SUCCESS && cls == MPI_ERR_COUNT, "negative count: class %d", cls);
    rc[0] = saved;
    MPI_Datatype savedt = st[0];
    int savedc = sc[0];
    st[0] = MPI_DATATYPE_NULL;
    sc[0] = 1;
    rc_ = MPI_Alltoallw(sbuf, sc, sd, st, rbuf, rc, rd, rt, MPI_COMM_WORLD);
    MPI_Error_class(rc_, &cls);
    CHECK(rc_ != MPI_SUCCESS && cls == MPI_ERR_TYPE, "MPI_DATATYPE_NULL: class %d", cls);
    st[0] = savedt;
    sc[0] = savedc;
    /* Still in step after the failed calls. */
    memset(rbuf, 0x5a, (size_t)np * SLOT);
    CALL(MPI_Alltoallw(sbuf, sc, sd, st, rbuf, rc, rd, rt, MPI_COMM_WORLD));
    for (int j = 0; j < np; j++)
        check_block(rbuf + rd[j], j, me, __LINE__);

    for (int k = 1; k <= 4; k++)
        CALL(MPI_Type_free(&strided[k]));
    free(sc); free(sd); free(rc); free(rd); free(st); free(rt); free(sbuf); free(rbuf);
    MPI_Finalize();
    finalized = 1;
    if (me == 0)
        printf("alltoallw: ok\n");
    return 0;
}

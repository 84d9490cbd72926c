/* ranks: 1 2 3 4 5 6 7 8 */
/*
 * Non-blocking collectives overlapped with each other and with
 * point-to-point traffic on the same communicator: each round starts an
 * MPI_Ibarrier, MPI_Ibcast, MPI_Ialltoall, MPI_Ialltoallv,
 * MPI_Ireduce_scatter, MPI_Iallreduce with a non-commutative user operation,
 * MPI_Igather, MPI_Iscan and MPI_Iallgatherv, with MPI_Isend/MPI_Irecv ring
 * messages (some posted before, some after the collectives, one of them for
 * MPI_ANY_SOURCE/MPI_ANY_TAG), and completes them all in a different way per
 * round: MPI_Waitall, polling MPI_Test in reverse order, MPI_Waitany,
 * MPI_Waitsome, MPI_Testall. Then the progress rule across a blocking
 * collective: after an MPI_Ibcast, the ranks at an even distance from the
 * root enter a blocking MPI_Allreduce first while the others first wait for
 * the Ibcast, which (binomial tree) needs an even rank to pass the data on
 * from inside its Allreduce; the same with MPI_Comm_dup in place of the
 * Allreduce.
 */
#include <string.h>

#define TEST_NAME "coll_overlap"
#include "testutil.h"

enum { N = 3000, NREQ = 13 };
static int n, r;

/* 2x2 matrices of unsigned ints, multiplied in rank order. */
static void mat_mul(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    unsigned *a = in, *b = inout;
    for (int i = 0; i < *len; i++, a += 4, b += 4) {
        unsigned c[4] = { a[0] * b[0] + a[1] * b[2], a[0] * b[1] + a[1] * b[3],
                          a[2] * b[0] + a[3] * b[2], a[2] * b[1] + a[3] * b[3] };
        memcpy(b, c, sizeof c);
    }
}

static void mat_of(int q, int round, unsigned m[4])
{
    m[0] = 1; m[1] = (unsigned)(q + round); m[2] = (unsigned)(q % 2); m[3] = 1;
}

static void complete(MPI_Request *reqs, int count, int how)
{
    int left = count, idx, flag, outs, ids[NREQ];
    switch (how % 5) {
    case 0:
        CALL(MPI_Waitall(count, reqs, statuses_ignore()));
        break;
    case 1: /* poll, newest first */
        while (left > 0)
            for (int i = count - 1; i >= 0; i--)
                if (reqs[i] != MPI_REQUEST_NULL) {
                    CALL(MPI_Test(&reqs[i], &flag, MPI_STATUS_IGNORE));
                    left -= flag;
                }
        break;
    case 2:
        for (int k = 0; k < count; k++) {
            CALL(MPI_Waitany(count, reqs, &idx, MPI_STATUS_IGNORE));
            CHECK(idx != MPI_UNDEFINED, "Waitany found nothing with %d requests left", count - k);
        }
        break;
    case 3:
        while (left > 0) {
            CALL(MPI_Waitsome(count, reqs, &outs, ids, statuses_ignore()));
            CHECK(outs != MPI_UNDEFINED && outs > 0, "Waitsome completed %d", outs);
            left -= outs;
        }
        break;
    default:
        flag = 0;
        while (!flag)
            CALL(MPI_Testall(count, reqs, &flag, statuses_ignore()));
    }
    for (int i = 0; i < count; i++)
        CHECK(reqs[i] == MPI_REQUEST_NULL, "request %d not freed by its completion", i);
}

static void round_of(int round, MPI_Op matop, MPI_Datatype mat)
{
    MPI_Request q[NREQ];
    int nq = 0, root = round % n;
    int right = (r + 1) % n, left = (r + n - 1) % n;
    /* Point-to-point before the collectives. */
    int pin = -1, pout = r * 100 + round, any = -1, anyout = r + 7;
    CALL(MPI_Irecv(&pin, 1, MPI_INT, left, round, MPI_COMM_WORLD, &q[nq++]));
    CALL(MPI_Isend(&pout, 1, MPI_INT, right, round, MPI_COMM_WORLD, &q[nq++]));
    /* The collectives. */
    static int bc[N], a2a_s[64 * 4], a2a_r[64 * 4], av_s[64 * 3], av_r[64 * 3], rs_s[64 * 2], rs_r[2];
    static int g_s[5], g_r[64 * 5], sc_s, sc_r, agv_r[64 * 3];
    static unsigned m_s[4], m_r[4];
    CALL(MPI_Ibarrier(MPI_COMM_WORLD, &q[nq++]));
    for (int k = 0; k < N; k++)
        bc[k] = r == root ? k * 3 + round : -1;
    CALL(MPI_Ibcast(bc, N, MPI_INT, root, MPI_COMM_WORLD, &q[nq++]));
    for (int k = 0; k < 4 * n; k++)
        a2a_s[k] = r * 1000 + k;
    CALL(MPI_Ialltoall(a2a_s, 4, MPI_INT, a2a_r, 4, MPI_INT, MPI_COMM_WORLD, &q[nq++]));
    int vc[64], vd[64], wc[64], wd[64];
    for (int j = 0; j < n; j++) {
        vc[j] = (r + j + round) % 3;
        vd[j] = 3 * j;
        wc[j] = (j + r + round) % 3;
        wd[j] = 3 * (n - 1 - j);
        for (int k = 0; k < vc[j]; k++)
            av_s[3 * j + k] = r * 100 + j * 10 + k;
    }
    CALL(MPI_Ialltoallv(av_s, vc, vd, MPI_INT, av_r, wc, wd, MPI_INT, MPI_COMM_WORLD, &q[nq++]));
    int rc[64];
    for (int j = 0; j < n; j++)
        rc[j] = j % 2 + 1;
    int at = 0;
    for (int j = 0; j < n; j++)
        for (int k = 0; k < rc[j]; k++, at++)
            rs_s[at] = r + at;
    CALL(MPI_Ireduce_scatter(rs_s, rs_r, rc, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &q[nq++]));
    mat_of(r, round, m_s);
    CALL(MPI_Iallreduce(m_s, m_r, 1, mat, matop, MPI_COMM_WORLD, &q[nq++]));
    for (int k = 0; k < 5; k++)
        g_s[k] = r * 5 + k;
    CALL(MPI_Igather(g_s, 5, MPI_INT, g_r, 5, MPI_INT, root, MPI_COMM_WORLD, &q[nq++]));
    sc_s = r + 1;
    CALL(MPI_Iscan(&sc_s, &sc_r, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &q[nq++]));
    int gc[64], gd[64];
    for (int j = 0; j < n; j++) {
        gc[j] = j % 3;
        gd[j] = 3 * j;
    }
    int mine[3] = { r, r + 1, r + 2 };
    CALL(MPI_Iallgatherv(mine, gc[r], MPI_INT, agv_r, gc, gd, MPI_INT, MPI_COMM_WORLD, &q[nq++]));
    /* Point-to-point after them, one receive with wildcards. */
    CALL(MPI_Irecv(&any, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &q[nq++]));
    CALL(MPI_Isend(&anyout, 1, MPI_INT, left, 1000 + round, MPI_COMM_WORLD, &q[nq++]));
    CHECK(nq == NREQ, "%d requests", nq);
    complete(q, nq, round);

    CHECK(pin == left * 100 + round, "round %d: ring message %d", round, pin);
    CHECK(any == right + 7, "round %d: wildcard receive got %d, expected %d", round, any, right + 7);
    for (int k = 0; k < N; k++)
        CHECK(bc[k] == k * 3 + round, "round %d: Ibcast element %d is %d", round, k, bc[k]);
    for (int k = 0; k < 4 * n; k++)
        CHECK(a2a_r[k] == (k / 4) * 1000 + r * 4 + k % 4, "round %d: Ialltoall element %d is %d", round, k, a2a_r[k]);
    for (int j = 0; j < n; j++)
        for (int k = 0; k < wc[j]; k++)
            CHECK(av_r[wd[j] + k] == j * 100 + r * 10 + k, "round %d: Ialltoallv from %d element %d", round, j, k);
    int first = 0;
    for (int j = 0; j < r; j++)
        first += rc[j];
    for (int k = 0; k < rc[r]; k++)
        CHECK(rs_r[k] == n * (first + k) + n * (n - 1) / 2, "round %d: Ireduce_scatter element %d is %d", round, k, rs_r[k]);
    unsigned want[4] = { 1, 0, 0, 1 }, x[4];
    int one = 1;
    for (int p = n - 1; p >= 0; p--) {
        mat_of(p, round, x);
        mat_mul(x, want, &one, NULL);
    }
    CHECK(memcmp(m_r, want, sizeof want) == 0, "round %d: Iallreduce of matrices out of order", round);
    if (r == root)
        for (int k = 0; k < 5 * n; k++)
            CHECK(g_r[k] == k, "round %d: Igather element %d is %d", round, k, g_r[k]);
    CHECK(sc_r == (r + 1) * (r + 2) / 2, "round %d: Iscan gave %d", round, sc_r);
    for (int j = 0; j < n; j++)
        for (int k = 0; k < gc[j]; k++)
            CHECK(agv_r[gd[j] + k] == j + k, "round %d: Iallgatherv from %d element %d", round, j, k);
    /* Nobody starts the next round (whose messages a wildcard receive would take) before
     * every rank is through this one. */
    CALL(MPI_Barrier(MPI_COMM_WORLD));
}

int main(int argc, char **argv)
{
    TEST_INIT(&argc, &argv);
    CHECK(np <= 64, "at most 64 ranks");
    n = np;
    r = me;
    MPI_Op matop;
    MPI_Datatype mat;
    CALL(MPI_Op_create(mat_mul, 0, &matop));
    CALL(MPI_Type_contiguous(4, MPI_UNSIGNED, &mat));
    CALL(MPI_Type_commit(&mat));
    for (int round = 0; round < 10; round++)
        round_of(round, matop, mat);

    /* A blocking collective keeps the non-blocking ones moving. */
    for (int root = 0; root < n; root += n > 2 ? n - 1 : 1) {
        int b[100], v = r + 1, s = 0;
        for (int k = 0; k < 100; k++)
            b[k] = r == root ? k + root : -1;
        MPI_Request q;
        /* The others post their Ibcast first, so its data reaches them while they sit in
         * the Allreduce. */
        if (r == root)
            pause_ms(20);
        CALL(MPI_Ibcast(b, 100, MPI_INT, root, MPI_COMM_WORLD, &q));
        int even = (r - root + n) % n % 2 == 0;
        if (!even)
            CALL(MPI_Wait(&q, MPI_STATUS_IGNORE));
        CALL(MPI_Allreduce(&v, &s, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
        if (even)
            CALL(MPI_Wait(&q, MPI_STATUS_IGNORE));
        CHECK(s == n * (n + 1) / 2, "Allreduce beside an Ibcast gave %d", s);
        for (int k = 0; k < 100; k++)
            CHECK(b[k] == k + root, "Ibcast beside an Allreduce: element %d is %d", k, b[k]);
        if (n == 1)
            break;
    }
    /* The same across communicator creation, which is collective too. */
    {
        int b[100];
        for (int k = 0; k < 100; k++)
            b[k] = r == 0 ? k : -1;
        MPI_Request q;
        MPI_Comm dup;
        if (r == 0)
            pause_ms(20);
        CALL(MPI_Ibcast(b, 100, MPI_INT, 0, MPI_COMM_WORLD, &q));
        if (r % 2 == 1)
            CALL(MPI_Wait(&q, MPI_STATUS_IGNORE));
        CALL(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
        if (r % 2 == 0)
            CALL(MPI_Wait(&q, MPI_STATUS_IGNORE));
        for (int k = 0; k < 100; k++)
            CHECK(b[k] == k, "Ibcast beside MPI_Comm_dup: element %d is %d", k, b[k]);
        CALL(MPI_Comm_free(&dup));
    }
    CALL(MPI_Op_free(&matop));
    CALL(MPI_Type_free(&mat));
    CALL(MPI_Finalize());
    finalized = 1;
    return 0;
}

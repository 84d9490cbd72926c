/* ranks: 1 2 3 4 5 7 8 */
/*
 * Collectives back to back and mixed with point-to-point traffic on the same
 * communicator: a receive for MPI_ANY_SOURCE / MPI_ANY_TAG posted before a
 * run of every collective gets the neighbour's message, not collective
 * data; messages sent before a Bcast of the same size arrive after it,
 * intact and in order; a Sendrecv ring between two collectives. Then
 * collectives on the two halves of a split with reversed keys, alternating
 * with collectives on MPI_COMM_WORLD and on MPI_COMM_SELF.
 */
#include <string.h>

#define TEST_NAME "coll_mixed"
#include "testutil.h"

static void all_collectives(MPI_Comm c, int salt)
{
    int n, r;
    CALL(MPI_Comm_size(c, &n));
    CALL(MPI_Comm_rank(c, &r));
    int b[7], x = r + salt, s = -1, g[64], one = -1, sc = -1, ex = -99, rsb = -1;
    int in[64];
    for (int k = 0; k < 7; k++)
        b[k] = r == n - 1 ? salt * 10 + k : -1;
    CALL(MPI_Bcast(b, 7, MPI_INT, n - 1, c));
    for (int k = 0; k < 7; k++)
        CHECK(b[k] == salt * 10 + k, "Bcast: %d", b[k]);
    CALL(MPI_Allreduce(&x, &s, 1, MPI_INT, MPI_SUM, c));
    CHECK(s == n * salt + n * (n - 1) / 2, "Allreduce: %d", s);
    CALL(MPI_Gather(&x, 1, MPI_INT, g, 1, MPI_INT, 0, c));
    if (r == 0)
        for (int q = 0; q < n; q++)
            CHECK(g[q] == q + salt, "Gather: %d from %d", g[q], q);
    for (int q = 0; q < n; q++)
        in[q] = 3 * q + salt;
    CALL(MPI_Scatter(in, 1, MPI_INT, &one, 1, MPI_INT, n > 1 ? 1 : 0, c));
    CHECK(one == 3 * r + salt, "Scatter: %d", one);
    for (int q = 0; q < 64; q++)
        g[q] = -1;
    CALL(MPI_Allgather(&x, 1, MPI_INT, g, 1, MPI_INT, c));
    for (int q = 0; q < n; q++)
        CHECK(g[q] == q + salt, "Allgather: %d from %d", g[q], q);
    CALL(MPI_Reduce(&x, &s, 1, MPI_INT, MPI_MAX, 0, c));
    if (r == 0)
        CHECK(s == n - 1 + salt, "Reduce: %d", s);
    CALL(MPI_Scan(&x, &sc, 1, MPI_INT, MPI_SUM, c));
    CHECK(sc == (r + 1) * salt + r * (r + 1) / 2, "Scan: %d", sc);
    CALL(MPI_Exscan(&x, &ex, 1, MPI_INT, MPI_SUM, c));
    if (r == 0)
        CHECK(ex == -99, "Exscan changed rank 0's buffer: %d", ex);
    else
        CHECK(ex == r * salt + r * (r - 1) / 2, "Exscan: %d", ex);
    for (int q = 0; q < n; q++)
        in[q] = q + r;
    CALL(MPI_Reduce_scatter_block(in, &rsb, 1, MPI_INT, MPI_SUM, c));
    CHECK(rsb == n * r + n * (n - 1) / 2, "Reduce_scatter_block: %d", rsb);
    int counts[64], displs[64];
    for (int q = 0; q < n; q++) {
        counts[q] = 1;
        displs[q] = n - 1 - q;
    }
    CALL(MPI_Allgatherv(&x, 1, MPI_INT, g, counts, displs, MPI_INT, c));
    for (int q = 0; q < n; q++)
        CHECK(g[n - 1 - q] == q + salt, "Allgatherv: %d", g[n - 1 - q]);
    CALL(MPI_Gatherv(&x, 1, MPI_INT, g, counts, displs, MPI_INT, n - 1, c));
    CALL(MPI_Scatterv(in, counts, displs, MPI_INT, &one, 1, MPI_INT, 0, c));
    CHECK(one == n - 1 - r, "Scatterv: %d", one);
}

int main(int argc, char **argv)
{
    TEST_INIT(&argc, &argv);
    CHECK(np <= 64, "at most 64 ranks");
    int right = (me + 1) % np, left = (me + np - 1) % np;

    /* A wildcard receive waiting through every collective. */
    int msg[4] = { 0 }, out[4] = { me, 77, -me, 12345 };
    MPI_Request rreq, sreq;
    MPI_Status st;
    CALL(MPI_Irecv(msg, 4, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &rreq));
    for (int round = 0; round < 3; round++)
        all_collectives(MPI_COMM_WORLD, round + 1);
    CALL(MPI_Isend(out, 4, MPI_INT, right, 77, MPI_COMM_WORLD, &sreq));
    CALL(MPI_Wait(&rreq, &st));
    CHECK(st.MPI_SOURCE == left && st.MPI_TAG == 77, "wildcard receive matched source %d "
          "tag %d", st.MPI_SOURCE, st.MPI_TAG);
    CHECK(msg[0] == left && msg[1] == 77 && msg[2] == -left && msg[3] == 12345,
          "wildcard receive got %d %d %d %d", msg[0], msg[1], msg[2], msg[3]);
    CALL(MPI_Wait(&sreq, MPI_STATUS_IGNORE));

    /* Messages of the Bcast's size sent before it, received after it. */
    int p2p[3][7], got[7], bc[7];
    MPI_Request reqs[3];
    for (int m = 0; m < 3; m++) {
        for (int k = 0; k < 7; k++)
            p2p[m][k] = 1000 * me + 100 * m + k;
        CALL(MPI_Isend(p2p[m], 7, MPI_INT, right, 5 + m, MPI_COMM_WORLD, &reqs[m]));
    }
    for (int k = 0; k < 7; k++)
        bc[k] = me == 0 ? -k - 1 : 0;
    CALL(MPI_Bcast(bc, 7, MPI_INT, 0, MPI_COMM_WORLD));
    for (int k = 0; k < 7; k++)
        CHECK(bc[k] == -k - 1, "Bcast among pending messages: element %d is %d", k, bc[k]);
    int ring = -1;
    CALL(MPI_Sendrecv(&me, 1, MPI_INT, right, 9, &ring, 1, MPI_INT, left, 9, MPI_COMM_WORLD,
                      &st));
    CHECK(ring == left, "Sendrecv between collectives got %d", ring);
    all_collectives(MPI_COMM_WORLD, 40);
    for (int m = 2; m >= 0; m--) {
        CALL(MPI_Recv(got, 7, MPI_INT, left, 5 + m, MPI_COMM_WORLD, &st));
        for (int k = 0; k < 7; k++)
            CHECK(got[k] == 1000 * left + 100 * m + k, "message %d: element %d is %d", m, k,
                  got[k]);
    }
    CALL(MPI_Waitall(3, reqs, statuses_ignore()));

    /* Two halves with reversed keys, alternating with the whole and with self. */
    MPI_Comm half;
    CALL(MPI_Comm_split(MPI_COMM_WORLD, me % 2, -me, &half));
    int hn, hr;
    CALL(MPI_Comm_size(half, &hn));
    CALL(MPI_Comm_rank(half, &hr));
    int members = (np - me % 2 + 1) / 2;
    CHECK(hn == members, "half of size %d, expected %d", hn, members);
    int w = -1;
    CALL(MPI_Allreduce(&me, &w, 1, MPI_INT, MPI_MAX, half));
    int top = (np - 1) % 2 == me % 2 ? np - 1 : np - 2;
    CHECK(w == top, "Allreduce MAX on the half: %d, expected %d", w, top);
    CHECK(hr == (top - me) / 2, "rank %d in the half, expected %d", hr, (top - me) / 2);
    for (int round = 0; round < 2; round++) {
        all_collectives(half, 100 + round);
        all_collectives(MPI_COMM_WORLD, 200 + round);
        all_collectives(MPI_COMM_SELF, 300 + round);
    }
    int world_ranks[64];
    CALL(MPI_Allgather(&me, 1, MPI_INT, world_ranks, 1, MPI_INT, half));
    for (int q = 0; q < hn; q++)
        CHECK(world_ranks[q] == top - 2 * q, "half's rank %d is world rank %d", q,
              world_ranks[q]);
    CALL(MPI_Comm_free(&half));

    CALL(MPI_Finalize());
    finalized = 1;
    return 0;
}

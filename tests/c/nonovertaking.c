/* ranks: 2 4 5 */
/*
 * Non-overtaking order (MPI 4.x, 3.5): messages from one sender on one
 * communicator that match the same receive are received in the order sent.
 * Covered: many messages with one tag and source; interleaved tags received
 * selectively; MPI_ANY_TAG; MPI_ANY_SOURCE with several senders (order per
 * sender); receives posted before the messages arrive, matched in posting
 * order, mixing wildcard and specific tags; large (rendezvous-sized) and small
 * messages mixed, both pre-posted and unexpected.
 */
#include <string.h>

#define TEST_NAME "nonovertaking"
#include "testutil.h"

/* Every rank sends N messages with one tag to every other rank; each
 * receiver takes them source by source with blocking receives. The sends are
 * non-blocking, so no rank depends on buffering. */
static void same_tag_every_pair(void)
{
    enum { N = 400 };
    int npeers = np - 1;
    MPI_Request *reqs = xmalloc(sizeof(MPI_Request) * N * npeers);
    int *payload = xmalloc(sizeof(int) * 2 * N * npeers);
    int nreq = 0;
    for (int d = 1; d < np; d++) {
        int dest = (me + d) % np;
        for (int k = 0; k < N; k++) {
            int *p = &payload[2 * nreq];
            p[0] = me;
            p[1] = k;
            CALL(MPI_Isend(p, 2, MPI_INT, dest, 7, MPI_COMM_WORLD, &reqs[nreq]));
            nreq++;
        }
    }
    for (int d = 1; d < np; d++) {
        int src = (me + np - d) % np;
        for (int k = 0; k < N; k++) {
            int in[2] = { -1, -1 };
            MPI_Status st;
            CALL(MPI_Recv(in, 2, MPI_INT, src, 7, MPI_COMM_WORLD, &st));
            CHECK(in[0] == src && in[1] == k, "from %d expected seq %d, got (%d, %d)",
                  src, k, in[0], in[1]);
            CHECK(st.MPI_SOURCE == src && st.MPI_TAG == 7, "status %d/%d", st.MPI_SOURCE,
                  st.MPI_TAG);
        }
    }
    CALL(MPI_Waitall(nreq, reqs, statuses_ignore()));
    free(reqs);
    free(payload);
}

/* Every rank except 0 sends M messages to rank 0 with tags cycling over 0..2;
 * rank 0 receives with ANY_SOURCE and ANY_TAG and checks the order per sender. */
static void any_source_any_tag(void)
{
    enum { M = 300 };
    if (me != 0) {
        MPI_Request *reqs = xmalloc(sizeof(MPI_Request) * M);
        int *payload = xmalloc(sizeof(int) * 2 * M);
        for (int k = 0; k < M; k++) {
            payload[2 * k] = me;
            payload[2 * k + 1] = k;
            CALL(MPI_Isend(&payload[2 * k], 2, MPI_INT, 0, k % 3, MPI_COMM_WORLD, &reqs[k]));
        }
        CALL(MPI_Waitall(M, reqs, statuses_ignore()));
        free(reqs);
        free(payload);
        return;
    }
    int *next = xmalloc(sizeof(int) * np);
    for (int s = 0; s < np; s++)
        next[s] = 0;
    for (int k = 0; k < M * (np - 1); k++) {
        int in[2] = { -1, -1 };
        MPI_Status st;
        CALL(MPI_Recv(in, 2, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
        int s = st.MPI_SOURCE;
        CHECK(s > 0 && s < np, "ANY_SOURCE status source %d", s);
        CHECK(in[0] == s, "payload says sender %d, status says %d", in[0], s);
        CHECK(in[1] == next[s], "from %d expected seq %d, got %d", s, next[s], in[1]);
        CHECK(st.MPI_TAG == in[1] % 3, "seq %d from %d carried tag %d", in[1], s, st.MPI_TAG);
        next[s]++;
    }
    for (int s = 1; s < np; s++)
        CHECK(next[s] == M, "received %d of %d messages from %d", next[s], M, s);
    free(next);
}

/* Each rank sends to its right neighbour messages with tags 1 and 2
 * alternating. The receiver takes all tag-2 messages first, then all tag-1
 * messages; within each tag the order must be the sending order. Then a
 * second batch received with ANY_TAG must arrive exactly in sending order. */
static void interleaved_tags(void)
{
    enum { K = 300 };
    int right = (me + 1) % np, left = (me + np - 1) % np;
    MPI_Request *reqs = xmalloc(sizeof(MPI_Request) * K);
    int *seq = xmalloc(sizeof(int) * K);

    for (int round = 0; round < 2; round++) {
        for (int k = 0; k < K; k++) {
            seq[k] = k;
            CALL(MPI_Isend(&seq[k], 1, MPI_INT, right, 1 + k % 2, MPI_COMM_WORLD, &reqs[k]));
        }
        if (round == 0) {
            for (int tag = 2; tag >= 1; tag--) {
                int expect = tag - 1;
                for (int k = 0; k < K / 2; k++) {
                    int in = -1;
                    MPI_Status st;
                    CALL(MPI_Recv(&in, 1, MPI_INT, left, tag, MPI_COMM_WORLD, &st));
                    CHECK(in == expect, "tag %d: expected seq %d, got %d", tag, expect, in);
                    CHECK(st.MPI_TAG == tag, "status tag %d, expected %d", st.MPI_TAG, tag);
                    expect += 2;
                }
            }
        } else {
            for (int k = 0; k < K; k++) {
                int in = -1;
                MPI_Status st;
                CALL(MPI_Recv(&in, 1, MPI_INT, left, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
                CHECK(in == k, "ANY_TAG: expected seq %d, got %d", k, in);
                CHECK(st.MPI_TAG == 1 + k % 2, "ANY_TAG: seq %d had tag %d", k, st.MPI_TAG);
            }
        }
        CALL(MPI_Waitall(K, reqs, statuses_ignore()));
    }
    free(reqs);
    free(seq);
}

/* Receives posted before any matching message exists are matched in posting
 * order. Rank r posts its receives, then tells its left neighbour to start;
 * the "ready" signal travels on a duplicate communicator so that it cannot
 * match the wildcard receives under test. */
static void preposted_in_order(void)
{
    enum { P = 64 };
    int right = (me + 1) % np, left = (me + np - 1) % np;
    MPI_Request reqs[P + 3];
    int in[P + 3];
    MPI_Comm ctl;
    CALL(MPI_Comm_dup(MPI_COMM_WORLD, &ctl));

    /* P receives with ANY_TAG from the left neighbour, then three more:
     * tag 105, ANY_TAG, tag 105. */
    for (int k = 0; k < P; k++) {
        in[k] = -1;
        CALL(MPI_Irecv(&in[k], 1, MPI_INT, left, MPI_ANY_TAG, MPI_COMM_WORLD, &reqs[k]));
    }
    in[P] = in[P + 1] = in[P + 2] = -1;
    CALL(MPI_Irecv(&in[P], 1, MPI_INT, left, 105, MPI_COMM_WORLD, &reqs[P]));
    CALL(MPI_Irecv(&in[P + 1], 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD,
                   &reqs[P + 1]));
    CALL(MPI_Irecv(&in[P + 2], 1, MPI_INT, left, 105, MPI_COMM_WORLD, &reqs[P + 2]));

    CALL(MPI_Sendrecv(NULL, 0, MPI_INT, left, 200, NULL, 0, MPI_INT, right, 200,
                      ctl, MPI_STATUS_IGNORE));

    /* Message k matches the earliest posted receive that accepts it: the
     * first P take the ANY_TAG receives in order; then tag 109 skips the
     * tag-105 receive and lands in the wildcard slot, and the two tag-105
     * messages fill the tag-105 receives in order. */
    int out[P + 3];
    for (int k = 0; k < P; k++) {
        out[k] = 1000 + k;
        CALL(MPI_Send(&out[k], 1, MPI_INT, right, 300 + (k * 7) % 11, MPI_COMM_WORLD));
    }
    out[P] = 1;
    out[P + 1] = 2;
    out[P + 2] = 3;
    CALL(MPI_Send(&out[P], 1, MPI_INT, right, 109, MPI_COMM_WORLD));
    CALL(MPI_Send(&out[P + 1], 1, MPI_INT, right, 105, MPI_COMM_WORLD));
    CALL(MPI_Send(&out[P + 2], 1, MPI_INT, right, 105, MPI_COMM_WORLD));

    MPI_Status st[P + 3];
    CALL(MPI_Waitall(P + 3, reqs, st));
    for (int k = 0; k < P; k++) {
        CHECK(in[k] == 1000 + k, "pre-posted receive %d got %d", k, in[k]);
        CHECK(st[k].MPI_TAG == 300 + (k * 7) % 11, "pre-posted receive %d tag %d", k,
              st[k].MPI_TAG);
    }
    CHECK(in[P] == 2 && in[P + 1] == 1 && in[P + 2] == 3,
          "tag-105/ANY_TAG/tag-105 receives got %d %d %d, expected 2 1 3",
          in[P], in[P + 1], in[P + 2]);
    CHECK(st[P + 1].MPI_TAG == 109 && st[P + 1].MPI_SOURCE == left,
          "wildcard slot has tag %d source %d", st[P + 1].MPI_TAG, st[P + 1].MPI_SOURCE);
    CALL(MPI_Comm_free(&ctl));
}

static void fill(unsigned char *b, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++)
        b[i] = (unsigned char)(seed * 31u + i * 7u + (i >> 9));
}

static void verify(const unsigned char *b, size_t n, unsigned seed, const char *what)
{
    for (size_t i = 0; i < n; i++)
        CHECK(b[i] == (unsigned char)(seed * 31u + i * 7u + (i >> 9)),
              "%s: byte %zu of %zu is wrong", what, i, n);
}

/* Large and small messages with one tag: a small message sent after a large
 * one must not overtake it, whatever protocol each one uses. */
static void mixed_sizes(void)
{
    const int big = 1 << 20, small = 8;
    const int sizes[5] = { big, small, big, 0, small };
    int right = (me + 1) % np, left = (me + np - 1) % np;
    unsigned char *out[5], *in[5];
    for (int k = 0; k < 5; k++) {
        out[k] = xmalloc((size_t)big);
        in[k] = xmalloc((size_t)big);
        fill(out[k], (size_t)sizes[k], (unsigned)(me * 5 + k));
    }
    for (int round = 0; round < 2; round++) {
        MPI_Request sreq[5], rreq[5];
        MPI_Status st[5];
        if (round == 0) {
            /* Pre-posted: every receive can hold any of the messages. */
            for (int k = 0; k < 5; k++)
                CALL(MPI_Irecv(in[k], big, MPI_BYTE, left, 77, MPI_COMM_WORLD, &rreq[k]));
            CALL(MPI_Barrier(MPI_COMM_WORLD));
            for (int k = 0; k < 5; k++)
                CALL(MPI_Isend(out[k], sizes[k], MPI_BYTE, right, 77, MPI_COMM_WORLD,
                               &sreq[k]));
            CALL(MPI_Waitall(5, rreq, st));
        } else {
            /* Unexpected: sends start before the receives are posted. */
            for (int k = 0; k < 5; k++)
                CALL(MPI_Isend(out[k], sizes[k], MPI_BYTE, right, 78, MPI_COMM_WORLD,
                               &sreq[k]));
            CALL(MPI_Barrier(MPI_COMM_WORLD));
            for (int k = 0; k < 5; k++)
                CALL(MPI_Recv(in[k], big, MPI_BYTE, left, MPI_ANY_TAG, MPI_COMM_WORLD, &st[k]));
        }
        CALL(MPI_Waitall(5, sreq, statuses_ignore()));
        for (int k = 0; k < 5; k++) {
            int n = -1;
            CALL(MPI_Get_count(&st[k], MPI_BYTE, &n));
            CHECK(n == sizes[k], "round %d, message %d: %d bytes, expected %d", round, k, n,
                  sizes[k]);
            verify(in[k], (size_t)n, (unsigned)(left * 5 + k), "mixed sizes");
        }
    }
    for (int k = 0; k < 5; k++) {
        free(out[k]);
        free(in[k]);
    }
}

int main(int argc, char **argv)
{
    TEST_INIT(&argc, &argv);
    CHECK(np >= 2, "needs at least 2 ranks");

    /* A barrier between phases: a wildcard receive of one phase must not
     * see the messages of the next. */
    same_tag_every_pair();
    CALL(MPI_Barrier(MPI_COMM_WORLD));
    any_source_any_tag();
    CALL(MPI_Barrier(MPI_COMM_WORLD));
    interleaved_tags();
    CALL(MPI_Barrier(MPI_COMM_WORLD));
    preposted_in_order();
    CALL(MPI_Barrier(MPI_COMM_WORLD));
    mixed_sizes();

    CALL(MPI_Barrier(MPI_COMM_WORLD));
    CALL(MPI_Finalize());
    return 0;
}

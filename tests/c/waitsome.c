/* ranks: 2 4 5 */
/*
 * Multiple completion: Waitany, Testany, Waitsome, Testsome, Waitall and
 * Testall over arrays that contain MPI_REQUEST_NULL entries, and over arrays
 * of nothing but MPI_REQUEST_NULL (index/outcount MPI_UNDEFINED, flag true),
 * Wait/Test on MPI_REQUEST_NULL (empty status). Each rank receives from its
 * left neighbour; the neighbour releases messages one (or a few) at a time,
 * so the index that must complete is known.
 */
#include <string.h>

#define TEST_NAME "waitsome"
#include "testutil.h"

enum { NSLOT = 12 };
/* Slots 0, 3, 7 and 11 hold MPI_REQUEST_NULL; the others receive tag 50+slot. */
static int is_null_slot(int s)
{
    return s == 0 || s == 3 || s == 7 || s == 11;
}

/* The order in which the sender releases the live slots. */
static const int release_order[8] = { 5, 1, 10, 2, 9, 4, 8, 6 };

static void check_empty_status(const MPI_Status *st, const char *what)
{
    int n = -1;
    CALL(MPI_Get_count(st, MPI_INT, &n));
    CHECK(st->MPI_SOURCE == MPI_ANY_SOURCE && st->MPI_TAG == MPI_ANY_TAG && n == 0,
          "%s: status source %d tag %d count %d, expected an empty status", what,
          st->MPI_SOURCE, st->MPI_TAG, n);
}

static void all_null(void)
{
    MPI_Request reqs[4] = { MPI_REQUEST_NULL, MPI_REQUEST_NULL, MPI_REQUEST_NULL,
                            MPI_REQUEST_NULL };
    MPI_Status st, sts[4];
    int index = -5, flag = -5, outcount = -5, indices[4];

    CALL(MPI_Wait(&reqs[0], &st));
    check_empty_status(&st, "Wait(MPI_REQUEST_NULL)");
    CALL(MPI_Test(&reqs[0], &flag, &st));
    CHECK(flag == 1, "Test(MPI_REQUEST_NULL) flag %d", flag);
    check_empty_status(&st, "Test(MPI_REQUEST_NULL)");

    CALL(MPI_Waitany(4, reqs, &index, &st));
    CHECK(index == MPI_UNDEFINED, "Waitany over null requests gave index %d", index);
    check_empty_status(&st, "Waitany over null requests");

    flag = -5;
    CALL(MPI_Testany(4, reqs, &index, &flag, &st));
    CHECK(flag == 1 && index == MPI_UNDEFINED, "Testany over null requests: flag %d index %d",
          flag, index);
    check_empty_status(&st, "Testany over null requests");

    CALL(MPI_Waitsome(4, reqs, &outcount, indices, sts));
    CHECK(outcount == MPI_UNDEFINED, "Waitsome over null requests: outcount %d", outcount);
    outcount = -5;
    CALL(MPI_Testsome(4, reqs, &outcount, indices, sts));
    CHECK(outcount == MPI_UNDEFINED, "Testsome over null requests: outcount %d", outcount);

    CALL(MPI_Waitall(4, reqs, sts));
    flag = -5;
    CALL(MPI_Testall(4, reqs, &flag, sts));
    CHECK(flag == 1, "Testall over null requests: flag %d", flag);

    /* Zero-length arrays. */
    CALL(MPI_Waitany(0, reqs, &index, &st));
    CHECK(index == MPI_UNDEFINED, "Waitany(0) gave index %d", index);
    CALL(MPI_Testany(0, reqs, &index, &flag, &st));
    CHECK(flag == 1 && index == MPI_UNDEFINED, "Testany(0): flag %d index %d", flag, index);
    CALL(MPI_Waitsome(0, reqs, &outcount, indices, sts));
    CHECK(outcount == MPI_UNDEFINED, "Waitsome(0): outcount %d", outcount);
    CALL(MPI_Waitall(0, reqs, sts));
}

static void post_slots(MPI_Request *reqs, int *bufs, int left)
{
    for (int s = 0; s < NSLOT; s++) {
        bufs[s] = -1;
        reqs[s] = MPI_REQUEST_NULL;
        if (!is_null_slot(s))
            CALL(MPI_Irecv(&bufs[s], 1, MPI_INT, left, 50 + s, MPI_COMM_WORLD, &reqs[s]));
    }
}

/* The sender side of one round: release the slots in release_order, in
 * groups of `batch`, each group after a go-ahead (tag 40) from the receiver. */
static void sender_round(int right, int batch)
{
    for (int k = 0; k < 8; k += batch) {
        CALL(MPI_Recv(NULL, 0, MPI_INT, right, 40, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        for (int j = k; j < k + batch && j < 8; j++) {
            int s = release_order[j], v = 1000 * me + s;
            CALL(MPI_Send(&v, 1, MPI_INT, right, 50 + s, MPI_COMM_WORLD));
        }
    }
}

static void go_ahead(int left)
{
    CALL(MPI_Send(NULL, 0, MPI_INT, left, 40, MPI_COMM_WORLD));
}

static void check_slot(int s, const MPI_Status *st, const int *bufs, int left)
{
    CHECK(!is_null_slot(s), "a null slot (%d) was reported complete", s);
    CHECK(st->MPI_SOURCE == left && st->MPI_TAG == 50 + s, "slot %d: status %d/%d", s,
          st->MPI_SOURCE, st->MPI_TAG);
    CHECK(bufs[s] == 1000 * left + s, "slot %d holds %d", s, bufs[s]);
}

static void waitany_round(int left)
{
    MPI_Request reqs[NSLOT];
    int bufs[NSLOT];
    post_slots(reqs, bufs, left);
    for (int k = 0; k < 8; k++) {
        int index = -5;
        MPI_Status st;
        go_ahead(left);
        CALL(MPI_Waitany(NSLOT, reqs, &index, &st));
        CHECK(index == release_order[k], "Waitany gave index %d, expected %d", index,
              release_order[k]);
        CHECK(reqs[index] == MPI_REQUEST_NULL, "Waitany did not reset request %d", index);
        check_slot(index, &st, bufs, left);
    }
    int index = -5;
    CALL(MPI_Waitany(NSLOT, reqs, &index, MPI_STATUS_IGNORE));
    CHECK(index == MPI_UNDEFINED, "Waitany after everything completed gave %d", index);
}

static void testany_round(int left)
{
    MPI_Request reqs[NSLOT];
    int bufs[NSLOT];
    post_slots(reqs, bufs, left);
    for (int k = 0; k < 8; k++) {
        int index = -5, flag = 0;
        MPI_Status st;
        go_ahead(left);
        while (!flag) {
            CALL(MPI_Testany(NSLOT, reqs, &index, &flag, &st));
            if (!flag)
                CHECK(index == MPI_UNDEFINED, "Testany with flag 0 gave index %d", index);
        }
        CHECK(index == release_order[k], "Testany gave index %d, expected %d", index,
              release_order[k]);
        CHECK(reqs[index] == MPI_REQUEST_NULL, "Testany did not reset request %d", index);
        check_slot(index, &st, bufs, left);
    }
}

/* Waitsome / Testsome: messages released three at a time; completions are
 * collected until the whole group is in. Every live slot completes exactly
 * once, in some grouping, and no slot of a later group completes early. */
static void some_round(int left, int use_test)
{
    MPI_Request reqs[NSLOT];
    int bufs[NSLOT], done[NSLOT] = { 0 };
    post_slots(reqs, bufs, left);
    int total = 0;
    for (int k = 0; k < 8; k += 3) {
        int group_end = k + 3 < 8 ? k + 3 : 8;
        go_ahead(left);
        while (total < group_end) {
            int outcount = -5, indices[NSLOT];
            MPI_Status sts[NSLOT];
            if (use_test)
                CALL(MPI_Testsome(NSLOT, reqs, &outcount, indices, sts));
            else
                CALL(MPI_Waitsome(NSLOT, reqs, &outcount, indices, sts));
            CHECK(outcount >= (use_test ? 0 : 1) && outcount <= group_end - total,
                  "%s outcount %d with %d outstanding", use_test ? "Testsome" : "Waitsome",
                  outcount, group_end - total);
            for (int j = 0; j < outcount; j++) {
                int s = indices[j];
                CHECK(s >= 0 && s < NSLOT && !done[s], "index %d reported twice or invalid", s);
                int in_group = 0;
                for (int g = k; g < group_end; g++)
                    in_group |= release_order[g] == s;
                CHECK(in_group, "slot %d completed before its message was released", s);
                CHECK(reqs[s] == MPI_REQUEST_NULL, "request %d not reset", s);
                check_slot(s, &sts[j], bufs, left);
                done[s] = 1;
            }
            total += outcount;
        }
    }
    int outcount = -5, indices[NSLOT];
    CALL(MPI_Testsome(NSLOT, reqs, &outcount, indices, statuses_ignore()));
    CHECK(outcount == MPI_UNDEFINED, "Testsome after everything completed gave %d", outcount);
}

/* Waitall and Testall over a mixed array. */
static void all_round(int left, int right)
{
    MPI_Request reqs[NSLOT];
    int bufs[NSLOT];
    MPI_Status sts[NSLOT];
    MPI_Request go;
    /* Everyone at once here: the go-ahead must not block. */
    post_slots(reqs, bufs, left);
    CALL(MPI_Isend(NULL, 0, MPI_INT, left, 40, MPI_COMM_WORLD, &go));
    sender_round(right, 8);
    CALL(MPI_Wait(&go, MPI_STATUS_IGNORE));
    CALL(MPI_Waitall(NSLOT, reqs, sts));
    for (int s = 0; s < NSLOT; s++)
        if (!is_null_slot(s))
            check_slot(s, &sts[s], bufs, left);

    post_slots(reqs, bufs, left);
    CALL(MPI_Isend(NULL, 0, MPI_INT, left, 40, MPI_COMM_WORLD, &go));
    sender_round(right, 8);
    CALL(MPI_Wait(&go, MPI_STATUS_IGNORE));
    int flag = 0;
    while (!flag)
        CALL(MPI_Testall(NSLOT, reqs, &flag, sts));
    for (int s = 0; s < NSLOT; s++) {
        CHECK(reqs[s] == MPI_REQUEST_NULL, "Testall did not reset request %d", s);
        if (!is_null_slot(s))
            check_slot(s, &sts[s], bufs, left);
    }
}

int main(int argc, char **argv)
{
    TEST_INIT(&argc, &argv);
    CHECK(np >= 2, "needs at least 2 ranks");
    int right = (me + 1) % np, left = (me + np - 1) % np;

    all_null();

    /* Rank s serves its right neighbour while that neighbour runs the
     * rounds; then the next rank takes its turn. */
    for (int s = 0; s < np; s++) {
        if (me == s) {
            sender_round(right, 1);
            sender_round(right, 1);
            sender_round(right, 3);
            sender_round(right, 3);
        } else if (me == (s + 1) % np) {
            waitany_round(left);
            testany_round(left);
            some_round(left, 0);
            some_round(left, 1);
        }
        CALL(MPI_Barrier(MPI_COMM_WORLD));
    }
    all_round(left, right);

    CALL(MPI_Barrier(MPI_COMM_WORLD));
    CALL(MPI_Finalize());
    return 0;
}

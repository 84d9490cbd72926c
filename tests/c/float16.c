/* ranks: 1 2 3 4 */
/*
 * MPIX_C_FLOAT16, MPICH's predefined type for C's _Float16 (IEEE half precision): its size,
 * extent and envelope; point-to-point (plain and in a strided vector), broadcast and
 * pack/unpack carry every bit of NaNs, infinities, signed zeros and subnormals; MPI_BAND,
 * MPI_BXOR and MPI_MAXLOC fail with MPI_ERR_OP.
 *
 * Some parts are checked on Ferry only, as Debian's MPICH 4.0.2 supports the type only halfway:
 * it gives it an empty name, derived types built from it have size 0, and reductions (MPI_SUM,
 * MPI_PROD, MPI_MAX, MPI_MIN) pass the argument checks and then abort in its yaksa backend
 * ("actual_pack_bytes == data_sz"). The library is told apart at run time, so the abi: case
 * (MPICH's header, Ferry's library) checks them too. Results are compared with what C computes
 * for _Float16: exactly, bit for bit, with NaN results compared as NaNs (payloads are not
 * specified). Collective data is chosen so that every order of combination rounds alike;
 * MPI_Reduce_local compares thousands of random pairs with C's own arithmetic; MPI_Accumulate
 * sums and takes the maximum into a window.
 */
#include <string.h>

#define TEST_NAME "float16"
#include "testutil.h"

typedef unsigned short bits16;

static bits16 bits_of(_Float16 x)
{
    bits16 b;
    memcpy(&b, &x, 2);
    return b;
}

static _Float16 from_bits(bits16 b)
{
    _Float16 x;
    memcpy(&x, &b, 2);
    return x;
}

static int is_nan16(bits16 b) { return (b & 0x7c00) == 0x7c00 && (b & 0x3ff) != 0; }

/* Equal bit for bit, or both NaN. */
static int same16(_Float16 got, _Float16 want)
{
    bits16 g = bits_of(got), w = bits_of(want);
    return g == w || (is_nan16(g) && is_nan16(w));
}

/* What C computes; the volatile store rounds to _Float16 whatever precision the compiler
 * evaluates in. */
static _Float16 c_sum(_Float16 a, _Float16 b) { volatile _Float16 r = a + b; return r; }
static _Float16 c_prod(_Float16 a, _Float16 b) { volatile _Float16 r = a * b; return r; }

/* Special values: 1.5, -0, 65504 (largest), -inf, +inf, a quiet NaN with a payload, a
 * signaling NaN, the smallest subnormal, the largest subnormal, -1/3 rounded. */
static const bits16 specials[] = { 0x3e00, 0x8000, 0x7bff, 0xfc00, 0x7c00, 0x7e15, 0x7c01,
                                   0x0001, 0x03ff, 0xb555 };
#define NSPECIAL ((int)(sizeof specials / sizeof specials[0]))

static void facts(void)
{
    int size, ni, na, nd, combiner;
    MPI_Aint lb, extent;
    CHECK(sizeof(_Float16) == 2, "sizeof(_Float16) = %zu", sizeof(_Float16));
    CALL(MPI_Type_size(MPIX_C_FLOAT16, &size));
    CALL(MPI_Type_get_extent(MPIX_C_FLOAT16, &lb, &extent));
    CHECK(size == 2 && lb == 0 && extent == 2, "size %d lb %ld extent %ld", size, (long)lb,
          (long)extent);
    CALL(MPI_Type_get_envelope(MPIX_C_FLOAT16, &ni, &na, &nd, &combiner));
    CHECK(combiner == MPI_COMBINER_NAMED && ni == 0 && na == 0 && nd == 0,
          "envelope: combiner %d (%d %d %d)", combiner, ni, na, nd);
    if (is_ferry()) {
        MPI_Datatype five;
        CALL(MPI_Type_contiguous(5, MPIX_C_FLOAT16, &five));
        CALL(MPI_Type_commit(&five));
        CALL(MPI_Type_size(five, &size));
        CALL(MPI_Type_get_extent(five, &lb, &extent));
        CHECK(size == 10 && extent == 10, "contiguous(5): size %d extent %ld", size,
              (long)extent);
        CALL(MPI_Type_free(&five));
        char name[MPI_MAX_OBJECT_NAME];
        int len;
        CALL(MPI_Type_get_name(MPIX_C_FLOAT16, name, &len));
        CHECK(strcmp(name, "MPIX_C_FLOAT16") == 0 && len == 14, "name '%s'", name);
    }
}

static void point_to_point(void)
{
    _Float16 buf[NSPECIAL];
    MPI_Status st;
    int count;
    if (me == 0) {
        for (int i = 0; i < NSPECIAL; i++)
            buf[i] = from_bits(specials[i]);
        for (int r = 1; r < np; r++)
            CALL(MPI_Send(buf, NSPECIAL, MPIX_C_FLOAT16, r, 7, MPI_COMM_WORLD));
    } else {
        memset(buf, 0xaa, sizeof buf);
        CALL(MPI_Recv(buf, NSPECIAL, MPIX_C_FLOAT16, 0, 7, MPI_COMM_WORLD, &st));
        CALL(MPI_Get_count(&st, MPIX_C_FLOAT16, &count));
        CHECK(count == NSPECIAL, "count %d", count);
        for (int i = 0; i < NSPECIAL; i++)
            CHECK(bits_of(buf[i]) == specials[i], "recv[%d] = %#06x, sent %#06x", i,
                  bits_of(buf[i]), specials[i]);
    }
    if (!is_ferry())
        return;
    /* Every other element of 2 * NSPECIAL, around a ring. */
    MPI_Datatype every2;
    CALL(MPI_Type_vector(NSPECIAL, 1, 2, MPIX_C_FLOAT16, &every2));
    CALL(MPI_Type_commit(&every2));
    _Float16 out[2 * NSPECIAL], in[2 * NSPECIAL];
    for (int i = 0; i < NSPECIAL; i++) {
        out[2 * i] = from_bits(specials[(i + me) % NSPECIAL]);
        out[2 * i + 1] = from_bits(0x1234);
        in[2 * i] = in[2 * i + 1] = from_bits(0x5678);
    }
    int right = (me + 1) % np, left = (me + np - 1) % np;
    CALL(MPI_Sendrecv(out, 1, every2, right, 8, in, 1, every2, left, 8, MPI_COMM_WORLD, &st));
    for (int i = 0; i < NSPECIAL; i++) {
        CHECK(bits_of(in[2 * i]) == specials[(i + left) % NSPECIAL], "vector recv[%d] = %#06x",
              i, bits_of(in[2 * i]));
        CHECK(bits_of(in[2 * i + 1]) == 0x5678, "gap %d overwritten", i);
    }
    CALL(MPI_Type_free(&every2));
}

static void broadcast_and_pack(void)
{
    enum { N = 1000 };
    static _Float16 v[N];
    int root = np - 1;
    for (int i = 0; i < N; i++)
        v[i] = from_bits(me == root ? (bits16)(i * 65u + 3) : 0);
    CALL(MPI_Bcast(v, N, MPIX_C_FLOAT16, root, MPI_COMM_WORLD));
    for (int i = 0; i < N; i++)
        CHECK(bits_of(v[i]) == (bits16)(i * 65u + 3), "bcast[%d] = %#06x", i, bits_of(v[i]));

    int need;
    CALL(MPI_Pack_size(NSPECIAL, MPIX_C_FLOAT16, MPI_COMM_WORLD, &need));
    CHECK(need >= 2 * NSPECIAL, "Pack_size %d", need);
    char packed[256];
    int pos = 0;
    _Float16 a[NSPECIAL], b[NSPECIAL];
    for (int i = 0; i < NSPECIAL; i++)
        a[i] = from_bits(specials[i]);
    CALL(MPI_Pack(a, NSPECIAL, MPIX_C_FLOAT16, packed, sizeof packed, &pos, MPI_COMM_WORLD));
    CHECK(pos == 2 * NSPECIAL, "packed %d bytes", pos);
    int at = 0;
    CALL(MPI_Unpack(packed, pos, &at, b, NSPECIAL, MPIX_C_FLOAT16, MPI_COMM_WORLD));
    CHECK(at == pos && memcmp(a, b, sizeof a) == 0, "unpack differs");
}

static void undefined_ops(void)
{
    _Float16 x[2] = { 1, 2 }, y[2] = { 0, 0 };
    MPI_Op ops[] = { MPI_BAND, MPI_BXOR, MPI_MAXLOC };
    CALL(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    for (int i = 0; i < 3; i++) {
        EXPECT(MPI_ERR_OP, MPI_Allreduce(x, y, 2, MPIX_C_FLOAT16, ops[i], MPI_COMM_WORLD));
        EXPECT(MPI_ERR_OP, MPI_Reduce_local(x, y, 2, MPIX_C_FLOAT16, ops[i]));
    }
    if (is_ferry()) {
        /* Ferry refuses logical operations on floating point as the standard does (MPICH
         * lets them through). */
        EXPECT(MPI_ERR_OP, MPI_Reduce_local(x, y, 2, MPIX_C_FLOAT16, MPI_LAND));
    }
    CHECK(bits_of(y[0]) == 0 && bits_of(y[1]) == 0, "a refused reduction wrote its output");
    CALL(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
}

/* Collectives on values whose every partial result is exact. */
static void exact_collectives(void)
{
    enum { N = 16 };
    _Float16 x[N], sum[N], max[N], min[N], prod[N], scan[N];
    for (int k = 0; k < N; k++)
        x[k] = (_Float16)((me + 1) * (k + 1) * 0.125f * (k % 2 ? -1 : 1));
    CALL(MPI_Allreduce(x, sum, N, MPIX_C_FLOAT16, MPI_SUM, MPI_COMM_WORLD));
    CALL(MPI_Allreduce(x, max, N, MPIX_C_FLOAT16, MPI_MAX, MPI_COMM_WORLD));
    CALL(MPI_Reduce(x, min, N, MPIX_C_FLOAT16, MPI_MIN, np - 1, MPI_COMM_WORLD));
    CALL(MPI_Scan(x, scan, N, MPIX_C_FLOAT16, MPI_SUM, MPI_COMM_WORLD));
    for (int k = 0; k < N; k++) {
        float step = (k + 1) * 0.125f * (k % 2 ? -1 : 1);
        _Float16 s = (_Float16)(step * np * (np + 1) / 2);
        _Float16 hi = (_Float16)(k % 2 ? step : step * np), lo = (_Float16)(k % 2 ? step * np : step);
        _Float16 pre = (_Float16)(step * (me + 1) * (me + 2) / 2);
        CHECK(bits_of(sum[k]) == bits_of(s), "sum[%d] = %g, want %g", k, (double)sum[k], (double)s);
        CHECK(bits_of(max[k]) == bits_of(hi), "max[%d] = %g, want %g", k, (double)max[k], (double)hi);
        CHECK(me != np - 1 || bits_of(min[k]) == bits_of(lo), "min[%d] = %g, want %g", k,
              (double)min[k], (double)lo);
        CHECK(bits_of(scan[k]) == bits_of(pre), "scan[%d] = %g, want %g", k, (double)scan[k],
              (double)pre);
    }
    /* 3 * 0.5 * 3 * 0.5: exact products. */
    _Float16 p = (_Float16)(me % 2 ? 0.5f : 3.0f), want = 1;
    for (int r = 0; r < np; r++)
        want = c_prod(want, (_Float16)(r % 2 ? 0.5f : 3.0f));
    CALL(MPI_Allreduce(&p, prod, 1, MPIX_C_FLOAT16, MPI_PROD, MPI_COMM_WORLD));
    CHECK(bits_of(prod[0]) == bits_of(want), "prod %g, want %g", (double)prod[0], (double)want);
}

/* Rounding, overflow, subnormals and NaN through a collective: ranks 0 and 1 give the
 * operands, the others the identity, so every order of combination rounds once. */
static void rounding_collectives(void)
{
    const _Float16 third = (_Float16)(1.0f / 3.0f), tiny = from_bits(0x0001);
    const _Float16 sa[] = { 2048, 2048, 65504, 0x1p-24f16, 0.5f16, third, from_bits(0x7c00),
                            from_bits(0x7e00), -65504 };
    const _Float16 sb[] = { 1, 3, 16, 0x1p-24f16, 0x3p-24f16, third, from_bits(0xfc00), 1, -16 };
    const _Float16 pa[] = { 256, 3, tiny, from_bits(0x0003), 1.0009765625f16, -0.0f16, 300 };
    const _Float16 pb[] = { 256, third, 0.5f16, 0.5f16, 1.0009765625f16, 5, -300 };
    enum { NS = sizeof sa / sizeof sa[0], NP = sizeof pa / sizeof pa[0] };
    _Float16 x[NS], got[NS];
    for (int k = 0; k < NS; k++)
        x[k] = me == 0 ? sa[k] : me == 1 ? sb[k] : 0;
    CALL(MPI_Allreduce(x, got, NS, MPIX_C_FLOAT16, MPI_SUM, MPI_COMM_WORLD));
    for (int k = 0; k < NS; k++) {
        _Float16 want = np == 1 ? sa[k] : c_sum(sa[k], sb[k]);
        CHECK(same16(got[k], want), "sum case %d: %#06x, want %#06x", k, bits_of(got[k]),
              bits_of(want));
    }
    /* Spot checks of C's own answer: ties to even, overflow, subnormals add exactly. */
    CHECK(bits_of(c_sum(2048, 1)) == bits_of((_Float16)2048) && bits_of(c_sum(2048, 3)) ==
          bits_of((_Float16)2052) && bits_of(c_sum(65504, 16)) == 0x7c00 &&
          bits_of(c_sum(tiny, tiny)) == 0x0002, "the compiler's _Float16 does not round as IEEE");
    _Float16 y[NP], prod[NP];
    for (int k = 0; k < NP; k++)
        y[k] = me == 0 ? pa[k] : me == 1 ? pb[k] : 1;
    CALL(MPI_Reduce(y, prod, NP, MPIX_C_FLOAT16, MPI_PROD, 0, MPI_COMM_WORLD));
    for (int k = 0; me == 0 && k < NP; k++) {
        _Float16 want = np == 1 ? pa[k] : c_prod(pa[k], pb[k]);
        CHECK(same16(prod[k], want), "prod case %d: %#06x, want %#06x", k, bits_of(prod[k]),
              bits_of(want));
    }
}

/* MPI_Reduce_local against C on random operands of every kind (NaNs, infinities,
 * subnormals): `inout = in op inout`; MAX is `in > inout ? in : inout`, MIN likewise, so a NaN
 * on either side keeps inout's bits. */
static void random_local(void)
{
    enum { N = 4096 };
    static _Float16 a[N], b[N], r[N];
    unsigned s = 0x9e3779b9u + (unsigned)me;
    for (int i = 0; i < N; i++) {
        s ^= s << 13, s ^= s >> 17, s ^= s << 5;
        a[i] = from_bits((bits16)s);
        /* Half the right operands near the left one in magnitude, of the opposite sign every
         * other time, so that sums cancel, carry and round. */
        bits16 near = (bits16)(s + (s >> 28) - 8) ^ (i % 4 == 0 ? 0x8000 : 0);
        b[i] = from_bits(i % 2 ? (bits16)(s >> 16) : near);
    }
    MPI_Op ops[] = { MPI_SUM, MPI_PROD, MPI_MAX, MPI_MIN };
    const char *names[] = { "SUM", "PROD", "MAX", "MIN" };
    for (int o = 0; o < 4; o++) {
        memcpy(r, b, sizeof r);
        CALL(MPI_Reduce_local(a, r, N, MPIX_C_FLOAT16, ops[o]));
        for (int i = 0; i < N; i++) {
            _Float16 want = o == 0 ? c_sum(a[i], b[i]) : o == 1 ? c_prod(a[i], b[i])
                          : o == 2 ? (a[i] > b[i] ? a[i] : b[i]) : (a[i] < b[i] ? a[i] : b[i]);
            int ok = o >= 2 ? bits_of(r[i]) == bits_of(want) : same16(r[i], want);
            CHECK(ok, "%s(%#06x, %#06x) = %#06x, C gives %#06x", names[o], bits_of(a[i]),
                  bits_of(b[i]), bits_of(r[i]), bits_of(want));
        }
    }
}

/* One-sided: every rank adds to rank 0's window and takes the maximum into it. */
static void accumulate(void)
{
    _Float16 win_buf[2] = { 0.5f16, -1 };
    MPI_Win win;
    CALL(MPI_Win_create(win_buf, sizeof win_buf, 2, MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    _Float16 add = (_Float16)(me + 1), top = (_Float16)(me * 0.25f);
    CALL(MPI_Win_fence(0, win));
    CALL(MPI_Accumulate(&add, 1, MPIX_C_FLOAT16, 0, 0, 1, MPIX_C_FLOAT16, MPI_SUM, win));
    CALL(MPI_Accumulate(&top, 1, MPIX_C_FLOAT16, 0, 1, 1, MPIX_C_FLOAT16, MPI_MAX, win));
    CALL(MPI_Win_fence(0, win));
    if (me == 0) {
        _Float16 sum = (_Float16)(0.5f + np * (np + 1) / 2), max = (_Float16)((np - 1) * 0.25f);
        CHECK(bits_of(win_buf[0]) == bits_of(sum) && bits_of(win_buf[1]) == bits_of(max),
              "accumulate: %g %g, want %g %g", (double)win_buf[0], (double)win_buf[1],
              (double)sum, (double)max);
    }
    CALL(MPI_Win_free(&win));
}

int main(int argc, char **argv)
{
    TEST_INIT(&argc, &argv);
    facts();
    point_to_point();
    broadcast_and_pack();
    undefined_ops();
    if (is_ferry()) {
        exact_collectives();
        rounding_collectives();
        random_local();
        accumulate();
    }
    CALL(MPI_Barrier(MPI_COMM_WORLD));
    if (me == 0)
        printf("float16: ok (%d ranks%s)\n", np,
               is_ferry() ? "" : ", derived types and reductions skipped");
    CALL(MPI_Finalize());
    finalized = 1;
    return 0;
}

/* ranks: 1 2 3 4 */
/*
 * MPI_REAL16 and MPI_COMPLEX32, Fortran's REAL(16) and COMPLEX(16): IEEE binary128 (C's
 * __float128) and pairs of them. Names, sizes, extents, envelopes and MPI_Type_match_size;
 * point-to-point (plain and in a strided vector), broadcast, gather and allgather carry every
 * bit; a struct with a REAL16 member is padded to 16 bytes as gcc pads it; external32 packs
 * big-endian binary128; MPI_MAX and MPI_MIN in collectives, MPI_Reduce_local and
 * MPI_Accumulate give exactly what C's own comparisons of __float128 give; MPI_SUM and MPI_PROD give what C's __float128
 * arithmetic gives (gcc's, correctly rounded), bit for bit, on thousands of random pairs through
 * MPI_Reduce_local (COMPLEX32 products as C's _Complex multiplication), and in collectives and
 * MPI_Accumulate on values that every order of combination sums exactly; one-sided Put moves
 * COMPLEX32 values; logical and bitwise operations, and MAX on COMPLEX32, are MPI_ERR_OP.
 *
 * Reductions run only when the library is Ferry, told at run time so that the abi: case
 * (MPICH's header, Ferry's library) checks them too: Debian's MPICH 4.0.2 reduces REAL16 as if
 * it were x87 long double (at 2 ranks its MAX of -1/3 and -2/3 is -2/3) and refuses MAX on a
 * vector of REAL16. The MAX/MIN rules for NaN and equal zeros (which the standard leaves open)
 * are Ferry's: C's `a > b ? a : b` with a the source.
 */
#include <string.h>

#define TEST_NAME "real16"
#include "testutil.h"

/* MPICH's mpi.h declares the sized Fortran types; Ferry's, which is for C programs, declares
 * none of them (MPI_REAL8 neither): the handles are MPICH's. */
#ifndef MPI_REAL16
#define MPI_REAL16 ((MPI_Datatype)0x4c00102b)
#define MPI_COMPLEX32 ((MPI_Datatype)0x4c00202c)
#endif

typedef __float128 quad;
typedef struct {
    quad re, im;
} cquad;

typedef unsigned __int128 bits128;

static bits128 bits_of(quad x)
{
    bits128 b;
    memcpy(&b, &x, 16);
    return b;
}

static quad from_bits(bits128 b)
{
    quad x;
    memcpy(&x, &b, 16);
    return x;
}

/* Bits as two hex words, for messages. */
#define HI(x) ((unsigned long long)(bits_of(x) >> 64))
#define LO(x) ((unsigned long long)bits_of(x))

/* Values whose low bits lie beyond any double: k/3 for k = 1, 2, ... */
static quad third(int k) { return (quad)k / 3; }

/* 1 + 2^-112, the successor of 1. */
static quad one_up(void) { return from_bits(((bits128)0x3fff << 112) | 1); }

static void facts(void)
{
    struct {
        MPI_Datatype t;
        const char *name;
        int size;
    } types[] = { { MPI_REAL16, "MPI_REAL16", 16 }, { MPI_COMPLEX32, "MPI_COMPLEX32", 32 } };
    CHECK(sizeof(quad) == 16 && _Alignof(quad) == 16, "__float128: %zu bytes", sizeof(quad));
    for (int i = 0; i < 2; i++) {
        int size, ni, na, nd, combiner, len;
        MPI_Aint lb, extent, tlb, textent;
        char name[MPI_MAX_OBJECT_NAME];
        CALL(MPI_Type_size(types[i].t, &size));
        CALL(MPI_Type_get_extent(types[i].t, &lb, &extent));
        CALL(MPI_Type_get_true_extent(types[i].t, &tlb, &textent));
        CHECK(size == types[i].size && lb == 0 && extent == size && tlb == 0 && textent == size,
              "%s: size %d lb %ld extent %ld true extent %ld", types[i].name, size, (long)lb,
              (long)extent, (long)textent);
        CALL(MPI_Type_get_envelope(types[i].t, &ni, &na, &nd, &combiner));
        CHECK(combiner == MPI_COMBINER_NAMED && ni == 0 && na == 0 && nd == 0,
              "%s envelope: combiner %d", types[i].name, combiner);
        CALL(MPI_Type_get_name(types[i].t, name, &len));
        CHECK(strcmp(name, types[i].name) == 0 && len == (int)strlen(types[i].name),
              "name '%s' (%d)", name, len);
    }
    /* struct { char c; __float128 q; }: q at 16, extent 32, as gcc lays it out. */
    struct padded {
        char c;
        quad q;
    };
    int lens[2] = { 1, 1 };
    MPI_Aint displs[2] = { 0, 16 };
    MPI_Datatype parts[2] = { MPI_CHAR, MPI_REAL16 }, st;
    CALL(MPI_Type_create_struct(2, lens, displs, parts, &st));
    MPI_Aint lb, extent;
    CALL(MPI_Type_get_extent(st, &lb, &extent));
    CHECK(extent == sizeof(struct padded), "struct {char; REAL16}: extent %ld, gcc %zu",
          (long)extent, sizeof(struct padded));
    CALL(MPI_Type_free(&st));
    /* 16 bytes of real and 32 of complex are these types, as in MPICH. */
    MPI_Datatype m;
    CALL(MPI_Type_match_size(MPI_TYPECLASS_REAL, 16, &m));
    CHECK(m == MPI_REAL16, "match_size(REAL, 16) gave %#x", (unsigned)m);
    CALL(MPI_Type_match_size(MPI_TYPECLASS_COMPLEX, 32, &m));
    CHECK(m == MPI_COMPLEX32, "match_size(COMPLEX, 32) gave %#x", (unsigned)m);
}

static void point_to_point(void)
{
    enum { N = 6 };
    quad out[2 * N], in[2 * N];
    cquad zout[N], zin[N];
    int right = (me + 1) % np, left = (me + np - 1) % np;
    for (int i = 0; i < N; i++) {
        out[2 * i] = third(me * N + i + 1);
        out[2 * i + 1] = -1;
        in[2 * i] = in[2 * i + 1] = 7;
        zout[i].re = third(me + i + 1);
        zout[i].im = -third(me + 2 * i + 1);
    }
    memset(zin, 0, sizeof zin);
    MPI_Status st;
    int count;
    CALL(MPI_Sendrecv(zout, N, MPI_COMPLEX32, right, 1, zin, N, MPI_COMPLEX32, left, 1,
                      MPI_COMM_WORLD, &st));
    CALL(MPI_Get_count(&st, MPI_COMPLEX32, &count));
    CHECK(count == N, "COMPLEX32 count %d", count);
    for (int i = 0; i < N; i++)
        CHECK(zin[i].re == third(left + i + 1) && zin[i].im == -third(left + 2 * i + 1),
              "COMPLEX32 recv[%d] wrong", i);

    /* Every other element, around the ring. */
    MPI_Datatype every2;
    CALL(MPI_Type_vector(N, 1, 2, MPI_REAL16, &every2));
    CALL(MPI_Type_commit(&every2));
    CALL(MPI_Sendrecv(out, 1, every2, right, 2, in, 1, every2, left, 2, MPI_COMM_WORLD, &st));
    CALL(MPI_Get_count(&st, MPI_REAL16, &count));
    CHECK(count == N, "vector count %d", count);
    for (int i = 0; i < N; i++) {
        CHECK(bits_of(in[2 * i]) == bits_of(third(left * N + i + 1)),
              "vector recv[%d] = %016llx%016llx", i, HI(in[2 * i]), LO(in[2 * i]));
        CHECK(in[2 * i + 1] == 7, "gap %d overwritten", i);
    }
    CALL(MPI_Type_free(&every2));
}

static void collectives(void)
{
    /* Broadcast from the last rank: special values too. */
    quad b[6];
    if (me == np - 1) {
        b[0] = one_up();
        b[1] = from_bits((bits128)1 << 127); /* -0 */
        b[2] = from_bits((bits128)0x7fff << 112); /* +inf */
        b[3] = from_bits(((bits128)0x7fff8000 << 96) | 0x1234); /* NaN with a payload */
        b[4] = from_bits(1); /* smallest subnormal */
        b[5] = -third(2);
    } else {
        memset(b, 0x55, sizeof b);
    }
    bits128 want[6] = { ((bits128)0x3fff << 112) | 1, (bits128)1 << 127, (bits128)0x7fff << 112,
                        ((bits128)0x7fff8000 << 96) | 0x1234, 1, bits_of(-third(2)) };
    CALL(MPI_Bcast(b, 6, MPI_REAL16, np - 1, MPI_COMM_WORLD));
    for (int i = 0; i < 6; i++)
        CHECK(bits_of(b[i]) == want[i], "bcast[%d] = %016llx%016llx", i, HI(b[i]), LO(b[i]));

    /* Gather one REAL16 and allgather one COMPLEX32 per rank. */
    quad mine = third(me + 1), *all = xmalloc(np * sizeof(quad));
    CALL(MPI_Gather(&mine, 1, MPI_REAL16, all, 1, MPI_REAL16, 0, MPI_COMM_WORLD));
    if (me == 0)
        for (int r = 0; r < np; r++)
            CHECK(all[r] == third(r + 1), "gather[%d] wrong", r);
    cquad z = { third(me + 1), -third(me + 2) }, *zall = xmalloc(np * sizeof(cquad));
    CALL(MPI_Allgather(&z, 1, MPI_COMPLEX32, zall, 1, MPI_COMPLEX32, MPI_COMM_WORLD));
    for (int r = 0; r < np; r++)
        CHECK(zall[r].re == third(r + 1) && zall[r].im == -third(r + 2), "allgather[%d] wrong",
              r);
    free(all);
    free(zall);
}

/* external32 is big-endian binary128: 1 is 3f ff 00 .. 00, then the next value. */
static void external32(void)
{
    quad v[2] = { 1, -third(1) };
    cquad z = { 1, -third(1) };
    unsigned char packed[64], want[32];
    MPI_Aint size, pos = 0;
    for (int i = 0; i < 2; i++) {
        bits128 b = bits_of(v[i]);
        for (int k = 0; k < 16; k++)
            want[16 * i + k] = (unsigned char)(b >> (8 * (15 - k)));
    }
    CALL(MPI_Pack_external_size("external32", 2, MPI_REAL16, &size));
    CHECK(size == 32, "external32 size of 2 REAL16: %ld", (long)size);
    CALL(MPI_Pack_external("external32", v, 2, MPI_REAL16, packed, sizeof packed, &pos));
    CALL(MPI_Pack_external("external32", &z, 1, MPI_COMPLEX32, packed, sizeof packed, &pos));
    CHECK(pos == 64, "packed %ld bytes", (long)pos);
    CHECK(memcmp(packed, want, 32) == 0 && memcmp(packed + 32, want, 32) == 0,
          "external32 bytes differ (first %02x %02x)", packed[0], packed[1]);
    quad back[2] = { 0, 0 };
    cquad zback = { 0, 0 };
    pos = 0;
    CALL(MPI_Unpack_external("external32", packed, 64, &pos, back, 2, MPI_REAL16));
    CALL(MPI_Unpack_external("external32", packed, 64, &pos, &zback, 1, MPI_COMPLEX32));
    CHECK(bits_of(back[0]) == bits_of(v[0]) && bits_of(back[1]) == bits_of(v[1]) &&
              bits_of(zback.re) == bits_of(z.re) && bits_of(zback.im) == bits_of(z.im),
          "external32 round trip changed a value");
}

/* Each rank's contribution to element k of the MAX/MIN vector: values that differ only in
 * bits beyond a double, of both signs, huge and subnormal. */
enum { NV = 6 };
static quad contribution(int r, int k)
{
    switch (k) {
    case 0: return 1 + (quad)r * from_bits(((bits128)(0x3fff - 112) << 112)); /* 1 + r*2^-112 */
    case 1: return -third(r + 1);
    case 2: return r == 1 ? from_bits((bits128)0x7fff << 112) : third(r + 1); /* +inf on 1 */
    case 3: return from_bits((bits128)(r + 1)); /* subnormals */
    case 4: return r % 2 ? -from_bits(((bits128)0x7ffe << 112) | 0xffff) : third(r);
    default: return (quad)(np - r) * (quad)1e30;
    }
}

static void max_min(void)
{
    quad v[NV], mx[NV], mn[NV];
    for (int k = 0; k < NV; k++)
        v[k] = contribution(me, k);
    CALL(MPI_Allreduce(v, mx, NV, MPI_REAL16, MPI_MAX, MPI_COMM_WORLD));
    CALL(MPI_Allreduce(v, mn, NV, MPI_REAL16, MPI_MIN, MPI_COMM_WORLD));
    for (int k = 0; k < NV; k++) {
        quad hi = contribution(0, k), lo = hi;
        for (int r = 1; r < np; r++) {
            quad c = contribution(r, k);
            hi = c > hi ? c : hi;
            lo = c < lo ? c : lo;
        }
        CHECK(bits_of(mx[k]) == bits_of(hi), "MAX[%d] = %016llx%016llx, C gives %016llx%016llx",
              k, HI(mx[k]), LO(mx[k]), HI(hi), LO(hi));
        CHECK(bits_of(mn[k]) == bits_of(lo), "MIN[%d] = %016llx%016llx, C gives %016llx%016llx",
              k, HI(mn[k]), LO(mn[k]), HI(lo), LO(lo));
    }
    /* Reduce to the last rank, strided. */
    MPI_Datatype every2;
    CALL(MPI_Type_vector(NV, 1, 2, MPI_REAL16, &every2));
    CALL(MPI_Type_commit(&every2));
    quad s[2 * NV], d[2 * NV];
    for (int k = 0; k < NV; k++) {
        s[2 * k] = v[k];
        s[2 * k + 1] = d[2 * k] = d[2 * k + 1] = 5;
    }
    CALL(MPI_Reduce(s, d, 1, every2, MPI_MAX, np - 1, MPI_COMM_WORLD));
    if (me == np - 1)
        for (int k = 0; k < NV; k++)
            CHECK(bits_of(d[2 * k]) == bits_of(mx[k]) && d[2 * k + 1] == 5,
                  "strided MAX[%d] wrong", k);
    CALL(MPI_Type_free(&every2));
}

/* MPI_Reduce_local on pairs of every sign, zero, infinity and NaN: Ferry keeps C's
 * `src > dst ? src : dst` (and `<`), so a NaN or an equal zero keeps the destination. */
static void local_rules(void)
{
    const quad ladder[] = { from_bits(((bits128)0xffff << 112)), -third(4), -one_up(), -1,
                            -from_bits(1), from_bits((bits128)1 << 127), 0, from_bits(1),
                            1, one_up(), third(4), from_bits(((bits128)0x7ffe << 112) | 7),
                            from_bits((bits128)0x7fff << 112),
                            from_bits(((bits128)0x7fff8000 << 96) | 9) /* NaN */ };
    enum { L = sizeof ladder / sizeof ladder[0] };
    for (int i = 0; i < L; i++)
        for (int j = 0; j < L; j++) {
            quad a = ladder[i], mx = ladder[j], mn = ladder[j];
            CALL(MPI_Reduce_local(&a, &mx, 1, MPI_REAL16, MPI_MAX));
            CALL(MPI_Reduce_local(&a, &mn, 1, MPI_REAL16, MPI_MIN));
            quad hi = a > ladder[j] ? a : ladder[j], lo = a < ladder[j] ? a : ladder[j];
            CHECK(bits_of(mx) == bits_of(hi) && bits_of(mn) == bits_of(lo),
                  "local MAX/MIN of ladder[%d], ladder[%d]", i, j);
        }
}

/* A deterministic stream of random bits. */
static unsigned long long rng_state = 0x9e3779b97f4a7c15ULL;
static unsigned long long next64(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

/* A random binary128 with exponent near `around` (spread 2^width), any fraction and sign;
 * now and then a zero, an infinity, a NaN or a subnormal. */
static quad random_quad(int around, int width)
{
    unsigned long long r = next64();
    bits128 fraction = (((bits128)next64() << 64) | next64()) & (((bits128)1 << 112) - 1);
    bits128 sign = (bits128)(r & 1) << 127;
    switch ((r >> 1) % 64) {
    case 0: return from_bits(sign);
    case 1: return from_bits(sign | (bits128)0x7fff << 112);
    case 2: return from_bits(sign | (bits128)0x7fff << 112 | (fraction | 1));
    case 3: return from_bits(sign | fraction); /* subnormal */
    default: break;
    }
    long e = around + (long)((r >> 8) % (2UL << width)) - (1L << width);
    if (e < 1)
        e = 1;
    if (e > 0x7ffe)
        e = 0x7ffe;
    return from_bits(sign | (bits128)e << 112 | fraction);
}

static int is_nan_q(quad x) { return x != x; }

/* Equal bit for bit, or both NaN (which NaN an operation gives is not specified). */
static int same_q(quad got, quad want)
{
    return bits_of(got) == bits_of(want) || (is_nan_q(got) && is_nan_q(want));
}

/* What C computes for __float128 (gcc's soft-fp: correctly rounded). */
static quad c_sum(quad a, quad b) { volatile quad r = a + b; return r; }
static quad c_prod(quad a, quad b) { volatile quad r = a * b; return r; }

/* MPI_Reduce_local(a, b) against C's a + b and a * b, on random pairs: exponents close (so
 * sums cancel and round), far apart, and over the whole range (overflow, subnormals). */
static void random_local(void)
{
    enum { N = 20000 };
    static quad a[N], b[N], s[N], p[N];
    int spreads[][2] = { { 0x3fff, 3 }, { 0x3fff, 7 }, { 0x3fff, 13 }, { 0x40, 6 } };
    for (int i = 0; i < N; i++) {
        int *sp = spreads[i % 4];
        a[i] = random_quad(sp[0], sp[1]);
        b[i] = random_quad(sp[0], sp[1]);
        s[i] = p[i] = b[i];
    }
    /* Cancellation: b close to -a. */
    for (int i = 0; i < N / 8; i++) {
        bits128 x = bits_of(a[i]) ^ ((bits128)1 << 127);
        s[i] = p[i] = b[i] = from_bits(x + (next64() % 5) - 2);
    }
    CALL(MPI_Reduce_local(a, s, N, MPI_REAL16, MPI_SUM));
    CALL(MPI_Reduce_local(a, p, N, MPI_REAL16, MPI_PROD));
    for (int i = 0; i < N; i++) {
        quad ws = c_sum(a[i], b[i]), wp = c_prod(a[i], b[i]);
        CHECK(same_q(s[i], ws), "SUM %016llx%016llx + %016llx%016llx = %016llx%016llx, C %016llx%016llx",
              HI(a[i]), LO(a[i]), HI(b[i]), LO(b[i]), HI(s[i]), LO(s[i]), HI(ws), LO(ws));
        CHECK(same_q(p[i], wp), "PROD %016llx%016llx * %016llx%016llx = %016llx%016llx, C %016llx%016llx",
              HI(a[i]), LO(a[i]), HI(b[i]), LO(b[i]), HI(p[i]), LO(p[i]), HI(wp), LO(wp));
    }
    /* COMPLEX32: C's _Complex multiplication of the same values. */
    enum { M = 5000 };
    static _Complex _Float128 z[M], w[M], zs[M], zp[M];
    for (int i = 0; i < M; i++) {
        __real__ z[i] = a[4 * i];
        __imag__ z[i] = a[4 * i + 1];
        __real__ w[i] = b[4 * i + 2];
        __imag__ w[i] = b[4 * i + 3];
        zs[i] = zp[i] = w[i];
    }
    CALL(MPI_Reduce_local(z, zs, M, MPI_COMPLEX32, MPI_SUM));
    CALL(MPI_Reduce_local(z, zp, M, MPI_COMPLEX32, MPI_PROD));
    for (int i = 0; i < M; i++) {
        volatile _Complex _Float128 ws = z[i] + w[i], wp = z[i] * w[i];
        CHECK(same_q(__real__ zs[i], __real__ ws) && same_q(__imag__ zs[i], __imag__ ws),
              "complex SUM %d", i);
        CHECK(same_q(__real__ zp[i], __real__ wp) && same_q(__imag__ zp[i], __imag__ wp),
              "complex PROD %d: (%016llx%016llx, %016llx%016llx), C (%016llx%016llx, %016llx%016llx)",
              i, HI(__real__ zp[i]), LO(__real__ zp[i]), HI(__imag__ zp[i]), LO(__imag__ zp[i]),
              HI(__real__ wp), LO(__real__ wp), HI(__imag__ wp), LO(__imag__ wp));
    }
}

/* Collective SUM and PROD on values that every order of combination gives exactly (so the
 * result must be C's): multiples of 2^-100 and of 1/1024, and powers of 1 + 2^-20. */
static quad exact_part(int r, int k)
{
    switch (k) {
    case 0: return (quad)(r + 1) * from_bits((bits128)(0x3fff - 100) << 112);
    case 1: return (quad)(r + 1) / 1024;
    default: return 1 + (quad)1 / (1 << 20);
    }
}

static void exact_collectives(void)
{
    quad v[3], sum[3], prod[3], ws[3] = { 0, 0, 0 }, wp[3] = { 1, 1, 1 };
    for (int k = 0; k < 3; k++)
        v[k] = exact_part(me, k);
    CALL(MPI_Allreduce(v, sum, 3, MPI_REAL16, MPI_SUM, MPI_COMM_WORLD));
    CALL(MPI_Allreduce(v, prod, 3, MPI_REAL16, MPI_PROD, MPI_COMM_WORLD));
    for (int r = 0; r < np; r++)
        for (int k = 0; k < 3; k++) {
            ws[k] += exact_part(r, k);
            wp[k] *= exact_part(r, k);
        }
    for (int k = 0; k < 3; k++) {
        CHECK(bits_of(sum[k]) == bits_of(ws[k]), "SUM[%d] = %016llx%016llx, C %016llx%016llx", k,
              HI(sum[k]), LO(sum[k]), HI(ws[k]), LO(ws[k]));
        CHECK(bits_of(prod[k]) == bits_of(wp[k]), "PROD[%d] = %016llx%016llx, C %016llx%016llx",
              k, HI(prod[k]), LO(prod[k]), HI(wp[k]), LO(wp[k]));
    }
    cquad z = { me + 1, -(quad)me / 4 }, zsum;
    CALL(MPI_Allreduce(&z, &zsum, 1, MPI_COMPLEX32, MPI_SUM, MPI_COMM_WORLD));
    CHECK(zsum.re == np * (np + 1) / 2 && zsum.im == -(quad)(np * (np - 1) / 2) / 4,
          "complex SUM wrong");
}

/* What is not defined on these types: logical and bitwise operations, MAX on a complex. */
static void refused(void)
{
    CALL(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    quad q = 1, r = 0;
    cquad z = { 1, 2 }, w = { 0, 0 };
    EXPECT(MPI_ERR_OP, MPI_Allreduce(&z, &w, 1, MPI_COMPLEX32, MPI_MAX, MPI_COMM_WORLD));
    EXPECT(MPI_ERR_OP, MPI_Allreduce(&q, &r, 1, MPI_REAL16, MPI_BAND, MPI_COMM_WORLD));
    EXPECT(MPI_ERR_OP, MPI_Allreduce(&q, &r, 1, MPI_REAL16, MPI_LAND, MPI_COMM_WORLD));
    EXPECT(MPI_ERR_OP, MPI_Reduce_local(&z, &w, 1, MPI_COMPLEX32, MPI_MIN));
    CHECK(r == 0 && w.re == 0 && w.im == 0, "a refused reduction wrote its output");
    CALL(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
}

/* One-sided: every rank takes the maximum into rank 0's first REAL16, adds an exact value
 * into its last one, and puts a COMPLEX32 into its own slot between them. */
static void one_sided(void)
{
    int sum_slot = 1 + 2 * np; /* in units of 16 bytes */
    size_t bytes = 16 * (size_t)(sum_slot + 1);
    unsigned char *base = xmalloc(bytes);
    memset(base, 0, bytes);
    quad start = -1;
    memcpy(base, &start, 16);
    MPI_Win win;
    CALL(MPI_Win_create(base, bytes, 16, MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    quad top = me == np - 1 ? one_up() : third(me), add = (quad)(me + 1) / 8;
    cquad z = { third(me + 1), -third(me + 3) };
    CALL(MPI_Win_fence(0, win));
    CALL(MPI_Accumulate(&top, 1, MPI_REAL16, 0, 0, 1, MPI_REAL16, MPI_MAX, win));
    CALL(MPI_Accumulate(&add, 1, MPI_REAL16, 0, sum_slot, 1, MPI_REAL16, MPI_SUM, win));
    CALL(MPI_Put(&z, 1, MPI_COMPLEX32, 0, 1 + 2 * me, 1, MPI_COMPLEX32, win));
    CALL(MPI_Win_fence(0, win));
    if (me == 0) {
        quad got, want = -1, sum;
        for (int r = 0; r < np; r++) {
            quad t = r == np - 1 ? one_up() : third(r);
            want = t > want ? t : want;
        }
        memcpy(&got, base, 16);
        CHECK(bits_of(got) == bits_of(want), "accumulate MAX gave %016llx%016llx", HI(got),
              LO(got));
        memcpy(&sum, base + 16 * sum_slot, 16);
        CHECK(sum == (quad)(np * (np + 1) / 2) / 8, "accumulate SUM gave %g", (double)sum);
        for (int r = 0; r < np; r++) {
            cquad g;
            memcpy(&g, base + 16 + 32 * r, 32);
            CHECK(g.re == third(r + 1) && g.im == -third(r + 3), "put from %d wrong", r);
        }
    }
    CALL(MPI_Win_free(&win));
    free(base);
}

int main(int argc, char **argv)
{
    TEST_INIT(&argc, &argv);
    int ferry = is_ferry();
    facts();
    point_to_point();
    collectives();
    external32();
    if (ferry) {
        max_min();
        local_rules();
        random_local();
        exact_collectives();
        refused();
        one_sided();
    }
    CALL(MPI_Barrier(MPI_COMM_WORLD));
    if (me == 0)
        printf("real16: ok (%d ranks%s)\n", np, ferry ? "" : ", reductions skipped");
    CALL(MPI_Finalize());
    finalized = 1;
    return 0;
}

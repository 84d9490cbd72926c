/* ranks: 1 2 3 4 5 7 8 */
/*
 * Reductions: MPI_Reduce, MPI_Allreduce, MPI_Reduce_scatter_block, MPI_Scan
 * and MPI_Exscan with every predefined operation on every C type it is
 * defined for: MPI_SUM, MPI_PROD, MPI_MAX, MPI_MIN on the C integer types,
 * MPI_FLOAT and MPI_DOUBLE; MPI_LAND, MPI_LOR, MPI_LXOR on the C integer
 * types and MPI_C_BOOL; MPI_BAND, MPI_BOR, MPI_BXOR on the C integer types
 * and MPI_BYTE; MPI_MAXLOC, MPI_MINLOC on MPI_2INT, MPI_DOUBLE_INT and
 * MPI_FLOAT_INT (ties resolved to the smaller index). The whole matrix
 * runs through Allreduce (7 elements, plain and MPI_IN_PLACE); each
 * operation then runs through all five calls on one type, plain and with
 * MPI_IN_PLACE, Reduce at roots 0, 1 and size-1, with counts 7 and, for
 * some, 0, 1 and 10001. Exscan leaves rank 0's receive buffer as it was.
 * On MPI_COMM_WORLD, on a split of it with reversed keys and on
 * MPI_COMM_SELF.
 * Every result is compared exactly with the value each rank computes alone
 * (data chosen so that nothing overflows and every float sum is exact).
 */
#include <stdint.h>
#include <stdbool.h>
#include <string.h>

#define TEST_NAME "coll_reduce"
#include "testutil.h"

enum ctype {
    C_SCHAR, C_UCHAR, C_SHORT, C_USHORT, C_INT, C_UINT, C_LONG, C_ULONG, C_LLONG, C_ULLONG,
    C_I8, C_I16, C_I32, C_I64, C_U8, C_U16, C_U32, C_U64,
    C_FLOAT, C_DOUBLE, C_BOOL, C_BYTE, C_2INT, C_DOUBLE_INT, C_FLOAT_INT
};

/* What a type is, for the operations defined on it. */
enum family { F_SINT, F_UINT, F_FLOAT, F_BOOL, F_BYTE, F_PAIR };

typedef struct {
    enum ctype c;
    const char *name;
    enum family fam;
    size_t size;
} type_t;

typedef struct { int v; int i; } int_int;
typedef struct { double v; int i; } double_int;
typedef struct { float v; int i; } float_int;

static type_t types[] = {
    { C_SCHAR, "MPI_SIGNED_CHAR", F_SINT, sizeof(signed char) },
    { C_UCHAR, "MPI_UNSIGNED_CHAR", F_UINT, sizeof(unsigned char) },
    { C_SHORT, "MPI_SHORT", F_SINT, sizeof(short) },
    { C_USHORT, "MPI_UNSIGNED_SHORT", F_UINT, sizeof(unsigned short) },
    { C_INT, "MPI_INT", F_SINT, sizeof(int) },
    { C_UINT, "MPI_UNSIGNED", F_UINT, sizeof(unsigned) },
    { C_LONG, "MPI_LONG", F_SINT, sizeof(long) },
    { C_ULONG, "MPI_UNSIGNED_LONG", F_UINT, sizeof(unsigned long) },
    { C_LLONG, "MPI_LONG_LONG", F_SINT, sizeof(long long) },
    { C_ULLONG, "MPI_UNSIGNED_LONG_LONG", F_UINT, sizeof(unsigned long long) },
    { C_I8, "MPI_INT8_T", F_SINT, 1 },
    { C_I16, "MPI_INT16_T", F_SINT, 2 },
    { C_I32, "MPI_INT32_T", F_SINT, 4 },
    { C_I64, "MPI_INT64_T", F_SINT, 8 },
    { C_U8, "MPI_UINT8_T", F_UINT, 1 },
    { C_U16, "MPI_UINT16_T", F_UINT, 2 },
    { C_U32, "MPI_UINT32_T", F_UINT, 4 },
    { C_U64, "MPI_UINT64_T", F_UINT, 8 },
    { C_FLOAT, "MPI_FLOAT", F_FLOAT, sizeof(float) },
    { C_DOUBLE, "MPI_DOUBLE", F_FLOAT, sizeof(double) },
    { C_BOOL, "MPI_C_BOOL", F_BOOL, sizeof(bool) },
    { C_BYTE, "MPI_BYTE", F_BYTE, 1 },
    { C_2INT, "MPI_2INT", F_PAIR, sizeof(int_int) },
    { C_DOUBLE_INT, "MPI_DOUBLE_INT", F_PAIR, sizeof(double_int) },
    { C_FLOAT_INT, "MPI_FLOAT_INT", F_PAIR, sizeof(float_int) },
};
enum { NTYPES = sizeof types / sizeof types[0] };

static MPI_Datatype dtype_of(enum ctype c)
{
    switch (c) {
    case C_SCHAR: return MPI_SIGNED_CHAR;
    case C_UCHAR: return MPI_UNSIGNED_CHAR;
    case C_SHORT: return MPI_SHORT;
    case C_USHORT: return MPI_UNSIGNED_SHORT;
    case C_INT: return MPI_INT;
    case C_UINT: return MPI_UNSIGNED;
    case C_LONG: return MPI_LONG;
    case C_ULONG: return MPI_UNSIGNED_LONG;
    case C_LLONG: return MPI_LONG_LONG;
    case C_ULLONG: return MPI_UNSIGNED_LONG_LONG;
    case C_I8: return MPI_INT8_T;
    case C_I16: return MPI_INT16_T;
    case C_I32: return MPI_INT32_T;
    case C_I64: return MPI_INT64_T;
    case C_U8: return MPI_UINT8_T;
    case C_U16: return MPI_UINT16_T;
    case C_U32: return MPI_UINT32_T;
    case C_U64: return MPI_UINT64_T;
    case C_FLOAT: return MPI_FLOAT;
    case C_DOUBLE: return MPI_DOUBLE;
    case C_BOOL: return MPI_C_BOOL;
    case C_BYTE: return MPI_BYTE;
    case C_2INT: return MPI_2INT;
    case C_DOUBLE_INT: return MPI_DOUBLE_INT;
    case C_FLOAT_INT: return MPI_FLOAT_INT;
    }
    return MPI_DATATYPE_NULL;
}

enum opk { O_SUM, O_PROD, O_MAX, O_MIN, O_LAND, O_LOR, O_LXOR, O_BAND, O_BOR, O_BXOR,
           O_MAXLOC, O_MINLOC, NOPS };
static const char *op_names[NOPS] = { "MPI_SUM", "MPI_PROD", "MPI_MAX", "MPI_MIN",
                                      "MPI_LAND", "MPI_LOR", "MPI_LXOR", "MPI_BAND",
                                      "MPI_BOR", "MPI_BXOR", "MPI_MAXLOC", "MPI_MINLOC" };

static MPI_Op op_of(enum opk o)
{
    switch (o) {
    case O_SUM: return MPI_SUM;
    case O_PROD: return MPI_PROD;
    case O_MAX: return MPI_MAX;
    case O_MIN: return MPI_MIN;
    case O_LAND: return MPI_LAND;
    case O_LOR: return MPI_LOR;
    case O_LXOR: return MPI_LXOR;
    case O_BAND: return MPI_BAND;
    case O_BOR: return MPI_BOR;
    case O_BXOR: return MPI_BXOR;
    case O_MAXLOC: return MPI_MAXLOC;
    case O_MINLOC: return MPI_MINLOC;
    default: return MPI_OP_NULL;
    }
}

static bool defined_on(enum opk o, enum family f)
{
    switch (o) {
    case O_SUM: case O_PROD: case O_MAX: case O_MIN:
        return f == F_SINT || f == F_UINT || f == F_FLOAT;
    case O_LAND: case O_LOR: case O_LXOR:
        return f == F_SINT || f == F_UINT || f == F_BOOL;
    case O_BAND: case O_BOR: case O_BXOR:
        return f == F_SINT || f == F_UINT || f == F_BYTE;
    case O_MAXLOC: case O_MINLOC:
        return f == F_PAIR;
    default:
        return false;
    }
}

/* One element, whatever its type: the value (integral, also for the
 * floating-point types) and, for the pair types, the index. */
typedef struct { long long v; int i; } elem;

static void store(enum ctype c, void *buf, size_t k, elem e)
{
    switch (c) {
    case C_SCHAR: ((signed char *)buf)[k] = (signed char)e.v; break;
    case C_UCHAR: ((unsigned char *)buf)[k] = (unsigned char)e.v; break;
    case C_SHORT: ((short *)buf)[k] = (short)e.v; break;
    case C_USHORT: ((unsigned short *)buf)[k] = (unsigned short)e.v; break;
    case C_INT: ((int *)buf)[k] = (int)e.v; break;
    case C_UINT: ((unsigned *)buf)[k] = (unsigned)e.v; break;
    case C_LONG: ((long *)buf)[k] = (long)e.v; break;
    case C_ULONG: ((unsigned long *)buf)[k] = (unsigned long)e.v; break;
    case C_LLONG: ((long long *)buf)[k] = e.v; break;
    case C_ULLONG: ((unsigned long long *)buf)[k] = (unsigned long long)e.v; break;
    case C_I8: ((int8_t *)buf)[k] = (int8_t)e.v; break;
    case C_I16: ((int16_t *)buf)[k] = (int16_t)e.v; break;
    case C_I32: ((int32_t *)buf)[k] = (int32_t)e.v; break;
    case C_I64: ((int64_t *)buf)[k] = (int64_t)e.v; break;
    case C_U8: ((uint8_t *)buf)[k] = (uint8_t)e.v; break;
    case C_U16: ((uint16_t *)buf)[k] = (uint16_t)e.v; break;
    case C_U32: ((uint32_t *)buf)[k] = (uint32_t)e.v; break;
    case C_U64: ((uint64_t *)buf)[k] = (uint64_t)e.v; break;
    case C_FLOAT: ((float *)buf)[k] = (float)e.v; break;
    case C_DOUBLE: ((double *)buf)[k] = (double)e.v; break;
    case C_BOOL: ((bool *)buf)[k] = e.v != 0; break;
    case C_BYTE: ((unsigned char *)buf)[k] = (unsigned char)e.v; break;
    case C_2INT: ((int_int *)buf)[k] = (int_int){ (int)e.v, e.i }; break;
    case C_DOUBLE_INT: ((double_int *)buf)[k] = (double_int){ (double)e.v, e.i }; break;
    case C_FLOAT_INT: ((float_int *)buf)[k] = (float_int){ (float)e.v, e.i }; break;
    }
}

/* A floating-point value that is not a small integer loads as this. */
#define NOT_INTEGRAL (-0x7ffffffffffffeeLL)

static long long from_fp(double d)
{
    if (d != d || d < -1e15 || d > 1e15 || (double)(long long)d != d)
        return NOT_INTEGRAL;
    return (long long)d;
}

static elem load(enum ctype c, const void *buf, size_t k)
{
    elem e = { 0, 0 };
    switch (c) {
    case C_SCHAR: e.v = ((const signed char *)buf)[k]; break;
    case C_UCHAR: e.v = ((const unsigned char *)buf)[k]; break;
    case C_SHORT: e.v = ((const short *)buf)[k]; break;
    case C_USHORT: e.v = ((const unsigned short *)buf)[k]; break;
    case C_INT: e.v = ((const int *)buf)[k]; break;
    case C_UINT: e.v = ((const unsigned *)buf)[k]; break;
    case C_LONG: e.v = ((const long *)buf)[k]; break;
    case C_ULONG: e.v = (long long)((const unsigned long *)buf)[k]; break;
    case C_LLONG: e.v = ((const long long *)buf)[k]; break;
    case C_ULLONG: e.v = (long long)((const unsigned long long *)buf)[k]; break;
    case C_I8: e.v = ((const int8_t *)buf)[k]; break;
    case C_I16: e.v = ((const int16_t *)buf)[k]; break;
    case C_I32: e.v = ((const int32_t *)buf)[k]; break;
    case C_I64: e.v = ((const int64_t *)buf)[k]; break;
    case C_U8: e.v = ((const uint8_t *)buf)[k]; break;
    case C_U16: e.v = ((const uint16_t *)buf)[k]; break;
    case C_U32: e.v = ((const uint32_t *)buf)[k]; break;
    case C_U64: e.v = (long long)((const uint64_t *)buf)[k]; break;
    case C_FLOAT: e.v = from_fp(((const float *)buf)[k]); break;
    case C_DOUBLE: e.v = from_fp(((const double *)buf)[k]); break;
    case C_BOOL: {
        /* Read the byte itself: a bool holding anything but 0 or 1 is a bug. */
        unsigned char b;
        memcpy(&b, (const char *)buf + k * sizeof(bool), 1);
        e.v = b;
        break;
    }
    case C_BYTE: e.v = ((const unsigned char *)buf)[k]; break;
    case C_2INT: e.v = ((const int_int *)buf)[k].v; e.i = ((const int_int *)buf)[k].i; break;
    case C_DOUBLE_INT:
        e.v = from_fp(((const double_int *)buf)[k].v);
        e.i = ((const double_int *)buf)[k].i;
        break;
    case C_FLOAT_INT:
        e.v = from_fp(((const float_int *)buf)[k].v);
        e.i = ((const float_int *)buf)[k].i;
        break;
    }
    return e;
}

static uint64_t mix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

/* The input of `rank` at element j, as the type holds it. Sums of at most
 * 8 ranks stay within -112..112 (0..224 unsigned), products within +-4. */
static elem gen(enum opk o, const type_t *t, int rank, long j)
{
    bool sgn = t->fam == F_SINT || t->fam == F_FLOAT;
    elem e = { 0, 0 };
    switch (o) {
    case O_SUM:
        e.v = (rank * 31 + j * 17) % 29 - (sgn ? 14 : 0);
        break;
    case O_PROD: {
        int m = (int)((rank + j) % 4);
        e.v = m == 0 ? 2 : (m == 1 && sgn) ? -1 : 1;
        break;
    }
    case O_MAX: case O_MIN:
        e.v = (rank * 13 + j * 7) % 23 - (sgn ? 11 : 0);
        break;
    case O_LAND: case O_LOR: case O_LXOR: {
        /* Bit `rank` of p says whether the rank contributes true: all true
         * at j % 7 == 0, all false at j % 7 == 6, mixed otherwise. A true
         * value of a wide type has its low byte zero. */
        unsigned p = j % 7 == 6 ? 0 : (unsigned)(255 + 37 * (j % 7)) & 255;
        if ((p >> (rank % 8)) & 1)
            e.v = t->fam == F_BOOL ? 1 : t->size > 1 ? 256 * (rank % 3 + 1)
                  : (long long)(rank % 3 + 1);
        if (e.v && t->fam == F_SINT && rank % 2)
            e.v = -e.v;
        break;
    }
    case O_BAND: case O_BOR: case O_BXOR: {
        uint64_t h = mix((uint64_t)rank * 1000003u + (uint64_t)j * 7 + (uint64_t)o);
        /* Keep BAND from always coming out zero: set a few bits everywhere. */
        h |= 0x8100000000008101ULL;
        e.v = (long long)h;
        break;
    }
    case O_MAXLOC: case O_MINLOC:
        e.v = (rank * 7 + j * 3) % 5 - 2;
        e.i = (int)((rank * 5 + j) % 11) - 5 + (o == O_MINLOC ? 1000 : 0);
        break;
    default:
        break;
    }
    /* Normalize through the type: what the rank really sends. */
    unsigned char tmp[32];
    store(t->c, tmp, 0, e);
    return load(t->c, tmp, 0);
}

static elem fold(enum opk o, elem a, elem b)
{
    elem r = a;
    switch (o) {
    case O_SUM: r.v = a.v + b.v; break;
    case O_PROD: r.v = a.v * b.v; break;
    case O_MAX: r.v = a.v > b.v ? a.v : b.v; break;
    case O_MIN: r.v = a.v < b.v ? a.v : b.v; break;
    case O_LAND: r.v = a.v && b.v; break;
    case O_LOR: r.v = a.v || b.v; break;
    case O_LXOR: r.v = !a.v != !b.v; break;
    case O_BAND: r.v = a.v & b.v; break;
    case O_BOR: r.v = a.v | b.v; break;
    case O_BXOR: r.v = a.v ^ b.v; break;
    case O_MAXLOC: case O_MINLOC:
        if (a.v == b.v)
            r.i = a.i < b.i ? a.i : b.i;
        else if ((o == O_MAXLOC) == (b.v > a.v))
            r = b;
        break;
    default: break;
    }
    return r;
}

/* Per test case: the communicator, its size and this rank in it. */
static MPI_Comm comm;
static const char *comm_name;
static int n, r;

static elem *expect_all, *expect_incl, *expect_excl;

/* The expected results of element j < n*count: over all ranks, over ranks
 * 0..r, over ranks 0..r-1 (Exscan). */
static void compute_expected(enum opk o, const type_t *t, long total)
{
    for (long j = 0; j < total; j++) {
        elem acc = gen(o, t, 0, j);
        if (r == 0)
            expect_incl[j] = acc;
        for (int q = 1; q < n; q++) {
            if (q == r)
                expect_excl[j] = acc;
            acc = fold(o, acc, gen(o, t, q, j));
            if (q == r)
                expect_incl[j] = acc;
        }
        expect_all[j] = acc;
    }
}

static void check_result(const char *what, enum opk o, const type_t *t, int count,
                         const void *buf, const elem *want, int line)
{
    for (int k = 0; k < count; k++) {
        elem got = load(t->c, buf, (size_t)k);
        bool ok = got.v == want[k].v && (t->fam != F_PAIR || got.i == want[k].i);
        if (!ok)
            fail(line, "%s %s on %s, count %d, %s (size %d, rank %d): element %d is "
                 "(%lld, %d), expected (%lld, %d)", what, op_names[o], t->name, count,
                 comm_name, n, r, k, got.v, got.i, want[k].v, want[k].i);
    }
}

static void check_untouched(const char *what, enum opk o, const type_t *t, int count,
                            const unsigned char *buf, size_t bytes, unsigned char fill,
                            int line)
{
    for (size_t b = 0; b < bytes; b++)
        if (buf[b] != fill)
            fail(line, "%s %s on %s, count %d, %s (size %d, rank %d): byte %zu of the "
                 "receive buffer changed to 0x%02x", what, op_names[o], t->name, count,
                 comm_name, n, r, b, buf[b]);
}

#define SENTINEL 0xa5

/* Which calls a case makes. */
enum { ALLREDUCE = 1, ALLREDUCE_IN_PLACE = 2, ROOTED = 4, SCANS = 8, RSB = 16, ALL = 31 };

static void run_case(enum opk o, const type_t *t, int count, int calls)
{
    MPI_Datatype dt = dtype_of(t->c);
    MPI_Op op = op_of(o);
    long total = (long)n * count;
    size_t bytes = (size_t)count * t->size;
    compute_expected(o, t, total > 0 ? total : 1);

    /* This rank's input, all n*count elements (Reduce_scatter_block uses them all). */
    unsigned char *in = xmalloc((size_t)total * t->size + 1);
    for (long j = 0; j < total; j++)
        store(t->c, in, (size_t)j, gen(o, t, r, j));
    unsigned char *out = xmalloc((size_t)total * t->size + 64);
    /* The first `count` elements of this rank's input, for the one-block calls. */
    const void *send = in;

    int roots[3], nroots = 0;
    roots[nroots++] = 0;
    if (n > 1) roots[nroots++] = 1;
    if (n > 2) roots[nroots++] = n - 1;
    int first = (int)((o + t->c + count) % nroots);
    for (int k = 0; k < nroots && (calls & ROOTED); k++) {
        int root = roots[(first + k) % nroots];
        /* Plain. */
        memset(out, SENTINEL, bytes + 64);
        CALL(MPI_Reduce(send, r == root ? out : NULL, count, dt, op, root, comm));
        if (r == root) {
            check_result("Reduce", o, t, count, out, expect_all, __LINE__);
            check_untouched("Reduce (past the end)", o, t, count, out + bytes, 64, SENTINEL,
                            __LINE__);
        }
        /* In place at the root. */
#ifdef MPICH_DEVIATIONS
        /* MPICH 4.0 reads MPI_IN_PLACE as a buffer at a root other than 0
         * (pmodels/mpich#6540, fixed in 4.1.2). */
        if (root != 0)
            continue;
#endif
        if (r == root) {
            memcpy(out, in, bytes);
            CALL(MPI_Reduce(MPI_IN_PLACE, out, count, dt, op, root, comm));
            check_result("Reduce(MPI_IN_PLACE)", o, t, count, out, expect_all, __LINE__);
        } else {
            CALL(MPI_Reduce(send, NULL, count, dt, op, root, comm));
        }
    }

    if (calls & ALLREDUCE) {
        memset(out, SENTINEL, bytes + 64);
        CALL(MPI_Allreduce(send, out, count, dt, op, comm));
        check_result("Allreduce", o, t, count, out, expect_all, __LINE__);
        check_untouched("Allreduce (past the end)", o, t, count, out + bytes, 64, SENTINEL,
                        __LINE__);
    }
    if (calls & ALLREDUCE_IN_PLACE) {
        memcpy(out, in, bytes);
        CALL(MPI_Allreduce(MPI_IN_PLACE, out, count, dt, op, comm));
        check_result("Allreduce(MPI_IN_PLACE)", o, t, count, out, expect_all, __LINE__);
    }
    if (!(calls & SCANS))
        goto rsb;

    memset(out, SENTINEL, bytes + 64);
    CALL(MPI_Scan(send, out, count, dt, op, comm));
    check_result("Scan", o, t, count, out, expect_incl, __LINE__);
    check_untouched("Scan (past the end)", o, t, count, out + bytes, 64, SENTINEL, __LINE__);
    memcpy(out, in, bytes);
    CALL(MPI_Scan(MPI_IN_PLACE, out, count, dt, op, comm));
    check_result("Scan(MPI_IN_PLACE)", o, t, count, out, expect_incl, __LINE__);

    memset(out, SENTINEL, bytes + 64);
    CALL(MPI_Exscan(send, out, count, dt, op, comm));
    if (r == 0)
        check_untouched("Exscan on rank 0", o, t, count, out, bytes + 64, SENTINEL, __LINE__);
    else
        check_result("Exscan", o, t, count, out, expect_excl, __LINE__);
    memcpy(out, in, bytes);
    CALL(MPI_Exscan(MPI_IN_PLACE, out, count, dt, op, comm));
    if (r == 0) {
        if (memcmp(out, in, bytes) != 0)
            fail(__LINE__, "Exscan(MPI_IN_PLACE) %s on %s, count %d, %s: rank 0's buffer "
                 "changed", op_names[o], t->name, count, comm_name);
    } else {
        check_result("Exscan(MPI_IN_PLACE)", o, t, count, out, expect_excl, __LINE__);
    }

rsb:
    if (!(calls & RSB))
        goto done;
    memset(out, SENTINEL, bytes + 64);
    CALL(MPI_Reduce_scatter_block(in, out, count, dt, op, comm));
    check_result("Reduce_scatter_block", o, t, count, out, expect_all + (long)r * count,
                 __LINE__);
    check_untouched("Reduce_scatter_block (past the end)", o, t, count, out + bytes, 64,
                    SENTINEL, __LINE__);
    memcpy(out, in, (size_t)total * t->size);
    CALL(MPI_Reduce_scatter_block(MPI_IN_PLACE, out, count, dt, op, comm));
    check_result("Reduce_scatter_block(MPI_IN_PLACE)", o, t, count, out,
                 expect_all + (long)r * count, __LINE__);

done:
    free(in);
    free(out);
}

/* Integer types that are other names for types above: all operations would
 * repeat the same work, so these get one arithmetic and one bitwise one. */
static bool is_alias(enum ctype c)
{
    return c >= C_I8 && c <= C_U64;
}

/* The type each operation runs every call and count with. */
static enum ctype main_type(enum opk o)
{
    static const enum ctype m[NOPS] = { C_INT, C_DOUBLE, C_FLOAT, C_LLONG, C_BOOL, C_UCHAR,
                                        C_U64, C_BYTE, C_INT, C_UINT, C_DOUBLE_INT, C_2INT };
    return m[o];
}

static const type_t *type_info(enum ctype c)
{
    for (int k = 0; k < NTYPES; k++)
        if (types[k].c == c)
            return &types[k];
    fail(__LINE__, "no type %d", (int)c);
}

static void use_comm(MPI_Comm c, const char *name)
{
    comm = c;
    comm_name = name;
    CALL(MPI_Comm_size(comm, &n));
    CALL(MPI_Comm_rank(comm, &r));
}

/* Every operation on every type it is defined for: one Allreduce of 7
 * elements each, in place every other time. */
static void matrix(void)
{
    int k = 0;
    for (int ti = 0; ti < NTYPES; ti++) {
        const type_t *t = &types[ti];
        for (int o = 0; o < NOPS; o++) {
            if (!defined_on((enum opk)o, t->fam))
                continue;
            if (is_alias(t->c) && o != O_SUM && o != O_BXOR)
                continue;
            run_case((enum opk)o, t, 7, k++ % 2 ? ALLREDUCE_IN_PLACE : ALLREDUCE);
        }
    }
}

/* Every call for each operation (or a few) on its main type; the other
 * counts for a few. */
static void calls(bool all_ops, bool counts)
{
    for (int o = 0; o < NOPS; o++) {
        bool few = o == O_SUM || o == O_BXOR || o == O_MAXLOC;
        if (!all_ops && !few && o != O_LAND)
            continue;
        const type_t *t = type_info(main_type((enum opk)o));
        run_case((enum opk)o, t, 7, ALL);
        if (counts && few) {
            run_case((enum opk)o, t, 0, ALL);
            run_case((enum opk)o, t, 1, ALL);
            run_case((enum opk)o, t, 10001, ALL);
        }
    }
    /* MPI_FLOAT_INT is no operation's main type. */
    if (all_ops) {
        run_case(O_MAXLOC, type_info(C_FLOAT_INT), 7, ALL);
        run_case(O_MINLOC, type_info(C_FLOAT_INT), 1, ALL);
    }
}

int main(int argc, char **argv)
{
    TEST_INIT(&argc, &argv);
    size_t most = (size_t)np * 10001;
    expect_all = xmalloc(most * sizeof(elem));
    expect_incl = xmalloc(most * sizeof(elem));
    expect_excl = xmalloc(most * sizeof(elem));

    use_comm(MPI_COMM_WORLD, "MPI_COMM_WORLD");
    matrix();
    calls(true, true);

    /* Every root of the one large case that is cheap to check. */
    {
        comm = MPI_COMM_WORLD;
        for (int root = 0; root < np; root += np > 4 ? 3 : 1) {
            int cnt = 10001;
            int *a = xmalloc(cnt * sizeof(int)), *b = xmalloc(cnt * sizeof(int));
            for (int k = 0; k < cnt; k++)
                a[k] = (me + 1) * (k % 1000) - k % 7;
            for (int k = 0; k < cnt; k++)
                b[k] = -1;
            CALL(MPI_Reduce(a, b, cnt, MPI_INT, MPI_SUM, root, MPI_COMM_WORLD));
            if (me == root)
                for (int k = 0; k < cnt; k++) {
                    int want = (np * (np + 1) / 2) * (k % 1000) - np * (k % 7);
                    CHECK(b[k] == want, "Reduce to root %d: element %d is %d, expected %d",
                          root, k, b[k], want);
                }
            free(a);
            free(b);
        }
    }

    /* Doubles whose sums are exact but not integral. */
    {
        double d[7], s[7];
        for (int k = 0; k < 7; k++)
            d[k] = (me + 1) * 0.25 + k * 0.5 - 1024.0;
        CALL(MPI_Allreduce(d, s, 7, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD));
        for (int k = 0; k < 7; k++) {
            double want = 0.25 * np * (np + 1) / 2 + np * (k * 0.5 - 1024.0);
            CHECK(s[k] == want, "Allreduce of doubles: element %d is %.17g, expected %.17g",
                  k, s[k], want);
        }
        float f[7], fs[7];
        for (int k = 0; k < 7; k++)
            f[k] = (float)(me * 0.125 - k * 0.75);
        CALL(MPI_Allreduce(f, fs, 7, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD));
        for (int k = 0; k < 7; k++) {
            float want = (float)(0.125 * np * (np - 1) / 2 - np * k * 0.75);
            CHECK(fs[k] == want, "Allreduce of floats: element %d is %.9g, expected %.9g",
                  k, fs[k], want);
        }
    }

    MPI_Comm rev;
    CALL(MPI_Comm_split(MPI_COMM_WORLD, 3, np - me, &rev));
    int rr = -1;
    CALL(MPI_Comm_rank(rev, &rr));
    CHECK(rr == np - 1 - me, "split with reversed keys: rank %d, expected %d", rr, np - 1 - me);
    use_comm(rev, "reversed split of MPI_COMM_WORLD");
    calls(false, false);
    CALL(MPI_Comm_free(&rev));

    use_comm(MPI_COMM_SELF, "MPI_COMM_SELF");
    calls(true, true);

    free(expect_all);
    free(expect_incl);
    free(expect_excl);
    CALL(MPI_Finalize());
    finalized = 1;
    return 0;
}

/* ranks: 1 2 */
/*
 * MPI_Pack / MPI_Unpack / MPI_Pack_size: ints, a double and a strided vector
 * packed one after another into one buffer, sent as MPI_PACKED to rank^1 and
 * unpacked there; too small an outsize or insize gives MPI_ERR_TRUNCATE under
 * MPI_ERRORS_RETURN. External32: Pack_external_size with the standard's sizes,
 * the packed bytes compared with hand-written big-endian values, and a round
 * trip through Unpack_external.
 */
#include <string.h>

#define TEST_NAME "pack"
#include "testutil.h"

static void native(int partner)
{
    int ints[3] = {me * 100 + 1, me * 100 + 2, me * 100 + 3};
    double d = me + 0.25;
    double grid[6] = {me, -1, me + 1, -1, me + 2, -1};
    MPI_Datatype col;
    CALL(MPI_Type_vector(3, 1, 2, MPI_DOUBLE, &col));
    CALL(MPI_Type_commit(&col));
    int s1, s2, s3;
    CALL(MPI_Pack_size(3, MPI_INT, MPI_COMM_WORLD, &s1));
    CALL(MPI_Pack_size(1, MPI_DOUBLE, MPI_COMM_WORLD, &s2));
    CALL(MPI_Pack_size(1, col, MPI_COMM_WORLD, &s3));
    CHECK(s1 >= 12 && s2 >= 8 && s3 >= 24, "pack sizes %d %d %d", s1, s2, s3);
    int cap = s1 + s2 + s3;
    char *out = xmalloc(cap), *in = xmalloc(cap);
    int pos = 0;
    CALL(MPI_Pack(ints, 3, MPI_INT, out, cap, &pos, MPI_COMM_WORLD));
    CALL(MPI_Pack(&d, 1, MPI_DOUBLE, out, cap, &pos, MPI_COMM_WORLD));
    CALL(MPI_Pack(grid, 1, col, out, cap, &pos, MPI_COMM_WORLD));
    CHECK(pos > 0 && pos <= cap, "position %d of %d", pos, cap);

    MPI_Status st;
    CALL(MPI_Sendrecv(out, pos, MPI_PACKED, partner, 3, in, cap, MPI_PACKED, partner, 3,
                      MPI_COMM_WORLD, &st));
    int got = -1;
    CALL(MPI_Get_count(&st, MPI_PACKED, &got));
    CHECK(got == pos, "received %d packed bytes, sent %d", got, pos);
    int rints[3] = {0};
    double rd = 0, rgrid[6] = {-7, -7, -7, -7, -7, -7};
    int rpos = 0;
    CALL(MPI_Unpack(in, got, &rpos, rints, 3, MPI_INT, MPI_COMM_WORLD));
    CALL(MPI_Unpack(in, got, &rpos, &rd, 1, MPI_DOUBLE, MPI_COMM_WORLD));
    CALL(MPI_Unpack(in, got, &rpos, rgrid, 1, col, MPI_COMM_WORLD));
    CHECK(rpos == got, "unpacked %d of %d bytes", rpos, got);
    for (int i = 0; i < 3; i++)
        CHECK(rints[i] == partner * 100 + i + 1, "int %d is %d", i, rints[i]);
    CHECK(rd == partner + 0.25, "double %g", rd);
    for (int i = 0; i < 6; i++)
        CHECK(rgrid[i] == (i % 2 ? -7 : partner + i / 2), "grid[%d] = %g", i, rgrid[i]);

    /* Errors: no room left, or not enough packed data. */
    CALL(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    int p = 0, cls = -1;
    int rc;
#ifndef MPICH_DEVIATIONS
    /* MPICH 4.0 checks neither outsize nor insize: it reads and writes past them. */
    rc = MPI_Pack(ints, 3, MPI_INT, out, 11, &p, MPI_COMM_WORLD);
    CALL(MPI_Error_class(rc, &cls));
    CHECK(rc != MPI_SUCCESS && cls == MPI_ERR_TRUNCATE, "pack into 11 bytes: class %d", cls);
    p = 8;
    rc = MPI_Unpack(in, 12, &p, rints, 3, MPI_INT, MPI_COMM_WORLD);
    CALL(MPI_Error_class(rc, &cls));
    CHECK(rc != MPI_SUCCESS && cls == MPI_ERR_TRUNCATE, "unpack past the end: class %d", cls);
#endif
    p = 0;
    rc = MPI_Pack(ints, -1, MPI_INT, out, cap, &p, MPI_COMM_WORLD);
    CALL(MPI_Error_class(rc, &cls));
    CHECK(rc != MPI_SUCCESS && cls == MPI_ERR_COUNT, "pack count -1: class %d", cls);
    CALL(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
    CALL(MPI_Type_free(&col));
    free(out);
    free(in);
}

static void external(void)
{
    struct { const char *name; MPI_Datatype t; MPI_Aint size; } sizes[] = {
        {"char", MPI_CHAR, 1}, {"short", MPI_SHORT, 2}, {"int", MPI_INT, 4},
        {"long long", MPI_LONG_LONG, 8}, {"float", MPI_FLOAT, 4}, {"double", MPI_DOUBLE, 8},
        {"int64_t", MPI_INT64_T, 8}, {"uint16_t", MPI_UINT16_T, 2},
    };
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        MPI_Aint s = -1;
        CALL(MPI_Pack_external_size("external32", 3, sizes[i].t, &s));
        CHECK(s == 3 * sizes[i].size, "external32 size of 3 %s: %ld", sizes[i].name, (long)s);
    }

    int iv[2] = {0x01020304, -2};
    short sv = 0x0a0b;
    double dv = 1.5;
    float fv = -2.0f;
    long long lv = 0x1122334455667788LL;
    unsigned char buf[64];
    MPI_Aint pos = 0;
    CALL(MPI_Pack_external("external32", iv, 2, MPI_INT, buf, sizeof buf, &pos));
    CALL(MPI_Pack_external("external32", &sv, 1, MPI_SHORT, buf, sizeof buf, &pos));
    CALL(MPI_Pack_external("external32", &dv, 1, MPI_DOUBLE, buf, sizeof buf, &pos));
    CALL(MPI_Pack_external("external32", &fv, 1, MPI_FLOAT, buf, sizeof buf, &pos));
    CALL(MPI_Pack_external("external32", &lv, 1, MPI_LONG_LONG, buf, sizeof buf, &pos));
    static const unsigned char want[] = {
        0x01, 0x02, 0x03, 0x04, 0xff, 0xff, 0xff, 0xfe, /* ints */
        0x0a, 0x0b,                                     /* short */
        0x3f, 0xf8, 0, 0, 0, 0, 0, 0,                   /* 1.5 */
        0xc0, 0x00, 0x00, 0x00,                         /* -2.0f */
        0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, /* long long */
    };
    CHECK(pos == (MPI_Aint)sizeof want, "external32 position %ld", (long)pos);
    for (size_t i = 0; i < sizeof want; i++)
        CHECK(buf[i] == want[i], "external32 byte %zu is %02x, expected %02x", i, buf[i], want[i]);

    int riv[2] = {0};
    short rsv = 0;
    double rdv = 0;
    float rfv = 0;
    long long rlv = 0;
    MPI_Aint rpos = 0;
    CALL(MPI_Unpack_external("external32", buf, pos, &rpos, riv, 2, MPI_INT));
    CALL(MPI_Unpack_external("external32", buf, pos, &rpos, &rsv, 1, MPI_SHORT));
    CALL(MPI_Unpack_external("external32", buf, pos, &rpos, &rdv, 1, MPI_DOUBLE));
    CALL(MPI_Unpack_external("external32", buf, pos, &rpos, &rfv, 1, MPI_FLOAT));
    CALL(MPI_Unpack_external("external32", buf, pos, &rpos, &rlv, 1, MPI_LONG_LONG));
    CHECK(rpos == pos, "unpacked %ld of %ld", (long)rpos, (long)pos);
    CHECK(riv[0] == iv[0] && riv[1] == iv[1] && rsv == sv && rdv == dv && rfv == fv && rlv == lv,
          "external32 round trip");

    /* A strided vector packs its elements in type-map order. */
    int grid[6] = {1, -1, 2, -1, 3, -1};
    MPI_Datatype col;
    CALL(MPI_Type_vector(3, 1, 2, MPI_INT, &col));
    CALL(MPI_Type_commit(&col));
    pos = 0;
    CALL(MPI_Pack_external("external32", grid, 1, col, buf, sizeof buf, &pos));
    CHECK(pos == 12 && buf[3] == 1 && buf[7] == 2 && buf[11] == 3 && buf[0] == 0,
          "external32 vector: %ld bytes", (long)pos);
    CALL(MPI_Type_free(&col));
}

int main(int argc, char **argv)
{
    TEST_INIT(&argc, &argv);
    int partner = (me ^ 1) < np ? (me ^ 1) : me;
    native(partner);
    external();
    CALL(MPI_Barrier(MPI_COMM_WORLD));
    CALL(MPI_Finalize());
    return 0;
}

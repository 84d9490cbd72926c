/* ranks: 1 2 */
/*
 * MPI-IO errors: every illegal access mode is MPI_ERR_AMODE, an amode that differs between
 * the ranks is MPI_ERR_NOT_SAME (never a hang), MPI_MODE_EXCL on an existing file is
 * MPI_ERR_FILE_EXISTS, reading a write-only file MPI_ERR_ACCESS, writing a read-only one
 * MPI_ERR_READ_ONLY, an unknown data representation MPI_ERR_UNSUPPORTED_DATAREP, a closed
 * handle MPI_ERR_FILE. Files return errors by default (MPI_ERRORS_RETURN); MPI_FILE_NULL's
 * handler serves MPI_File_open; a user file handler gets the file and the code.
 */
#define TEST_NAME "io_errors"
#include "testutil.h"

static int calls = 0;
static MPI_File seen = MPI_FILE_NULL;
static int seen_code = 0;

static void handler(MPI_File *fh, int *code, ...)
{
    calls++;
    seen = *fh;
    seen_code = *code;
}

int main(int argc, char **argv)
{
    TEST_INIT(&argc, &argv);
    char path[256];
    shared_tmp_path(path, sizeof path);
    MPI_File fh;
    MPI_Errhandler eh;

    /* Files return errors unless told otherwise, MPI_FILE_NULL included. */
    CALL(MPI_File_get_errhandler(MPI_FILE_NULL, &eh));
    CHECK(eh == MPI_ERRORS_RETURN, "MPI_FILE_NULL's handler is not MPI_ERRORS_RETURN");
    CALL(MPI_Errhandler_free(&eh));

    int bad[] = {0, MPI_MODE_CREATE, MPI_MODE_RDONLY | MPI_MODE_RDWR, MPI_MODE_RDWR | MPI_MODE_WRONLY,
                 MPI_MODE_RDONLY | MPI_MODE_CREATE, MPI_MODE_RDONLY | MPI_MODE_EXCL,
                 MPI_MODE_RDWR | MPI_MODE_SEQUENTIAL};
    for (unsigned i = 0; i < sizeof bad / sizeof bad[0]; i++)
        EXPECT(MPI_ERR_AMODE, MPI_File_open(MPI_COMM_WORLD, path, bad[i], MPI_INFO_NULL, &fh));
    EXPECT(MPI_ERR_NO_SUCH_FILE, MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh));
    EXPECT(MPI_ERR_NO_SUCH_FILE, MPI_File_open(MPI_COMM_WORLD, "/nonexistent-dir/x", MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh));
    if (np > 1)
        EXPECT(MPI_ERR_NOT_SAME, MPI_File_open(MPI_COMM_WORLD, path, me ? MPI_MODE_RDWR | MPI_MODE_CREATE : MPI_MODE_WRONLY | MPI_MODE_CREATE, MPI_INFO_NULL, &fh));

    /* A write-only file: made here, with MPI_MODE_EXCL. */
    CALL(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_EXCL | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh));
    char buf[16] = "0123456789abcdef";
    CALL(MPI_File_get_errhandler(fh, &eh));
    CHECK(eh == MPI_ERRORS_RETURN, "a file's handler is not MPI_ERRORS_RETURN");
    EXPECT(MPI_ERR_ACCESS, MPI_File_read_at(fh, 0, buf, 4, MPI_CHAR, MPI_STATUS_IGNORE));
    EXPECT(MPI_ERR_ARG, MPI_File_write_at(fh, -1, buf, 4, MPI_CHAR, MPI_STATUS_IGNORE));
    EXPECT(MPI_ERR_COUNT, MPI_File_write_at(fh, 0, buf, -1, MPI_CHAR, MPI_STATUS_IGNORE));
    EXPECT(MPI_ERR_TYPE, MPI_File_write_at(fh, 0, buf, 1, MPI_DATATYPE_NULL, MPI_STATUS_IGNORE));
    EXPECT(MPI_ERR_UNSUPPORTED_DATAREP, MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "no-such-rep", MPI_INFO_NULL));
    EXPECT(MPI_ERR_ARG, MPI_File_set_view(fh, -5, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
    CALL(MPI_File_write_at(fh, me * 16, buf, 16, MPI_CHAR, MPI_STATUS_IGNORE));

    /* A user handler on the file sees the file and the class. */
    MPI_Errhandler mine;
    CALL(MPI_File_create_errhandler(handler, &mine));
    CALL(MPI_File_set_errhandler(fh, mine));
    int rc = MPI_File_read(fh, buf, 1, MPI_CHAR, MPI_STATUS_IGNORE), class;
    CALL(MPI_Error_class(rc, &class));
    CHECK(class == MPI_ERR_ACCESS, "read on a write-only file returned class %d", class);
    CALL(MPI_Error_class(seen_code, &class));
    CHECK(calls == 1 && seen == fh && class == MPI_ERR_ACCESS, "handler: %d calls, class %d", calls, class);
    CALL(MPI_File_call_errhandler(fh, MPI_ERR_IO));
    CHECK(calls == 2 && seen_code == MPI_ERR_IO, "MPI_File_call_errhandler: %d calls, code %d", calls, seen_code);
    CALL(MPI_File_close(&fh));

    /* Exists now: MPI_MODE_EXCL fails on every rank. */
    EXPECT(MPI_ERR_FILE_EXISTS, MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_EXCL | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));

    /* Read-only. */
    CALL(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh));
    EXPECT(MPI_ERR_READ_ONLY, MPI_File_write_at(fh, 0, buf, 1, MPI_CHAR, MPI_STATUS_IGNORE));
    EXPECT(MPI_ERR_READ_ONLY, MPI_File_set_size(fh, 0));
    MPI_File closed = fh;
    CALL(MPI_File_close(&fh));
    EXPECT(MPI_ERR_FILE, MPI_File_get_amode(closed, &rc));

    /* MPI_FILE_NULL's handler is the one of MPI_File_open. */
    CALL(MPI_File_set_errhandler(MPI_FILE_NULL, mine));
    rc = MPI_File_open(MPI_COMM_WORLD, path, 0, MPI_INFO_NULL, &fh);
    CALL(MPI_Error_class(rc, &class));
    CHECK(class == MPI_ERR_AMODE && calls == 3 && seen == MPI_FILE_NULL,
          "open's error went elsewhere: class %d, %d calls", class, calls);
    CALL(MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_RETURN));
    CALL(MPI_Errhandler_free(&mine));

    CALL(MPI_Barrier(MPI_COMM_WORLD));
    if (me == 0)
        CALL(MPI_File_delete(path, MPI_INFO_NULL));
    CALL(MPI_Finalize());
    return 0;
}

/* ranks: 1 2 */
/*
 * MPI-IO access modes and atomicity: MPI_MODE_APPEND starts the individual and shared file
 * pointers at the end of the file; MPI_MODE_SEQUENTIAL allows only the shared file pointer
 * (explicit offsets and the individual pointer are MPI_ERR_UNSUPPORTED_OPERATION) and takes
 * MPI_DISPLACEMENT_CURRENT; atomic mode is off by default, set on every rank, and its writes
 * read back.
 */
#define TEST_NAME "io_modes"
#include "testutil.h"

int main(int argc, char **argv)
{
    TEST_INIT(&argc, &argv);
    char path[256];
    shared_tmp_path(path, sizeof path);
    MPI_File fh;
    MPI_Offset pos;
    int flag;

    /* 40 bytes, then reopened for appending. */
    CALL(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh));
    CALL(MPI_File_get_atomicity(fh, &flag));
    CHECK(flag == 0, "atomic mode is on by default");
    CALL(MPI_File_set_atomicity(fh, 1));
    CALL(MPI_File_get_atomicity(fh, &flag));
    CHECK(flag == 1, "atomic mode did not turn on");
    char forty[40];
    memset(forty, 'a', sizeof forty);
    if (me == 0)
        CALL(MPI_File_write_at(fh, 0, forty, 40, MPI_CHAR, MPI_STATUS_IGNORE));
    CALL(MPI_File_close(&fh));

    CALL(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_WRONLY | MPI_MODE_APPEND, MPI_INFO_NULL, &fh));
    CALL(MPI_File_get_position(fh, &pos));
    CHECK(pos == 40, "MPI_MODE_APPEND put the individual pointer at %ld", (long)pos);
    CALL(MPI_File_get_position_shared(fh, &pos));
    CHECK(pos == 40, "MPI_MODE_APPEND put the shared pointer at %ld", (long)pos);
    CALL(MPI_Barrier(MPI_COMM_WORLD));
    CALL(MPI_File_write_ordered(fh, "b", 1, MPI_CHAR, MPI_STATUS_IGNORE));
    CALL(MPI_File_close(&fh));

    /* Sequential: only the shared pointer. */
    CALL(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY | MPI_MODE_SEQUENTIAL, MPI_INFO_NULL, &fh));
    char got[64];
    EXPECT(MPI_ERR_UNSUPPORTED_OPERATION, MPI_File_read_at(fh, 0, got, 1, MPI_CHAR, MPI_STATUS_IGNORE));
    EXPECT(MPI_ERR_UNSUPPORTED_OPERATION, MPI_File_read(fh, got, 1, MPI_CHAR, MPI_STATUS_IGNORE));
    EXPECT(MPI_ERR_UNSUPPORTED_OPERATION, MPI_File_seek(fh, 0, MPI_SEEK_SET));
    CALL(MPI_File_read_ordered(fh, got, 40 / np, MPI_CHAR, MPI_STATUS_IGNORE));
    for (int i = 0; i < 40 / np; i++)
        CHECK(got[i] == 'a', "sequential read gave %c at %d", got[i], i);
    CALL(MPI_File_set_view(fh, MPI_DISPLACEMENT_CURRENT, MPI_CHAR, MPI_CHAR, "native", MPI_INFO_NULL));
    MPI_Offset disp;
    MPI_Datatype et, ft;
    char rep[MPI_MAX_DATAREP_STRING];
    CALL(MPI_File_get_view(fh, &disp, &et, &ft, rep));
    CHECK(disp == (40 / np) * np, "MPI_DISPLACEMENT_CURRENT gave %ld", (long)disp);
    CALL(MPI_File_close(&fh));

    /* MPI_DISPLACEMENT_CURRENT needs a sequential file. */
    CALL(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh));
    EXPECT(MPI_ERR_ARG, MPI_File_set_view(fh, MPI_DISPLACEMENT_CURRENT, MPI_CHAR, MPI_CHAR, "native", MPI_INFO_NULL));
    MPI_Offset size;
    CALL(MPI_File_get_size(fh, &size));
    CHECK(size == 40 + np, "size %ld after appending", (long)size);
    CALL(MPI_File_read_at(fh, 40, got, np, MPI_CHAR, MPI_STATUS_IGNORE));
    for (int i = 0; i < np; i++)
        CHECK(got[i] == 'b', "appended byte %d is %c", i, got[i]);
    CALL(MPI_File_close(&fh));
    CALL(MPI_Barrier(MPI_COMM_WORLD));
    if (me == 0)
        CALL(MPI_File_delete(path, MPI_INFO_NULL));
    CALL(MPI_Finalize());
    return 0;
}

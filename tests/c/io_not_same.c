/* ranks: 2 3 */
/* mpich: skip MPICH answers MPI_ERR_ARG where the sizes differ; Ferry gives the class MPI names for differing arguments, MPI_ERR_NOT_SAME */
/*
 * MPI-IO collective calls whose arguments differ between the ranks, or fail their checks on
 * one rank only, fail on every rank and never hang: MPI_File_set_size with different sizes
 * (MPI_ERR_NOT_SAME), a negative size on one rank (its MPI_ERR_ARG everywhere), write_ordered
 * with a negative count on the last rank, seek_shared with different offsets and
 * set_atomicity with different flags; the file works normally afterwards.
 */
#define TEST_NAME "io_not_same"
#include "testutil.h"

int main(int argc, char **argv)
{
    TEST_INIT(&argc, &argv);
    char path[256];
    shared_tmp_path(path, sizeof path);
    MPI_File fh;
    CALL(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE, MPI_INFO_NULL, &fh));
    int last = me == np - 1;

    EXPECT(MPI_ERR_NOT_SAME, MPI_File_set_size(fh, 100 + me));
    EXPECT(MPI_ERR_ARG, MPI_File_set_size(fh, last ? -1 : 100));
    int x[4] = {me, me, me, me};
    EXPECT(MPI_ERR_COUNT, MPI_File_write_ordered(fh, x, last ? -1 : 4, MPI_INT, MPI_STATUS_IGNORE));
    EXPECT(MPI_ERR_NOT_SAME, MPI_File_seek_shared(fh, me, MPI_SEEK_SET));
    EXPECT(MPI_ERR_NOT_SAME, MPI_File_set_atomicity(fh, last));

    /* Still usable. */
    CALL(MPI_File_set_size(fh, 0));
    CALL(MPI_File_write_ordered(fh, x, 4, MPI_INT, MPI_STATUS_IGNORE));
    MPI_Offset size;
    CALL(MPI_File_sync(fh));
    CALL(MPI_Barrier(MPI_COMM_WORLD));
    CALL(MPI_File_get_size(fh, &size));
    CHECK(size == (MPI_Offset)np * 4 * sizeof(int), "size %ld after write_ordered", (long)size);
    CALL(MPI_File_close(&fh));
    CALL(MPI_Finalize());
    return 0;
}

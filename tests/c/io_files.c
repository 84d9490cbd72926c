/* ranks: 1 2 4 */
/*
 * MPI-IO files: a collective open that creates, explicit-offset writes of each rank's block
 * read back byte for byte by another rank, the individual file pointer (read, write, seek,
 * get_position), sizes (set_size, preallocate, get_size), the amode, group and hints a file
 * reports, MPI_File_c2f/f2c, non-blocking reads and writes completed by MPI_Wait with
 * MPI_Get_count, close, delete, and opening a deleted file (MPI_ERR_NO_SUCH_FILE).
 */
#define TEST_NAME "io_files"
#include "testutil.h"

#define BLOCK 1000

static void shared_name(char *path, size_t n)
{
    shared_tmp_path(path, n);
}

int main(int argc, char **argv)
{
    TEST_INIT(&argc, &argv);
    char path[256];
    shared_name(path, sizeof path);
    MPI_File fh;
    CALL(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    CHECK(fh != MPI_FILE_NULL, "open gave MPI_FILE_NULL");

    int amode;
    CALL(MPI_File_get_amode(fh, &amode));
    CHECK(amode == (MPI_MODE_CREATE | MPI_MODE_RDWR), "amode %d", amode);
    MPI_Group g, wg;
    int cmp;
    CALL(MPI_File_get_group(fh, &g));
    CALL(MPI_Comm_group(MPI_COMM_WORLD, &wg));
    CALL(MPI_Group_compare(g, wg, &cmp));
    CHECK(cmp == MPI_IDENT, "the file's group is not the world's (%d)", cmp);
    CALL(MPI_Group_free(&g));
    CALL(MPI_Group_free(&wg));
    MPI_Info info;
    char value[MPI_MAX_INFO_VAL + 1];
    int flag;
    CALL(MPI_File_get_info(fh, &info));
    CALL(MPI_Info_get(info, "cb_buffer_size", MPI_MAX_INFO_VAL, value, &flag));
    CHECK(flag, "cb_buffer_size is not reported");
    CALL(MPI_Info_free(&info));
    CHECK(MPI_File_f2c(MPI_File_c2f(fh)) == fh, "c2f/f2c does not round-trip");
    CHECK(MPI_File_c2f(MPI_FILE_NULL) == 0, "MPI_FILE_NULL is not 0 in Fortran");

    /* Each rank writes its block (bytes rank*7 + i) at an explicit offset. */
    unsigned char *mine = xmalloc(BLOCK), *got = xmalloc(BLOCK);
    for (int i = 0; i < BLOCK; i++)
        mine[i] = (unsigned char)(me * 7 + i);
    MPI_Status st;
    int count;
    CALL(MPI_File_write_at(fh, (MPI_Offset)me * BLOCK, mine, BLOCK, MPI_BYTE, &st));
    CALL(MPI_Get_count(&st, MPI_BYTE, &count));
    CHECK(count == BLOCK, "write_at wrote %d", count);
    CALL(MPI_File_sync(fh));
    CALL(MPI_Barrier(MPI_COMM_WORLD));
    CALL(MPI_File_sync(fh));
    MPI_Offset size;
    CALL(MPI_File_get_size(fh, &size));
    CHECK(size == (MPI_Offset)np * BLOCK, "size %ld", (long)size);

    /* Read the next rank's block, byte for byte. */
    int other = (me + 1) % np;
    CALL(MPI_File_read_at(fh, (MPI_Offset)other * BLOCK, got, BLOCK, MPI_BYTE, &st));
    CALL(MPI_Get_count(&st, MPI_BYTE, &count));
    CHECK(count == BLOCK, "read_at read %d", count);
    for (int i = 0; i < BLOCK; i++)
        CHECK(got[i] == (unsigned char)(other * 7 + i), "byte %d of rank %d's block is %d", i, other, got[i]);

    /* A read past the end is short: 10 bytes of the last block, then nothing. */
    CALL(MPI_File_read_at(fh, size - 10, got, 100, MPI_BYTE, &st));
    CALL(MPI_Get_count(&st, MPI_BYTE, &count));
    CHECK(count == 10, "a read across the end read %d", count);

    /* The individual file pointer, in ints (the default view counts bytes). */
    MPI_Offset pos;
    CALL(MPI_File_seek(fh, (MPI_Offset)other * BLOCK + 4, MPI_SEEK_SET));
    int word;
    CALL(MPI_File_read(fh, &word, 1, MPI_INT, &st));
    CALL(MPI_File_get_position(fh, &pos));
    CHECK(pos == (MPI_Offset)other * BLOCK + 8, "position %ld after reading an int", (long)pos);
    unsigned char want[4];
    for (int i = 0; i < 4; i++)
        want[i] = (unsigned char)(other * 7 + 4 + i);
    CHECK(memcmp(&word, want, 4) == 0, "read through the file pointer gave other bytes");
    CALL(MPI_File_seek(fh, -8, MPI_SEEK_CUR));
    CALL(MPI_File_get_position(fh, &pos));
    CHECK(pos == (MPI_Offset)other * BLOCK, "seek back gave %ld", (long)pos);
    CALL(MPI_File_seek(fh, -1, MPI_SEEK_END));
    CALL(MPI_File_get_position(fh, &pos));
    CHECK(pos == size - 1, "seek from the end gave %ld", (long)pos);
    EXPECT(MPI_ERR_ARG, MPI_File_seek(fh, -1, MPI_SEEK_SET));
    EXPECT(MPI_ERR_ARG, MPI_File_seek(fh, 0, 12345));

    /* Non-blocking forms, completed by MPI_Wait. */
    CALL(MPI_Barrier(MPI_COMM_WORLD));
    MPI_Request req;
    int ints[10], back[10];
    for (int i = 0; i < 10; i++)
        ints[i] = me * 100 + i;
    MPI_Offset at = (MPI_Offset)np * BLOCK + (MPI_Offset)me * sizeof ints;
    CALL(MPI_File_iwrite_at(fh, at, ints, 10, MPI_INT, &req));
    CALL(MPI_Wait(&req, &st));
    CHECK(req == MPI_REQUEST_NULL, "the request was not freed");
    CALL(MPI_Get_count(&st, MPI_INT, &count));
    CHECK(count == 10, "iwrite_at wrote %d ints", count);
    CALL(MPI_File_iread_at(fh, at, back, 10, MPI_INT, &req));
    CALL(MPI_Wait(&req, &st));
    CALL(MPI_Get_count(&st, MPI_INT, &count));
    CHECK(count == 10 && memcmp(ints, back, sizeof ints) == 0, "iread_at read %d ints, or others", count);

    /* Sizes: every rank gives the same one. */
    CALL(MPI_File_set_size(fh, 100));
    CALL(MPI_File_get_size(fh, &size));
    CHECK(size == 100, "set_size(100) left %ld", (long)size);
    CALL(MPI_File_preallocate(fh, 50));
    CALL(MPI_File_get_size(fh, &size));
    CHECK(size == 100, "preallocate shrank the file to %ld", (long)size);
    CALL(MPI_File_preallocate(fh, 4096));
    CALL(MPI_File_get_size(fh, &size));
    CHECK(size == 4096, "preallocate(4096) left %ld", (long)size);
    EXPECT(MPI_ERR_ARG, MPI_File_set_size(fh, -1));

    CALL(MPI_File_close(&fh));
    CHECK(fh == MPI_FILE_NULL, "close did not set MPI_FILE_NULL");
    CALL(MPI_Barrier(MPI_COMM_WORLD));
    if (me == 0)
        CALL(MPI_File_delete(path, MPI_INFO_NULL));
    CALL(MPI_Barrier(MPI_COMM_WORLD));
    EXPECT(MPI_ERR_NO_SUCH_FILE, MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh));
    EXPECT(MPI_ERR_NO_SUCH_FILE, MPI_File_delete(path, MPI_INFO_NULL));

    /* MPI_MODE_DELETE_ON_CLOSE removes the file at the last close. */
    CALL(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_WRONLY | MPI_MODE_DELETE_ON_CLOSE, MPI_INFO_NULL, &fh));
    CALL(MPI_File_write_at(fh, me, "x", 1, MPI_CHAR, MPI_STATUS_IGNORE));
    CALL(MPI_File_close(&fh));
    EXPECT(MPI_ERR_NO_SUCH_FILE, MPI_File_delete(path, MPI_INFO_NULL));
    free(mine);
    free(got);
    CALL(MPI_Finalize());
    return 0;
}

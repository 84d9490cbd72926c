/* ranks: 1 2 3 4 */
/*
 * MPI-IO views and collective access: each rank's view is a vector filetype that gives it
 * every np-th block of 3 ints; a collective write through the views is read back whole with
 * the default view and checked int for int, then read collectively through the view of the
 * next rank (another rank's part). Also get_view, get_byte_offset, get_type_extent,
 * MPI_SEEK_END under a view, split collectives, and the shared file pointer: write_ordered
 * (rank order), write_shared, read_shared, seek_shared, get_position_shared.
 */
#define TEST_NAME "io_views"
#include "testutil.h"

#define B 3   /* ints per block */
#define N 5   /* blocks per rank */

static MPI_Datatype view_of(int r, MPI_Offset *disp)
{
    /* N blocks of B ints, np * B ints apart, the rank's first block at r * B ints; resized
     * to the whole file's span so that the copies of the view tile it. */
    MPI_Datatype vec, v;
    CALL(MPI_Type_vector(N, B, np * B, MPI_INT, &vec));
    CALL(MPI_Type_create_resized(vec, 0, (MPI_Aint)N * np * B * sizeof(int), &v));
    CALL(MPI_Type_free(&vec));
    CALL(MPI_Type_commit(&v));
    *disp = (MPI_Offset)r * B * sizeof(int);
    return v;
}

int main(int argc, char **argv)
{
    TEST_INIT(&argc, &argv);
    char path[256];
    shared_tmp_path(path, sizeof path);
    MPI_File fh;
    MPI_Status st;
    int count;
    CALL(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE, MPI_INFO_NULL, &fh));

    MPI_Offset disp;
    MPI_Datatype ft = view_of(me, &disp);
    CALL(MPI_File_set_view(fh, disp, MPI_INT, ft, "native", MPI_INFO_NULL));
    int out[N * B], in[N * B];
    for (int i = 0; i < N * B; i++)
        out[i] = me * 1000 + i;
    CALL(MPI_File_write_all(fh, out, N * B, MPI_INT, &st));
    CALL(MPI_Get_count(&st, MPI_INT, &count));
    CHECK(count == N * B, "write_all wrote %d ints", count);
    MPI_Offset pos;
    CALL(MPI_File_get_position(fh, &pos));
    CHECK(pos == N * B, "the pointer is at %ld etypes", (long)pos);

    /* The view's geometry. */
    MPI_Offset byte;
    CALL(MPI_File_get_byte_offset(fh, B + 1, &byte));
    CHECK(byte == disp + (MPI_Offset)(np * B + 1) * 4, "byte offset of etype %d is %ld", B + 1, (long)byte);
    MPI_Aint ext;
    CALL(MPI_File_get_type_extent(fh, ft, &ext));
    CHECK(ext == (MPI_Aint)N * np * B * 4, "type extent %ld", (long)ext);
    MPI_Offset d2;
    MPI_Datatype e2, f2;
    char rep[MPI_MAX_DATAREP_STRING];
    CALL(MPI_File_get_view(fh, &d2, &e2, &f2, rep));
    CHECK(d2 == disp && e2 == MPI_INT && strcmp(rep, "native") == 0, "get_view: %ld %s", (long)d2, rep);
    int f2size;
    CALL(MPI_Type_size(f2, &f2size));
    CHECK(f2size == N * B * 4, "the view's filetype has size %d", f2size);
    CALL(MPI_Type_free(&f2));

    CALL(MPI_File_sync(fh));
    CALL(MPI_Barrier(MPI_COMM_WORLD));
    CALL(MPI_File_sync(fh));

    /* The whole file, plainly: int k of block j of rank r at (j * np + r) * B + k. */
    CALL(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
    int total = np * N * B;
    int *all = xmalloc(total * sizeof(int));
    CALL(MPI_File_read_at_all(fh, 0, all, total, MPI_INT, &st));
    CALL(MPI_Get_count(&st, MPI_INT, &count));
    CHECK(count == total, "read %d of %d ints", count, total);
    for (int j = 0; j < N; j++)
        for (int r = 0; r < np; r++)
            for (int k = 0; k < B; k++) {
                int got = all[(j * np + r) * B + k];
                CHECK(got == r * 1000 + j * B + k, "block %d of rank %d, int %d: %d", j, r, k, got);
            }

    /* The next rank's part through its view, collectively. */
    int next = (me + 1) % np;
    MPI_Datatype ft2 = view_of(next, &disp);
    CALL(MPI_File_set_view(fh, disp, MPI_INT, ft2, "native", MPI_INFO_NULL));
    CALL(MPI_File_read_all(fh, in, N * B, MPI_INT, &st));
    for (int i = 0; i < N * B; i++)
        CHECK(in[i] == next * 1000 + i, "rank %d's int %d read as %d", next, i, in[i]);
    /* From the end of the view: the last etype. */
    CALL(MPI_File_seek(fh, -1, MPI_SEEK_END));
    CALL(MPI_File_read(fh, in, 1, MPI_INT, &st));
    CHECK(in[0] == next * 1000 + N * B - 1, "the last int of the view is %d", in[0]);
    /* A split collective. */
    CALL(MPI_File_read_at_all_begin(fh, B, in, B, MPI_INT));
    CALL(MPI_File_read_at_all_end(fh, in, &st));
    CALL(MPI_Get_count(&st, MPI_INT, &count));
    CHECK(count == B && in[0] == next * 1000 + B, "split read: %d ints, first %d", count, in[0]);
    /* An _end without its _begin: MPI_ERR_IO, as MPICH has it. */
    EXPECT(MPI_ERR_IO, MPI_File_read_all_end(fh, in, &st));
    CALL(MPI_Type_free(&ft));
    CALL(MPI_Type_free(&ft2));

    /* The shared file pointer, over a fresh byte view. */
    CALL(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "native", MPI_INFO_NULL));
    CALL(MPI_File_get_position_shared(fh, &pos));
    CHECK(pos == 0, "the shared pointer starts at %ld", (long)pos);
    CALL(MPI_Barrier(MPI_COMM_WORLD));
    int two[2] = {me, me};
    CALL(MPI_File_write_ordered(fh, two, 2, MPI_INT, &st));
    CALL(MPI_File_get_position_shared(fh, &pos));
    CHECK(pos == 2 * np, "after write_ordered the shared pointer is at %ld", (long)pos);
    CALL(MPI_File_sync(fh));
    CALL(MPI_Barrier(MPI_COMM_WORLD));
    CALL(MPI_File_sync(fh));
    CALL(MPI_File_read_at_all(fh, 0, all, 2 * np, MPI_INT, &st));
    for (int i = 0; i < 2 * np; i++)
        CHECK(all[i] == i / 2, "write_ordered put %d at %d", all[i], i);
    CALL(MPI_Barrier(MPI_COMM_WORLD));
    CALL(MPI_File_write_shared(fh, &me, 1, MPI_INT, &st));
    CALL(MPI_File_sync(fh));
    CALL(MPI_Barrier(MPI_COMM_WORLD));
    CALL(MPI_File_sync(fh));
    CALL(MPI_File_get_position_shared(fh, &pos));
    CHECK(pos == 3 * np, "after write_shared the shared pointer is at %ld", (long)pos);
    CALL(MPI_File_read_at_all(fh, 2 * np, all, np, MPI_INT, &st));
    int seen = 0;
    for (int i = 0; i < np; i++)
        seen |= 1 << all[i];
    CHECK(seen == (1 << np) - 1, "write_shared lost a rank's int (%#x)", seen);
    CALL(MPI_File_seek_shared(fh, 0, MPI_SEEK_SET));
    CALL(MPI_File_read_ordered(fh, two, 2, MPI_INT, &st));
    CHECK(two[0] == me && two[1] == me, "read_ordered gave %d %d", two[0], two[1]);
    CALL(MPI_Barrier(MPI_COMM_WORLD));
    CALL(MPI_File_seek_shared(fh, 2 * np, MPI_SEEK_SET));
    int one;
    CALL(MPI_File_read_shared(fh, &one, 1, MPI_INT, &st));
    CHECK(one >= 0 && one < np, "read_shared gave %d", one);

    CALL(MPI_File_close(&fh));
    free(all);
    CALL(MPI_Finalize());
    return 0;
}

/* ranks: 1 2 3 */
/*
 * Data sieving of independent non-contiguous access: every rank's view is every
 * (np+1)-th int of the file from int `rank` (slot np of each stripe is nobody's and holds
 * -1). All ranks write their ints at once with MPI_File_write_at (sieved writes lock the
 * span they rewrite, so none loses another's ints), under each set of hints: the default,
 * sieving forced with a tiny write buffer, sieving off, and a write-only file (which cannot
 * sieve a write). Then each reads its own and the next rank's ints through the views
 * (sieved reads, also with a tiny read buffer), rank 0 reads the file plainly, and a read
 * past the end of the file stops there.
 */
#define TEST_NAME "io_sieve"
#include "testutil.h"

#define M 300  /* ints per rank */
#define VAL(k) ((int)((k) * 3 + 5))

static MPI_Datatype every(int slots)
{
    MPI_Datatype t;
    CALL(MPI_Type_create_resized(MPI_INT, 0, (MPI_Aint)slots * sizeof(int), &t));
    CALL(MPI_Type_commit(&t));
    return t;
}

static void pass(const char *path, int amode, const char *k1, const char *v1, const char *k2, const char *v2)
{
    char what[128];
    snprintf(what, sizeof what, "%s=%s %s=%s amode %#x", k1 ? k1 : "-", v1 ? v1 : "", k2 ? k2 : "-", v2 ? v2 : "", amode);
    int slots = np + 1, total = slots * M;
    MPI_Info info;
    CALL(MPI_Info_create(&info));
    if (k1) CALL(MPI_Info_set(info, k1, v1));
    if (k2) CALL(MPI_Info_set(info, k2, v2));
    MPI_File fh;
    CALL(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    CALL(MPI_File_set_size(fh, 0));
    if (me == 0) {
        int *minus = xmalloc(total * sizeof(int));
        for (int k = 0; k < total; k++)
            minus[k] = -1;
        CALL(MPI_File_write_at(fh, 0, minus, total, MPI_INT, MPI_STATUS_IGNORE));
        free(minus);
    }
    CALL(MPI_File_sync(fh));
    CALL(MPI_Barrier(MPI_COMM_WORLD));
    CALL(MPI_File_sync(fh));
    CALL(MPI_File_close(&fh));

    CALL(MPI_File_open(MPI_COMM_WORLD, path, amode, info, &fh));
    MPI_Datatype ft = every(slots);
    CALL(MPI_File_set_view(fh, (MPI_Offset)me * sizeof(int), MPI_INT, ft, "native", info));
    int out[M];
    for (int i = 0; i < M; i++)
        out[i] = VAL(i * slots + me);
    MPI_Status st;
    int count;
    /* In two calls: the second starts in the middle of the view. */
    CALL(MPI_File_write_at(fh, 0, out, M / 3, MPI_INT, &st));
    CALL(MPI_Get_count(&st, MPI_INT, &count));
    CHECK(count == M / 3, "%s: wrote %d ints", what, count);
    CALL(MPI_File_write_at(fh, M / 3, out + M / 3, M - M / 3, MPI_INT, &st));
    CALL(MPI_File_sync(fh));
    CALL(MPI_Barrier(MPI_COMM_WORLD));
    CALL(MPI_File_sync(fh));
    CALL(MPI_File_close(&fh));

    CALL(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY, info, &fh));
    int in[2 * M];
    for (int who = me; who < me + 2; who++) {
        int r = who % np;
        CALL(MPI_File_set_view(fh, (MPI_Offset)r * sizeof(int), MPI_INT, ft, "native", info));
        CALL(MPI_File_read_at(fh, 0, in, M, MPI_INT, &st));
        CALL(MPI_Get_count(&st, MPI_INT, &count));
        CHECK(count == M, "%s: read %d ints of rank %d", what, count, r);
        for (int i = 0; i < M; i++)
            CHECK(in[i] == VAL(i * slots + r), "%s: int %d of rank %d is %d", what, i, r, in[i]);
    }
    /* Past the end: the hole slot's view ends with the file's last int. */
    CALL(MPI_File_set_view(fh, (MPI_Offset)np * sizeof(int), MPI_INT, ft, "native", info));
    CALL(MPI_File_read_at(fh, M - 5, in, 2 * M, MPI_INT, &st));
    CALL(MPI_Get_count(&st, MPI_INT, &count));
    CHECK(count == 5, "%s: read %d ints past the end, not 5", what, count);
    for (int i = 0; i < 5; i++)
        CHECK(in[i] == -1, "%s: the hole's int %d is %d", what, i, in[i]);
    CALL(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "native", MPI_INFO_NULL));
    if (me == 0) {
        int *all = xmalloc(total * sizeof(int));
        CALL(MPI_File_read_at(fh, 0, all, total, MPI_INT, &st));
        for (int k = 0; k < total; k++)
            CHECK(all[k] == (k % slots == np ? -1 : VAL(k)), "%s: int %d is %d", what, k, all[k]);
        free(all);
    }
    CALL(MPI_File_close(&fh));
    CALL(MPI_Type_free(&ft));
    CALL(MPI_Info_free(&info));
}

int main(int argc, char **argv)
{
    TEST_INIT(&argc, &argv);
    char path[256];
    shared_tmp_path(path, sizeof path);
    int rw = MPI_MODE_RDWR;
    pass(path, rw, NULL, NULL, NULL, NULL);
    pass(path, rw, "romio_ds_write", "enable", "ind_wr_buffer_size", "40");
    pass(path, rw, "romio_ds_read", "enable", "ind_rd_buffer_size", "28");
    pass(path, rw, "romio_ds_write", "disable", "romio_ds_read", "disable");
    pass(path, MPI_MODE_WRONLY, "romio_ds_write", "enable", NULL, NULL);
    CALL(MPI_Barrier(MPI_COMM_WORLD));
    if (me == 0)
        CALL(MPI_File_delete(path, MPI_INFO_NULL));
    CALL(MPI_Finalize());
    return 0;
}

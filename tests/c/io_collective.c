/* ranks: 1 2 3 4 */
/*
 * Two-phase collective I/O: every rank's view is every np-th block of B ints of the file,
 * interleaved with the others'; the int at global index k holds VAL(k), so any
 * decomposition can check what it reads. For each set of hints (the default, cb_nodes=1,
 * one aggregator per rank with a small buffer and many rounds, collective buffering
 * forced on, and off, and different hints on different ranks) a collective write through the views is read back whole by rank 0 and
 * collectively through the views, then by a smaller communicator with another block size
 * (another rank count). Holes: a view that leaves every (np+1)-th block alone keeps the
 * bytes written there before. Reads past the end of the file, a non-contiguous memory type,
 * the split and non-blocking collective forms.
 */
#define TEST_NAME "io_collective"
#include "testutil.h"

#define B 3    /* ints per block */
#define N 40   /* blocks per rank */
#define VAL(k) ((int)((k) * 7 + 1))

/* Every slots-th block of b ints starting with block `slot`: n blocks. */
static MPI_Datatype strided(int n, int b, int slots, int slot, MPI_Offset *disp)
{
    MPI_Datatype vec, v;
    CALL(MPI_Type_vector(n, b, slots * b, MPI_INT, &vec));
    CALL(MPI_Type_create_resized(vec, 0, (MPI_Aint)n * slots * b * sizeof(int), &v));
    CALL(MPI_Type_free(&vec));
    CALL(MPI_Type_commit(&v));
    *disp = (MPI_Offset)slot * b * sizeof(int);
    return v;
}

/* The ints of rank r's blocks in a view of every `slots`-th block of b ints. */
static void fill(int *v, int n, int b, int slots, int slot)
{
    for (int j = 0; j < n; j++)
        for (int k = 0; k < b; k++)
            v[j * b + k] = VAL((j * slots + slot) * b + k);
}

static void check_view_read(MPI_File fh, MPI_Comm comm, int n, int b, const char *what)
{
    int r, p;
    MPI_Comm_rank(comm, &r);
    MPI_Comm_size(comm, &p);
    MPI_Offset disp;
    MPI_Datatype ft = strided(n, b, p, r, &disp);
    CALL(MPI_File_set_view(fh, disp, MPI_INT, ft, "native", MPI_INFO_NULL));
    int *in = xmalloc(n * b * sizeof(int)), *want = xmalloc(n * b * sizeof(int));
    fill(want, n, b, p, r);
    MPI_Status st;
    int count;
    CALL(MPI_File_read_at_all(fh, 0, in, n * b, MPI_INT, &st));
    CALL(MPI_Get_count(&st, MPI_INT, &count));
    CHECK(count == n * b, "%s: read %d of %d ints", what, count, n * b);
    for (int i = 0; i < n * b; i++)
        CHECK(in[i] == want[i], "%s: rank %d of %d, int %d is %d, not %d", what, r, p, i, in[i], want[i]);
    CALL(MPI_Type_free(&ft));
    free(in);
    free(want);
}

static void round_trip(const char *path, const char *k1, const char *v1, const char *k2, const char *v2, const char *k3, const char *v3)
{
    char what[160];
    snprintf(what, sizeof what, "%s=%s %s=%s %s=%s", k1 ? k1 : "-", v1 ? v1 : "", k2 ? k2 : "-", v2 ? v2 : "", k3 ? k3 : "-", v3 ? v3 : "");
    MPI_Info info;
    CALL(MPI_Info_create(&info));
    if (k1) CALL(MPI_Info_set(info, k1, v1));
    if (k2) CALL(MPI_Info_set(info, k2, v2));
    if (k3) CALL(MPI_Info_set(info, k3, v3));
    MPI_File fh;
    CALL(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh));
    CALL(MPI_File_set_size(fh, 0));
    MPI_Offset disp;
    MPI_Datatype ft = strided(N, B, np, me, &disp);
    CALL(MPI_File_set_view(fh, disp, MPI_INT, ft, "native", info));
    int out[N * B];
    fill(out, N, B, np, me);
    MPI_Status st;
    int count;
    /* Half through the individual pointer, half at an explicit offset. */
    CALL(MPI_File_write_all(fh, out, N * B / 2, MPI_INT, &st));
    CALL(MPI_Get_count(&st, MPI_INT, &count));
    CHECK(count == N * B / 2, "%s: write_all wrote %d ints", what, count);
    MPI_Offset pos;
    CALL(MPI_File_get_position(fh, &pos));
    CHECK(pos == N * B / 2, "%s: the pointer is at %ld", what, (long)pos);
    CALL(MPI_File_write_at_all(fh, N * B / 2, out + N * B / 2, N * B - N * B / 2, MPI_INT, &st));
    CALL(MPI_File_sync(fh));
    CALL(MPI_Barrier(MPI_COMM_WORLD));
    CALL(MPI_File_sync(fh));

    /* Rank 0 reads the whole file plainly. */
    MPI_Offset size;
    CALL(MPI_File_get_size(fh, &size));
    CHECK(size == (MPI_Offset)np * N * B * 4, "%s: the file has %ld bytes", what, (long)size);
    if (me == 0) {
        int total = np * N * B;
        int *all = xmalloc(total * sizeof(int));
        CALL(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
        CALL(MPI_File_read_at(fh, 0, all, total * 4, MPI_BYTE, &st));
        for (int k = 0; k < total; k++)
            CHECK(all[k] == VAL(k), "%s: int %d is %d", what, k, all[k]);
        free(all);
    } else {
        CALL(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
    }
    check_view_read(fh, MPI_COMM_WORLD, N, B, what);
    CALL(MPI_Type_free(&ft));
    CALL(MPI_File_close(&fh));
    CALL(MPI_Info_free(&info));
}

int main(int argc, char **argv)
{
    TEST_INIT(&argc, &argv);
    char path[256];
    shared_tmp_path(path, sizeof path);

    round_trip(path, NULL, NULL, NULL, NULL, NULL, NULL);
    round_trip(path, "cb_nodes", "1", NULL, NULL, NULL, NULL);
    char nodes[16];
    snprintf(nodes, sizeof nodes, "%d", np);
    round_trip(path, "cb_nodes", nodes, "cb_buffer_size", "100", "romio_cb_read", "enable");
    round_trip(path, "romio_cb_write", "enable", "romio_cb_read", "enable", "cb_buffer_size", "5000");
    round_trip(path, "romio_cb_write", "disable", "romio_cb_read", "disable", NULL, NULL);
    /* Members given different hints all take rank 0's: no hang, the same bytes. */
    round_trip(path, "romio_cb_write", me == 0 ? "enable" : "disable", "romio_cb_read", me == 0 ? "disable" : "enable", "cb_nodes", me == 0 ? "1" : "2");
    round_trip(path, "romio_cb_write", me == 0 ? "disable" : "enable", "romio_cb_read", me == 0 ? "enable" : "disable", "cb_buffer_size", me == 0 ? "64" : "1000");

    /* The hints as the file reports them. */
    MPI_File fh;
    MPI_Info info, got;
    CALL(MPI_Info_create(&info));
    CALL(MPI_Info_set(info, "cb_nodes", "1"));
    CALL(MPI_Info_set(info, "romio_cb_write", "enable"));
    CALL(MPI_Info_set(info, "romio_cb_read", "enable"));
    CALL(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDWR, info, &fh));
    CALL(MPI_File_get_info(fh, &got));
    char v[MPI_MAX_INFO_VAL + 1];
    int flag;
    CALL(MPI_Info_get(got, "cb_nodes", MPI_MAX_INFO_VAL, v, &flag));
    CHECK(flag && strcmp(v, "1") == 0, "cb_nodes reads %s", flag ? v : "(none)");
    CALL(MPI_Info_get(got, "ind_rd_buffer_size", MPI_MAX_INFO_VAL, v, &flag));
    CHECK(flag, "ind_rd_buffer_size is reported");
    CALL(MPI_Info_free(&got));

    /* Another rank count: the first np-1 ranks (or the only one) read with blocks of 5. */
    MPI_Comm sub;
    int color = (np == 1 || me < np - 1) ? 0 : MPI_UNDEFINED;
    CALL(MPI_Comm_split(MPI_COMM_WORLD, color, me, &sub));
    if (sub != MPI_COMM_NULL) {
        int p;
        MPI_Comm_size(sub, &p);
        MPI_File f2;
        CALL(MPI_File_open(sub, path, MPI_MODE_RDONLY, info, &f2));
        int b2 = 5, n2 = np * N * B / (b2 * p);
        check_view_read(f2, sub, n2, b2, "another rank count");
        CALL(MPI_File_close(&f2));
        CALL(MPI_Comm_free(&sub));
    }
    CALL(MPI_Barrier(MPI_COMM_WORLD));

    /* Holes: every rank's blocks leave slot np of every np+1 alone; they hold -1 before and after. */
    CALL(MPI_File_set_size(fh, 0));
    int slots = np + 1, total = slots * N * B;
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
    MPI_Offset disp;
    MPI_Datatype ft = strided(N, B, slots, me, &disp);
    CALL(MPI_File_set_view(fh, disp, MPI_INT, ft, "native", MPI_INFO_NULL));
    int out[N * B];
    fill(out, N, B, slots, me);
    /* Split collective form. */
    CALL(MPI_File_write_all_begin(fh, out, N * B, MPI_INT));
    CALL(MPI_File_write_all_end(fh, out, MPI_STATUS_IGNORE));
    CALL(MPI_File_sync(fh));
    CALL(MPI_Barrier(MPI_COMM_WORLD));
    CALL(MPI_File_sync(fh));
    int *all = xmalloc(total * sizeof(int));
    CALL(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "native", MPI_INFO_NULL));
    MPI_Request req;
    MPI_Status st;
    CALL(MPI_File_iread_at_all(fh, 0, all, total, MPI_INT, &req));
    CALL(MPI_Wait(&req, &st));
    for (int k = 0; k < total; k++) {
        int slot = (k / B) % slots;
        int want = slot < np ? VAL(k) : -1;
        CHECK(all[k] == want, "holes: int %d (slot %d) is %d, not %d", k, slot, all[k], want);
    }

    /* A collective read past the end: each rank asks for its view's blocks and twice as many. */
    CALL(MPI_File_set_view(fh, disp, MPI_INT, ft, "native", MPI_INFO_NULL));
    int *in = xmalloc(2 * N * B * sizeof(int));
    CALL(MPI_File_read_at_all(fh, 0, in, 2 * N * B, MPI_INT, &st));
    int count;
    CALL(MPI_Get_count(&st, MPI_INT, &count));
    CHECK(count == N * B, "read past the end: %d ints, not %d", count, N * B);
    for (int i = 0; i < N * B; i++)
        CHECK(in[i] == out[i], "read past the end: int %d is %d", i, in[i]);

    /* A non-contiguous memory type: the ints of the view into every other int of memory. */
    MPI_Datatype every2;
    CALL(MPI_Type_vector(N * B, 1, 2, MPI_INT, &every2));
    CALL(MPI_Type_commit(&every2));
    for (int i = 0; i < 2 * N * B; i++)
        in[i] = -7;
    CALL(MPI_File_read_at_all(fh, 0, in, 1, every2, &st));
    for (int i = 0; i < N * B; i++)
        CHECK(in[2 * i] == out[i] && in[2 * i + 1] == -7, "strided memory: int %d is %d", i, in[2 * i]);
    CALL(MPI_Type_free(&every2));
    CALL(MPI_Type_free(&ft));
    free(in);
    free(all);
    CALL(MPI_Info_free(&info));
    CALL(MPI_File_close(&fh));
    CALL(MPI_Barrier(MPI_COMM_WORLD));
    if (me == 0)
        CALL(MPI_File_delete(path, MPI_INFO_NULL));
    CALL(MPI_Finalize());
    return 0;
}

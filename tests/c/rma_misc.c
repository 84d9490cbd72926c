/* ranks: 1 2 4 */
/*
 * Window objects: dynamic windows (attach, detach, remote addresses),
 * names, info hints, the group, error handlers (MPI_Win_create_errhandler,
 * set/get, MPI_Win_call_errhandler), user attributes (keyvals and delete
 * callbacks) and MPI_Win_sync.
 */
#define TEST_NAME "rma_misc"
#include "testutil.h"

#include <string.h>

static int handler_calls = 0, handler_code = 0;
static MPI_Win handler_win = MPI_WIN_NULL;

static int deletes = 0;
static void *deleted_value = NULL;

static int on_delete(MPI_Win win, int key, void *val, void *extra)
{
    (void)win, (void)key, (void)extra;
    deletes++;
    deleted_value = val;
    return MPI_SUCCESS;
}

static void on_error(MPI_Win *win, int *code, ...)
{
    handler_calls++;
    handler_code = *code;
    handler_win = *win;
}

int main(int argc, char **argv)
{
    TEST_INIT(&argc, &argv);
    int right = (me + 1) % np, left = (me + np - 1) % np;

    /* A window of MPI_COMM_SELF: every request goes to this very rank, which must serve
     * it at once (a message to self wakes nobody: a wait that slept before looking would
     * take a quarter second per call). */
    long selfmem = 0, one = 1;
    MPI_Win self;
    CALL(MPI_Win_create(&selfmem, sizeof selfmem, sizeof selfmem, MPI_INFO_NULL, MPI_COMM_SELF, &self));
    double t0 = MPI_Wtime();
    for (int i = 0; i < 200; i++) {
        CALL(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, self));
        CALL(MPI_Accumulate(&one, 1, MPI_LONG, 0, 0, 1, MPI_LONG, MPI_SUM, self));
        CALL(MPI_Win_unlock(0, self));
    }
    double took = MPI_Wtime() - t0;
    CALL(MPI_Win_free(&self));
    CHECK(selfmem == 200, "self window: %ld", selfmem);
#ifdef FERRY_MPI_H
    CHECK(took < 10.0, "200 lock/accumulate/unlock on a self window took %.1f s", took);
#else
    (void)took;
#endif


    /* Dynamic window: each rank attaches a buffer and publishes its address. */
    MPI_Win dyn;
    CALL(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &dyn));
    int *buf = xmalloc(4 * sizeof(int));
    for (int i = 0; i < 4; i++)
        buf[i] = -1;
    CALL(MPI_Win_attach(dyn, buf, 4 * sizeof(int)));
    MPI_Aint mine, *addrs = xmalloc(np * sizeof(MPI_Aint));
    CALL(MPI_Get_address(buf, &mine));
    CALL(MPI_Allgather(&mine, 1, MPI_AINT, addrs, 1, MPI_AINT, MPI_COMM_WORLD));
    int *flavor, flag;
    CALL(MPI_Win_get_attr(dyn, MPI_WIN_CREATE_FLAVOR, &flavor, &flag));
    CHECK(flag && *flavor == MPI_WIN_FLAVOR_DYNAMIC, "flavor %d", *flavor);
    CALL(MPI_Win_fence(0, dyn));
    int v = me + 10;
    CALL(MPI_Put(&v, 1, MPI_INT, right, MPI_Aint_add(addrs[right], 2 * sizeof(int)), 1, MPI_INT, dyn));
    CALL(MPI_Win_fence(0, dyn));
    CHECK(buf[2] == left + 10 && buf[0] == -1, "dynamic put: buf = %d %d %d %d", buf[0], buf[1], buf[2], buf[3]);
    int got = -1;
    CALL(MPI_Win_lock(MPI_LOCK_SHARED, right, 0, dyn));
    CALL(MPI_Get(&got, 1, MPI_INT, right, MPI_Aint_add(addrs[right], 2 * sizeof(int)), 1, MPI_INT, dyn));
    CALL(MPI_Win_unlock(right, dyn));
    CHECK(got == me + 10, "dynamic get: %d", got);
    CALL(MPI_Win_fence(0, dyn));
    CALL(MPI_Win_detach(dyn, buf));
    CALL(MPI_Win_set_errhandler(dyn, MPI_ERRORS_RETURN));
#ifdef FERRY_MPI_H
    /* MPICH does not check that the memory is attached. */
    EXPECT(MPI_ERR_RMA_ATTACH, MPI_Win_detach(dyn, buf));
#endif
    CALL(MPI_Win_free(&dyn));

    /* Names, info, group. */
    MPI_Win win;
    int mem[4] = { 0 };
    MPI_Info info;
    CALL(MPI_Info_create(&info));
    CALL(MPI_Info_set(info, "no_locks", "false"));
    CALL(MPI_Win_create(mem, sizeof mem, 1, info, MPI_COMM_WORLD, &win));
    CALL(MPI_Info_free(&info));
    char name[MPI_MAX_OBJECT_NAME];
    int len = -1;
    CALL(MPI_Win_get_name(win, name, &len));
    CHECK(len == 0 && name[0] == 0, "a new window's name is \"%s\"", name);
    CALL(MPI_Win_set_name(win, "halo window"));
    CALL(MPI_Win_get_name(win, name, &len));
    CHECK(len == 11 && strcmp(name, "halo window") == 0, "name \"%s\" (%d)", name, len);
    MPI_Info used;
    CALL(MPI_Win_get_info(win, &used));
    CALL(MPI_Info_free(&used));
    MPI_Group g, world;
    int cmp;
    CALL(MPI_Win_get_group(win, &g));
    CALL(MPI_Comm_group(MPI_COMM_WORLD, &world));
    CALL(MPI_Group_compare(g, world, &cmp));
    CHECK(cmp == MPI_IDENT, "window group compares %d with the world's", cmp);
    CALL(MPI_Group_free(&g));
    CALL(MPI_Group_free(&world));

    /* Error handlers. */
    MPI_Errhandler eh, back;
    CALL(MPI_Win_create_errhandler(on_error, &eh));
    CALL(MPI_Win_set_errhandler(win, eh));
    CALL(MPI_Win_get_errhandler(win, &back));
    CHECK(back == eh, "get_errhandler gave another handler");
    CALL(MPI_Errhandler_free(&back));
    int rc = MPI_Win_lock(MPI_LOCK_SHARED, np + 5, 0, win);
    CHECK(rc != MPI_SUCCESS && handler_calls == 1 && handler_win == win, "bad rank: rc %d, %d handler calls", rc, handler_calls);
    int cls;
    CALL(MPI_Error_class(handler_code, &cls));
    CHECK(cls == MPI_ERR_RANK, "handler saw class %d", cls);
    CALL(MPI_Win_call_errhandler(win, MPI_ERR_OTHER));
    CHECK(handler_calls == 2 && handler_code == MPI_ERR_OTHER, "call_errhandler: %d calls, code %d", handler_calls, handler_code);
    CALL(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    CALL(MPI_Errhandler_free(&eh));
    EXPECT(MPI_ERR_RMA_FLAVOR, MPI_Win_attach(win, mem, sizeof mem));

    /* MPI_Win_sync inside a lock_all epoch, then a put seen by the target after a barrier. */
    CALL(MPI_Win_lock_all(0, win));
    int x = 40 + me;
    CALL(MPI_Put(&x, 1, MPI_INT, right, 0, 1, MPI_INT, win));
    CALL(MPI_Win_flush(right, win));
    CALL(MPI_Barrier(MPI_COMM_WORLD));
    CALL(MPI_Win_sync(win));
    CHECK(mem[0] == 40 + left, "after flush, barrier and sync: %d", mem[0]);
    CALL(MPI_Win_unlock_all(win));

    /* User attributes: delete callbacks on MPI_Win_delete_attr and on MPI_Win_free. */
    int key, val1 = 1, val2 = 2, *back_val;
    CALL(MPI_Win_create_keyval(MPI_WIN_NULL_COPY_FN, on_delete, &key, NULL));
    CALL(MPI_Win_set_attr(win, key, &val1));
    CALL(MPI_Win_get_attr(win, key, &back_val, &flag));
    CHECK(flag && back_val == &val1, "user attribute: flag %d", flag);
    CALL(MPI_Win_delete_attr(win, key));
    CHECK(deletes == 1 && deleted_value == &val1, "delete_attr: %d deletes", deletes);
    CALL(MPI_Win_get_attr(win, key, &back_val, &flag));
    CHECK(!flag, "a deleted attribute is still there");
    CALL(MPI_Win_set_attr(win, key, &val2));
    CALL(MPI_Win_free_keyval(&key));
    CHECK(key == MPI_KEYVAL_INVALID, "free_keyval left the key");
#ifdef FERRY_MPI_H
    EXPECT(MPI_ERR_KEYVAL, MPI_Win_set_attr(win, MPI_WIN_BASE, &val1));
#endif

    CALL(MPI_Win_free(&win));
    CHECK(deletes == 2 && deleted_value == &val2, "MPI_Win_free: %d deletes", deletes);
    free(buf);
    free(addrs);
    CALL(MPI_Finalize());
    return 0;
}

/* ranks: 1 3 */
/*
 * Attributes and keyvals on communicators and datatypes: set/get/delete,
 * copy callbacks on MPI_Comm_dup / MPI_Type_dup (MPI_*_DUP_FN, NULL_COPY_FN
 * and a user function that declines or fails), delete callbacks on free,
 * delete_attr and set-over, newest attribute deleted first; a freed keyval
 * keeps working for the attributes that use it; the predefined attributes
 * of MPI_COMM_WORLD; error classes with MPI_ERRORS_RETURN (invalid keyval,
 * freed keyval, keyval of the other kind, MPI_COMM_NULL, absent attribute).
 */
#define TEST_NAME "attrs"
#include "testutil.h"

/* The delete callbacks' log: the values they saw, in order. */
static long deleted[16];
static int ndeleted = 0;
static int copies = 0;

static int log_delete(MPI_Comm comm, int keyval, void *val, void *extra)
{
    (void)comm;
    (void)keyval;
    CHECK(extra == (void *)&deleted, "delete callback got extra_state %p", extra);
    if (ndeleted < 16)
        deleted[ndeleted++] = (long)val;
    return MPI_SUCCESS;
}

static int type_delete(MPI_Datatype t, int keyval, void *val, void *extra)
{
    (void)t;
    (void)keyval;
    (void)extra;
    if (ndeleted < 16)
        deleted[ndeleted++] = (long)val;
    return MPI_SUCCESS;
}

/* Copies odd values times ten, declines even ones. */
static int odd_copy(MPI_Comm comm, int keyval, void *extra, void *in, void *out, int *flag)
{
    (void)comm;
    (void)keyval;
    (void)extra;
    copies++;
    if ((long)in % 2 == 0) {
        *flag = 0;
        return MPI_SUCCESS;
    }
    *(void **)out = (void *)((long)in * 10);
    *flag = 1;
    return MPI_SUCCESS;
}

static int failing_copy(MPI_Comm comm, int keyval, void *extra, void *in, void *out, int *flag)
{
    (void)comm;
    (void)keyval;
    (void)extra;
    (void)in;
    (void)out;
    *flag = 0;
    return MPI_ERR_OTHER;
}

static int failing_delete(MPI_Comm comm, int keyval, void *val, void *extra)
{
    (void)comm;
    (void)keyval;
    (void)val;
    (void)extra;
    return MPI_ERR_OTHER;
}

static long get(MPI_Comm comm, int key, int *flag)
{
    void *v = NULL;
    CALL(MPI_Comm_get_attr(comm, key, &v, flag));
    return (long)v;
}

static int class_of(int rc)
{
    int c;
    MPI_Error_class(rc, &c);
    return c;
}

static void predefined(void)
{
    int *v, flag;
    CALL(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &v, &flag));
    CHECK(flag && *v >= 32767, "MPI_TAG_UB: flag %d value %d", flag, flag ? *v : 0);
    int tag_ub = *v;
    /* The largest tag works. */
    int x = me, y = -1;
    CALL(MPI_Sendrecv(&x, 1, MPI_INT, me, tag_ub, &y, 1, MPI_INT, me, tag_ub, MPI_COMM_WORLD,
                      MPI_STATUS_IGNORE));
    CHECK(y == me, "self-message with tag MPI_TAG_UB got %d", y);
    CALL(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_HOST, &v, &flag));
    CHECK(flag && (*v == MPI_PROC_NULL || (*v >= 0 && *v < np)), "MPI_HOST %d", *v);
    CALL(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_IO, &v, &flag));
    CHECK(flag && (*v == MPI_ANY_SOURCE || *v == MPI_PROC_NULL || (*v >= 0 && *v < np)),
          "MPI_IO %d", *v);
    CALL(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_WTIME_IS_GLOBAL, &v, &flag));
    CHECK(!flag || *v == 0 || *v == 1, "MPI_WTIME_IS_GLOBAL %d", *v);
    CALL(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_UNIVERSE_SIZE, &v, &flag));
    CHECK(!flag || *v >= np, "MPI_UNIVERSE_SIZE %d < %d ranks", *v, np);
    CALL(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_APPNUM, &v, &flag));
    CHECK(!flag || *v >= 0, "MPI_APPNUM %d", *v);
    CALL(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_LASTUSEDCODE, &v, &flag));
    CHECK(flag && *v >= MPI_ERR_LASTCODE, "MPI_LASTUSEDCODE %d", *v);
    /* The old name. */
    CALL(MPI_Attr_get(MPI_COMM_WORLD, MPI_TAG_UB, &v, &flag));
    CHECK(flag && *v == tag_ub, "MPI_Attr_get(MPI_TAG_UB) %d", *v);
    /* Every communicator answers for them, as MPICH's and Open MPI's do: a library that
     * asks its own duplicate for MPI_TAG_UB gets it. */
    MPI_Comm dup;
    CALL(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    MPI_Comm comms[2] = { dup, MPI_COMM_SELF };
    for (int c = 0; c < 2; c++) {
        flag = 0;
        CALL(MPI_Comm_get_attr(comms[c], MPI_TAG_UB, &v, &flag));
        CHECK(flag && *v == tag_ub, "MPI_TAG_UB on %s: flag %d", c ? "MPI_COMM_SELF" : "a dup", flag);
    }
    CALL(MPI_Comm_free(&dup));
}

static void comm_attrs(void)
{
    int k1, k2, k3, kfail, flag;
    CALL(MPI_Comm_create_keyval(MPI_COMM_DUP_FN, log_delete, &k1, &deleted));
    CALL(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, log_delete, &k2, &deleted));
    CALL(MPI_Comm_create_keyval(odd_copy, log_delete, &k3, &deleted));
    CHECK(k1 != k2 && k2 != k3 && k1 != MPI_KEYVAL_INVALID, "keyvals %d %d %d", k1, k2, k3);

    MPI_Comm c;
    CALL(MPI_Comm_dup(MPI_COMM_WORLD, &c));
    get(c, k1, &flag);
    CHECK(!flag, "an attribute that was never set is found");
    CALL(MPI_Comm_set_attr(c, k1, (void *)11L));
    CALL(MPI_Comm_set_attr(c, k2, (void *)22L));
    CALL(MPI_Comm_set_attr(c, k3, (void *)33L));
    CHECK(get(c, k2, &flag) == 22 && flag, "k2 value");

    /* Set-over deletes the old value first. */
    ndeleted = 0;
    CALL(MPI_Comm_set_attr(c, k2, (void *)24L));
    CHECK(ndeleted == 1 && deleted[0] == 22, "set-over: %d deletes, first %ld", ndeleted, deleted[0]);
    CHECK(get(c, k2, &flag) == 24 && flag, "k2 after set-over");

    /* Dup: DUP_FN copies, NULL_COPY_FN does not, odd_copy copies 33 as 330. */
    MPI_Comm d;
    copies = 0;
    CALL(MPI_Comm_dup(c, &d));
    CHECK(copies == 1, "odd_copy ran %d times", copies);
    CHECK(get(d, k1, &flag) == 11 && flag, "k1 not copied by MPI_COMM_DUP_FN");
    get(d, k2, &flag);
    CHECK(!flag, "k2 copied despite MPI_COMM_NULL_COPY_FN");
    CHECK(get(d, k3, &flag) == 330 && flag, "k3 copy");
    /* A declining copy callback. */
    CALL(MPI_Comm_set_attr(c, k3, (void *)34L));
    MPI_Comm e;
    CALL(MPI_Comm_dup(c, &e));
    get(e, k3, &flag);
    CHECK(!flag, "k3 copied although the callback declined");
    CALL(MPI_Comm_free(&e));

    /* delete_attr runs the callback once. */
    ndeleted = 0;
    CALL(MPI_Comm_delete_attr(d, k1));
    CHECK(ndeleted == 1 && deleted[0] == 11, "delete_attr: %d deletes", ndeleted);
    get(d, k1, &flag);
    CHECK(!flag, "k1 still there after delete_attr");

    /* Freeing the keyval: the handle becomes invalid, its attributes stay. */
    int k3copy = k3;
    CALL(MPI_Comm_free_keyval(&k3));
    CHECK(k3 == MPI_KEYVAL_INVALID, "free_keyval left %d", k3);
    /* A copy of the handle still reads the attributes the keyval names, and freeing it again
     * while they are there (MPICH allows it; a delete callback may do so) changes nothing. */
    get(c, k3copy, &flag);
    CHECK(flag, "the attribute of a freed keyval is gone");
    CALL(MPI_Comm_free_keyval(&k3copy));
    CHECK(k3copy == MPI_KEYVAL_INVALID, "second free_keyval left %d", k3copy);
    /* And deletes it: an attribute of a freed keyval on MPI_COMM_WORLD, which is never freed. */
    int k4, k4copy;
    CALL(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, log_delete, &k4, &deleted));
    CALL(MPI_Comm_set_attr(MPI_COMM_WORLD, k4, (void *)44L));
    k4copy = k4;
    CALL(MPI_Comm_free_keyval(&k4));
    ndeleted = 0;
    CALL(MPI_Comm_delete_attr(MPI_COMM_WORLD, k4copy));
    CHECK(ndeleted == 1 && deleted[0] == 44, "delete_attr with a freed keyval: %d deletes", ndeleted);

    /* Free: newest first (k3 was set last, then k2 set-over keeps k2's place: k3, k2, k1). */
    ndeleted = 0;
    CALL(MPI_Comm_free(&c));
    CHECK(ndeleted == 3, "free ran %d delete callbacks", ndeleted);
    CHECK(deleted[0] == 34 && deleted[1] == 24 && deleted[2] == 11,
          "delete order %ld %ld %ld (want 34 24 11)", deleted[0], deleted[1], deleted[2]);
    ndeleted = 0;
    CALL(MPI_Comm_free(&d));
    CHECK(ndeleted == 1 && deleted[0] == 330, "d's free: %d deletes, %ld", ndeleted, deleted[0]);

    /* Errors, returned. */
    CALL(MPI_Comm_dup(MPI_COMM_WORLD, &c));
    CALL(MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN));
    CALL(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    void *v;
    int rc = MPI_Comm_set_attr(c, MPI_KEYVAL_INVALID, (void *)1L);
    CHECK(class_of(rc) == MPI_ERR_KEYVAL, "set with MPI_KEYVAL_INVALID: class %d", class_of(rc));
    rc = MPI_Comm_get_attr(c, k3, &v, &flag); /* k3 now holds MPI_KEYVAL_INVALID */
    CHECK(class_of(rc) == MPI_ERR_KEYVAL, "get with a freed keyval: class %d", class_of(rc));
    rc = MPI_Comm_free_keyval(&k3);
    CHECK(class_of(rc) == MPI_ERR_KEYVAL, "double free_keyval: class %d", class_of(rc));
    rc = MPI_Comm_set_attr(MPI_COMM_NULL, k1, (void *)1L);
    CHECK(class_of(rc) == MPI_ERR_COMM, "set on MPI_COMM_NULL: class %d", class_of(rc));
    rc = MPI_Comm_get_attr(MPI_COMM_NULL, k1, &v, &flag);
    CHECK(class_of(rc) == MPI_ERR_COMM, "get on MPI_COMM_NULL: class %d", class_of(rc));
    int tk;
    CALL(MPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, MPI_TYPE_NULL_DELETE_FN, &tk, NULL));
    rc = MPI_Comm_set_attr(c, tk, (void *)1L);
    CHECK(class_of(rc) == MPI_ERR_KEYVAL, "a datatype keyval on a communicator: class %d",
          class_of(rc));
    CALL(MPI_Type_free_keyval(&tk));

    /* Callback errors propagate: copy on dup, delete on delete_attr and free. */
    CALL(MPI_Comm_create_keyval(failing_copy, failing_delete, &kfail, NULL));
    CALL(MPI_Comm_set_attr(c, kfail, (void *)5L));
    MPI_Comm f = MPI_COMM_NULL;
    rc = MPI_Comm_dup(c, &f);
    CHECK(rc != MPI_SUCCESS, "MPI_Comm_dup succeeded though a copy callback failed");
    rc = MPI_Comm_delete_attr(c, kfail);
    CHECK(rc != MPI_SUCCESS, "MPI_Comm_delete_attr succeeded though the callback failed");
    rc = MPI_Comm_set_attr(c, kfail, (void *)6L);
    CHECK(rc != MPI_SUCCESS, "set-over succeeded though the delete callback failed");
    CHECK(get(c, kfail, &flag) == 5 && flag, "the old value is gone after a failed set-over");
    CALL(MPI_Comm_free_keyval(&kfail));
    CALL(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
    /* c keeps the failing attribute: it is never freed (MPI_Finalize would fail). */
    (void)c;
    CALL(MPI_Comm_free_keyval(&k1));
    CALL(MPI_Comm_free_keyval(&k2));
}

static void type_attrs(void)
{
    int tk, flag;
    MPI_Datatype t, u;
    CALL(MPI_Type_create_keyval(MPI_TYPE_DUP_FN, type_delete, &tk, NULL));
    CALL(MPI_Type_contiguous(2, MPI_INT, &t));
    CALL(MPI_Type_commit(&t));
    CALL(MPI_Type_set_attr(t, tk, (void *)7L));
    CALL(MPI_Type_dup(t, &u));
    void *v = NULL;
    CALL(MPI_Type_get_attr(u, tk, &v, &flag));
    CHECK(flag && (long)v == 7, "type attribute not copied by MPI_TYPE_DUP_FN");
    ndeleted = 0;
    CALL(MPI_Type_delete_attr(u, tk));
    CHECK(ndeleted == 1 && deleted[0] == 7, "type delete_attr: %d deletes", ndeleted);
    CALL(MPI_Type_get_attr(u, tk, &v, &flag));
    CHECK(!flag, "type attribute still there after delete");
    ndeleted = 0;
    CALL(MPI_Type_free(&t));
#ifdef FERRY_MPI_H
    /* MPICH may run it later, when the type's last reference goes. */
    CHECK(ndeleted == 1 && deleted[0] == 7, "MPI_Type_free: %d deletes", ndeleted);
#endif
    CALL(MPI_Type_free(&u));
    /* On a predefined type too. */
    CALL(MPI_Type_set_attr(MPI_DOUBLE, tk, (void *)9L));
    CALL(MPI_Type_get_attr(MPI_DOUBLE, tk, &v, &flag));
    CHECK(flag && (long)v == 9, "attribute on MPI_DOUBLE");
    CALL(MPI_Type_delete_attr(MPI_DOUBLE, tk));
    CALL(MPI_Type_free_keyval(&tk));
}

int main(int argc, char **argv)
{
    TEST_INIT(&argc, &argv);
    predefined();
    comm_attrs();
    type_attrs();
    CALL(MPI_Barrier(MPI_COMM_WORLD));
    MPI_Finalize();
    return 0;
}

/* ranks: 1 2 */
/*
 * User error handlers: MPI_Comm_create_errhandler, called with the
 * communicator and the error code when a call on that communicator fails
 * (and by MPI_Comm_call_errhandler), inherited by MPI_Comm_dup, still
 * working after MPI_Errhandler_free; user error classes, codes and strings
 * (MPI_Add_error_class/code/string, MPI_Error_class, MPI_Error_string,
 * MPI_LASTUSEDCODE), and taken back (MPIX_Delete_error_class/code/string).
 */
#include <string.h>

#define TEST_NAME "errhandlers"
#include "testutil.h"

static int calls = 0;
static MPI_Comm seen_comm;
static int seen_code;

static void handler(MPI_Comm *comm, int *code, ...)
{
    calls++;
    seen_comm = *comm;
    seen_code = *code;
}

int main(int argc, char **argv)
{
    TEST_INIT(&argc, &argv);
    MPI_Errhandler eh;
    CALL(MPI_Comm_create_errhandler(handler, &eh));
    MPI_Comm c;
    CALL(MPI_Comm_dup(MPI_COMM_WORLD, &c));
    CALL(MPI_Comm_set_errhandler(c, eh));

    /* An error on c: the handler runs with c and the code, the call returns the code. */
    int x = 0;
    int rc = MPI_Send(&x, 1, MPI_INT, np + 5, 0, c);
    CHECK(rc != MPI_SUCCESS, "send to rank %d succeeded", np + 5);
    CHECK(calls == 1, "handler called %d times", calls);
    CHECK(seen_comm == c, "handler got another communicator");
    CHECK(seen_code == rc, "handler got code %d, the call returned %d", seen_code, rc);
    int cls;
    CALL(MPI_Error_class(seen_code, &cls));
    CHECK(cls == MPI_ERR_RANK, "class %d, want MPI_ERR_RANK", cls);

    /* MPI_Comm_call_errhandler. */
    CALL(MPI_Comm_call_errhandler(c, MPI_ERR_OTHER));
    CHECK(calls == 2 && seen_code == MPI_ERR_OTHER && seen_comm == c, "call_errhandler");

    /* The handle MPI_Comm_get_errhandler gives is a reference of its own: freeing it leaves
     * the creator's handle usable. */
    MPI_Errhandler again;
    MPI_Comm e;
    CALL(MPI_Comm_get_errhandler(c, &again));
    CHECK(again == eh, "get_errhandler gave another handler");
    CALL(MPI_Errhandler_free(&again));
    CALL(MPI_Comm_dup(MPI_COMM_SELF, &e));
    CALL(MPI_Comm_set_errhandler(e, eh));
    CALL(MPI_Comm_free(&e));

    /* Freed handle: c keeps it; a dup inherits it. */
    CALL(MPI_Errhandler_free(&eh));
    CHECK(eh == MPI_ERRHANDLER_NULL, "Errhandler_free left the handle");
    MPI_Comm d;
    CALL(MPI_Comm_dup(c, &d));
    rc = MPI_Send(&x, -1, MPI_INT, 0, 0, d);
    CHECK(rc != MPI_SUCCESS && calls == 3 && seen_comm == d, "handler on the dup (%d calls)", calls);
    CALL(MPI_Error_class(rc, &cls));
    CHECK(cls == MPI_ERR_COUNT, "class %d, want MPI_ERR_COUNT", cls);
    MPI_Errhandler got;
    CALL(MPI_Comm_get_errhandler(d, &got));
    CHECK(got != MPI_ERRORS_RETURN && got != MPI_ERRORS_ARE_FATAL, "get_errhandler");
    CALL(MPI_Errhandler_free(&got));
    /* Other communicators keep theirs. */
    CALL(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    rc = MPI_Send(&x, 1, MPI_INT, np + 5, 0, MPI_COMM_WORLD);
    CHECK(rc != MPI_SUCCESS && calls == 3, "the handler ran for MPI_COMM_WORLD");

    /* User error classes, codes and strings. */
    int ucls, ucode, ucode2, len;
    CALL(MPI_Add_error_class(&ucls));
    CALL(MPI_Add_error_code(ucls, &ucode));
    CALL(MPI_Add_error_code(MPI_ERR_ARG, &ucode2));
    CHECK(ucls > MPI_ERR_LASTCODE || ucls > MPI_ERR_RMA_FLAVOR, "new class %d", ucls);
    CHECK(ucode != ucls && ucode2 != ucode, "codes %d %d %d", ucls, ucode, ucode2);
    CALL(MPI_Error_class(ucode, &cls));
    CHECK(cls == ucls, "class of the new code %d, want %d", cls, ucls);
    CALL(MPI_Error_class(ucls, &cls));
    CHECK(cls == ucls, "class of the new class %d", cls);
    CALL(MPI_Error_class(ucode2, &cls));
    CHECK(cls == MPI_ERR_ARG, "class of a code of MPI_ERR_ARG: %d", cls);
    CALL(MPI_Add_error_string(ucls, "the frobnicator failed"));
    CALL(MPI_Add_error_string(ucode, "the frobnicator failed badly"));
    char s[MPI_MAX_ERROR_STRING];
    CALL(MPI_Error_string(ucls, s, &len));
    CHECK(strcmp(s, "the frobnicator failed") == 0 && len == (int)strlen(s), "string '%s'", s);
    CALL(MPI_Error_string(ucode, s, &len));
    CHECK(strcmp(s, "the frobnicator failed badly") == 0, "string '%s'", s);
    int *last, flag;
    CALL(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_LASTUSEDCODE, &last, &flag));
    CHECK(flag && *last >= MPI_ERR_LASTCODE, "MPI_LASTUSEDCODE %d", *last);
#ifdef FERRY_MPI_H
    /* MPICH encodes its codes differently; Ferry numbers them upwards. */
    CHECK(*last >= ucls && *last >= ucode && *last >= ucode2, "MPI_LASTUSEDCODE %d", *last);
#endif
    /* A user code through a handler. */
    CALL(MPI_Comm_call_errhandler(c, ucode));
    CHECK(calls == 4 && seen_code == ucode, "user code through the handler");
    /* Errors of these calls. */
#ifdef FERRY_MPI_H
    rc = MPI_Add_error_code(-7, &ucode); /* MPICH does not check the class */
    CHECK(rc != MPI_SUCCESS, "MPI_Add_error_code of class -7 succeeded");
#endif
    rc = MPI_Comm_set_errhandler(c, MPI_ERRHANDLER_NULL);
    CHECK(rc != MPI_SUCCESS, "MPI_Comm_set_errhandler(MPI_ERRHANDLER_NULL) succeeded");

    /* Taken back (MPICH's MPIX_Delete_error_*, MPI-4.1's MPI_Remove_error_*): a string
     * before its code, the codes and the string of a class before the class. */
#ifdef FERRY_MPI_H
    EXPECT(MPI_ERR_ARG, MPIX_Delete_error_code(ucode));   /* its string is still there */
    EXPECT(MPI_ERR_ARG, MPIX_Delete_error_class(ucls));   /* it still has a code */
    EXPECT(MPI_ERR_ARG, MPIX_Delete_error_class(ucode2)); /* a code, not a class */
    EXPECT(MPI_ERR_ARG, MPIX_Delete_error_code(MPI_ERR_ARG));
    EXPECT(MPI_ERR_ARG, MPIX_Delete_error_string(ucode2)); /* it has no string */
#endif
    CALL(MPIX_Delete_error_string(ucode));
    CALL(MPIX_Delete_error_code(ucode));
    CALL(MPIX_Delete_error_code(ucode2));
    CALL(MPIX_Delete_error_string(ucls));
    CALL(MPIX_Delete_error_class(ucls));
#ifdef FERRY_MPI_H
    EXPECT(MPI_ERR_ARG, MPIX_Delete_error_class(ucls)); /* gone */
    rc = MPI_Error_class(ucode, &cls);
    CHECK(rc != MPI_SUCCESS, "MPI_Error_class of a removed code succeeded");
#endif
    CALL(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));

    CALL(MPI_Comm_free(&d));
    CALL(MPI_Comm_free(&c));
    CALL(MPI_Barrier(MPI_COMM_WORLD));
    MPI_Finalize();
    return 0;
}

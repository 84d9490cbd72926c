/* Spawn under ferry run (tests/spawn.sh). One program, parent or child by MPI_Comm_get_parent;
 * argv[1] names the case:
 *   basic N     the parents spawn N children: point-to-point both ways, a broadcast and an
 *               allreduce over the intercommunicator, MPI_Intercomm_merge, disconnect
 *   multiple    MPI_Comm_spawn_multiple of this program and of its twin PROGRAM2 (argv[2]),
 *               each with its own argv; each child says who it is
 *   nested      a child spawns a grandchild; a token goes parent -> child -> grandchild and back
 *   fail        a program that does not exist, and more processes than MPI_UNIVERSE_SIZE:
 *               MPI_ERR_SPAWN and its error codes, then a spawn that works
 *   plain       no parent (MPI_COMM_NULL) in a job that was not spawned
 *   names       publish, look up (also from a spawned child) and withdraw a service name
 *   crash       a child is killed by a signal while its parents wait for it (ferry run stops)
 *   hang        parents and children wait for each other forever (the launcher is killed)
 *   nolauncher  a job under Hydra: spawn is MPI_ERR_SPAWN, names MPI_ERR_SERVICE / MPI_ERR_NAME
 *   nonames     a singleton: no name service (MPI_ERR_SERVICE / MPI_ERR_NAME)
 * Every process prints "spawn <case>: ok" when its part passed. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>

#ifndef WHO
#define WHO "first"
#endif

#define CHECK(c, ...) do { if (!(c)) { fprintf(stderr, "spawn: " __VA_ARGS__); fputc('\n', stderr); MPI_Abort(MPI_COMM_WORLD, 1); } } while (0)

static int rank, size;

static void talk_as_parents(MPI_Comm inter, int children) {
    int rsize, v, sum;
    MPI_Comm_remote_size(inter, &rsize);
    CHECK(rsize == children, "remote size %d, expected %d", rsize, children);
    for (int c = rank; c < children; c += size) {
        v = 1000 + c;
        MPI_Send(&v, 1, MPI_INT, c, 7, inter);
        MPI_Recv(&v, 1, MPI_INT, c, 8, inter, MPI_STATUS_IGNORE);
        CHECK(v == 2000 + c, "child %d answered %d", c, v);
    }
    v = 42;
    MPI_Bcast(&v, 1, MPI_INT, rank == 0 ? MPI_ROOT : MPI_PROC_NULL, inter);
    v = 1;
    MPI_Allreduce(&v, &sum, 1, MPI_INT, MPI_SUM, inter);
    CHECK(sum == children, "allreduce over the children gave %d", sum);
    MPI_Comm merged;
    MPI_Intercomm_merge(inter, 0, &merged);
    int msize, mrank;
    MPI_Comm_size(merged, &msize);
    MPI_Comm_rank(merged, &mrank);
    CHECK(msize == size + children && mrank == rank, "merged: size %d rank %d", msize, mrank);
    MPI_Allreduce(&mrank, &sum, 1, MPI_INT, MPI_SUM, merged);
    CHECK(sum == msize * (msize - 1) / 2, "merged allreduce %d", sum);
    MPI_Comm_free(&merged);
    MPI_Comm_disconnect(&inter);
}

static void talk_as_child(MPI_Comm parent) {
    int psize, v, sum;
    MPI_Comm_remote_size(parent, &psize);
    MPI_Recv(&v, 1, MPI_INT, rank % psize, 7, parent, MPI_STATUS_IGNORE);
    CHECK(v == 1000 + rank, "child %d got %d", rank, v);
    v = 2000 + rank;
    MPI_Send(&v, 1, MPI_INT, rank % psize, 8, parent);
    MPI_Bcast(&v, 1, MPI_INT, 0, parent);
    CHECK(v == 42, "broadcast from the parents gave %d", v);
    v = 1;
    MPI_Allreduce(&v, &sum, 1, MPI_INT, MPI_SUM, parent);
    CHECK(sum == psize, "allreduce over the parents gave %d", sum);
    MPI_Comm merged;
    MPI_Intercomm_merge(parent, 1, &merged);
    int msize, mrank;
    MPI_Comm_size(merged, &msize);
    MPI_Comm_rank(merged, &mrank);
    CHECK(mrank == psize + rank, "merged rank %d", mrank);
    MPI_Allreduce(&mrank, &sum, 1, MPI_INT, MPI_SUM, merged);
    CHECK(sum == msize * (msize - 1) / 2, "merged allreduce %d", sum);
    MPI_Comm_free(&merged);
    MPI_Comm_disconnect(&parent);
    MPI_Comm_get_parent(&parent);
    CHECK(parent == MPI_COMM_NULL, "the parent is still there after its disconnect");
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm parent;
    MPI_Comm_get_parent(&parent);
    const char *what = argc > 1 ? argv[1] : "plain";
    if (parent != MPI_COMM_NULL) {
        if (!strcmp(what, "child")) {
            talk_as_child(parent);
        } else if (!strcmp(what, "who")) {
            char line[64];
            snprintf(line, sizeof line, "%s %s %d", WHO, argc > 2 ? argv[2] : "-", argc);
            MPI_Send(line, (int)strlen(line) + 1, MPI_CHAR, 0, 9, parent);
            MPI_Comm_disconnect(&parent);
        } else if (!strcmp(what, "nest")) {
            MPI_Comm kid;
            int token;
            MPI_Recv(&token, 1, MPI_INT, 0, 1, parent, MPI_STATUS_IGNORE);
            char *kargv[] = {"grandchild", NULL};
            MPI_Comm_spawn(argv[0], kargv, 1, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &kid, MPI_ERRCODES_IGNORE);
            token++;
            MPI_Send(&token, 1, MPI_INT, 0, 1, kid);
            MPI_Recv(&token, 1, MPI_INT, 0, 2, kid, MPI_STATUS_IGNORE);
            MPI_Comm_disconnect(&kid);
            MPI_Send(&token, 1, MPI_INT, 0, 2, parent);
            MPI_Comm_disconnect(&parent);
        } else if (!strcmp(what, "grandchild")) {
            int token;
            MPI_Recv(&token, 1, MPI_INT, 0, 1, parent, MPI_STATUS_IGNORE);
            token++;
            MPI_Send(&token, 1, MPI_INT, 0, 2, parent);
            MPI_Comm_disconnect(&parent);
        } else if (!strcmp(what, "die")) {
            raise(SIGKILL);
        } else if (!strcmp(what, "sleep")) {
            int token;
            MPI_Recv(&token, 1, MPI_INT, 0, 1, parent, MPI_STATUS_IGNORE);
        } else if (!strcmp(what, "lookup")) {
            char port[MPI_MAX_PORT_NAME], sent[MPI_MAX_PORT_NAME];
            MPI_Lookup_name("ferry-spawn-test", MPI_INFO_NULL, port);
            MPI_Recv(sent, MPI_MAX_PORT_NAME, MPI_CHAR, 0, 3, parent, MPI_STATUS_IGNORE);
            CHECK(!strcmp(port, sent), "the child looked up %s, the parent published %s", port, sent);
            MPI_Comm_disconnect(&parent);
        } else {
            CHECK(0, "unknown child case %s", what);
        }
        printf("spawn %s: ok\n", what);
        MPI_Finalize();
        return 0;
    }
    if (!strcmp(what, "basic")) {
        int n = argc > 2 ? atoi(argv[2]) : 1;
        int codes[16];
        for (int i = 0; i < 16; i++) codes[i] = -1;
        char *cargv[] = {"child", NULL};
        MPI_Comm inter;
        double t0 = MPI_Wtime();
        MPI_Comm_spawn(argv[0], cargv, n, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter, codes);
        double t = MPI_Wtime() - t0;
        /* Every parent gets the codes of a spawn that worked. */
        for (int i = 0; i < n; i++) CHECK(codes[i] == MPI_SUCCESS, "errcode %d is %d", i, codes[i]);
        if (rank == 0) printf("spawn basic: %d children in %.3f s\n", n, t);
        talk_as_parents(inter, n);
    } else if (!strcmp(what, "multiple")) {
        char *cmds[2] = {argv[0], argv[2]};
        char *a0[] = {"who", "A", NULL}, *a1[] = {"who", "B", "extra", NULL};
        char **argvs[2] = {a0, a1};
        int np[2] = {1, 2}, codes[3] = {-1, -1, -1};
        MPI_Info infos[2];
        MPI_Info_create(&infos[0]);
        MPI_Info_set(infos[0], "wdir", "/tmp");
        MPI_Info_create(&infos[1]);
        MPI_Info_set(infos[1], "host", "localhost");
        MPI_Comm inter;
        MPI_Comm_spawn_multiple(2, cmds, argvs, np, infos, 0, MPI_COMM_WORLD, &inter, codes);
        MPI_Info_free(&infos[0]);
        MPI_Info_free(&infos[1]);
        if (rank == 0) {
            const char *want[3] = {"first A 3", "second B 4", "second B 4"};
            for (int c = 0; c < 3; c++) {
                char line[64];
                CHECK(codes[c] == MPI_SUCCESS, "errcode %d is %d", c, codes[c]);
                MPI_Recv(line, 64, MPI_CHAR, c, 9, inter, MPI_STATUS_IGNORE);
                CHECK(!strcmp(line, want[c]), "child %d says \"%s\", expected \"%s\"", c, line, want[c]);
            }
        }
        MPI_Comm_disconnect(&inter);
    } else if (!strcmp(what, "nested")) {
        char *cargv[] = {"nest", NULL};
        MPI_Comm inter;
        MPI_Comm_spawn(argv[0], cargv, 1, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter, MPI_ERRCODES_IGNORE);
        if (rank == 0) {
            int token = 1;
            MPI_Send(&token, 1, MPI_INT, 0, 1, inter);
            MPI_Recv(&token, 1, MPI_INT, 0, 2, inter, MPI_STATUS_IGNORE);
            CHECK(token == 3, "the token came back as %d", token);
        }
        MPI_Comm_disconnect(&inter);
    } else if (!strcmp(what, "fail")) {
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
        int codes[3] = {-1, -1, -1}, cls, *usize, flag;
        MPI_Comm inter = MPI_COMM_WORLD;
        int rc = MPI_Comm_spawn("./no-such-program", MPI_ARGV_NULL, 3, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter, codes);
        MPI_Error_class(rc, &cls);
        CHECK(cls == MPI_ERR_SPAWN, "a missing program gave class %d", cls);
        if (rank == 0)
            for (int i = 0; i < 3; i++) CHECK(codes[i] == MPI_ERR_SPAWN, "errcode %d is %d", i, codes[i]);
        MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_UNIVERSE_SIZE, &usize, &flag);
        CHECK(flag && *usize >= size, "MPI_UNIVERSE_SIZE %d", flag ? *usize : -1);
        char *cargv[] = {"child", NULL};
        rc = MPI_Comm_spawn(argv[0], cargv, *usize, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter, MPI_ERRCODES_IGNORE);
        MPI_Error_class(rc, &cls);
        CHECK(cls == MPI_ERR_SPAWN, "more than the universe gave class %d", cls);
        MPI_Info info;
        MPI_Info_create(&info);
        MPI_Info_set(info, "host", "no-such-host.invalid");
        rc = MPI_Comm_spawn(argv[0], cargv, 1, info, 0, MPI_COMM_WORLD, &inter, MPI_ERRCODES_IGNORE);
        MPI_Info_free(&info);
        MPI_Error_class(rc, &cls);
        CHECK(cls == MPI_ERR_SPAWN, "another host gave class %d", cls);
        /* The parents go on: a spawn that works. */
        rc = MPI_Comm_spawn(argv[0], cargv, 1, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter, MPI_ERRCODES_IGNORE);
        CHECK(rc == MPI_SUCCESS, "the spawn after the failures returned %d", rc);
        talk_as_parents(inter, 1);
    } else if (!strcmp(what, "crash") || !strcmp(what, "hang")) {
        char *cargv[] = {!strcmp(what, "crash") ? "die" : "sleep", NULL};
        MPI_Comm inter;
        int token;
        MPI_Comm_spawn(argv[0], cargv, 2, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter, MPI_ERRCODES_IGNORE);
        printf("spawn %s: children up\n", what);
        fflush(stdout);
        MPI_Recv(&token, 1, MPI_INT, 0, 1, inter, MPI_STATUS_IGNORE);
        CHECK(0, "a message came from a child that should not send one");
    } else if (!strcmp(what, "nolauncher") || !strcmp(what, "nonames")) {
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
        int codes[2] = {-1, -1}, cls;
        char port[MPI_MAX_PORT_NAME];
        MPI_Comm inter;
        if (!strcmp(what, "nolauncher")) {
            char *cargv[] = {"child", NULL};
            MPI_Error_class(MPI_Comm_spawn(argv[0], cargv, 2, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter, codes), &cls);
            CHECK(cls == MPI_ERR_SPAWN, "spawn without a launcher that serves it gave class %d", cls);
            CHECK(rank != 0 || (codes[0] == MPI_ERR_SPAWN && codes[1] == MPI_ERR_SPAWN), "codes %d %d", codes[0], codes[1]);
        }
        MPI_Error_class(MPI_Publish_name("ferry-spawn-test", MPI_INFO_NULL, "x"), &cls);
        CHECK(cls == MPI_ERR_SERVICE, "publish without ferry run gave class %d", cls);
        MPI_Error_class(MPI_Lookup_name("ferry-spawn-test", MPI_INFO_NULL, port), &cls);
        CHECK(cls == MPI_ERR_NAME, "lookup without ferry run gave class %d", cls);
    } else if (!strcmp(what, "plain")) {
        int *usize, flag;
        MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_UNIVERSE_SIZE, &usize, &flag);
        CHECK(flag && *usize >= size, "MPI_UNIVERSE_SIZE %d", flag ? *usize : -1);
    } else if (!strcmp(what, "names")) {
        char port[MPI_MAX_PORT_NAME], found[MPI_MAX_PORT_NAME];
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
        if (rank == 0) {
            MPI_Open_port(MPI_INFO_NULL, port);
            CHECK(MPI_Publish_name("ferry-spawn-test", MPI_INFO_NULL, port) == MPI_SUCCESS, "publish");
        }
        MPI_Bcast(port, MPI_MAX_PORT_NAME, MPI_CHAR, 0, MPI_COMM_WORLD);
        CHECK(MPI_Lookup_name("ferry-spawn-test", MPI_INFO_NULL, found) == MPI_SUCCESS, "lookup");
        CHECK(!strcmp(port, found), "looked up %s, published %s", found, port);
        char *cargv[] = {"lookup", NULL};
        MPI_Comm inter;
        MPI_Comm_spawn(argv[0], cargv, 1, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter, MPI_ERRCODES_IGNORE);
        if (rank == 0) MPI_Send(port, MPI_MAX_PORT_NAME, MPI_CHAR, 0, 3, inter);
        MPI_Comm_disconnect(&inter);
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 0) {
            int cls;
            CHECK(MPI_Unpublish_name("ferry-spawn-test", MPI_INFO_NULL, port) == MPI_SUCCESS, "unpublish");
            MPI_Error_class(MPI_Lookup_name("ferry-spawn-test", MPI_INFO_NULL, found), &cls);
            CHECK(cls == MPI_ERR_NAME, "a withdrawn name gave class %d", cls);
            MPI_Error_class(MPI_Unpublish_name("ferry-spawn-test", MPI_INFO_NULL, port), &cls);
            CHECK(cls == MPI_ERR_SERVICE, "withdrawing twice gave class %d", cls);
            MPI_Close_port(port);
        }
    } else {
        CHECK(0, "unknown case %s", what);
    }
    printf("spawn %s: ok\n", what);
    MPI_Finalize();
    return 0;
}

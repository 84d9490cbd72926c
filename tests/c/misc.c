/* ranks: 1 2 4 5 */
/*
 * Environment calls: Get_version and Get_library_version (also before Init
 * and after Finalize), Get_processor_name, Wtime (monotonic, advancing with
 * real time), Wtick, and Barrier (no rank leaves before the last one has
 * entered: each rank in turn arrives late and the others must wait for it).
 */
#include <string.h>

#define TEST_NAME "misc"
#include "testutil.h"

static void versions(int print)
{
    int v = -1, sv = -1;
    CALL(MPI_Get_version(&v, &sv));
    CHECK(v >= 3 && sv >= 0, "Get_version gave %d.%d", v, sv);
    CHECK(v == MPI_VERSION && sv == MPI_SUBVERSION,
          "Get_version gives %d.%d but the header says %d.%d", v, sv, MPI_VERSION,
          MPI_SUBVERSION);

    static char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = -1;
    memset(lib, 0, sizeof lib);
    CALL(MPI_Get_library_version(lib, &len));
    CHECK(len > 0 && len < MPI_MAX_LIBRARY_VERSION_STRING && (int)strlen(lib) == len,
          "Get_library_version length %d for a %zu-character string", len, strlen(lib));
    if (print) {
        const char *nl = strchr(lib, '\n');
        printf("misc: MPI %d.%d, library: %.*s\n", v, sv, nl ? (int)(nl - lib) : len, lib);
    }
}

static void processor_name(void)
{
    char name[MPI_MAX_PROCESSOR_NAME];
    int len = -1;
    memset(name, 0, sizeof name);
    CALL(MPI_Get_processor_name(name, &len));
    CHECK(len > 0 && len < MPI_MAX_PROCESSOR_NAME && (int)strlen(name) == len,
          "Get_processor_name length %d for \"%s\"", len, name);
}

static void clocks(void)
{
    double tick = MPI_Wtick();
    CHECK(tick > 0.0 && tick < 1.0, "Wtick %g", tick);

    double prev = MPI_Wtime();
    for (int k = 0; k < 100000; k++) {
        double t = MPI_Wtime();
        CHECK(t >= prev, "Wtime went back from %.9f to %.9f", prev, t);
        prev = t;
    }
    double t0 = MPI_Wtime();
    pause_ms(50);
    double dt = MPI_Wtime() - t0;
    CHECK(dt >= 0.045 && dt < 5.0, "50 ms of sleep measured as %.6f s", dt);
}

/* Rank `late` enters the barrier 200 ms after the others; nobody may leave
 * before it arrives. A first barrier lines everyone up; the margin allows
 * for ranks leaving that first barrier at different times. */
static void barrier_waits(void)
{
    for (int late = 0; late < np; late++) {
        CALL(MPI_Barrier(MPI_COMM_WORLD));
        double t0 = MPI_Wtime();
        if (me == late)
            pause_ms(200);
        CALL(MPI_Barrier(MPI_COMM_WORLD));
        double waited = MPI_Wtime() - t0;
        CHECK(waited >= 0.1, "left the barrier after %.3f s though rank %d arrived 0.2 s late",
              waited, late);
    }
    for (int k = 0; k < 100; k++)
        CALL(MPI_Barrier(MPI_COMM_WORLD));
}

int main(int argc, char **argv)
{
    versions(0); /* allowed before MPI_Init */
    TEST_INIT(&argc, &argv);

    versions(me == 0);
    processor_name();
    clocks();
    barrier_waits();

    CALL(MPI_Finalize());
    finalized = 1;
    versions(0); /* and after MPI_Finalize */
    return 0;
}

/* ranks: 1 */
/*
 * Derived types with empty blocks: a block of length zero is no part of the
 * type map, so it moves no bound. A struct whose first block is zero floats at
 * 8 bytes, then one int at 0 and two at 8, spans 16 bytes and receives six ints
 * as two copies, its gaps untouched (MPI_Get_count 2, MPI_Get_elements 6); an
 * indexed type whose first two blocks are empty starts at its first real block
 * (lower bound 4, extent 8) and packs only that.
 */
#define TEST_NAME "datatypes_empty_blocks"
#include "testutil.h"

int main(int argc, char **argv)
{
    TEST_INIT(&argc, &argv);
    MPI_Datatype st, ix;
    MPI_Aint lb, ext;
    int size;
    CALL(MPI_Type_create_struct(3, (int[]){0, 1, 2}, (MPI_Aint[]){2 * sizeof(float), 0, 2 * sizeof(int)},
                                (MPI_Datatype[]){MPI_FLOAT, MPI_INT, MPI_INT}, &st));
    CALL(MPI_Type_commit(&st));
    CALL(MPI_Type_get_extent(st, &lb, &ext));
    CALL(MPI_Type_size(st, &size));
    CHECK(lb == 0 && ext == 4 * (MPI_Aint)sizeof(int) && size == 3 * (int)sizeof(int), "struct: lb %ld extent %ld size %d",
          (long)lb, (long)ext, size);
    int in[8], out[6] = {1, 2, 3, 4, 5, 6};
    for (int i = 0; i < 8; i++)
        in[i] = -1;
    MPI_Request q;
    MPI_Status s;
    CALL(MPI_Irecv(in, 2, st, 0, 0, MPI_COMM_SELF, &q));
    CALL(MPI_Send(out, 6, MPI_INT, 0, 0, MPI_COMM_SELF));
    CALL(MPI_Wait(&q, &s));
    int want[8] = {1, -1, 2, 3, 4, -1, 5, 6};
    for (int i = 0; i < 8; i++)
        CHECK(in[i] == want[i], "struct: int %d is %d, expected %d", i, in[i], want[i]);
    int count, elements;
    CALL(MPI_Get_count(&s, st, &count));
    CALL(MPI_Get_elements(&s, st, &elements));
    CHECK(count == 2 && elements == 6, "struct: count %d, elements %d", count, elements);

    CALL(MPI_Type_indexed(3, (int[]){0, 0, 2}, (int[]){0, 3, 1}, MPI_INT, &ix));
    CALL(MPI_Type_commit(&ix));
    CALL(MPI_Type_get_extent(ix, &lb, &ext));
    CALL(MPI_Type_size(ix, &size));
    CHECK(lb == (MPI_Aint)sizeof(int) && ext == 2 * (MPI_Aint)sizeof(int) && size == 2 * (int)sizeof(int),
          "indexed: lb %ld extent %ld size %d", (long)lb, (long)ext, size);
    int src[4] = {10, 11, 12, 13}, dst[4] = {-1, -1, -1, -1}, pos = 0;
    char packed[64];
    CALL(MPI_Pack(src, 1, ix, packed, sizeof packed, &pos, MPI_COMM_SELF));
    CHECK(pos == 2 * (int)sizeof(int), "indexed: packed %d bytes", pos);
    pos = 0;
    CALL(MPI_Unpack(packed, sizeof packed, &pos, dst, 1, ix, MPI_COMM_SELF));
    CHECK(dst[0] == -1 && dst[1] == 11 && dst[2] == 12 && dst[3] == -1, "indexed: unpacked %d %d %d %d", dst[0], dst[1], dst[2], dst[3]);

    CALL(MPI_Type_free(&st));
    CALL(MPI_Type_free(&ix));
    CALL(MPI_Finalize());
    return 0;
}

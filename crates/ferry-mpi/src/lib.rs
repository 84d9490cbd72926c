//! Ferry's MPI C ABI, binary compatible with MPICH: int handles with MPICH's values, MPICH's
//! `MPI_Status` layout, the sonames `libmpi.so.12` and `libmpich.so.12`.

//! What MPI does to the bytes of a user buffer, without moving them anywhere: the datatype
//! maps that say which bytes a message covers, and the kernels of the predefined reduction
//! operations that combine packed elements. Pure code: no sockets, threads or clocks.

pub mod datatype;
pub mod reduce_op;

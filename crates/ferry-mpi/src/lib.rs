//! Ferry's MPI C ABI, binary compatible with MPICH: int handles with MPICH's values, MPICH's
//! `MPI_Status` layout, the sonames `libmpi.so.12` and `libmpich.so.12`.
//!
//! Every exported function is defined twice by [`mpi_export!`]: as `PMPI_x`, the
//! implementation, and as `MPI_x`, which calls it, so profiling tools can interpose.

#![allow(non_snake_case)]
#![allow(clippy::missing_safety_doc)]

/// Define `PMPI_name` with the body and `MPI_name` forwarding to it.
#[macro_export]
macro_rules! mpi_export {
    ($mpi:ident, $pmpi:ident, ($($arg:ident: $ty:ty),* $(,)?) $body:block) => {
        #[no_mangle]
        pub unsafe extern "C" fn $pmpi($($arg: $ty),*) -> std::os::raw::c_int $body
        #[no_mangle]
        pub unsafe extern "C" fn $mpi($($arg: $ty),*) -> std::os::raw::c_int { $pmpi($($arg),*) }
    };
}

pub mod consts;
pub mod predefined;

mod abi_objects;
mod attr;
mod boundary;
mod coll;
mod dynamic;
mod comm;
mod completion;
mod errhandler;
mod error;
mod exports;
mod f90types;
mod ft;
mod generalized;
mod group;
mod info;
mod internal;
mod io;
mod lifecycle;
mod misc;
mod names;
mod objects;
mod op;
mod op_queries;
mod p2p;
mod pack;
mod progress;
mod session;
mod status_convert;
mod tools;
mod typeinfo;
mod typed_buffer;
mod types;
mod win;

/// The decoders of a peer's one-sided requests, public only so that the fuzz targets under
/// `fuzz/` can feed them arbitrary bytes: not part of the library's interface.
#[doc(hidden)]
pub mod fuzzing {
    pub use crate::win::codec::{Header, Kind};
    pub use crate::win::target::apply_to;
}

//! The C functions of the MPI face, one file per chapter of the standard (MPI-4.1). Each
//! calls its feature inside the panic boundary (`crate::boundary`), whose only users these
//! files are; the features below hold the checks and the work.

pub(crate) mod caching;
pub(crate) mod collectives;
pub(crate) mod collectives_persistent;
pub(crate) mod comms;
pub(crate) mod datatypes;
pub(crate) mod dynamic;
pub(crate) mod environment;
pub(crate) mod external;
pub(crate) mod ft;
pub(crate) mod groups;
pub(crate) mod info;
pub(crate) mod intercomms;
pub(crate) mod io;
pub(crate) mod io_access;
pub(crate) mod language;
pub(crate) mod large_count;
pub(crate) mod mpi1_names;
pub(crate) mod one_sided;
pub(crate) mod one_sided_sync;
pub(crate) mod p2p;
pub(crate) mod partitioned;
pub(crate) mod sessions;
pub(crate) mod tools;
pub(crate) mod topologies;

//! The bottom of the MPI face: the runtime, the objects behind the handles and the tables
//! that find them. Features above use these and the engine, and find each other's behaviour
//! here as data (the runtime's hooks, a collective request's `CollRequest`).

pub mod coll_cache;
pub mod coll_selection;
pub mod comm;
pub mod elision;
pub mod fault;
pub mod host_coll;
pub mod records;
pub mod request;
pub mod runtime;
pub mod table;
pub mod threads;
pub mod topology;

pub use comm::{Comm, CONTEXT_BLOCK};
pub use runtime::Runtime;
pub use table::Table;

/// Where each kind of object's handles live (MPICH's layout: the top six bits name the kind
/// and the storage class; the low 26 are an index and a generation, see [`Table`]).
pub mod kinds {
    /// Communicators: predefined `0x44000000 | i` (world, self), made `0x84......`.
    pub const COMM: (u32, u32, u32) = (0x8400_0000, 20, 0x4400_0000);
    /// Derived datatypes: made `0xcc......` (the predefined types are answered elsewhere).
    pub const DATATYPE: (u32, u32, u32) = (0xcc00_0000, 20, 0x4c00_0000);
    /// Requests: made `0xac......` (4 Mi at once, 15 generations); predefined `0x6c000000 | i`
    /// are requests complete from the start, shared by every such operation.
    pub const REQUEST: (u32, u32, u32) = (0xac00_0000, 22, 0x6c00_0000);
    /// Messages of `MPI_Mprobe`: made `0xec......` (MPICH's kind of requests, in another
    /// storage class, so no request handle is ever a message handle).
    pub const MESSAGE: (u32, u32, u32) = (0xec00_0000, 20, 0x6c00_0000);
    /// Receives complete when they started, which hold nothing but their outcome (see
    /// `request::DoneRecv`): made `0x2c......`, the storage class of `MPI_REQUEST_NULL`
    /// (`0x2c000000`, which no made handle equals: generations start at 1), so a request
    /// handle tells by its top bits alone which table holds it. Nothing is predefined there.
    pub const DONE_RECV: (u32, u32, u32) = (0x2c00_0000, 22, 0x6c00_0000);
}

/// A table for handles of the kind `k` (one of [`kinds`]).
pub fn table<T>(k: (u32, u32, u32)) -> Table<T> {
    Table::new(k.0, k.1, k.2)
}

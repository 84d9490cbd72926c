//! The plain records behind the handles of groups, operations, infos and datatypes' contents,
//! and what the runtime holds of the features above it: their hooks and the progress thread.
//! The features that make and use these records hold their logic.

use std::os::raw::c_int;
use std::sync::Arc;

use ferry_data::datatype::Datatype;

use super::request::Outcome;
use super::runtime::Runtime;
use crate::consts::*;
use crate::error::{err, MpiResult};

/// The world ranks of a group's members, in group rank order.
/// A group's members: world ranks in group rank order.
pub type Members = Arc<Vec<u32>>;

/// A user-defined operation: the function and whether it commutes.
#[derive(Clone, Copy)]
pub struct UserOp {
    pub f: UserFn,
    pub commute: bool,
}

/// A user's reduction function: MPI_Op_create's, which counts in int, or MPI_Op_create_c's,
/// which counts in MPI_Count.
#[derive(Clone, Copy)]
pub enum UserFn {
    Int(MPI_User_function),
    Large(MPI_User_function_c),
}

/// Hints in the order they were first set (the order `MPI_Info_get_nthkey` reports).
pub type Hints = Vec<(String, String)>;

/// The info objects of a process, by handle.
#[derive(Default)]
pub struct Infos {
    pub(crate) table: ferry_core::fastmap::FastMap<i32, Hints>,
    next: i32,
}

impl Infos {
    pub fn add(&mut self, h: Hints) -> i32 {
        let handle = 0x9c000000u32 as i32 | self.next;
        self.next += 1;
        self.table.insert(handle, h);
        handle
    }
}

/// The arguments of the constructor call that made a derived type, as
/// `MPI_Type_get_contents` returns them.
pub struct Contents {
    pub combiner: c_int,
    pub ints: Vec<c_int>,
    pub aints: Vec<MPI_Aint>,
    /// The `MPI_Count` arguments of a large-count constructor (`MPI_Type_contiguous_c`...),
    /// which only `MPI_Type_get_contents_c` returns.
    pub large: Vec<MPI_Count>,
    pub types: Vec<Child>,
}

impl Contents {
    pub fn new(combiner: c_int, ints: Vec<c_int>, aints: Vec<MPI_Aint>, types: Vec<Child>) -> Contents {
        Contents { combiner, ints, aints, large: Vec::new(), types }
    }

    /// The contents of a type made by a large-count constructor.
    pub fn large(combiner: c_int, ints: Vec<c_int>, large: Vec<MPI_Count>, types: Vec<Child>) -> Contents {
        Contents { combiner, ints, aints: Vec::new(), large, types }
    }

    /// The int-count envelope and contents cannot describe a large-count constructor.
    pub(crate) fn int_form(&self) -> MpiResult<()> {
        if !self.large.is_empty() {
            return err(MPI_ERR_TYPE, "the datatype was made by a large-count constructor: MPI_Type_get_envelope_c and MPI_Type_get_contents_c describe it");
        }
        Ok(())
    }
}

/// A type a constructor was given: predefined ones by handle; derived ones by value, since the
/// user may free their handles while the new type lives on.
pub enum Child {
    Named(MPI_Datatype),
    Derived(Datatype, Option<Arc<Contents>>),
}

/// What the runtime keeps beside a datatype handle's type map.
#[derive(Default)]
pub struct TypeInfo {
    /// `None` for predefined types (which only carry a name here).
    pub contents: Option<Arc<Contents>>,
    pub name: Option<String>,
}

/// A running progress thread, as the runtime keeps it: how to stop and join it (`progress`
/// starts it; the runtime's end and the last window stop it, without the runtime's lock).
pub struct ProgressThread {
    stop: Box<dyn FnOnce() + Send>,
}

impl ProgressThread {
    pub fn new(stop: Box<dyn FnOnce() + Send>) -> ProgressThread {
        ProgressThread { stop }
    }

    /// Stop and join the thread. Call without holding the runtime's lock.
    pub fn stop(self) {
        (self.stop)()
    }
}

/// The behaviour of features that code below them needs, lent as data when the runtime
/// comes up (`lifecycle`): the Wait/Test family completes generalized and partitioned
/// requests through these without knowing those features.
pub struct Hooks {
    /// Complete generalized request `h`: ask the program's query function, then its free
    /// function; the request is gone afterwards.
    pub finish_generalized: fn(&mut Runtime, MPI_Request) -> Outcome,
    /// The status of complete generalized request `h`, which stays.
    pub query_generalized: fn(&mut Runtime, MPI_Request) -> Outcome,
    /// `MPI_Request_free` of generalized request `h`.
    pub free_generalized: fn(&mut Runtime, MPI_Request),
    /// Complete the run of partitioned request `h`; the request stays, inactive.
    pub finish_partitioned: fn(&mut Runtime, MPI_Request) -> Outcome,
}

//! MPI-4's large-count functions (`MPI_Send_c`, `MPI_Type_size_c`, ...), which take
//! `MPI_Count` counts and `MPI_Aint` displacements. Datatype queries, constructors and packing
//! work with 64-bit values throughout; so do the reductions (reduce, allreduce, scan, exscan,
//! reduce_scatter(_block), their non-blocking and persistent forms, reduce_local) and the
//! count and displacement arrays of the v and w collectives (neighbourhood and persistent ones
//! included), whose implementation takes them as they are. Point-to-point messages and the
//! single counts of the other blocking and non-blocking collectives, of more than INT_MAX
//! elements, go as one element of a type made for the call ([`Counted`]); the single counts of
//! the persistent collectives other than reductions and of persistent point-to-point requests
//! are narrowed to the int their implementation takes, MPI_ERR_COUNT beyond INT_MAX, so a
//! program learns of the limit instead of moving less than it asked for.

mod coll;
mod coll_v;
mod constructors;
mod datatype;
mod p2p;
mod rma;

use std::os::raw::{c_int, c_void};

use crate::boundary::call;
use crate::consts::*;
use crate::error::{err, MpiError, MpiResult};
use crate::objects::Runtime;

/// A count narrowed to the int of the int-count implementation.
fn narrow(v: MPI_Count, what: &str) -> MpiResult<c_int> {
    if v < 0 {
        return err(MPI_ERR_COUNT, format!("{what} {v} is negative"));
    }
    c_int::try_from(v).map_err(|_| MpiError::new(MPI_ERR_COUNT, format!("{what} {v} exceeds {}, the most elements Ferry moves in one call", c_int::MAX)))
}

/// Run the argument conversion `f` at the boundary: its error goes through `comm`'s error
/// handler under the `_c` function's name, and `Err` carries what the function returns.
fn convert<T>(name: &'static str, comm: MPI_Comm, f: impl FnOnce(&mut Runtime) -> MpiResult<T>) -> Result<T, c_int> {
    let mut out = None;
    let rc = call(name, comm, |rt| {
        out = Some(f(rt)?);
        Ok(())
    });
    out.ok_or(rc)
}

/// A conversion that needs no runtime: report its error as [`convert`] does.
fn report<T>(name: &'static str, comm: MPI_Comm, r: MpiResult<T>) -> Result<T, c_int> {
    r.map_err(|e| call(name, comm, |_| Err(e)))
}

/// The value of a conversion, or return its error code from the exported function.
macro_rules! converted {
    ($e:expr) => {
        match $e {
            Ok(v) => v,
            Err(rc) => return rc,
        }
    };
}
use converted;

/// A (count, type) pair the int-count implementation takes, and the type made for it.
struct Counted {
    count: c_int,
    dt: MPI_Datatype,
    made: bool,
}

impl Counted {
    /// A count that fits an int, of `dt` itself.
    fn plain(count: c_int, dt: MPI_Datatype) -> Counted {
        Counted { count, dt, made: false }
    }

    /// `count` elements of `dt` at `buf`: as they are when the count fits an int, else as one
    /// element of a contiguous type of `count` elements. Errors go through `comm`'s handler.
    fn new(name: &'static str, comm: MPI_Comm, buf: *const c_void, count: MPI_Count, dt: MPI_Datatype) -> Result<Counted, c_int> {
        if let Ok(n) = c_int::try_from(count) {
            // Negative counts included: the implementation names them.
            return Ok(Counted { count: n, dt, made: false });
        }
        report(name, comm, big_count_args(buf, count, dt))?;
        let mut t = MPI_DATATYPE_NULL;
        // SAFETY: plain calls into this library with valid out-pointers.
        let rc = unsafe { constructors::PMPI_Type_contiguous_c(count, dt, &mut t) };
        if rc != MPI_SUCCESS {
            return Err(rc);
        }
        // SAFETY: as above.
        let rc = unsafe { crate::exports::datatypes::PMPI_Type_commit(&mut t) };
        let c = Counted { count: 1, dt: t, made: true };
        if rc != MPI_SUCCESS {
            return Err(rc);
        }
        Ok(c)
    }
}

impl Drop for Counted {
    fn drop(&mut self) {
        if self.made {
            // The operation has started: it holds what it needs of the type (a send has its
            // data or its pointer, a receive its own copy of the type map).
            // SAFETY: a handle made in Counted::new, freed once.
            unsafe { crate::exports::datatypes::PMPI_Type_free(&mut self.dt) };
        }
    }
}

/// What the int-count checks would say of a NULL buffer, which a made type hides from them.
fn big_count_args(buf: *const c_void, count: MPI_Count, dt: MPI_Datatype) -> MpiResult<()> {
    if count < 0 {
        return err(MPI_ERR_COUNT, format!("count {count} is negative"));
    }
    if buf.is_null() && Runtime::is_predefined_type(dt) {
        return err(MPI_ERR_BUFFER, format!("buffer is NULL with count {count}"));
    }
    Ok(())
}

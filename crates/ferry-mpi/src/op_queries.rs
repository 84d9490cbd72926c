//! The MPI queries a user's reduction function may make (`MPI_Type_size`, the extents,
//! `MPI_Type_get_envelope`, `MPI_Comm_rank`, `MPI_Comm_size`), answered while the collective
//! that calls the function holds the runtime deep inside the engine's progress. The runtime
//! cannot be lent then (the engine is borrowed), so each reduction carries a [`View`]: what
//! these queries can ask of its own datatype, the predefined types and the communicators,
//! copied when the call began.

use std::cell::{Cell, RefCell};
use std::os::raw::c_int;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use ferry_data::datatype::Datatype;

use crate::consts::*;
use crate::error::{err, MpiResult};
use crate::objects::Runtime;

/// What a user's reduction function may ask about while it runs.
pub struct View {
    dt: MPI_Datatype,
    t: Datatype,
    /// `MPI_Type_get_envelope` of `dt`: integers, addresses, datatypes, combiner.
    envelope: [c_int; 4],
    /// (handle, rank, size) of every communicator.
    comms: Vec<(MPI_Comm, c_int, c_int)>,
}

impl View {
    /// The view of a reduction over `dt` (type map `t`), taken from `rt` now.
    pub fn of(rt: &Runtime, dt: MPI_Datatype, t: &Datatype) -> Arc<View> {
        let envelope = match rt.type_info.get(&dt).and_then(|i| i.contents.as_ref()) {
            Some(c) => [c.ints.len() as c_int, c.aints.len() as c_int, c.types.len() as c_int, c.combiner],
            None => [0, 0, 0, MPI_COMBINER_NAMED],
        };
        let comms = rt.comms.iter().map(|(h, c)| (h, c.rank, c.size())).collect();
        View::new(dt, t, envelope, comms)
    }

    pub fn new(dt: MPI_Datatype, t: &Datatype, envelope: [c_int; 4], comms: Vec<(MPI_Comm, c_int, c_int)>) -> Arc<View> {
        Arc::new(View { dt, t: t.clone(), envelope, comms })
    }

    /// The reduction's own datatype, or a predefined one.
    pub fn datatype(&self, h: MPI_Datatype) -> MpiResult<Datatype> {
        if h == self.dt {
            return Ok(self.t.clone());
        }
        match crate::predefined::predefined_datatype(h) {
            Some((_, t)) => Ok(t),
            None => err(MPI_ERR_TYPE, format!("datatype {h:#x} is not known inside a user-defined reduction function (only its own datatype and the predefined ones are)")),
        }
    }

    pub fn envelope(&self, h: MPI_Datatype) -> MpiResult<[c_int; 4]> {
        if h == self.dt {
            return Ok(self.envelope);
        }
        self.datatype(h).map(|_| [0, 0, 0, MPI_COMBINER_NAMED])
    }

    /// (rank, size) of communicator `h`.
    pub fn comm(&self, h: MPI_Comm) -> MpiResult<(c_int, c_int)> {
        match self.comms.iter().find(|c| c.0 == h) {
            Some(&(_, rank, size)) => Ok((rank, size)),
            None => err(MPI_ERR_COMM, format!("invalid communicator handle {h:#x}")),
        }
    }
}

thread_local! {
    /// The view of the user function running on this thread.
    static CURRENT: RefCell<Option<Arc<View>>> = const { RefCell::new(None) };
    /// Whether `CURRENT` holds one: what every MPI call looks at, cheaper to read (no
    /// destructor to register, so no state to check).
    static ACTIVE: Cell<bool> = const { Cell::new(false) };
}

/// How many threads run a user's reduction function now: while none does, every MPI call
/// knows it without reading its thread-local state (which a shared library reaches through a
/// call).
static RUNNING: AtomicUsize = AtomicUsize::new(0);

/// Run `f` (a user's function) with `view` answering its queries.
pub fn with_view<R>(view: &Arc<View>, f: impl FnOnce() -> R) -> R {
    RUNNING.fetch_add(1, Ordering::AcqRel);
    let outer = CURRENT.with(|c| c.replace(Some(view.clone())));
    ACTIVE.with(|a| a.set(true));
    let r = f();
    ACTIVE.with(|a| a.set(outer.is_some()));
    CURRENT.with(|c| *c.borrow_mut() = outer);
    RUNNING.fetch_sub(1, Ordering::AcqRel);
    r
}

/// Whether a user's reduction function runs on this thread with the runtime held.
#[inline]
pub fn active() -> bool {
    RUNNING.load(Ordering::Acquire) != 0 && active_here()
}

/// The thread-local part of [`active`], apart so that it is read only when a user function
/// runs somewhere in the process.
#[cold]
#[inline(never)]
fn active_here() -> bool {
    ACTIVE.with(Cell::get)
}

/// Inside a user's reduction function, answer a query from its view: `Some` with the
/// return code (an error is returned, as under `MPI_ERRORS_RETURN`: the error handlers
/// live in the runtime); `None` elsewhere, where the query takes the usual way.
pub fn answer(f: impl FnOnce(&View) -> MpiResult<()>) -> Option<c_int> {
    if !active() {
        return None;
    }
    let view = CURRENT.with(|c| c.borrow().clone())?;
    Some(match f(&view) {
        Ok(()) => MPI_SUCCESS,
        Err(e) => e.class,
    })
}

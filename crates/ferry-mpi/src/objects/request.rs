//! Requests as data: what a handle of the request table holds, the shared handles of
//! requests complete from the start, the outcome the Wait/Test family reports, and the
//! records of the kinds of request that features above make (persistent, generalized,
//! partitioned, collective). `completion` completes them; the hooks in the runtime and the
//! collective's own `CollRequest` carry what only the feature that made one knows.

use std::os::raw::{c_int, c_void};

use ferry_core::engine::Engine;
use ferry_data::datatype::Datatype;

use super::comm::Ranks;
use super::threads::Locked;
use super::Table;
use crate::consts::*;
use crate::error::MpiResult;

/// Where a non-contiguous receive is unpacked once its bytes have arrived.
pub struct Unpack {
    pub tmp: Vec<u8>,
    pub dt: Datatype,
    pub base: *mut u8,
    pub count: usize,
}

pub enum Body {
    /// An engine request.
    Engine(u64),
    /// Complete from the start (MPI_PROC_NULL, buffered sends): the status to report.
    Done { source: i32, tag: i32 },
    /// A non-blocking collective, run by the engine.
    Coll(Box<dyn CollRequest>),
    /// Complete, its outcome already collected (MPI_Request_get_status looked at it).
    Finished(Outcome),
    /// A persistent request (MPI_Send_init, ...): inactive, or started and in flight.
    Persistent(Box<Persistent>),
    /// A generalized request (MPI_Grequest_start), completed by the program.
    Generalized(Box<Grequest>),
    /// Operations that complete as one (MPI_Isendrecv): complete when every part is; it
    /// reports the outcome of `parts[report]`, or else the first error of another part.
    Multi(Vec<ApiReq>, usize),
    /// A partitioned send or receive (MPI_Psend_init, MPI_Precv_init).
    Partitioned(Box<Partitioned>),
}

/// The handle every send complete from the start shares (its status is MPI's empty one), and
/// the one every operation with `MPI_PROC_NULL` shares (its status names `MPI_PROC_NULL`):
/// such a request costs no table slot, and completing it costs a compare.
pub const DONE_SEND: MPI_Request = 0x6c00_0001;
pub const DONE_PROC_NULL: MPI_Request = 0x6c00_0002;

/// Whether `h` is one of the shared handles of requests complete from the start.
#[inline]
pub fn is_shared_done(h: MPI_Request) -> bool {
    h == DONE_SEND || h == DONE_PROC_NULL
}

/// The outcome of a shared complete request.
#[inline]
pub fn shared_outcome(h: MPI_Request) -> Outcome {
    match h {
        DONE_PROC_NULL => Outcome { source: MPI_PROC_NULL, ..Outcome::empty() },
        _ => Outcome::empty(),
    }
}

/// A receive that was complete when it started (its message was here already) and holds
/// nothing but what the Wait/Test family reports: it lives in a table of its own
/// ([`done_recv_table`]), under a handle of its own class, so that starting and completing
/// it costs a small record, not a full [`ApiReq`].
#[derive(Clone, Copy)]
pub struct DoneRecv {
    pub outcome: Outcome,
    /// Whose error handler reports its error (a truncated message).
    pub comm: i32,
}

/// The table of [`DoneRecv`]s.
pub fn done_recv_table() -> Table<DoneRecv> {
    super::table(super::kinds::DONE_RECV)
}

/// Whether `h` is the handle of a [`DoneRecv`] (by its top bits; it may be stale).
#[inline]
pub fn is_done_recv(h: MPI_Request) -> bool {
    h as u32 & 0xfc00_0000 == super::kinds::DONE_RECV.0 && h != MPI_REQUEST_NULL
}

/// The runtime's request table, with the two shared complete requests in their slots.
pub fn request_table() -> Table<ApiReq> {
    let mut t = super::table(super::kinds::REQUEST);
    t.insert(DONE_SEND, ApiReq::done(MPI_COMM_WORLD, MPI_ANY_SOURCE));
    t.insert(DONE_PROC_NULL, ApiReq::done(MPI_COMM_WORLD, MPI_PROC_NULL));
    t
}

impl ApiReq {
    /// The shared handle of this request when it is complete from the start and holds
    /// nothing of its own.
    pub fn shared_handle(&self) -> Option<MPI_Request> {
        match self.body {
            Body::Done { source: MPI_ANY_SOURCE, tag: MPI_ANY_TAG } if self.keep.is_none() && self.unpack.is_none() => Some(DONE_SEND),
            Body::Done { source: MPI_PROC_NULL, tag: MPI_ANY_TAG } if self.keep.is_none() && self.unpack.is_none() => Some(DONE_PROC_NULL),
            _ => None,
        }
    }

    /// A request complete from the start, whose status names `source` (`MPI_ANY_SOURCE` for
    /// a send, `MPI_PROC_NULL` for an operation with the null process).
    pub fn done(comm: i32, source: i32) -> ApiReq {
        ApiReq { body: Body::Done { source, tag: MPI_ANY_TAG }, comm, group: Ranks::None, unpack: None, keep: None }
    }

    /// The engine's id of what this request waits for; `None` when complete from the start.
    pub fn engine_id(&self) -> Option<u64> {
        match &self.body {
            Body::Engine(id) => Some(*id),
            Body::Coll(c) => Some(c.id()),
            Body::Persistent(p) => p.active.as_ref().and_then(|a| a.engine_id()),
            Body::Partitioned(p) => p.in_flight().and_then(|a| a.engine_id()),
            Body::Done { .. } | Body::Finished(_) | Body::Generalized(_) | Body::Multi(..) => None,
        }
    }

    pub fn is_done(&self, engine: &ferry_core::engine::Engine) -> bool {
        match &self.body {
            Body::Generalized(g) => g.complete,
            Body::Persistent(p) => p.active.as_ref().is_none_or(|a| a.is_done(engine)),
            Body::Partitioned(p) => p.is_done(engine),
            Body::Multi(parts, _) => parts.iter().all(|p| p.is_done(engine)),
            _ => self.engine_id().is_none_or(|id| engine.is_done(id)),
        }
    }

    /// A persistent request not started: the Wait/Test family treats it as a null handle.
    pub fn inactive(&self) -> bool {
        match &self.body {
            Body::Persistent(p) => p.active.is_none(),
            Body::Partitioned(p) => p.is_inactive(),
            _ => false,
        }
    }

    /// The request whose operation is in flight: a started persistent request's current one.
    pub fn operation_mut(&mut self) -> &mut ApiReq {
        let inner = match &self.body {
            Body::Persistent(p) => p.active.is_some(),
            Body::Partitioned(p) => p.in_flight().is_some(),
            _ => false,
        };
        if !inner {
            return self;
        }
        match &mut self.body {
            Body::Persistent(p) => p.active.as_mut().expect("checked above"),
            Body::Partitioned(p) => p.in_flight_mut().expect("checked above"),
            _ => unreachable!("checked above"),
        }
    }
}

pub struct ApiReq {
    pub body: Body,
    pub comm: i32,
    /// How to report the source of a receive as a communicator rank.
    pub group: Ranks,
    pub unpack: Option<Box<Unpack>>,
    /// Packed send data the engine reads from until completion.
    pub keep: Option<Vec<u8>>,
}

/// The outcome of one completed request, ready to write into an `MPI_Status`.
#[derive(Clone, Copy)]
pub struct Outcome {
    pub source: i32,
    pub tag: i32,
    pub bytes: usize,
    pub cancelled: bool,
    pub error: i32,
    /// The world rank whose loss failed this request, when that is the error.
    pub lost: Option<u32>,
}

impl Outcome {
    /// The status of a completed send or of a null request (MPI's "empty" status).
    pub fn empty() -> Outcome {
        Outcome { source: MPI_ANY_SOURCE, tag: MPI_ANY_TAG, bytes: 0, cancelled: false, error: MPI_SUCCESS, lost: None }
    }
}

pub fn status_ignored(st: *const MPI_Status) -> bool {
    st.is_null() || st as usize == 1
}

/// Write an outcome into a caller's status (unless it is `MPI_STATUS_IGNORE`).
pub fn write_status(st: *mut MPI_Status, o: &Outcome, with_error: bool) {
    if status_ignored(st) {
        return;
    }
    // SAFETY: a status pointer other than MPI_STATUS_IGNORE points to caller storage.
    let s = unsafe { &mut *st };
    s.count_lo = o.bytes as u32 as i32;
    s.count_hi_and_cancelled = (((o.bytes as u64) >> 32) << 1) as i32 | o.cancelled as i32;
    s.MPI_SOURCE = o.source;
    s.MPI_TAG = o.tag;
    if with_error {
        s.MPI_ERROR = o.error;
    }
}

pub fn status_bytes(st: &MPI_Status) -> usize {
    (st.count_lo as u32 as u64 | (((st.count_hi_and_cancelled as u32 as u64) >> 1) << 32)) as usize
}

/// A non-blocking collective in the engine's hands; `coll`, which made it, knows how to
/// collect it.
pub trait CollRequest {
    /// The engine's id of the call.
    fn id(&self) -> u64;
    /// Collect the completed call from the engine: unpack its result, or say why it failed.
    fn complete(self: Box<Self>, engine: &mut Engine) -> MpiResult<()>;
}

/// Starts one run of the operation: the request of that run, not registered under a handle.
pub type Starter = Box<dyn FnMut(&mut Locked) -> MpiResult<ApiReq>>;

/// A persistent request (`MPI_Send_init` and kin, the persistent collectives): how to start
/// a run, and the run in flight. `Runtime::add_persistent` makes them, `p2p/persistent.rs` starts them.
pub struct Persistent {
    pub start: Starter,
    /// The run in flight, between MPI_Start and the completion that ends it.
    pub active: Option<Box<ApiReq>>,
}

/// The program's callbacks of a generalized request (`MPI_Grequest_start`).
pub type QueryFn = unsafe extern "C" fn(*mut c_void, *mut MPI_Status) -> c_int;
pub type FreeFn = unsafe extern "C" fn(*mut c_void) -> c_int;
pub type CancelFn = unsafe extern "C" fn(*mut c_void, c_int) -> c_int;

/// A generalized request: the program's callbacks and state, and where it stands.
pub struct Grequest {
    pub(crate) query: Option<QueryFn>,
    pub(crate) free: Option<FreeFn>,
    pub(crate) cancel: Option<CancelFn>,
    pub(crate) extra: *mut c_void,
    /// MPI_Grequest_complete was called.
    pub complete: bool,
    /// MPI_Request_free was called before completion: free once complete.
    pub(crate) freed: bool,
}

/// What one run of a partitioned request transfers.
#[derive(Clone, Copy)]
pub(crate) struct Spec {
    pub(crate) send: bool,
    pub(crate) buf: *mut c_void,
    /// Elements of the whole buffer: partitions × count.
    pub(crate) total: c_int,
    pub(crate) dt: MPI_Datatype,
    pub(crate) peer: c_int,
    pub(crate) tag: c_int,
    pub(crate) comm: MPI_Comm,
}

pub(crate) enum State {
    Inactive,
    /// A started send: which partitions are ready, and how many are not yet.
    Filling(Vec<bool>, usize),
    /// The message of this run, posted to the engine.
    InFlight(Box<ApiReq>),
}

/// A partitioned send or receive and the state of its run; `p2p/partitioned.rs` makes and runs it.
pub struct Partitioned {
    pub(crate) spec: Spec,
    pub(crate) partitions: usize,
    pub(crate) state: State,
}

impl Partitioned {
    pub fn is_inactive(&self) -> bool {
        matches!(self.state, State::Inactive)
    }

    /// A started send waiting for partitions to be marked ready.
    pub fn awaits_ready(&self) -> bool {
        matches!(self.state, State::Filling(..))
    }

    pub fn is_done(&self, engine: &Engine) -> bool {
        match &self.state {
            State::Inactive => true,
            State::Filling(..) => false,
            State::InFlight(a) => a.is_done(engine),
        }
    }

    pub fn in_flight(&self) -> Option<&ApiReq> {
        match &self.state {
            State::InFlight(a) => Some(a),
            _ => None,
        }
    }

    pub fn in_flight_mut(&mut self) -> Option<&mut ApiReq> {
        match &mut self.state {
            State::InFlight(a) => Some(a),
            _ => None,
        }
    }

    /// The run in flight, leaving the request inactive.
    pub fn take_in_flight(&mut self) -> Option<Box<ApiReq>> {
        match std::mem::replace(&mut self.state, State::Inactive) {
            State::InFlight(a) => Some(a),
            other => {
                self.state = other;
                None
            }
        }
    }
}

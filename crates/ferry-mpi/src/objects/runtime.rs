//! The process-wide MPI state: the job, its engine, and the handle tables. One mutex guards
//! it all: every MPI call holds it, and with MPI_THREAD_MULTIPLE a blocking call lets it go
//! while it waits (see `threads`); below that level, calls skip it while nothing else can
//! reach the runtime (see `elision`). `lifecycle` brings it up and takes it down.

use ferry_core::fastmap::FastMap;
use std::any::Any;
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard};

use ferry_data::datatype::Datatype;
use ferry_core::engine::Engine;
use ferry_core::Job;

use super::comm::Ranks;
use super::elision;
use super::coll_selection::Selection;
use super::comm::Comm;
use super::records::{Hooks, Members, ProgressThread, TypeInfo, UserOp};
use super::request::{done_recv_table, request_table, ApiReq, Body, DoneRecv, Persistent, Starter};
use super::{Table, CONTEXT_BLOCK};
use crate::consts::*;
use crate::error::{err, MpiError, MpiResult};

pub(crate) const UNINIT: u8 = 0;
pub(crate) const ACTIVE: u8 = 1;
pub(crate) const DONE: u8 = 2;

/// The World Model (`MPI_Init` .. `MPI_Finalize`); `lifecycle` moves it on.
pub(crate) static STATE: AtomicU8 = AtomicU8::new(UNINIT);
/// Live MPI-4 sessions: the runtime's other users. It comes up with the first of the World
/// Model or a session and goes down when the last of them ends.
pub(crate) static SESSIONS: AtomicUsize = AtomicUsize::new(0);
/// The runtime went down: the job's start-up cannot run twice in one process.
pub(crate) static GONE: AtomicBool = AtomicBool::new(false);
static RT: Mutex<Option<Runtime>> = Mutex::new(None);
/// The thread level and the main thread of the runtime that is up, readable without it: any
/// thread may ask (MPI_Query_thread, MPI_Is_thread_main) while another is inside MPI.
static THREADS: Mutex<Option<(i32, std::thread::ThreadId)>> = Mutex::new(None);
/// The monotonic clock's reading, in seconds, at the process's first use of `wtime` (the
/// bits of an `f64`; 0 until then).
static EPOCH: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// Take the runtime's mutex. While calls skip it (`elision`), that ends for good first, and
/// a call that skipped it is waited for: so never from inside an MPI call on this thread.
pub fn lock() -> MutexGuard<'static, Option<Runtime>> {
    loop {
        elision::stop();
        let guard = RT.lock().unwrap_or_else(|p| p.into_inner());
        // MPI_Init may have started the mode while this thread waited for the mutex.
        if elision::locking() {
            elision::wait_out();
            return guard;
        }
    }
}

/// The runtime, unless another thread holds it now (or a call that skipped the mutex is
/// inside). Ends the mode of skipping it, as [`lock`] does.
pub fn try_lock() -> Option<MutexGuard<'static, Option<Runtime>>> {
    elision::stop();
    let guard = match RT.try_lock() {
        Ok(g) => g,
        Err(std::sync::TryLockError::Poisoned(p)) => p.into_inner(),
        Err(std::sync::TryLockError::WouldBlock) => return None,
    };
    (elision::locking() && !elision::inside()).then_some(guard)
}

/// The thread level and the main thread, while the runtime is up.
pub fn thread_facts() -> Option<(i32, std::thread::ThreadId)> {
    *THREADS.lock().unwrap_or_else(|p| p.into_inner())
}

/// Record (runtime up) or forget (down) what [`thread_facts`] answers.
pub fn set_thread_facts(facts: Option<(i32, std::thread::ThreadId)>) {
    *THREADS.lock().unwrap_or_else(|p| p.into_inner()) = facts;
}

pub fn initialized() -> bool {
    STATE.load(Ordering::Acquire) != UNINIT
}

pub fn finalized() -> bool {
    STATE.load(Ordering::Acquire) == DONE
}

/// Why no runtime is up, for the message of a call made then.
pub fn why_down() -> &'static str {
    if finalized() {
        "after MPI_Finalize"
    } else if GONE.load(Ordering::Acquire) {
        "after the last MPI_Session_finalize"
    } else {
        "before MPI_Init or MPI_Session_init"
    }
}

/// Seconds since the process's first use of the clock (MPI_Wtime is local, not global): one
/// read of the monotonic clock and a subtraction, since programs time short calls with it.
#[inline]
pub fn wtime() -> f64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: a valid clock and a timespec of ours; CLOCK_MONOTONIC cannot fail.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    let now = ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9;
    let epoch = EPOCH.load(Ordering::Relaxed);
    if epoch != 0 {
        return now - f64::from_bits(epoch);
    }
    let _ = EPOCH.compare_exchange(0, now.to_bits(), Ordering::Relaxed, Ordering::Relaxed);
    now - f64::from_bits(EPOCH.load(Ordering::Relaxed))
}

/// A user's attached buffer for buffered sends, and what occupies it.
#[derive(Default)]
pub struct BsendBuffer {
    pub addr: usize,
    pub size: usize,
    /// (engine request, bytes reserved, packed copy) of buffered sends still in flight.
    pub pending: Vec<(u64, usize, Vec<u8>)>,
}

/// A message taken by MPI_Mprobe, waiting for MPI_Mrecv.
pub struct ApiMessage {
    pub mid: u64,
    pub comm: i32,
}

pub struct Runtime {
    pub engine: Engine,
    /// The ports this process opened (`MPI_Open_port`) and not yet closed.
    pub ports: Vec<ferry_core::Port>,
    /// The intercommunicator to the parents of a spawned job (`MPI_Comm_get_parent`), or
    /// `MPI_COMM_NULL`.
    pub parent: i32,
    /// `MPI_UNIVERSE_SIZE`, as the launcher said at start.
    pub universe: i32,
    /// This rank's place in the job, and its line to the launcher.
    job: Job,
    pub world_rank: u32,
    pub comms: Table<Comm>,
    /// Groups by handle (`MPI_GROUP_EMPTY` is not in the table).
    pub groups: FastMap<i32, Members>,
    pub next_group: i32,
    /// The next communicator context id this process has never used (ids come in pairs:
    /// point-to-point, then internal collective traffic).
    pub next_context: u32,
    /// Derived datatypes, and whether each is committed.
    pub types: Table<(Datatype, bool)>,
    /// Contents and names of datatypes (`MPI_Type_get_contents`, `MPI_Type_set_name`).
    pub type_info: FastMap<i32, TypeInfo>,
    predefined: FastMap<i32, Datatype>,
    /// The shape of the predefined type used last (they never change): most programs send
    /// one type over and over.
    shape_cache: Option<(i32, usize, bool)>,
    pub reqs: Table<ApiReq>,
    /// Receives complete from the start, by their own handles (`request::DoneRecv`).
    pub done_recvs: Table<DoneRecv>,
    pub msgs: Table<ApiMessage>,
    /// Engine ids a wait collects (kept to be reused: a wait allocates nothing).
    pub wait_ids: Vec<u64>,
    pub bsend: BsendBuffer,
    pub thread_level: i32,
    pub main_thread: std::thread::ThreadId,
    /// Freed requests whose buffers the engine still writes or reads (kept until finalize).
    pub orphans: Vec<(u64, ApiReq)>,
    /// The asynchronous progress thread, when `FERRY_ASYNC_PROGRESS=1`.
    pub progress: Option<ProgressThread>,
    /// User-defined reduction operations by handle.
    pub ops: FastMap<i32, UserOp>,
    pub next_op: i32,
    /// The collective knobs (read and checked at init) and statistics.
    pub coll: Selection,
    /// Info objects by handle.
    /// One-sided communication windows by handle: the state of the feature (`win::Wins`),
    /// which holds the target side it shares with the engine's service; the runtime owns it
    /// and drops it with the engine, and only `win` looks inside.
    pub wins: Box<dyn Any + Send>,
    /// Open files: the state of the I/O feature (`io::Files`), made when the first file
    /// opens; only `io` looks inside.
    pub files: Box<dyn Any + Send>,
    /// What the features above lend the requests, the communicators and the runtime's end.
    pub hooks: Hooks,
    /// Fault-tolerant MPI: failures known, acknowledgements, agreements (`fault.rs`).
    pub fault: super::fault::FaultState,
}

// SAFETY: the raw pointers inside (user buffers of pending requests) are valid by MPI's
// contract whichever thread completes them, and all access goes through the one mutex.
unsafe impl Send for Runtime {}

impl Runtime {
    /// The runtime of a job that has just started: the predefined communicators (world and
    /// self), empty tables, and the features' hooks and window state.
    pub fn new(job: Job, engine: Engine, thread_level: i32, coll: Selection, hooks: Hooks, wins: Box<dyn Any + Send>) -> Runtime {
        let (rank, size) = (job.rank(), job.size());
        let mut comms = super::table(super::kinds::COMM);
        comms.insert(MPI_COMM_WORLD, Comm::new(0, (0..size).collect(), rank));
        // Each context pair is followed by its idup block (`Comm::new`).
        let self_ctx = CONTEXT_BLOCK;
        comms.insert(MPI_COMM_SELF, Comm::new(self_ctx, vec![rank], rank));
        Runtime {
            engine,
            ports: Vec::new(),
            parent: MPI_COMM_NULL,
            universe: i32::try_from(size).unwrap_or(i32::MAX),
            job,
            world_rank: rank,
            comms,
            groups: FastMap::default(),
            next_group: 0,
            next_context: self_ctx + CONTEXT_BLOCK,
            types: super::table(super::kinds::DATATYPE),
            type_info: FastMap::default(),
            predefined: FastMap::default(),
            shape_cache: None,
            reqs: request_table(),
            done_recvs: done_recv_table(),
            msgs: super::table(super::kinds::MESSAGE),
            wait_ids: Vec::new(),
            bsend: BsendBuffer::default(),
            thread_level,
            main_thread: std::thread::current().id(),
            orphans: Vec::new(),
            progress: None,
            ops: FastMap::default(),
            next_op: 0,
            coll,
            wins,
            files: Box::new(()),
            hooks,
            fault: super::fault::FaultState::default(),
        }
    }

    /// This rank's place in the job, and its line to the launcher (for the runtime's end).
    pub fn job(&mut self) -> &mut Job {
        &mut self.job
    }
}

#[cold]
fn bad_comm(h: i32) -> MpiError {
    if h == MPI_COMM_NULL {
        MpiError::new(MPI_ERR_COMM, "MPI_COMM_NULL is not a communicator")
    } else {
        MpiError::new(MPI_ERR_COMM, format!("invalid communicator handle {h:#x}"))
    }
}

impl Runtime {
    #[inline]
    pub fn comm(&self, h: i32) -> MpiResult<&Comm> {
        match self.comms.get(&h) {
            Some(c) => Ok(c),
            None => Err(bad_comm(h)),
        }
    }

    pub fn errhandler_of(&self, comm: i32) -> i32 {
        self.comms.get(&comm).or_else(|| self.comms.get(&MPI_COMM_WORLD)).map_or(MPI_ERRORS_ARE_FATAL, |c| c.errhandler)
    }

    pub fn add_comm(&mut self, c: Comm) -> i32 {
        self.comms.add(c)
    }

    /// A committed datatype usable for communication.
    pub fn datatype(&mut self, h: i32) -> MpiResult<Datatype> {
        if let Some((t, committed)) = self.types.get(&h) {
            return if *committed { Ok(t.clone()) } else { err(MPI_ERR_TYPE, format!("datatype {h:#x} is not committed")) };
        }
        self.any_datatype(h)
    }

    /// Whether anything is in flight that progress outside MPI calls could move.
    pub fn has_pending_work(&self) -> bool {
        self.engine.has_requests()
    }

    /// Size and contiguity of a committed datatype, without taking a reference to it (the
    /// hot path of every send and receive).
    #[inline]
    pub fn type_shape(&mut self, h: i32) -> MpiResult<(usize, bool)> {
        if let Some((c, size, contiguous)) = self.shape_cache {
            if c == h {
                return Ok((size, contiguous));
            }
        }
        self.type_shape_lookup(h)
    }

    fn type_shape_lookup(&mut self, h: i32) -> MpiResult<(usize, bool)> {
        match self.types.get(&h) {
            Some((t, true)) => return Ok((t.size(), t.is_contiguous())),
            Some((_, false)) => return err(MPI_ERR_TYPE, format!("datatype {h:#x} is not committed")),
            None => {}
        }
        let shape = match self.predefined.get(&h) {
            Some(t) => (t.size(), t.is_contiguous()),
            None => {
                let t = self.any_datatype(h)?;
                (t.size(), t.is_contiguous())
            }
        };
        if self.predefined.contains_key(&h) {
            self.shape_cache = Some((h, shape.0, shape.1));
        }
        Ok(shape)
    }

    /// A datatype, committed or not (for constructors and queries).
    pub fn any_datatype(&mut self, h: i32) -> MpiResult<Datatype> {
        if let Some((t, _)) = self.types.get(&h) {
            return Ok(t.clone());
        }
        if let Some(t) = self.predefined.get(&h) {
            return Ok(t.clone());
        }
        if h == MPI_DATATYPE_NULL {
            return err(MPI_ERR_TYPE, "MPI_DATATYPE_NULL is not a datatype");
        }
        match crate::predefined::predefined_datatype(h) {
            Some((_, t)) => {
                self.predefined.insert(h, t.clone());
                Ok(t)
            }
            None => err(MPI_ERR_TYPE, format!("invalid datatype handle {h:#x}")),
        }
    }

    pub fn is_predefined_type(h: i32) -> bool {
        crate::predefined::predefined_datatype(h).is_some()
    }

    pub fn add_type(&mut self, t: Datatype) -> i32 {
        // 0x8c00000x are MPICH's pair types; derived types live in the "indirect" range.
        self.types.add((t, false))
    }

    pub fn add_req(&mut self, r: ApiReq) -> i32 {
        match r.shared_handle() {
            Some(h) => h,
            None => self.reqs.add(r),
        }
    }

    /// A new persistent request on `comm`, inactive until MPI_Start runs `start`.
    pub fn add_persistent(&mut self, comm: i32, start: Starter) -> i32 {
        self.add_req(ApiReq { body: Body::Persistent(Box::new(Persistent { start, active: None })), comm, group: Ranks::None, unpack: None, keep: None })
    }

    pub fn add_msg(&mut self, m: ApiMessage) -> i32 {
        self.msgs.add(m)
    }

    /// The world ranks on this host, ascending (for `MPI_Comm_split_type`).
    pub fn host_ranks(&self) -> &[u32] {
        self.job.host_ranks()
    }

    /// Where the world ranks `group` run, as one number per host, when the job spans
    /// several hosts (the hierarchical collectives' `Params::hosts`); `None` on one host.
    pub fn hosts_of(&self, group: &[u32]) -> Option<std::sync::Arc<Vec<u32>>> {
        self.job.spans_hosts().then(|| std::sync::Arc::new(group.iter().map(|&w| self.job.host_of(w)).collect()))
    }

    /// The host's name, for `MPI_Get_processor_name`.
    pub fn processor_name(&self) -> &str {
        self.job.processor_name()
    }

    /// End the whole job: tell the launcher, then exit with `code`.
    pub fn abort_job(&mut self, msg: &str, code: i32) -> ! {
        eprintln!("ferry[rank {}]: {msg}", self.world_rank);
        // Exiting non-zero ends the job too, if the launcher cannot be told.
        let _ = self.job.abort(code, msg);
        std::process::exit(if code == 0 { 1 } else { code })
    }
}

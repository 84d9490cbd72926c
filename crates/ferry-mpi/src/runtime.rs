//! The process-wide MPI state: the engine, the PMI client, and the handle tables. One mutex
//! guards it all (the library provides MPI_THREAD_SERIALIZED).

use ferry_core::fastmap::FastMap;
use std::net::{IpAddr, Ipv4Addr};
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};

use ferry_core::bootstrap::pmi_client::PmiClient;
use ferry_core::config;
use ferry_data::datatype::Datatype;
use ferry_core::engine::{Engine, EngineConfig, ShmConfig};
use ferry_core::transport::shm::{self, HostConfig, HostShm};
use ferry_core::transport::business_card::{sanitize_name, BusinessCard, GlobalId};
use ferry_core::transport::tcp::{choose_address, interfaces, listen};

use crate::coll::selection::Selection;
use crate::comm::Comm;
use crate::completion::ApiReq;
use crate::consts::*;
use crate::error::{err, MpiError, MpiResult};
use crate::op::UserOp;

const UNINIT: u8 = 0;
const ACTIVE: u8 = 1;
const DONE: u8 = 2;

static STATE: AtomicU8 = AtomicU8::new(UNINIT);
static RT: Mutex<Option<Runtime>> = Mutex::new(None);
static EPOCH: OnceLock<Instant> = OnceLock::new();

pub fn lock() -> MutexGuard<'static, Option<Runtime>> {
    RT.lock().unwrap_or_else(|p| p.into_inner())
}

/// The runtime, unless another thread holds it now.
pub fn try_lock() -> Option<MutexGuard<'static, Option<Runtime>>> {
    match RT.try_lock() {
        Ok(g) => Some(g),
        Err(std::sync::TryLockError::Poisoned(p)) => Some(p.into_inner()),
        Err(std::sync::TryLockError::WouldBlock) => None,
    }
}

pub fn initialized() -> bool {
    STATE.load(Ordering::Acquire) != UNINIT
}

pub fn finalized() -> bool {
    STATE.load(Ordering::Acquire) == DONE
}

/// Seconds since the process's first use of the clock (MPI_Wtime is local, not global).
pub fn wtime() -> f64 {
    EPOCH.get_or_init(Instant::now).elapsed().as_secs_f64()
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
    pmi: Option<PmiClient>,
    pub world_rank: u32,
    pub comms: FastMap<i32, Comm>,
    next_comm: i32,
    /// The next communicator context id this process has never used (ids come in pairs:
    /// point-to-point, then internal collective traffic).
    pub next_context: u32,
    pub types: FastMap<i32, (Datatype, bool)>,
    next_type: i32,
    predefined: FastMap<i32, Datatype>,
    pub reqs: FastMap<i32, ApiReq>,
    next_req: i32,
    pub msgs: FastMap<i32, ApiMessage>,
    next_msg: i32,
    pub bsend: BsendBuffer,
    pub thread_level: i32,
    pub main_thread: std::thread::ThreadId,
    pub processor_name: String,
    /// Freed requests whose buffers the engine still writes or reads (kept until finalize).
    pub orphans: Vec<(u64, ApiReq)>,
    /// The asynchronous progress thread, when `FERRY_ASYNC_PROGRESS=1`.
    pub progress: Option<crate::progress::ProgressThread>,
    /// User-defined reduction operations by handle.
    pub ops: FastMap<i32, UserOp>,
    pub next_op: i32,
    /// The collective knobs (read and checked at init) and statistics.
    pub coll: Selection,
}

// SAFETY: the raw pointers inside (user buffers of pending requests) are valid by MPI's
// contract whichever thread completes them, and all access goes through the one mutex.
unsafe impl Send for Runtime {}

fn parse_knob<T>(r: Result<T, config::BadValue>) -> MpiResult<T> {
    r.map_err(|e| MpiError::new(MPI_ERR_OTHER, e.to_string()))
}

/// Bring the runtime up: PMI, listening socket, business cards, engine, predefined comms.
pub fn init(required: i32) -> MpiResult<i32> {
    let mut guard = lock();
    match STATE.load(Ordering::Acquire) {
        ACTIVE => return err(MPI_ERR_OTHER, "MPI_Init called twice"),
        DONE => return err(MPI_ERR_OTHER, "MPI_Init called after MPI_Finalize"),
        _ => {}
    }
    wtime();
    // Before anything else: a bad collective knob fails every rank at once, with a message.
    let coll = Selection::from_env().map_err(|e| MpiError::new(MPI_ERR_ARG, e))?;
    let mut pmi = PmiClient::from_env().map_err(|e| MpiError::new(MPI_ERR_OTHER, format!("PMI: {e}")))?;
    let (rank, size) = match &pmi {
        Some(p) => (p.rank(), p.size()),
        None => (0, 1),
    };
    ferry_core::log::set_prefix(format!("ferry[rank {rank}]"));
    let secret = match pmi.as_mut() {
        Some(p) => p.job_secret().map_err(|e| MpiError::new(MPI_ERR_OTHER, format!("PMI: {e}")))?.into_bytes(),
        None => {
            let mut s = vec![0u8; 32];
            getrandom_bytes(&mut s);
            s
        }
    };

    let spec = config::IFACE.value();
    let ifs = interfaces();
    let advertise = if size == 1 { Ipv4Addr::LOCALHOST } else { choose_address(&spec, &ifs).map_err(|e| MpiError::new(MPI_ERR_OTHER, e.to_string()))? };
    let bind = if spec.trim().is_empty() { Ipv4Addr::UNSPECIFIED } else { advertise };
    let range = parse_knob(config::PORT_RANGE.port_range())?;
    let listener = listen(IpAddr::V4(bind), IpAddr::V4(advertise), range).map_err(|e| MpiError::new(MPI_ERR_OTHER, e.to_string()))?;
    let host = sanitize_name(&if config::HOST_ID.is_set() { config::HOST_ID.value() } else { hostname() });
    let front = if config::FRONT_NODE.is_set() { sanitize_name(&config::FRONT_NODE.value()) } else { host.clone() };
    let me = BusinessCard { addr: listener.advertise, id: GlobalId { front, host: host.clone(), pid: std::process::id() } };
    ferry_core::info!("init", "rank {rank} of {size} listening on {}", me.addr);

    let cards = match pmi.as_mut() {
        None => vec![me],
        Some(p) => {
            let pmi_err = |e: ferry_core::bootstrap::PmiError| MpiError::new(MPI_ERR_OTHER, format!("PMI: {e}"));
            p.put(&format!("ferry-card-{rank}"), &me.encode()).map_err(pmi_err)?;
            p.barrier().map_err(pmi_err)?;
            let mut cards = Vec::with_capacity(size as usize);
            for r in 0..size {
                let v = p.get(&format!("ferry-card-{r}")).map_err(pmi_err)?.ok_or_else(|| MpiError::new(MPI_ERR_OTHER, format!("rank {r} published no business card")))?;
                cards.push(BusinessCard::decode(&v).map_err(|e| MpiError::new(MPI_ERR_OTHER, e.to_string()))?);
            }
            cards
        }
    };

    let eager_limit = parse_knob(config::EAGER_LIMIT.bytes())? as usize;
    let spin = Duration::from_micros(parse_knob(config::SPIN_US.u64())?);
    let connect_timeout = Duration::from_secs(parse_knob(config::CONNECT_TIMEOUT.u64())?.max(1));
    let tcp_sndbuf = parse_knob(config::TCP_SNDBUF.bytes())? as usize;
    let use_shm = parse_knob(config::TRANSPORTS.transports())?;
    let shm_eager_limit = parse_knob(config::SHM_EAGER_LIMIT.bytes())? as usize;
    let ring_size = parse_knob(config::SHM_RING_SIZE.bytes())? as usize;
    let async_progress = parse_knob(config::ASYNC_PROGRESS.flag())?;
    let want_single_copy = parse_knob(config::shm_single_copy())?;
    // More ranks than cores on this host: waits often end in a sleep, and a membarrier per
    // sleep would cost more than the fence per message it saves.
    let mine = &cards[rank as usize].id;
    let locals: Vec<u32> = (0..size).filter(|&r| cards[r as usize].id.front == mine.front && cards[r as usize].id.host == mine.host).collect();
    let oversubscribed = locals.len() > std::thread::available_parallelism().map_or(1, |n| n.get());
    if oversubscribed {
        shm::doorbell::use_symmetric_fences();
    }
    let shm = match (use_shm, pmi.as_ref()) {
        (true, Some(p)) => join_host(p.kvsname(), rank, locals, &cards[rank as usize].id, ring_size, shm_eager_limit, want_single_copy, connect_timeout)?,
        _ => None,
    };
    let mut engine = Engine::new(EngineConfig { rank, size, secret, cards, listener: listener.socket, eager_limit, spin, connect_timeout, tcp_sndbuf, shm })
        .map_err(|e| MpiError::new(MPI_ERR_OTHER, format!("engine: {e}")))?;
    engine.set_oversubscribed(oversubscribed);

    let mut comms = FastMap::default();
    comms.insert(MPI_COMM_WORLD, Comm::new(0, (0..size).collect(), rank));
    comms.insert(MPI_COMM_SELF, Comm::new(2, vec![rank], rank));
    let provided = required.clamp(MPI_THREAD_SINGLE, MPI_THREAD_SERIALIZED);
    *guard = Some(Runtime {
        engine,
        pmi,
        world_rank: rank,
        comms,
        next_comm: 0,
        next_context: 4,
        types: FastMap::default(),
        next_type: 0,
        predefined: FastMap::default(),
        reqs: FastMap::default(),
        next_req: 0,
        msgs: FastMap::default(),
        next_msg: 0,
        bsend: BsendBuffer::default(),
        thread_level: provided,
        main_thread: std::thread::current().id(),
        processor_name: hostname(),
        orphans: Vec::new(),
        progress: None,
        ops: FastMap::default(),
        next_op: 0,
        coll,
    });
    if async_progress {
        let rt = guard.as_mut().expect("just set");
        match crate::progress::ProgressThread::start(rt) {
            Ok(t) => rt.progress = Some(t),
            Err(e) => {
                *guard = None;
                return err(MPI_ERR_OTHER, format!("cannot start the progress thread: {e}"));
            }
        }
    }
    STATE.store(ACTIVE, Ordering::Release);
    Ok(provided)
}

/// Ring size when `FERRY_SHM_RING_SIZE` is 0: 256 KiB, halved while the host's rings would
/// take more than 64 MiB (down to 16 KiB).
fn auto_ring_size(local_ranks: usize) -> usize {
    let rings = local_ranks * local_ranks.saturating_sub(1);
    let mut cap = 256 << 10;
    while cap > 16 << 10 && cap * rings > 64 << 20 {
        cap /= 2;
    }
    cap
}

/// Join the shared memory of `locals`, the ranks whose global id names our host (`mine`:
/// same front node and host), when there are others.
#[allow(clippy::too_many_arguments)]
fn join_host(job: &str, rank: u32, locals: Vec<u32>, mine: &GlobalId, ring_size: usize, eager_limit: usize, want_single_copy: bool, timeout: Duration) -> MpiResult<Option<ShmConfig>> {
    if locals.len() < 2 {
        return Ok(None);
    }
    let ring_capacity = if ring_size == 0 { auto_ring_size(locals.len()) } else { ring_size };
    if !shm::ring::valid_capacity(ring_capacity) {
        return err(MPI_ERR_OTHER, format!("FERRY_SHM_RING_SIZE={ring_size} is invalid: expected 0 or a power of two from 4096 to 2 GiB"));
    }
    // Peers may read our buffers only if we let them (Yama); the probe then tells whether the
    // kernel lets us read theirs. Each side decides for itself: a receiver that may not read
    // ignores the address and asks for the data through the ring.
    let single_copy = want_single_copy && shm::permit_peer_reads().is_ok() && shm::cma_available();
    let job_id = shm::host_job_id(job, &format!("{}|{}", mine.front, mine.host));
    let (host, links) = HostShm::join(HostConfig { job_id, locals, me: rank, ring_capacity, timeout })
        .map_err(|e| MpiError::new(MPI_ERR_OTHER, format!("shared memory: {e} (FERRY_TRANSPORTS=tcp does without)")))?;
    ferry_core::info!("init", "sharing memory with {} local ranks (rings of {} KiB, single copy: {single_copy})", host.locals.len() - 1, ring_capacity >> 10);
    Ok(Some(ShmConfig { host, links, eager_limit, single_copy }))
}

/// Orderly end: flush every queued frame, wait for every rank, leave PMI.
pub fn finalize() -> MpiResult<()> {
    // The progress thread needs the lock to stop: join it first.
    let thread = lock().as_mut().and_then(|rt| rt.progress.take());
    if let Some(t) = thread {
        t.stop();
    }
    let mut guard = lock();
    let Some(rt) = guard.as_mut() else { return err(MPI_ERR_OTHER, "MPI_Finalize called before MPI_Init") };
    if let Some(report) = rt.coll.report(rt.world_rank) {
        eprint!("{report}");
    }
    crate::p2p::reap_bsends(rt, true)?;
    // Sends the user freed are waited for inside the engine; freed receives that did
    // complete are unpacked, the others are dropped with the runtime.
    rt.engine.finalize()?;
    rt.reap_orphans();
    if let Some(p) = rt.pmi.as_mut() {
        p.barrier().map_err(|e| MpiError::new(MPI_ERR_OTHER, format!("PMI: {e}")))?;
        p.finalize().map_err(|e| MpiError::new(MPI_ERR_OTHER, format!("PMI: {e}")))?;
    }
    *guard = None;
    STATE.store(DONE, Ordering::Release);
    Ok(())
}

fn getrandom_bytes(b: &mut [u8]) {
    getrandom::getrandom(b).expect("the kernel's random source is available");
}

pub fn hostname() -> String {
    let mut buf = [0u8; 256];
    // SAFETY: gethostname writes at most buf.len() bytes into buf.
    let rc = unsafe { libc::gethostname(buf.as_mut_ptr() as *mut libc::c_char, buf.len()) };
    if rc != 0 {
        return "localhost".into();
    }
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    String::from_utf8_lossy(&buf[..end]).into_owned()
}

impl Runtime {
    pub fn comm(&self, h: i32) -> MpiResult<&Comm> {
        match self.comms.get(&h) {
            Some(c) => Ok(c),
            None if h == MPI_COMM_NULL => err(MPI_ERR_COMM, "MPI_COMM_NULL is not a communicator"),
            None => err(MPI_ERR_COMM, format!("invalid communicator handle {h:#x}")),
        }
    }

    pub fn errhandler_of(&self, comm: i32) -> i32 {
        self.comms.get(&comm).or_else(|| self.comms.get(&MPI_COMM_WORLD)).map_or(MPI_ERRORS_ARE_FATAL, |c| c.errhandler)
    }

    pub fn add_comm(&mut self, c: Comm) -> i32 {
        let h = 0x84000000u32 as i32 | self.next_comm;
        self.next_comm += 1;
        self.comms.insert(h, c);
        h
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
    pub fn type_shape(&mut self, h: i32) -> MpiResult<(usize, bool)> {
        match self.types.get(&h) {
            Some((t, true)) => return Ok((t.size(), t.is_contiguous())),
            Some((_, false)) => return err(MPI_ERR_TYPE, format!("datatype {h:#x} is not committed")),
            None => {}
        }
        if let Some(t) = self.predefined.get(&h) {
            return Ok((t.size(), t.is_contiguous()));
        }
        let t = self.any_datatype(h)?;
        Ok((t.size(), t.is_contiguous()))
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
        let h = 0xcc000000u32 as i32 | self.next_type;
        self.next_type += 1;
        self.types.insert(h, (t, false));
        h
    }

    pub fn add_req(&mut self, r: ApiReq) -> i32 {
        let h = loop {
            self.next_req = (self.next_req + 1) & 0x00ff_ffff;
            let h = 0xac000000u32 as i32 | self.next_req;
            if !self.reqs.contains_key(&h) {
                break h;
            }
        };
        self.reqs.insert(h, r);
        h
    }

    pub fn add_msg(&mut self, m: ApiMessage) -> i32 {
        self.next_msg = (self.next_msg + 1) & 0x00ff_ffff;
        let h = 0xad000000u32 as i32 | self.next_msg;
        self.msgs.insert(h, m);
        h
    }

    /// End the whole job: tell the launcher through PMI, then exit with `code`.
    pub fn abort_job(&mut self, msg: &str, code: i32) -> ! {
        eprintln!("ferry[rank {}]: {msg}", self.world_rank);
        if let Some(p) = self.pmi.as_mut() {
            let _ = p.abort(code, msg);
        }
        std::process::exit(if code == 0 { 1 } else { code })
    }
}

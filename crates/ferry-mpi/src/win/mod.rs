//! One-sided communication (MPI windows): the handle table, creation and freeing.
//!
//! Mechanics: a window agrees a fresh context id pair among the members of its communicator,
//! as a duplicate would. An origin sends every operation to the target as one message on
//! the first id ([`codec`]); the target's engine service ([`target`]) applies it to the
//! window's memory when the target next progresses, and answers gets, fetches and
//! synchronisation requests on the second id. The second id also carries the window's own
//! collective exchanges (fence, free) on negative tags, which answers never use.
//!
//! The submodules: [`ops`] the communication calls, [`sync`] fence, PSCW and passive-target
//! synchronisation, [`objects`] attributes, names, info, error handlers, groups and dynamic
//! memory.

pub(crate) mod atomic;
pub mod codec;
pub(crate) mod control;
pub(crate) mod objects;
pub(crate) mod lean;
pub(crate) mod ops;
pub(crate) mod shared;
pub(crate) mod sync;
pub mod target;

use std::os::raw::{c_int, c_void};
use std::sync::Arc;

use ferry_core::fastmap::FastMap;

use crate::objects::request::Unpack;
use crate::consts::*;
use crate::error::{err, MpiError, MpiResult};
use crate::objects::table::Table;
use crate::objects::Runtime;
use target::{Exposure, Memory, Shared};
pub use objects::{is_window_key, window_attr};

/// Tags of the window's collective exchanges on its second context.
pub(crate) const TAG_FENCE: i32 = -2;
const TAG_FREE: i32 = -3;
/// `MPI_Win_post` tells each origin of its group with this tag.
pub(crate) const TAG_POST: i32 = -4;
/// The exchanges of `MPI_Win_allocate_shared`.
pub(crate) const TAG_SHARED: i32 = -5;

/// An answer this origin waits for.
pub struct Reply {
    /// Window rank of the target.
    pub target: usize,
    pub rid: u64,
    pub unpack: Option<Box<Unpack>>,
    /// `MPI_Rget` and kin: the handle of the request that takes the answer (synchronisation
    /// only waits for it).
    pub by_request: Option<c_int>,
}

/// The access epoch an origin is in.
#[derive(Default)]
pub struct Epoch {
    /// Between two fences (the last one did not assert `MPI_MODE_NOSUCCEED`).
    pub fence: bool,
    /// `MPI_Win_start`: the window ranks of the targets.
    pub start: Option<Vec<usize>>,
    /// `MPI_Win_lock`: target -> how this origin holds its lock.
    pub locks: FastMap<usize, Held>,
    /// `MPI_Win_lock_all`, with its `MPI_MODE_NOCHECK`.
    pub lock_all: Option<bool>,
}

/// How an origin holds a target's lock (`MPI_Win_lock`).
#[derive(Clone, Copy)]
pub struct Held {
    /// Taken without asking (`MPI_MODE_NOCHECK`): nothing to release.
    pub nocheck: bool,
    pub exclusive: bool,
}

impl Epoch {
    fn allows(&self, target: usize) -> bool {
        self.fence || self.lock_all.is_some() || self.locks.contains_key(&target) || self.start.as_ref().is_some_and(|s| s.contains(&target))
    }

    fn passive(&self, target: usize) -> bool {
        self.lock_all.is_some() || self.locks.contains_key(&target)
    }
}

/// A window as this process sees it.
pub struct Win {
    pub ctx: u32,
    /// World ranks of the members, in window rank order, and this process's rank.
    pub group: Arc<Vec<u32>>,
    pub rank: usize,
    /// Every member's window size in bytes and displacement unit.
    pub sizes: Vec<u64>,
    pub disp_units: Vec<u64>,
    /// Every member's process id (names the shared memory of a shared window).
    pub pids: Vec<u64>,
    pub flavor: c_int,
    pub base: *mut c_void,
    /// Memory of `MPI_Win_allocate`, freed with the window.
    _owned: Option<Vec<u128>>,
    /// A shared window's state for the calls that take no runtime (`lean`); before
    /// `shared_mem`, so that it leaves their table before the memory is unmapped.
    pub lean: Option<lean::Registered>,
    /// `MPI_Win_allocate_shared`: the memory every member maps.
    pub shared_mem: Option<shared::SharedMem>,
    pub errhandler: c_int,
    pub name: String,
    pub hints: crate::objects::records::Hints,
    /// What `MPI_Win_get_attr` points to.
    attr_size: Box<MPI_Aint>,
    attr_disp_unit: Box<c_int>,
    attr_flavor: Box<c_int>,
    attr_model: Box<c_int>,
    next_reply: i32,
    pub replies: Vec<Reply>,
    /// Requests sent and still in the engine's hands, with their bytes.
    pub sends: Vec<(u64, Vec<u8>)>,
    /// Targets given operations since their last completion.
    pub dirty: Vec<bool>,
    pub epoch: Epoch,
    /// `MPI_Win_post`: how many origins will say `Complete`.
    pub posted: Option<usize>,
    /// The progress thread serves this window's passive targets.
    served: bool,
    /// Locks taken in the shared control block since the window was made (see
    /// `sync::LOCKS_PER_PASS`).
    pub quiet_locks: u32,
}

impl Win {
    fn reply_tag(&mut self) -> i32 {
        self.next_reply = (self.next_reply + 1) & 0x3fff_ffff;
        self.next_reply
    }

    /// Plain stores went into the shared memory (a fence must pass before a flush or an
    /// unlock returns); nothing to remember for memory that is not shared.
    pub fn mark_unfenced(&self) {
        if let Some(l) = &self.lean {
            l.mark_unfenced();
        }
    }

    /// Whether plain stores went into the shared memory since the last fence; forgets them.
    pub fn take_unfenced(&self) -> bool {
        self.lean.as_ref().is_some_and(|l| l.take_unfenced())
    }

    /// The window rank `r`, checked.
    pub fn target(&self, r: c_int) -> MpiResult<usize> {
        if (0..self.group.len() as c_int).contains(&r) {
            Ok(r as usize)
        } else {
            err(MPI_ERR_RANK, format!("invalid target rank {r} (window of {} ranks)", self.group.len()))
        }
    }
}

/// The windows of a process.
pub struct Wins {
    /// By handle: `0xa0000000`, a generation and a slot (a look-up is an index: the atomics
    /// of `lean` make windows a hot path).
    pub table: Table<Win>,
    /// The target side, shared with the engine's service.
    pub shared: Shared,
    service: bool,
    /// The progress thread runs because a window started it (it stops with the last one).
    thread: bool,
}

impl Default for Wins {
    fn default() -> Wins {
        // 64 Ki windows at once, 1 Ki generations; no predefined window (`MPI_WIN_NULL`,
        // 0x20000000, is in neither range).
        Wins { table: Table::new(0xa000_0000, 16, 0x6000_0000), shared: Shared::default(), service: false, thread: false }
    }
}

// SAFETY: the raw pointers are window memory and user buffers that MPI keeps valid, used
// only under the runtime's lock.
unsafe impl Send for Wins {}

/// The windows' state in the runtime, which only this feature looks inside.
pub(crate) fn wins(rt: &Runtime) -> &Wins {
    rt.wins.downcast_ref().expect("the runtime holds the windows' state from its start")
}

pub(crate) fn wins_mut(rt: &mut Runtime) -> &mut Wins {
    rt.wins.downcast_mut().expect("the runtime holds the windows' state from its start")
}

/// Window `h` and the engine at once: a window's traffic goes out while the window is updated.
pub(crate) fn win_and_engine(rt: &mut Runtime, h: MPI_Win) -> MpiResult<(&mut Win, &mut ferry_core::engine::Engine)> {
    let Runtime { wins, engine, .. } = rt;
    let ws: &mut Wins = wins.downcast_mut().expect("the runtime holds the windows' state from its start");
    let w = ws.table.get_mut(&h).ok_or_else(|| MpiError::new(MPI_ERR_WIN, "window vanished"))?;
    Ok((w, engine))
}

impl Runtime {
    pub fn win(&self, h: MPI_Win) -> MpiResult<&Win> {
        wins(self).table.get(&h).ok_or_else(|| bad_win(h))
    }

    pub fn win_mut(&mut self, h: MPI_Win) -> MpiResult<&mut Win> {
        wins_mut(self).table.get_mut(&h).ok_or_else(|| bad_win(h))
    }
}

fn bad_win(h: MPI_Win) -> MpiError {
    if h == MPI_WIN_NULL {
        MpiError::new(MPI_ERR_WIN, "MPI_WIN_NULL is not a window")
    } else {
        MpiError::new(MPI_ERR_WIN, format!("invalid window handle {h:#x}"))
    }
}

/// Make a window of `size` bytes at `base` over `comm` (all of them collective), served by
/// its targets.
#[allow(clippy::too_many_arguments)]
pub(crate) fn create(rt: &mut Runtime, comm: MPI_Comm, base: *mut c_void, size: MPI_Aint, disp_unit: c_int, info: MPI_Info, flavor: c_int, owned: Option<Vec<u128>>) -> MpiResult<MPI_Win> {
    let h = make(rt, comm, base, size, disp_unit, info, flavor, owned)?;
    serve_passive_targets(rt, h)?;
    Ok(h)
}

/// Passive-target synchronisation needs the target to progress while it computes: the
/// progress thread does that for window `h`, unless the program promised it takes no locks.
/// Windows whose memory every member maps need no thread: their origins do everything.
fn serve_passive_targets(rt: &mut Runtime, h: MPI_Win) -> MpiResult<()> {
    let w = rt.win(h)?;
    if w.hints.iter().any(|(k, v)| k == "no_locks" && v == "true") {
        return Ok(());
    }
    rt.win_mut(h)?.served = true;
    if rt.progress.is_none() {
        match crate::progress::start(rt) {
            Ok(t) => {
                rt.progress = Some(t);
                wins_mut(rt).thread = true;
            }
            Err(e) => return err(MPI_ERR_OTHER, format!("cannot start the progress thread passive-target synchronisation needs: {e}")),
        }
    }
    Ok(())
}

/// Make a window as [`create`] does, without the progress thread: a window whose memory is
/// about to be shared.
#[allow(clippy::too_many_arguments)]
fn make(rt: &mut Runtime, comm: MPI_Comm, base: *mut c_void, size: MPI_Aint, disp_unit: c_int, info: MPI_Info, flavor: c_int, owned: Option<Vec<u128>>) -> MpiResult<MPI_Win> {
    let c = rt.comm(comm)?;
    if c.is_inter() {
        return err(MPI_ERR_COMM, "windows are made over intracommunicators; this is an intercommunicator");
    }
    let (group, rank, errhandler) = (c.group.clone(), c.rank as usize, c.errhandler);
    let hints = crate::info::optional(rt, info)?;
    if size < 0 {
        return err(MPI_ERR_SIZE, format!("window size {size} is negative"));
    }
    if disp_unit <= 0 {
        return err(MPI_ERR_DISP, format!("displacement unit {disp_unit} is not positive"));
    }
    let mut extra = (size as u64).to_le_bytes().to_vec();
    extra.extend_from_slice(&(disp_unit as u64).to_le_bytes());
    extra.extend_from_slice(&(std::process::id() as u64).to_le_bytes());
    let (ctx, all) = crate::internal::agree_context(rt, comm, &extra)?;
    let word = |b: &Vec<u8>, k: usize| u64::from_le_bytes(b[8 * k..8 * k + 8].try_into().expect("8 bytes"));
    let sizes = all.iter().map(|b| word(b, 0)).collect();
    let disp_units = all.iter().map(|b| word(b, 1)).collect();
    let pids = all.iter().map(|b| word(b, 2)).collect();
    let dynamic = flavor == MPI_WIN_FLAVOR_DYNAMIC;
    let mem = Memory { base: base as usize, size: size as usize, dynamic, attached: Vec::new() };
    target::lock(&wins(rt).shared).wins.insert(ctx, Exposure::new(ctx, mem));
    if !wins(rt).service {
        let shared = wins(rt).shared.clone();
        rt.engine.set_service(Box::new(target::RmaService(shared)));
        wins_mut(rt).service = true;
    }
    let n = group.len();
    let w = Win {
        ctx,
        group,
        rank,
        sizes,
        disp_units,
        pids,
        flavor,
        base,
        _owned: owned,
        lean: None,
        shared_mem: None,
        errhandler,
        name: String::new(),
        hints,
        attr_size: Box::new(size),
        attr_disp_unit: Box::new(disp_unit),
        attr_flavor: Box::new(flavor),
        attr_model: Box::new(MPI_WIN_UNIFIED),
        next_reply: 0,
        replies: Vec::new(),
        sends: Vec::new(),
        dirty: vec![false; n],
        epoch: Epoch::default(),
        posted: None,
        served: false,
        quiet_locks: 0,
    };
    Ok(wins_mut(rt).table.add(w))
}

/// Memory for `MPI_Win_allocate`: zeroed, aligned for any type.
fn allocate(size: MPI_Aint) -> MpiResult<Vec<u128>> {
    if size < 0 {
        return err(MPI_ERR_SIZE, format!("window size {size} is negative"));
    }
    let words = (size as usize).div_ceil(16).max(1);
    let mut v = Vec::new();
    v.try_reserve_exact(words).map_err(|_| MpiError::new(MPI_ERR_NO_MEM, format!("cannot allocate {size} bytes")))?;
    v.resize(words, 0u128);
    Ok(v)
}

/// `MPI_Win_free`: every epoch must be closed; the members then agree that nobody will send
/// to the window any more, and it goes.
pub(crate) fn check_free(rt: &Runtime, h: MPI_Win) -> MpiResult<()> {
    let w = rt.win(h)?;
    if !w.epoch.locks.is_empty() || w.epoch.lock_all.is_some() || w.epoch.start.is_some() || w.posted.is_some() {
        return err(MPI_ERR_RMA_SYNC, "the window still has an open passive-target or PSCW epoch");
    }
    Ok(())
}

pub(crate) fn free(rt: &mut Runtime, h: MPI_Win) -> MpiResult<()> {
    check_free(rt, h)?;
    sync::wait_all_replies(rt, h)?;
    let w = rt.win(h)?;
    let (ctx, group, me) = (w.ctx, w.group.clone(), w.rank);
    crate::internal::allgather_among(rt, ctx + 1, &group, me, TAG_FREE, &[])?;
    // Answers this target sent must have left before their bytes go.
    let shared = wins(rt).shared.clone();
    rt.engine.wait_until(|_| target::lock(&shared).wins.get(&ctx).is_none_or(Exposure::idle))?;
    target::lock(&wins(rt).shared).wins.remove(&ctx);
    wins_mut(rt).table.remove(&h);
    if wins(rt).thread && !wins(rt).table.iter().any(|(_, w)| w.served) {
        // Point-to-point traffic no longer pays for the thread. Joining it under the
        // runtime's lock is quick: it never waits for the lock, it only tries it.
        wins_mut(rt).thread = false;
        if let Some(t) = rt.progress.take() {
            t.stop();
        }
    }
    Ok(())
}

/// Set the memory of window `h` (made without memory) to start at `base`.
fn set_base(rt: &mut Runtime, h: MPI_Win, base: *mut c_void) -> MpiResult<()> {
    let ctx = rt.win(h)?.ctx;
    if let Some(x) = target::lock(&wins(rt).shared).wins.get_mut(&ctx) {
        x.mem.base = base as usize;
    }
    rt.win_mut(h)?.base = base;
    Ok(())
}

/// Forget window `h` when its creation failed on every member alike (nobody uses it).
fn discard(rt: &mut Runtime, h: MPI_Win) {
    if let Some(w) = wins_mut(rt).table.remove(&h) {
        target::lock(&wins(rt).shared).wins.remove(&w.ctx);
    }
}

/// `MPI_Win_allocate`: when every member is reached through shared memory, the memory goes into one
/// shared-memory object, so that puts and gets among them are plain copies (parts aligned
/// to 64 bytes); else, or if that fails, into ordinary memory.
pub(crate) fn allocate_window(rt: &mut Runtime, size: MPI_Aint, disp_unit: c_int, info: MPI_Info, comm: MPI_Comm) -> MpiResult<(MPI_Win, *mut c_void)> {
    if size < 0 {
        return err(MPI_ERR_SIZE, format!("window size {size} is negative"));
    }
    // Shared only among ranks the engine reaches through shared memory: with
    // FERRY_TRANSPORTS=tcp the window's traffic goes over TCP as the rest does.
    let (c, me) = (rt.comm(comm)?, rt.world_rank);
    let all_shm = c.group.len() > 1 && c.group.iter().all(|&w| w == me || rt.engine.is_local_peer(w));
    if all_shm {
        let h = make(rt, comm, std::ptr::null_mut(), size, disp_unit, info, MPI_WIN_FLAVOR_ALLOCATE, None)?;
        match shared::share(rt, h, 64) {
            Ok(base) => return Ok((h, base)),
            Err(e) => {
                ferry_core::debug!("rma", "window memory not shared ({e}); ordinary memory instead");
                let mut mem = allocate(size)?;
                let base = mem.as_mut_ptr() as *mut c_void;
                set_base(rt, h, base)?;
                rt.win_mut(h)?._owned = Some(mem);
                serve_passive_targets(rt, h)?;
                return Ok((h, base));
            }
        }
    }
    let mut mem = allocate(size)?;
    let base = mem.as_mut_ptr() as *mut c_void;
    Ok((create(rt, comm, base, size, disp_unit, info, MPI_WIN_FLAVOR_ALLOCATE, Some(mem))?, base))
}

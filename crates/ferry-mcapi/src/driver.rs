//! A node's process: the bootstrap, the engine, the node core between them, the waits of
//! blocking calls and the communication thread.
//!
//! Every frame of a node travels as one engine message in MCAPI's own context, so the
//! engine's routes (shared memory on a host under a launcher, TCP otherwise), its
//! authentication and its flow control carry MCAPI as they carry MPI. The node core is
//! behind one lock: a call takes it, feeds the core, moves frames both ways (`pump`) and
//! lets go. A blocking call waits inside the engine holding the lock: the engine polls while
//! bytes move and for `FERRY_SPIN_US` after, then sleeps until a socket or a local peer wakes
//! it; the call lets go of the lock at least every `NAP`, so that other threads of the node
//! may call in. The communication thread does a pass whenever it gets the lock, so that
//! messages, acknowledgements and credits move while the application computes outside the
//! library; it sleeps on the engine's descriptor between passes (briefly while the node has
//! work in flight, long when it has none), and keeps away while the application drives.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use ferry_core::engine::{Engine, Pattern, ReqId as EngineReq};
use ferry_core::{Job, Locate};

use crate::core::{Config, Node, OutBytes, Whereabouts};
use crate::shared_slots::SharedSlots;

/// The engine context that carries MCAPI frames ("MCAP").
pub const CONTEXT: u32 = 0x4d43_4150;
const FRAMES: Pattern = Pattern { ctx: CONTEXT, src: None, tag: None };

/// Longest a blocking call keeps the lock (and sleeps) between looks (timers: whereabouts,
/// timeouts; other threads of the node).
const NAP: Duration = Duration::from_millis(5);
/// Sleep of the communication thread while the node has work in flight, and when it has none.
const BUSY_NAP: Duration = Duration::from_millis(1);
/// Sleep of the communication thread while a thread of the application holds the node.
const APP_NAP: Duration = Duration::from_millis(5);
const IDLE_NAP: Duration = Duration::from_millis(50);

/// One initialised node.
pub struct Runtime {
    pub job: Job,
    pub engine: Engine,
    pub node: Node,
    /// Engine sends still reading their bytes.
    sends: Vec<(EngineReq, OutBytes)>,
    /// Frames being received (large ones arrive in pieces), and from whom.
    receiving: VecDeque<(EngineReq, u32, Vec<u8>)>,
    refused_logged: u64,
    next_locate: Instant,
    /// `mcapi_finalize` ran: the node takes no calls, but its process keeps answering its
    /// peers (and may initialise again) until it exits.
    pub finalized: bool,
    /// Passes of `pump`.
    passes: u32,
}

static RUNTIME: Mutex<Option<Runtime>> = Mutex::new(None);

pub fn lock() -> MutexGuard<'static, Option<Runtime>> {
    RUNTIME.lock().unwrap_or_else(|p| p.into_inner())
}

/// The initialised node behind a guard (none before `mcapi_initialize` or after
/// `mcapi_finalize`).
pub fn active<'a>(g: &'a mut MutexGuard<'static, Option<Runtime>>) -> Option<&'a mut Runtime> {
    g.as_mut().filter(|rt| !rt.finalized)
}

impl Runtime {
    pub fn start(domain: u32, node: u32) -> Result<Runtime, String> {
        let (job, engine) = Job::start_node(domain, node).map_err(|e| e.to_string())?;
        let cfg = Config::new(job.rank(), domain, node);
        let mut node = Node::new(cfg);
        node.set_slot_memory(Box::new(SharedSlots::new(&engine)));
        Ok(Runtime { job, engine, node, sends: Vec::new(), receiving: VecDeque::new(), refused_logged: 0, next_locate: Instant::now(), finalized: false, passes: 0 })
    }

    /// Move frames both ways until nothing moves at once.
    pub fn pump(&mut self) {
        // Inbound: whole frames, and frames whose last piece arrived.
        loop {
            // A whole frame (the usual case) comes in the buffer it arrived in; frames behind
            // a larger one still arriving wait for it, so that order is kept.
            if self.receiving.is_empty() {
                if let Some((st, buf)) = self.engine.take_whole(&FRAMES) {
                    self.deliver(st.source, buf);
                    continue;
                }
            }
            let Some((mid, st)) = self.engine.improbe(&FRAMES) else { break };
            let mut buf = vec![0u8; st.bytes];
            // SAFETY: `buf` lives in `receiving` (its heap block does not move) until the
            // request completes.
            let rid = unsafe { self.engine.imrecv(mid, buf.as_mut_ptr(), buf.len()) };
            self.receiving.push_back((rid, st.source, buf));
        }
        // Frames are handed on in the order they arrived (a large one may finish after the
        // small ones behind it).
        while self.receiving.front().is_some_and(|r| self.engine.is_done(r.0)) {
            let (rid, from, buf) = self.receiving.pop_front().expect("looked at");
            if let Some(Ok(_)) = self.engine.take(rid) {
                self.deliver(from, buf);
            }
        }
        for r in self.engine.take_lost_peers() {
            ferry_core::warn!("mcapi", "lost rank {r}: calls that need it fail with MCAPI_ERR_TRANSMISSION");
            self.node.peer_lost(r);
        }
        // Peers that left after their goodbye are not reported as lost: look for those this
        // node still waits on, now and then.
        self.passes = self.passes.wrapping_add(1);
        if self.passes % 256 == 0 && self.node.unsettled() > 0 {
            for r in self.node.ranks_waited_on() {
                if self.engine.is_peer_gone(r) {
                    self.node.peer_lost(r);
                }
            }
        }
        if self.node.wants_nodes() && Instant::now() >= self.next_locate {
            for n in self.node.wanted_nodes() {
                let w = match self.job.locate(&mut self.engine, n) {
                    Locate::At(r) => Whereabouts::At(r),
                    Locate::Never => Whereabouts::Never,
                    Locate::NotYet => Whereabouts::Unknown,
                };
                self.node.located(n, w);
            }
            self.next_locate = Instant::now() + Duration::from_millis(10);
        }
        self.pump_out();
    }

    fn deliver(&mut self, from: u32, frame: Vec<u8>) {
        if let Err(e) = self.node.deliver(from, frame) {
            if self.refused_logged < 16 {
                ferry_core::warn!("mcapi", "refused a frame from rank {from}: {e}");
                self.refused_logged += 1;
            }
        }
    }

    fn pump_out(&mut self) {
        while let Some((rank, bytes)) = self.node.next_out() {
            let b = bytes.as_slice();
            // SAFETY: the bytes stay alive in `sends` until the engine is done with them.
            if let Some(rid) = unsafe { self.engine.isend(rank, CONTEXT, 0, b.as_ptr(), b.len(), false) } {
                self.sends.push((rid, bytes));
            }
        }
        if !self.sends.is_empty() {
            let engine = &mut self.engine;
            self.sends.retain(|(rid, _)| {
                if engine.is_done(*rid) {
                    engine.take(*rid);
                    false
                } else {
                    true
                }
            });
        }
    }

    /// Send what is owed and everything queued (before sleeping).
    pub fn flush(&mut self) {
        self.node.flush_owed();
        self.pump_out();
    }

    /// Drive the engine until a frame arrives (or the oldest one being received is whole), or
    /// `until`, holding the lock.
    fn wait_for_frames(&mut self, until: Instant) {
        let receiving = &self.receiving;
        let _ = self.engine.wait_until_deadline(Some(until), |e| e.peek(&FRAMES).is_some() || receiving.front().is_some_and(|r| e.is_done(r.0)) || e.has_lost_peers());
    }
}

/// Why a blocking wait ended without its condition.
#[derive(Debug, PartialEq, Eq)]
pub enum WaitEnd {
    TimedOut,
    NotInitialised,
}

/// Block until `done` holds for the node, or `deadline`. Takes the lock itself, and lets go
/// of it at least every `NAP` so that other threads of the node may call in.
pub fn block_until(done: impl FnMut(&mut Runtime) -> bool, deadline: Option<Instant>) -> Result<(), WaitEnd> {
    block_until_from(done, |_| deadline)
}

/// [`block_until`] with the deadline read from the node under the first hold of the lock (a
/// blocking call that finds its result at once takes the lock only once).
pub fn block_until_from(mut done: impl FnMut(&mut Runtime) -> bool, deadline: impl FnOnce(&Runtime) -> Option<Instant>) -> Result<(), WaitEnd> {
    let mut deadline = Some(deadline);
    let mut until_then = None;
    loop {
        let mut g = lock();
        let rt = g.as_mut().ok_or(WaitEnd::NotInitialised)?;
        if let Some(d) = deadline.take() {
            until_then = d(rt);
        }
        let deadline = until_then;
        rt.pump();
        if done(rt) {
            return Ok(());
        }
        let now = Instant::now();
        if deadline.is_some_and(|d| now >= d) {
            return Err(WaitEnd::TimedOut);
        }
        rt.flush();
        // The engine polls while bytes move and for `FERRY_SPIN_US` after, then sleeps until a
        // socket or a local peer wakes it; it returns when a frame for the node arrives.
        let until = deadline.map_or(now + NAP, |d| d.min(now + NAP));
        rt.wait_for_frames(until);
        rt.pump();
        if done(rt) {
            return Ok(());
        }
    }
}

/// The communication thread.
pub struct CommThread {
    stop: Arc<AtomicBool>,
    /// Interrupts the thread's sleep on the engine's descriptor.
    wake: Box<dyn Fn() + Send>,
    handle: JoinHandle<()>,
}

impl CommThread {
    pub fn start(rt: &Runtime) -> std::io::Result<CommThread> {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let fd = rt.engine.event_fd();
        let handle = std::thread::Builder::new().name("ferry-mcapi".into()).spawn(move || {
            while !flag.load(Ordering::Acquire) {
                let nap = match RUNTIME.try_lock() {
                    // A thread of the application drives the engine: stay away for a while,
                    // without looking at the engine's descriptor (that thread consumes it).
                    Err(_) => {
                        std::thread::park_timeout(APP_NAP);
                        continue;
                    }
                    Ok(mut g) => match g.as_mut() {
                        None => break,
                        Some(rt) => {
                            let _ = rt.engine.progress(Some(Duration::ZERO));
                            rt.pump();
                            rt.flush();
                            if rt.node.unsettled() > 0 || rt.node.reqs.live() > 0 || !rt.sends.is_empty() || !rt.receiving.is_empty() {
                                BUSY_NAP
                            } else {
                                IDLE_NAP
                            }
                        }
                    },
                };
                if !flag.load(Ordering::Acquire) {
                    // The engine, and so `fd`, lives until after this thread is joined.
                    ferry_core::sync::wait_readable(fd, nap);
                }
            }
        })?;
        let waker = rt.engine.waker();
        let wake = Box::new(move || drop(waker.wake()));
        Ok(CommThread { stop, wake, handle })
    }

    /// Stop and join the thread. Call without holding the lock.
    pub fn stop(self) {
        self.stop.store(true, Ordering::Release);
        (self.wake)();
        self.handle.thread().unpark();
        let _ = self.handle.join();
    }
}

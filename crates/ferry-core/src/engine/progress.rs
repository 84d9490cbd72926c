//! The progress loop: one pass looks at every route (rings without a system call, sockets
//! through `epoll`), and a blocking wait spins for `FERRY_SPIN_US`, then sleeps in `epoll`
//! until a socket is ready or a local peer kicks us (see `transport::shm::doorbell`), so
//! oversubscribed jobs do not burn cores.

use std::io;
use std::time::{Duration, Instant};

use super::{Engine, EngineError, LISTENER, SHM_WAKE, WAKER};

/// Passes of a wait before it first reads the clock (a wait on a local peer's answer is
/// usually over by then: a pass with a `pause` costs tens of nanoseconds).
const FIRST_CLOCK: u32 = 32;
/// Longest sleep of one pass of a wait (timers such as lost-peer checks need no more).
const NAP: Duration = Duration::from_millis(250);
/// Polls of the rings between two looks at the sockets while spinning.
const RING_POLLS_PER_EPOLL: u32 = 32;
/// How long a wait on local peers polls the rings without giving the core away: about one
/// shared-memory round trip, so that a ping-pong never pays for a system call.
pub(super) const TIGHT_SPIN: Duration = Duration::from_micros(3);

impl Engine {
    /// Block until `done(self)` holds: poll for `spin`, then sleep on the sockets.
    pub fn wait_until(&mut self, done: impl FnMut(&Engine) -> bool) -> Result<(), EngineError> {
        self.wait_until_deadline(None, done)
    }

    /// [`wait_until`](Self::wait_until), giving up at `deadline` (then `done` may not hold:
    /// the caller looks again). A sleep never lasts past the deadline.
    pub fn wait_until_deadline(&mut self, deadline: Option<Instant>, mut done: impl FnMut(&Engine) -> bool) -> Result<(), EngineError> {
        if done(self) {
            return Ok(());
        }
        // The clock is read only once the wait lasts: most waits on a local peer end sooner.
        // It measures the time since bytes last moved, so that a long transfer in progress
        // (a ring the receiver drains as fast as the sender fills it) never puts us to sleep
        // between two pieces.
        let mut start = None;
        let mut spins = 0u32;
        let mut waited = Duration::ZERO;
        let mut seen = self.activity;
        loop {
            // The first passes read no clock: most waits on a local peer end within them.
            // (Only when this rank has a core of its own: with more ranks than cores every pass
            // gives the core away, and the wait must soon be able to end in a sleep.)
            if (spins >= FIRST_CLOCK || self.tight_spin.is_zero()) && spins % 8 == 7 {
                if self.activity != seen {
                    seen = self.activity;
                    start = None;
                    spins = 0;
                }
                waited = start.get_or_insert_with(Instant::now).elapsed();
                if deadline.is_some_and(|d| Instant::now() >= d) {
                    return Ok(());
                }
            }
            let sleep = spins > 16 && waited >= self.spin;
            if !sleep && !self.polled.is_empty() && (spins + 1) % RING_POLLS_PER_EPOLL != 0 {
                // Local peers answer through the rings: look there without a system call, and
                // at the sockets only every so often.
                // The service looks every pass: what it waits for may come from this very
                // rank (a message to self moves no ring).
                if self.poll_rings() | self.run_service() {
                    self.advance_collectives();
                    if let Some(e) = &self.fatal {
                        return Err(e.clone());
                    }
                    if done(self) {
                        return Ok(());
                    }
                }
                if waited < self.tight_spin {
                    std::hint::spin_loop();
                } else {
                    std::thread::yield_now();
                }
                spins += 1;
                continue;
            }
            let nap = deadline.map_or(NAP, |d| d.saturating_duration_since(Instant::now()).min(NAP));
            self.progress(if sleep { Some(nap) } else { Some(Duration::ZERO) })?;
            if done(self) || (sleep && deadline.is_some_and(|d| Instant::now() >= d)) {
                return Ok(());
            }
            if !sleep {
                // Give the core away between polls: on a loaded machine the kernel's network
                // work (and the peer) may need it to make the data we wait for arrive.
                std::thread::yield_now();
            }
            spins += 1;
        }
    }

    /// One pass of the progress loop; waits up to `timeout` for a socket to be ready.
    pub fn progress(&mut self, timeout: Option<Duration>) -> Result<(), EngineError> {
        if let Some(e) = &self.fatal {
            return Err(e.clone());
        }
        let mut timeout = timeout;
        let mut announced = false;
        // Work the service found (a request this rank sent itself, say) must not wait for
        // the sleep below.
        if self.run_service() {
            self.pump();
            timeout = Some(Duration::ZERO);
        }
        if !self.polled.is_empty() {
            if self.poll_rings() {
                timeout = Some(Duration::ZERO);
            }
            if timeout != Some(Duration::ZERO) {
                announced = true;
                if !self.prepare_sleep() {
                    timeout = Some(Duration::ZERO);
                }
            }
        }
        if let Some(due) = self.connector.next_deadline() {
            // A connect waits for its time: sleep no longer than that.
            let left = due.saturating_duration_since(Instant::now());
            timeout = Some(timeout.map_or(left, |t| t.min(left)));
        }
        let polled = self.poll.poll(&mut self.events, timeout);
        if announced {
            self.end_sleep();
        }
        if let Err(e) = polled {
            if e.kind() != io::ErrorKind::Interrupted {
                return Err(EngineError::Transport(format!("epoll: {e}")));
            }
        }
        let mut ready = std::mem::take(&mut self.ready);
        ready.clear();
        ready.extend(self.events.iter().map(|e| (e.token(), e.is_readable() || e.is_read_closed() || e.is_error(), e.is_writable(), e.is_read_closed())));
        for &(tok, readable, writable, closed) in &ready {
            match tok {
                LISTENER => self.connector.accept_all(self.poll.registry()),
                SHM_WAKE => {
                    if let Some(h) = &self.host {
                        h.drain_wake();
                    }
                }
                WAKER => {}
                t if self.watches.peer_of(t).is_some() => self.on_peer_ended(self.watches.peer_of(t).expect("just matched")),
                t if self.connector.owns(t) => self.connector.on_event(self.poll.registry(), t, readable, writable),
                t => {
                    let peer = (t.0 - 1) as u32;
                    if readable {
                        if let Some(r) = self.routes[peer as usize].as_mut() {
                            r.mark_readable();
                            if closed {
                                r.mark_read_closed();
                            }
                        }
                    }
                    if writable {
                        self.flush_route(peer);
                    }
                    if readable {
                        self.read_route(peer);
                    }
                }
            }
            self.connector_events();
        }
        self.ready = ready;
        if self.watches.any_ended() {
            self.settle_ended();
        }
        self.poll_rings();
        self.pump();
        // Until nothing moves: one collective's step may complete what another waits for.
        while self.advance_collectives() {}
        if self.run_service() {
            // What the service sent may already be on its way, and its answers queued.
            self.pump();
        }
        if timeout.map_or(true, |t| !t.is_zero()) || self.connector.has_pending() {
            self.connector.housekeeping(self.poll.registry(), Instant::now());
            self.connector_events();
        }
        if let Some(e) = &self.fatal {
            return Err(e.clone());
        }
        Ok(())
    }

    /// One look at every route without a descriptor (the rings): write what waits, read
    /// what arrived. Returns whether anything moved.
    fn poll_rings(&mut self) -> bool {
        let mut any = false;
        let mut i = 0;
        while i < self.polled.len() {
            let p = self.polled[i];
            i += 1;
            let Some(r) = self.routes[p as usize].as_ref() else { continue };
            let (queued, input) = (r.queued(), r.input_pending());
            if queued > 0 {
                self.flush_route(p);
                any |= self.routes[p as usize].as_ref().is_some_and(|r| r.queued() != queued);
            }
            if input {
                any |= self.read_route(p);
            }
        }
        if any {
            self.pump();
        }
        any
    }

    /// Whether a ring has something for us: data to read, or room for frames that wait.
    fn rings_ready(&self) -> bool {
        self.polled.iter().filter_map(|&p| self.routes[p as usize].as_ref()).any(|r| r.input_pending() || r.output_ready())
    }

    /// Announce a sleep on [`event_fd`](Self::event_fd); false when there is work already
    /// (then do not sleep, but still call `end_sleep`).
    pub fn prepare_sleep(&mut self) -> bool {
        match &self.host {
            Some(h) => {
                h.bell.begin_sleep();
                !self.rings_ready()
            }
            None => true,
        }
    }

    /// End a sleep announced by [`prepare_sleep`](Self::prepare_sleep).
    pub fn end_sleep(&mut self) {
        if let Some(h) = &self.host {
            h.bell.end_sleep();
        }
    }

    /// Whether a shared-memory ring has something for us now (see `prepare_sleep`).
    pub fn rings_pending(&self) -> bool {
        self.rings_ready()
    }
}

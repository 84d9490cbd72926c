//! The port model: each node's send and receive port, the stretches of time they are taken,
//! and when a message can start and end on them under either discipline (the cost rules are
//! in the documentation of [`crate::engine`]).

use super::{MessageRecord, Sim, Time};

/// How a port orders the transfers that want it (see the documentation of [`crate::engine`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ports {
    InOrder,
    EarliestFit,
}

/// The times a port is taken: with `InOrder` only the end of the last reservation matters;
/// with `EarliestFit` every reservation that has not ended, sorted by start.
#[derive(Clone, Debug, Default)]
pub(super) struct Port {
    pub(super) free: Time,
    taken: Vec<(Time, Time)>,
}

impl Port {
    /// The first reservation overlapping [at, at + len), if any. Reservations never overlap
    /// one another, so sorted by start they are sorted by end too.
    fn conflict(&self, at: Time, len: Time) -> Option<Time> {
        let i = self.taken.partition_point(|&(_, end)| end <= at);
        self.taken
            .get(i)
            .filter(|&&(start, _)| start < at + len)
            .map(|&(_, end)| end)
    }
    fn take(&mut self, ports: Ports, now: Time, at: Time, len: Time) {
        self.free = self.free.max(at + len);
        // A reservation of no time takes nothing (and kept, it could sit inside another).
        if ports == Ports::EarliestFit && len > 0.0 {
            let ended = self.taken.partition_point(|&(_, end)| end <= now);
            self.taken.drain(..ended);
            let i = self.taken.partition_point(|&(a, _)| a <= at);
            // Back-to-back reservations become one, so a search steps over a busy stretch
            // at once (gaps of rounding size cannot hold a transfer anyway).
            let touches = |x: Time, y: Time| (y - x).abs() <= 1e-9 * x.abs().max(1.0);
            let (mut start, mut end, mut lo, mut hi) = (at, at + len, i, i);
            if i > 0 && touches(self.taken[i - 1].1, start) {
                lo = i - 1;
                start = self.taken[lo].0;
            }
            if i < self.taken.len() && touches(end, self.taken[i].0) {
                hi = i + 1;
                end = self.taken[i].1;
            }
            self.taken.splice(lo..hi, [(start, end)]);
        }
    }
}

/// The next time after `t` (>= 0) that a float can hold.
fn next_after(t: Time) -> Time {
    f64::from_bits((t + 0.0).to_bits() + 1)
}

impl<'r> Sim<'r> {
    /// Takes the ports for one message; returns (injected, done).
    pub(super) fn transfer(&mut self, s: usize, d: usize, bytes: u64, issued: Time, background: bool) -> (Time, Time) {
        let p = self.p;
        let wire = p.o + bytes as f64 * p.big_g;
        let (hold_send, hold_recv) = (p.g.max(wire), wire);
        let start = self.start_time(s, d, bytes);
        let injected = start + wire;
        let arrived = injected + p.l;
        let done = arrived + p.o;
        let now = self.now;
        self.send_port[s].take(self.ports, now, start, hold_send);
        self.recv_port[d].take(self.ports, now, start + p.o + p.l, hold_recv);
        if self.tracing {
            self.out.trace.push(MessageRecord {
                src: s,
                dst: d,
                bytes,
                background,
                issued,
                matched: self.now,
                start,
                injected,
                arrived,
                done,
            });
        }
        (injected, done)
    }

    /// When a transfer of `bytes` from `s` to `d` matched now would start: its send port is
    /// taken for max(g, o + kG) from the start, the receive port for o + kG from the first
    /// byte's arrival, o + L after the start.
    pub(super) fn start_time(&self, s: usize, d: usize, bytes: u64) -> Time {
        let p = self.p;
        let wire = p.o + bytes as f64 * p.big_g;
        let (hold_send, hold_recv, lag) = (p.g.max(wire), wire, p.o + p.l);
        let now = self.now;
        if self.ports == Ports::InOrder {
            return now.max(self.send_port[s].free).max(self.recv_port[d].free - lag);
        }
        let mut at = now;
        loop {
            // Every step moves `at` forward, by at least one representable time.
            if let Some(end) = self.send_port[s].conflict(at, hold_send) {
                at = if end > at { end } else { next_after(at) };
            } else if let Some(end) = self.recv_port[d].conflict(at + lag, hold_recv) {
                at = if end - lag > at { end - lag } else { next_after(at) };
            } else {
                return at;
            }
        }
    }
}

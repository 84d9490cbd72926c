//! Authenticated control connections: a launcher registers its job and the job's members.
//! The job lives as long as the connection; when it closes (or misbehaves) the job ends,
//! its pairs are closed and a summary line is logged.

use std::io::{self, Read, Write};
use std::net::SocketAddr;

use super::pair::PairState;
use super::pending::parting_shot;
use super::Proxy;
use crate::log::Level;
use crate::transport::relay::handshake::FrameBuf;
use crate::transport::relay::registry::Owner;
use crate::transport::relay::wire::{hex, ControlRefusal, DenyReason, Msg};

/// Acks a launcher may leave unread before the proxy gives up on it.
const MAX_CONTROL_OUT: usize = 64 << 10;

pub(super) struct ControlConn {
    pub(super) stream: mio::net::TcpStream,
    from: SocketAddr,
    owner: Owner,
    frames: FrameBuf,
    out: Vec<u8>,
}

impl ControlConn {
    pub(super) fn new(stream: mio::net::TcpStream, from: SocketAddr, owner: Owner, out: Vec<u8>) -> ControlConn {
        ControlConn { stream, from, owner, frames: FrameBuf::default(), out }
    }
}

impl Proxy {
    pub(super) fn control_event(&mut self, id: usize, readable: bool, writable: bool) {
        let mut buf = [0u8; 4096];
        if readable {
            loop {
                let Some(c) = self.controls.get_mut(id) else { return };
                match c.stream.read(&mut buf) {
                    Ok(0) => return self.close_control(id, "control connection closed"),
                    Ok(n) => {
                        if !self.control_input(id, &buf[..n]) {
                            return;
                        }
                    }
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    Err(e) => return self.close_control(id, &format!("control connection failed: {e}")),
                }
            }
        }
        if writable || readable {
            self.control_flush(id);
        }
    }

    fn control_flush(&mut self, id: usize) {
        let Some(c) = self.controls.get_mut(id) else { return };
        while !c.out.is_empty() {
            match c.stream.write(&c.out) {
                Ok(0) => return self.close_control(id, "control connection closed"),
                Ok(n) => {
                    c.out.drain(..n);
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return self.close_control(id, &format!("control connection failed: {e}")),
            }
        }
        if c.out.len() > MAX_CONTROL_OUT {
            self.close_control(id, "control client does not read its answers");
        }
    }

    /// Commands read from control connection `id`. Returns whether it is still open.
    pub(super) fn control_input(&mut self, id: usize, mut input: &[u8]) -> bool {
        loop {
            let Some(c) = self.controls.get_mut(id) else { return false };
            let (msg, used) = match c.frames.take(input) {
                Ok(Some(f)) => f,
                Ok(None) => return true,
                Err(e) => {
                    let from = c.from;
                    self.note(Level::Warn, format!("denied control command from {from}: {e}"));
                    self.close_control(id, "malformed control frame");
                    return false;
                }
            };
            input = &input[used..];
            let (owner, from) = (c.owner, c.from);
            let result = match msg {
                Msg::RegisterJob { job, key, size } => self.registry.register_job(owner, job, key, size).map(|()| {
                    self.note(Level::Info, format!("job {} registered by {from}: {size} ranks", hex(&job)));
                }),
                Msg::AddMember { job, rank, addr } => match self.registry.add_member(owner, job, rank, addr) {
                    Ok(()) => {
                        self.note(Level::Info, format!("job {} rank {rank} at {addr}", hex(&job)));
                        Ok(())
                    }
                    Err(ControlRefusal::AddressNotAllowed) => {
                        let detail = self.registry.policy().check(addr).err().map(|r| format!(" ({r})")).unwrap_or_default();
                        self.note(Level::Warn, format!("denied control command from {from}: job {} rank {rank} at {addr}: {}{detail}", hex(&job), ControlRefusal::AddressNotAllowed));
                        Err(ControlRefusal::AddressNotAllowed)
                    }
                    Err(r) => Err(r),
                },
                _ => Err(ControlRefusal::Unexpected),
            };
            let code = match result {
                Ok(()) => 0,
                Err(r) => {
                    if r != ControlRefusal::AddressNotAllowed {
                        self.note(Level::Warn, format!("denied control command from {from}: {r}"));
                    }
                    r.code()
                }
            };
            let Some(c) = self.controls.get_mut(id) else { return false };
            c.out.extend_from_slice(&Msg::Ack { code }.encode());
            if code == ControlRefusal::Unexpected.code() {
                self.control_flush(id);
                self.close_control(id, "unexpected frame on the control connection");
                return false;
            }
        }
    }

    /// End control connection `id` and its job: close the job's pairs, then log its totals.
    pub(super) fn close_control(&mut self, id: usize, why: &str) {
        let Some(mut c) = self.controls.remove(id) else { return };
        let _ = self.poll.registry().deregister(&mut c.stream);
        let Some(job) = self.registry.job_of(c.owner) else {
            self.note(Level::Info, format!("{why} ({}, no job)", c.from));
            return;
        };
        for pid in self.pairs.ids() {
            let Some(p) = self.pairs.get_mut(pid) else { continue };
            if p.job != job {
                continue;
            }
            if matches!(p.state, PairState::Connecting { .. }) {
                let (from, to) = (p.from, p.to);
                let mut p = self.take_pair(pid).expect("live slot");
                let reg = self.poll.registry();
                let _ = reg.deregister(&mut p.client.stream);
                let _ = reg.deregister(&mut p.target.stream);
                parting_shot(&mut p.client.stream, Msg::Denied { reason: DenyReason::JobEnded.code() });
                self.registry.pair_failed(&job, from, to);
            } else {
                self.close_pair(pid, "job ended".into());
            }
        }
        if let Some((job, totals)) = self.registry.end_job(c.owner) {
            self.note(Level::Info, format!("{why} ({})", c.from));
            self.note(Level::Info, format!("job {} ended: {} pairs, {} bytes relayed", hex(&job), totals.pairs, totals.bytes));
        }
    }
}

//! The receiving side of a rendezvous (part of the sans-IO protocol core): clear-to-send for
//! the data through the route, or, where the sender offered its buffer's address and this
//! rank may read a local peer's memory, a single-copy read for the driver to perform.

use ferry_wire::{Header, Kind};

use super::super::matching::Envelope;
use super::super::request::{RecvState, ReqId, Status};
use super::{Protocol, RemoteRead};
use crate::transport::{OutFrame, Payload};

impl Protocol {
    pub(super) fn start_rndv_recv(&mut self, rid: ReqId, env: Envelope, len: u64, cookie: u64, addr: Option<u64>) {
        let Some(r) = self.recv_mut(rid) else { return };
        r.state = RecvState::Rndv { total: len, got: 0 };
        r.status = Status { source: env.src, tag: env.tag, bytes: (len as usize).min(r.cap), cancelled: false, truncated: len > r.cap as u64 };
        let (buf, n) = (r.buf, r.status.bytes);
        self.mark_busy(rid);
        if let Some(addr) = addr.filter(|_| self.single_copy && self.peers[env.src as usize].local) {
            self.reads.push_back(RemoteRead { rid, peer: env.src, addr, buf, len: n, cookie });
            return;
        }
        self.send_cts(env.src, cookie, rid);
    }

    pub(super) fn send_cts(&mut self, peer: u32, cookie: u64, rid: ReqId) {
        let mut h = Header::new(Kind::Cts);
        h.src = self.me;
        h.dst = peer;
        h.len = 16;
        let mut p = cookie.to_le_bytes().to_vec();
        p.extend_from_slice(&rid.to_le_bytes());
        self.outbox.push_back((peer, OutFrame::new(&h, Payload::Owned(p), None)));
    }

    /// The driver performed (`Ok`) or could not perform a [`RemoteRead`]. On failure the
    /// sender still holds its buffer: the data comes through the route instead, and every
    /// later rendezvous too.
    pub fn read_done(&mut self, read: RemoteRead, result: Result<(), String>) {
        match result {
            Ok(()) => {
                self.finish_received(read.rid);
                let mut h = Header::new(Kind::RndvFin);
                h.src = self.me;
                h.dst = read.peer;
                h.seq = read.cookie;
                self.outbox.push_back((read.peer, OutFrame::new(&h, Payload::None, None)));
            }
            Err(_) => {
                self.single_copy = false;
                self.send_cts(read.peer, read.cookie, read.rid);
            }
        }
    }
}

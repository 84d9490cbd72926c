//! New connections, until their first frame says what they want: a relayed pair (checked by
//! the registry, then the second leg is opened) or a control connection (checked against the
//! site key). Anything else, and silence past the deadline, is refused and logged.

use std::io::{self, Read, Write};
use std::net::SocketAddr;
use std::time::Instant;

use mio::Interest;

use super::control_conn::ControlConn;
use super::pair::{Pair, PairState, Pipe, Side};
use super::{token, Proxy, CONTROL, PAIR_CLIENT, PAIR_TARGET, PENDING};
use crate::log::Level;
use crate::transport::relay::handshake::{control_proxy_proof, verify_control_client, AcceptStep, RelayAcceptor};
use crate::transport::relay::registry::Decision;
use crate::transport::relay::wire::{hex, ControlRefusal, DenyReason, Msg, Request, HEADER_LEN, MAX_PAYLOAD};
use crate::transport::relay::RelayError;

pub(super) struct PendingConn {
    pub(super) stream: mio::net::TcpStream,
    pub(super) from: SocketAddr,
    pub(super) opened: Instant,
    acc: RelayAcceptor,
    /// What is left of the Hello to write.
    hello: Vec<u8>,
}

fn nonce() -> [u8; 32] {
    let mut n = [0u8; 32];
    getrandom::getrandom(&mut n).expect("the kernel's random source is available");
    n
}

/// Write what a socket takes now; the rest stays in `out`.
fn write_some(stream: &mut mio::net::TcpStream, out: &mut Vec<u8>) -> io::Result<()> {
    while !out.is_empty() {
        match stream.write(out) {
            Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
            Ok(n) => {
                out.drain(..n);
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(()),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// A last frame before closing: whatever the socket takes, no waiting.
pub(super) fn parting_shot(stream: &mut mio::net::TcpStream, m: Msg) {
    let _ = stream.write(&m.encode());
}

impl Proxy {
    pub(super) fn on_accept(&mut self, mut stream: mio::net::TcpStream, from: SocketAddr) {
        let ip = from.ip();
        if self.per_source.get(&ip).copied().unwrap_or(0) >= self.cfg.max_pending_per_source {
            parting_shot(&mut stream, Msg::Denied { reason: DenyReason::Busy.code() });
            self.throttle(ip, "too many unauthenticated connections from this address");
            return;
        }
        if self.pending.len() >= self.cfg.max_pending {
            // Make room by dropping the oldest: a flood of silent connections then cannot keep
            // a prompt client out, it only shortens everyone's grace.
            let oldest = self.pending.items.iter().enumerate().filter_map(|(i, p)| p.as_ref().map(|p| (p.opened, i))).min();
            if let Some((_, id)) = oldest {
                let victim = self.pending.get(id).map(|p| p.from.ip()).expect("live slot");
                self.drop_pending(id);
                self.throttle(victim, "dropped for newer connections: too many unauthenticated connections in all");
            }
        }
        let (acc, hello) = RelayAcceptor::new(nonce());
        let _ = stream.set_nodelay(true);
        let id = self.pending.insert(PendingConn { stream, from, opened: Instant::now(), acc, hello });
        // Counted at once: dropping the slot, for whatever reason, uncounts it.
        *self.per_source.entry(ip).or_default() += 1;
        let p = self.pending.get_mut(id).expect("just inserted");
        if let Err(e) = self.poll.registry().register(&mut p.stream, token(id, PENDING), Interest::READABLE | Interest::WRITABLE) {
            self.note(Level::Warn, format!("cannot watch connection from {from}: {e}"));
            self.drop_pending(id);
            return;
        }
        self.pending_event(id, true, true);
    }

    pub(super) fn drop_pending(&mut self, id: usize) -> Option<PendingConn> {
        let mut p = self.pending.remove(id)?;
        let _ = self.poll.registry().deregister(&mut p.stream);
        let ip = p.from.ip();
        if let Some(n) = self.per_source.get_mut(&ip) {
            *n -= 1;
            if *n == 0 {
                self.per_source.remove(&ip);
            }
        }
        Some(p)
    }

    pub(super) fn pending_event(&mut self, id: usize, readable: bool, writable: bool) {
        let Some(p) = self.pending.get_mut(id) else { return };
        if writable {
            if let Err(e) = write_some(&mut p.stream, &mut p.hello) {
                let from = p.from;
                self.note(Level::Info, format!("connection from {from} failed before its request: {e}"));
                self.drop_pending(id);
                return;
            }
        }
        if !readable {
            return;
        }
        // Read no more than one frame can take: what follows stays in the socket for the
        // pair (or control connection) this becomes.
        let mut buf = [0u8; HEADER_LEN + MAX_PAYLOAD];
        loop {
            let Some(p) = self.pending.get_mut(id) else { return };
            let n = match p.stream.read(&mut buf) {
                Ok(0) => {
                    let from = p.from;
                    self.note(Level::Info, format!("connection from {from} closed before its request"));
                    self.drop_pending(id);
                    return;
                }
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    let from = p.from;
                    self.note(Level::Info, format!("connection from {from} failed before its request: {e}"));
                    self.drop_pending(id);
                    return;
                }
            };
            match p.acc.on_bytes(&buf[..n]) {
                Ok(AcceptStep::NeedMore) => continue,
                Ok(AcceptStep::Relay { request, consumed }) => return self.on_request(id, request, &buf[consumed..n]),
                Ok(AcceptStep::Control { nonce, mac, consumed }) => return self.on_control_auth(id, nonce, mac, &buf[consumed..n]),
                Err(e) => {
                    let from = p.from;
                    if let Some(mut p) = self.drop_pending(id) {
                        if matches!(e, RelayError::Wire(_)) {
                            parting_shot(&mut p.stream, Msg::Denied { reason: DenyReason::Malformed.code() });
                        }
                    }
                    self.note(Level::Warn, format!("denied connection from {from}: {e}"));
                    return;
                }
            }
        }
    }

    fn on_request(&mut self, id: usize, req: Request, early: &[u8]) {
        let Some(p) = self.pending.get(id) else { return };
        let from = p.from;
        let decision = self.registry.decide(&req, p.acc.nonce());
        let Some(mut p) = self.drop_pending(id) else { return };
        let job = hex(&req.job);
        let target = match decision {
            Decision::Allow { target } => target,
            Decision::Deny(reason) => {
                parting_shot(&mut p.stream, Msg::Denied { reason: reason.code() });
                self.note(Level::Warn, format!("denied relay request from {from}: job {job} rank {} -> rank {}: {reason}", req.from, req.to));
                return;
            }
        };
        let leg = match mio::net::TcpStream::connect(target.into()) {
            Ok(s) => s,
            Err(e) => {
                self.registry.pair_failed(&req.job, req.from, req.to);
                parting_shot(&mut p.stream, Msg::Denied { reason: DenyReason::Unreachable.code() });
                self.note(Level::Warn, format!("denied relay request from {from}: job {job} rank {} -> rank {}: {} ({target}: {e})", req.from, req.to, DenyReason::Unreachable));
                return;
            }
        };
        let _ = leg.set_nodelay(true);
        let splice = self.cfg.splice && self.pipe_fds + 4 <= self.cfg.pipe_fds;
        let mut up = Pipe::new(self.cfg.pair_buffer, splice);
        // A client may send its first relayed bytes right behind the request.
        up.push(early);
        let down = Pipe::new(self.cfg.pair_buffer.max(HEADER_LEN), splice);
        if up.spliced() && down.spliced() {
            self.stats.spliced.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
        let pair = Pair {
            job: req.job,
            from: req.from,
            to: req.to,
            client_addr: from,
            target_addr: target,
            client: Side::new(p.stream),
            target: Side::new(leg),
            up,
            down,
            state: PairState::Connecting { since: Instant::now() },
            own_down: 0,
            counted: 0,
        };
        self.pipe_fds += pair.pipe_fds();
        let pid = self.pairs.insert(pair);
        let p = self.pairs.get_mut(pid).expect("just inserted");
        let reg = self.poll.registry();
        let r1 = reg.register(&mut p.client.stream, token(pid, PAIR_CLIENT), Interest::READABLE | Interest::WRITABLE);
        let r2 = reg.register(&mut p.target.stream, token(pid, PAIR_TARGET), Interest::READABLE | Interest::WRITABLE);
        if let Err(e) = r1.and(r2) {
            self.connect_failed(pid, format!("cannot watch the connection: {e}"));
        }
    }

    /// The second leg of pair `id` reported progress: connected, failed, or not yet.
    pub(super) fn connect_progress(&mut self, id: usize) {
        let Some(p) = self.pairs.get_mut(id) else { return };
        match p.target.stream.take_error() {
            Ok(Some(e)) | Err(e) => return self.connect_failed(id, e.to_string()),
            Ok(None) => {}
        }
        match p.target.stream.peer_addr() {
            Ok(_) => {}
            Err(e) if e.kind() == io::ErrorKind::NotConnected => return,
            Err(e) => return self.connect_failed(id, e.to_string()),
        }
        let est = Msg::Established.encode();
        p.down.push(&est);
        p.own_down = est.len() as u64;
        p.state = PairState::Relaying;
        let line = format!("pair opened: job {} rank {} -> rank {} at {} (client {})", hex(&p.job), p.from, p.to, p.target_addr, p.client_addr);
        self.note(Level::Info, line);
        self.pump_pair(id);
    }

    pub(super) fn connect_failed(&mut self, id: usize, why: String) {
        let Some(mut p) = self.take_pair(id) else { return };
        let reg = self.poll.registry();
        let _ = reg.deregister(&mut p.client.stream);
        let _ = reg.deregister(&mut p.target.stream);
        self.registry.pair_failed(&p.job, p.from, p.to);
        parting_shot(&mut p.client.stream, Msg::Denied { reason: DenyReason::Unreachable.code() });
        let line = format!("denied relay request from {}: job {} rank {} -> rank {}: {} ({}: {why})", p.client_addr, hex(&p.job), p.from, p.to, DenyReason::Unreachable, p.target_addr);
        self.note(Level::Warn, line);
    }

    fn on_control_auth(&mut self, id: usize, client_nonce: [u8; 32], mac: [u8; 32], early: &[u8]) {
        let Some(p) = self.pending.get(id) else { return };
        let from = p.from;
        let proxy_nonce = *p.acc.nonce();
        let ok = verify_control_client(&self.cfg.site_key, &proxy_nonce, &client_nonce, &mac);
        let Some(mut p) = self.drop_pending(id) else { return };
        if !ok {
            parting_shot(&mut p.stream, Msg::Ack { code: ControlRefusal::BadProof.code() });
            self.note(Level::Warn, format!("denied control connection from {from}: {}", ControlRefusal::BadProof));
            return;
        }
        let owner = self.next_owner;
        self.next_owner += 1;
        let welcome = Msg::ControlWelcome { mac: control_proxy_proof(&self.cfg.site_key, &proxy_nonce, &client_nonce) };
        let cid = self.controls.insert(ControlConn::new(p.stream, from, owner, welcome.encode()));
        let c = self.controls.get_mut(cid).expect("just inserted");
        if let Err(e) = self.poll.registry().register(&mut c.stream, token(cid, CONTROL), Interest::READABLE | Interest::WRITABLE) {
            self.note(Level::Warn, format!("cannot watch control connection from {from}: {e}"));
            self.controls.remove(cid);
            return;
        }
        self.note(Level::Info, format!("control connection from {from} authenticated"));
        self.control_input(cid, early);
        self.control_event(cid, true, true);
    }
}

//! Ports, the driver: a socket of its own per open port, on which the accepting root waits
//! for a connecting root that proves it holds the port's secret (the engine's handshake,
//! `transport::tcp::handshake`, under the port's secret and the bridge id [`PORT_HELLO`]),
//! then the two roots trade the offer and the answer of `meeting.rs`. Blocking, with a
//! timeout on every read once a peer has connected; a stranger that fails to prove the secret
//! is refused and the port waits on.

use std::io::{self, Read, Write};
use std::net::{IpAddr, SocketAddr, TcpListener, TcpStream};
use std::time::Duration;

use ferry_wire::{Header, Limits, HEADER_LEN};

use super::meeting::{decode_answer, decode_offer, encode_answer, encode_offer, Meeting, MeetingError, PortName, Side, PORT_SECRET_LEN};
use crate::transport::tcp::handshake::{Acceptor, AcceptorStep, Decision, Initiator, Out};

/// The `context` of a Hello to a port: no bridge of the engine's ever has this id, and the
/// port's secret is no job's or bridge's, so a port proof never opens an engine.
pub const PORT_HELLO: u32 = 0x504f_5254;
/// Largest meeting message (the cards of a million members fit).
const MAX_MESSAGE: usize = 256 << 20;
/// How often a waiting accept asks whether the other side may still come.
const ALIVE_CHECK: Duration = Duration::from_millis(100);
/// Handshake frames are small.
const HANDSHAKE: Limits = Limits { world_size: u32::MAX, max_payload: 4096 };

/// Why a meeting through a port did not happen.
#[derive(Debug, thiserror::Error)]
pub enum PortError {
    #[error("{0}")]
    Meeting(#[from] MeetingError),
    #[error("port {addr}: {err}")]
    Io { addr: SocketAddr, err: io::Error },
    /// The other side does not hold the port's secret, or refused us.
    #[error("port {addr}: {why}")]
    Refused { addr: SocketAddr, why: String },
}

/// An open port.
pub struct Port {
    listener: TcpListener,
    name: PortName,
}

fn random<const N: usize>() -> [u8; N] {
    let mut b = [0u8; N];
    getrandom::getrandom(&mut b).expect("the kernel's random source is available");
    b
}

impl Port {
    /// Listen on a fresh port of `ip` (the address this process's engine advertises).
    pub fn open(ip: IpAddr) -> Result<Port, PortError> {
        let listener = TcpListener::bind(SocketAddr::new(ip, 0)).map_err(|err| PortError::Io { addr: SocketAddr::new(ip, 0), err })?;
        let addr = listener.local_addr().map_err(|err| PortError::Io { addr: SocketAddr::new(ip, 0), err })?;
        Ok(Port { listener, name: PortName { addr, secret: random::<PORT_SECRET_LEN>() } })
    }

    /// The port name to hand to whoever may connect.
    pub fn name(&self) -> String {
        self.name.format()
    }

    /// Wait for a connecting root that holds the secret and meet it: offer a fresh bridge
    /// with `local`, learn its side. `timeout` bounds each read once a peer has connected.
    pub fn accept(&self, local: &Side, timeout: Duration) -> Result<Meeting, PortError> {
        self.accept_while(local, timeout, None, &mut || true)
    }

    /// [`accept`](Self::accept), giving up when no connecting root has met this one within
    /// `within` (`None`: no limit) or as soon as `alive` says the other side will not come
    /// (asked a few times a second).
    pub fn accept_while(&self, local: &Side, timeout: Duration, within: Option<Duration>, alive: &mut dyn FnMut() -> bool) -> Result<Meeting, PortError> {
        let deadline = within.map(|w| std::time::Instant::now() + w);
        loop {
            let gave_up = |why: String| PortError::Io { addr: self.name.addr, err: io::Error::new(io::ErrorKind::TimedOut, why) };
            loop {
                let slice = match deadline {
                    Some(d) => d.saturating_duration_since(std::time::Instant::now()).min(ALIVE_CHECK),
                    None => ALIVE_CHECK,
                };
                if readable_within(&self.listener, slice) {
                    break;
                }
                if !alive() {
                    return Err(gave_up("the other side ended before it connected".into()));
                }
                if deadline.is_some_and(|d| std::time::Instant::now() >= d) {
                    return Err(gave_up(format!("nobody connected within {} s", within.unwrap_or_default().as_secs())));
                }
            }
            let (stream, from) = self.listener.accept().map_err(|err| PortError::Io { addr: self.name.addr, err })?;
            match self.meet(stream, from, local, timeout) {
                Ok(m) => return Ok(m),
                Err(e) => crate::warn!("port", "refused a connection to port {} from {from}: {e}", self.name.addr),
            }
        }
    }

    fn meet(&self, mut s: TcpStream, from: SocketAddr, local: &Side, timeout: Duration) -> Result<Meeting, PortError> {
        let io = |err| PortError::Io { addr: from, err };
        s.set_read_timeout(Some(timeout)).map_err(io)?;
        s.set_nodelay(true).map_err(io)?;
        let mut acc = Acceptor::new(0, random());
        loop {
            let (h, payload) = read_frame(&mut s).map_err(io)?;
            if acc.awaiting_hello() && h.context != PORT_HELLO {
                return Err(PortError::Refused { addr: from, why: "not a port hello".into() });
            }
            match acc.on_frame(&self.name.secret, &h, &payload) {
                Ok(AcceptorStep::Send(out)) => write_frame(&mut s, &out).map_err(io)?,
                Ok(AcceptorStep::Authenticated { peer, .. }) => {
                    write_frame(&mut s, &acc.verdict(peer, Decision::Accept)).map_err(io)?;
                    break;
                }
                Err(e) => return Err(PortError::Refused { addr: from, why: e.to_string() }),
            }
        }
        let (bridge, secret) = (fresh_bridge_id(), random::<32>().to_vec());
        write_message(&mut s, &encode_offer(bridge, &secret, local)).map_err(io)?;
        let remote = decode_answer(&read_message(&mut s).map_err(io)?)?;
        Ok(Meeting { bridge, secret, accepted: true, remote })
    }
}

/// A bridge id: random, never 0 nor the port hello's.
fn fresh_bridge_id() -> u32 {
    loop {
        let id = u32::from_le_bytes(random());
        if id != 0 && id != PORT_HELLO {
            return id;
        }
    }
}

/// Meet the accepting root behind port `name` with `local`; `timeout` bounds the connect and
/// each read.
pub fn connect(name: &str, local: &Side, timeout: Duration) -> Result<Meeting, PortError> {
    let port = PortName::parse(name)?;
    let addr = port.addr;
    let io = |err| PortError::Io { addr, err };
    let mut s = TcpStream::connect_timeout(&addr, timeout).map_err(io)?;
    s.set_read_timeout(Some(timeout)).map_err(io)?;
    s.set_nodelay(true).map_err(io)?;
    let (mut init, hello) = Initiator::start_bridged(0, 0, PORT_HELLO, random());
    write_frame(&mut s, &hello).map_err(io)?;
    loop {
        let (h, payload) = read_frame(&mut s).map_err(io)?;
        match init.on_frame(&port.secret, &h, &payload) {
            Ok(Some(out)) => write_frame(&mut s, &out).map_err(io)?,
            Ok(None) => break,
            Err(e) => return Err(PortError::Refused { addr, why: e.to_string() }),
        }
    }
    let meeting = decode_offer(&read_message(&mut s).map_err(io)?)?;
    write_message(&mut s, &encode_answer(local)).map_err(io)?;
    Ok(meeting)
}

fn write_frame(s: &mut TcpStream, o: &Out) -> io::Result<()> {
    s.write_all(&o.header.encode())?;
    s.write_all(&o.payload)
}

fn read_frame(s: &mut TcpStream) -> io::Result<(Header, Vec<u8>)> {
    let mut hb = [0u8; HEADER_LEN];
    s.read_exact(&mut hb)?;
    let h = Header::decode(&hb, &HANDSHAKE).map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e.to_string()))?;
    let mut payload = vec![0u8; h.len as usize];
    s.read_exact(&mut payload)?;
    Ok((h, payload))
}

fn write_message(s: &mut TcpStream, m: &[u8]) -> io::Result<()> {
    s.write_all(&(m.len() as u32).to_le_bytes())?;
    s.write_all(m)
}

fn read_message(s: &mut TcpStream) -> io::Result<Vec<u8>> {
    let mut lb = [0u8; 4];
    s.read_exact(&mut lb)?;
    let n = u32::from_le_bytes(lb) as usize;
    if n > MAX_MESSAGE {
        return Err(io::Error::new(io::ErrorKind::InvalidData, format!("a meeting message of {n} bytes")));
    }
    let mut m = vec![0u8; n];
    s.read_exact(&mut m)?;
    Ok(m)
}

/// Whether `listener` has a connection waiting, waiting up to `within` (a blocked accept
/// sleeps in poll(2); it never spins).
fn readable_within(listener: &TcpListener, within: Duration) -> bool {
    use std::os::fd::AsRawFd;
    let mut pfd = libc::pollfd { fd: listener.as_raw_fd(), events: libc::POLLIN, revents: 0 };
    let deadline = std::time::Instant::now() + within;
    loop {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        let ms = i32::try_from(left.as_millis().max(1)).unwrap_or(i32::MAX);
        // SAFETY: poll(2) on one pollfd that lives on this stack frame.
        let r = unsafe { libc::poll(&mut pfd, 1, ms) };
        if r > 0 {
            return true;
        }
        if (r == 0 && left.is_zero()) || std::time::Instant::now() >= deadline {
            return false;
        }
    }
}

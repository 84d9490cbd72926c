//! TCP transport: one listening socket per process, one connection per pair of ranks, frames
//! read straight into their destination when it is known and written with `writev`.
//!
//! A [`Conn`] is a byte pipe with two queues: inbound bytes become [`RxEvent`]s (a decoded
//! header, then its payload delivered into the [`Sink`] the engine chose), outbound
//! [`OutFrame`]s are written in order and report which requests they complete.

use std::collections::VecDeque;
use std::io::{self, IoSlice, Read, Write};
use std::net::{IpAddr, Ipv4Addr, SocketAddr};

use ferry_wire::{Header, Limits, WireError, HEADER_LEN};

/// Why the transport could not do what was asked.
#[derive(Debug)]
pub enum TransportError {
    Bind(String),
    Interface(String),
    Io(io::Error),
    Wire(WireError),
}

impl std::fmt::Display for TransportError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TransportError::Bind(s) => write!(f, "cannot listen: {s}"),
            TransportError::Interface(s) => write!(f, "FERRY_IF: {s}"),
            TransportError::Io(e) => write!(f, "{e}"),
            TransportError::Wire(e) => write!(f, "malformed frame: {e}"),
        }
    }
}

impl From<io::Error> for TransportError {
    fn from(e: io::Error) -> Self {
        TransportError::Io(e)
    }
}

/// The IPv4 addresses of this host's interfaces, as (interface name, address).
pub fn interfaces() -> Vec<(String, Ipv4Addr)> {
    let mut out = Vec::new();
    let mut head: *mut libc::ifaddrs = std::ptr::null_mut();
    // SAFETY: getifaddrs fills `head` with a list we walk read-only and free exactly once.
    unsafe {
        if libc::getifaddrs(&mut head) != 0 {
            return out;
        }
        let mut p = head;
        while !p.is_null() {
            let ifa = &*p;
            if !ifa.ifa_addr.is_null() && (*ifa.ifa_addr).sa_family as i32 == libc::AF_INET {
                let sin = &*(ifa.ifa_addr as *const libc::sockaddr_in);
                let ip = Ipv4Addr::from(u32::from_be(sin.sin_addr.s_addr));
                let name = std::ffi::CStr::from_ptr(ifa.ifa_name).to_string_lossy().into_owned();
                out.push((name, ip));
            }
            p = ifa.ifa_next;
        }
        libc::freeifaddrs(head);
    }
    out
}

/// Choose the address to advertise (and, when `FERRY_IF` is given, to bind). `spec` is an
/// interface name or an IPv4 CIDR; empty means: the first non-loopback address, else loopback.
pub fn choose_address(spec: &str, ifs: &[(String, Ipv4Addr)]) -> Result<Ipv4Addr, TransportError> {
    let spec = spec.trim();
    if spec.is_empty() {
        return Ok(ifs.iter().map(|(_, ip)| *ip).find(|ip| !ip.is_loopback()).unwrap_or(Ipv4Addr::LOCALHOST));
    }
    if let Some((net, bits)) = spec.split_once('/') {
        let net: Ipv4Addr = net.parse().map_err(|_| TransportError::Interface(format!("{spec:?} is not name or a.b.c.d/n")))?;
        let bits: u32 = bits.parse().ok().filter(|b| *b <= 32).ok_or_else(|| TransportError::Interface(format!("bad prefix length in {spec:?}")))?;
        let mask = if bits == 0 { 0 } else { u32::MAX << (32 - bits) };
        return ifs
            .iter()
            .map(|(_, ip)| *ip)
            .find(|ip| u32::from(*ip) & mask == u32::from(net) & mask)
            .ok_or_else(|| TransportError::Interface(format!("no interface address in {spec}")));
    }
    ifs.iter()
        .find(|(n, _)| n == spec)
        .map(|(_, ip)| *ip)
        .ok_or_else(|| TransportError::Interface(format!("no IPv4 interface named {spec:?}")))
}

/// A bound, listening socket and the address to advertise for it.
pub struct Listener {
    pub socket: mio::net::TcpListener,
    pub advertise: SocketAddr,
}

/// Listen on `bind_ip` (any port, or the first free one of `range`).
pub fn listen(bind_ip: IpAddr, advertise_ip: IpAddr, range: Option<(u16, u16)>) -> Result<Listener, TransportError> {
    let ports: Vec<u16> = match range {
        Some((lo, hi)) => (lo..=hi).collect(),
        None => vec![0],
    };
    let mut last = None;
    for port in ports {
        match std::net::TcpListener::bind(SocketAddr::new(bind_ip, port)) {
            Ok(l) => {
                l.set_nonblocking(true)?;
                let port = l.local_addr()?.port();
                return Ok(Listener { socket: mio::net::TcpListener::from_std(l), advertise: SocketAddr::new(advertise_ip, port) });
            }
            Err(e) => last = Some(e),
        }
    }
    Err(TransportError::Bind(match (range, last) {
        (Some((lo, hi)), Some(e)) => format!("no free port in FERRY_PORT_RANGE {lo}:{hi} (last error: {e})"),
        (_, Some(e)) => e.to_string(),
        _ => "no port to try".into(),
    }))
}

fn set_sndbuf(stream: &mio::net::TcpStream, bytes: usize) {
    use std::os::fd::AsRawFd;
    let v = bytes.min(i32::MAX as usize) as libc::c_int;
    // SAFETY: setsockopt reads one c_int from a valid pointer; the fd is a live socket.
    let rc = unsafe {
        libc::setsockopt(stream.as_raw_fd(), libc::SOL_SOCKET, libc::SO_SNDBUF, &v as *const libc::c_int as *const libc::c_void, std::mem::size_of::<libc::c_int>() as libc::socklen_t)
    };
    if rc != 0 {
        crate::debug!("tcp", "SO_SNDBUF {bytes}: {}", io::Error::last_os_error());
    }
}

/// Where an inbound payload goes.
pub enum Sink {
    /// Caller memory: the first `cap` bytes land at `ptr`, the rest is counted and dropped
    /// (a truncated receive).
    Mem { ptr: *mut u8, cap: usize, off: usize },
    /// An owned buffer (unexpected messages, control payloads).
    Vec(Vec<u8>),
    /// Read and drop.
    Discard,
}

impl Sink {
    pub(crate) fn put(&mut self, data: &[u8]) {
        match self {
            Sink::Mem { ptr, cap, off } => {
                let n = data.len().min(cap.saturating_sub(*off));
                if n > 0 {
                    // SAFETY: the engine made this sink from a buffer of `cap` bytes that stays
                    // valid until the request completes (MPI's rule for receive buffers).
                    unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), ptr.add(*off), n) };
                }
                *off += data.len();
            }
            Sink::Vec(v) => v.extend_from_slice(data),
            Sink::Discard => {}
        }
    }

    /// Room to read into directly, when the sink is caller memory not yet full.
    fn direct(&mut self, want: usize) -> Option<&mut [u8]> {
        match self {
            Sink::Mem { ptr, cap, off } if *off < *cap => {
                let n = want.min(*cap - *off);
                // SAFETY: as in `put`; the slice lies within the caller's buffer.
                Some(unsafe { std::slice::from_raw_parts_mut(ptr.add(*off), n) })
            }
            _ => None,
        }
    }

    fn advance(&mut self, n: usize) {
        if let Sink::Mem { off, .. } = self {
            *off += n;
        }
    }
}

/// What reading a connection produced.
pub enum RxEvent {
    /// A header was decoded; the caller must call [`Conn::start_payload`] when `len > 0`.
    Header(Header),
    /// The payload of the header last returned is complete.
    Payload(Header, Sink),
    /// Nothing more to read now.
    WouldBlock,
    /// The peer closed the connection.
    Eof,
}

/// A frame waiting to be written.
pub struct OutFrame {
    pub header: [u8; HEADER_LEN],
    pub payload: Payload,
    sent: usize,
    /// The request this frame completes once fully written.
    pub completes: Option<u64>,
}

pub enum Payload {
    None,
    Owned(Vec<u8>),
    /// Caller memory that stays valid until `completes` is reported (rendezvous data).
    Borrowed { ptr: *const u8, len: usize },
}

impl Payload {
    pub(crate) fn bytes(&self) -> &[u8] {
        match self {
            Payload::None => &[],
            Payload::Owned(v) => v,
            // A zero-length payload may come with any pointer, NULL included.
            Payload::Borrowed { len: 0, .. } => &[],
            // SAFETY: the sender keeps this buffer valid until the frame is reported written.
            Payload::Borrowed { ptr, len } => unsafe { std::slice::from_raw_parts(*ptr, *len) },
        }
    }
}

impl OutFrame {
    pub fn new(header: &Header, payload: Payload, completes: Option<u64>) -> OutFrame {
        OutFrame { header: header.encode(), payload, sent: 0, completes }
    }

    fn total(&self) -> usize {
        HEADER_LEN + self.payload.bytes().len()
    }
}

const RBUF: usize = 64 << 10;
/// Payload remainders at least this large are read straight into caller memory.
const DIRECT_MIN: usize = 8 << 10;

enum RxState {
    Header,
    Payload { header: Header, sink: Sink, left: u64 },
}

/// One TCP connection to a peer.
pub struct Conn {
    pub stream: mio::net::TcpStream,
    rbuf: Box<[u8]>,
    rstart: usize,
    rend: usize,
    rx: RxState,
    pub out: VecDeque<OutFrame>,
    /// The socket may hold unread bytes. Cleared by a short read or `WouldBlock` (for a
    /// stream socket a short read means the kernel buffer is empty, so with edge-triggered
    /// epoll no further read is needed until the next readable event, which sets it again).
    maybe_readable: bool,
}

impl Conn {
    /// Wrap a connected (or connecting) stream; `sndbuf` bytes of kernel send buffer, or the
    /// kernel's autotuning when 0.
    pub fn new(stream: mio::net::TcpStream, sndbuf: usize) -> Conn {
        let _ = stream.set_nodelay(true);
        if sndbuf > 0 {
            set_sndbuf(&stream, sndbuf);
        }
        Conn { stream, rbuf: vec![0u8; RBUF].into_boxed_slice(), rstart: 0, rend: 0, rx: RxState::Header, out: VecDeque::new(), maybe_readable: true }
    }

    /// The poller reported the socket readable.
    pub fn mark_readable(&mut self) {
        self.maybe_readable = true;
    }

    fn fill(&mut self) -> io::Result<Option<usize>> {
        if self.rstart == self.rend {
            self.rstart = 0;
            self.rend = 0;
        } else if self.rstart > RBUF / 2 {
            self.rbuf.copy_within(self.rstart..self.rend, 0);
            self.rend -= self.rstart;
            self.rstart = 0;
        }
        if !self.maybe_readable {
            return Ok(None);
        }
        let want = RBUF - self.rend;
        match self.stream.read(&mut self.rbuf[self.rend..]) {
            Ok(0) => Ok(Some(0)),
            Ok(n) => {
                self.rend += n;
                if n < want {
                    self.maybe_readable = false;
                }
                Ok(Some(n))
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                self.maybe_readable = false;
                Ok(None)
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => Ok(Some(1)),
            Err(e) => Err(e),
        }
    }

    /// Advance the inbound side by one event.
    pub fn poll_rx(&mut self, limits: &Limits) -> Result<RxEvent, TransportError> {
        loop {
            match &mut self.rx {
                RxState::Header => {
                    if self.rend - self.rstart >= HEADER_LEN {
                        let h = Header::decode(&self.rbuf[self.rstart..self.rend], limits).map_err(TransportError::Wire)?;
                        self.rstart += HEADER_LEN;
                        return Ok(RxEvent::Header(h));
                    }
                    match self.fill()? {
                        None => return Ok(RxEvent::WouldBlock),
                        Some(0) => return Ok(RxEvent::Eof),
                        Some(_) => {}
                    }
                }
                RxState::Payload { sink, left, .. } => {
                    if *left > 0 && self.rend > self.rstart {
                        let n = (*left).min((self.rend - self.rstart) as u64) as usize;
                        sink.put(&self.rbuf[self.rstart..self.rstart + n]);
                        self.rstart += n;
                        *left -= n as u64;
                    }
                    if *left == 0 {
                        let RxState::Payload { header, sink, .. } = std::mem::replace(&mut self.rx, RxState::Header) else {
                            unreachable!("matched above")
                        };
                        return Ok(RxEvent::Payload(header, sink));
                    }
                    if *left as usize >= DIRECT_MIN {
                        if !self.maybe_readable {
                            return Ok(RxEvent::WouldBlock);
                        }
                        if let Some(room) = sink.direct(*left as usize) {
                            let want = room.len();
                            match self.stream.read(room) {
                                Ok(0) => return Ok(RxEvent::Eof),
                                Ok(n) => {
                                    if n < want {
                                        self.maybe_readable = false;
                                    }
                                    sink.advance(n);
                                    *left -= n as u64;
                                    continue;
                                }
                                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                                    self.maybe_readable = false;
                                    return Ok(RxEvent::WouldBlock);
                                }
                                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                                Err(e) => return Err(e.into()),
                            }
                        }
                    }
                    match self.fill()? {
                        None => return Ok(RxEvent::WouldBlock),
                        Some(0) => return Ok(RxEvent::Eof),
                        Some(_) => {}
                    }
                }
            }
        }
    }

    /// After a `Header` event with a payload: say where the payload goes.
    pub fn start_payload(&mut self, header: Header, sink: Sink) {
        self.rx = RxState::Payload { left: header.len, header, sink };
    }

    /// Queue a frame; written by the next [`Conn::flush`].
    pub fn push(&mut self, f: OutFrame) {
        self.out.push_back(f);
    }

    /// Write queued frames until done or the socket is full; returns the requests completed.
    pub fn flush(&mut self, completed: &mut Vec<u64>) -> io::Result<()> {
        while !self.out.is_empty() {
            let mut slices: Vec<IoSlice<'_>> = Vec::with_capacity(32);
            for f in self.out.iter().take(16) {
                let hdr_left = HEADER_LEN.saturating_sub(f.sent);
                if hdr_left > 0 {
                    slices.push(IoSlice::new(&f.header[f.sent..]));
                    slices.push(IoSlice::new(f.payload.bytes()));
                } else {
                    slices.push(IoSlice::new(&f.payload.bytes()[f.sent - HEADER_LEN..]));
                }
            }
            let n = match self.stream.write_vectored(&slices) {
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(()),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            drop(slices);
            let mut n = n;
            while n > 0 {
                let f = self.out.front_mut().expect("bytes written belong to queued frames");
                let left = f.total() - f.sent;
                if n >= left {
                    n -= left;
                    let f = self.out.pop_front().expect("front exists");
                    if let Some(r) = f.completes {
                        completed.push(r);
                    }
                } else {
                    f.sent += n;
                    n = 0;
                }
            }
            // Zero-length frames complete without bytes of their own only when at the front.
            while self.out.front().map_or(false, |f| f.total() == f.sent) {
                let f = self.out.pop_front().expect("front exists");
                if let Some(r) = f.completes {
                    completed.push(r);
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ifs() -> Vec<(String, Ipv4Addr)> {
        vec![("lo".into(), Ipv4Addr::LOCALHOST), ("eth0".into(), Ipv4Addr::new(10, 1, 2, 3)), ("ib0".into(), Ipv4Addr::new(192, 168, 7, 9))]
    }

    #[test]
    fn address_by_default_name_and_cidr() {
        assert_eq!(choose_address("", &ifs()).unwrap(), Ipv4Addr::new(10, 1, 2, 3));
        assert_eq!(choose_address("", &ifs()[..1]).unwrap(), Ipv4Addr::LOCALHOST);
        assert_eq!(choose_address("ib0", &ifs()).unwrap(), Ipv4Addr::new(192, 168, 7, 9));
        assert_eq!(choose_address("192.168.0.0/16", &ifs()).unwrap(), Ipv4Addr::new(192, 168, 7, 9));
        assert_eq!(choose_address("127.0.0.0/8", &ifs()).unwrap(), Ipv4Addr::LOCALHOST);
        assert_eq!(choose_address("0.0.0.0/0", &ifs()).unwrap(), Ipv4Addr::LOCALHOST);
    }

    #[test]
    fn address_errors_name_the_problem() {
        for bad in ["wlan9", "172.16.0.0/12", "10.0.0.0/40", "nonsense/8"] {
            let e = choose_address(bad, &ifs()).unwrap_err().to_string();
            assert!(e.starts_with("FERRY_IF"), "{bad}: {e}");
        }
    }

    #[test]
    fn port_range_is_honoured_and_exhaustion_is_reported() {
        let lo = IpAddr::V4(Ipv4Addr::LOCALHOST);
        // Find a pair of free adjacent ports (another process may hold some).
        let (base, a, b) = (0..200u16)
            .map(|i| 47000 + ((std::process::id() as u16 % 500) * 2 + i * 2) % 4000)
            .find_map(|base| {
                let a = listen(lo, lo, Some((base, base))).ok()?;
                let b = listen(lo, lo, Some((base + 1, base + 1))).ok()?;
                Some((base, a, b))
            })
            .expect("some pair of adjacent ports is free");
        assert_eq!((a.advertise.port(), b.advertise.port()), (base, base + 1));
        let e = listen(lo, lo, Some((base, base + 1))).err().expect("range exhausted").to_string();
        assert!(e.contains("FERRY_PORT_RANGE"), "{e}");
        // With the second port free again, a range search skips the busy first one.
        drop(b);
        assert_eq!(listen(lo, lo, Some((base, base + 1))).unwrap().advertise.port(), base + 1);
        drop(a);
    }
}

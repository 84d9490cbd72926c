//! Joining the shared memory of one host: the segment, this rank's ring ends, its doorbell,
//! the status board and the wake-up socket, set up once at start-up for the engine.
//!
//! The engine sleeps in `epoll`, because it may wait for sockets (other hosts, new
//! connections) and rings at once, and a futex cannot be watched by `epoll`. So each rank
//! also binds a datagram socket in the abstract namespace (nothing on disk, gone with the
//! process); a peer that publishes into a ring and finds the owner's doorbell showing a
//! sleeper sends it one byte (the doorbell's kick). While nobody sleeps, a notification is a
//! fence and a load, as before; any datagram is only a reason to look at the rings again, so
//! a stray one from another process costs a spurious wake-up and nothing else.
//!
//! The segment's name is removed as soon as every local rank has mapped it, by the rank that
//! completes the set: from then on no crash can leave it behind. The launcher removes it too
//! (a job that dies during start-up).

use std::io;
use std::os::linux::net::SocketAddrExt;
use std::os::unix::net::{SocketAddr, UnixDatagram};
use std::sync::Arc;
use std::time::Duration;

use super::{unlink, Consumer, Doorbell, Producer, Segment, ShmError, StatusBoard};

/// What a rank needs to join its host's shared memory.
pub struct HostConfig {
    /// The segment's job id: unique per job and host (see [`host_job_id`]).
    pub job_id: String,
    /// World ranks on this host, ascending; local rank `i` is `locals[i]`.
    pub locals: Vec<u32>,
    /// This process's world rank (one of `locals`).
    pub me: u32,
    /// Bytes of each ring's data area (a power of two).
    pub ring_capacity: usize,
    /// How long to wait for the creator of the segment.
    pub timeout: Duration,
}

/// The ring ends between this rank and one other local rank.
pub struct Link {
    /// This rank -> peer.
    pub tx: Producer,
    /// Peer -> this rank.
    pub rx: Consumer,
}

/// This rank's part of its host's shared memory.
pub struct HostShm {
    pub segment: Segment,
    /// World ranks on this host, ascending.
    pub locals: Vec<u32>,
    /// Our index in `locals`.
    pub local: usize,
    /// The host's status board (indexed by local rank).
    pub board: StatusBoard,
    /// Our own doorbell: announce sleeps on it so that peers kick us.
    pub bell: Doorbell,
    /// Where kicks arrive; the engine watches it.
    pub wake: UnixDatagram,
}

/// The segment job id for one host of a job: the job's name plus a short hash of the host
/// identity, so that ranks emulating different hosts on one machine get separate segments.
/// Only `[A-Za-z0-9._-]` survive from `job`; the result is at most 100 characters.
pub fn host_job_id(job: &str, host_identity: &str) -> String {
    let clean: String = job.chars().filter(|c| c.is_ascii_alphanumeric() || "._-".contains(*c)).take(80).collect();
    format!("{clean}-{:016x}", fnv1a(host_identity.as_bytes()))
}

/// Prefix of every segment name of `job` (for the launcher's clean-up, which lists
/// `/dev/shm` and removes what starts with it).
pub fn job_segment_prefix(job: &str) -> String {
    let clean: String = job.chars().filter(|c| c.is_ascii_alphanumeric() || "._-".contains(*c)).take(80).collect();
    format!("ferry-{clean}-")
}

fn fnv1a(b: &[u8]) -> u64 {
    b.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &x| (h ^ x as u64).wrapping_mul(0x0100_0000_01b3))
}

/// The abstract socket name local rank `local` of segment `job_id` listens on for kicks.
fn wake_name(job_id: &str, local: usize) -> Vec<u8> {
    format!("ferry-wake-{:016x}-{local}", fnv1a(job_id.as_bytes())).into_bytes()
}

fn io_err(op: &'static str, name: &str, source: io::Error) -> ShmError {
    ShmError::Io { op, name: name.to_string(), source }
}

impl HostShm {
    /// Create (local rank 0) or open (the others) the host segment, bind the wake-up socket
    /// and take this rank's ring ends. Returns the links by world rank of the peer.
    pub fn join(cfg: HostConfig) -> Result<(HostShm, Vec<(u32, Link)>), ShmError> {
        let local = cfg.locals.iter().position(|&r| r == cfg.me).ok_or_else(|| ShmError::Layout(format!("rank {} is not among the local ranks {:?}", cfg.me, cfg.locals)))?;
        let n = cfg.locals.len();
        // Bind first: a peer kicks us only after we announce a sleep, which needs the segment.
        let wake_addr = SocketAddr::from_abstract_name(wake_name(&cfg.job_id, local)).map_err(|e| io_err("wake address", &cfg.job_id, e))?;
        let wake = UnixDatagram::bind_addr(&wake_addr).map_err(|e| io_err("bind wake-up socket", &cfg.job_id, e))?;
        wake.set_nonblocking(true).map_err(|e| io_err("wake-up socket", &cfg.job_id, e))?;

        let mut segment = if local == 0 {
            match Segment::create(&cfg.job_id, n, cfg.ring_capacity) {
                Err(ShmError::Exists(_)) => {
                    // Left behind by an earlier job whose id we now reuse (a recycled pid
                    // that crashed before clean-up): nobody of ours can be using it yet.
                    unlink(&cfg.job_id)?;
                    Segment::create(&cfg.job_id, n, cfg.ring_capacity)?
                }
                r => r?,
            }
        } else {
            Segment::open(&cfg.job_id, cfg.timeout)?
        };
        if segment.local_ranks() != n {
            return Err(ShmError::Layout(format!("segment serves {} ranks, this host has {n}", segment.local_ranks())));
        }
        if segment.joined_as() as usize == n {
            unlink(&cfg.job_id)?;
        }

        let kicker = UnixDatagram::unbound().map_err(|e| io_err("kick socket", &cfg.job_id, e))?;
        kicker.set_nonblocking(true).map_err(|e| io_err("kick socket", &cfg.job_id, e))?;
        let addrs: Vec<SocketAddr> = (0..n).map(|i| SocketAddr::from_abstract_name(wake_name(&cfg.job_id, i))).collect::<io::Result<_>>().map_err(|e| io_err("wake address", &cfg.job_id, e))?;
        // A full socket buffer means kicks are already pending, and a vanished peer needs none:
        // both failures are harmless.
        segment.set_waker(Arc::new(move |i: usize| {
            let _ = kicker.send_to_addr(&[1], &addrs[i]);
        }));

        let mut links = Vec::with_capacity(n.saturating_sub(1));
        for (i, &peer) in cfg.locals.iter().enumerate() {
            if i != local {
                links.push((peer, Link { tx: segment.producer(local, i)?, rx: segment.consumer(i, local)? }));
            }
        }
        let board = segment.status_board();
        let bell = segment.doorbell(local)?;
        Ok((HostShm { segment, locals: cfg.locals, local, board, bell, wake }, links))
    }

    /// Local rank of world rank `r`, if it is on this host.
    pub fn local_of(&self, r: u32) -> Option<usize> {
        self.locals.binary_search(&r).ok()
    }

    /// Read every pending kick (they only say "look at the rings").
    pub fn drain_wake(&self) {
        let mut b = [0u8; 64];
        while self.wake.recv(&mut b).is_ok() {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shm_host_job_ids_are_valid_and_distinct() {
        let a = host_job_id("kvs_123_0", "front|nodeA");
        let b = host_job_id("kvs_123_0", "front|nodeB");
        assert_ne!(a, b);
        assert!(a.starts_with("kvs_123_0-"));
        assert!(super::super::segment_name(&a).is_ok());
        assert!(format!("ferry-{a}").starts_with(&job_segment_prefix("kvs_123_0")));
        let weird = host_job_id("a/b c:d", "h");
        assert!(super::super::segment_name(&weird).is_ok(), "{weird}");
    }

    #[test]
    fn shm_host_join_two_ranks_in_one_process_and_kick() {
        let job = host_job_id(&format!("hosttest-{}", std::process::id()), "h");
        let cfg = |me| HostConfig { job_id: job.clone(), locals: vec![3, 7], me, ring_capacity: 8192, timeout: Duration::from_secs(5) };
        let (h0, mut l0) = HostShm::join(cfg(3)).expect("creator joins");
        let (h1, mut l1) = HostShm::join(cfg(7)).expect("opener joins");
        assert!(!std::path::Path::new(&format!("/dev/shm/ferry-{job}")).exists(), "the last to join removes the name");
        assert_eq!((h0.local, h1.local, h1.local_of(3), h1.local_of(5)), (0, 1, Some(0), None));
        // Rank 7 announces a sleep; rank 3's write must kick its socket.
        h1.bell.begin_sleep();
        assert!(l0[0].1.tx.try_write(b"hdr", b"payload"));
        h1.bell.end_sleep();
        let mut b = [0u8; 8];
        assert_eq!(h1.wake.recv(&mut b).expect("kicked"), 1);
        let got = l1[0].1.rx.read(|p| (p.header.to_vec(), p.payload.to_vec())).unwrap().unwrap();
        assert_eq!(got, (b"hdr".to_vec(), b"payload".to_vec()));
        // Nobody asleep: no kick.
        assert!(l0[0].1.tx.try_write(b"h", b""));
        assert!(h1.wake.recv(&mut b).is_err());
        h0.board.begin_transfer(0);
        assert_eq!(h1.board.in_flight(0), 1);
    }
}

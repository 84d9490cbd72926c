//! Ping-pong between two processes through a job's shared-memory segment: one-way latency and
//! bandwidth of the shm rings, with the spin-then-futex wait the runtime uses. Frames of at
//! most the ring's size go whole; larger ones stream in pieces while both sides copy. The
//! receiver copies every payload out into its own buffer, as a real receive does.
//!
//! ```text
//! cargo run --release -p ferry-core --example shm_pingpong [ring KiB, default 1024]
//! ```
//!
//! Output: one line per size, `size  iterations  one-way-latency-us  bandwidth-MB/s`, then the
//! single-thread memcpy rate for the same sizes (the ceiling for a copy through memory).

use std::time::{Duration, Instant};

use ferry_core::transport::shm::{self, Consumer, Doorbell, PartialWrite, Producer, Segment};
use ferry_wire::{Header, Kind};

const CHILD: &str = "FERRY_PINGPONG_JOB";
/// Checks of the condition before sleeping on the futex (a few microseconds).
const SPINS: u32 = 20_000;
const SIZES: [(usize, u32); 5] = [(8, 200_000), (4096, 50_000), (65536, 10_000), (1 << 20, 1000), (4 << 20, 300)];

struct Endpoint {
    tx: Producer,
    rx: Consumer,
    bell: Doorbell,
    buf: Vec<u8>,
}

impl Endpoint {
    fn send(&mut self, header: &[u8], payload: &[u8]) {
        let whole = header.len() + payload.len() <= self.tx.max_frame();
        let mut cursor = PartialWrite::new();
        loop {
            let done = if whole { self.tx.try_write(header, payload) } else { self.tx.write_partial(header, payload, &mut cursor) };
            if done {
                return;
            }
            let tx = &self.tx;
            self.bell.wait_until(SPINS, None, || tx.space_freed());
        }
    }

    /// Receive one frame into `buf`; returns its payload length.
    fn recv(&mut self) -> usize {
        let mut got = 0;
        loop {
            match self.rx.peek().expect("well-formed ring") {
                Some(piece) => {
                    let end = got + piece.payload.len();
                    self.buf[got..end].copy_from_slice(piece.payload);
                    got = end;
                    let last = piece.last;
                    self.rx.consume();
                    if last {
                        return got;
                    }
                }
                None => {
                    let rx = &self.rx;
                    self.bell.wait_until(SPINS, None, || rx.has_data());
                }
            }
        }
    }
}

fn endpoint(seg: &Segment, me: usize) -> Endpoint {
    let peer = 1 - me;
    Endpoint {
        tx: seg.producer(me, peer).expect("producer"),
        rx: seg.consumer(peer, me).expect("consumer"),
        bell: seg.doorbell(me).expect("doorbell"),
        buf: vec![0u8; SIZES.iter().map(|s| s.0).max().unwrap_or(0)],
    }
}

fn main() {
    if let Ok(job) = std::env::var(CHILD) {
        let seg = Segment::open(&job, Duration::from_secs(10)).expect("open segment");
        let mut ep = endpoint(&seg, 1);
        let payload = vec![0x5au8; ep.buf.len()];
        let header = Header::new(Kind::Eager).encode();
        for &(size, iters) in &SIZES {
            for _ in 0..iters + iters / 10 {
                let n = ep.recv();
                assert_eq!(n, size);
                ep.send(&header, &payload[..size]);
            }
        }
        return;
    }
    let ring_kib: usize = std::env::args().nth(1).map(|a| a.parse().expect("ring size in KiB")).unwrap_or(1024);
    let job = format!("pingpong-{}", std::process::id());
    let seg = Segment::create(&job, 2, ring_kib * 1024).expect("create segment");
    let mut child = std::process::Command::new(std::env::current_exe().expect("own path"))
        .env(CHILD, &job)
        .spawn()
        .expect("spawn peer");
    let mut ep = endpoint(&seg, 0);
    let payload = vec![0xa5u8; ep.buf.len()];
    let header = Header::new(Kind::Eager).encode();
    println!("# shm ping-pong, ring {ring_kib} KiB, cma: {}", shm::cma_support().detail);
    println!("# {:>9} {:>10} {:>12} {:>12}", "size", "iterations", "latency(us)", "MB/s");
    for &(size, iters) in &SIZES {
        let warmup = iters / 10;
        let mut start = Instant::now();
        for i in 0..iters + warmup {
            if i == warmup {
                start = Instant::now();
            }
            ep.send(&header, &payload[..size]);
            assert_eq!(ep.recv(), size);
        }
        let one_way = start.elapsed().as_secs_f64() / (2.0 * iters as f64);
        println!("{:>11} {:>10} {:>12.3} {:>12.1}", size, iters, one_way * 1e6, size as f64 / one_way / 1e6);
    }
    child.wait().expect("peer exit");
    drop((ep, seg));
    shm::unlink(&job).expect("unlink");
    println!("# single-thread memcpy");
    for &(size, _) in &SIZES[3..] {
        let src = vec![1u8; size];
        let mut dst = vec![0u8; size];
        let reps = (1 << 30) / size;
        let t = Instant::now();
        for _ in 0..reps {
            dst.copy_from_slice(std::hint::black_box(&src));
            std::hint::black_box(&mut dst);
        }
        let per = t.elapsed().as_secs_f64() / reps as f64;
        println!("{:>11} {:>10} {:>12.3} {:>12.1}", size, reps, per * 1e6, size as f64 / per / 1e6);
    }
}

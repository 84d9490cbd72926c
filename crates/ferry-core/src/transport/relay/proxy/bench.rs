//! What the relay costs against a direct connection, measured on loopback in one run:
//! bandwidth in 1 MiB writes and 8-byte ping-pong round trips, relayed and direct taking
//! turns (best of 3 each), so that a busy machine hurts both alike.
//!
//! `cargo test --release -p ferry-core relay_vs_direct -- --ignored --nocapture`
//! Settings from the environment: `FERRY_BENCH_MIB` the volume (2048 MiB by default),
//! `FERRY_BENCH_BUFFER` the pair's buffer in bytes (the proxy's default otherwise),
//! `FERRY_BENCH_SPLICE=0` relays by copying, `FERRY_BENCH_TRIES` the turns (3).

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::time::{Duration, Instant};

use super::tests::{control, relay, start, target, Running};

const CHUNK: usize = 1 << 20;
const PINGS: usize = 20_000;

/// CPU time of the whole process so far (every thread: sender, receiver, proxy), seconds.
fn cpu() -> f64 {
    // SAFETY: getrusage writes one rusage through the valid pointer; all-zero is a valid rusage.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: as above; RUSAGE_SELF is always a valid target.
    assert_eq!(unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut u) }, 0);
    let t = |v: libc::timeval| v.tv_sec as f64 + v.tv_usec as f64 / 1e6;
    t(u.ru_utime) + t(u.ru_stime)
}

/// Push `total` bytes from `tx` to `rx` in 1 MiB writes: MB/s, from the first write to the
/// last byte read, and the CPU seconds all threads spent per GB.
fn push(tx: TcpStream, mut rx: TcpStream, total: usize) -> (f64, f64) {
    let (t0, c0) = (Instant::now(), cpu());
    let writer = std::thread::spawn(move || {
        let mut tx = tx;
        let chunk = vec![0x5au8; CHUNK];
        let mut left = total;
        while left > 0 {
            let n = left.min(CHUNK);
            tx.write_all(&chunk[..n]).expect("write");
            left -= n;
        }
        tx
    });
    let mut buf = vec![0u8; CHUNK];
    let mut got = 0;
    while got < total {
        match rx.read(&mut buf).expect("read") {
            0 => panic!("end of stream after {got} of {total} bytes"),
            n => got += n,
        }
    }
    let (secs, cpu_secs) = (t0.elapsed().as_secs_f64(), cpu() - c0);
    drop(writer.join().expect("writer"));
    (total as f64 / secs / 1e6, cpu_secs / (total as f64 / 1e9))
}

/// 8-byte round trips per second between `a` and an echo at `b`.
fn ping(mut a: TcpStream, b: TcpStream) -> f64 {
    a.set_nodelay(true).expect("nodelay");
    b.set_nodelay(true).expect("nodelay");
    let echo = std::thread::spawn(move || {
        let mut b = b;
        let mut m = [0u8; 8];
        while b.read_exact(&mut m).is_ok() {
            if b.write_all(&m).is_err() {
                return;
            }
        }
    });
    let mut m = [7u8; 8];
    let t0 = Instant::now();
    for _ in 0..PINGS {
        a.write_all(&m).expect("ping");
        a.read_exact(&mut m).expect("pong");
    }
    let rate = PINGS as f64 / t0.elapsed().as_secs_f64();
    drop(a);
    echo.join().expect("echo");
    rate
}

fn direct() -> (TcpStream, TcpStream) {
    let l = TcpListener::bind("127.0.0.1:0").expect("bind");
    let a = TcpStream::connect(l.local_addr().expect("addr")).expect("connect");
    let (b, _) = l.accept().expect("accept");
    (a, b)
}

/// A fresh relayed pair from rank `from` to rank 1 (the pair's own quota stays small).
fn relayed(r: &Running, l: &TcpListener, job: [u8; 16], from: u32) -> (TcpStream, TcpStream) {
    let a = relay(r, job, b"bench", from, 1).expect("relayed connection");
    let (b, _) = l.accept().expect("the proxy connects to the target");
    (a, b)
}

#[test]
#[ignore = "a measurement, not a check: run it by name with --ignored --nocapture"]
fn relay_vs_direct() {
    let var = |name: &str| std::env::var(name).ok().and_then(|v| v.parse::<usize>().ok());
    let mib = var("FERRY_BENCH_MIB").unwrap_or(2048);
    let total = mib << 20;
    let tries = var("FERRY_BENCH_TRIES").unwrap_or(3);
    let r = start(|c| {
        c.pair_buffer = var("FERRY_BENCH_BUFFER").unwrap_or(c.pair_buffer);
        c.splice = var("FERRY_BENCH_SPLICE") != Some(0);
        println!("pair buffer {} bytes, splice {}", c.pair_buffer, c.splice);
    });
    let (l, ta) = target();
    let job = [0xbe; 16];
    let _ctl = control(&r, job, b"bench", 64, &[(1, ta)]);
    let mut from = 2;
    let mut next = || {
        from += 1;
        from
    };
    let (mut bw_relay, mut bw_direct, mut rt_relay, mut rt_direct) = ((0f64, 0f64), (0f64, 0f64), 0f64, 0f64);
    let best = |a: (f64, f64), b: (f64, f64)| if b.0 > a.0 { b } else { a };
    for _ in 0..tries {
        let (a, b) = relayed(&r, &l, job, next());
        bw_relay = best(bw_relay, push(a, b, total));
        let (a, b) = direct();
        bw_direct = best(bw_direct, push(a, b, total));
        let (a, b) = relayed(&r, &l, job, next());
        rt_relay = rt_relay.max(ping(a, b));
        let (a, b) = direct();
        rt_direct = rt_direct.max(ping(a, b));
        // Let the proxy close the pairs before the next turn.
        std::thread::sleep(Duration::from_millis(50));
    }
    println!("bandwidth, {mib} MiB in 1 MiB writes (best of {tries}):");
    println!("  relayed {:8.0} MB/s   direct {:8.0} MB/s   relayed/direct {:5.1}%", bw_relay.0, bw_direct.0, 100.0 * bw_relay.0 / bw_direct.0);
    println!("  CPU seconds per GB (all threads): relayed {:.3}, direct {:.3}", bw_relay.1, bw_direct.1);
    println!("8-byte ping-pong, {PINGS} round trips (best of {tries}):");
    println!("  relayed {rt_relay:8.0} rt/s   direct {rt_direct:8.0} rt/s   relayed/direct {:5.1}%", 100.0 * rt_relay / rt_direct);
    println!("  latency relayed {:.1} us, direct {:.1} us", 1e6 / rt_relay, 1e6 / rt_direct);
}

//! Tests across real processes: the test binary runs itself again with a role in the
//! environment, over a real `/dev/shm` segment.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use ferry_wire::{Header, Kind, Limits};

use super::ring::tests::{pattern, Reassembler};
use super::*;

const ROLE: &str = "FERRY_SHM_TEST_ROLE";
const JOB: &str = "FERRY_SHM_TEST_JOB";
const FRAMES: u64 = 100_000;
const RING: usize = 64 * 1024;
/// The producer stops for this long, this many times, so the consumer must sleep.
const PAUSE: Duration = Duration::from_millis(120);
const PAUSES: u64 = 4;

fn job_id(tag: &str) -> String {
    let mut b = [0u8; 8];
    getrandom::getrandom(&mut b).expect("getrandom");
    format!("test-{tag}-{}-{:016x}", std::process::id(), u64::from_le_bytes(b))
}

/// Removes a test's segment name even when the test fails half-way.
struct UnlinkOnDrop<'a>(&'a str);

impl Drop for UnlinkOnDrop<'_> {
    fn drop(&mut self) {
        let _ = unlink(self.0);
    }
}

/// Run this test binary again as `role`, executing only `test`.
fn spawn_role(test: &str, role: &str, job: &str) -> std::process::Child {
    Command::new(std::env::current_exe().expect("test binary path"))
        .args([test, "--exact", "--nocapture", "--test-threads=1"])
        .env(ROLE, role)
        .env(JOB, job)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("spawn child test process")
}

fn thread_cpu() -> Duration {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime fills the timespec on our stack.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

/// Frame `seq`'s payload length: mostly small, some up to the ring, 1% streamed past it.
fn frame_len(seq: u64) -> usize {
    let x = u64::from_le_bytes(pattern(seq ^ 0x5a5a, 8).try_into().expect("8 bytes")) as usize;
    let max_whole = RING - RECORD_PREFIX - ferry_wire::HEADER_LEN;
    match x % 100 {
        0 => max_whole + 1 + x % (3 * RING),
        1..=5 => x % (max_whole + 1),
        _ => x % 2048,
    }
}

/// The text after `key` in a line of a child's output (the harness may print before it).
fn after<'a>(line: &'a str, key: &str) -> Option<&'a str> {
    line.find(key).map(|i| &line[i + key.len()..])
}

fn fnv32(data: &[u8]) -> u32 {
    data.iter().fold(0x811c_9dc5u32, |h, &b| (h ^ b as u32).wrapping_mul(0x0100_0193))
}

/// Local rank 0: creates the segment, streams FRAMES frames to rank 1, pausing now and then.
#[test]
fn shm_two_processes_pass_100k_frames_and_sleep() {
    if std::env::var_os(ROLE).is_some() {
        return;
    }
    let job = job_id("pingpong");
    let _cleanup = UnlinkOnDrop(&job);
    let seg = Segment::create(&job, 2, RING).expect("create segment");
    let mut child = spawn_role("transport::shm::tests::shm_role_consumer", "consumer", &job);
    let mut tx = seg.producer(0, 1).expect("producer 0->1");
    let bell = seg.doorbell(0).expect("doorbell 0");
    let deadline = Instant::now() + Duration::from_secs(120);
    let mut full_waits = 0u64;
    for seq in 0..FRAMES {
        if seq > 0 && seq % (FRAMES / (PAUSES + 1)) == 0 {
            // Let the consumer drain and fall asleep.
            std::thread::sleep(PAUSE);
        }
        let payload = pattern(seq, frame_len(seq));
        let mut h = Header::new(Kind::Eager);
        h.dst = 1;
        h.seq = seq;
        h.len = payload.len() as u64;
        h.tag = fnv32(&payload) as i32;
        let h = h.encode();
        let mut cursor = PartialWrite::new();
        loop {
            let done = if payload.len() + h.len() > tx.max_frame() {
                tx.write_partial(&h, &payload, &mut cursor)
            } else {
                tx.try_write(&h, &payload)
            };
            if done {
                break;
            }
            full_waits += 1;
            let w = bell.wait_until(200, Some(deadline), || tx.space_freed());
            assert!(w.ready, "producer stuck at frame {seq}");
        }
    }
    let out = BufReader::new(child.stdout.take().expect("child stdout"));
    // Read to the end, so the child never writes into a closed pipe.
    let lines: Vec<String> = out.lines().map_while(Result::ok).collect();
    let result = lines.iter().find_map(|l| after(l, "RESULT ").map(str::to_string));
    let status = child.wait().expect("child exit");
    drop((tx, bell, seg));
    assert!(unlink(&job).expect("unlink"));
    assert!(!std::path::Path::new(&format!("/dev/shm/ferry-{job}")).exists());
    assert!(status.success(), "consumer failed: {status}");
    let result = result.expect("consumer printed its RESULT line");
    let field = |k: &str| -> f64 {
        result.split_whitespace().find_map(|kv| kv.strip_prefix(k)?.strip_prefix('=')?.parse().ok()).expect("field")
    };
    let (sleeps, idle_wall, idle_cpu) = (field("sleeps"), field("idle_wall_ms"), field("idle_cpu_ms"));
    eprintln!("{result} producer_full_waits={full_waits}");
    assert!(sleeps >= PAUSES as f64, "consumer slept {sleeps} times for {PAUSES} pauses");
    assert!(idle_wall >= (PAUSES as f64) * PAUSE.as_millis() as f64 * 0.5, "the pauses were not seen as waits");
    assert!(idle_cpu < idle_wall * 0.10, "consumer burned {idle_cpu} ms of CPU in {idle_wall} ms of waiting");
}

/// Local rank 1 (child process): receives, checks order, lengths and checksums, and measures
/// the CPU it spends in long waits.
#[test]
fn shm_role_consumer() {
    if std::env::var(ROLE).as_deref() != Ok("consumer") {
        return;
    }
    let job = std::env::var(JOB).expect("job id");
    let seg = Segment::open(&job, Duration::from_secs(10)).expect("open segment");
    let mut rx = seg.consumer(0, 1).expect("consumer 0->1");
    let bell = seg.doorbell(1).expect("doorbell 1");
    let limits = Limits::new(2);
    let deadline = Instant::now() + Duration::from_secs(120);
    let mut r = Reassembler::default();
    let (mut sleeps, mut idle_wall, mut idle_cpu) = (0u32, Duration::ZERO, Duration::ZERO);
    for seq in 0..FRAMES {
        let (h, payload) = loop {
            if let Some(f) = rx.read(|p| r.push(p)).expect("well-formed ring") {
                match f {
                    Some(frame) => break frame,
                    None => continue,
                }
            }
            let (w0, c0) = (Instant::now(), thread_cpu());
            let w = bell.wait_until(2000, Some(deadline), || rx.has_data());
            assert!(w.ready, "consumer stuck before frame {seq}");
            let wall = w0.elapsed();
            sleeps += w.sleeps;
            if wall > Duration::from_millis(20) {
                idle_wall += wall;
                idle_cpu += thread_cpu() - c0;
            }
        };
        let h = Header::decode(&h, &limits).expect("valid header");
        assert_eq!(h.seq, seq, "frames out of order");
        assert_eq!(h.len as usize, payload.len());
        assert_eq!(payload.len(), frame_len(seq));
        assert_eq!(fnv32(&payload) as i32, h.tag, "checksum of frame {seq}");
    }
    println!(
        "RESULT frames={FRAMES} pieces={} sleeps={sleeps} idle_wall_ms={:.1} idle_cpu_ms={:.2}",
        r.pieces,
        idle_wall.as_secs_f64() * 1e3,
        idle_cpu.as_secs_f64() * 1e3
    );
    std::io::stdout().flush().expect("flush");
}

/// A rank killed while attached leaves a segment only the launcher's unlink removes.
#[test]
fn shm_segment_of_killed_rank_is_removed_by_unlink() {
    if std::env::var_os(ROLE).is_some() {
        return;
    }
    let job = job_id("killed");
    let _cleanup = UnlinkOnDrop(&job);
    let mut child = spawn_role("transport::shm::tests::shm_role_creator", "creator", &job);
    let mut out = BufReader::new(child.stdout.take().expect("stdout"));
    let mut line = String::new();
    while after(&line, "CREATED").is_none() {
        line.clear();
        assert!(out.read_line(&mut line).expect("read") > 0, "creator exited early");
    }
    let seg = Segment::open(&job, Duration::from_secs(5)).expect("open");
    assert_eq!(seg.creator_pid(), child.id());
    child.kill().expect("SIGKILL");
    child.wait().expect("reap");
    assert!(std::path::Path::new(&format!("/dev/shm/ferry-{job}")).exists());
    assert!(unlink(&job).expect("unlink"));
    assert!(!std::path::Path::new(&format!("/dev/shm/ferry-{job}")).exists());
}

#[test]
fn shm_role_creator() {
    if std::env::var(ROLE).as_deref() != Ok("creator") {
        return;
    }
    let job = std::env::var(JOB).expect("job id");
    let _seg = Segment::create(&job, 4, 8192).expect("create");
    println!("CREATED");
    std::io::stdout().flush().expect("flush");
    std::thread::sleep(Duration::from_secs(60));
}

/// Single copy out of another process's buffer, when the probe says the kernel permits it.
#[test]
fn shm_cma_reads_another_process() {
    if std::env::var_os(ROLE).is_some() {
        return;
    }
    let mut child = spawn_role("transport::shm::tests::shm_role_cma_target", "cma-target", "-");
    let mut out = BufReader::new(child.stdout.take().expect("stdout"));
    let mut line = String::new();
    let (addr, len) = loop {
        line.clear();
        assert!(out.read_line(&mut line).expect("read") > 0, "target exited early");
        if let Some(rest) = after(&line, "BUFFER ") {
            let mut it = rest.split_whitespace().map(|v| v.parse::<usize>().expect("number"));
            break (it.next().expect("addr"), it.next().expect("len"));
        }
    };
    let mut local = vec![0u8; len];
    let res = read_remote_exact(child.id() as libc::pid_t, addr, &mut local);
    drop(child.stdin.take());
    let _rest: Vec<String> = out.lines().map_while(Result::ok).collect();
    assert!(child.wait().expect("reap").success());
    if cma_available() {
        res.expect("read from the target");
        assert!(local == pattern(99, len));
    } else {
        assert!(res.is_err(), "probe said unavailable ({}) but the read worked", cma_support().detail);
    }
}

#[test]
fn shm_role_cma_target() {
    if std::env::var(ROLE).as_deref() != Ok("cma-target") {
        return;
    }
    permit_peer_reads().expect("prctl");
    let buf = pattern(99, 3 * 1024 * 1024 + 17);
    println!("BUFFER {} {}", buf.as_ptr() as usize, buf.len());
    std::io::stdout().flush().expect("flush");
    // Keep the buffer alive until the reader closes our stdin.
    let mut s = String::new();
    let _ = std::io::stdin().read_line(&mut s);
    assert_eq!(buf, pattern(99, buf.len()));
}

//! Matching order and port bookkeeping in corner cases: any-source receives next to
//! specific ones, sends of one pair in order, times of -0, gap searches that must end,
//! zero-length transfers. Where the executor defines the result, the simulator must agree.
use ferry_coll::executor::{run, Buffers, RunConfig};
use ferry_coll::{BufferId, Range, ReduceId, Schedule};
use ferry_model::LogGp;
use ferry_sim::{Ports, Sim, Transfer};

fn r(b: BufferId, off: usize, len: usize) -> Range {
    Range::new(b, off, len)
}
fn noop(_: ReduceId, _: &[u8], _: &mut [u8]) {}
const P: LogGp = LogGp { l: 1.0, o: 0.5, g: 0.5, big_g: 0.01 };

fn both(scheds: impl Fn() -> Vec<Schedule>, bufs: Vec<Buffers>, bg: &[Transfer]) -> (Result<Vec<Buffers>, String>, Result<Vec<Buffers>, String>) {
    let ex = run(scheds(), bufs.clone(), &noop, &RunConfig::default()).map(|o| o.buffers).map_err(|e| e.to_string());
    let n = bufs.len();
    let mut sim = Sim::new(n, P).ports(Ports::InOrder);
    sim.add_background(bg).unwrap();
    sim.load(scheds(), &vec![0.0; n], Some((bufs, &noop))).unwrap();
    let s = sim.run().map(|o| o.buffers.unwrap()).map_err(|e| e.to_string());
    (ex, s)
}

/// A specific receive posted after an any-source one does not take the message that one waits for.
#[test]
fn a_recv_overtakes_earlier_posted_recv_any() {
    let scheds = || {
        let mut a = Schedule::new(0, 2, 0, 8);
        a.recv_any(vec![(1, vec![r(BufferId::Recv, 0, 4)])], &[]);
        let c = a.copy(r(BufferId::Recv, 0, 0), r(BufferId::Recv, 0, 0), &[]);
        a.recv(1, vec![r(BufferId::Recv, 4, 4)], &[c]);
        let mut b = Schedule::new(1, 2, 8, 0);
        b.send(0, vec![r(BufferId::Send, 0, 4)], &[]);
        b.send(0, vec![r(BufferId::Send, 4, 4)], &[]);
        vec![a, b]
    };
    let bufs = vec![Buffers { send: vec![], recv: vec![0; 8] }, Buffers { send: vec![1, 1, 1, 1, 2, 2, 2, 2], recv: vec![] }];
    let (ex, sim) = both(scheds, bufs, &[]);
    assert_eq!(ex.unwrap()[0].recv, sim.unwrap()[0].recv);
}

/// Nor does a second any-source receive.
#[test]
fn d_recv_any_overtakes_earlier_posted_recv_any() {
    let scheds = || {
        let mut a = Schedule::new(0, 2, 0, 8);
        a.recv_any(vec![(1, vec![r(BufferId::Recv, 0, 4)])], &[]);
        let c = a.copy(r(BufferId::Recv, 0, 0), r(BufferId::Recv, 0, 0), &[]);
        a.recv_any(vec![(1, vec![r(BufferId::Recv, 4, 4)])], &[c]);
        let mut b = Schedule::new(1, 2, 8, 0);
        b.send(0, vec![r(BufferId::Send, 0, 4)], &[]);
        b.send(0, vec![r(BufferId::Send, 4, 4)], &[]);
        vec![a, b]
    };
    let bufs = vec![Buffers { send: vec![], recv: vec![0; 8] }, Buffers { send: vec![1, 1, 1, 1, 2, 2, 2, 2], recv: vec![] }];
    let (ex, sim) = both(scheds, bufs, &[]);
    assert_eq!(ex.unwrap()[0].recv, sim.unwrap()[0].recv);
}

/// An any-source receive takes one candidate; the specific receive posted after it still gets
/// the other candidate's first message, and nothing is left waiting next to a posted receive.
#[test]
fn b_resolve_leaves_send_pending_next_to_posted_recv() {
    let scheds = || {
        let mut a = Schedule::new(0, 4, 0, 12);
        let any = |o: usize| vec![(1, vec![r(BufferId::Recv, o, 4)]), (2, vec![r(BufferId::Recv, o, 4)])];
        a.recv_any(any(0), &[]);
        let x = a.recv(1, vec![r(BufferId::Recv, 4, 4)], &[]);
        a.recv_any(any(8), &[x]);
        let mut b = Schedule::new(1, 4, 8, 0);
        b.send(0, vec![r(BufferId::Send, 0, 4)], &[]);
        b.send(0, vec![r(BufferId::Send, 4, 4)], &[]);
        let mut c = Schedule::new(2, 4, 4, 0);
        c.send(0, vec![r(BufferId::Send, 0, 4)], &[]);
        vec![a, b, c, Schedule::new(3, 4, 0, 0)]
    };
    let bufs = vec![
        Buffers { send: vec![], recv: vec![0; 12] },
        Buffers { send: vec![1, 1, 1, 1, 3, 3, 3, 3], recv: vec![] },
        Buffers { send: vec![2; 4], recv: vec![] },
        Buffers::default(),
    ];
    for seed in 0..200u64 {
        run(scheds(), bufs.clone(), &noop, &RunConfig { seed: Some(seed), max_steps: 1 << 20 }).unwrap_or_else(|e| panic!("seed {seed}: {e}"));
    }
    // Node 1's send port is busy, so the first RecvAny prefers node 2.
    let bg = [Transfer { src: 1, dst: 3, bytes: 1000, start: 0.0 }];
    let (ex, sim) = both(scheds, bufs, &bg);
    ex.expect("executor completes");
    sim.expect("simulator completes");
}

/// A later send of a pair never overtakes an earlier one that waits.
#[test]
fn b2_later_send_overtakes_pending_one() {
    let scheds = || {
        let mut a = Schedule::new(0, 4, 0, 12);
        a.recv_any(vec![(1, vec![r(BufferId::Recv, 0, 4)]), (2, vec![r(BufferId::Recv, 0, 4)])], &[]);
        let x = a.recv(1, vec![r(BufferId::Recv, 4, 4)], &[]);
        a.recv(1, vec![r(BufferId::Recv, 8, 4)], &[x]);
        let mut b = Schedule::new(1, 4, 8, 0);
        b.send(0, vec![r(BufferId::Send, 0, 4)], &[]);
        let c = b.copy(r(BufferId::Send, 0, 0), r(BufferId::Send, 0, 0), &[]);
        b.send(0, vec![r(BufferId::Send, 4, 4)], &[c]);
        let mut c = Schedule::new(2, 4, 4, 0);
        c.send(0, vec![r(BufferId::Send, 0, 4)], &[]);
        vec![a, b, c, Schedule::new(3, 4, 0, 0)]
    };
    let bufs = vec![
        Buffers { send: vec![], recv: vec![0; 12] },
        Buffers { send: vec![1, 1, 1, 1, 3, 3, 3, 3], recv: vec![] },
        Buffers { send: vec![2; 4], recv: vec![] },
        Buffers::default(),
    ];
    let bg = [Transfer { src: 1, dst: 3, bytes: 1000, start: 0.0 }];
    let (_, sim) = both(scheds, bufs, &bg);
    let got = sim.expect("sim completes")[0].recv.clone();
    // RecvAny took node 2's block; node 1's first message must land in the first Recv.
    assert_eq!(got, vec![2, 2, 2, 2, 1, 1, 1, 1, 3, 3, 3, 3]);
}

/// An any-source receive chooses after every send of its instant, even one issued by an
/// event created later in that instant.
#[test]
fn g_resolve_runs_before_later_sends_of_the_same_instant() {
    let scheds = || {
        let mut a = Schedule::new(0, 4, 0, 8);
        a.recv_any(vec![(1, vec![r(BufferId::Recv, 0, 4)]), (2, vec![r(BufferId::Recv, 0, 4)])], &[]);
        a.recv_any(vec![(1, vec![r(BufferId::Recv, 4, 4)]), (2, vec![r(BufferId::Recv, 4, 4)])], &[]);
        let mut b = Schedule::new(1, 4, 4, 0);
        b.send(0, vec![r(BufferId::Send, 0, 4)], &[]);
        let mut c = Schedule::new(2, 4, 4, 0);
        let k = c.copy(r(BufferId::Send, 0, 0), r(BufferId::Send, 0, 0), &[]);
        c.send(0, vec![r(BufferId::Send, 0, 4)], &[k]);
        vec![a, b, c, Schedule::new(3, 4, 0, 0)]
    };
    let mk = || vec![
        Buffers { send: vec![], recv: vec![0; 8] },
        Buffers { send: vec![1; 4], recv: vec![] },
        Buffers { send: vec![2; 4], recv: vec![] },
        Buffers::default(),
    ];
    let bg = [Transfer { src: 1, dst: 3, bytes: 1000, start: 0.0 }];
    let mut sim = Sim::new(4, P).trace(true);
    sim.add_background(&bg).unwrap();
    sim.load(scheds(), &[0.0; 4], Some((mk(), &noop))).unwrap();
    let out = sim.run();
    // Node 2's transfer could start at 0, node 1's only after its 1000 B background.
    match out {
        Ok(o) => assert_eq!(o.buffers.unwrap()[0].recv, vec![2, 2, 2, 2, 1, 1, 1, 1], "trace {:?}", o.trace),
        Err(e) => panic!("{e}"),
    }
}

/// A start time of -0 is time 0.
#[test]
fn negative_zero_background_start() {
    let p = LogGp { l: 10.0, o: 1.0, g: 1.0, big_g: 0.1 };
    let t = |start: f64| {
        let mut sim = Sim::new(4, p);
        sim.add_background(&[Transfer { src: 2, dst: 1, bytes: 1000, start }]).unwrap();
        let mut a = Schedule::new(0, 4, 100, 0);
        a.send(1, vec![r(BufferId::Send, 0, 100)], &[]);
        let mut b = Schedule::new(1, 4, 0, 100);
        b.recv(0, vec![r(BufferId::Recv, 0, 100)], &[]);
        sim.load(vec![a, b, Schedule::new(2, 4, 0, 0), Schedule::new(3, 4, 0, 0)], &[0.0; 4], None).unwrap();
        sim.run().unwrap().time
    };
    assert_eq!(t(0.0), t(-0.0));
}

/// The earliest-fit search ends when rounding makes `end - lag + lag` fall short of `end`.
#[test]
fn earliest_fit_gap_search_terminates() {
    let p = LogGp { l: 31.519964671319727, o: 0.5, g: 0.5, big_g: 5.555555555555556e-05 };
    let mut a = Schedule::new(0, 2, 200, 0);
    a.send(1, vec![r(BufferId::Send, 0, 100)], &[]);
    a.send(1, vec![r(BufferId::Send, 100, 100)], &[]);
    let mut b = Schedule::new(1, 2, 0, 200);
    b.recv(0, vec![r(BufferId::Recv, 0, 100)], &[]);
    b.recv(0, vec![r(BufferId::Recv, 100, 100)], &[]);
    let mut sim = Sim::new(2, p).ports(Ports::EarliestFit);
    sim.load(vec![a, b], &[149.24534454025783, 0.0], None).unwrap();
    let t = sim.run().unwrap().time;
    assert!(t > 0.0);
}

/// A transfer of no time does not hide a busy port.
#[test]
fn zero_length_reservation_hides_a_busy_port() {
    let p = LogGp { l: 1.0, o: 0.0, g: 0.0, big_g: 1.0 };
    let mut sim = Sim::new(4, p).ports(Ports::EarliestFit).trace(true);
    sim.add_background(&[Transfer { src: 2, dst: 1, bytes: 1000, start: 0.0 }]).unwrap();
    let mut a = Schedule::new(0, 4, 0, 0);
    a.send(1, vec![r(BufferId::Send, 0, 0)], &[]);
    let mut b = Schedule::new(1, 4, 0, 100);
    b.recv(0, vec![r(BufferId::Recv, 0, 0)], &[]);
    b.recv(3, vec![r(BufferId::Recv, 0, 100)], &[]);
    let mut d = Schedule::new(3, 4, 100, 0);
    d.send(1, vec![r(BufferId::Send, 0, 100)], &[]);
    sim.load(vec![a, b, Schedule::new(2, 4, 0, 0), d], &[0.0; 4], None).unwrap();
    let out = sim.run().unwrap();
    let m = out.trace.iter().find(|m| m.src == 3).unwrap();
    // Node 1's receive port is taken by the background transfer over [1, 1001).
    assert_eq!(m.start, 1000.0, "{:?}", out.trace);
}

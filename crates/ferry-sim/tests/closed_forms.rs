//! The simulator against times worked out by hand.

use ferry_coll::algorithm;
use ferry_model::{LogGp, ModelParams};
use ferry_sim::collective::{simulate, Call, Setup};
use ferry_sim::{Sim, Transfer};
use ferry_coll::{BufferId, Range, Schedule};

fn model(l: f64, o: f64, g: f64, big_g: f64) -> ModelParams {
    ModelParams::loggp(LogGp { l, o, g, big_g })
}

fn call(id: &str, procs: usize, bytes: usize) -> Call {
    Call {
        algorithm: algorithm(id).unwrap(),
        procs,
        bytes,
        root: 0,
    }
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * b.abs().max(1.0)
}

#[test]
fn linear_scatter_is_a_train_of_messages_from_the_root() {
    // o + kG >= g: every message holds the root's port for o + kG.
    for n in [2usize, 3, 8, 33] {
        for (l, o, g, big_g, k) in [(5.0, 1.0, 0.5, 0.01, 1000usize), (3.0, 2.0, 1.0, 0.0, 8)] {
            let t = simulate(&call("scatter.linear", n, k), &Setup::new(model(l, o, g, big_g)))
                .unwrap()
                .time;
            let slot = f64::max(g, o + k as f64 * big_g);
            let want = (n - 1) as f64 * slot + l + o;
            assert!(close(t, want), "n={n}: {t} vs {want}");
        }
        // g > o + kG: the last message leaves o + kG after its slot begins, not g.
        let (l, o, g, big_g, k) = (5.0, 1.0, 4.0, 0.001, 100usize);
        let t = simulate(&call("scatter.linear", n, k), &Setup::new(model(l, o, g, big_g)))
            .unwrap()
            .time;
        let wire = o + k as f64 * big_g;
        let want = (n - 2) as f64 * g + wire + l + o;
        assert!(close(t, want), "n={n}, g-bound: {t} vs {want}");
    }
}

#[test]
fn binomial_bcast_of_a_small_message_takes_ceil_log2_stages() {
    for n in 1usize..=64 {
        let t = simulate(&call("bcast.binomial", n, 8), &Setup::new(model(1.0, 0.0, 1.0, 0.0)))
            .unwrap()
            .time;
        let stages = if n == 1 { 0 } else { (n as f64).log2().ceil() as usize };
        assert_eq!(t, stages as f64, "n={n}");
    }
    // With overheads, a stage is o + L + o and the root's sends are g apart.
    let (l, o, g) = (10.0, 1.0, 2.0);
    let t = simulate(&call("bcast.binomial", 8, 8), &Setup::new(model(l, o, g, 0.0)))
        .unwrap()
        .time;
    // Rank 7 is reached 0 -> 1 -> 3 -> 7 at the earliest; 0 -> 4 leaves at 2g.
    let stage = 2.0 * o + l;
    assert!(t >= 3.0 * stage - 1e-9 && t <= 3.0 * stage + 2.0 * g, "{t}");
}

fn one_message(sched_rank: usize, peer: usize, send: bool, bytes: usize) -> Schedule {
    let mut s = Schedule::new(sched_rank, 4, bytes, bytes);
    let r = Range::new(if send { BufferId::Send } else { BufferId::Recv }, 0, bytes);
    if send {
        s.send(peer, vec![r], &[]);
    } else {
        s.recv(peer, vec![r], &[]);
    }
    s
}

#[test]
fn a_transfer_to_a_busy_node_waits_for_its_port() {
    let p = LogGp { l: 10.0, o: 1.0, g: 1.0, big_g: 0.1 };
    // 0 -> 1 alone: o + kG + L + o.
    let alone = {
        let mut sim = Sim::new(4, p);
        let scheds = vec![one_message(0, 1, true, 100), one_message(1, 0, false, 100), Schedule::new(2, 4, 0, 0), Schedule::new(3, 4, 0, 0)];
        sim.load(scheds, &[0.0; 4], None).unwrap();
        sim.run().unwrap().time
    };
    assert!(close(alone, 1.0 + 10.0 + 10.0 + 1.0));
    // Node 1 receives 1000 B from node 2 from time 0: its receive port is taken until
    // 1 + 100 + 10 + 1 = 112, so the transfer 0 -> 1 starts at 112 - o - L = 101.
    let mut sim = Sim::new(4, p).trace(true);
    sim.add_background(&[Transfer { src: 2, dst: 1, bytes: 1000, start: 0.0 }]).unwrap();
    assert_eq!(sim.busy_at(0.0), vec![false, true, true, false]);
    let scheds = vec![one_message(0, 1, true, 100), one_message(1, 0, false, 100), Schedule::new(2, 4, 0, 0), Schedule::new(3, 4, 0, 0)];
    sim.load(scheds, &[0.0; 4], None).unwrap();
    let out = sim.run().unwrap();
    assert!(close(out.time, 101.0 + alone), "{}", out.time);
    assert_eq!((out.messages, out.background), (1, 1));
    let m = out.trace.iter().find(|m| !m.background).unwrap();
    assert!(close(m.start, 101.0) && close(m.matched, 0.0));
    // The sender waited too: its send completed only after the transfer.
    assert!(close(out.finish[0], 101.0 + 1.0 + 10.0));
}

#[test]
fn status_based_scatter_serves_free_nodes_first() {
    let m = model(10.0, 1.0, 1.0, 0.01);
    let mut setup = Setup::new(m);
    setup.background = ferry_sim::background::exchange(1, 2, 1536, 0.0);
    let fixed = simulate(&call("scatter.linear", 8, 256), &setup).unwrap().time;
    let status = simulate(&call("scatter.status_linear", 8, 256), &setup).unwrap().time;
    assert!(status < fixed, "status {status} vs fixed {fixed}");
    // Without interference and with a status cost, status-based is slower by that cost.
    setup.background.clear();
    setup.status_cost = 0.5;
    let fixed = simulate(&call("scatter.linear", 8, 256), &setup).unwrap().time;
    let status = simulate(&call("scatter.status_linear", 8, 256), &setup).unwrap().time;
    assert!(close(status - fixed, 0.5), "{status} - {fixed}");
}

#[test]
fn runs_are_deterministic_bit_for_bit() {
    let m = model(7.0, 0.3, 1.1, 0.013);
    let mut setup = Setup::new(m);
    setup.trace = true;
    setup.background = ferry_sim::background::bursts(&[1, 3, 5, 6], 700, 3, 0.5, 9.0);
    setup.status_cost = 0.25;
    for id in ["bcast.status_binomial", "gather.status_linear", "allgather.double_bruck", "allreduce.rabenseifner"] {
        let a = simulate(&call(id, 13, 333), &setup).unwrap();
        let b = simulate(&call(id, 13, 333), &setup).unwrap();
        assert_eq!(a.time.to_bits(), b.time.to_bits(), "{id}");
        assert_eq!(a.trace, b.trace, "{id}");
        assert_eq!(a.finish, b.finish, "{id}");
    }
}

#[test]
fn bad_inputs_are_errors() {
    let p = LogGp { l: 1.0, o: 0.0, g: 0.0, big_g: 0.0 };
    let mut sim = Sim::new(2, p);
    assert!(sim.add_background(&[Transfer { src: 0, dst: 0, bytes: 1, start: 0.0 }]).is_err());
    assert!(sim.add_background(&[Transfer { src: 0, dst: 5, bytes: 1, start: 0.0 }]).is_err());
    assert!(sim.add_background(&[Transfer { src: 0, dst: 1, bytes: 1, start: f64::NAN }]).is_err());
    // A receive with no sender: a deadlock, named.
    let mut sim = Sim::new(2, p);
    let mut s0 = Schedule::new(0, 2, 0, 0);
    s0.copy(Range::new(BufferId::Send, 0, 0), Range::new(BufferId::Recv, 0, 0), &[]);
    let mut l1 = Schedule::new(1, 2, 4, 4);
    l1.recv(0, vec![Range::new(BufferId::Recv, 0, 4)], &[]);
    sim.load(vec![s0, l1], &[0.0; 2], None).unwrap();
    let err = sim.run().unwrap_err().to_string();
    assert!(err.contains("deadlock") && err.contains("(1, 0)"), "{err}");
    // Sizes that differ: truncation, named.
    let mut sim = Sim::new(2, p);
    let mut a = Schedule::new(0, 2, 8, 0);
    a.send(1, vec![Range::new(BufferId::Send, 0, 8)], &[]);
    let mut b = Schedule::new(1, 2, 0, 4);
    b.recv(0, vec![Range::new(BufferId::Recv, 0, 4)], &[]);
    sim.load(vec![a, b], &[0.0; 2], None).unwrap();
    assert!(sim.run().unwrap_err().to_string().contains("8 bytes, the receive expects 4"));
}

#[test]
fn in_order_ports_hold_up_later_transfers_and_earliest_fit_ones_do_not() {
    // Node 1's receive port is busy (background 2 -> 1) when node 0 sends to 1, then to 3.
    let p = LogGp { l: 10.0, o: 1.0, g: 1.0, big_g: 0.1 };
    let run = |ports: ferry_sim::Ports| {
        let mut sim = Sim::new(4, p).ports(ports);
        sim.add_background(&[Transfer { src: 2, dst: 1, bytes: 1000, start: 0.0 }]).unwrap();
        let mut s0 = Schedule::new(0, 4, 100, 0);
        s0.send(1, vec![Range::new(BufferId::Send, 0, 50)], &[]);
        s0.send(3, vec![Range::new(BufferId::Send, 50, 50)], &[]);
        let scheds = vec![s0, one_message(1, 0, false, 50), Schedule::new(2, 4, 0, 0), one_message(3, 0, false, 50)];
        sim.load(scheds, &[0.0; 4], None).unwrap();
        sim.run().unwrap().finish
    };
    let alone = 1.0 + 5.0 + 10.0 + 1.0;
    let queued = run(ferry_sim::Ports::InOrder);
    // 0 -> 1 starts at 101 (node 1's port); 0 -> 3 waits behind it on node 0's port.
    assert!(close(queued[1], 101.0 + alone) && close(queued[3], 101.0 + 6.0 + alone), "{queued:?}");
    let fit = run(ferry_sim::Ports::EarliestFit);
    // 0 -> 3 goes at once, in the gap before 0 -> 1.
    assert!(close(fit[3], alone) && close(fit[1], 101.0 + alone), "{fit:?}");
}

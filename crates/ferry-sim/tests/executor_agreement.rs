//! Every algorithm of ferry-coll, simulated with data on 1..=64 nodes, moves exactly what the
//! in-memory executor moves: the same final buffers on every rank and the same messages.

use ferry_coll::executor::{run, Buffers, Reduction, RunConfig};
use ferry_coll::{algorithms, Params, ReduceId, Schedule};
use ferry_model::LogGp;
use ferry_sim::collective::params_for;
use ferry_sim::{Ports, Sim, Transfer};

fn fill(rank: usize, len: usize, salt: usize) -> Vec<u8> {
    (0..len).map(|i| (rank * 31 + i * 7 + salt * 13 + 1) as u8).collect()
}

fn add_u32(_: ReduceId, a: &[u8], b: &mut [u8]) {
    for (x, y) in a.chunks_exact(4).zip(b.chunks_exact_mut(4)) {
        let s = u32::from_le_bytes(x.try_into().unwrap()).wrapping_add(u32::from_le_bytes((&*y).try_into().unwrap()));
        y.copy_from_slice(&s.to_le_bytes());
    }
}

/// 2x2 byte matrices: associative, not commutative, so operand order shows.
fn matmul(_: ReduceId, a: &[u8], b: &mut [u8]) {
    for (x, y) in a.chunks_exact(4).zip(b.chunks_exact_mut(4)) {
        let m = |i: usize, j: usize, k: usize, l: usize| x[i].wrapping_mul(y[j]).wrapping_add(x[k].wrapping_mul(y[l]));
        let c = [m(0, 0, 1, 2), m(0, 1, 1, 3), m(2, 0, 3, 2), m(2, 1, 3, 3)];
        y.copy_from_slice(&c);
    }
}

fn inputs(scheds: &[Schedule]) -> Vec<Buffers> {
    scheds
        .iter()
        .enumerate()
        .map(|(r, s)| Buffers {
            send: fill(r, s.send_len(), 1),
            recv: fill(r, s.recv_len(), 2),
        })
        .collect()
}

#[test]
fn the_simulator_moves_what_the_executor_moves() {
    let p = LogGp { l: 3.0, o: 0.5, g: 0.7, big_g: 0.01 };
    let mut runs = 0;
    for info in algorithms() {
        let op: &Reduction<'_> = if info.ordered { &matmul } else { &add_u32 };
        for n in 1..=64usize {
            let roots = if info.collective.rooted() { vec![0, n - 1] } else { vec![0] };
            for root in roots {
                for count in [1usize, 7] {
                    let base: Params = params_for(info, 0, n, root, 4 * count).elem_size(4).segment_size(8);
                    let base = if info.id.contains("status_") {
                        base.free_first((0..n).rev().collect())
                    } else {
                        base
                    };
                    let build = || (0..n).map(|r| (info.schedule)(&base.for_rank(r))).collect::<Vec<_>>();
                    let scheds = build();
                    let bufs = inputs(&scheds);
                    let want = run(scheds, bufs.clone(), op, &RunConfig::default())
                        .unwrap_or_else(|e| panic!("{} n={n}: executor: {e}", info.id));
                    let mut sim = Sim::new(n, p);
                    sim.load(build(), &vec![0.0; n], Some((bufs, op))).unwrap();
                    let got = sim
                        .run()
                        .unwrap_or_else(|e| panic!("{} n={n} root={root}: {e}", info.id));
                    assert_eq!(got.buffers.as_ref(), Some(&want.buffers), "{} n={n} root={root} count={count}", info.id);
                    assert_eq!(got.messages as usize, want.measured.messages, "{} n={n}", info.id);
                    runs += 1;
                }
            }
        }
    }
    assert!(runs > 30 * 64);
}

#[test]
fn without_data_the_times_are_the_same() {
    // Moving bytes must not change the timing of a static schedule.
    let p = LogGp { l: 2.0, o: 0.25, g: 0.5, big_g: 0.002 };
    for info in algorithms().iter().filter(|a| !a.id.contains("status_")) {
        let n = 11;
        let base = params_for(info, 0, n, 3, 40).elem_size(4);
        let build = || (0..n).map(|r| (info.schedule)(&base.for_rank(r))).collect::<Vec<_>>();
        let mut a = Sim::new(n, p);
        a.load(build(), &vec![0.0; n], None).unwrap();
        let a = a.run().unwrap();
        let scheds = build();
        let bufs = inputs(&scheds);
        let mut b = Sim::new(n, p);
        b.load(scheds, &vec![0.0; n], Some((bufs, &add_u32))).unwrap();
        let b = b.run().unwrap();
        assert_eq!(a.time.to_bits(), b.time.to_bits(), "{}", info.id);
        assert_eq!(a.messages, b.messages, "{}", info.id);
    }
}

#[test]
fn earliest_fit_ports_and_background_traffic_move_the_same_bytes() {
    // Non-round parameters (as fitted ones are) and a busy node change the order in which
    // transfers happen, never what they deliver.
    let params = [
        LogGp { l: 3.0, o: 0.5, g: 0.7, big_g: 0.01 },
        LogGp { l: 0.05, o: 0.1, g: 0.1, big_g: 1.0 / 18000.0 },
        LogGp { l: 31.519964671319727, o: 0.5, g: 0.5, big_g: 5.555555555555556e-05 },
    ];
    for p in params {
        for info in algorithms() {
            let op: &Reduction<'_> = if info.ordered { &matmul } else { &add_u32 };
            for n in [2usize, 3, 5, 8, 13, 16] {
                let base = params_for(info, 0, n, 0, 4 * 7).elem_size(4).segment_size(8);
                let base = if info.id.contains("status_") { base.free_first((0..n).rev().collect()) } else { base };
                let build = || (0..n).map(|r| (info.schedule)(&base.for_rank(r))).collect::<Vec<_>>();
                let scheds = build();
                let bufs = inputs(&scheds);
                let want = run(scheds, bufs.clone(), op, &RunConfig::default()).unwrap();
                let mut sim = Sim::new(n, p).ports(Ports::EarliestFit);
                sim.add_background(&[Transfer { src: n - 1, dst: 0, bytes: 333, start: 0.0 }]).unwrap();
                sim.load(build(), &vec![0.0; n], Some((bufs, op))).unwrap();
                let got = sim.run().unwrap_or_else(|e| panic!("{} n={n}: {e}", info.id));
                assert_eq!(got.buffers.as_ref(), Some(&want.buffers), "{} n={n} {p:?}", info.id);
            }
        }
    }
}

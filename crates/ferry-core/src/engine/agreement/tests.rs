//! The agreement over a simulated network: messages delivered in a seeded random order,
//! participants killed at chosen points (their messages in flight lost, their death told to
//! the others some steps later), and every survivor checked to decide the same value.

use super::*;

fn value(n: usize, flags: u32, floor: u32) -> Value {
    Value { flags, floor, failed: Ranks::new(n), acked: Ranks::new(n) }
}

struct Net {
    nodes: Vec<Agreement>,
    dead: Vec<bool>,
    /// (to, from, message) in flight.
    flight: Vec<(usize, usize, Msg)>,
    /// (steps left, participant) whose death is not yet told.
    untold: Vec<(u32, usize)>,
    rng: u64,
}

impl Net {
    fn new(flags: &[u32], floors: &[u32], seed: u64) -> Net {
        let n = flags.len();
        let nodes = (0..n).map(|i| Agreement::new(i, n, value(n, flags[i], floors[i]), &Ranks::new(n))).collect();
        let mut net = Net { nodes, dead: vec![false; n], flight: Vec::new(), untold: Vec::new(), rng: seed | 1 };
        net.collect_out();
        net
    }

    fn rand(&mut self, m: usize) -> usize {
        self.rng ^= self.rng << 13;
        self.rng ^= self.rng >> 7;
        self.rng ^= self.rng << 17;
        (self.rng % m as u64) as usize
    }

    fn collect_out(&mut self) {
        for i in 0..self.nodes.len() {
            for (to, m) in self.nodes[i].take_outbox() {
                if !self.dead[i] {
                    // A coded round trip on the way, as over the engine.
                    let (seq, m) = decode(&encode(7, &m), self.nodes.len()).expect("our own bytes decode");
                    assert_eq!(seq, 7);
                    self.flight.push((to, i, m));
                }
            }
        }
    }

    fn kill(&mut self, r: usize, tell_after: u32) {
        self.dead[r] = true;
        self.untold.push((tell_after, r));
    }

    /// One delivery or one death told; false when nothing is left to do.
    fn step(&mut self) -> bool {
        for k in (0..self.untold.len()).rev() {
            if self.untold[k].0 == 0 || self.flight.is_empty() {
                let (_, r) = self.untold.swap_remove(k);
                for i in 0..self.nodes.len() {
                    if !self.dead[i] {
                        self.nodes[i].on_failed(r);
                    }
                }
                self.collect_out();
                return true;
            }
            self.untold[k].0 -= 1;
        }
        if self.flight.is_empty() {
            return false;
        }
        let k = self.rand(self.flight.len());
        let (to, from, m) = self.flight.swap_remove(k);
        if !self.dead[to] {
            self.nodes[to].on_message(from, m);
            self.collect_out();
        }
        true
    }

    /// Run until settled (bounded: a run that never settles fails the test).
    fn settle(&mut self) {
        for _ in 0..100_000 {
            if !self.step() {
                return;
            }
        }
        panic!("the agreement never settled");
    }

    /// Every survivor decided, and all the same value; returned.
    fn agreed(&self) -> Value {
        let mut out: Option<&Value> = None;
        for (i, a) in self.nodes.iter().enumerate() {
            if self.dead[i] {
                continue;
            }
            let v = a.result().unwrap_or_else(|| panic!("survivor {i} did not decide"));
            if let Some(o) = out {
                assert_eq!(o, v, "survivor {i} decided otherwise");
            }
            out = Some(v);
        }
        out.expect("a survivor").clone()
    }
}

#[test]
fn without_failures_all_decide_the_and_of_the_flags_and_the_largest_floor() {
    for n in 1..=9 {
        let flags: Vec<u32> = (0..n).map(|i| !(1u32 << i)).collect();
        let floors: Vec<u32> = (0..n as u32).map(|i| 10 + i * 3 % 7).collect();
        let mut net = Net::new(&flags, &floors, 3 + n as u64);
        net.settle();
        let v = net.agreed();
        assert_eq!(v.flags, flags.iter().fold(!0, |a, f| a & f), "n={n}");
        assert_eq!(v.floor, *floors.iter().max().expect("n > 0"));
        assert_eq!(v.failed.members().count(), 0);
    }
}

#[test]
fn a_participant_known_failed_from_the_start_is_left_out_and_named() {
    let n = 4;
    let mut failed = Ranks::new(n);
    failed.insert(2);
    let mut nodes: Vec<Agreement> = (0..n).map(|i| Agreement::new(i, n, value(n, 1, 0), &failed)).collect();
    nodes[2] = Agreement::new(2, n, value(n, 0, 0), &Ranks::new(n));
    let mut net = Net { nodes, dead: vec![false, false, true, false], flight: Vec::new(), untold: Vec::new(), rng: 5 };
    net.collect_out();
    net.settle();
    let v = net.agreed();
    assert_eq!(v.flags, 1, "the dead participant's flag does not count");
    assert_eq!(v.failed.members().collect::<Vec<_>>(), [2]);
}

#[test]
fn the_coordinator_dying_in_every_phase_leaves_the_survivors_agreed() {
    // Kill the coordinator (0), then its successor (1), after k deliveries, for every k up to
    // the run's length, under several delivery orders.
    for seed in 1..40u64 {
        for k in 0..40 {
            let flags = [0b1111, 0b1110, 0b1101, 0b1011, 0b0111];
            let mut net = Net::new(&flags, &[1, 2, 3, 4, 5], seed);
            for _ in 0..k {
                net.step();
            }
            net.kill(0, 2);
            for _ in 0..(k % 7) {
                net.step();
            }
            if seed % 3 == 0 {
                net.kill(1, 1);
            }
            if seed % 4 == 1 {
                // A participant too, at once or later.
                net.kill(3 + (k % 2), (k % 3) as u32);
            }
            net.settle();
            let v = net.agreed();
            // Valid: an AND that covers every survivor's flags, and the survivors are not failed.
            for i in 0..5 {
                if !net.dead[i] {
                    assert_eq!(v.flags & !flags[i], 0, "seed {seed} k {k}");
                    assert!(!v.failed.contains(i), "seed {seed} k {k}: survivor {i} named failed");
                }
            }
        }
    }
}

#[test]
fn bytes_that_are_no_message_are_refused() {
    let n = 3;
    let m = Msg::Contribute { epoch: 1, value: value(n, 5, 9), held: Some((0, value(n, 1, 2))) };
    let b = encode(4, &m);
    assert_eq!(decode(&b, n), Some((4, m)));
    for cut in 0..b.len() {
        assert_eq!(decode(&b[..cut], n), None, "cut at {cut}");
    }
    let mut longer = b.clone();
    longer.push(0);
    assert_eq!(decode(&longer, n), None);
    assert_eq!(decode(&b, 200), None, "sets sized for another communicator");
    assert_eq!(decode(&encode(1, &Msg::Collect { epoch: 5 }), n), None, "an epoch beyond the participants");
}

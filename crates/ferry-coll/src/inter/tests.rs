//! Both groups' schedules run together in the in-memory executor, group A numbered first:
//! process g < a is rank g of A, process g >= a is rank g - a of B.

use super::movers::{self, Blocks};
use super::{reductions, Root, Sides};
use crate::executor::{run, Buffers, RunConfig};
use crate::validate::validate;
use crate::{ReduceId, Schedule};

fn sides(a: usize, b: usize, g: usize) -> Sides {
    if g < a {
        Sides { rank: g, local: a, remote: b, local_base: 0, remote_base: a }
    } else {
        Sides { rank: g - a, local: b, remote: a, local_base: a, remote_base: 0 }
    }
}

fn words(v: &[u32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn unwords(b: &[u8]) -> Vec<u32> {
    b.chunks(4).map(|c| u32::from_le_bytes(c.try_into().unwrap())).collect()
}

fn sum(_: ReduceId, input: &[u8], inout: &mut [u8]) {
    let s: Vec<u32> = unwords(input).iter().zip(unwords(inout)).map(|(a, b)| a + b).collect();
    inout.copy_from_slice(&words(&s));
}

/// `x op y = x`: associative, not commutative; a reduction in rank order yields rank 0's input.
fn first(_: ReduceId, input: &[u8], inout: &mut [u8]) {
    inout.copy_from_slice(input);
}

fn exec(all: Vec<Schedule>, bufs: Vec<Buffers>, reduce: &crate::executor::Reduction<'_>) -> Vec<Buffers> {
    validate(&all).expect("valid schedules");
    for seed in [None, Some(7), Some(99)] {
        run(all.clone(), bufs.clone(), reduce, &RunConfig { seed, ..Default::default() }).expect("runs");
    }
    run(all, bufs, reduce, &RunConfig::default()).expect("runs").buffers
}

const SIZES: [(usize, usize); 4] = [(1, 1), (1, 3), (2, 2), (3, 2)];

#[test]
fn barrier_and_bcast_reach_the_other_group() {
    for (a, b) in SIZES {
        let all = (0..a + b).map(|g| movers::barrier(&sides(a, b, g))).collect();
        exec(all, vec![Buffers::default(); a + b], &sum);
        for root in 0..a {
            let role = |g: usize| if g >= a { Root::Remote(root) } else if g == root { Root::Here } else { Root::Bystander };
            let all = (0..a + b).map(|g| movers::bcast(&sides(a, b, g), role(g), 8)).collect();
            let bufs = (0..a + b).map(|g| Buffers { send: vec![], recv: words(&[g as u32, 7]) }).collect();
            let out = exec(all, bufs, &sum);
            for (g, o) in out.iter().enumerate() {
                let want = if g >= a { vec![root as u32, 7] } else { vec![g as u32, 7] };
                assert_eq!(unwords(&o.recv), want, "a={a} b={b} root={root} g={g}");
            }
        }
    }
}

#[test]
fn gather_and_scatter_use_the_remote_order() {
    for (a, b) in SIZES {
        // Root in group B (its last rank); group A contributes.
        let root = b - 1;
        let role = |g: usize| if g < a { Root::Remote(root) } else if g - a == root { Root::Here } else { Root::Bystander };
        let blocks = vec![4; a];
        let displs: Vec<usize> = (0..a).map(|j| 4 * (a - 1 - j)).collect();
        let all = (0..a + b).map(|g| movers::gather(&sides(a, b, g), role(g), 4, &blocks, &displs)).collect();
        let bufs = (0..a + b).map(|g| Buffers { send: words(&[10 + g as u32]), recv: vec![0; 4 * a] }).collect();
        let out = exec(all, bufs, &sum);
        let want: Vec<u32> = (0..a).rev().map(|j| 10 + j as u32).collect();
        assert_eq!(unwords(&out[a + root].recv), want);
        let all = (0..a + b).map(|g| movers::scatter(&sides(a, b, g), role(g), &blocks, &displs, 4)).collect();
        let bufs = (0..a + b).map(|g| Buffers { send: words(&(0..a as u32).map(|j| 100 * g as u32 + j).collect::<Vec<_>>()), recv: vec![0; 4] }).collect();
        let out = exec(all, bufs, &sum);
        for j in 0..a {
            assert_eq!(unwords(&out[j].recv), vec![100 * (a + root) as u32 + (a - 1 - j) as u32]);
        }
    }
}

#[test]
fn allgather_and_alltoall_cross_over() {
    for (a, b) in SIZES {
        let all = (0..a + b)
            .map(|g| {
                let s = sides(a, b, g);
                movers::allgather(&s, 4, &vec![4; s.remote], &(0..s.remote).map(|j| 4 * j).collect::<Vec<_>>())
            })
            .collect();
        let bufs = (0..a + b).map(|g| Buffers { send: words(&[g as u32]), recv: vec![0; 4 * if g < a { b } else { a }] }).collect();
        let out = exec(all, bufs, &sum);
        for (g, o) in out.iter().enumerate() {
            let want: Vec<u32> = if g < a { (a..a + b).map(|x| x as u32).collect() } else { (0..a).map(|x| x as u32).collect() };
            assert_eq!(unwords(&o.recv), want);
        }
        let all = (0..a + b)
            .map(|g| {
                let s = sides(a, b, g);
                let blk = Blocks { sizes: vec![4; s.remote], displs: (0..s.remote).map(|j| 4 * j).collect() };
                movers::alltoall(&s, &blk, &blk)
            })
            .collect();
        let bufs = (0..a + b)
            .map(|g| {
                let n = if g < a { b } else { a };
                Buffers { send: words(&(0..n as u32).map(|j| 100 * g as u32 + j).collect::<Vec<_>>()), recv: vec![0; 4 * n] }
            })
            .collect();
        let out = exec(all, bufs, &sum);
        for (g, o) in out.iter().enumerate() {
            let s = sides(a, b, g);
            let want: Vec<u32> = (0..s.remote).map(|j| 100 * s.remote_peer(j) as u32 + s.rank as u32).collect();
            assert_eq!(unwords(&o.recv), want);
        }
    }
}

#[test]
fn reductions_combine_the_other_group_in_rank_order() {
    for (a, b) in SIZES {
        let input = |g: usize| words(&[g as u32 + 1, 2 * g as u32]);
        let group_sum = |lo: usize, hi: usize| vec![(lo..hi).map(|g| g as u32 + 1).sum::<u32>(), (lo..hi).map(|g| 2 * g as u32).sum()];
        for (is_sum, reduce) in [(true, &sum as &crate::executor::Reduction<'_>), (false, &first)] {
            let expect = |lo: usize, hi: usize| if is_sum { group_sum(lo, hi) } else { vec![lo as u32 + 1, 2 * lo as u32] };
            let all = (0..a + b).map(|g| reductions::allreduce(&sides(a, b, g), 8)).collect();
            let bufs = (0..a + b).map(|g| Buffers { send: input(g), recv: vec![0; 8] }).collect();
            let out = exec(all, bufs, reduce);
            for (g, o) in out.iter().enumerate() {
                let want = if g < a { expect(a, a + b) } else { expect(0, a) };
                assert_eq!(unwords(&o.recv), want, "allreduce a={a} b={b} g={g}");
            }
            let root = a - 1;
            let role = |g: usize| if g >= a { Root::Remote(root) } else if g == root { Root::Here } else { Root::Bystander };
            let all = (0..a + b).map(|g| reductions::reduce(&sides(a, b, g), role(g), 8)).collect();
            let bufs = (0..a + b).map(|g| Buffers { send: input(g), recv: vec![0; 8] }).collect();
            let out = exec(all, bufs, reduce);
            assert_eq!(unwords(&out[root].recv), expect(a, a + b), "reduce a={a} b={b}");
        }
        // Reduce_scatter: 2 elements per member of A, so B's input is 2a elements too, and
        // B's members take a, then the rest.
        let blocks_of = |g: usize| if g < a { (vec![8; a], (0..a).map(|i| 8 * i).collect::<Vec<_>>()) } else {
            let mut bl = vec![0; b];
            bl[0] = 4 * a;
            bl[b - 1] += 4 * a;
            let d = bl.iter().scan(0, |at, x| { let o = *at; *at += x; Some(o) }).collect();
            (bl, d)
        };
        let all = (0..a + b).map(|g| { let (bl, d) = blocks_of(g); reductions::reduce_scatter(&sides(a, b, g), &bl, &d) }).collect();
        let bufs = (0..a + b).map(|g| Buffers { send: words(&vec![g as u32; 2 * a]), recv: vec![0; blocks_of(g).0[if g < a { g } else { g - a }]] }).collect();
        let out = exec(all, bufs, &sum);
        let sum_b: u32 = (a..a + b).map(|g| g as u32).sum();
        let sum_a: u32 = (0..a).map(|g| g as u32).sum();
        for (g, o) in out.iter().enumerate() {
            let want = vec![if g < a { sum_b } else { sum_a }; o.recv.len() / 4];
            assert_eq!(unwords(&o.recv), want, "reduce_scatter a={a} b={b} g={g}");
        }
    }
}

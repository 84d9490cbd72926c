//! Double Bruck allgather, radix 3 (SEEDS.md S3): Bruck in both directions at once. Rank r
//! holds a window of consecutive blocks around itself, of width w; each step it receives
//! the window of r + w (extending its own to the right) and that of r - w (to the left),
//! and sends its window to both, so the window triples. The last step sends only what is
//! still missing, so no block travels twice (the paper's variant sends whole windows and
//! pays (m/p)(3^ceil(log3 p) - p) extra bytes).
//!
//! Restrictions: none; serves allgatherv. Steps: ceil(log3 p), two messages each (one per
//! direction). Bytes: every rank receives all blocks but one: log3 p alpha + n (p-1) beta.

use super::{blocks_held, blocks_in, empty, largest, start};
use crate::shape::ceil_log;
use crate::{Cost, Params, Rounds, Schedule};

pub const ID: &str = "allgather.double_bruck";
pub const DESCRIPTION: &str = "Bruck in both directions, radix 3, ceil(log3 p) steps (S3)";
pub const RESTRICTIONS: &str = "none; short and medium messages";
pub const VARYING: bool = true;
pub const IN_PLACE: bool = true;

/// Per step: window extents (left, right) before it and blocks taken from the right and
/// from the left.
fn plan(p: usize) -> Vec<(usize, usize, usize, usize)> {
    let (mut left, mut right) = (0, 0);
    let mut steps = Vec::new();
    loop {
        let w = left + right + 1;
        if w >= p {
            return steps;
        }
        let need = p - w;
        let x = w.min(need);
        let y = w.min(need - x);
        steps.push((left, right, x, y));
        right += x;
        left += y;
    }
}

pub fn schedule(q: &Params) -> Schedule {
    let (mut s, _) = start(q);
    let (p, r) = (q.size, q.rank);
    if empty(q) || p == 1 {
        return s;
    }
    let at = |off: isize| ((r as isize + off).rem_euclid(p as isize)) as usize;
    let mut rounds = Rounds::new(&mut s, &[]);
    for (left, right, x, y) in plan(p) {
        let (l, rr, w) = (left as isize, right as isize, (left + right + 1) as isize);
        if x > 0 {
            rounds.send(at(-w), blocks_held(q, (0..x as isize).map(|i| at(-l + i))));
            rounds.recv(at(w), blocks_in(q, (0..x as isize).map(|i| at(rr + 1 + i))));
        }
        if y > 0 {
            rounds.send(
                at(w),
                blocks_held(q, (0..y as isize).map(|i| at(rr - y as isize + 1 + i))),
            );
            rounds.recv(
                at(-w),
                blocks_in(q, (0..y as isize).map(|i| at(-l - y as isize + i))),
            );
        }
        rounds.next();
    }
    s
}

pub fn cost(q: &Params) -> Cost {
    let p = q.size;
    if empty(q) || p == 1 {
        return Cost::ZERO;
    }
    let steps = plan(p);
    Cost {
        rounds: ceil_log(p, 3),
        messages: p * steps
            .iter()
            .map(|&(_, _, x, y)| (x > 0) as usize + (y > 0) as usize)
            .sum::<usize>(),
        bytes: steps.iter().map(|&(_, _, x, y)| x.max(y)).sum::<usize>() * largest(q),
        rank_bytes: super::rank_bytes(q, schedule),
    }
}

#[cfg(test)]
mod tests {
    use crate::conformance::{check, info};

    #[test]
    fn conformance() {
        check(info(super::ID));
    }

    #[test]
    fn triples_per_step() {
        assert_eq!(super::plan(9).len(), 2);
        assert_eq!(super::plan(10).len(), 3);
        assert_eq!(super::plan(27).len(), 3);
        assert_eq!(super::plan(12).len(), 3);
    }
}

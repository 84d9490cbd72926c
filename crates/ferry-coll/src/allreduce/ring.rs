//! Ring allreduce (Patarasuk and Yuan, "Bandwidth optimal all-reduce algorithms for
//! clusters of workstations", 2009; MPICH `allreduce_intra_ring.c`): the vector is cut into
//! p chunks on element boundaries; a ring reduce-scatter (p - 1 steps: receive a chunk from
//! the left, combine, pass it on) leaves rank r with chunk r + 1 complete, and a ring
//! allgather (p - 1 steps) spreads the chunks.
//!
//! Restrictions: commutative operations (chunk c is combined starting at rank c).
//! Steps: 2 (p - 1). Bytes: 2 n (p - 1)/p per rank: 2 (p-1) alpha + 2 n (p-1)/p beta.

use super::{start, start_empty};
use crate::{BufferId, Cost, Operands, Params, Range, Rounds, Schedule};

pub const ID: &str = "allreduce.ring";
pub const DESCRIPTION: &str = "ring reduce-scatter then ring allgather; bandwidth optimal";
pub const RESTRICTIONS: &str = "commutative operations; long messages";
pub const VARYING: bool = false;
pub const IN_PLACE: bool = true;

/// Byte range of chunk c (elements split as evenly as possible, earlier chunks larger).
fn chunk(q: &Params, c: usize) -> (usize, usize) {
    let e = q.elem_size.max(1);
    let (elems, p) = (q.blocks[0] / e, q.size);
    let (base, extra) = (elems / p, elems % p);
    let start = c * base + c.min(extra);
    (start * e, (base + (c < extra) as usize) * e)
}

pub fn schedule(q: &Params) -> Schedule {
    let (p, r, n) = (q.size, q.rank, q.blocks[0]);
    // Out of place, the input stays where it is: its first chunk goes out from the send
    // buffer, and each chunk received in the reduce-scatter lands in the receive buffer,
    // where the input's chunk is combined into it. Every chunk of the receive buffer is
    // first written by a receive, so nothing is copied first.
    let direct = !q.in_place && n > 0 && p > 1;
    let (mut s, acc, copied) = if direct { start_empty(q) } else { start(q) };
    if n == 0 || p == 1 {
        return s;
    }
    let span = |buf: Range, c: usize| {
        let (off, len) = chunk(q, c % p);
        buf.sub(off, len)
    };
    let part = |c: usize| span(acc, c);
    let input = Range::new(BufferId::Send, 0, n);
    // Only the copying form receives into scratch space.
    let tmp_buf = if direct { BufferId::Recv } else { s.scratch(chunk(q, 0).1) };
    let tmp = |c: usize| Range::new(tmp_buf, 0, chunk(q, c % p).1);
    let (right, left) = ((r + 1) % p, (r + p - 1) % p);
    let mut rounds = Rounds::new(&mut s, &copied);
    for step in 0..p - 1 {
        let (out, inn) = (r + p - step, r + 2 * p - step - 1);
        if direct {
            rounds.send(right, vec![if step == 0 { span(input, out) } else { part(out) }]);
            rounds.recv(left, vec![part(inn)]);
            rounds.next();
            rounds.reduce(span(input, inn), part(inn), Operands::SrcDst);
        } else {
            rounds.send(right, vec![part(out)]);
            rounds.recv(left, vec![tmp(inn)]);
            rounds.next();
            rounds.reduce(tmp(inn), part(inn), Operands::SrcDst);
        }
        rounds.next();
    }
    for step in 0..p - 1 {
        rounds.send(right, vec![part(r + 1 + p - step)]);
        rounds.recv(left, vec![part(r + p - step)]);
        rounds.next();
    }
    s
}

pub fn cost(q: &Params) -> Cost {
    let (p, n) = (q.size, q.blocks[0]);
    if n == 0 || p == 1 {
        return Cost::ZERO;
    }
    let biggest = chunk(q, 0).1;
    let c = |i: usize| chunk(q, i % p).1;
    let rank_bytes = (0..p)
        .map(|r| (2 * n - c(r + 1) - c(r + 2)).max(2 * n - c(r) - c(r + 1)))
        .max()
        .unwrap_or(0);
    Cost {
        rounds: 2 * (p - 1),
        messages: 2 * p * (p - 1),
        bytes: 2 * (p - 1) * biggest,
        rank_bytes,
    }
}

#[cfg(test)]
mod tests {
    use crate::conformance::{check, info};

    #[test]
    fn conformance() {
        check(info(super::ID));
    }
}

//! Rabenseifner's allreduce (Rabenseifner, "Optimization of collective reduction operations",
//! ICCS 2004; Thakur, Rabenseifner, Gropp 2005; MPICH
//! `allreduce_intra_reduce_scatter_allgather.c`): a reduce-scatter by recursive halving,
//! then an allgather by recursive doubling, over p' = 2^floor(log2 p) ranks. The vector is
//! cut into p' chunks on element boundaries; in the step with distance d (p'/2, ..., 1)
//! rank v keeps the half of its current chunk range that bit d of v selects, sends the
//! other half to v xor d and combines what it receives, so it ends with chunk v complete;
//! the allgather retraces the steps in reverse. For p not a power of two, with
//! rem = p - p', odd ranks below 2 rem first hand their input to the even rank below and
//! get the result back at the end. With fewer elements than p', some chunks are empty and
//! their messages travel empty.
//!
//! Restrictions: commutative operations. Steps: 2 log2 p', plus 2 when p is not a power of
//! two. Bytes: 2 n (p'-1)/p' per rank plus n for each fold step:
//! 2 log p' alpha + 2 n (p'-1)/p' beta. Long messages.

use super::start;
use crate::shape::floor_pow2;
use crate::{Cost, Operands, Params, Range, Rounds, Schedule};

pub const ID: &str = "allreduce.rabenseifner";
pub const DESCRIPTION: &str =
    "reduce-scatter by recursive halving, then allgather by recursive doubling";
pub const RESTRICTIONS: &str = "commutative operations; long messages";
pub const VARYING: bool = false;
pub const IN_PLACE: bool = true;

/// How the ranks fold onto p' = 2^floor(log2 p) participants and how the vector is cut.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Halving {
    /// Participants.
    pub(crate) pof2: usize,
    /// Ranks folded away (the odd ones below 2 rem).
    pub(crate) rem: usize,
    bytes: usize,
    elems: usize,
    elem: usize,
}

impl Halving {
    pub(crate) fn new(q: &Params) -> Halving {
        let pof2 = floor_pow2(q.size);
        let elem = q.elem_size.max(1);
        Halving {
            pof2,
            rem: q.size - pof2,
            bytes: q.blocks[0],
            elems: q.blocks[0] / elem,
            elem,
        }
    }
    /// log2 p'.
    pub(crate) fn steps(&self) -> usize {
        self.pof2.trailing_zeros() as usize
    }
    /// The participant index of rank r, or `None` for a folded rank.
    pub(crate) fn virt(&self, r: usize) -> Option<usize> {
        if r < 2 * self.rem {
            r.is_multiple_of(2).then_some(r / 2)
        } else {
            Some(r - self.rem)
        }
    }
    /// The rank of participant v.
    pub(crate) fn real(&self, v: usize) -> usize {
        if v < self.rem {
            2 * v
        } else {
            v + self.rem
        }
    }
    /// Byte offset of chunk c (c = pof2: the end; a tail short of an element goes with the
    /// last chunk), earlier chunks larger by an element.
    pub(crate) fn offset(&self, c: usize) -> usize {
        if c >= self.pof2 {
            return self.bytes;
        }
        let (base, extra) = (self.elems / self.pof2, self.elems % self.pof2);
        (c * base + c.min(extra)) * self.elem
    }
    /// The bytes of chunks [lo, hi) within `acc`.
    pub(crate) fn chunks(&self, acc: Range, lo: usize, hi: usize) -> Range {
        acc.sub(self.offset(lo), self.offset(hi) - self.offset(lo))
    }
    /// The range of `d` chunks, aligned to `d`, that holds chunk v.
    pub(crate) fn around(v: usize, d: usize) -> (usize, usize) {
        let lo = v & !(d - 1);
        (lo, lo + d)
    }
    /// Bytes on the critical path of one halving or doubling phase: in the step with
    /// distance d the largest message is the first d chunks.
    pub(crate) fn phase_bytes(&self) -> usize {
        (0..self.steps()).map(|k| self.offset(1 << k)).sum()
    }

    /// The reduce-scatter among participants: participant v, whose running result is
    /// `acc`, ends with chunk v of it complete. `tmp` receives, at offset 0, up to half
    /// the vector.
    pub(crate) fn reduce_scatter(&self, rounds: &mut Rounds<'_>, v: usize, acc: Range, tmp: Range) {
        let mut d = self.pof2 / 2;
        while d >= 1 {
            let peer = self.real(v ^ d);
            let (lo, hi) = Halving::around(v, 2 * d);
            let mid = lo + d;
            let (keep, give) = if v & d == 0 {
                ((lo, mid), (mid, hi))
            } else {
                ((mid, hi), (lo, mid))
            };
            let keep = self.chunks(acc, keep.0, keep.1);
            let into = tmp.sub(0, keep.len);
            rounds.send(peer, vec![self.chunks(acc, give.0, give.1)]);
            rounds.recv(peer, vec![into]);
            rounds.next();
            if keep.len > 0 {
                rounds.reduce(into, keep, Operands::SrcDst);
                rounds.next();
            }
            d /= 2;
        }
    }

    /// The allgather among participants, retracing [`Halving::reduce_scatter`].
    pub(crate) fn allgather(&self, rounds: &mut Rounds<'_>, v: usize, acc: Range) {
        let mut d = 1;
        while d < self.pof2 {
            let peer = self.real(v ^ d);
            let (lo, hi) = Halving::around(v, d);
            let (plo, phi) = Halving::around(v ^ d, d);
            rounds.send(peer, vec![self.chunks(acc, lo, hi)]);
            rounds.recv(peer, vec![self.chunks(acc, plo, phi)]);
            rounds.next();
            d *= 2;
        }
    }
}

pub fn schedule(q: &Params) -> Schedule {
    let (p, r, n) = (q.size, q.rank, q.blocks[0]);
    let (mut s, acc, copied) = start(q);
    if n == 0 || p == 1 {
        return s;
    }
    let h = Halving::new(q);
    let Some(v) = h.virt(r) else {
        let mut rounds = Rounds::new(&mut s, &copied);
        rounds.send(r - 1, vec![acc]);
        rounds.next();
        rounds.recv(r - 1, vec![acc]);
        return s;
    };
    let folds = r < 2 * h.rem;
    let tmp_len = if folds { n } else { h.offset(h.pof2 / 2) };
    let tmp = Range::new(s.scratch(tmp_len), 0, tmp_len);
    let mut rounds = Rounds::new(&mut s, &copied);
    if folds {
        rounds.recv(r + 1, vec![tmp]);
        rounds.next();
        rounds.reduce(tmp, acc, Operands::SrcDst);
        rounds.next();
    }
    h.reduce_scatter(&mut rounds, v, acc, tmp);
    h.allgather(&mut rounds, v, acc);
    if folds {
        rounds.send(r + 1, vec![acc]);
    }
    s
}

pub fn cost(q: &Params) -> Cost {
    let (p, n) = (q.size, q.blocks[0]);
    if n == 0 || p == 1 {
        return Cost::ZERO;
    }
    let h = Halving::new(q);
    let steps = h.steps();
    let fold = (h.rem > 0) as usize;
    Cost {
        rounds: 2 * steps + 2 * fold,
        messages: 2 * h.pof2 * steps + 2 * h.rem,
        bytes: 2 * h.phase_bytes() + 2 * fold * n,
        rank_bytes: crate::allgather::rank_bytes(q, schedule),
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

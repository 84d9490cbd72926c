//! Static checks on schedules: the graph is acyclic, every range lies in a declared buffer,
//! no two concurrent operations conflict on a byte, and (over all ranks) every send meets
//! exactly one receive of the same length, in order per pair of ranks.

use crate::schedule::{span_len, BufferId, Op, OpId, Range, Schedule};
use thiserror::Error;

#[derive(Debug, Error, PartialEq, Eq)]
pub enum ScheduleError {
    #[error("rank {rank}: op {op} depends on op {dep}, which does not exist")]
    MissingDep { rank: usize, op: OpId, dep: OpId },
    #[error("rank {rank}: the dependency graph has a cycle through op {op}")]
    Cycle { rank: usize, op: OpId },
    #[error(
        "rank {rank}: op {op} names {range:?}, outside the declared buffer of {declared} bytes"
    )]
    OutOfBuffer {
        rank: usize,
        op: OpId,
        range: Range,
        declared: usize,
    },
    #[error("rank {rank}: op {op} names peer {peer}, not another rank of {size}")]
    BadPeer {
        rank: usize,
        op: OpId,
        peer: usize,
        size: usize,
    },
    #[error("rank {rank}: op {op} has operands of different lengths")]
    LengthMismatch { rank: usize, op: OpId },
    #[error("rank {rank}: ops {a} and {b} may run at the same time and touch {range:?}, which one of them writes")]
    Race {
        rank: usize,
        a: OpId,
        b: OpId,
        range: Range,
    },
    #[error("schedules for {found} ranks given, but rank {rank} says the communicator has {size}")]
    WrongSet {
        rank: usize,
        size: usize,
        found: usize,
    },
    #[error("{from} -> {to}: {sends} sends but {recvs} receives")]
    Unmatched {
        from: usize,
        to: usize,
        sends: usize,
        recvs: usize,
    },
    #[error("{from} -> {to}: message {index} is {sent} bytes sent but {expected} bytes received")]
    SizeMismatch {
        from: usize,
        to: usize,
        index: usize,
        sent: usize,
        expected: usize,
    },
    #[error("rank {rank}: op {op} writes the user's send buffer")]
    WritesSend { rank: usize, op: OpId },
    #[error(
        "rank {rank} decides at run time (recv_any/continuation); resolve it by running it first"
    )]
    Dynamic { rank: usize },
}

fn declared(s: &Schedule, buf: BufferId) -> Option<usize> {
    match buf {
        BufferId::Send => Some(s.send_len()),
        BufferId::Recv => Some(s.recv_len()),
        BufferId::Scratch(k) => s.scratch_buffers().get(k as usize).map(|b| b.len),
    }
}

/// Checks one rank's schedule on its own.
pub fn validate_rank(s: &Schedule) -> Result<(), ScheduleError> {
    let rank = s.rank();
    let nodes = s.nodes();
    let n = nodes.len();
    for (id, node) in nodes.iter().enumerate() {
        for &d in &node.deps {
            if d >= n {
                return Err(ScheduleError::MissingDep {
                    rank,
                    op: id,
                    dep: d,
                });
            }
        }
        let ranges = node.op.ranges();
        let extra = node.then.iter().flat_map(|c| c.reads.iter());
        for r in ranges.iter().chain(extra) {
            let decl = declared(s, r.buf).unwrap_or(0);
            if r.end() > decl || (declared(s, r.buf).is_none() && r.len > 0) {
                return Err(ScheduleError::OutOfBuffer {
                    rank,
                    op: id,
                    range: *r,
                    declared: decl,
                });
            }
        }
        if node.op.writes().iter().any(|r| r.buf == BufferId::Send) {
            return Err(ScheduleError::WritesSend { rank, op: id });
        }
        let peers: Vec<usize> = match &node.op {
            Op::Send { peer, .. } | Op::Recv { peer, .. } => vec![*peer],
            Op::RecvAny { from } => from.iter().map(|(p, _)| *p).collect(),
            _ => Vec::new(),
        };
        for peer in peers {
            if peer >= s.size() || peer == rank {
                return Err(ScheduleError::BadPeer {
                    rank,
                    op: id,
                    peer,
                    size: s.size(),
                });
            }
        }
        match &node.op {
            Op::Copy { src, dst } | Op::Reduce { src, dst, .. } if src.len != dst.len => {
                return Err(ScheduleError::LengthMismatch { rank, op: id });
            }
            _ => {}
        }
    }
    let order = topo_order(s)?;
    check_races(s, &order)
}

fn topo_order(s: &Schedule) -> Result<Vec<OpId>, ScheduleError> {
    let nodes = s.nodes();
    let n = nodes.len();
    let mut indeg: Vec<usize> = nodes.iter().map(|x| x.deps.len()).collect();
    let mut users: Vec<Vec<OpId>> = vec![Vec::new(); n];
    for (id, node) in nodes.iter().enumerate() {
        for &d in &node.deps {
            users[d].push(id);
        }
    }
    let mut ready: Vec<OpId> = (0..n).filter(|&i| indeg[i] == 0).collect();
    let mut order = Vec::with_capacity(n);
    while let Some(i) = ready.pop() {
        order.push(i);
        for &u in &users[i] {
            indeg[u] -= 1;
            if indeg[u] == 0 {
                ready.push(u);
            }
        }
    }
    if order.len() < n {
        let op = (0..n)
            .find(|&i| indeg[i] > 0)
            .expect("a node is left when the order is short");
        return Err(ScheduleError::Cycle { rank: s.rank(), op });
    }
    Ok(order)
}

#[allow(clippy::needless_range_loop)] // a and b index several per-op tables
/// Two ops race when neither reaches the other and one writes a byte the other touches.
fn check_races(s: &Schedule, order: &[OpId]) -> Result<(), ScheduleError> {
    let nodes = s.nodes();
    let n = nodes.len();
    let words = n.div_ceil(64);
    // anc[i]: bitset of the ops i (transitively) waits for.
    let mut anc = vec![0u64; n * words];
    for &i in order {
        for &d in &nodes[i].deps {
            for w in 0..words {
                let v = anc[d * words + w];
                anc[i * words + w] |= v;
            }
            anc[i * words + d / 64] |= 1 << (d % 64);
        }
    }
    let reaches = |a: usize, b: usize| anc[b * words + a / 64] & (1 << (a % 64)) != 0;
    let writes: Vec<Vec<Range>> = nodes.iter().map(|x| x.op.writes()).collect();
    let touches: Vec<Vec<Range>> = nodes.iter().map(|x| x.op.ranges()).collect();
    for a in 0..n {
        if writes[a].iter().all(|r| r.len == 0) {
            continue;
        }
        for b in 0..n {
            if a == b || reaches(a, b) || reaches(b, a) || same_any_source(&nodes[a].op, &nodes[b].op) {
                continue;
            }
            for w in &writes[a] {
                if let Some(t) = touches[b].iter().find(|t| t.overlaps(w)) {
                    let _ = t;
                    let (x, y) = if a < b { (a, b) } else { (b, a) };
                    return Err(ScheduleError::Race {
                        rank: s.rank(),
                        a: x,
                        b: y,
                        range: *w,
                    });
                }
            }
        }
    }
    Ok(())
}

/// Receives from any of the same peers share their ranges by design: each peer's message is
/// taken by exactly one of them and lands in that peer's ranges.
fn same_any_source(a: &Op, b: &Op) -> bool {
    matches!((a, b), (Op::RecvAny { from: x }, Op::RecvAny { from: y }) if x == y)
}

/// Checks a whole collective: each rank on its own, then the matching of sends and
/// receives per ordered pair of ranks (the i-th send from a to b meets the i-th receive
/// at b from a, by op id: executors issue them to one peer in that order).
pub fn validate(all: &[Schedule]) -> Result<(), ScheduleError> {
    let p = all.len();
    for (i, s) in all.iter().enumerate() {
        if s.size() != p || s.rank() != i {
            return Err(ScheduleError::WrongSet {
                rank: s.rank(),
                size: s.size(),
                found: p,
            });
        }
        if s.is_dynamic() {
            return Err(ScheduleError::Dynamic { rank: i });
        }
        validate_rank(s)?;
    }
    let mut sends = vec![Vec::new(); p * p];
    let mut recvs = vec![Vec::new(); p * p];
    for s in all {
        for node in s.nodes() {
            match &node.op {
                Op::Send { peer, data } => sends[s.rank() * p + peer].push(span_len(data)),
                Op::Recv { peer, data } => recvs[peer * p + s.rank()].push(span_len(data)),
                _ => {}
            }
        }
    }
    for from in 0..p {
        for to in 0..p {
            let (sd, rv) = (&sends[from * p + to], &recvs[from * p + to]);
            if sd.len() != rv.len() {
                return Err(ScheduleError::Unmatched {
                    from,
                    to,
                    sends: sd.len(),
                    recvs: rv.len(),
                });
            }
            for (index, (a, b)) in sd.iter().zip(rv).enumerate() {
                if a != b {
                    return Err(ScheduleError::SizeMismatch {
                        from,
                        to,
                        index,
                        sent: *a,
                        expected: *b,
                    });
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schedule::{Node, Op};

    fn r(buf: BufferId, offset: usize, len: usize) -> Range {
        Range::new(buf, offset, len)
    }

    #[test]
    fn accepts_a_matched_exchange() {
        let mut a = Schedule::new(0, 2, 8, 8);
        a.send(1, vec![r(BufferId::Send, 0, 8)], &[]);
        a.recv(1, vec![r(BufferId::Recv, 0, 8)], &[]);
        let mut b = Schedule::new(1, 2, 8, 8);
        b.recv(0, vec![r(BufferId::Recv, 0, 8)], &[]);
        b.send(0, vec![r(BufferId::Send, 0, 8)], &[]);
        assert_eq!(validate(&[a, b]), Ok(()));
    }

    #[test]
    fn rejects_unmatched_and_mismatched_sends() {
        let mut a = Schedule::new(0, 2, 8, 0);
        a.send(1, vec![r(BufferId::Send, 0, 8)], &[]);
        let b = Schedule::new(1, 2, 0, 8);
        assert!(matches!(
            validate(&[a.clone(), b]),
            Err(ScheduleError::Unmatched { from: 0, to: 1, .. })
        ));
        let mut b = Schedule::new(1, 2, 0, 8);
        b.recv(0, vec![r(BufferId::Recv, 0, 4)], &[]);
        assert!(matches!(
            validate(&[a, b]),
            Err(ScheduleError::SizeMismatch { index: 0, .. })
        ));
    }

    #[test]
    fn rejects_ranges_outside_buffers_and_bad_peers() {
        let mut a = Schedule::new(0, 2, 4, 0);
        a.send(1, vec![r(BufferId::Send, 2, 4)], &[]);
        assert!(matches!(
            validate_rank(&a),
            Err(ScheduleError::OutOfBuffer { .. })
        ));
        let mut a = Schedule::new(0, 2, 4, 0);
        a.send(1, vec![r(BufferId::Scratch(0), 0, 1)], &[]);
        assert!(matches!(
            validate_rank(&a),
            Err(ScheduleError::OutOfBuffer { .. })
        ));
        let mut a = Schedule::new(0, 2, 4, 0);
        a.send(0, vec![r(BufferId::Send, 0, 4)], &[]);
        assert!(matches!(
            validate_rank(&a),
            Err(ScheduleError::BadPeer { .. })
        ));
    }

    #[test]
    fn rejects_races_but_not_ordered_access() {
        let mut a = Schedule::new(0, 3, 0, 8);
        a.recv(1, vec![r(BufferId::Recv, 0, 8)], &[]);
        a.send(2, vec![r(BufferId::Recv, 4, 4)], &[]);
        assert!(matches!(
            validate_rank(&a),
            Err(ScheduleError::Race { a: 0, b: 1, .. })
        ));
        let mut a = Schedule::new(0, 3, 0, 8);
        let got = a.recv(1, vec![r(BufferId::Recv, 0, 8)], &[]);
        a.send(2, vec![r(BufferId::Recv, 4, 4)], &[got]);
        assert_eq!(validate_rank(&a), Ok(()));
        // Two concurrent readers are fine; a write to the send buffer is not.
        let mut a = Schedule::new(0, 3, 8, 8);
        a.send(1, vec![r(BufferId::Send, 0, 8)], &[]);
        a.send(2, vec![r(BufferId::Send, 0, 8)], &[]);
        assert_eq!(validate_rank(&a), Ok(()));
        a.copy(r(BufferId::Recv, 0, 8), r(BufferId::Send, 0, 8), &[0, 1]);
        assert!(matches!(
            validate_rank(&a),
            Err(ScheduleError::WritesSend { .. })
        ));
    }

    #[test]
    fn rejects_cycles() {
        // `push` cannot build a cycle; a graph assembled another way can have one.
        let mut a = Schedule::new(0, 2, 0, 8);
        let x = a.copy(r(BufferId::Recv, 0, 4), r(BufferId::Recv, 4, 4), &[]);
        let nodes = a.nodes().to_vec();
        let mut looped = Schedule::new(0, 2, 0, 8);
        for Node { op, .. } in nodes {
            looped.push(op, &[]);
        }
        looped.push(
            Op::Copy {
                src: r(BufferId::Recv, 4, 4),
                dst: r(BufferId::Recv, 0, 4),
            },
            &[x],
        );
        looped.add_dep_for_tests(x, 1);
        assert!(matches!(
            validate_rank(&looped),
            Err(ScheduleError::Cycle { .. })
        ));
    }
}

//! Intercommunicator collectives that combine: reduce, allreduce, reduce_scatter(_block).
//! Each group reduces its inputs at its leader, in rank order (x0 op x1 op ... op x(l-1)),
//! so non-commutative operations get the order MPI prescribes; the result of one group goes
//! to the other.

use super::{extent, Root, Sides};
use crate::{BufferId, OpId, Operands, Range, Schedule};

/// The group's reduction of `bytes` of `Send` at its leader: at the leader, the range of
/// the result and the op that completes it; elsewhere, the input is sent to the leader.
fn reduce_to_leader(q: &mut Schedule, s: &Sides, bytes: usize) -> Option<(Range, OpId)> {
    let input = Range::new(BufferId::Send, 0, bytes);
    if !s.is_leader() {
        q.send(s.local_peer(0), vec![input], &[]);
        return None;
    }
    let part = Range::new(q.scratch(bytes), 0, bytes);
    let mut last = q.copy(input, part, &[]);
    for i in 1..s.local {
        let theirs = Range::new(q.scratch(bytes), 0, bytes);
        let got = q.recv(s.local_peer(i), vec![theirs], &[]);
        last = q.reduce(theirs, part, Operands::DstSrc, &[last, got]);
    }
    Some((part, last))
}

/// Reduce of `bytes`: the group without the root reduces at its leader, which sends the
/// result to the root. Messages: l - 1 (or r - 1) + 1; steps: 2.
pub fn reduce(s: &Sides, root: Root, bytes: usize) -> Schedule {
    match root {
        Root::Here => {
            let mut q = s.schedule(0, bytes);
            q.recv(s.remote_peer(0), vec![Range::new(BufferId::Recv, 0, bytes)], &[]);
            q
        }
        Root::Remote(j) => {
            let mut q = s.schedule(bytes, 0);
            if let Some((part, done)) = reduce_to_leader(&mut q, s, bytes) {
                q.send(s.remote_peer(j), vec![part], &[done]);
            }
            q
        }
        Root::Bystander => s.schedule(0, 0),
    }
}

/// Allreduce of `bytes`: each group reduces at its leader; the leaders trade results; each
/// leader sends the other group's result to its members. Messages: 2 (l - 1) + 2 (r - 1) + 2;
/// steps: 3.
pub fn allreduce(s: &Sides, bytes: usize) -> Schedule {
    let mut q = s.schedule(bytes, bytes);
    let result = Range::new(BufferId::Recv, 0, bytes);
    match reduce_to_leader(&mut q, s, bytes) {
        Some((part, done)) => {
            q.send(s.remote_peer(0), vec![part], &[done]);
            let got = q.recv(s.remote_peer(0), vec![result], &[]);
            for i in 1..s.local {
                q.send(s.local_peer(i), vec![result], &[got]);
            }
        }
        None => {
            q.recv(s.local_peer(0), vec![result], &[]);
        }
    }
    q
}

/// Reduce_scatter: the input is `extent(blocks, displs)` bytes (the same total on both
/// sides); each group reduces it at its leader; the leaders trade results; each leader
/// scatters the other group's result, block i (at `displs[i]`) to local member i.
/// Messages: 2 (l - 1) + 2 (r - 1) + 2; steps: 3.
pub fn reduce_scatter(s: &Sides, blocks: &[usize], displs: &[usize]) -> Schedule {
    let total = extent(blocks, displs);
    let mine = blocks[s.rank];
    let mut q = s.schedule(total, mine);
    match reduce_to_leader(&mut q, s, total) {
        Some((part, done)) => {
            q.send(s.remote_peer(0), vec![part], &[done]);
            let theirs = Range::new(q.scratch(total), 0, total);
            let got = q.recv(s.remote_peer(0), vec![theirs], &[]);
            q.copy(theirs.sub(displs[0], blocks[0]), Range::new(BufferId::Recv, 0, mine), &[got]);
            for i in 1..s.local {
                q.send(s.local_peer(i), vec![theirs.sub(displs[i], blocks[i])], &[got]);
            }
        }
        None => {
            q.recv(s.local_peer(0), vec![Range::new(BufferId::Recv, 0, mine)], &[]);
        }
    }
    q
}

//! Intercommunicator collectives that move data: barrier, bcast, gather(v), scatter(v),
//! allgather(v), alltoall(v). All linear: each message goes straight to the process that
//! needs it.

use super::{extent, Root, Sides};
use crate::{BufferId, Range, Schedule};

/// Barrier: every member reports to its leader; the leaders trade one empty message each
/// way; each leader then releases its group. Nobody leaves before both groups entered.
/// Messages: 2 (l - 1) + 2 (r - 1) + 2, all empty; steps: 3.
pub fn barrier(s: &Sides) -> Schedule {
    let mut q = s.schedule(0, 0);
    if !s.is_leader() {
        let arrived = q.send(s.local_peer(0), vec![], &[]);
        q.recv(s.local_peer(0), vec![], &[arrived]);
        return q;
    }
    let arrivals: Vec<_> = (1..s.local).map(|i| q.recv(s.local_peer(i), vec![], &[])).collect();
    let told = q.send(s.remote_peer(0), vec![], &arrivals);
    let heard = q.recv(s.remote_peer(0), vec![], &[]);
    for i in 1..s.local {
        q.send(s.local_peer(i), vec![], &[told, heard]);
    }
    q
}

/// Bcast of `bytes` (the buffer is `Recv` on every process): the root sends it to every
/// remote member. Messages: r; steps: 1.
pub fn bcast(s: &Sides, root: Root, bytes: usize) -> Schedule {
    let mut q = s.schedule(0, bytes);
    let all = Range::new(BufferId::Recv, 0, bytes);
    match root {
        Root::Here => (0..s.remote).for_each(|j| {
            q.send(s.remote_peer(j), vec![all], &[]);
        }),
        Root::Remote(j) => {
            q.recv(s.remote_peer(j), vec![all], &[]);
        }
        Root::Bystander => {}
    }
    q
}

/// Gather(v): the root receives remote member j's block at `displs[j]` of `Recv`; every
/// remote member sends its `send_bytes`. Messages: r; steps: 1.
pub fn gather(s: &Sides, root: Root, send_bytes: usize, blocks: &[usize], displs: &[usize]) -> Schedule {
    match root {
        Root::Here => {
            let mut q = s.schedule(0, extent(blocks, displs));
            for j in 0..s.remote {
                q.recv(s.remote_peer(j), vec![Range::new(BufferId::Recv, displs[j], blocks[j])], &[]);
            }
            q
        }
        Root::Remote(j) => {
            let mut q = s.schedule(send_bytes, 0);
            q.send(s.remote_peer(j), vec![Range::new(BufferId::Send, 0, send_bytes)], &[]);
            q
        }
        Root::Bystander => s.schedule(0, 0),
    }
}

/// Scatter(v): the root sends the block at `displs[j]` of `Send` to remote member j; every
/// remote member receives its `recv_bytes`. Messages: r; steps: 1.
pub fn scatter(s: &Sides, root: Root, blocks: &[usize], displs: &[usize], recv_bytes: usize) -> Schedule {
    match root {
        Root::Here => {
            let mut q = s.schedule(extent(blocks, displs), 0);
            for j in 0..s.remote {
                q.send(s.remote_peer(j), vec![Range::new(BufferId::Send, displs[j], blocks[j])], &[]);
            }
            q
        }
        Root::Remote(j) => {
            let mut q = s.schedule(0, recv_bytes);
            q.recv(s.remote_peer(j), vec![Range::new(BufferId::Recv, 0, recv_bytes)], &[]);
            q
        }
        Root::Bystander => s.schedule(0, 0),
    }
}

/// Allgather(v): every process sends its `send_bytes` to every remote member and receives
/// remote member j's block at `displs[j]` of `Recv`. Messages: 2 l r; steps: 1.
pub fn allgather(s: &Sides, send_bytes: usize, blocks: &[usize], displs: &[usize]) -> Schedule {
    let mut q = s.schedule(send_bytes, extent(blocks, displs));
    for j in 0..s.remote {
        q.recv(s.remote_peer(j), vec![Range::new(BufferId::Recv, displs[j], blocks[j])], &[]);
    }
    for j in 0..s.remote {
        q.send(s.remote_peer(j), vec![Range::new(BufferId::Send, 0, send_bytes)], &[]);
    }
    q
}

/// One side of an alltoall(v): block j (for or from remote member j) at `displs[j]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Blocks {
    pub sizes: Vec<usize>,
    pub displs: Vec<usize>,
}

/// Alltoall(v): block j of `Send` goes to remote member j, whose block for this process
/// lands at block j of `Recv`. Messages: 2 l r; steps: 1.
pub fn alltoall(s: &Sides, send: &Blocks, recv: &Blocks) -> Schedule {
    let mut q = s.schedule(extent(&send.sizes, &send.displs), extent(&recv.sizes, &recv.displs));
    for j in 0..s.remote {
        q.recv(s.remote_peer(j), vec![Range::new(BufferId::Recv, recv.displs[j], recv.sizes[j])], &[]);
    }
    for j in 0..s.remote {
        q.send(s.remote_peer(j), vec![Range::new(BufferId::Send, send.displs[j], send.sizes[j])], &[]);
    }
    q
}

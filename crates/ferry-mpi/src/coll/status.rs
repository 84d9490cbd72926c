//! Status sources of the status-based collectives (SEEDS.md S1): the root of
//! `bcast.status_binomial`, `scatter.status_linear` or `gather.status_linear` serves ranks
//! free-first (`Params::free_first`). Two sources tell it who is free:
//!
//! - the status board: for ranks on the root's host, the number of transfers each has in
//!   flight (0: free), read without any message;
//! - arrival tokens: every other rank sends the root a zero-byte "free" token on entry to
//!   the collective; the root takes the tokens that have arrived, in arrival order, and
//!   never waits for the others (they are served last, in rank order; their tokens are
//!   received later, on their own).
//!
//! With `FERRY_STATUS_SOURCE=arrival` every rank uses tokens. Root and non-root agree on
//! which source covers a rank: a rank is on the root's board exactly when the root is on
//! its own.

use ferry_core::engine::matching::Pattern;
use ferry_core::engine::Engine;

use crate::objects::coll_selection::StatusSource;

/// The algorithms whose root needs a free-first order.
pub const STATUS_ALGORITHMS: [&str; 3] = ["bcast.status_binomial", "scatter.status_linear", "gather.status_linear"];

/// Whether algorithm `id` is status-based.
pub fn is_status_based(id: &str) -> bool {
    STATUS_ALGORITHMS.contains(&id)
}

/// Transfers in flight of a rank on this host's status board; `None` for ranks elsewhere.
fn peer_in_flight(engine: &Engine, world_rank: u32) -> Option<u32> {
    engine.peer_in_flight(world_rank)
}

/// A non-root entering a status-based collective: send the root a "free" token unless the
/// root reads this rank from its board.
pub fn announce(engine: &mut Engine, source: StatusSource, root_world: u32, ctx: u32, token_tag: i32) {
    if source == StatusSource::Board && peer_in_flight(engine, root_world).is_some() {
        return;
    }
    static NOTHING: u8 = 0;
    // SAFETY: a zero-byte send reads nothing; the pointer is to a static anyway.
    // Nobody waits for it: it completes on its own (and finalize flushes it).
    if let Some(req) = unsafe { engine.isend(root_world, ctx, token_tag, &NOTHING, 0, false) } {
        engine.detach(req);
    }
}

/// The root's free-first order of communicator ranks: free board ranks and ranks whose
/// token has arrived (in arrival order), then busy board ranks (fewest transfers first),
/// then ranks whose token has not arrived yet (rank order). Receives the tokens that
/// arrived and leaves receives posted for the others.
pub fn free_first(engine: &mut Engine, source: StatusSource, group: &[u32], root: usize, ctx: u32, token_tag: i32) -> Vec<usize> {
    // Take in whatever has reached this process so far, without waiting.
    let _ = engine.progress(Some(std::time::Duration::ZERO));
    let mut board: Vec<(u32, usize)> = Vec::new();
    let mut expected: Vec<usize> = Vec::new();
    for (r, &w) in group.iter().enumerate() {
        if r == root {
            continue;
        }
        match peer_in_flight(engine, w).filter(|_| source == StatusSource::Board) {
            Some(n) => board.push((n, r)),
            None => expected.push(r),
        }
    }
    let mut arrived = Vec::new();
    let pat = Pattern { ctx, src: None, tag: Some(token_tag) };
    while let Some((mid, st)) = engine.improbe(&pat) {
        let mut none = 0u8;
        // SAFETY: a zero-byte receive writes nothing.
        let req = unsafe { engine.imrecv(mid, &mut none, 0) };
        engine.detach(req);
        if let Some(r) = group.iter().position(|&w| w == st.source) {
            arrived.push(r);
        }
    }
    let late: Vec<usize> = expected.iter().copied().filter(|r| !arrived.contains(r)).collect();
    for &r in &late {
        let mut none = 0u8;
        // SAFETY: a zero-byte receive writes nothing, so the stack address never matters.
        let req = unsafe { engine.irecv(Pattern { ctx, src: Some(group[r]), tag: Some(token_tag) }, &mut none, 0) };
        engine.detach(req);
    }
    let order = order(&board, &arrived, &late);
    ferry_core::debug!("coll", "status order {order:?} (arrived {arrived:?}, not yet {late:?})");
    order
}

/// The order `free_first` returns, from what it found: board ranks as (transfers in
/// flight, rank), ranks whose tokens arrived (in arrival order), ranks still expected.
fn order(board: &[(u32, usize)], arrived: &[usize], late: &[usize]) -> Vec<usize> {
    let mut busy: Vec<(u32, usize)> = board.iter().copied().filter(|&(n, _)| n > 0).collect();
    busy.sort();
    let free = board.iter().filter(|&&(n, _)| n == 0).map(|&(_, r)| r);
    let mut late = late.to_vec();
    late.sort_unstable();
    free.chain(arrived.iter().copied()).chain(busy.into_iter().map(|(_, r)| r)).chain(late).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn free_first_then_busy_then_late() {
        let board = [(2, 1), (0, 4), (1, 6), (0, 2)];
        assert_eq!(order(&board, &[5, 3], &[7, 0]), vec![4, 2, 5, 3, 6, 1, 0, 7]);
        assert_eq!(order(&[], &[], &[3, 1, 2]), vec![1, 2, 3]);
    }

    #[test]
    fn every_status_algorithm_is_known() {
        for a in ferry_coll::algorithms() {
            assert_eq!(is_status_based(a.id), a.id.contains(".status_"), "{}", a.id);
        }
    }
}

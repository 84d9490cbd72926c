//! New communicators from an intercommunicator (MPI-3.1 6.4.2): dup keeps both groups,
//! split and create make intercommunicators between the chosen members of each side. Each
//! is collective over both groups, with one exchange that also agrees on the context id.

use std::sync::Arc;

use super::{exchange, Exchanged};
use crate::objects::Comm;
use crate::consts::*;
use crate::error::{err, MpiResult};
use crate::objects::Runtime;

fn le_i32(b: &[u8], at: usize) -> i32 {
    i32::from_le_bytes(b[at..at + 4].try_into().expect("4 bytes"))
}

/// An intercommunicator between `local` and `remote`, or MPI_COMM_NULL when this process
/// is not in `local` or either side is empty.
fn make(rt: &mut Runtime, parent: i32, ctx: u32, local: Vec<u32>, remote: Vec<u32>) -> MpiResult<i32> {
    if local.is_empty() || remote.is_empty() || !local.contains(&rt.world_rank) {
        return Ok(MPI_COMM_NULL);
    }
    let mut new = Comm::new(ctx, local, rt.world_rank);
    new.set_remote(Some(Arc::new(remote)));
    new.errhandler = rt.comm(parent)?.errhandler;
    Ok(rt.add_comm(new))
}

/// `MPI_Comm_dup` (and `_with_info`: `hints`) of an intercommunicator.
pub(crate) fn dup(rt: &mut Runtime, comm: i32, hints: Option<crate::objects::records::Hints>) -> MpiResult<i32> {
    let ctx = exchange(rt, comm, &[])?.ctx;
    let c = rt.comm(comm)?;
    let mut new = Comm::new(ctx, c.group.to_vec(), rt.world_rank);
    new.set_remote(c.remote().cloned());
    new.errhandler = c.errhandler;
    new.hints = hints.unwrap_or_else(|| c.hints.clone());
    Ok(rt.add_comm(new))
}

/// The members of `group` (world ranks, in rank order) whose `(color, key)` in `items` has
/// `color`, ordered by key, then by rank.
fn colored(group: &[u32], items: &[Vec<u8>], color: i32) -> Vec<u32> {
    let mut m: Vec<(i32, usize, u32)> =
        items.iter().enumerate().filter(|(_, b)| le_i32(b, 0) == color).map(|(r, b)| (le_i32(b, 4), r, group[r])).collect();
    m.sort_unstable();
    m.into_iter().map(|x| x.2).collect()
}

/// `MPI_Comm_split` of an intercommunicator: the local members of colour c joined to the
/// remote members of colour c; MPI_COMM_NULL where either side has none.
pub(crate) fn split(rt: &mut Runtime, comm: i32, color: i32, key: i32) -> MpiResult<i32> {
    let mut extra = color.to_le_bytes().to_vec();
    extra.extend_from_slice(&key.to_le_bytes());
    let Exchanged { ctx, local: li, remote: ri } = exchange(rt, comm, &extra)?;
    if color == MPI_UNDEFINED {
        return Ok(MPI_COMM_NULL);
    }
    let c = rt.comm(comm)?;
    let (local, remote) = (colored(&c.group, &li, color), colored(c.peers(), &ri, color));
    make(rt, comm, ctx, local, remote)
}

/// The members of `group` in the order of the positions in `items` (-1: not chosen).
fn chosen(group: &[u32], items: &[Vec<u8>]) -> Vec<u32> {
    let mut m: Vec<(i32, u32)> = items.iter().zip(group).map(|(b, &w)| (le_i32(b, 0), w)).filter(|x| x.0 >= 0).collect();
    m.sort_unstable();
    m.into_iter().map(|x| x.1).collect()
}

/// `MPI_Comm_create` of an intercommunicator: `group` names members of the local group;
/// the remote side's choice (every remote member passes the same) is the remote group.
/// Each member tells only its place in the group, from which every member rebuilds both.
pub(crate) fn create(rt: &mut Runtime, comm: i32, group: i32) -> MpiResult<i32> {
    let c = rt.comm(comm)?;
    let local = c.group.clone();
    let g = rt.group(group)?;
    if let Some(w) = g.iter().find(|w| !local.contains(w)) {
        return err(MPI_ERR_GROUP, format!("the group holds world rank {w}, which is not in the local group of the intercommunicator"));
    }
    let place = g.iter().position(|&w| w == rt.world_rank).map_or(-1, |p| p as i32);
    let Exchanged { ctx, local: li, remote: ri } = exchange(rt, comm, &place.to_le_bytes())?;
    let c = rt.comm(comm)?;
    let (local, remote) = (chosen(&c.group, &li), chosen(c.peers(), &ri));
    make(rt, comm, ctx, local, remote)
}

fn same_set(a: &[u32], b: &[u32]) -> bool {
    let (mut x, mut y) = (a.to_vec(), b.to_vec());
    x.sort_unstable();
    y.sort_unstable();
    x == y
}

/// `MPI_Comm_compare` where either is an intercommunicator (and the handles differ): both
/// groups must match, in order for MPI_CONGRUENT, as sets for MPI_SIMILAR.
pub(crate) fn compare(a: &Comm, b: &Comm) -> i32 {
    match (a.remote(), b.remote()) {
        (Some(ra), Some(rb)) => {
            if a.group == b.group && ra == rb {
                MPI_CONGRUENT
            } else if same_set(&a.group, &b.group) && same_set(ra, rb) {
                MPI_SIMILAR
            } else {
                MPI_UNEQUAL
            }
        }
        _ => MPI_UNEQUAL,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn item(a: i32, b: i32) -> Vec<u8> {
        a.to_le_bytes().iter().chain(b.to_le_bytes().iter()).copied().collect()
    }

    #[test]
    fn split_orders_by_key_then_rank() {
        let group = [10, 11, 12, 13];
        let items = [item(1, 5), item(2, 0), item(1, 5), item(1, -1)];
        assert_eq!(colored(&group, &items, 1), vec![13, 10, 12]);
        assert_eq!(colored(&group, &items, 3), Vec::<u32>::new());
    }

    #[test]
    fn create_orders_by_place_in_the_group() {
        let group = [10, 11, 12];
        let items = [(-1i32).to_le_bytes().to_vec(), 1i32.to_le_bytes().to_vec(), 0i32.to_le_bytes().to_vec()];
        assert_eq!(chosen(&group, &items), vec![12, 11]);
    }

    #[test]
    fn compare_needs_both_groups() {
        let inter = |local: Vec<u32>, remote: Vec<u32>| {
            let mut c = Comm::new(8, local, 0);
            c.set_remote(Some(Arc::new(remote)));
            c
        };
        let a = inter(vec![0, 1], vec![2, 3]);
        assert_eq!(compare(&a, &inter(vec![0, 1], vec![2, 3])), MPI_CONGRUENT);
        assert_eq!(compare(&a, &inter(vec![1, 0], vec![3, 2])), MPI_SIMILAR);
        assert_eq!(compare(&a, &inter(vec![0, 1], vec![2])), MPI_UNEQUAL);
        assert_eq!(compare(&a, &Comm::new(8, vec![0, 1], 0)), MPI_UNEQUAL);
    }
}

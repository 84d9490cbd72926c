//! Virtual topologies: the Cartesian, graph or distributed-graph structure attached to a
//! communicator, the arithmetic on it, and each rank's neighbour lists, which the
//! neighbourhood collectives run over. `reorder` is accepted and ignored: ranks keep their
//! place, so a topology's communicator is a duplicate (or, for excess ranks of a Cartesian
//! grid, a split) of the old one.

pub(crate) mod cart;
pub(crate) mod dist_graph;
pub(crate) mod graph;

use std::os::raw::c_int;
use std::sync::Arc;

use crate::consts::*;
use crate::error::{err, MpiResult};
pub(crate) use crate::objects::topology::{graph_neighbors, Topology};
use crate::objects::Runtime;

pub(crate) use crate::objects::comm::topology as of;

/// `n` ints from a C array, checked for NULL when `n > 0`.
pub(crate) fn ints<'a>(p: *const c_int, n: usize, what: &str) -> MpiResult<&'a [c_int]> {
    if n == 0 {
        return Ok(&[]);
    }
    if p.is_null() {
        return err(MPI_ERR_ARG, format!("{what} is NULL"));
    }
    // SAFETY: MPI's contract: the caller passes `n` ints there.
    Ok(unsafe { std::slice::from_raw_parts(p, n) })
}

/// Write `src` to a C output array of room `max` (MPI's maxdims/maxindex/... arguments).
pub(crate) fn put(p: *mut c_int, src: &[c_int], max: c_int, what: &str) -> MpiResult<()> {
    let n = src.len().min(max.max(0) as usize);
    if n == 0 {
        return Ok(());
    }
    if p.is_null() {
        return err(MPI_ERR_ARG, format!("{what} is NULL"));
    }
    // SAFETY: MPI's contract: the caller passes room for `max` ints, and n <= max.
    unsafe { std::ptr::copy_nonoverlapping(src.as_ptr(), p, n) };
    Ok(())
}

/// A duplicate of `comm` carrying `topo` (collective over `comm`).
pub(crate) fn attach(rt: &mut Runtime, comm: MPI_Comm, topo: Topology) -> MpiResult<MPI_Comm> {
    crate::objects::comm::intra(rt, comm)?;
    let new = crate::comm::dup(rt, comm, None)?;
    rt.comms.get_mut(&new).expect("just made").topo = Some(Arc::new(topo));
    Ok(new)
}

/// `topo` on the first `n` ranks of `comm` (collective over `comm`): a duplicate when it
/// covers them all, else a split that leaves the others MPI_COMM_NULL.
pub(crate) fn attach_first(rt: &mut Runtime, comm: MPI_Comm, n: i64, topo: Topology) -> MpiResult<MPI_Comm> {
    let c = crate::objects::comm::intra(rt, comm)?;
    let (size, rank) = (c.size(), c.rank);
    if n > size as i64 {
        return err(MPI_ERR_TOPOLOGY, format!("the topology has {n} nodes, the communicator only {size} ranks"));
    }
    if n == size as i64 {
        return attach(rt, comm, topo);
    }
    let color = if (rank as i64) < n { 0 } else { MPI_UNDEFINED };
    let new = crate::comm::split(rt, comm, color, rank)?;
    if new != MPI_COMM_NULL {
        rt.comms.get_mut(&new).expect("just made").topo = Some(Arc::new(topo));
    }
    Ok(new)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn coords_and_ranks_round_trip_row_major() {
        let dims = [3, 4, 2];
        for r in 0..24 {
            let c = Topology::coords(&dims, r);
            assert_eq!(Topology::cart_rank(&dims, &[false; 3], &c), Some(r));
        }
        assert_eq!(Topology::coords(&dims, 9), vec![1, 0, 1]);
    }

    #[test]
    fn shifts_wrap_only_where_periodic() {
        let (dims, periods) = ([4, 3], [true, false]);
        assert_eq!(Topology::shift(&dims, &periods, 0, 0, 1), (9, 3));
        assert_eq!(Topology::shift(&dims, &periods, 0, 1, 1), (MPI_PROC_NULL, 1));
        assert_eq!(Topology::shift(&dims, &periods, 2, 1, 1), (1, MPI_PROC_NULL));
        let t = Topology::Cart { dims: dims.to_vec(), periods: periods.to_vec() };
        assert_eq!(t.neighbors(4).0, vec![1, 7, 3, 5]);
    }
}

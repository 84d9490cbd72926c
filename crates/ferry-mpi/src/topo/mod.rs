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
use crate::runtime::Runtime;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Topology {
    Cart { dims: Vec<i32>, periods: Vec<bool> },
    /// `index[i]` is the end of node i's neighbours in `edges` (MPI's layout).
    Graph { index: Vec<i32>, edges: Vec<i32> },
    /// This rank's own edges; weights `None` when created with `MPI_UNWEIGHTED`.
    DistGraph { sources: Vec<i32>, sweights: Option<Vec<i32>>, dests: Vec<i32>, dweights: Option<Vec<i32>> },
}

impl Topology {
    /// The `MPI_Topo_test` value.
    pub fn kind(&self) -> c_int {
        match self {
            Topology::Cart { .. } => MPI_CART,
            Topology::Graph { .. } => MPI_GRAPH,
            Topology::DistGraph { .. } => MPI_DIST_GRAPH,
        }
    }

    /// Coordinates of `rank` in a Cartesian grid (row-major, as MPI numbers them).
    pub fn coords(dims: &[i32], rank: i32) -> Vec<i32> {
        let mut c = vec![0; dims.len()];
        let mut r = rank;
        for d in (0..dims.len()).rev() {
            c[d] = r % dims[d];
            r /= dims[d];
        }
        c
    }

    /// Rank at `coords`, wrapped in periodic dimensions; `None` off a non-periodic edge.
    pub fn cart_rank(dims: &[i32], periods: &[bool], coords: &[i32]) -> Option<i32> {
        let mut r = 0;
        for d in 0..dims.len() {
            let mut c = coords[d];
            if periods[d] {
                c = c.rem_euclid(dims[d]);
            } else if c < 0 || c >= dims[d] {
                return None;
            }
            r = r * dims[d] + c;
        }
        Some(r)
    }

    /// (source, destination) of a shift by `disp` along `dim` from `rank`: MPI_PROC_NULL
    /// off a non-periodic edge.
    pub fn shift(dims: &[i32], periods: &[bool], rank: i32, dim: usize, disp: i32) -> (i32, i32) {
        let c = Topology::coords(dims, rank);
        let at = |delta: i32| {
            let mut x = c.clone();
            x[dim] += delta;
            Topology::cart_rank(dims, periods, &x).unwrap_or(MPI_PROC_NULL)
        };
        (at(-disp), at(disp))
    }

    /// This rank's (sources, destinations) for the neighbourhood collectives, in MPI's
    /// order; MPI_PROC_NULL entries keep their buffer slot but move nothing.
    pub fn neighbors(&self, rank: i32) -> (Vec<i32>, Vec<i32>) {
        match self {
            Topology::Cart { dims, periods } => {
                let mut n = Vec::with_capacity(2 * dims.len());
                for d in 0..dims.len() {
                    let (lo, hi) = Topology::shift(dims, periods, rank, d, 1);
                    n.push(lo);
                    n.push(hi);
                }
                (n.clone(), n)
            }
            Topology::Graph { index, edges } => {
                let n = graph_neighbors(index, edges, rank).to_vec();
                (n.clone(), n)
            }
            Topology::DistGraph { sources, dests, .. } => (sources.clone(), dests.clone()),
        }
    }
}

/// Node `rank`'s slice of `edges`.
pub(crate) fn graph_neighbors<'a>(index: &[i32], edges: &'a [i32], rank: i32) -> &'a [i32] {
    let r = rank as usize;
    let lo = if r == 0 { 0 } else { index[r - 1] as usize };
    &edges[lo..index[r] as usize]
}

/// The topology of `comm`, or MPI_ERR_TOPOLOGY.
pub fn of(rt: &Runtime, comm: MPI_Comm) -> MpiResult<Arc<Topology>> {
    match &crate::comm::intra(rt, comm)?.topo {
        Some(t) => Ok(t.clone()),
        None => err(MPI_ERR_TOPOLOGY, "the communicator has no topology"),
    }
}

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
    crate::comm::intra(rt, comm)?;
    let new = crate::comm::dup(rt, comm, None)?;
    rt.comms.get_mut(&new).expect("just made").topo = Some(Arc::new(topo));
    Ok(new)
}

/// `topo` on the first `n` ranks of `comm` (collective over `comm`): a duplicate when it
/// covers them all, else a split that leaves the others MPI_COMM_NULL.
pub(crate) fn attach_first(rt: &mut Runtime, comm: MPI_Comm, n: i64, topo: Topology) -> MpiResult<MPI_Comm> {
    let c = crate::comm::intra(rt, comm)?;
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

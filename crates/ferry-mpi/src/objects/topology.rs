//! A communicator's virtual topology as data: the Cartesian, graph or distributed-graph
//! structure (shared by duplicates) and the arithmetic on it. `comm/topo/` makes and queries it.

use std::os::raw::c_int;

use crate::consts::*;

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

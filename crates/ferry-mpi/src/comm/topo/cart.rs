//! Cartesian topologies: `MPI_Dims_create`, `MPI_Cart_*` and `MPI_Cartdim_get`.

use std::os::raw::c_int;

use super::{ints, of, Topology};
use crate::consts::*;
use crate::error::{err, MpiResult};
use crate::objects::Runtime;

/// Balanced dimensions: the free (zero) entries of `dims` get the prime factors of
/// `nnodes / (product of the fixed ones)`, each largest factor to the currently smallest
/// free dimension, then sorted non-increasing.
pub fn dims_create(nnodes: i32, dims: &mut [i32]) -> MpiResult<()> {
    if nnodes < 1 {
        return err(MPI_ERR_ARG, format!("nnodes {nnodes} is not positive"));
    }
    if let Some(d) = dims.iter().find(|d| **d < 0) {
        return err(MPI_ERR_DIMS, format!("dims holds the negative entry {d}"));
    }
    let fixed: i64 = dims.iter().filter(|d| **d > 0).map(|d| *d as i64).product();
    if nnodes as i64 % fixed != 0 {
        return err(MPI_ERR_DIMS, format!("{nnodes} nodes do not divide into the fixed dimensions (product {fixed})"));
    }
    let mut rest = (nnodes as i64 / fixed) as i32;
    let free: Vec<usize> = (0..dims.len()).filter(|&i| dims[i] == 0).collect();
    if free.is_empty() {
        return if rest == 1 { Ok(()) } else { err(MPI_ERR_DIMS, format!("the fixed dimensions do not multiply to {nnodes}")) };
    }
    let mut primes = Vec::new();
    let mut f = 2;
    while f * f <= rest {
        while rest % f == 0 {
            primes.push(f);
            rest /= f;
        }
        f += 1;
    }
    if rest > 1 {
        primes.push(rest);
    }
    primes.sort_unstable_by(|a, b| b.cmp(a));
    let mut got = vec![1; free.len()];
    for p in primes {
        let smallest = (0..got.len()).min_by_key(|&i| got[i]).expect("at least one free dimension");
        got[smallest] *= p;
    }
    got.sort_unstable_by(|a, b| b.cmp(a));
    for (i, g) in free.into_iter().zip(got) {
        dims[i] = g;
    }
    Ok(())
}

pub(crate) fn cart(rt: &Runtime, comm: MPI_Comm) -> MpiResult<(Vec<i32>, Vec<bool>)> {
    match &*of(rt, comm)? {
        Topology::Cart { dims, periods } => Ok((dims.clone(), periods.clone())),
        _ => err(MPI_ERR_TOPOLOGY, "the communicator's topology is not Cartesian"),
    }
}

/// Checked grid: `ndims` positive extents and their periodicity.
pub(crate) fn grid(ndims: c_int, dims: *const c_int, periods: *const c_int) -> MpiResult<(Vec<i32>, Vec<bool>)> {
    if ndims < 0 {
        return err(MPI_ERR_DIMS, format!("ndims {ndims} is negative"));
    }
    let d = ints(dims, ndims as usize, "dims")?.to_vec();
    if let Some(x) = d.iter().find(|x| **x <= 0) {
        return err(MPI_ERR_DIMS, format!("dims holds the entry {x} (extents are positive)"));
    }
    let p = ints(periods, ndims as usize, "periods")?.iter().map(|x| *x != 0).collect();
    Ok((d, p))
}

pub(crate) fn nodes(dims: &[i32]) -> i64 {
    dims.iter().map(|d| *d as i64).product()
}

pub(crate) fn cart_sub(rt: &mut Runtime, comm: MPI_Comm, remain: *const c_int) -> MpiResult<MPI_Comm> {
    let (dims, periods) = cart(rt, comm)?;
    let keep: Vec<bool> = ints(remain, dims.len(), "remain_dims")?.iter().map(|x| *x != 0).collect();
    let rank = rt.comm(comm)?.rank;
    let coords = Topology::coords(&dims, rank);
    // Ranks that agree on the dropped coordinates form one sub-grid.
    let color = (0..dims.len()).filter(|&d| !keep[d]).fold(0, |acc, d| acc * dims[d] + coords[d]);
    let new = crate::comm::split(rt, comm, color, rank)?;
    let pick = |v: &[i32]| (0..dims.len()).filter(|&d| keep[d]).map(|d| v[d]).collect::<Vec<_>>();
    let sub = Topology::Cart { dims: pick(&dims), periods: (0..dims.len()).filter(|&d| keep[d]).map(|d| periods[d]).collect() };
    rt.comms.get_mut(&new).expect("split with a colour always gives a communicator").topo = Some(std::sync::Arc::new(sub));
    Ok(new)
}

#[cfg(test)]
mod tests {
    use super::dims_create;

    fn dims(n: i32, mut d: Vec<i32>) -> Vec<i32> {
        dims_create(n, &mut d).expect("valid");
        d
    }

    #[test]
    fn dims_are_balanced_and_non_increasing() {
        assert_eq!(dims(6, vec![0, 0]), vec![3, 2]);
        assert_eq!(dims(12, vec![0, 0]), vec![4, 3]);
        assert_eq!(dims(24, vec![0, 0, 0]), vec![4, 3, 2]);
        assert_eq!(dims(7, vec![0, 0]), vec![7, 1]);
        assert_eq!(dims(12, vec![0, 3]), vec![4, 3]);
        assert_eq!(dims(1, vec![0, 0, 0]), vec![1, 1, 1]);
        assert!(dims_create(10, &mut [0, 3]).is_err());
    }
}

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
    let rest = (nnodes as i64 / fixed) as i32;
    let free: Vec<usize> = (0..dims.len()).filter(|&i| dims[i] == 0).collect();
    if free.is_empty() {
        return if rest == 1 { Ok(()) } else { err(MPI_ERR_DIMS, format!("the fixed dimensions do not multiply to {nnodes}")) };
    }
    let mut got = balanced(rest as u64, free.len());
    got.sort_unstable_by(|a, b| b.cmp(a));
    for (i, g) in free.into_iter().zip(got) {
        dims[i] = g as i32;
    }
    Ok(())
}

/// `n` as a product of `k` factors as close to each other as possible (MPI's "balanced"
/// decomposition): the smallest difference between the largest and the smallest factor, and
/// of those the smallest largest factor; in non-increasing order.
fn balanced(n: u64, k: usize) -> Vec<u64> {
    let mut divisors: Vec<u64> = (1..).take_while(|d| d * d <= n).filter(|d| n % d == 0).flat_map(|d| [d, n / d]).collect();
    divisors.sort_unstable();
    divisors.dedup();
    let mut best: Option<Vec<u64>> = None;
    let mut cur = Vec::with_capacity(k);
    search(n, k, u64::MAX, &divisors, &mut cur, &mut best);
    best.expect("1 x ... x n is always a decomposition")
}

/// Depth-first over the factors in non-increasing order, each at most `cap`, keeping in
/// `best` the most balanced complete decomposition found.
fn search(n: u64, k: usize, cap: u64, divisors: &[u64], cur: &mut Vec<u64>, best: &mut Option<Vec<u64>>) {
    let key = |v: &[u64]| (v[0] - v[v.len() - 1], v[0]);
    if k == 1 {
        if n > cap {
            return;
        }
        cur.push(n);
        if best.as_deref().is_none_or(|b| key(cur) < key(b)) {
            *best = Some(cur.clone());
        }
        cur.pop();
        return;
    }
    for &d in divisors.iter().rev() {
        // The remaining k - 1 factors are at most d, so d^k must reach n.
        if d > cap || n % d != 0 {
            continue;
        }
        if d.checked_pow(k as u32).is_some_and(|p| p < n) {
            break;
        }
        cur.push(d);
        search(n / d, k - 1, d, divisors, cur, best);
        cur.pop();
    }
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
    let mut color = (0..dims.len()).filter(|&d| !keep[d]).fold(0, |acc, d| acc * dims[d] + coords[d]);
    // Keeping no dimension gives a zero-dimensional grid, one process: as for MPI_Cart_create
    // with ndims 0, the grid's rank 0 has it and the others MPI_COMM_NULL (MPICH does so too).
    if !keep.contains(&true) && rank != 0 {
        color = MPI_UNDEFINED;
    }
    let new = crate::comm::split(rt, comm, color, rank)?;
    if new == MPI_COMM_NULL {
        return Ok(new);
    }
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
        // As close to each other as possible, not a greedy split of the primes (12 x 6).
        assert_eq!(dims(72, vec![0, 0]), vec![9, 8]);
        assert_eq!(dims(1323, vec![0, 0]), vec![49, 27]);
        assert_eq!(dims(888000, vec![0, 0, 0]), vec![111, 100, 80]);
        assert_eq!(dims(888720, vec![0, 0, 0]), vec![105, 92, 92]);
        assert_eq!(dims(887850, vec![0, 0, 0]), vec![1973, 25, 18]);
        assert_eq!(dims(8, vec![0, 0, 0]), vec![2, 2, 2]);
        assert_eq!(dims(1 << 20, vec![0; 20]), vec![2; 20]);
        assert_eq!(dims(360, vec![0, 5, 0]), vec![9, 5, 8]);
        // Many divisors and dimensions (the search stays small).
        assert_eq!(dims(720720, vec![0; 8]), vec![13, 11, 7, 5, 4, 4, 3, 3]);
    }
}

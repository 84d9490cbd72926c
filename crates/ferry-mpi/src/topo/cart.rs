//! Cartesian topologies: `MPI_Dims_create`, `MPI_Cart_*` and `MPI_Cartdim_get`.

use std::os::raw::c_int;

use super::{attach_first, ints, of, put, Topology};
use crate::boundary::call;
use crate::comm::out;
use crate::consts::*;
use crate::error::{err, MpiResult};
use crate::runtime::Runtime;

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

fn cart(rt: &Runtime, comm: MPI_Comm) -> MpiResult<(Vec<i32>, Vec<bool>)> {
    match &*of(rt, comm)? {
        Topology::Cart { dims, periods } => Ok((dims.clone(), periods.clone())),
        _ => err(MPI_ERR_TOPOLOGY, "the communicator's topology is not Cartesian"),
    }
}

/// Checked grid: `ndims` positive extents and their periodicity.
fn grid(ndims: c_int, dims: *const c_int, periods: *const c_int) -> MpiResult<(Vec<i32>, Vec<bool>)> {
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

fn nodes(dims: &[i32]) -> i64 {
    dims.iter().map(|d| *d as i64).product()
}

fn cart_sub(rt: &mut Runtime, comm: MPI_Comm, remain: *const c_int) -> MpiResult<MPI_Comm> {
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

crate::mpi_export! { MPI_Dims_create, PMPI_Dims_create, (nnodes: c_int, ndims: c_int, dims: *mut c_int) {
    call("MPI_Dims_create", MPI_COMM_WORLD, |_| {
        if ndims < 0 {
            return err(MPI_ERR_DIMS, format!("ndims {ndims} is negative"));
        }
        let mut d = ints(dims, ndims as usize, "dims")?.to_vec();
        dims_create(nnodes, &mut d)?;
        put(dims, &d, ndims, "dims")
    })
}}

crate::mpi_export! { MPI_Cart_create, PMPI_Cart_create, (comm: MPI_Comm, ndims: c_int, dims: *const c_int, periods: *const c_int,
        _reorder: c_int, comm_cart: *mut MPI_Comm) {
    call("MPI_Cart_create", comm, |rt| {
        let o = out(comm_cart, "comm_cart")?;
        crate::comm::intra(rt, comm)?;
        let (d, p) = grid(ndims, dims, periods)?;
        let n = nodes(&d);
        *o = attach_first(rt, comm, n, Topology::Cart { dims: d, periods: p })?;
        Ok(())
    })
}}

crate::mpi_export! { MPI_Cart_map, PMPI_Cart_map, (comm: MPI_Comm, ndims: c_int, dims: *const c_int, periods: *const c_int, newrank: *mut c_int) {
    call("MPI_Cart_map", comm, |rt| {
        let o = out(newrank, "newrank")?;
        let c = crate::comm::intra(rt, comm)?;
        let (size, rank) = (c.size(), c.rank);
        let (d, _) = grid(ndims, dims, periods)?;
        let n = nodes(&d);
        if n > size as i64 {
            return err(MPI_ERR_TOPOLOGY, format!("the grid has {n} nodes, the communicator only {size} ranks"));
        }
        *o = if (rank as i64) < n { rank } else { MPI_UNDEFINED };
        Ok(())
    })
}}

crate::mpi_export! { MPI_Cartdim_get, PMPI_Cartdim_get, (comm: MPI_Comm, ndims: *mut c_int) {
    call("MPI_Cartdim_get", comm, |rt| { let o = out(ndims, "ndims")?; *o = cart(rt, comm)?.0.len() as c_int; Ok(()) })
}}

crate::mpi_export! { MPI_Cart_get, PMPI_Cart_get, (comm: MPI_Comm, maxdims: c_int, dims: *mut c_int, periods: *mut c_int, coords: *mut c_int) {
    call("MPI_Cart_get", comm, |rt| {
        let (d, p) = cart(rt, comm)?;
        if maxdims < 0 {
            return err(MPI_ERR_ARG, format!("maxdims {maxdims} is negative"));
        }
        let c = Topology::coords(&d, rt.comm(comm)?.rank);
        put(dims, &d, maxdims, "dims")?;
        put(periods, &p.iter().map(|x| *x as c_int).collect::<Vec<_>>(), maxdims, "periods")?;
        put(coords, &c, maxdims, "coords")
    })
}}

crate::mpi_export! { MPI_Cart_rank, PMPI_Cart_rank, (comm: MPI_Comm, coords: *const c_int, rank: *mut c_int) {
    call("MPI_Cart_rank", comm, |rt| {
        let o = out(rank, "rank")?;
        let (d, p) = cart(rt, comm)?;
        let c = ints(coords, d.len(), "coords")?;
        match Topology::cart_rank(&d, &p, c) {
            Some(r) => { *o = r; Ok(()) }
            None => err(MPI_ERR_ARG, format!("coordinates {c:?} lie outside the non-periodic grid {d:?}")),
        }
    })
}}

crate::mpi_export! { MPI_Cart_coords, PMPI_Cart_coords, (comm: MPI_Comm, rank: c_int, maxdims: c_int, coords: *mut c_int) {
    call("MPI_Cart_coords", comm, |rt| {
        let (d, _) = cart(rt, comm)?;
        let size = rt.comm(comm)?.size();
        if rank < 0 || rank >= size {
            return err(MPI_ERR_RANK, format!("invalid rank {rank} (communicator size {size})"));
        }
        if maxdims < d.len() as c_int {
            return err(MPI_ERR_ARG, format!("maxdims {maxdims} is below the {} dimensions", d.len()));
        }
        put(coords, &Topology::coords(&d, rank), maxdims, "coords")
    })
}}

crate::mpi_export! { MPI_Cart_shift, PMPI_Cart_shift, (comm: MPI_Comm, direction: c_int, disp: c_int, source: *mut c_int, dest: *mut c_int) {
    call("MPI_Cart_shift", comm, |rt| {
        let (s, t) = (out(source, "rank_source")?, out(dest, "rank_dest")?);
        let (d, p) = cart(rt, comm)?;
        if direction < 0 || direction as usize >= d.len() {
            return err(MPI_ERR_ARG, format!("direction {direction} is not one of the {} dimensions", d.len()));
        }
        let (a, b) = Topology::shift(&d, &p, rt.comm(comm)?.rank, direction as usize, disp);
        (*s, *t) = (a, b);
        Ok(())
    })
}}

crate::mpi_export! { MPI_Cart_sub, PMPI_Cart_sub, (comm: MPI_Comm, remain_dims: *const c_int, newcomm: *mut MPI_Comm) {
    call("MPI_Cart_sub", comm, |rt| { let o = out(newcomm, "newcomm")?; *o = cart_sub(rt, comm, remain_dims)?; Ok(()) })
}}

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

//! Large-count datatype constructors (`MPI_Type_contiguous_c`...) and the envelope and
//! contents queries that describe what they made. The type maps are built by the same
//! `ferry_data` constructors as the int-count ones, with 64-bit counts; the contents keep the
//! `MPI_Count` arguments in the large-count form, which only `MPI_Type_get_contents_c` returns.

use std::os::raw::c_int;

use ferry_data::datatype::Datatype;

use crate::boundary::call;
use crate::error::out_arg;
use crate::consts::*;
use crate::error::{err, slice, MpiResult};
use crate::typeinfo::{child, child_list, contents_of, fill_contents, Contents};
use crate::types::{distributions, made, order_of};

/// A non-negative count argument; MPI_ERR_COUNT names a negative `count`, MPI_ERR_ARG any
/// other negative argument (as the int-count constructors do).
fn nonneg(v: MPI_Count, what: &str) -> MpiResult<usize> {
    if v < 0 {
        return err(if what == "count" { MPI_ERR_COUNT } else { MPI_ERR_ARG }, format!("{what} {v} is negative"));
    }
    Ok(v as usize)
}

fn nonnegs(p: *const MPI_Count, n: usize, what: &str) -> MpiResult<Vec<usize>> {
    slice(p, n, what)?.iter().map(|&v| nonneg(v, what)).collect()
}

fn isizes(p: *const MPI_Count, n: usize, what: &str) -> MpiResult<Vec<isize>> {
    Ok(slice(p, n, what)?.iter().map(|&v| v as isize).collect())
}

/// `[first, rest...]` as one list of large counts.
fn large(first: &[MPI_Count], rest: &[&[MPI_Count]]) -> Vec<MPI_Count> {
    let mut v = first.to_vec();
    for r in rest {
        v.extend_from_slice(r);
    }
    v
}

crate::mpi_export! { MPI_Type_contiguous_c, PMPI_Type_contiguous_c, (count: MPI_Count, old: MPI_Datatype, newtype: *mut MPI_Datatype) {
    call("MPI_Type_contiguous_c", MPI_COMM_WORLD, move |rt| {
        let n = nonneg(count, "count")?;
        let (o, c) = child(rt, old)?;
        made(rt, Datatype::contiguous(n, &o), newtype, Contents::large(MPI_COMBINER_CONTIGUOUS, vec![], vec![count], vec![c]))
    })
}}

crate::mpi_export! { MPI_Type_vector_c, PMPI_Type_vector_c, (count: MPI_Count, blocklen: MPI_Count, stride: MPI_Count, old: MPI_Datatype, newtype: *mut MPI_Datatype) {
    call("MPI_Type_vector_c", MPI_COMM_WORLD, move |rt| {
        let (n, b) = (nonneg(count, "count")?, nonneg(blocklen, "blocklength")?);
        let (o, c) = child(rt, old)?;
        made(rt, Datatype::vector(n, b, stride as isize, &o), newtype, Contents::large(MPI_COMBINER_VECTOR, vec![], vec![count, blocklen, stride], vec![c]))
    })
}}

crate::mpi_export! { MPI_Type_create_hvector_c, PMPI_Type_create_hvector_c, (count: MPI_Count, blocklen: MPI_Count, stride: MPI_Count, old: MPI_Datatype, newtype: *mut MPI_Datatype) {
    call("MPI_Type_create_hvector_c", MPI_COMM_WORLD, move |rt| {
        let (n, b) = (nonneg(count, "count")?, nonneg(blocklen, "blocklength")?);
        let (o, c) = child(rt, old)?;
        made(rt, Datatype::hvector(n, b, stride as isize, &o), newtype, Contents::large(MPI_COMBINER_HVECTOR, vec![], vec![count, blocklen, stride], vec![c]))
    })
}}

crate::mpi_export! { MPI_Type_indexed_c, PMPI_Type_indexed_c, (count: MPI_Count, blocklens: *const MPI_Count, displs: *const MPI_Count, old: MPI_Datatype, newtype: *mut MPI_Datatype) {
    call("MPI_Type_indexed_c", MPI_COMM_WORLD, move |rt| {
        let n = nonneg(count, "count")?;
        let (bl, ds) = (nonnegs(blocklens, n, "array_of_blocklengths")?, isizes(displs, n, "array_of_displacements")?);
        let (o, c) = child(rt, old)?;
        let l = large(&[count], &[slice(blocklens, n, "")?, slice(displs, n, "")?]);
        made(rt, Datatype::indexed(&bl, &ds, &o), newtype, Contents::large(MPI_COMBINER_INDEXED, vec![], l, vec![c]))
    })
}}

crate::mpi_export! { MPI_Type_create_hindexed_c, PMPI_Type_create_hindexed_c, (count: MPI_Count, blocklens: *const MPI_Count, displs: *const MPI_Count, old: MPI_Datatype, newtype: *mut MPI_Datatype) {
    call("MPI_Type_create_hindexed_c", MPI_COMM_WORLD, move |rt| {
        let n = nonneg(count, "count")?;
        let (bl, ds) = (nonnegs(blocklens, n, "array_of_blocklengths")?, isizes(displs, n, "array_of_displacements")?);
        let (o, c) = child(rt, old)?;
        let l = large(&[count], &[slice(blocklens, n, "")?, slice(displs, n, "")?]);
        made(rt, Datatype::hindexed(&bl, &ds, &o), newtype, Contents::large(MPI_COMBINER_HINDEXED, vec![], l, vec![c]))
    })
}}

crate::mpi_export! { MPI_Type_create_indexed_block_c, PMPI_Type_create_indexed_block_c, (count: MPI_Count, blocklen: MPI_Count, displs: *const MPI_Count, old: MPI_Datatype, newtype: *mut MPI_Datatype) {
    call("MPI_Type_create_indexed_block_c", MPI_COMM_WORLD, move |rt| {
        let (n, b) = (nonneg(count, "count")?, nonneg(blocklen, "blocklength")?);
        let ds = isizes(displs, n, "array_of_displacements")?;
        let (o, c) = child(rt, old)?;
        let l = large(&[count, blocklen], &[slice(displs, n, "")?]);
        made(rt, Datatype::indexed_block(b, &ds, &o), newtype, Contents::large(MPI_COMBINER_INDEXED_BLOCK, vec![], l, vec![c]))
    })
}}

crate::mpi_export! { MPI_Type_create_hindexed_block_c, PMPI_Type_create_hindexed_block_c, (count: MPI_Count, blocklen: MPI_Count, displs: *const MPI_Count, old: MPI_Datatype, newtype: *mut MPI_Datatype) {
    call("MPI_Type_create_hindexed_block_c", MPI_COMM_WORLD, move |rt| {
        let (n, b) = (nonneg(count, "count")?, nonneg(blocklen, "blocklength")?);
        let ds = isizes(displs, n, "array_of_displacements")?;
        let (o, c) = child(rt, old)?;
        let l = large(&[count, blocklen], &[slice(displs, n, "")?]);
        made(rt, Datatype::hindexed_block(b, &ds, &o), newtype, Contents::large(MPI_COMBINER_HINDEXED_BLOCK, vec![], l, vec![c]))
    })
}}

crate::mpi_export! { MPI_Type_create_struct_c, PMPI_Type_create_struct_c, (count: MPI_Count, blocklens: *const MPI_Count, displs: *const MPI_Count, types: *const MPI_Datatype, newtype: *mut MPI_Datatype) {
    call("MPI_Type_create_struct_c", MPI_COMM_WORLD, move |rt| {
        let n = nonneg(count, "count")?;
        let (bl, ds) = (nonnegs(blocklens, n, "array_of_blocklengths")?, isizes(displs, n, "array_of_displacements")?);
        let handles = slice(types, n, "array_of_types")?;
        let (ts, cs) = child_list(rt, handles)?;
        let l = large(&[count], &[slice(blocklens, n, "")?, slice(displs, n, "")?]);
        made(rt, crate::types::create_struct(&bl, &ds, handles, &ts), newtype, Contents::large(MPI_COMBINER_STRUCT, vec![], l, cs))
    })
}}

crate::mpi_export! { MPI_Type_create_resized_c, PMPI_Type_create_resized_c, (old: MPI_Datatype, lb: MPI_Count, extent: MPI_Count, newtype: *mut MPI_Datatype) {
    call("MPI_Type_create_resized_c", MPI_COMM_WORLD, move |rt| {
        let (o, c) = child(rt, old)?;
        made(rt, Datatype::resized(&o, lb as isize, extent as isize), newtype, Contents::large(MPI_COMBINER_RESIZED, vec![], vec![lb, extent], vec![c]))
    })
}}

/// An array of `n` dimensions, each at least `min`.
fn dims(p: *const MPI_Count, n: usize, min: MPI_Count, what: &str) -> MpiResult<Vec<usize>> {
    let v = slice(p, n, what)?;
    match v.iter().position(|&x| x < min) {
        Some(i) => err(MPI_ERR_ARG, format!("{what}[{i}] = {} is below {min}", v[i])),
        None => Ok(v.iter().map(|&x| x as usize).collect()),
    }
}

crate::mpi_export! { MPI_Type_create_subarray_c, PMPI_Type_create_subarray_c, (ndims: c_int, sizes: *const MPI_Count, subsizes: *const MPI_Count, starts: *const MPI_Count, order: c_int, old: MPI_Datatype, newtype: *mut MPI_Datatype) {
    call("MPI_Type_create_subarray_c", MPI_COMM_WORLD, move |rt| {
        if ndims <= 0 {
            return err(MPI_ERR_ARG, format!("ndims {ndims} is not positive"));
        }
        let n = ndims as usize;
        let (sz, sub, st) = (dims(sizes, n, 1, "array_of_sizes")?, dims(subsizes, n, 1, "array_of_subsizes")?, dims(starts, n, 0, "array_of_starts")?);
        let ord = order_of(order)?;
        let (o, c) = child(rt, old)?;
        let t = Datatype::subarray(&sz, &sub, &st, ord, &o);
        let l = large(&[], &[slice(sizes, n, "")?, slice(subsizes, n, "")?, slice(starts, n, "")?]);
        made(rt, t, newtype, Contents::large(MPI_COMBINER_SUBARRAY, vec![ndims, order], l, vec![c]))
    })
}}

crate::mpi_export! { MPI_Type_create_darray_c, PMPI_Type_create_darray_c, (size: c_int, rank: c_int, ndims: c_int, gsizes: *const MPI_Count, distribs: *const c_int,
        dargs: *const c_int, psizes: *const c_int, order: c_int, old: MPI_Datatype, newtype: *mut MPI_Datatype) {
    call("MPI_Type_create_darray_c", MPI_COMM_WORLD, move |rt| {
        if size <= 0 || rank < 0 || rank >= size {
            return err(MPI_ERR_ARG, format!("rank {rank} of size {size}"));
        }
        if ndims <= 0 {
            return err(MPI_ERR_ARG, format!("ndims {ndims} is not positive"));
        }
        let n = ndims as usize;
        let gs = dims(gsizes, n, 1, "array_of_gsizes")?;
        let ps = crate::types::dims(psizes, n, 1, "array_of_psizes")?;
        let (ds, da) = (slice(distribs, n, "array_of_distribs")?, slice(dargs, n, "array_of_dargs")?);
        let dist = distributions(ds, da)?;
        let ord = order_of(order)?;
        let (o, c) = child(rt, old)?;
        let us: Vec<usize> = ps.iter().map(|&p| p as usize).collect();
        let t = Datatype::darray(size as usize, rank as usize, &gs, &dist, &us, ord, &o);
        let ints = [&[size, rank, ndims][..], ds, da, ps, &[order]].concat();
        made(rt, t, newtype, Contents::large(MPI_COMBINER_DARRAY, ints, slice(gsizes, n, "")?.to_vec(), vec![c]))
    })
}}

crate::mpi_export! { MPI_Type_get_envelope_c, PMPI_Type_get_envelope_c, (dt: MPI_Datatype, num_integers: *mut MPI_Count, num_addresses: *mut MPI_Count,
        num_large_counts: *mut MPI_Count, num_datatypes: *mut MPI_Count, combiner: *mut c_int) {
    call("MPI_Type_get_envelope_c", MPI_COMM_WORLD, move |rt| {
        let c = contents_of(rt, dt)?;
        let (ni, na, nl, nd, comb) = match &c {
            Some(c) => (c.ints.len(), c.aints.len(), c.large.len(), c.types.len(), c.combiner),
            None => (0, 0, 0, 0, MPI_COMBINER_NAMED),
        };
        let outs = (out_arg(num_integers, "num_integers")?, out_arg(num_addresses, "num_addresses")?, out_arg(num_large_counts, "num_large_counts")?,
                    out_arg(num_datatypes, "num_datatypes")?, out_arg(combiner, "combiner")?);
        (*outs.0, *outs.1, *outs.2, *outs.3) = (ni as MPI_Count, na as MPI_Count, nl as MPI_Count, nd as MPI_Count);
        *outs.4 = comb;
        Ok(())
    })
}}

crate::mpi_export! { MPI_Type_get_contents_c, PMPI_Type_get_contents_c, (dt: MPI_Datatype, max_integers: MPI_Count, max_addresses: MPI_Count, max_large_counts: MPI_Count,
        max_datatypes: MPI_Count, integers: *mut c_int, addresses: *mut MPI_Aint, large_counts: *mut MPI_Count, datatypes: *mut MPI_Datatype) {
    call("MPI_Type_get_contents_c", MPI_COMM_WORLD, move |rt| {
        let Some(c) = contents_of(rt, dt)? else {
            return err(MPI_ERR_TYPE, "a predefined datatype has no contents");
        };
        let limits = [
            ("max_integers", max_integers, c.ints.len()),
            ("max_addresses", max_addresses, c.aints.len()),
            ("max_large_counts", max_large_counts, c.large.len()),
            ("max_datatypes", max_datatypes, c.types.len()),
        ];
        for (what, max, need) in limits {
            if max < 0 || (max as usize) < need {
                return err(MPI_ERR_ARG, format!("{what} {max} is less than the {need} entries"));
            }
        }
        fill_contents(rt, &c, integers, addresses, large_counts, datatypes)
    })
}}

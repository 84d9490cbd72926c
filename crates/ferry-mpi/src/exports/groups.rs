//! Groups (MPI-4.1 chapter 7.3): constructors, set operations, rank translation and
//! comparison, and the group queries.

use std::os::raw::c_int;
use std::sync::Arc;

use crate::boundary::call;
use crate::consts::*;
use crate::error::{err, MpiResult, out_arg as out};
use crate::group::*;
use crate::objects::Runtime;

/// Run a group function that makes a new group from `make`'s members. Group functions name
/// no communicator: their errors go to `MPI_COMM_WORLD`'s handler.
pub(crate) fn new_group(name: &'static str, newgroup: *mut MPI_Group, make: impl FnOnce(&mut Runtime) -> MpiResult<Vec<u32>>) -> c_int {
    call(name, MPI_COMM_WORLD, |rt| {
        let o = out(newgroup, "newgroup")?;
        let members = make(rt)?;
        *o = rt.add_group(Arc::new(members));
        Ok(())
    })
}

crate::mpi_export! { MPI_Comm_group, PMPI_Comm_group, (comm: MPI_Comm, group: *mut MPI_Group) {
    call("MPI_Comm_group", comm, move |rt| {
        let o = out(group, "group")?;
        let g = rt.comm(comm)?.group.clone();
        *o = rt.add_group(g);
        Ok(())
    })
}}
crate::mpi_export! { MPI_Group_size, PMPI_Group_size, (group: MPI_Group, size: *mut c_int) {
    call("MPI_Group_size", MPI_COMM_WORLD, move |rt| { let o = out(size, "size")?; *o = rt.group(group)?.len() as c_int; Ok(()) })
}}
crate::mpi_export! { MPI_Group_rank, PMPI_Group_rank, (group: MPI_Group, rank: *mut c_int) {
    call("MPI_Group_rank", MPI_COMM_WORLD, move |rt| { let o = out(rank, "rank")?; *o = rank_of(&rt.group(group)?, rt.world_rank); Ok(()) })
}}
crate::mpi_export! { MPI_Group_translate_ranks, PMPI_Group_translate_ranks, (group1: MPI_Group, n: c_int, ranks1: *const c_int, group2: MPI_Group, ranks2: *mut c_int) {
    call("MPI_Group_translate_ranks", MPI_COMM_WORLD, move |rt| {
        let (a, b) = (rt.group(group1)?, rt.group(group2)?);
        let from = ints(ranks1, n, "ranks1")?;
        let to = translate(&a, from, &b)?;
        if n > 0 && ranks2.is_null() {
            return err(MPI_ERR_ARG, "ranks2 is NULL");
        }
        // SAFETY: MPI's contract: `ranks2` has room for `n` ints (non-null checked above).
        for (i, r) in to.into_iter().enumerate() { unsafe { *ranks2.add(i) = r } }
        Ok(())
    })
}}
crate::mpi_export! { MPI_Group_compare, PMPI_Group_compare, (group1: MPI_Group, group2: MPI_Group, result: *mut c_int) {
    call("MPI_Group_compare", MPI_COMM_WORLD, move |rt| {
        let o = out(result, "result")?;
        *o = compare(&rt.group(group1)?, &rt.group(group2)?);
        Ok(())
    })
}}
crate::mpi_export! { MPI_Group_union, PMPI_Group_union, (group1: MPI_Group, group2: MPI_Group, newgroup: *mut MPI_Group) {
    new_group("MPI_Group_union", newgroup, |rt| Ok(union(&rt.group(group1)?, &rt.group(group2)?)))
}}
crate::mpi_export! { MPI_Group_intersection, PMPI_Group_intersection, (group1: MPI_Group, group2: MPI_Group, newgroup: *mut MPI_Group) {
    new_group("MPI_Group_intersection", newgroup, |rt| Ok(intersection(&rt.group(group1)?, &rt.group(group2)?)))
}}
crate::mpi_export! { MPI_Group_difference, PMPI_Group_difference, (group1: MPI_Group, group2: MPI_Group, newgroup: *mut MPI_Group) {
    new_group("MPI_Group_difference", newgroup, |rt| Ok(difference(&rt.group(group1)?, &rt.group(group2)?)))
}}
crate::mpi_export! { MPI_Group_incl, PMPI_Group_incl, (group: MPI_Group, n: c_int, ranks: *const c_int, newgroup: *mut MPI_Group) {
    new_group("MPI_Group_incl", newgroup, |rt| incl(&rt.group(group)?, ints(ranks, n, "ranks")?))
}}
crate::mpi_export! { MPI_Group_excl, PMPI_Group_excl, (group: MPI_Group, n: c_int, ranks: *const c_int, newgroup: *mut MPI_Group) {
    new_group("MPI_Group_excl", newgroup, |rt| excl(&rt.group(group)?, ints(ranks, n, "ranks")?))
}}
crate::mpi_export! { MPI_Group_range_incl, PMPI_Group_range_incl, (group: MPI_Group, n: c_int, ranges: *mut [c_int; 3], newgroup: *mut MPI_Group) {
    new_group("MPI_Group_range_incl", newgroup, |rt| {
        let g = rt.group(group)?;
        incl(&g, &expand_ranges(g.len(), ints(ranges, n, "ranges")?)?)
    })
}}
crate::mpi_export! { MPI_Group_range_excl, PMPI_Group_range_excl, (group: MPI_Group, n: c_int, ranges: *mut [c_int; 3], newgroup: *mut MPI_Group) {
    new_group("MPI_Group_range_excl", newgroup, |rt| {
        let g = rt.group(group)?;
        excl(&g, &expand_ranges(g.len(), ints(ranges, n, "ranges")?)?)
    })
}}
crate::mpi_export! { MPI_Group_free, PMPI_Group_free, (group: *mut MPI_Group) {
    call("MPI_Group_free", MPI_COMM_WORLD, move |rt| {
        let o = out(group, "group")?;
        // MPI_GROUP_EMPTY is what empty results are: freeing one only resets the handle.
        rt.group(*o)?;
        rt.groups.remove(&*o);
        *o = MPI_GROUP_NULL;
        Ok(())
    })
}}

//! Communicators: a context id pair, a group of world ranks, an error handler; and the
//! functions that make, compare and free them.

use std::os::raw::c_int;
use std::sync::Arc;

use crate::boundary::call;
use crate::consts::*;
use crate::error::{err, MpiResult};
use crate::internal;
use crate::runtime::Runtime;

pub struct Comm {
    /// Context id of point-to-point traffic; `ctx + 1` carries this communicator's internal
    /// (collective) traffic so the two never match each other.
    pub ctx: u32,
    /// World rank of each member, in communicator rank order.
    pub group: Arc<Vec<u32>>,
    pub rank: i32,
    pub errhandler: i32,
    /// Collective calls made on this communicator so far; every member counts the same, so
    /// the count tells one call's messages from the next one's.
    pub coll_seq: u32,
}

impl Comm {
    pub fn new(ctx: u32, group: Vec<u32>, world_rank: u32) -> Comm {
        let rank = group.iter().position(|&w| w == world_rank).map_or(-1, |r| r as i32);
        Comm { ctx, group: Arc::new(group), rank, errhandler: MPI_ERRORS_ARE_FATAL, coll_seq: 0 }
    }

    pub fn size(&self) -> i32 {
        self.group.len() as i32
    }

    /// World rank of communicator rank `r` (validated by the caller).
    pub fn world(&self, r: i32) -> u32 {
        self.group[r as usize]
    }
}

/// Communicator rank of world rank `w` in `group` (a linear search: it runs only when a
/// status is filled in).
pub fn rank_in(group: &[u32], w: u32) -> i32 {
    group.iter().position(|&g| g == w).map_or(MPI_UNDEFINED, |r| r as i32)
}

/// Agree with every member of `comm` on a context id none of them has used.
fn agree_context(rt: &mut Runtime, comm: i32, extra: &[u8]) -> MpiResult<(u32, Vec<Vec<u8>>)> {
    let mut mine = rt.next_context.to_le_bytes().to_vec();
    mine.extend_from_slice(extra);
    let all = internal::allgather(rt, comm, &mine)?;
    let ctx = all.iter().map(|b| u32::from_le_bytes(b[0..4].try_into().expect("4-byte prefix"))).max().unwrap_or(rt.next_context);
    rt.next_context = ctx + 2;
    Ok((ctx, all.into_iter().map(|b| b[4..].to_vec()).collect()))
}

fn dup(rt: &mut Runtime, comm: i32) -> MpiResult<i32> {
    let (ctx, _) = agree_context(rt, comm, &[])?;
    let c = rt.comm(comm)?;
    let new = Comm { ctx, group: c.group.clone(), rank: c.rank, errhandler: c.errhandler, coll_seq: 0 };
    Ok(rt.add_comm(new))
}

fn split(rt: &mut Runtime, comm: i32, color: i32, key: i32) -> MpiResult<i32> {
    if color < 0 && color != MPI_UNDEFINED {
        return err(MPI_ERR_ARG, format!("color {color} is negative (only MPI_UNDEFINED may be)"));
    }
    let mut extra = color.to_le_bytes().to_vec();
    extra.extend_from_slice(&key.to_le_bytes());
    let (ctx, all) = agree_context(rt, comm, &extra)?;
    if color == MPI_UNDEFINED {
        return Ok(MPI_COMM_NULL);
    }
    let c = rt.comm(comm)?;
    let mut members: Vec<(i32, usize, u32)> = all
        .iter()
        .enumerate()
        .filter_map(|(r, b)| {
            let col = i32::from_le_bytes(b[0..4].try_into().expect("color"));
            let k = i32::from_le_bytes(b[4..8].try_into().expect("key"));
            (col == color).then_some((k, r, c.group[r]))
        })
        .collect();
    members.sort();
    let group: Vec<u32> = members.iter().map(|m| m.2).collect();
    let mut new = Comm::new(ctx, group, rt.world_rank);
    new.errhandler = c.errhandler;
    Ok(rt.add_comm(new))
}

fn compare(rt: &Runtime, a: i32, b: i32) -> MpiResult<i32> {
    let (ca, cb) = (rt.comm(a)?, rt.comm(b)?);
    if a == b {
        return Ok(MPI_IDENT);
    }
    if ca.group == cb.group {
        return Ok(MPI_CONGRUENT);
    }
    let (mut x, mut y) = (ca.group.to_vec(), cb.group.to_vec());
    x.sort_unstable();
    y.sort_unstable();
    Ok(if x == y { MPI_SIMILAR } else { MPI_UNEQUAL })
}

pub(crate) fn out<'a, T>(p: *mut T, name: &str) -> MpiResult<&'a mut T> {
    // SAFETY: a non-null output argument points to caller storage for one T (MPI's contract).
    unsafe { p.as_mut() }.ok_or_else(|| crate::error::MpiError::new(MPI_ERR_ARG, format!("{name} is NULL")))
}
pub(crate) use self::out as out_arg;

crate::mpi_export! { MPI_Comm_size, PMPI_Comm_size, (comm: MPI_Comm, size: *mut c_int) {
    call("MPI_Comm_size", comm, |rt| { let s = rt.comm(comm)?.size(); *out(size, "size")? = s; Ok(()) })
}}

crate::mpi_export! { MPI_Comm_rank, PMPI_Comm_rank, (comm: MPI_Comm, rank: *mut c_int) {
    call("MPI_Comm_rank", comm, |rt| { let r = rt.comm(comm)?.rank; *out(rank, "rank")? = r; Ok(()) })
}}

crate::mpi_export! { MPI_Comm_dup, PMPI_Comm_dup, (comm: MPI_Comm, newcomm: *mut MPI_Comm) {
    let rc = call("MPI_Comm_dup", comm, |rt| { let o = out(newcomm, "newcomm")?; rt.comm(comm)?; *o = dup(rt, comm)?; Ok(()) });
    if rc != MPI_SUCCESS { return rc; }
    // SAFETY: checked non-null and written by the call above.
    let new = unsafe { *newcomm };
    crate::attr::after_dup("MPI_Comm_dup", crate::attr::Kind::Comm, comm, new, |rt| {
        rt.comms.remove(&new);
        // SAFETY: as above.
        unsafe { *newcomm = MPI_COMM_NULL };
    })
}}

crate::mpi_export! { MPI_Comm_split, PMPI_Comm_split, (comm: MPI_Comm, color: c_int, key: c_int, newcomm: *mut MPI_Comm) {
    call("MPI_Comm_split", comm, |rt| { let o = out(newcomm, "newcomm")?; rt.comm(comm)?; *o = split(rt, comm, color, key)?; Ok(()) })
}}

crate::mpi_export! { MPI_Comm_free, PMPI_Comm_free, (comm: *mut MPI_Comm) {
    // SAFETY: MPI passes a pointer to the caller's handle; checked for NULL first.
    let h = if comm.is_null() { MPI_COMM_NULL } else { unsafe { *comm } };
    let rc = crate::attr::before_free("MPI_Comm_free", crate::attr::Kind::Comm, h);
    if rc != MPI_SUCCESS { return rc; }
    call("MPI_Comm_free", h, |rt| {
        let o = out(comm, "comm")?;
        if h == MPI_COMM_WORLD || h == MPI_COMM_SELF {
            return err(MPI_ERR_COMM, "predefined communicators cannot be freed");
        }
        rt.comm(h)?;
        rt.comms.remove(&h);
        *o = MPI_COMM_NULL;
        Ok(())
    })
}}

crate::mpi_export! { MPI_Comm_compare, PMPI_Comm_compare, (a: MPI_Comm, b: MPI_Comm, result: *mut c_int) {
    call("MPI_Comm_compare", a, |rt| { let o = out(result, "result")?; *o = compare(rt, a, b)?; Ok(()) })
}}

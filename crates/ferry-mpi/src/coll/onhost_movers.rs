//! The shared-memory gather, scatter and alltoall of a communicator on one host
//! (`ferry_coll`'s `gather/shm.rs`, `scatter/shm.rs`, `alltoall/shm.rs`, run by `onhost`):
//! a prepared call of any datatype (packed by its regions), and the direct paths that the
//! exports take for a contiguous datatype, under the rules of `onhost`'s module doc.

use std::os::raw::{c_int, c_void};

use ferry_coll::select::slot_volume;
use ferry_coll::slots::{steps, SLOT_BYTES};
use ferry_coll::Collective;

use super::onhost::{contiguous, drive, fits, ready_area, take_call};
use super::{in_place, Prepared};
use crate::consts::*;
use crate::error::{err, MpiResult};
use crate::objects::threads::Locked;

/// Run a prepared gather, scatter or alltoall of blocks of `block` bytes through the area.
///
/// The table chose the algorithm from the size metric, one side's block; a rank whose other
/// side is larger (ranks, or one rank's two sides, that disagree: an erroneous program) moves
/// only what the slots hold, in step with the others, and then reports the truncation.
pub(super) fn run_blocks(rt: &mut Locked, p: &Prepared, root: usize, block: usize, in_place: bool) -> MpiResult<()> {
    let (coll, comm, ranks) = (p.info.collective, p.call.comm, p.call.size);
    let (send, recv) = (p.send.ptr, p.recv.ptr);
    let len = block.min(SLOT_BYTES / slot_volume(coll, ranks, 1));
    // SAFETY (all three): the regions hold the call's packed data: this rank's block (every
    // rank's at the gather's root and the scatter's, p blocks each side of an alltoall),
    // valid until the call returns; `len` is at most the block and fits the slots.
    match coll {
        Collective::Gather => {
            let input = if in_place { recv.wrapping_add(root * block) as *const u8 } else { send as *const u8 };
            drive(rt, comm, |run, s| unsafe { steps::gather(run, s, root, input, recv, len) })?
        }
        Collective::Scatter => {
            let output = if in_place { send.wrapping_add(root * block) } else { recv };
            drive(rt, comm, |run, s| unsafe { steps::scatter(run, s, root, send, output, len) })?
        }
        _ => {
            let input = if in_place { recv as *const u8 } else { send as *const u8 };
            drive(rt, comm, |run, s| unsafe { steps::alltoall(run, s, input, recv, len) })?
        }
    }
    if len < block {
        return err(MPI_ERR_TRUNCATE, format!("{}: blocks of {block} bytes, more than the others' that chose the shared-memory algorithm (the ranks disagree on the counts)", coll.name()));
    }
    Ok(())
}

/// `MPI_Gather` (`gather`) or `MPI_Scatter`, with the same contiguous datatype and count on
/// both sides of the root (the other ranks' receive, or send, arguments are not looked at).
#[inline]
#[allow(clippy::too_many_arguments)]
pub(crate) fn try_rooted(
    rt: &mut Locked, gather: bool, sbuf: *const c_void, scount: c_int, stype: MPI_Datatype, rbuf: *mut c_void, rcount: c_int, rtype: MPI_Datatype,
    root: c_int, comm: MPI_Comm,
) -> Option<MpiResult<()>> {
    let area = &ready_area(rt, comm)?.area;
    let (ranks, me) = (area.ranks(), area.me());
    if root < 0 || root as usize >= ranks || in_place(sbuf) || in_place(rbuf) {
        return None;
    }
    let root = root as usize;
    // This rank's block: what it sends to a gather, receives from a scatter.
    let (buf, count, dt) = if gather { (sbuf, scount, stype) } else { (rbuf as *const c_void, rcount, rtype) };
    let size = contiguous(rt, dt)?;
    let bytes = fits(buf, count, size)?;
    if me == root {
        let all = if gather { rbuf as *const c_void } else { sbuf };
        if stype != rtype || scount != rcount || all.is_null() && bytes > 0 || std::ptr::eq(sbuf, rbuf) {
            return None;
        }
    }
    let coll = if gather { Collective::Gather } else { Collective::Scatter };
    if !take_call(rt, comm, coll, bytes) {
        return None;
    }
    let (input, output) = (sbuf as *const u8, rbuf as *mut u8);
    // SAFETY: MPI's contract: this rank's block holds `bytes`, which fit the slots; the
    // root's other buffer holds one block per rank (no other rank's is touched).
    Some(if gather {
        drive(rt, comm, |run, s| unsafe { steps::gather(run, s, root, input, output, bytes) })
    } else {
        drive(rt, comm, |run, s| unsafe { steps::scatter(run, s, root, input, output, bytes) })
    })
}

/// `MPI_Alltoall` with the same contiguous datatype and count on both sides.
#[inline]
#[allow(clippy::too_many_arguments)]
pub(crate) fn try_alltoall(rt: &mut Locked, sbuf: *const c_void, scount: c_int, stype: MPI_Datatype, rbuf: *mut c_void, rcount: c_int, rtype: MPI_Datatype, comm: MPI_Comm) -> Option<MpiResult<()>> {
    if stype != rtype || scount != rcount || in_place(sbuf) || rbuf.is_null() || std::ptr::eq(sbuf, rbuf) {
        return None;
    }
    let ranks = ready_area(rt, comm)?.area.ranks();
    let size = contiguous(rt, stype)?;
    let bytes = fits(sbuf, scount, size)?;
    // Every block must fit one slot with the others (the table says so too).
    if slot_volume(Collective::Alltoall, ranks, bytes) > SLOT_BYTES || !take_call(rt, comm, Collective::Alltoall, bytes) {
        return None;
    }
    let (input, output) = (sbuf as *const u8, rbuf as *mut u8);
    // SAFETY: MPI's contract: `sbuf` and `rbuf` hold one block of `bytes` per rank, distinct
    // buffers, p blocks fitting the slots.
    Some(drive(rt, comm, |run, s| unsafe { steps::alltoall(run, s, input, output, bytes) }))
}

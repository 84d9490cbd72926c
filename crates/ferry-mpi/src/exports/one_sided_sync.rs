//! One-sided synchronization (MPI-4.1 chapter 12.5): fence, the post/start/complete/wait
//! epochs, passive-target locks, and flush.

use std::os::raw::c_int;

use crate::consts::*;
use crate::error::out_arg;
use crate::exports::one_sided::{cold, win_call};
use crate::win::sync::*;

crate::mpi_export! { MPI_Win_fence, PMPI_Win_fence, (assert: c_int, win: MPI_Win) {
    win_call("MPI_Win_fence", win, move |rt| fence(rt, win, assert))
}}
crate::mpi_export! { MPI_Win_lock, PMPI_Win_lock, (lock_type: c_int, rank: c_int, assert: c_int, win: MPI_Win) {
    win_call("MPI_Win_lock", win, move |rt| lock(rt, win, lock_type, rank, assert))
}}
crate::mpi_export! { MPI_Win_unlock, PMPI_Win_unlock, (rank: c_int, win: MPI_Win) {
    win_call("MPI_Win_unlock", win, move |rt| unlock(rt, win, rank))
}}
crate::mpi_export! { MPI_Win_lock_all, PMPI_Win_lock_all, (assert: c_int, win: MPI_Win) {
    win_call("MPI_Win_lock_all", win, move |rt| lock_all(rt, win, assert))
}}
crate::mpi_export! { MPI_Win_unlock_all, PMPI_Win_unlock_all, (win: MPI_Win) {
    win_call("MPI_Win_unlock_all", win, move |rt| unlock_all(rt, win))
}}
crate::mpi_export! { MPI_Win_flush, PMPI_Win_flush, (rank: c_int, win: MPI_Win) {
    if crate::win::lean::with(win, |l| l.flush(rank)) == Some(true) {
        return MPI_SUCCESS;
    }
    cold(move || win_call("MPI_Win_flush", win, move |rt| flush(rt, win, Some(rank), false)))
}}
crate::mpi_export! { MPI_Win_flush_all, PMPI_Win_flush_all, (win: MPI_Win) {
    win_call("MPI_Win_flush_all", win, move |rt| flush(rt, win, None, false))
}}
crate::mpi_export! { MPI_Win_flush_local, PMPI_Win_flush_local, (rank: c_int, win: MPI_Win) {
    if crate::win::lean::with(win, |l| l.flush(rank)) == Some(true) {
        return MPI_SUCCESS;
    }
    cold(move || win_call("MPI_Win_flush_local", win, move |rt| flush(rt, win, Some(rank), true)))
}}
crate::mpi_export! { MPI_Win_flush_local_all, PMPI_Win_flush_local_all, (win: MPI_Win) {
    win_call("MPI_Win_flush_local_all", win, move |rt| flush(rt, win, None, true))
}}
crate::mpi_export! { MPI_Win_sync, PMPI_Win_sync, (win: MPI_Win) {
    win_call("MPI_Win_sync", win, move |rt| {
        rt.win(win)?;
        // The public and private copies are one memory (MPI_WIN_UNIFIED): order this
        // process's loads and stores, and let requests that arrived be applied.
        std::sync::atomic::fence(std::sync::atomic::Ordering::SeqCst);
        rt.progress_once()
    })
}}
crate::mpi_export! { MPI_Win_post, PMPI_Win_post, (group: MPI_Group, assert: c_int, win: MPI_Win) {
    win_call("MPI_Win_post", win, move |rt| post(rt, win, group, assert))
}}
crate::mpi_export! { MPI_Win_start, PMPI_Win_start, (group: MPI_Group, assert: c_int, win: MPI_Win) {
    win_call("MPI_Win_start", win, move |rt| start(rt, win, group, assert))
}}
crate::mpi_export! { MPI_Win_complete, PMPI_Win_complete, (win: MPI_Win) {
    win_call("MPI_Win_complete", win, move |rt| complete(rt, win))
}}
crate::mpi_export! { MPI_Win_wait, PMPI_Win_wait, (win: MPI_Win) {
    win_call("MPI_Win_wait", win, move |rt| wait(rt, win, true).map(|_| ()))
}}
crate::mpi_export! { MPI_Win_test, PMPI_Win_test, (win: MPI_Win, flag: *mut c_int) {
    win_call("MPI_Win_test", win, move |rt| {
        let f = out_arg(flag, "flag")?;
        *f = wait(rt, win, false)? as c_int;
        Ok(())
    })
}}

//! Fault-tolerant MPI's state (docs/fault-tolerance.md): whether recovery is enabled, the
//! processes known to have failed, and per communicator what the program acknowledged and
//! how many agreements it made. The waits of `threads.rs` call [`Runtime::note_failures`]
//! when the engine reports a failure or a peer's revocation.

use ferry_core::fastmap::FastMap;

use super::Runtime;
use crate::error::{MpiError, MpiResult};

pub use crate::error::{recovery, set_recovery};

/// The failures this process knows of, and each communicator's part (by context id, which
/// no other communicator of this process ever takes).
#[derive(Default)]
pub struct FaultState {
    /// World ranks, in the order this process learned of their failure.
    pub failed: Vec<u32>,
    pub comms: FastMap<u32, FtComm>,
}

/// One communicator's fault-tolerance state.
#[derive(Default)]
pub struct FtComm {
    /// World ranks whose failure the program acknowledged on this communicator.
    pub acked: Vec<u32>,
    /// Agreements begun on this communicator (every member counts the same).
    pub agree_seq: u32,
    /// Messages that arrived for a later agreement: (its number, communicator rank, message).
    pub early: Vec<(u32, usize, ferry_core::engine::agreement::Msg)>,
}

impl Runtime {
    /// The fault-tolerance state of the communicator whose context is `ctx`.
    pub fn ft_comm(&mut self, ctx: u32) -> &mut FtComm {
        self.fault.comms.entry(ctx).or_default()
    }

    /// Take what the engine found since the last look: peers lost, and contexts a peer's
    /// notice revoked. A failed peer fails the receives from any source posted on every
    /// communicator it belongs to (MPIX_ERR_PROC_FAILED_PENDING); a revocation is passed on
    /// to the communicator's other members, so that it reaches them even when the process
    /// that revoked died before its notices all left.
    pub fn note_failures(&mut self) {
        let lost = self.engine.take_lost_peers();
        for w in lost {
            if self.fault.failed.contains(&w) {
                continue;
            }
            ferry_core::debug!("mpi", "rank {w} failed");
            self.fault.failed.push(w);
            let ctxs: Vec<u32> = self.comms.iter().filter(|(_, c)| c.group.contains(&w) || c.remote().is_some_and(|r| r.contains(&w))).map(|(_, c)| c.ctx).collect();
            for ctx in ctxs {
                self.engine.fail_any_source(ctx, w);
                self.engine.fail_any_source(ctx + 1, w);
            }
        }
        for c in self.engine.take_revoked_by_peers() {
            let found = self.comms.iter().find(|(_, x)| x.ctx == c || x.ctx + 1 == c).map(|(_, x)| (x.ctx, x.group.iter().chain(x.remote().into_iter().flat_map(|r| r.iter())).copied().collect::<Vec<u32>>()));
            if let Some((ctx, members)) = found {
                self.engine.revoke(ctx, &members);
                self.engine.revoke(ctx + 1, &members);
            }
        }
    }

    /// A receive from any source on `comm` may start only while every failed member's
    /// failure is acknowledged (MPIX_Comm_failure_ack): else it fails at once with `class`
    /// (MPIX_ERR_PROC_FAILED_PENDING, or MPIX_ERR_PROC_FAILED for a blocking receive).
    pub fn any_source_allowed(&mut self, comm: i32, class: i32) -> MpiResult<()> {
        if self.engine.has_lost_peers() {
            self.note_failures();
        }
        if self.fault.failed.is_empty() {
            return Ok(());
        }
        let c = self.comm(comm)?;
        let acked = self.fault.comms.get(&c.ctx).map_or(&[][..], |f| &f.acked[..]);
        match c.peers().iter().find(|w| self.fault.failed.contains(w) && !acked.contains(w)) {
            Some(w) => Err(MpiError::new(class, format!("rank {w} of the world failed and the failure is not acknowledged (MPIX_Comm_failure_ack): a receive from any source cannot tell whether its message will come")).on_comm(comm)),
            None => Ok(()),
        }
    }
}

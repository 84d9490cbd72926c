//! Broadcast: the root's `Recv` buffer reaches every rank's `Recv` buffer.

pub mod binomial;
pub mod hier;
pub mod shm;
pub mod pipelined_chain;
pub mod scatter_allgather;
pub mod status_binomial;

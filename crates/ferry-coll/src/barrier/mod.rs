//! Barrier: no rank leaves before every rank has entered. No buffers.

pub mod dissemination;
pub mod shm;

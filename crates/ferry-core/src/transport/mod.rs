//! Transports move frames between two ranks and report readiness; they know nothing of MPI.

pub mod business_card;
pub mod handshake;
pub mod shm;
pub mod tcp;

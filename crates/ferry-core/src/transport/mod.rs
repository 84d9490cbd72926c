//! Transports move frames between two ranks and report readiness; they know nothing of MPI.

//! Scan (inclusive prefix reduction): rank r's `Recv` gets x_0 (op) ... (op) x_r.

pub mod recursive_doubling;

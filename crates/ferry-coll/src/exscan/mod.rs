//! Exscan (exclusive prefix reduction): rank r > 0 gets x_0 (op) ... (op) x_{r-1}; rank 0's
//! `Recv` is left untouched.

pub mod recursive_doubling;

//! Reduce: the root's `Recv` gets x_0 (op) x_1 (op) ... (op) x_{p-1}, element-wise.

pub mod shm;
pub mod binomial;
pub mod rabenseifner;

//! Reduce-scatter(_block): rank i's `Recv` gets block i (at `displs[i]` of every input) of
//! x_0 (op) ... (op) x_{p-1}. Reduce_scatter_block is the case of equal blocks.

pub mod pairwise;
pub mod reduce_then_scatter;

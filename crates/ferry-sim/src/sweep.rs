//! Algorithms of one collective compared over process counts and block sizes
//! (`ferry sim coll`): one point of the comparison.

use crate::engine::Time;
use serde::Serialize;

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Point {
    pub algorithm: &'static str,
    pub procs: usize,
    pub bytes: usize,
    /// Simulated time of the call, microseconds.
    pub time: Time,
    pub messages: u64,
}

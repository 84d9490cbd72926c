//! Ferry's performance models and the data they are fitted to. [`params`] holds LogGP and
//! nLogP parameters and their file format (written by `ferry fit`, read by `ferry sim`);
//! [`results`] is the benchmark results schema (written by `ferry bench`, read by `ferry
//! fit`). Pure code: no I/O beyond strings, no clocks.

pub mod params;
pub mod results;

pub use params::{LogGp, ModelParams, NLogP, ParamsError};
pub use results::{ResultsError, Row};

//! Ferry's performance models and the data they are fitted to. [`params`] holds LogGP and
//! nLogP parameters and their file format (written by `ferry fit`, read by `ferry sim`);
//! [`results`] is the benchmark results schema (written by `ferry bench`, read by `ferry
//! fit`); [`fit`] fits Hockney, LogGP and nLogP to those results and predicts the S2 Jacobi
//! gain. Pure code: no I/O beyond strings, no clocks.

pub mod fit;
pub mod params;
pub mod results;

pub use fit::FitError;
pub use params::{Hockney, LogGp, ModelParams, NLogP, ParamsError};
pub use results::{ResultsError, Row};

//! Ferry's wire formats: one fixed little-endian frame header shared by every transport
//! (and, later, the relay), and in [`pmi`] the PMI-1 line protocol between the ranks and
//! their launcher. Pure code: bytes in, typed header, message or typed error out.
//!
//! The frame header's layout (40 bytes, all little-endian):
//!
//! | offset | size | field                                   |
//! |-------:|-----:|-----------------------------------------|
//! |      0 |    4 | magic `b"FRY\x01"`                      |
//! |      4 |    1 | version (currently 1)                   |
//! |      5 |    1 | kind ([`Kind`])                         |
//! |      6 |    2 | flags ([`flags`])                       |
//! |      8 |    4 | source rank (world)                     |
//! |     12 |    4 | destination rank (world)                |
//! |     16 |    4 | communicator context id                 |
//! |     20 |    4 | tag (signed)                            |
//! |     24 |    8 | sequence number                         |
//! |     32 |    8 | payload length in bytes                 |

mod frame;
pub mod launch;
pub mod pmi;

pub use frame::{flags, Header, Kind, WireError, Limits, HEADER_LEN, MAGIC, MAX_PAYLOAD, VERSION};

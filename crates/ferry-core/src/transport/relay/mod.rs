//! Relayed connections through a proxy on a private cluster's front node (SEEDS.md S5).
//!
//! A rank that must reach a private rank of another cluster connects to the proxy on that
//! rank's front node and asks for it; the proxy checks that the request is signed with the
//! job's relay key, opens the second leg to the registered member, answers "established" and
//! relays bytes both ways. The two ranks then run their ordinary end-to-end handshake through
//! it. The launcher registers the job and its members over an authenticated control
//! connection; the registration lives as long as that connection.
//!
//! Pure (no socket, clock, thread or log): `wire` (frames), `handshake` (both handshakes),
//! `policy` (which addresses a proxy may connect to), `registry` (jobs, members, quotas,
//! decisions). Drivers: `control` (the launcher's blocking client), `site_key` (the key
//! file), `proxy` (the proxy's event loop).

pub mod control;
pub mod handshake;
pub mod policy;
pub mod proxy;
pub mod registry;
pub mod site_key;
pub mod wire;

pub use control::ControlClient;
pub use handshake::{relay_key, AcceptStep, ClientStep, RelayAcceptor, RelayClient};
pub use site_key::{read_site_key, write_site_key, MIN_SITE_KEY_LEN};
pub use wire::{ControlRefusal, DenyReason, JobId, WireError};

/// Why a relay handshake, a control command or a key file failed.
#[derive(Debug)]
pub enum RelayError {
    /// Bytes that are not relay frames.
    Wire(WireError),
    /// A valid frame out of turn.
    Unexpected { expected: &'static str },
    /// The peer sent more than the frame it may send before it hears back.
    TrailingBytes,
    /// The handshake is over (or failed); it takes no more bytes.
    Finished,
    /// The proxy refused the relayed connection.
    Denied(DenyReason),
    /// The proxy refused a control command (or the site key).
    Refused(ControlRefusal),
    /// The proxy could not prove that it holds the site key.
    BadProxyProof,
    /// The connection closed during the exchange.
    Closed,
    /// The proxy did not answer in time.
    Timeout,
    Io(std::io::Error),
    /// The site key file is unusable.
    SiteKey(String),
}

impl std::fmt::Display for RelayError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RelayError::Wire(e) => write!(f, "{e}"),
            RelayError::Unexpected { expected } => write!(f, "unexpected relay frame (expected {expected})"),
            RelayError::TrailingBytes => write!(f, "the proxy sent bytes out of turn"),
            RelayError::Finished => write!(f, "the relay handshake is over"),
            RelayError::Denied(r) => write!(f, "the proxy refused the relayed connection: {r}"),
            RelayError::Refused(r) => write!(f, "the proxy refused: {r}"),
            RelayError::BadProxyProof => write!(f, "the proxy does not hold the site key"),
            RelayError::Closed => write!(f, "the proxy closed the connection"),
            RelayError::Timeout => write!(f, "the proxy did not answer in time"),
            RelayError::Io(e) => write!(f, "{e}"),
            RelayError::SiteKey(s) => write!(f, "site key: {s}"),
        }
    }
}

impl std::error::Error for RelayError {}

impl From<WireError> for RelayError {
    fn from(e: WireError) -> Self {
        RelayError::Wire(e)
    }
}

impl From<std::io::Error> for RelayError {
    fn from(e: std::io::Error) -> Self {
        match e.kind() {
            std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut => RelayError::Timeout,
            std::io::ErrorKind::UnexpectedEof => RelayError::Closed,
            _ => RelayError::Io(e),
        }
    }
}

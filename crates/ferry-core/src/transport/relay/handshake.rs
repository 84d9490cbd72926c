//! The relay handshakes, sans-IO: a rank asks a proxy for a relayed connection, or a launcher
//! opens a control connection. Bytes go in, bytes to send and decisions come out; nonces come
//! from the caller, so tests are deterministic.
//!
//! ```text
//! rank (client)                                    proxy
//!                                          <-   Hello    nonce_p
//!   Request  job from to nonce_c,
//!            mac = H(R, "relay"|job|from|to|nonce_p|nonce_c)  ->
//!                                          <-   Established | Denied(reason)
//!   ... relayed bytes both ways (the ranks' own end-to-end handshake first) ...
//!
//! launcher (control)                               proxy
//!                                          <-   Hello    nonce_p
//!   ControlAuth nonce_c, H(S, "control client"|nonce_p|nonce_c) ->
//!                                          <-   ControlWelcome H(S, "control proxy"|nonce_p|nonce_c)
//!                                               (or Ack(BadProof) and close)
//!   RegisterJob job R size                 ->
//!                                          <-   Ack
//!   AddMember job rank addr                ->   (once per member)
//!                                          <-   Ack
//! ```
//! `R` is the job's relay key ([`relay_key`]): the proxy learns only it, never the job secret,
//! so it cannot pass the end-to-end handshake as a rank. `S` is the site key. The proxy's
//! nonce in every proof makes a recorded request worthless on another connection.

use hmac::{Hmac, Mac};
use sha2::Sha256;

use super::wire::{DenyReason, JobId, Msg, Request, WireError, HEADER_LEN, KEY_LEN, MAC_LEN, MAX_PAYLOAD, NONCE_LEN};
use super::RelayError;

type HmacSha256 = Hmac<Sha256>;

fn hmac(key: &[u8]) -> HmacSha256 {
    HmacSha256::new_from_slice(key).expect("HMAC accepts keys of any length")
}

/// The key a proxy checks relay requests with: HMAC-SHA256(job secret, "ferry relay key v1").
pub fn relay_key(job_secret: &[u8]) -> [u8; KEY_LEN] {
    let mut m = hmac(job_secret);
    m.update(b"ferry relay key v1");
    m.finalize().into_bytes().into()
}

fn request_hmac(key: &[u8; KEY_LEN], job: &JobId, from: u32, to: u32, proxy_nonce: &[u8; NONCE_LEN], client_nonce: &[u8; NONCE_LEN]) -> HmacSha256 {
    let mut m = hmac(key);
    m.update(b"relay");
    m.update(job);
    m.update(&from.to_le_bytes());
    m.update(&to.to_le_bytes());
    m.update(proxy_nonce);
    m.update(client_nonce);
    m
}

/// Whether `req` was signed with `key` on the connection that was greeted with `proxy_nonce`
/// (compared in constant time).
pub fn verify_request(key: &[u8; KEY_LEN], req: &Request, proxy_nonce: &[u8; NONCE_LEN]) -> bool {
    request_hmac(key, &req.job, req.from, req.to, proxy_nonce, &req.client_nonce).verify_slice(&req.mac).is_ok()
}

fn control_hmac(site_key: &[u8], label: &[u8], proxy_nonce: &[u8; NONCE_LEN], client_nonce: &[u8; NONCE_LEN]) -> HmacSha256 {
    let mut m = hmac(site_key);
    m.update(label);
    m.update(proxy_nonce);
    m.update(client_nonce);
    m
}

/// The launcher's proof of the site key.
pub fn control_client_proof(site_key: &[u8], proxy_nonce: &[u8; NONCE_LEN], client_nonce: &[u8; NONCE_LEN]) -> [u8; MAC_LEN] {
    control_hmac(site_key, b"control client", proxy_nonce, client_nonce).finalize().into_bytes().into()
}

/// The proxy's proof of the site key (another label, so a launcher's proof cannot be
/// reflected back to it).
pub fn control_proxy_proof(site_key: &[u8], proxy_nonce: &[u8; NONCE_LEN], client_nonce: &[u8; NONCE_LEN]) -> [u8; MAC_LEN] {
    control_hmac(site_key, b"control proxy", proxy_nonce, client_nonce).finalize().into_bytes().into()
}

pub fn verify_control_client(site_key: &[u8], proxy_nonce: &[u8; NONCE_LEN], client_nonce: &[u8; NONCE_LEN], mac: &[u8; MAC_LEN]) -> bool {
    control_hmac(site_key, b"control client", proxy_nonce, client_nonce).verify_slice(mac).is_ok()
}

pub fn verify_control_proxy(site_key: &[u8], proxy_nonce: &[u8; NONCE_LEN], client_nonce: &[u8; NONCE_LEN], mac: &[u8; MAC_LEN]) -> bool {
    control_hmac(site_key, b"control proxy", proxy_nonce, client_nonce).verify_slice(mac).is_ok()
}

/// Bytes of a frame that has not arrived whole yet. Never holds more than one frame's
/// worth, however much the peer sends at once.
#[derive(Debug, Default)]
pub struct FrameBuf {
    pending: Vec<u8>,
}

impl FrameBuf {
    /// Take the next frame from what was kept and `input`: `Ok(None)` when all of `input` was
    /// kept and more is needed, else the frame and how many bytes of `input` it took.
    pub fn take(&mut self, input: &[u8]) -> Result<Option<(Msg, usize)>, WireError> {
        let prev = self.pending.len();
        let room = HEADER_LEN + MAX_PAYLOAD - prev;
        self.pending.extend_from_slice(&input[..input.len().min(room)]);
        match Msg::decode(&self.pending)? {
            Some((m, n)) => {
                self.pending.clear();
                Ok(Some((m, n - prev)))
            }
            // A full buffer always decodes to a frame or an error, so all of `input` is kept.
            None => Ok(None),
        }
    }
}

/// What a relay client does next.
#[derive(Debug, PartialEq, Eq)]
pub enum ClientStep {
    /// Read more from the proxy.
    NeedMore,
    /// Write these bytes to the proxy, then read more.
    Send(Vec<u8>),
    /// The relayed connection is open. `consumed`: how many bytes of the last input belonged
    /// to the handshake; the rest are already the relayed stream.
    Established { consumed: usize },
}

#[derive(Debug, PartialEq, Eq)]
enum ClientState {
    AwaitHello,
    AwaitVerdict,
    Done,
}

/// A rank's side of the relay handshake.
#[derive(Debug)]
pub struct RelayClient {
    job: JobId,
    key: [u8; KEY_LEN],
    from: u32,
    to: u32,
    nonce: [u8; NONCE_LEN],
    state: ClientState,
    frames: FrameBuf,
}

impl RelayClient {
    /// Rank `from` of `job` asks for rank `to`; `key` is the job's [`relay_key`].
    pub fn new(job: JobId, key: [u8; KEY_LEN], from: u32, to: u32, client_nonce: [u8; NONCE_LEN]) -> RelayClient {
        RelayClient { job, key, from, to, nonce: client_nonce, state: ClientState::AwaitHello, frames: FrameBuf::default() }
    }

    /// Feed the bytes read from the proxy.
    pub fn on_bytes(&mut self, buf: &[u8]) -> Result<ClientStep, RelayError> {
        let r = self.step(buf);
        if r.is_err() {
            self.state = ClientState::Done;
        }
        r
    }

    fn step(&mut self, buf: &[u8]) -> Result<ClientStep, RelayError> {
        if self.state == ClientState::Done {
            return Err(RelayError::Finished);
        }
        let Some((msg, used)) = self.frames.take(buf)? else { return Ok(ClientStep::NeedMore) };
        match (&self.state, msg) {
            (_, Msg::Denied { reason }) => Err(RelayError::Denied(DenyReason::from_code(reason))),
            (ClientState::AwaitHello, Msg::Hello { nonce }) => {
                // The proxy says nothing more before it has our request.
                if used < buf.len() {
                    return Err(RelayError::TrailingBytes);
                }
                let mac = request_hmac(&self.key, &self.job, self.from, self.to, &nonce, &self.nonce).finalize().into_bytes().into();
                self.state = ClientState::AwaitVerdict;
                Ok(ClientStep::Send(Msg::Request(Request { job: self.job, from: self.from, to: self.to, client_nonce: self.nonce, mac }).encode()))
            }
            (ClientState::AwaitVerdict, Msg::Established) => {
                self.state = ClientState::Done;
                Ok(ClientStep::Established { consumed: used })
            }
            (ClientState::AwaitHello, _) => Err(RelayError::Unexpected { expected: "Hello" }),
            (_, _) => Err(RelayError::Unexpected { expected: "Established or Denied" }),
        }
    }
}

/// What the first frame on a connection to the proxy asks for.
#[derive(Debug, PartialEq, Eq)]
pub enum AcceptStep {
    NeedMore,
    /// A relayed connection, not verified yet (the proxy looks up the job's key).
    Relay { request: Request, consumed: usize },
    /// A control connection, not verified yet.
    Control { nonce: [u8; NONCE_LEN], mac: [u8; MAC_LEN], consumed: usize },
}

/// The proxy's side of a new connection, up to the client's first frame.
#[derive(Debug)]
pub struct RelayAcceptor {
    nonce: [u8; NONCE_LEN],
    frames: FrameBuf,
    done: bool,
}

impl RelayAcceptor {
    /// A new connection; send the returned Hello at once.
    pub fn new(proxy_nonce: [u8; NONCE_LEN]) -> (RelayAcceptor, Vec<u8>) {
        (RelayAcceptor { nonce: proxy_nonce, frames: FrameBuf::default(), done: false }, Msg::Hello { nonce: proxy_nonce }.encode())
    }

    pub fn nonce(&self) -> &[u8; NONCE_LEN] {
        &self.nonce
    }

    /// Feed the bytes read from the client.
    pub fn on_bytes(&mut self, buf: &[u8]) -> Result<AcceptStep, RelayError> {
        if self.done {
            return Err(RelayError::Finished);
        }
        let r = self.frames.take(buf);
        let Some((msg, consumed)) = r.inspect_err(|_| self.done = true)? else { return Ok(AcceptStep::NeedMore) };
        self.done = true;
        match msg {
            Msg::Request(request) => Ok(AcceptStep::Relay { request, consumed }),
            Msg::ControlAuth { nonce, mac } => Ok(AcceptStep::Control { nonce, mac, consumed }),
            _ => Err(RelayError::Unexpected { expected: "Request or ControlAuth" }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const JOB: JobId = [7; 16];

    fn key() -> [u8; 32] {
        relay_key(b"job secret")
    }

    /// Run a client against an acceptor; returns the request as the proxy saw it.
    fn request(client: &mut RelayClient, acc_nonce: [u8; 32]) -> (RelayAcceptor, Request) {
        let (mut acc, hello) = RelayAcceptor::new(acc_nonce);
        let ClientStep::Send(req) = client.on_bytes(&hello).unwrap() else { panic!("no request") };
        let AcceptStep::Relay { request, consumed } = acc.on_bytes(&req).unwrap() else { panic!("not a relay request") };
        assert_eq!(consumed, req.len());
        (acc, request)
    }

    #[test]
    fn relay_key_is_not_the_secret_and_depends_on_it() {
        assert_ne!(&key()[..10], b"job secret");
        assert_ne!(key(), relay_key(b"job secreT"));
        assert_eq!(key(), relay_key(b"job secret"));
    }

    #[test]
    fn a_signed_request_verifies_only_with_its_key_and_nonce() {
        let mut c = RelayClient::new(JOB, key(), 2, 5, [1; 32]);
        let (acc, req) = request(&mut c, [9; 32]);
        assert_eq!((req.job, req.from, req.to), (JOB, 2, 5));
        assert!(verify_request(&key(), &req, acc.nonce()));
        assert!(!verify_request(&relay_key(b"other"), &req, acc.nonce()));
        // Replayed on another connection: another proxy nonce.
        assert!(!verify_request(&key(), &req, &[10; 32]));
        // Any field changed in transit breaks it.
        let mut r = req.clone();
        r.to = 6;
        assert!(!verify_request(&key(), &r, acc.nonce()));
        let mut r = req.clone();
        r.from = 3;
        assert!(!verify_request(&key(), &r, acc.nonce()));
        let mut r = req;
        r.job[0] ^= 1;
        assert!(!verify_request(&key(), &r, acc.nonce()));
    }

    #[test]
    fn established_reports_where_the_stream_begins() {
        let mut c = RelayClient::new(JOB, key(), 2, 5, [1; 32]);
        request(&mut c, [9; 32]);
        let mut b = Msg::Established.encode();
        b.extend_from_slice(b"stream");
        // Byte by byte: the last header byte completes it.
        let mut c2 = RelayClient::new(JOB, key(), 2, 5, [1; 32]);
        request(&mut c2, [9; 32]);
        for i in 0..HEADER_LEN - 1 {
            assert_eq!(c2.on_bytes(&b[i..i + 1]).unwrap(), ClientStep::NeedMore);
        }
        assert_eq!(c2.on_bytes(&b[HEADER_LEN - 1..]).unwrap(), ClientStep::Established { consumed: 1 });
        assert_eq!(c.on_bytes(&b).unwrap(), ClientStep::Established { consumed: HEADER_LEN });
        assert!(matches!(c.on_bytes(b"more"), Err(RelayError::Finished)));
    }

    #[test]
    fn a_denial_says_why_in_words() {
        let mut c = RelayClient::new(JOB, key(), 2, 5, [1; 32]);
        request(&mut c, [9; 32]);
        let e = c.on_bytes(&Msg::Denied { reason: DenyReason::TargetNotRegistered.code() }.encode()).unwrap_err();
        assert!(matches!(e, RelayError::Denied(DenyReason::TargetNotRegistered)));
        assert!(e.to_string().contains("target rank is not registered"), "{e}");
    }

    #[test]
    fn client_refuses_garbage_and_out_of_order_frames() {
        let mut c = RelayClient::new(JOB, key(), 2, 5, [1; 32]);
        assert!(matches!(c.on_bytes(b"SSH-2.0-OpenSSH"), Err(RelayError::Wire(WireError::BadMagic))));
        let mut c = RelayClient::new(JOB, key(), 2, 5, [1; 32]);
        assert!(matches!(c.on_bytes(&Msg::Established.encode()), Err(RelayError::Unexpected { .. })));
        let mut c = RelayClient::new(JOB, key(), 2, 5, [1; 32]);
        let mut hello = Msg::Hello { nonce: [0; 32] }.encode();
        hello.push(0);
        assert!(matches!(c.on_bytes(&hello), Err(RelayError::TrailingBytes)));
    }

    #[test]
    fn acceptor_tells_control_from_relay_and_refuses_the_rest() {
        let (mut acc, _) = RelayAcceptor::new([3; 32]);
        let proof = control_client_proof(b"site", &[3; 32], &[4; 32]);
        let step = acc.on_bytes(&Msg::ControlAuth { nonce: [4; 32], mac: proof }.encode()).unwrap();
        let AcceptStep::Control { nonce, mac, .. } = step else { panic!("{step:?}") };
        assert!(verify_control_client(b"site", acc.nonce(), &nonce, &mac));
        assert!(!verify_control_client(b"other", acc.nonce(), &nonce, &mac));
        // The proxy's proof differs from the client's, and each verifies only as itself.
        let p = control_proxy_proof(b"site", &[3; 32], &[4; 32]);
        assert_ne!(p, proof);
        assert!(verify_control_proxy(b"site", &[3; 32], &[4; 32], &p));
        assert!(!verify_control_proxy(b"site", &[3; 32], &[4; 32], &proof));
        let (mut acc, _) = RelayAcceptor::new([3; 32]);
        assert!(matches!(acc.on_bytes(&Msg::Established.encode()), Err(RelayError::Unexpected { .. })));
        let (mut acc, _) = RelayAcceptor::new([3; 32]);
        assert!(matches!(acc.on_bytes(&[0xff; 3]), Err(RelayError::Wire(_))));
        assert!(matches!(acc.on_bytes(&Msg::Established.encode()), Err(RelayError::Finished)));
    }

    proptest! {
        /// Whatever arrives, in whatever pieces, the acceptor never reports more consumed than
        /// it was given, and never a relay request whose MAC verifies without the key.
        #[test]
        fn acceptor_survives_any_bytes(chunks in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..200), 0..8)) {
            let (mut acc, _) = RelayAcceptor::new([3; 32]);
            for c in &chunks {
                match acc.on_bytes(c) {
                    Ok(AcceptStep::NeedMore) => {}
                    Ok(AcceptStep::Relay { request, consumed }) => {
                        prop_assert!(consumed <= c.len());
                        prop_assert!(!verify_request(&key(), &request, acc.nonce()));
                        break;
                    }
                    Ok(AcceptStep::Control { consumed, .. }) => {
                        prop_assert!(consumed <= c.len());
                        break;
                    }
                    Err(_) => break,
                }
            }
        }

        /// Split anywhere, a handshake yields the same request and the same stream start.
        #[test]
        fn any_split_gives_the_same_result(cut in 0usize..100, extra in proptest::collection::vec(any::<u8>(), 0..20)) {
            let mut c = RelayClient::new(JOB, key(), 1, 0, [5; 32]);
            let (mut acc, hello) = RelayAcceptor::new([6; 32]);
            let ClientStep::Send(req) = c.on_bytes(&hello).unwrap() else { panic!() };
            let cut = cut.min(req.len());
            let first = acc.on_bytes(&req[..cut]).unwrap();
            let step = if cut == req.len() { first } else { prop_assert_eq!(first, AcceptStep::NeedMore); acc.on_bytes(&req[cut..]).unwrap() };
            let AcceptStep::Relay { request, .. } = step else { panic!() };
            prop_assert!(verify_request(&key(), &request, acc.nonce()));
            let mut est = Msg::Established.encode();
            est.extend_from_slice(&extra);
            let cut = cut.min(est.len() - 1);
            let first = c.on_bytes(&est[..cut]).unwrap();
            if cut >= HEADER_LEN {
                prop_assert_eq!(first, ClientStep::Established { consumed: HEADER_LEN });
            } else {
                prop_assert_eq!(first, ClientStep::NeedMore);
                prop_assert_eq!(c.on_bytes(&est[cut..]).unwrap(), ClientStep::Established { consumed: HEADER_LEN - cut });
            }
        }
    }
}

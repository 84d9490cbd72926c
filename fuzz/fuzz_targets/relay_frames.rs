//! Arbitrary bytes into the relay's frame codec and the proxy's first-contact handshake: they
//! must refuse without panicking, never read past what they were given, re-encode what they
//! accept byte for byte, and never take a relay request as signed without the job's key.
#![no_main]
use ferry_core::transport::relay::handshake::{verify_request, AcceptStep, RelayAcceptor};
use ferry_core::transport::relay::wire::Msg;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(Some((m, n))) = Msg::decode(data) {
        assert!(n <= data.len());
        assert_eq!(m.encode(), &data[..n]);
    }
    // The same bytes in pieces of the sizes the first byte picks.
    let step = 1 + data.first().copied().unwrap_or(0) as usize % 97;
    let (mut acc, _) = RelayAcceptor::new([3; 32]);
    for chunk in data.chunks(step) {
        match acc.on_bytes(chunk) {
            Ok(AcceptStep::NeedMore) => {}
            Ok(AcceptStep::Relay { request, consumed }) => {
                assert!(consumed <= chunk.len());
                assert!(!verify_request(&[0x5a; 32], &request, acc.nonce()), "signed without the key");
                return;
            }
            Ok(AcceptStep::Control { consumed, .. }) => {
                assert!(consumed <= chunk.len());
                return;
            }
            Err(_) => return,
        }
    }
});

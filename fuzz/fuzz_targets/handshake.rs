//! Arbitrary frames into an acceptor's handshake: it must refuse them without panicking and
//! never report a peer authenticated without the secret.
#![no_main]
use ferry_core::transport::handshake::{Acceptor, AcceptorStep};
use ferry_wire::{Header, Limits, HEADER_LEN};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut acc = Acceptor::new(1, [3; 32]);
    let mut rest = data;
    while rest.len() >= HEADER_LEN {
        let Ok(h) = Header::decode(rest, &Limits::new(4)) else { return };
        rest = &rest[HEADER_LEN..];
        let n = (h.len as usize).min(rest.len());
        let (payload, tail) = rest.split_at(n);
        rest = tail;
        match acc.on_frame(b"secret the fuzzer does not know", &h, payload) {
            Ok(AcceptorStep::Authenticated { .. }) => panic!("authenticated without the secret"),
            Ok(AcceptorStep::Send(_)) => {}
            Err(_) => return,
        }
    }
});

//! Arbitrary bytes as a peer's one-sided request (`win/codec.rs`), decoded and applied to a
//! 64-byte window as its target would: refused or applied, never a panic and never a byte
//! touched outside the window (the address sanitizer guards the bytes around it); what
//! decodes encodes back to the same bytes. The first byte picks the window: even, one
//! addressed from its base; odd, a dynamic one (the request's offset counts from the
//! attached memory's address).
#![no_main]
use libfuzzer_sys::fuzz_target;
use mpi::fuzzing::{apply_to, Header};

fuzz_target!(|data: &[u8]| {
    let Some((&mode, m)) = data.split_first() else { return };
    let mut mem = vec![0u8; 64];
    let dynamic = mode & 1 == 1;
    let mut request = m.to_vec();
    if let Ok((mut h, payload)) = Header::decode(m) {
        assert_eq!(h.encode(payload), m, "a request decoded from bytes encodes back to them");
        let span = h.span();
        assert!(h.len == 0 || span.start < span.end, "{h:?} spans {span:?}");
        if dynamic {
            h.offset = h.offset.wrapping_add(mem.as_ptr() as u64);
            request = h.encode(payload);
        }
    }
    if let Ok(answer) = apply_to(&mut mem, dynamic, &request) {
        assert!(answer.len() <= request.len() * 4 + 64, "an answer of {} bytes", answer.len());
    }
});

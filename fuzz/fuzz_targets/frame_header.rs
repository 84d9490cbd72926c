//! Arbitrary bytes into the frame decoder: no panic, and whatever decodes re-encodes to the
//! same bytes.
#![no_main]
use ferry_wire::{Header, Limits, HEADER_LEN};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let world = data.first().map_or(1, |b| *b as u32 + 1);
    if let Ok(h) = Header::decode(data.get(1..).unwrap_or(&[]), &Limits::new(world)) {
        assert_eq!(&h.encode()[..], &data[1..1 + HEADER_LEN]);
    }
});

//! Arbitrary bytes as a peer's message of the fault-tolerant agreement
//! (`engine/agreement/codec.rs`): refused or decoded, never a panic; what decodes encodes to
//! bytes that decode to the same message. The first byte gives the number of participants.
#![no_main]
use ferry_core::engine::agreement::{decode, encode};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&n, m)) = data.split_first() else { return };
    let n = usize::from(n).max(1);
    if let Some((seq, msg)) = decode(m, n) {
        let again = encode(seq, &msg);
        assert_eq!(decode(&again, n), Some((seq, msg)), "a decoded message encodes to bytes that decode to it");
    }
});

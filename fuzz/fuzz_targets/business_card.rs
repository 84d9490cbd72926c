//! Arbitrary strings as business cards (they come from other processes through PMI).
#![no_main]
use ferry_core::transport::business_card::BusinessCard;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(s) = std::str::from_utf8(data) {
        if let Ok(c) = BusinessCard::decode(s) {
            assert_eq!(BusinessCard::decode(&c.encode()), Ok(c));
        }
    }
});

//! Arbitrary bytes as PMI-1 traffic: the line parsers and the launcher's PMI server must
//! answer or refuse, never panic.
#![no_main]
use ferry_core::bootstrap::{Command, PmiServer, Response};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = Command::parse(data);
    let _ = Response::parse(data);
    let mut server = PmiServer::new(3, "kvs_fuzz", &"ab".repeat(32)).expect("valid server parameters");
    let rank = data.first().map_or(0, |b| (*b % 3) as u32);
    let _ = server.receive(rank, data);
    let _ = server.rank_gone(rank);
});

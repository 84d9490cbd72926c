//! Arbitrary bytes as PMI-1 traffic: the line parsers, the spawn request a rank hands the
//! launcher and the launcher's PMI server must answer or refuse, never panic; a spawn request
//! that decodes encodes to one that decodes to the same.
#![no_main]
use ferry_core::bootstrap::{Command, PmiServer, Response};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = Command::parse(data);
    let _ = Response::parse(data);
    if let Ok(r) = ferry_wire::pmi::SpawnRequest::decode(&String::from_utf8_lossy(data)) {
        assert_eq!(ferry_wire::pmi::SpawnRequest::decode(&r.encode()).ok(), Some(r), "a decoded spawn request encodes to itself");
    }
    let mut server = PmiServer::new(3, "kvs_fuzz", &"ab".repeat(32)).expect("valid server parameters");
    let rank = data.first().map_or(0, |b| (*b % 3) as u32);
    let _ = server.receive(rank, data);
    let _ = server.rank_gone(rank);
});

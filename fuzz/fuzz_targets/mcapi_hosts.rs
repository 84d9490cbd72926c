//! Arbitrary text as an MCAPI hosts file (`FERRY_MCAPI_HOSTS`, written by users and read by
//! every node): parsed or refused, never a panic; what parses has unique nodes and a valid
//! secret, and its canonical text parses back to the same nodes.
#![no_main]
use ferry_core::bootstrap::hosts_file::HostsFile;
use ferry_core::bootstrap::is_job_secret;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let Ok(f) = HostsFile::parse(text) else { return };
    assert!(is_job_secret(&f.secret));
    assert!(!f.nodes.is_empty());
    for (i, e) in f.nodes.iter().enumerate() {
        assert_eq!(f.rank_of(e.node), Some(i as u32), "node {} listed twice", e.node);
        assert!(e.port > 0);
    }
    let again = HostsFile::parse(&f.to_string()).expect("the canonical text parses");
    let strip = |f: &HostsFile| f.nodes.iter().map(|e| (e.node, e.host.clone(), e.port)).collect::<Vec<_>>();
    assert_eq!(strip(&f), strip(&again));
    assert_eq!(f.secret, again.secret);
});

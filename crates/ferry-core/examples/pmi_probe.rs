//! Asks the process manager who we are and checks its key-value space across ranks: every
//! rank puts a small and a largest-allowed value, meets the others in a barrier, reads its
//! neighbour's, and learns the job secret. Prints one line per rank; exits non-zero on any
//! failure. Run it under any PMI-1 launcher:
//!
//! ```text
//! cargo build --example pmi_probe
//! mpiexec.hydra -n 4 target/debug/examples/pmi_probe
//! ferry run -n 4 target/debug/examples/pmi_probe
//! ```

use ferry_core::bootstrap::{PmiClient, PmiError};
use sha2::{Digest, Sha256};

fn main() {
    std::process::exit(match probe() {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("pmi_probe: {e}");
            1
        }
    });
}

/// The value rank `rank` puts under its big key: `vallen` bytes that say whose they are.
fn big_value(rank: u32, vallen: usize) -> String {
    let tag = format!("r{rank}-");
    tag.chars().cycle().take(vallen).collect()
}

pub fn probe() -> Result<(), PmiError> {
    let Some(mut pmi) = PmiClient::from_env()? else {
        println!("pmi_probe: no PMI_FD: singleton of size 1");
        return Ok(());
    };
    let (rank, size) = (pmi.rank(), pmi.size());
    let vallen = pmi.vallen_max();
    pmi.put(&format!("probe-{rank}"), &format!("hello-from-{rank}"))?;
    pmi.put(&format!("probe-big-{rank}"), &big_value(rank, vallen))?;
    pmi.barrier()?;
    let peer = (rank + 1) % size;
    let small = pmi.get(&format!("probe-{peer}"))?;
    let big = pmi.get(&format!("probe-big-{peer}"))?;
    let big_ok = big.as_deref() == Some(big_value(peer, vallen).as_str());
    let secret = pmi.job_secret()?;
    let digest: String = Sha256::digest(secret.as_bytes()).iter().take(8).map(|b| format!("{b:02x}")).collect();
    let universe = pmi.universe_size()?;
    println!(
        "pmi_probe: rank {rank} of {size} appnum {} universe {universe} kvsname {} got {} from rank {peer}, \
         {vallen}-byte value {}, secret digest {digest}",
        pmi.appnum(),
        pmi.kvsname(),
        small.as_deref().unwrap_or("nothing"),
        if big_ok { "intact" } else { "WRONG" },
    );
    pmi.barrier()?;
    pmi.finalize()?;
    if small.as_deref() != Some(format!("hello-from-{peer}").as_str()) || !big_ok {
        return Err(PmiError::Refused { cmd: "get", rc: -1, msg: format!("rank {peer}'s values did not come back intact") });
    }
    Ok(())
}

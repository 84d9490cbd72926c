//! ferry-fortran-gen: writes the C source of Ferry's Fortran bindings from the C header, so
//! that every function the C library declares gets its Fortran entry points without one
//! being written by hand. `make build` runs it and compiles the result, with the hand-written
//! part in `c/`, into `lib/libmpifort.so.12`.
//!
//! usage: ferry-fortran-gen MPI_FUNCTIONS_H PMPI_FUNCTIONS_H OUT.c

mod binding;
mod emit;
mod header;

use std::collections::HashSet;
use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [mpi_h, pmpi_h, out] = args.as_slice() else {
        eprintln!("usage: ferry-fortran-gen MPI_FUNCTIONS_H PMPI_FUNCTIONS_H OUT.c");
        return ExitCode::from(2);
    };
    match run(mpi_h, pmpi_h, out) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("ferry-fortran-gen: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run(mpi_h: &str, pmpi_h: &str, out: &str) -> Result<(), String> {
    let read = |p: &str| std::fs::read_to_string(p).map_err(|e| format!("{p}: {e}"));
    let protos = header::parse(&read(mpi_h)?);
    let pmpi: HashSet<String> = header::parse(&read(pmpi_h)?)
        .into_iter()
        .map(|p| p.name)
        .collect();
    let mut bindings = Vec::new();
    let mut skipped = Vec::new();
    for proto in protos.iter().filter(|p| p.name.starts_with("MPI_")) {
        if binding::HAND_WRITTEN.contains(&proto.name.as_str()) {
            continue;
        }
        match binding::classify(proto) {
            Ok(b) => bindings.push(b),
            Err(why) => skipped.push((proto.name.clone(), why)),
        }
    }
    let text = emit::source(&bindings, |n| pmpi.contains(n), &skipped);
    // Write beside and rename, so that an interrupted run leaves no half file for make.
    let tmp = format!("{out}.tmp");
    std::fs::write(&tmp, text).map_err(|e| format!("{tmp}: {e}"))?;
    std::fs::rename(&tmp, out).map_err(|e| format!("{out}: {e}"))?;
    let names: Vec<&str> = skipped.iter().map(|(n, _)| n.as_str()).collect();
    eprintln!(
        "fortran bindings: {} generated, {} by hand, no binding for {}: {}",
        bindings.len(),
        binding::HAND_WRITTEN.len(),
        names.len(),
        if names.is_empty() {
            "-".to_string()
        } else {
            names.join(" ")
        }
    );
    Ok(())
}

//! ferry-fortran-gen: writes the C source of Ferry's Fortran bindings from the C header, so
//! that every function the C library declares gets its Fortran entry points without one
//! being written by hand. `make build` runs it and compiles the result, with the hand-written
//! part in `c/`, into `lib/libmpifort.so.12`.
//!
//! usage: ferry-fortran-gen MPI_FUNCTIONS_H PMPI_FUNCTIONS_H OUT.c OUT_INTERFACES.f90

mod binding;
mod emit;
mod header;
mod interfaces;

use std::collections::HashSet;
use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [mpi_h, pmpi_h, out, out_f90] = args.as_slice() else {
        eprintln!(
            "usage: ferry-fortran-gen MPI_FUNCTIONS_H PMPI_FUNCTIONS_H OUT.c OUT_INTERFACES.f90"
        );
        return ExitCode::from(2);
    };
    match run(mpi_h, pmpi_h, out, out_f90) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("ferry-fortran-gen: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run(mpi_h: &str, pmpi_h: &str, out: &str, out_f90: &str) -> Result<(), String> {
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
    let (f90, interfaces) = interfaces::source(&bindings);
    write(out, &text)?;
    write(out_f90, &f90)?;
    let names: Vec<&str> = skipped.iter().map(|(n, _)| n.as_str()).collect();
    eprintln!(
        "fortran bindings: {} generated ({} with an interface in the mpi module), {} by hand, no binding for {}: {}",
        bindings.len(),
        interfaces,
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

/// Writes beside and renames, so that an interrupted run leaves no half file for make.
fn write(path: &str, text: &str) -> Result<(), String> {
    let tmp = format!("{path}.tmp");
    std::fs::write(&tmp, text).map_err(|e| format!("{tmp}: {e}"))?;
    std::fs::rename(&tmp, path).map_err(|e| format!("{path}: {e}"))
}

//! `ferry sim` as a user runs it: tables, JSON, plots and traces come out well-formed, a
//! parameter file from `ferry fit` is read, and bad input is refused with the reason.

use std::process::{Command, Output};

const FERRY: &str = env!("CARGO_BIN_EXE_ferry");

fn ferry(args: &[&str]) -> Output {
    Command::new(FERRY).args(args).output().expect("run ferry")
}

fn ok(args: &[&str]) -> String {
    let out = ferry(args);
    assert_eq!(out.status.code(), Some(0), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).expect("UTF-8")
}

fn refused(args: &[&str], why: &str) {
    let out = ferry(args);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_ne!(out.status.code(), Some(0), "{args:?} was accepted");
    assert!(err.contains(why), "{args:?}: {err}");
}

fn tmp(name: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("ferry-sim-test-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d.join(name)
}

#[test]
fn coll_prints_a_table_and_json_and_draws_plots() {
    let table = ok(&["sim", "coll", "--collective", "allgather", "--algorithms", "ring,bruck", "--procs", "4..16", "--bytes", "8,1K"]);
    assert!(table.contains("ring") && table.contains("bruck"));
    assert_eq!(table.lines().filter(|l| l.trim_start().starts_with(char::is_numeric)).count(), 6);
    let json = ok(&["sim", "coll", "--collective", "allgather", "--algorithms", "ring,bruck", "--procs", "4..16", "--bytes", "8,1K", "--json"]);
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    let points = v.as_array().unwrap();
    assert_eq!(points.len(), 12);
    assert!(points.iter().all(|p| p["time"].as_f64().unwrap() > 0.0));
    for ext in ["svg", "png"] {
        let f = tmp(&format!("plot.{ext}"));
        ok(&["sim", "coll", "--collective", "bcast", "--procs", "8..64", "--bytes", "1K", "--plot", f.to_str().unwrap()]);
        let bytes = std::fs::read(&f).unwrap();
        if ext == "png" {
            assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n");
        } else {
            assert!(String::from_utf8(bytes).unwrap().contains("binomial"));
        }
    }
}

#[test]
fn traces_have_one_entry_per_message() {
    let f = tmp("t.jsonl");
    ok(&["sim", "coll", "--collective", "scatter", "--algorithms", "linear", "--procs", "6", "--bytes", "64", "--background", "1:2:512", "--trace", f.to_str().unwrap()]);
    let text = std::fs::read_to_string(&f).unwrap();
    let lines: Vec<serde_json::Value> = text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines.len(), 5 + 1, "five messages of the scatter and one background transfer");
    assert_eq!(lines.iter().filter(|l| l["background"] == true).count(), 1);
    let f = tmp("t.json");
    ok(&["sim", "coll", "--collective", "scatter", "--algorithms", "linear,binomial", "--procs", "6", "--bytes", "64", "--trace", f.to_str().unwrap()]);
    let chrome = tmp("t.scatter.linear.json");
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&chrome).unwrap()).unwrap();
    assert_eq!(v["traceEvents"].as_array().unwrap().len(), 10, "a send and a receive slice per message");
    assert!(tmp("t.scatter.binomial.json").exists());
}

#[test]
fn parameter_files_are_read() {
    let f = tmp("p.toml");
    std::fs::write(&f, "[loggp]\nL = 1.0\no = 0.0\ng = 1.0\nG = 0.0\n").unwrap();
    let json = ok(&["sim", "coll", "--collective", "bcast", "--algorithms", "binomial", "--procs", "16", "--bytes", "8", "--params", f.to_str().unwrap(), "--json"]);
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v[0]["time"].as_f64(), Some(4.0), "log2(16) stages of L = g = 1");
    let presets = ok(&["sim", "presets"]);
    assert!(presets.contains("gige-2000") && presets.contains("soc-mpe") && presets.contains("shm-local"));
}

#[test]
fn occ_mpe_emits_the_documented_json() {
    let json = ok(&["sim", "occ-mpe", "--nodes", "4,8", "--json"]);
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["best"].as_array().unwrap().len(), 6);
    assert_eq!(v["worst_no_interference"].as_array().unwrap().len(), 3 * 2 * 10);
    assert_eq!(v["theoretical_max"].as_array().unwrap().len(), 6);
}

#[test]
fn bad_input_is_refused_with_the_reason() {
    refused(&["sim", "coll", "--collective", "allgatherz"], "unknown collective");
    refused(&["sim", "coll", "--collective", "allgather", "--algorithms", "nope"], "nope");
    refused(&["sim", "coll", "--collective", "allgather", "--procs", "9..4"], "--procs");
    refused(&["sim", "coll", "--collective", "allgather", "--bytes", "lots"], "--bytes");
    refused(&["sim", "coll", "--collective", "bcast", "--procs", "4", "--root", "7"], "--root 7");
    refused(&["sim", "coll", "--collective", "bcast", "--background", "1:2"], "--background");
    refused(&["sim", "coll", "--collective", "bcast", "--procs", "4", "--background", "1:9:8"], "nodes out of range");
    refused(&["sim", "coll", "--collective", "bcast", "--trace", "t.json"], "one process count and one size");
    refused(&["sim", "coll", "--collective", "bcast", "--procs", "4", "--bytes", "8", "--trace", "t.txt"], ".jsonl");
    refused(&["sim", "coll", "--collective", "bcast", "--plot", "p.gif", "--procs", "4", "--bytes", "8"], ".png");
    refused(&["sim", "coll", "--collective", "bcast", "--preset", "cray"], "unknown preset");
    refused(&["sim", "coll", "--collective", "bcast", "--status-cost=-1"], "--status-cost");
    let f = tmp("bad.toml");
    std::fs::write(&f, "[loggp]\nL = -1.0\no = 0.0\ng = 1.0\nG = 0.0\n").unwrap();
    refused(&["sim", "coll", "--collective", "bcast", "--params", f.to_str().unwrap()], "L = -1");
    refused(&["sim", "coll", "--collective", "bcast", "--params", "/nonexistent.toml"], "nonexistent");
    refused(&["sim", "occ-mpe", "--nodes", "2"], "4 to 64");
    refused(&["sim", "coll", "--collective", "allgather", "--bytes", "2G"], "more than the simulator takes");
    refused(&["sim", "coll", "--collective", "scatter", "--algorithms", "status_linear", "--procs", "4", "--bytes", "512M"], "real bytes");
    std::fs::write(&f, "[loggp]\nL = 1.0\no = 0.0\ng = 1.0\nG = 1e308\n").unwrap();
    refused(&["sim", "coll", "--collective", "bcast", "--params", f.to_str().unwrap()], "G = 1e308");
    // -0 is 0: a background transfer at -0 delays the scatter as one at 0 does.
    let at = |start: &str| ok(&["sim", "coll", "--collective", "scatter", "--algorithms", "linear", "--procs", "4", "--bytes", "1K", "--background", &format!("1:2:100000@{start}"), "--json"]);
    assert_eq!(at("0"), at("-0"));
}

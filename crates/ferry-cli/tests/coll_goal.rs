//! `ferry coll goal` and `ferry coll list` as a user runs them: the GOAL text on standard
//! output or in a file is well-formed (every send meets one receive of the same size and
//! tag on its peer, `requires` names earlier labels), has one block per rank, and carries
//! as many messages as the algorithm's cost says.

use std::process::{Command, Output};

use ferry_coll::goal;

const FERRY: &str = env!("CARGO_BIN_EXE_ferry");

fn ferry(args: &[&str]) -> Output {
    Command::new(FERRY).args(args).output().expect("run ferry")
}

/// The message count the header's cost line announces.
fn announced_messages(text: &str) -> usize {
    let line = text.lines().find(|l| l.starts_with("// cost: ")).expect("a cost line");
    let words: Vec<&str> = line.split_whitespace().collect();
    let at = words.iter().position(|w| w.starts_with("messages")).expect("a message count");
    words[at - 1].parse().expect("a number")
}

fn export(args: &[&str]) -> String {
    let mut all = vec!["coll", "goal"];
    all.extend_from_slice(args);
    let out = ferry(&all);
    assert_eq!(out.status.code(), Some(0), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).expect("GOAL text is UTF-8")
}

#[test]
fn exports_are_well_formed_and_match_the_cost() {
    let cases: &[(&[&str], usize)] = &[
        (&["-a", "allgather.double_ring", "-p", "8", "-b", "1024"], 8),
        (&["-a", "allgather.ring", "-p", "12", "-b", "64K"], 12),
        (&["-a", "allgather.double_bruck", "-p", "12", "-b", "1000"], 12),
        (&["-a", "allgather.bruck", "-p", "7", "-b", "8"], 7),
        (&["-a", "allgather.k_bruck", "-p", "10", "-b", "16", "--radix", "3"], 10),
        (&["-a", "allgather.recursive_doubling", "-p", "6", "--blocks", "1,2,0,4,5,6"], 6),
        (&["-a", "bcast.binomial", "-p", "9", "--root", "4", "-b", "8"], 9),
        (&["-a", "bcast.pipelined_chain", "-p", "5", "-b", "100K", "--segment-size", "16K"], 5),
        (&["-a", "bcast.status_binomial", "-p", "8", "--root", "7", "-b", "4", "--busy", "1,2,3,4"], 8),
        (&["-a", "scatter.status_linear", "-p", "8", "-b", "64", "--busy", "1"], 8),
        (&["-a", "gather.binomial", "-p", "11", "--root", "3", "-b", "32"], 11),
        (&["-a", "allreduce.rabenseifner", "-p", "6", "--count", "100", "--elem-size", "4"], 6),
        (&["-a", "reduce_scatter.pairwise", "-p", "4", "--count", "3", "--elem-size", "8"], 4),
        (&["-a", "alltoall.bruck", "-p", "5", "-b", "24"], 5),
        (&["-a", "scan.recursive_doubling", "-p", "5", "-b", "8", "--in-place"], 5),
        (&["-a", "barrier.dissemination", "-p", "9"], 9),
        (&["-a", "bcast.binomial", "-p", "1", "-b", "8"], 1),
    ];
    for (args, procs) in cases {
        let text = export(args);
        let sum = goal::check(&text).unwrap_or_else(|e| panic!("{args:?}: {e}\n{text}"));
        assert_eq!(sum.ranks, *procs, "{args:?}");
        assert_eq!(sum.sends, sum.recvs, "{args:?}");
        assert_eq!(sum.sends, announced_messages(&text), "{args:?}");
        assert!(text.starts_with("// Ferry "), "{args:?}");
    }
}

#[test]
fn ring_sends_every_block_to_every_other_rank() {
    let text = export(&["-a", "allgather.ring", "-p", "5", "-b", "1K"]);
    let sum = goal::check(&text).unwrap();
    assert_eq!((sum.sends, sum.bytes), (20, 20 * 1024));
    // Rank 0 sends only to 1 and receives only from 4.
    let rank0: String = text.split("rank 0 {").nth(1).unwrap().split('}').next().unwrap().to_owned();
    assert!(rank0.lines().filter(|l| l.contains(": send")).all(|l| l.contains(" to 1 ")));
    assert!(rank0.lines().filter(|l| l.contains(": recv")).all(|l| l.contains(" from 4 ")));
}

#[test]
fn status_broadcast_serves_busy_ranks_last() {
    // SEEDS.md S1: 8 ranks, root 7, ranks 1..4 busy: the root's sends go to 0, 5, 1.
    let text = export(&["-a", "bcast.status_binomial", "-p", "8", "--root", "7", "-b", "4", "--busy", "1,2,3,4"]);
    let root: Vec<&str> = text.split("rank 7 {").nth(1).unwrap().lines().filter(|l| l.contains(": send")).collect();
    assert_eq!(root.len(), 3);
    for (line, peer) in root.iter().zip([0, 5, 1]) {
        assert!(line.contains(&format!(" to {peer} ")), "{line}");
    }
}

#[test]
fn output_file_holds_what_stdout_shows() {
    let path = std::env::temp_dir().join(format!("ferry-coll-goal-{}.goal", std::process::id()));
    let p = path.to_str().unwrap();
    let out = ferry(&["coll", "goal", "-a", "allgather.double_ring", "-p", "8", "-b", "1024", "-o", p]);
    assert_eq!(out.status.code(), Some(0));
    assert!(out.stdout.is_empty());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("8 ranks") && stderr.contains(p), "{stderr}");
    let written = std::fs::read_to_string(&path).unwrap();
    std::fs::remove_file(&path).unwrap();
    assert_eq!(written, export(&["-a", "allgather.double_ring", "-p", "8", "-b", "1024"]));
}

#[test]
fn unknown_algorithms_and_bad_options_fail_clearly() {
    let out = ferry(&["coll", "goal", "-a", "allgather.triple_ring", "-p", "4", "-b", "8"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("unknown algorithm") && err.contains("allgather.double_ring"), "{err}");
    assert!(out.stdout.is_empty());
    let out = ferry(&["coll", "goal", "-a", "bcast.binomial", "-p", "4", "--root", "9", "-b", "8"]);
    assert_eq!(out.status.code(), Some(2));
    let out = ferry(&["coll", "goal", "-a", "bcast.binomial", "-p", "0", "-b", "8"]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn list_names_every_algorithm() {
    let out = ferry(&["coll", "list", "-q"]);
    assert_eq!(out.status.code(), Some(0));
    let ids: Vec<String> = String::from_utf8_lossy(&out.stdout).lines().map(str::to_owned).collect();
    let want: Vec<String> = ferry_coll::algorithms().iter().map(|a| a.id.to_owned()).collect();
    assert_eq!(ids, want);
}

//! `ferry tune --simulate-only` as a user runs it: the table it writes parses, covers the
//! cells asked for, falls through to the built-in rows, is what `ferry info` shows under
//! FERRY_COLL_TABLE, and bad options are refused with the reason. (The measured path runs
//! programs under `ferry run`: tests/tune-quick.sh.)

use std::process::{Command, Output};

use ferry_coll::select::{CallKind, Facts, Table};

const FERRY: &str = env!("CARGO_BIN_EXE_ferry");

fn ferry(args: &[&str]) -> Output {
    Command::new(FERRY).args(args).env_remove("FERRY_COLL_TABLE").output().expect("run ferry")
}

fn tmp(name: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("ferry-tune-test-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d.join(name)
}

#[test]
fn simulate_only_writes_a_table_that_loads() {
    let out = tmp("sim.table");
    let o = ferry(&["tune", "--simulate-only", "--ranks", "2,3", "--sizes", "8,64K", "--collectives", "barrier,bcast,allreduce", "-o", out.to_str().unwrap()]);
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{stdout}{}", String::from_utf8_lossy(&o.stderr));
    assert!(stdout.starts_with("# predicted only (--simulate-only)"), "{stdout}");
    // barrier: one cell per rank count; bcast and allreduce: one per size and rank count.
    let cells = stdout.lines().filter(|l| l.starts_with("  ") && !l.trim_start().starts_with("CELL")).count();
    assert_eq!(cells, 2 + 2 * 2 * 2, "{stdout}");
    assert!(stdout.contains("  bcast n=3 64K "), "{stdout}");
    let text = std::fs::read_to_string(&out).unwrap();
    assert!(text.starts_with("# Decision table made by ferry tune\n# machine: "), "{text}");
    assert!(text.contains("\n# command: ") && text.contains("chosen by prediction alone (preset shm-local)"), "{text}");
    let t = Table::parse(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    assert_eq!(t.rows().len(), 10 + Table::builtin().rows().len(), "{text}");
    // A cell it did not tune decides as the built-in table does.
    let gather = CallKind::from_name("gather").unwrap();
    let f = Facts { call: gather, commutative: true, one_host: true, several_hosts: false };
    assert_eq!(ferry_coll::select::select(&t, None, &f, 2, 8).id, ferry_coll::select::select(Table::builtin(), None, &f, 2, 8).id);
    let info = Command::new(FERRY).arg("info").env("FERRY_COLL_TABLE", &out).output().unwrap();
    let info = String::from_utf8_lossy(&info.stdout);
    assert!(info.contains(&format!("Decision table in force: file {} (FERRY_COLL_TABLE)", out.display())), "{info}");
}

#[test]
fn bad_options_are_refused() {
    for (args, why) in [
        (&["tune", "--simulate-only", "--collectives", "gatherv"][..], "cannot be tuned"),
        (&["tune", "--simulate-only", "--sizes", "6"], "multiple of 4"),
        (&["tune", "--simulate-only", "--ranks", "1"], "from 2 to 256"),
        (&["tune", "--simulate-only", "--preset", "nowhere"], "nowhere"),
        (&["tune", "--simulate-only", "--base", "/nonexistent/t"], "cannot read"),
    ] {
        let o = ferry(args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(why), "{args:?}: {err}");
    }
}

#[test]
fn a_parameter_file_from_ferry_fit_drives_the_predictions() {
    let params = tmp("p.toml");
    std::fs::write(&params, "[loggp]\nL = 1.0\no = 0.0\ng = 1.0\nG = 0.0\n").unwrap();
    let out = tmp("p.table");
    let o = ferry(&["tune", "--simulate-only", "--ranks", "2", "--sizes", "64K", "--collectives", "bcast", "--params", params.to_str().unwrap(), "-o", out.to_str().unwrap()]);
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{stdout}{}", String::from_utf8_lossy(&o.stderr));
    assert!(stdout.starts_with(&format!("# predicted only (--simulate-only): US columns are the simulator's, parameters {}", params.display())), "{stdout}");
    // One message of L = 1 us, nothing per byte: the built-in choice (binomial) takes 1 us.
    let row: Vec<&str> = stdout.lines().find(|l| l.starts_with("  bcast n=2 64K")).unwrap().split_whitespace().collect();
    assert_eq!(&row[3..5], ["binomial", "1.00"], "{stdout}");
    let text = std::fs::read_to_string(&out).unwrap();
    assert!(text.contains(&format!("chosen by prediction alone (parameters {})", params.display())), "{text}");
}

//! `ferry run` serving a PMI client that is not ours: a program built with Debian's MPICH
//! (`mpicc.mpich`), whose library speaks PMI-1 to whatever launcher started it. Skipped, with
//! a notice, where MPICH is not installed.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const FERRY: &str = env!("CARGO_BIN_EXE_ferry");
const MPICC: &str = "/usr/bin/mpicc.mpich";

const HELLO: &str = r#"
#include <mpi.h>
#include <stdio.h>
#include <string.h>
int main(int argc, char **argv) {
    int rank, size, sum;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    printf("mpich rank %d of %d sum %d\n", rank, size, sum);
    fflush(stdout);
    if (argc > 1 && strcmp(argv[1], "abort") == 0 && rank == 1)
        MPI_Abort(MPI_COMM_WORLD, 5);
    MPI_Finalize();
    return 0;
}
"#;

fn build_hello() -> Option<PathBuf> {
    if !Path::new(MPICC).exists() {
        eprintln!("skipping: {MPICC} is not installed");
        return None;
    }
    let dir = std::env::temp_dir().join(format!("ferry-mpich-client-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let src = dir.join("hello.c");
    let exe = dir.join("hello");
    std::fs::write(&src, HELLO).expect("write source");
    let status = Command::new(MPICC).arg(&src).arg("-o").arg(&exe).status().expect("run mpicc.mpich");
    assert!(status.success(), "mpicc.mpich failed");
    Some(exe)
}

/// Run `ferry run -n n exe args`, bounded to 60 s.
fn ferry_run(n: u32, exe: &Path, args: &[&str]) -> (Option<i32>, String, String) {
    let mut child = Command::new(FERRY)
        .args(["run", "-n", &n.to_string()])
        .arg(exe)
        .args(args)
        .env_remove("PMI_FD")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn ferry");
    let start = Instant::now();
    while child.try_wait().expect("wait").is_none() {
        if start.elapsed() > Duration::from_secs(60) {
            let _ = child.kill();
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = child.wait_with_output().expect("output");
    (out.status.code(), String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned())
}

#[test]
fn an_mpich_program_runs_under_ferry_run() {
    let Some(exe) = build_hello() else { return };
    let (code, out, err) = ferry_run(3, &exe, &[]);
    assert_eq!(code, Some(0), "stdout:\n{out}\nstderr:\n{err}");
    let mut lines: Vec<&str> = out.lines().collect();
    lines.sort();
    assert_eq!(lines, ["mpich rank 0 of 3 sum 3", "mpich rank 1 of 3 sum 3", "mpich rank 2 of 3 sum 3"], "{err}");

    let (code, out, err) = ferry_run(3, &exe, &["abort"]);
    assert_eq!(code, Some(5), "stdout:\n{out}\nstderr:\n{err}");
    assert!(err.contains("ferry run: rank 1 called MPI_Abort with error code 5"), "{err}");
    let _ = std::fs::remove_dir_all(exe.parent().expect("temp dir"));
}

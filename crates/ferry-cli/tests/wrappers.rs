//! The POSIX-sh wrappers in `bin/`: `mpiexec`/`mpirun` translate MPICH's spellings and run
//! `ferry run`; `mpicc` adds Ferry's include and library paths.

use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

const FERRY: &str = env!("CARGO_BIN_EXE_ferry");

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().expect("repository root")
}

fn wrapper(name: &str, args: &[&str]) -> Output {
    // FERRY points the wrappers at the binary under test rather than whatever
    // target/release holds.
    Command::new(repo().join("bin").join(name))
        .args(args)
        .env("FERRY", FERRY)
        .env_remove("PMI_FD")
        .stdin(Stdio::null())
        .output()
        .expect("run wrapper")
}

fn sorted_lines(bytes: &[u8]) -> Vec<String> {
    let mut lines: Vec<String> = String::from_utf8_lossy(bytes).lines().map(str::to_owned).collect();
    lines.sort();
    lines
}

#[test]
fn mpiexec_translates_np_and_env_before_the_program_only() {
    let out = wrapper(
        "mpiexec",
        &["-np", "2", "-genv", "GREETING", "hi there", "sh", "-c", "echo \"$GREETING $PMI_RANK\" \"$@\"", "sh", "-np", "5"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(sorted_lines(&out.stdout), ["hi there 0 -np 5", "hi there 1 -np 5"]);
}

#[test]
fn mpirun_is_mpiexec() {
    let out = wrapper("mpirun", &["-np", "3", "--tag-output", "sh", "-c", "echo hi; if [ $PMI_RANK = 2 ]; then exit 5; fi"]);
    assert_eq!(out.status.code(), Some(5));
    assert!(String::from_utf8_lossy(&out.stderr).contains("ferry run: rank 2 (pid "));
    assert!(String::from_utf8_lossy(&out.stdout).contains("[2] hi\n"));
}

#[test]
fn mpicc_show_adds_paths_and_links_only_when_linking() {
    let root = repo();
    let root = root.display();
    let show = |name: &str, args: &[&str]| {
        let out = Command::new(repo().join("bin").join(name))
            .args(args)
            .env_remove("MPICH_CC")
            .env_remove("MPICH_CXX")
            .env("CC", "not-this-one")
            .output()
            .expect("run wrapper");
        assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let link = format!("-I{root}/include -L{root}/lib -Wl,-rpath,{root}/lib -lmpi");
    assert_eq!(show("mpicc", &["-show", "-O2", "hello.c", "-o", "hello"]), format!("cc -O2 hello.c -o hello {link}\n"));
    for flag in ["-c", "-E", "-S"] {
        assert_eq!(show("mpicc", &["-show", flag, "hello.c"]), format!("cc {flag} hello.c -I{root}/include\n"));
    }
    assert_eq!(show("mpicc", &["-compile_info"]), format!("cc -I{root}/include\n"));
    assert_eq!(show("mpicc", &["-link_info"]), format!("cc {link}\n"));
    assert_eq!(show("mpicxx", &["-show", "a.cc"]), format!("c++ a.cc {link}\n"));
    assert_eq!(show("mcapicc", &["-show", "-cc=gcc", "m.c"]), format!("gcc m.c -I{root}/include -L{root}/lib -Wl,-rpath,{root}/lib -lmcapi -lpthread\n"));
}

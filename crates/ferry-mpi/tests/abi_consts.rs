//! Keeps `mpi::consts` and `include/mpi.h` from drifting apart: compiles and runs
//! `tests/abi/abi_print.c` against the header (a C compiler is required: `CC`, default `cc`)
//! and compares every value and layout it prints with the Rust side. Where MPICH's header is
//! installed, also checks the constants the Rust side defines beyond our header against it.
//! (`tests/abi/check.sh` compares our header with MPICH's.)

use std::collections::HashMap;
use std::mem::{align_of, offset_of, size_of};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use mpi::consts::*; // the library crate of ferry-mpi is named `mpi` (libmpi.so)

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The `KEY VALUE` lines the printer writes for our header (built once per test process).
fn printed_facts() -> &'static HashMap<String, String> {
    static FACTS: OnceLock<HashMap<String, String>> = OnceLock::new();
    FACTS.get_or_init(run_printer)
}

fn run_printer() -> HashMap<String, String> {
    let root = root();
    let exe = Path::new(env!("CARGO_TARGET_TMPDIR")).join("abi_print");
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    let status = Command::new(&cc)
        .args(["-std=c11", "-Wall", "-Wextra", "-Werror", "-o"])
        .arg(&exe)
        .arg("-I")
        .arg(root.join("include"))
        .arg("-I")
        .arg(root.join("tests/abi"))
        .arg(root.join("tests/abi/abi_print.c"))
        .status()
        .unwrap_or_else(|e| panic!("this test needs a C compiler ({cc}): {e}"));
    assert!(status.success(), "tests/abi/abi_print.c does not build against include/mpi.h");
    let out = Command::new(&exe).output().expect("the printer runs");
    assert!(out.status.success());
    String::from_utf8(out.stdout)
        .expect("the printer writes ASCII")
        .lines()
        .map(|line| {
            let (k, v) = line.split_once(' ').expect("KEY VALUE");
            (k.to_string(), v.to_string())
        })
        .collect()
}

/// Names `#define`d by a header, in order, with the text of their definition.
fn defines(header: &Path) -> Vec<(String, String)> {
    let text = std::fs::read_to_string(header).expect("header readable");
    text.lines()
        .filter_map(|line| {
            let rest = line.trim_start().strip_prefix('#')?.trim_start().strip_prefix("define")?;
            let rest = rest.trim_start();
            let end = rest.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))?;
            // Skip function-like macros.
            (!rest[end..].starts_with('(')).then(|| {
                let value = rest[end..].split("/*").next().unwrap_or("").trim();
                (rest[..end].to_string(), value.to_string())
            })
        })
        .collect()
}

#[test]
fn every_constant_of_the_header_has_the_rust_value() {
    let facts = printed_facts();
    let rust: HashMap<&str, i64> =
        HEADER_CONSTANTS.iter().chain(HEADER_POINTERS).copied().collect();
    let mut constants = 0;
    for (key, value) in facts {
        if !(key.starts_with("MPI_") || key.starts_with("MPIX_")) {
            continue;
        }
        constants += 1;
        let Some(&expected) = rust.get(key.as_str()) else {
            panic!("{key} is in include/mpi.h but not in mpi::consts");
        };
        assert_eq!(value.parse::<i64>().ok(), Some(expected), "{key}");
    }
    assert_eq!(constants, rust.len(), "mpi::consts lists constants the header lacks");
}

#[test]
fn every_define_of_the_header_is_printed() {
    let facts = printed_facts();
    for (name, _) in defines(&root().join("include/mpi.h")) {
        if name != "FERRY_MPI_H" {
            assert!(
                facts.contains_key(&name),
                "{name} is missing from tests/abi/abi_constants.def"
            );
        }
    }
}

#[test]
fn types_and_status_layout_match_the_rust_side() {
    let facts = printed_facts();
    let fact = |k: &str| -> usize {
        facts.get(k).unwrap_or_else(|| panic!("{k} not printed")).parse().expect("a number")
    };
    let types: [(&str, usize, usize); 12] = [
        ("MPI_Comm", size_of::<MPI_Comm>(), align_of::<MPI_Comm>()),
        ("MPI_Datatype", size_of::<MPI_Datatype>(), align_of::<MPI_Datatype>()),
        ("MPI_Request", size_of::<MPI_Request>(), align_of::<MPI_Request>()),
        ("MPI_Op", size_of::<MPI_Op>(), align_of::<MPI_Op>()),
        ("MPI_Errhandler", size_of::<MPI_Errhandler>(), align_of::<MPI_Errhandler>()),
        ("MPI_Group", size_of::<MPI_Group>(), align_of::<MPI_Group>()),
        ("MPI_Info", size_of::<MPI_Info>(), align_of::<MPI_Info>()),
        ("MPI_Message", size_of::<MPI_Message>(), align_of::<MPI_Message>()),
        ("MPI_Aint", size_of::<MPI_Aint>(), align_of::<MPI_Aint>()),
        ("MPI_Offset", size_of::<MPI_Offset>(), align_of::<MPI_Offset>()),
        ("MPI_Count", size_of::<MPI_Count>(), align_of::<MPI_Count>()),
        ("MPI_Fint", size_of::<MPI_Fint>(), align_of::<MPI_Fint>()),
    ];
    for (name, size, align) in types {
        assert_eq!(fact(&format!("sizeof({name})")), size, "{name}");
        assert_eq!(fact(&format!("alignof({name})")), align, "{name}");
        // Every Rust alias is a signed integer.
        assert_eq!(fact(&format!("signed({name})")), 1, "{name}");
    }
    assert_eq!(fact("sizeof(MPI_Status)"), size_of::<MPI_Status>());
    assert_eq!(fact("alignof(MPI_Status)"), align_of::<MPI_Status>());
    let fields = [
        ("count_lo", offset_of!(MPI_Status, count_lo)),
        ("count_hi_and_cancelled", offset_of!(MPI_Status, count_hi_and_cancelled)),
        ("MPI_SOURCE", offset_of!(MPI_Status, MPI_SOURCE)),
        ("MPI_TAG", offset_of!(MPI_Status, MPI_TAG)),
        ("MPI_ERROR", offset_of!(MPI_Status, MPI_ERROR)),
    ];
    for (field, offset) in fields {
        assert_eq!(fact(&format!("offsetof(MPI_Status,{field})")), offset, "{field}");
        assert_eq!(fact(&format!("sizeof(MPI_Status.{field})")), 4, "{field}");
    }
    assert_eq!(fact("sizeof(MPI_F08_status)"), size_of::<MPI_F08_status>());
    assert_eq!(fact("alignof(MPI_F08_status)"), align_of::<MPI_F08_status>());
    let fields = [
        ("count_lo", offset_of!(MPI_F08_status, count_lo)),
        ("count_hi_and_cancelled", offset_of!(MPI_F08_status, count_hi_and_cancelled)),
        ("MPI_SOURCE", offset_of!(MPI_F08_status, MPI_SOURCE)),
        ("MPI_TAG", offset_of!(MPI_F08_status, MPI_TAG)),
        ("MPI_ERROR", offset_of!(MPI_F08_status, MPI_ERROR)),
    ];
    for (field, offset) in fields {
        assert_eq!(fact(&format!("offsetof(MPI_F08_status,{field})")), offset, "{field}");
        assert_eq!(fact(&format!("sizeof(MPI_F08_status.{field})")), 4, "{field}");
    }
}

/// Evaluates the definition of `name` in a header: a literal behind casts and parentheses, or
/// another name.
fn evaluate(defs: &HashMap<String, String>, name: &str, depth: usize) -> Option<i64> {
    let text = defs.get(name)?;
    let cleaned: String = text.chars().filter(|c| !c.is_whitespace()).collect();
    // Remove casts like "(MPI_Datatype)" and the remaining parentheses.
    let mut s = cleaned.clone();
    while let Some(open) = s.find("(MPI_") {
        let close = s[open..].find(')')? + open;
        s.replace_range(open..=close, "");
    }
    let s: String = s.chars().filter(|&c| c != '(' && c != ')').collect();
    // A sum of two terms (MPICH: `MPICH_ERR_FIRST_MPIX+1`).
    if let Some((a, b)) = s.split_once('+') {
        let term = |t: &str| t.parse::<i64>().ok().or_else(|| evaluate(defs, t, depth + 1));
        return Some(term(a)? + term(b)?);
    }
    let (negative, digits) = match s.strip_prefix('-') {
        Some(d) => (true, d),
        None => (false, s.as_str()),
    };
    let value = if let Some(hex) = digits.strip_prefix("0x") {
        i64::from_str_radix(hex, 16).ok()
    } else if digits.chars().all(|c| c.is_ascii_digit()) && !digits.is_empty() {
        digits.parse().ok()
    } else if depth < 4 {
        return evaluate(defs, digits, depth + 1);
    } else {
        None
    }?;
    // Handles are ints: 0x8c000000 is negative once cast.
    Some((if negative { -value } else { value }) as i32 as i64)
}

#[test]
fn constants_beyond_the_header_have_mpich_values() {
    let mpich = std::env::var_os("MPICH_MPI_H")
        .map(PathBuf::from)
        .unwrap_or_else(|| "/usr/include/x86_64-linux-gnu/mpich/mpi.h".into());
    if !mpich.exists() {
        eprintln!("skipped: MPICH's mpi.h not found at {} (set MPICH_MPI_H)", mpich.display());
        return;
    }
    let mut defs: HashMap<String, String> = defines(&mpich).into_iter().collect();
    // The I/O constants are in mpio.h, which MPICH's mpi.h includes.
    let mpio = mpich.with_file_name("mpio.h");
    if mpio.exists() {
        for (k, v) in defines(&mpio) {
            defs.entry(k).or_insert(v);
        }
    }
    // MPICH declares some constants as enumerators: `NAME = value,` one a line (the
    // combiners) or several on one line (`{ MPI_GRAPH=1, MPI_CART=2, ... }`); an enumerator
    // without a value is the one before it plus one (the MPI_T_ verbosities), and a value may
    // name an earlier enumerator (`MPI_T_PVAR_CLASS_STATE = MPIR_T_PVAR_CLASS_FIRST`).
    let text = std::fs::read_to_string(&mpich).expect("header readable");
    let identifier = |t: &str| !t.is_empty() && t.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    let mut enumerators: HashMap<String, i64> = HashMap::new();
    let mut previous: Option<i64> = None;
    for item in text.lines().flat_map(|l| l.split([',', '{', '}'])) {
        let item = item.trim();
        let (name, value) = match item.split_once('=') {
            Some((name, value)) => {
                let value = value.trim();
                (name.trim(), value.parse::<i64>().ok().or_else(|| enumerators.get(value).copied()))
            }
            None if identifier(item) && item.starts_with("MPI") => (item, previous.map(|v| v + 1)),
            None => {
                if !item.is_empty() {
                    previous = None;
                }
                continue;
            }
        };
        previous = value;
        if let (true, Some(v)) = (identifier(name), value) {
            enumerators.insert(name.to_string(), v);
            if name.starts_with("MPI_") {
                defs.entry(name.to_string()).or_insert_with(|| v.to_string());
            }
        }
    }
    let intentional = ["MPI_VERSION", "MPI_SUBVERSION"];
    for &(name, value) in MPICH_ONLY_CONSTANTS.iter().chain(HEADER_CONSTANTS) {
        if intentional.contains(&name) {
            continue;
        }
        assert_eq!(evaluate(&defs, name, 0), Some(value), "{name} differs from MPICH's header");
    }
}

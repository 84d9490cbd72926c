//! Minimal levelled logging to stderr, controlled by `FERRY_LOG` (error, warn, info, debug).
//! Nothing is printed on the hot path unless the level asks for it.

use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::OnceLock;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    Error = 1,
    Warn = 2,
    Info = 3,
    Debug = 4,
}

static LEVEL: AtomicU8 = AtomicU8::new(0);
static PREFIX: OnceLock<String> = OnceLock::new();

fn level() -> u8 {
    let l = LEVEL.load(Ordering::Relaxed);
    if l != 0 {
        return l;
    }
    let parsed = match std::env::var("FERRY_LOG").unwrap_or_default().to_ascii_lowercase().as_str() {
        "error" => Level::Error,
        "info" => Level::Info,
        "debug" | "trace" => Level::Debug,
        _ => Level::Warn,
    } as u8;
    LEVEL.store(parsed, Ordering::Relaxed);
    parsed
}

/// Use level `l` unless `FERRY_LOG` chooses one: for a program whose routine lines are its
/// purpose (the proxy's record of jobs, pairs and denials).
pub fn set_default_level(l: Level) {
    if std::env::var_os("FERRY_LOG").is_none_or(|v| v.is_empty()) {
        LEVEL.store(l as u8, Ordering::Relaxed);
    }
}

/// Set the prefix every line carries (e.g. `ferry[rank 3]`).
pub fn set_prefix(p: String) {
    let _ = PREFIX.set(p);
}

pub fn enabled(l: Level) -> bool {
    (l as u8) <= level()
}

pub fn emit(l: Level, target: &str, msg: std::fmt::Arguments<'_>) {
    if enabled(l) {
        let prefix = PREFIX.get().map(String::as_str).unwrap_or("ferry");
        // One write per line: the ranks of a job often share one stderr (a launcher's pipe),
        // and a line written in pieces (as `eprintln!` writes its arguments) interleaves with
        // the lines of other ranks.
        let _ = std::io::Write::write_all(&mut std::io::stderr().lock(), line(prefix, l, target, msg).as_bytes());
    }
}

/// A whole log line, newline included.
fn line(prefix: &str, l: Level, target: &str, msg: std::fmt::Arguments<'_>) -> String {
    let level = match l {
        Level::Error => "error",
        Level::Warn => "warning",
        Level::Info => "info",
        Level::Debug => "debug",
    };
    format!("{prefix}: {level} [{target}] {msg}\n")
}

#[macro_export]
macro_rules! log_at {
    ($lvl:expr, $target:expr, $($arg:tt)*) => {
        if $crate::log::enabled($lvl) { $crate::log::emit($lvl, $target, format_args!($($arg)*)) }
    };
}
#[macro_export]
macro_rules! warn { ($target:expr, $($arg:tt)*) => { $crate::log_at!($crate::log::Level::Warn, $target, $($arg)*) }; }
#[macro_export]
macro_rules! info { ($target:expr, $($arg:tt)*) => { $crate::log_at!($crate::log::Level::Info, $target, $($arg)*) }; }
#[macro_export]
macro_rules! debug { ($target:expr, $($arg:tt)*) => { $crate::log_at!($crate::log::Level::Debug, $target, $($arg)*) }; }
#[macro_export]
macro_rules! error { ($target:expr, $($arg:tt)*) => { $crate::log_at!($crate::log::Level::Error, $target, $($arg)*) }; }

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_is_formatted_whole_before_it_is_written() {
        let l = line("ferry[rank 3]", Level::Info, "init", format_args!("rank {} of {}", 3, 4));
        assert_eq!(l, "ferry[rank 3]: info [init] rank 3 of 4\n");
        assert_eq!(line("ferry", Level::Warn, "tcp", format_args!("x")), "ferry: warning [tcp] x\n");
    }
}

//! Algorithm selection as data: the decision table (`decisions.table`, embedded at build
//! time), the `FERRY_<COLL>_ALGORITHM` override lists, and the rule that picks the first
//! algorithm of a list that applies to a call. Pure: callers read the environment and hand
//! the strings in.
//!
//! The size metric, one for every collective, is the bytes of one rank's block: count times
//! type size of the message (bcast), of one rank's block (scatter, gather, allgather), of the
//! vector each rank contributes (reduce, allreduce, scan, exscan), of one rank's share of the
//! result (reduce_scatter_block; for reduce_scatter and allgatherv, whose blocks differ, the
//! mean over ranks, rounded down), and of the block for one destination (alltoall); 0 for
//! barrier. Gatherv, scatterv and alltoallv have no such number that every rank knows (a
//! rank sees only its own counts), and every rank must choose the same algorithm, so they
//! are looked up with 0 and their rows must match any size (`*`).

use std::fmt;
use std::sync::OnceLock;

use crate::{algorithm, algorithms, AlgorithmInfo, Collective};

/// What the table is keyed by: a collective, and whether the call is its v-variant (blocks
/// that differ per rank). For reduce-scatter the v-variant is `MPI_Reduce_scatter`, the
/// other `MPI_Reduce_scatter_block`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct CallKind {
    pub collective: Collective,
    pub varying: bool,
}

impl CallKind {
    /// Every call the table knows, in the order `ferry info` lists them.
    pub const ALL: [CallKind; 16] = {
        use Collective::*;
        const fn k(collective: Collective, varying: bool) -> CallKind {
            CallKind {
                collective,
                varying,
            }
        }
        [
            k(Bcast, false),
            k(Scatter, false),
            k(Scatter, true),
            k(Gather, false),
            k(Gather, true),
            k(Allgather, false),
            k(Allgather, true),
            k(Alltoall, false),
            k(Alltoall, true),
            k(Reduce, false),
            k(Allreduce, false),
            k(ReduceScatter, false),
            k(ReduceScatter, true),
            k(Scan, false),
            k(Exscan, false),
            k(Barrier, false),
        ]
    };

    /// The call's name in the table (`gatherv`, `reduce_scatter_block`, ...).
    pub fn name(self) -> &'static str {
        use Collective::*;
        match (self.collective, self.varying) {
            (Scatter, true) => "scatterv",
            (Gather, true) => "gatherv",
            (Allgather, true) => "allgatherv",
            (Alltoall, true) => "alltoallv",
            (ReduceScatter, false) => "reduce_scatter_block",
            (c, _) => c.name(),
        }
    }

    pub fn from_name(name: &str) -> Option<CallKind> {
        CallKind::ALL.into_iter().find(|k| k.name() == name)
    }

    /// Whether every rank knows the size metric of the call (see the module doc).
    pub fn sized(self) -> bool {
        !(self.varying
            && matches!(
                self.collective,
                Collective::Gather | Collective::Scatter | Collective::Alltoall
            ))
    }
}

impl fmt::Display for CallKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A half-open range `lo..hi` of communicator sizes or bytes; no `hi` means no upper end.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Span {
    pub lo: usize,
    pub hi: Option<usize>,
}

impl Span {
    pub const ANY: Span = Span { lo: 0, hi: None };

    pub fn contains(&self, x: usize) -> bool {
        x >= self.lo && self.hi.is_none_or(|h| x < h)
    }

    fn parse(s: &str) -> Result<Span, String> {
        if s == "*" {
            return Ok(Span::ANY);
        }
        let (lo, hi) = s
            .split_once("..")
            .ok_or_else(|| format!("{s:?} is not a range (lo..hi, lo.. or *)"))?;
        let lo = parse_size(lo)?;
        let hi = if hi.is_empty() {
            None
        } else {
            Some(parse_size(hi)?)
        };
        if hi.is_some_and(|h| h <= lo) {
            return Err(format!("{s:?} is empty"));
        }
        Ok(Span { lo, hi })
    }
}

impl fmt::Display for Span {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.lo, self.hi) {
            (0, None) => f.write_str("*"),
            (lo, None) => write!(f, "{}..", show_size(lo)),
            (lo, Some(hi)) => write!(f, "{}..{}", show_size(lo), show_size(hi)),
        }
    }
}

/// `65536`, `64K`, `1M`, `2G` (binary multiples).
fn parse_size(s: &str) -> Result<usize, String> {
    let (digits, mult) = match s.as_bytes().last() {
        Some(b'K' | b'k') => (&s[..s.len() - 1], 1usize << 10),
        Some(b'M' | b'm') => (&s[..s.len() - 1], 1 << 20),
        Some(b'G' | b'g') => (&s[..s.len() - 1], 1 << 30),
        _ => (s, 1),
    };
    digits
        .parse::<usize>()
        .ok()
        .and_then(|d| d.checked_mul(mult))
        .ok_or_else(|| format!("{s:?} is not a number (with an optional K, M or G)"))
}

/// Bytes as the table writes them: with a K, M or G suffix when exact.
pub fn show_size(n: usize) -> String {
    for (suffix, unit) in [("G", 1usize << 30), ("M", 1 << 20), ("K", 1 << 10)] {
        if n >= unit && n.is_multiple_of(unit) {
            return format!("{}{suffix}", n / unit);
        }
    }
    n.to_string()
}

/// One row of the table.
#[derive(Clone, Debug)]
pub struct Row {
    pub call: CallKind,
    pub ranks: Span,
    pub bytes: Span,
    /// Best first.
    pub algorithms: Vec<&'static AlgorithmInfo>,
}

/// A line of a table that does not parse.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TableError {
    pub line: usize,
    pub message: String,
}

impl fmt::Display for TableError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "decision table line {}: {}", self.line, self.message)
    }
}

impl std::error::Error for TableError {}

/// The decision table: rows in file order, the first match wins.
#[derive(Clone, Debug)]
pub struct Table {
    rows: Vec<Row>,
}

/// The table built into the library.
pub const BUILTIN_TEXT: &str = include_str!("../decisions.table");

impl Table {
    /// The built-in table (`decisions.table`).
    pub fn builtin() -> &'static Table {
        static TABLE: OnceLock<Table> = OnceLock::new();
        TABLE.get_or_init(|| {
            Table::parse(BUILTIN_TEXT).expect("the built-in decision table parses (unit-tested)")
        })
    }

    /// Parses the line format described at the top of `decisions.table`: `#` starts a
    /// comment; every other non-blank line is `CALL RANKS BYTES ALGORITHMS`.
    pub fn parse(text: &str) -> Result<Table, TableError> {
        let mut rows = Vec::new();
        for (i, raw) in text.lines().enumerate() {
            let line = raw.split('#').next().unwrap_or("").trim();
            if line.is_empty() {
                continue;
            }
            let bad = |message: String| TableError {
                line: i + 1,
                message,
            };
            let mut cols = line.split_whitespace();
            let (Some(call), Some(ranks), Some(bytes)) = (cols.next(), cols.next(), cols.next())
            else {
                return Err(bad(format!("expected CALL RANKS BYTES ALGORITHMS, got {line:?}")));
            };
            let algs = cols.collect::<Vec<_>>().join(" ");
            if algs.is_empty() {
                return Err(bad(format!("expected CALL RANKS BYTES ALGORITHMS, got {line:?}")));
            }
            let call = CallKind::from_name(call).ok_or_else(|| {
                let names: Vec<&str> = CallKind::ALL.iter().map(|k| k.name()).collect();
                bad(format!("unknown call {call:?}; calls: {}", names.join(", ")))
            })?;
            let ranks = Span::parse(ranks).map_err(|m| bad(format!("ranks: {m}")))?;
            let bytes = Span::parse(bytes).map_err(|m| bad(format!("bytes: {m}")))?;
            if !call.sized() && bytes != Span::ANY {
                return Err(bad(format!("{call} has no size metric every rank knows: BYTES must be *")));
            }
            let algorithms = parse_list(call.collective, &algs).map_err(bad)?;
            if let Some(a) = algorithms.iter().find(|a| call.varying && !a.varying) {
                return Err(bad(format!("{} does not serve {call} (irregular blocks)", a.id)));
            }
            rows.push(Row {
                call,
                ranks,
                bytes,
                algorithms,
            });
        }
        Ok(Table { rows })
    }

    pub fn rows(&self) -> &[Row] {
        &self.rows
    }

    /// The first row for `call` whose ranges hold `ranks` and `bytes`.
    pub fn lookup(&self, call: CallKind, ranks: usize, bytes: usize) -> Option<&Row> {
        self.rows
            .iter()
            .find(|r| r.call == call && r.ranks.contains(ranks) && r.bytes.contains(bytes))
    }
}

/// The environment variable that overrides the table for one collective.
pub fn env_var(c: Collective) -> String {
    format!("FERRY_{}_ALGORITHM", c.name().to_ascii_uppercase())
}

/// A comma-separated list of algorithms of collective `c`, each named with or without its
/// `<collective>.` prefix. An unknown name is an error that lists the valid ones.
pub fn parse_list(c: Collective, list: &str) -> Result<Vec<&'static AlgorithmInfo>, String> {
    let mut out = Vec::new();
    for name in list.split(',').map(str::trim) {
        if name.is_empty() {
            continue;
        }
        let id = if name.contains('.') {
            name.to_string()
        } else {
            format!("{}.{name}", c.name())
        };
        match algorithm(&id) {
            Some(a) if a.collective == c => out.push(a),
            _ => {
                let valid: Vec<&str> = crate::algorithms_for(c)
                    .map(|a| a.id.split_once('.').map_or(a.id, |(_, n)| n))
                    .collect();
                return Err(format!(
                    "{name:?} is not an algorithm of {}; valid names: {}",
                    c.name(),
                    valid.join(", ")
                ));
            }
        }
    }
    if out.is_empty() {
        return Err(format!("{list:?} names no algorithm of {}", c.name()));
    }
    Ok(out)
}

/// What decides whether an algorithm may run for a call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Facts {
    pub call: CallKind,
    /// The reduction is commutative (true for every call that does not reduce).
    pub commutative: bool,
    /// What the shared-memory algorithms need: every rank of the call shares this host's
    /// memory, the call is blocking, and a reduction uses a predefined operation.
    pub one_host: bool,
    /// What the hierarchical algorithms need: the call's ranks span several hosts, with
    /// more than one on some, and the caller knows which (`Params::hosts`).
    pub several_hosts: bool,
}

/// Whether `a` may run for a call of `ranks` ranks with these facts and size metric: it
/// belongs to the collective, serves irregular blocks if the call has them, keeps operand
/// order if the operation is not commutative, and, for a shared-memory algorithm, the call is
/// one it serves (see [`Facts::one_host`]) and what a rank puts in its slot fits (see
/// [`slot_volume`]). (Every algorithm runs for every communicator size, falling back
/// internally where its shape needs a power of two, and accepts MPI_IN_PLACE where MPI
/// allows it.)
pub fn applies(a: &AlgorithmInfo, f: &Facts, ranks: usize, bytes: usize) -> bool {
    a.collective == f.call.collective
        && (!f.call.varying || a.varying)
        && (f.commutative || a.ordered)
        && a.shared.is_none_or(|limit| f.one_host && slot_volume(a.collective, ranks, bytes) <= limit)
        && (!a.hier || f.several_hosts)
}

/// What one rank puts in its slot in a shared-memory algorithm of `collective`, for a call
/// of `ranks` ranks and size metric `bytes`: an alltoall's every outgoing block, one block
/// (or vector) elsewhere.
pub fn slot_volume(collective: Collective, ranks: usize, bytes: usize) -> usize {
    match collective {
        Collective::Alltoall => bytes.saturating_mul(ranks),
        _ => bytes,
    }
}

/// The algorithm to run: the first of `preferred` that applies, else the first registered
/// algorithm of the collective that does.
pub fn choose(preferred: &[&'static AlgorithmInfo], f: &Facts, ranks: usize, bytes: usize) -> &'static AlgorithmInfo {
    preferred
        .iter()
        .copied()
        .find(|a| applies(a, f, ranks, bytes))
        .or_else(|| algorithms().iter().find(|a| applies(a, f, ranks, bytes)))
        .expect("every call has an algorithm that applies (unit-tested)")
}

/// Selection for one call: the override list if there is one, else the table's row.
pub fn select(
    table: &Table,
    overridden: Option<&[&'static AlgorithmInfo]>,
    f: &Facts,
    ranks: usize,
    bytes: usize,
) -> &'static AlgorithmInfo {
    let bytes = if f.call.sized() { bytes } else { 0 };
    let preferred = match overridden {
        Some(list) => list,
        None => table
            .lookup(f.call, ranks, bytes)
            .map_or(&[][..], |r| &r.algorithms[..]),
    };
    choose(preferred, f, ranks, bytes)
}

/// A power-of-two size class for statistics: `"0"`, `"1"`, `"2-3"`, `"4-7"`, ...,
/// `"1K-2K"` (upper end exclusive, shown as the next class's start).
pub fn size_class(bytes: usize) -> String {
    match bytes {
        0 => "0".into(),
        1 => "1".into(),
        b => {
            let lo = 1usize << (usize::BITS - 1 - b.leading_zeros());
            format!("{}-{}", show_size(lo), show_size(lo.saturating_mul(2)))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Cost, Params};

    const SIZES: [usize; 10] = [0, 1, 8, 256, 1000, 4096, 12 << 10, 64 << 10, 1 << 20, 16 << 20];

    fn facts(call: CallKind, commutative: bool) -> Facts {
        Facts { call, commutative, one_host: false, several_hosts: false }
    }

    fn reduces(c: Collective) -> bool {
        use Collective::*;
        matches!(c, Reduce | Allreduce | ReduceScatter | Scan | Exscan)
    }

    #[test]
    fn builtin_table_parses_and_covers_every_call_size_and_metric() {
        let t = Table::builtin();
        for call in CallKind::ALL {
            for p in (1..=80).chain([127, 128, 129, 1000, 4096]) {
                for b in SIZES {
                    let b = if call.sized() { b } else { 0 };
                    let row = t
                        .lookup(call, p, b)
                        .unwrap_or_else(|| panic!("no row for {call} p={p} bytes={b}"));
                    // The table's own choice applies to commutative calls, on one host or
                    // not, so the fallback rule only ever serves non-commutative operations.
                    assert!(
                        row.algorithms.iter().any(|a| applies(a, &facts(call, true), p, b)),
                        "{call} p={p} bytes={b}: no listed algorithm applies"
                    );
                    if reduces(call.collective) {
                        assert!(
                            row.algorithms.iter().any(|a| a.ordered),
                            "{call} p={p} bytes={b}: nothing for non-commutative operations"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn every_call_has_a_fallback_for_every_operation() {
        for call in CallKind::ALL {
            for commutative in [true, !reduces(call.collective)] {
                for (one_host, several_hosts) in [(false, false), (true, false), (false, true)] {
                    let f = Facts { one_host, several_hosts, ..facts(call, commutative) };
                    let a = choose(&[], &f, 4, 8);
                    assert!(applies(a, &f, 4, 8), "{call}");
                    assert!(a.shared.is_none(), "{call}: the fallback is a schedule of messages");
                    assert!(!a.hier, "{call}: the fallback is flat");
                }
            }
        }
    }

    #[test]
    fn parses_ranges_sizes_and_names() {
        let t = Table::parse(
            "# comment\n\nbcast 1..4 0..12K binomial # tail\nbcast 4.. 12k.. bcast.scatter_allgather, binomial\nalltoallv * * pairwise\n",
        )
        .unwrap();
        assert_eq!(t.rows().len(), 3);
        let bcast = CallKind::from_name("bcast").unwrap();
        assert_eq!(t.lookup(bcast, 3, 100).unwrap().algorithms[0].id, "bcast.binomial");
        assert_eq!(t.lookup(bcast, 4, 12 << 10).unwrap().algorithms[0].id, "bcast.scatter_allgather");
        assert!(t.lookup(bcast, 4, 100).is_none());
        assert!(t.lookup(bcast, 3, 12 << 10).is_none());
        assert_eq!(t.rows()[1].ranks.to_string(), "4..");
        assert_eq!(t.rows()[0].bytes.to_string(), "0..12K");
        assert_eq!(t.rows()[2].bytes.to_string(), "*");
    }

    #[test]
    fn rejects_bad_rows_with_their_line() {
        let cases = [
            ("bcast * * nonsense", "not an algorithm of bcast"),
            ("bcats * * binomial", "unknown call"),
            ("bcast 4..2 * binomial", "empty"),
            ("bcast x * binomial", "not a range"),
            ("bcast * 1..2Q binomial", "not a number"),
            ("bcast * *", "expected CALL"),
            ("gatherv * 0..4K linear", "BYTES must be *"),
            ("alltoallv * * bruck", "does not serve alltoallv"),
            ("bcast * * gather.linear", "not an algorithm of bcast"),
        ];
        for (text, want) in cases {
            let e = Table::parse(&format!("\n{text}\n")).unwrap_err();
            assert_eq!(e.line, 2, "{text}");
            assert!(e.message.contains(want), "{text}: {}", e.message);
        }
    }

    #[test]
    fn override_lists_name_algorithms_of_their_collective() {
        let l = parse_list(Collective::Bcast, " pipelined_chain ,bcast.binomial,").unwrap();
        assert_eq!(l.iter().map(|a| a.id).collect::<Vec<_>>(), ["bcast.pipelined_chain", "bcast.binomial"]);
        let e = parse_list(Collective::Bcast, "binomial,nonsense").unwrap_err();
        assert!(e.contains("\"nonsense\"") && e.contains("valid names: binomial, scatter_allgather"), "{e}");
        assert!(parse_list(Collective::Bcast, " , ").is_err());
        assert_eq!(env_var(Collective::ReduceScatter), "FERRY_REDUCE_SCATTER_ALGORITHM");
    }

    #[test]
    fn selection_skips_what_does_not_apply() {
        let t = Table::builtin();
        let l = parse_list(Collective::Allreduce, "ring,rabenseifner").unwrap();
        let call = CallKind::from_name("allreduce").unwrap();
        // Non-commutative: neither listed algorithm keeps order; the registry's ordered one.
        assert_eq!(select(t, Some(&l), &facts(call, false), 8, 1 << 20).id, "allreduce.recursive_doubling");
        assert_eq!(select(t, Some(&l), &facts(call, true), 8, 1 << 20).id, "allreduce.ring");
        let v = CallKind::from_name("alltoallv").unwrap();
        let l = parse_list(Collective::Alltoall, "bruck,linear").unwrap();
        assert_eq!(select(t, Some(&l), &facts(v, true), 8, 0).id, "alltoall.linear");
        let rs = CallKind::from_name("reduce_scatter").unwrap();
        assert_eq!(select(t, None, &facts(rs, false), 5, 64).id, "reduce_scatter.reduce_then_scatter");
        assert_eq!(select(t, None, &facts(rs, true), 5, 64).id, "reduce_scatter.pairwise");
    }

    #[test]
    fn shared_memory_algorithms_run_only_where_they_apply() {
        let t = Table::builtin();
        let on_host = |call| Facts { one_host: true, ..facts(call, true) };
        for name in ["bcast", "reduce", "allreduce", "allgather", "barrier", "gather", "scatter", "alltoall"] {
            let call = CallKind::from_name(name).unwrap();
            let shm = format!("{name}.shm");
            // Small calls on one host take them; larger ones, and any call elsewhere, not.
            assert_eq!(select(t, None, &on_host(call), 4, 8).id, shm);
            assert_ne!(select(t, None, &facts(call, true), 4, 8).id, shm);
            let forced = parse_list(call.collective, "shm").unwrap();
            // An alltoall's slot holds all of a rank's blocks: 4 of 1 KiB, not 4 of 4 KiB.
            let most = slot_volume(call.collective, 1, 4096) / slot_volume(call.collective, 4, 1);
            assert_eq!(select(t, Some(&forced), &on_host(call), 4, most).id, shm);
            if call.sized() {
                assert_ne!(select(t, None, &on_host(call), 4, 64 << 10).id, shm);
                assert_ne!(select(t, Some(&forced), &on_host(call), 4, most + 1).id, shm, "beyond the slots");
            }
            assert_ne!(select(t, Some(&forced), &facts(call, true), 4, 8).id, shm, "not on one host");
        }
    }

    #[test]
    fn hierarchical_algorithms_run_only_across_hosts() {
        let t = Table::builtin();
        let across = |call| Facts { several_hosts: true, ..facts(call, true) };
        for (name, bytes) in [("bcast", 1 << 20), ("allreduce", 64 << 10)] {
            let call = CallKind::from_name(name).unwrap();
            let hier = format!("{name}.hier");
            assert_eq!(select(t, None, &across(call), 4, bytes).id, hier);
            assert_ne!(select(t, None, &facts(call, true), 4, bytes).id, hier);
            let forced = parse_list(call.collective, "hier").unwrap();
            assert_eq!(select(t, Some(&forced), &across(call), 4, 8).id, hier);
            assert_ne!(select(t, Some(&forced), &facts(call, true), 4, bytes).id, hier, "not across hosts");
        }
        let allreduce = CallKind::from_name("allreduce").unwrap();
        assert_ne!(select(t, None, &Facts { several_hosts: true, ..facts(allreduce, false) }, 4, 64 << 10).id, "allreduce.hier", "non-commutative");
    }

    #[test]
    fn size_classes() {
        assert_eq!(size_class(0), "0");
        assert_eq!(size_class(1), "1");
        assert_eq!(size_class(3), "2-4");
        assert_eq!(size_class(1024), "1K-2K");
        assert_eq!(size_class(1500), "1K-2K");
        assert_eq!(size_class(3 << 20), "2M-4M");
    }

    /// The parameters of a call with metric `bytes` (elements of 8 bytes for reductions).
    fn params(call: CallKind, p: usize, bytes: usize) -> Params {
        let b = bytes / 8 * 8;
        match call.collective {
            Collective::Alltoall => Params::alltoall(0, p, bytes),
            c if reduces(c) => Params::uniform(0, p, 0, b).elem_size(8),
            _ => Params::uniform(0, p, 0, bytes),
        }
    }

    /// Alpha-beta time in microseconds: 20 us a step, 1 ns a byte (loopback TCP).
    fn time(c: Cost) -> f64 {
        c.rounds as f64 * 20.0 + c.bytes as f64 * 1e-3
    }

    #[test]
    fn no_cliff_below_powers_of_two() {
        // A communicator one short of a power of two must not cost much more than the power
        // of two itself with the algorithms the table picks.
        let t = Table::builtin();
        for call in CallKind::ALL.into_iter().filter(|c| c.sized()) {
            for commutative in [true, false] {
                if !commutative && !reduces(call.collective) {
                    continue;
                }
                for p in [4, 8, 16, 32, 64] {
                    for b in SIZES {
                        let cost = |n: usize| {
                            let a = select(t, None, &facts(call, commutative), n, b);
                            (a.id, time((a.cost)(&params(call, n, b))))
                        };
                        let ((a1, t1), (a2, t2)) = (cost(p - 1), cost(p));
                        assert!(
                            t1 <= 1.5 * t2 + 20.0,
                            "{call} bytes={b} commutative={commutative}: {a1} on {} ranks \
                             takes {t1:.0} us, {a2} on {p} ranks {t2:.0} us",
                            p - 1
                        );
                    }
                }
            }
        }
    }
}

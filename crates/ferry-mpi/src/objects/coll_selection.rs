//! The collective knobs as this process reads them once, at `MPI_Init`: the override lists
//! (`FERRY_<COLL>_ALGORITHM`), the radix of `allgather.k_bruck` (`FERRY_ALLGATHER_RADIX`),
//! the status source (`FERRY_STATUS_SOURCE`), the statistics switch (`FERRY_COLL_STATS`)
//! and the decision table (`FERRY_COLL_TABLE`: a file, else the built-in one).
//! A bad value fails `MPI_Init` with a message that says what is valid. Choosing an
//! algorithm for a call is `ferry_coll::select`'s business; this adds the counts that
//! `FERRY_COLL_STATS=1` prints at `MPI_Finalize`: every rank prints its own, one line per
//! call, algorithm and size class, to stderr.

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap};

use ferry_coll::select::{self, CallKind, Facts, Table};
use ferry_coll::{AlgorithmInfo, Collective};
use ferry_core::config;

/// Where the root of a status-based collective learns which ranks are free.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StatusSource {
    /// The shared-memory status board for ranks on the root's host, arrival tokens for the
    /// others.
    Board,
    /// Arrival tokens for every rank.
    Arrival,
}

/// The knobs of the collective layer, and the statistics.
pub struct Selection {
    /// The built-in table, or the one `FERRY_COLL_TABLE` names.
    table: Cow<'static, Table>,
    overrides: HashMap<Collective, Vec<&'static AlgorithmInfo>>,
    pub radix: usize,
    pub status_source: StatusSource,
    /// (call, algorithm, size class) -> calls, when `FERRY_COLL_STATS=1`.
    stats: Option<BTreeMap<(&'static str, &'static str, String), u64>>,
    /// The last few choices (the decision is a pure function of these inputs while the
    /// overrides stay): a loop of collectives asks the same few questions over and over.
    recent: [Option<(Question, &'static AlgorithmInfo)>; RECENT],
    /// Where the next new choice goes in `recent`.
    next: usize,
}

/// Choices [`Selection::pick`] remembers.
const RECENT: usize = 4;

/// What a choice depends on besides the table and the overrides.
#[derive(Clone, Copy, PartialEq, Eq)]
struct Question {
    call: CallKind,
    commutative: bool,
    one_host: bool,
    several_hosts: bool,
    ranks: usize,
    bytes: usize,
}

/// The radix `FERRY_ALLGATHER_RADIX` may take.
const RADIX: std::ops::RangeInclusive<usize> = 2..=1024;

fn parse_radix(text: &str) -> Result<usize, String> {
    text.parse::<usize>().ok().filter(|k| RADIX.contains(k)).ok_or_else(|| {
        format!("{}={text:?} is invalid: expected a whole number from {} to {}", config::ALLGATHER_RADIX.name, RADIX.start(), RADIX.end())
    })
}

impl Selection {
    /// The knobs from this process's environment.
    pub fn from_env() -> Result<Selection, String> {
        Selection::from_vars(std::env::vars())
    }

    /// The knobs from `vars` (name, value); every `FERRY_*_ALGORITHM` among them must name
    /// a collective and list algorithms of it.
    pub fn from_vars(vars: impl IntoIterator<Item = (String, String)>) -> Result<Selection, String> {
        let vars: HashMap<String, String> = vars.into_iter().filter(|(k, _)| k.starts_with("FERRY_")).collect();
        let get = |k: &config::Knob| vars.get(k.name).map(|v| v.trim().to_string()).filter(|v| !v.is_empty()).unwrap_or_else(|| k.default.to_string());
        let mut overrides = HashMap::new();
        let mut names: Vec<&String> = vars.keys().filter(|k| k.ends_with("_ALGORITHM")).collect();
        names.sort();
        for name in names {
            let value = &vars[name];
            let Some(c) = Collective::ALL.into_iter().find(|c| &select::env_var(*c) == name) else {
                let valid: Vec<String> = Collective::ALL.iter().map(|c| select::env_var(*c)).collect();
                return Err(format!("{name} is not a collective's variable; valid: {}", valid.join(", ")));
            };
            if value.trim().is_empty() {
                continue;
            }
            let list = select::parse_list(c, value).map_err(|e| format!("{name}={value:?}: {e}"))?;
            overrides.insert(c, list);
        }
        let radix = parse_radix(&get(&config::ALLGATHER_RADIX))?;
        let status_source = match get(&config::STATUS_SOURCE).as_str() {
            "board" => StatusSource::Board,
            "arrival" => StatusSource::Arrival,
            other => return Err(format!("{}={other:?} is invalid: expected board or arrival", config::STATUS_SOURCE.name)),
        };
        let stats = match get(&config::COLL_STATS).as_str() {
            "0" => None,
            "1" => Some(BTreeMap::new()),
            other => return Err(format!("{}={other:?} is invalid: expected 0 or 1", config::COLL_STATS.name)),
        };
        let table = match vars.get(config::COLL_TABLE.name).map(|v| v.trim()).filter(|v| !v.is_empty()) {
            Some(path) => Cow::Owned(config::load_coll_table(path)?),
            None => Cow::Borrowed(Table::builtin()),
        };
        Ok(Selection { table, overrides, radix, status_source, stats, recent: [None; RECENT], next: 0 })
    }

    /// Whether [`Selection::set`] can change the knob `name` while the job runs.
    pub fn settable(name: &str) -> bool {
        name == config::ALLGATHER_RADIX.name || Collective::ALL.into_iter().any(|c| select::env_var(c) == name)
    }

    /// Change a knob while the job runs (the tools interface writes them): a
    /// `FERRY_<COLL>_ALGORITHM` list (empty: the decision table again) or
    /// `FERRY_ALLGATHER_RADIX`. As with the environment at `MPI_Init`, every rank must make
    /// the same change before its next collective.
    pub fn set(&mut self, name: &str, value: &str) -> Result<(), String> {
        let value = value.trim();
        if name == config::ALLGATHER_RADIX.name {
            self.radix = parse_radix(value)?;
            return Ok(());
        }
        let Some(c) = Collective::ALL.into_iter().find(|c| select::env_var(*c) == name) else {
            return Err(format!("{name} cannot change while the job runs"));
        };
        if value.is_empty() {
            self.overrides.remove(&c);
        } else {
            let list = select::parse_list(c, value).map_err(|e| format!("{name}={value:?}: {e}"))?;
            self.overrides.insert(c, list);
        }
        // The remembered choices may no longer hold.
        self.recent = [None; RECENT];
        Ok(())
    }

    /// The algorithm for one call (see `ferry_coll::select`; `one_host` and `several_hosts`
    /// as in [`Facts`]), counted for the statistics.
    pub fn pick(&mut self, call: CallKind, commutative: bool, one_host: bool, several_hosts: bool, ranks: usize, bytes: usize) -> &'static AlgorithmInfo {
        let q = Question { call, commutative, one_host, several_hosts, ranks, bytes };
        let a = match self.recent.iter().flatten().find(|(k, _)| *k == q) {
            Some(&(_, a)) => a,
            None => {
                let over = self.overrides.get(&call.collective).map(Vec::as_slice);
                let a = select::select(&self.table, over, &Facts { call, commutative, one_host, several_hosts }, ranks, bytes);
                self.recent[self.next] = Some((q, a));
                self.next = (self.next + 1) % RECENT;
                a
            }
        };
        if let Some(stats) = self.stats.as_mut() {
            let class = if call.sized() { select::size_class(bytes) } else { "*".to_string() };
            *stats.entry((call.name(), a.id, class)).or_default() += 1;
        }
        a
    }

    /// What `FERRY_COLL_STATS=1` prints at finalize for world rank `rank`; `None` when off.
    pub fn report(&self, rank: u32) -> Option<String> {
        let stats = self.stats.as_ref()?;
        if stats.is_empty() {
            return Some(format!("ferry[rank {rank}] coll-stats: no collective calls\n"));
        }
        let mut out = String::new();
        for ((call, alg, class), n) in stats {
            out.push_str(&format!("ferry[rank {rank}] coll-stats: {call} {alg} bytes={class} calls={n}\n"));
        }
        Some(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    #[test]
    fn defaults() {
        let s = Selection::from_vars(vars(&[("PATH", "/bin")])).unwrap();
        assert_eq!((s.radix, s.status_source), (4, StatusSource::Board));
        assert!(s.report(0).is_none());
    }

    #[test]
    fn bad_values_fail_with_what_is_valid() {
        let cases: &[(&[(&str, &str)], &str)] = &[
            (&[("FERRY_BCAST_ALGORITHM", "nonsense")], "valid names: binomial"),
            (&[("FERRY_BCAST_ALGORITHM", "allgather.ring")], "not an algorithm of bcast"),
            (&[("FERRY_GATHERV_ALGORITHM", "linear")], "FERRY_GATHER_ALGORITHM"),
            (&[("FERRY_ALLGATHER_RADIX", "1")], "from 2 to 1024"),
            (&[("FERRY_ALLGATHER_RADIX", "x")], "from 2 to 1024"),
            (&[("FERRY_STATUS_SOURCE", "magic")], "board or arrival"),
            (&[("FERRY_COLL_STATS", "yes")], "0 or 1"),
        ];
        for (v, want) in cases {
            let e = Selection::from_vars(vars(v)).err().unwrap_or_else(|| panic!("{v:?} accepted"));
            assert!(e.contains(want), "{v:?}: {e}");
        }
    }

    #[test]
    fn a_table_file_replaces_the_builtin_and_a_bad_one_names_its_line() {
        let dir = std::env::temp_dir().join(format!("ferry-coll-table-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let good = dir.join("good.table");
        std::fs::write(&good, "# forced\nbcast * * binomial\n").unwrap();
        let bad = dir.join("bad.table");
        std::fs::write(&bad, "bcast * * binomial\n\nbcast * * nonsense\n").unwrap();
        let bcast = CallKind::from_name("bcast").unwrap();
        let mut s = Selection::from_vars(vars(&[("FERRY_COLL_TABLE", good.to_str().unwrap())])).unwrap();
        assert_eq!(s.pick(bcast, true, true, false, 2, 8).id, "bcast.binomial", "the file's row, not the builtin's shm");
        // Calls the file has no row for fall to the first registered algorithm that applies.
        let barrier = CallKind::from_name("barrier").unwrap();
        assert_eq!(s.pick(barrier, true, false, false, 2, 0).id, select::select(&Table::parse("").unwrap(), None, &Facts { call: barrier, commutative: true, one_host: false, several_hosts: false }, 2, 0).id);
        let e = Selection::from_vars(vars(&[("FERRY_COLL_TABLE", bad.to_str().unwrap())])).err().expect("a bad table is refused");
        assert!(e.contains(&format!("FERRY_COLL_TABLE={}: line 3: ", bad.display())) && e.contains("nonsense"), "{e}");
        let e = Selection::from_vars(vars(&[("FERRY_COLL_TABLE", "/nonexistent/t")])).err().expect("a missing file is refused");
        assert!(e.contains("FERRY_COLL_TABLE=/nonexistent/t: cannot read"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn overrides_and_statistics() {
        let mut s = Selection::from_vars(vars(&[
            ("FERRY_BCAST_ALGORITHM", "pipelined_chain"),
            ("FERRY_ALLREDUCE_ALGORITHM", ""),
            ("FERRY_ALLGATHER_RADIX", "3"),
            ("FERRY_STATUS_SOURCE", "arrival"),
            ("FERRY_COLL_STATS", "1"),
        ]))
        .unwrap();
        assert_eq!((s.radix, s.status_source), (3, StatusSource::Arrival));
        let bcast = CallKind::from_name("bcast").unwrap();
        let gatherv = CallKind::from_name("gatherv").unwrap();
        assert_eq!(s.pick(bcast, true, false, false, 4, 8).id, "bcast.pipelined_chain");
        assert_eq!(s.pick(bcast, true, true, false, 4, 9).id, "bcast.pipelined_chain");
        assert_eq!(s.pick(gatherv, true, false, false, 4, 0).id, "gather.linear");
        let r = s.report(3).unwrap();
        assert!(r.contains("ferry[rank 3] coll-stats: bcast bcast.pipelined_chain bytes=8-16 calls=2\n"), "{r}");
        assert!(r.contains("coll-stats: gatherv gather.linear bytes=* calls=1\n"), "{r}");
    }

    #[test]
    fn remembered_choices_follow_the_questions_and_a_change_of_overrides() {
        let mut s = Selection::from_vars(vars(&[("FERRY_COLL_STATS", "1")])).unwrap();
        let bcast = CallKind::from_name("bcast").unwrap();
        let allreduce = CallKind::from_name("allreduce").unwrap();
        // Each answer is the table's, asked afresh or remembered, for every question.
        let fresh = |call, comm, one_host, ranks, bytes| select::select(Table::builtin(), None, &Facts { call, commutative: comm, one_host, several_hosts: false }, ranks, bytes).id;
        for round in 0..3 {
            for (call, comm, one_host, ranks, bytes) in [(bcast, true, false, 4, 8), (bcast, true, true, 4, 8), (bcast, true, false, 4, 1 << 20), (allreduce, true, false, 2, 8), (allreduce, true, true, 2, 8), (allreduce, false, false, 2, 8), (allreduce, true, false, 64, 1 << 20), (bcast, true, false, 2, 8)] {
                assert_eq!(s.pick(call, comm, one_host, false, ranks, bytes).id, fresh(call, comm, one_host, ranks, bytes), "round {round}: {call:?} {comm} {one_host} {ranks} {bytes}");
            }
        }
        assert_eq!(s.pick(bcast, true, true, false, 4, 8).id, "bcast.shm", "small calls on one host go through shared memory");
        // The statistics count every call, remembered or not.
        assert!(s.report(0).unwrap().contains("coll-stats: bcast bcast.") && s.report(0).unwrap().contains("calls=3\n"));
        // An override set while the job runs applies to the very next call.
        s.set("FERRY_BCAST_ALGORITHM", "pipelined_chain").unwrap();
        assert_eq!(s.pick(bcast, true, false, false, 4, 8).id, "bcast.pipelined_chain");
        s.set("FERRY_BCAST_ALGORITHM", "").unwrap();
        assert_eq!(s.pick(bcast, true, false, false, 4, 8).id, fresh(bcast, true, false, 4, 8));
    }
}

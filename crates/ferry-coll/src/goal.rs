//! Export of a whole collective as a GOAL text file, the schedule format of the LogGOPSim
//! simulator (`txt2bin` turns it into its binary form):
//!
//! ```text
//! // allgather.ring, 2 ranks
//! num_ranks 2
//!
//! rank 0 {
//! l1: send 8b to 1 tag 0
//! l2: calc 8
//! l2 requires l1
//! }
//! ```
//!
//! Sends and receives become `send <n>b to <peer> tag <t>` / `recv <n>b from <peer> tag <t>`,
//! where the tag is the message's index within its ordered pair of ranks, so a simulator
//! that issues them in another order still matches them as our executors do. Copies and
//! reductions become `calc <bytes>` (their cost in GOAL is the number of bytes they touch).
//! `l<a> requires l<b>` says op a starts once op b completed; b is always an earlier label.
//! Dynamic schedules (`recv_any`, continuations) are exported after a run of the in-memory
//! executor resolved them ([`resolved_schedules`]). [`check`] reads GOAL text back and
//! checks what a simulator relies on, independently of the schedule validator.

use crate::executor::{run, Buffers, ExecError, RunConfig};
use crate::schedule::{span_len, Op, Schedule};
use crate::validate::{validate, ScheduleError};
use crate::{AlgorithmInfo, Params};
use std::collections::HashMap;
use std::fmt::Write;
use thiserror::Error;

/// Renders all ranks' schedules of one collective as GOAL text. The set is validated first.
pub fn to_goal(all: &[Schedule]) -> Result<String, ScheduleError> {
    to_goal_commented(all, &[])
}

/// As [`to_goal`], opened by `comments` as `//` lines (a line break in a comment starts
/// another comment line).
pub fn to_goal_commented(all: &[Schedule], comments: &[String]) -> Result<String, ScheduleError> {
    validate(all)?;
    let p = all.len();
    let mut sent = vec![0usize; p * p];
    let mut received = vec![0usize; p * p];
    let mut out = String::new();
    for line in comments.iter().flat_map(|c| c.lines()) {
        let _ = writeln!(out, "// {line}");
    }
    let _ = writeln!(out, "num_ranks {p}");
    for s in all {
        let me = s.rank();
        let _ = writeln!(out, "\nrank {me} {{");
        for (id, node) in s.nodes().iter().enumerate() {
            let label = id + 1;
            let _ = match &node.op {
                Op::Send { peer, data } => {
                    let tag = sent[me * p + peer];
                    sent[me * p + peer] += 1;
                    writeln!(
                        out,
                        "l{label}: send {}b to {peer} tag {tag}",
                        span_len(data)
                    )
                }
                Op::Recv { peer, data } => {
                    let tag = received[peer * p + me];
                    received[peer * p + me] += 1;
                    writeln!(
                        out,
                        "l{label}: recv {}b from {peer} tag {tag}",
                        span_len(data)
                    )
                }
                Op::Copy { src, .. } | Op::Reduce { src, .. } => {
                    writeln!(out, "l{label}: calc {}", src.len)
                }
                Op::RecvAny { .. } => unreachable!("validate rejects dynamic schedules"),
            };
            for d in &node.deps {
                let _ = writeln!(out, "l{label} requires l{}", d + 1);
            }
        }
        let _ = writeln!(out, "}}");
    }
    Ok(out)
}

/// Why a collective could not be exported.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum ExportError {
    #[error("running the dynamic schedule to resolve it failed: {0}")]
    Run(#[from] ExecError),
    #[error("the schedule is invalid: {0}")]
    Schedule(#[from] ScheduleError),
}

/// Every rank's schedule of `info` for the parameters `q` (seen from any rank: each rank's
/// view is `q.for_rank(r)`), static: a dynamic algorithm is run once in the in-memory
/// executor (rank order, buffers of zeros, no-op reductions) and what it did is returned.
/// The decisions of the status-based algorithms depend only on `Params::free_first` and on
/// the tables they send, never on the user's data, so the run decides what any run would.
pub fn resolved_schedules(info: &AlgorithmInfo, q: &Params) -> Result<Vec<Schedule>, ExportError> {
    let all: Vec<Schedule> = (0..q.size)
        .map(|r| (info.schedule)(&q.for_rank(r)))
        .collect();
    if !all.iter().any(Schedule::is_dynamic) {
        validate(&all)?;
        return Ok(all);
    }
    let buffers = all
        .iter()
        .map(|s| Buffers {
            send: vec![0; s.send_len()],
            recv: vec![0; s.recv_len()],
        })
        .collect();
    let out = run(all, buffers, &|_, _, _| {}, &RunConfig::default())?;
    validate(&out.resolved)?;
    Ok(out.resolved)
}

/// What [`check`] counted in a GOAL text.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct GoalSummary {
    pub ranks: usize,
    pub sends: usize,
    pub recvs: usize,
    pub calcs: usize,
    pub requires: usize,
    /// Bytes over all sends.
    pub bytes: u64,
}

/// A GOAL text that [`check`] rejects; `line` counts from 1.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum GoalError {
    #[error("line {line}: {what}")]
    Syntax { line: usize, what: String },
    #[error("line {line}: rank {rank} has no block, or has one twice, or is out of num_ranks")]
    BadRank { line: usize, rank: usize },
    #[error("rank {rank} of num_ranks {ranks} has no block")]
    MissingRank { rank: usize, ranks: usize },
    #[error("line {line}: label {label} is defined twice in its rank")]
    DuplicateLabel { line: usize, label: String },
    #[error("line {line}: {label} requires {dep}, which is not an earlier label of its rank")]
    BadRequire {
        line: usize,
        label: String,
        dep: String,
    },
    #[error("line {line}: peer {peer} is not another rank of {ranks}")]
    BadPeer {
        line: usize,
        peer: usize,
        ranks: usize,
    },
    #[error("{from} -> {to} tag {tag}: {sends} sends meet {recvs} receives")]
    Unmatched {
        from: usize,
        to: usize,
        tag: u64,
        sends: usize,
        recvs: usize,
    },
    #[error("{from} -> {to} tag {tag}: {sent} bytes sent, {received} bytes received")]
    SizeMismatch {
        from: usize,
        to: usize,
        tag: u64,
        sent: u64,
        received: u64,
    },
}

/// Per message (from, to, tag): the sizes sent and the sizes received.
type Messages = HashMap<(usize, usize, u64), (Vec<u64>, Vec<u64>)>;

/// Reads GOAL text as [`to_goal`] writes it (`//` comment lines, `num_ranks`, one block per
/// rank with `send`/`recv`/`calc` ops and `requires` lines; not the `cpu`/`nic` options or
/// wildcards) and checks it: every rank 0..num_ranks has one block; labels are unique in
/// their rank; a `requires` names two labels defined before it, the second earlier than
/// the first (so the graph is acyclic); peers are other ranks; and every send meets exactly
/// one receive with the same source, destination, tag and size.
pub fn check(text: &str) -> Result<GoalSummary, GoalError> {
    let mut sum = GoalSummary::default();
    let mut ranks: Option<usize> = None;
    let mut seen: Vec<bool> = Vec::new();
    let mut current: Option<usize> = None;
    let mut labels: HashMap<String, usize> = HashMap::new();
    let mut messages: Messages = HashMap::new();
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        let syntax = |what: &str| GoalError::Syntax {
            line,
            what: format!("{what}: {raw:?}"),
        };
        let t = raw.trim();
        if t.is_empty() || t.starts_with("//") {
            continue;
        }
        let words: Vec<&str> = t.split_whitespace().collect();
        let Some(me) = current else {
            match words.as_slice() {
                ["num_ranks", n] if ranks.is_none() => {
                    let n = number(n).ok_or_else(|| syntax("bad rank count"))? as usize;
                    ranks = Some(n);
                    seen = vec![false; n];
                }
                ["rank", r, "{"] => {
                    let n = ranks.ok_or_else(|| syntax("rank block before num_ranks"))?;
                    let r = number(r).ok_or_else(|| syntax("bad rank"))? as usize;
                    if r >= n || std::mem::replace(&mut seen[r], true) {
                        return Err(GoalError::BadRank { line, rank: r });
                    }
                    current = Some(r);
                    labels.clear();
                }
                _ => return Err(syntax("expected num_ranks or a rank block")),
            }
            continue;
        };
        let n = ranks.expect("a rank block opens only after num_ranks");
        if words == ["}"] {
            current = None;
            continue;
        }
        if let [label, "requires" | "irequires", dep] = words.as_slice() {
            match (labels.get(*label), labels.get(*dep)) {
                (Some(a), Some(b)) if b < a => {}
                _ => {
                    return Err(GoalError::BadRequire {
                        line,
                        label: label.to_string(),
                        dep: dep.to_string(),
                    })
                }
            }
            sum.requires += 1;
            continue;
        }
        let Some((label, op)) = t.split_once(':') else {
            return Err(syntax("expected an op or a requires line"));
        };
        if !is_label(label) {
            return Err(syntax("bad label"));
        }
        let op: Vec<&str> = op.split_whitespace().collect();
        match op.as_slice() {
            ["calc", n] => {
                number(n).ok_or_else(|| syntax("bad calc size"))?;
                sum.calcs += 1;
            }
            [kind @ ("send" | "recv"), size, dir, peer, "tag", tag]
                if (*kind == "send" && *dir == "to") || (*kind == "recv" && *dir == "from") =>
            {
                let size = size
                    .strip_suffix('b')
                    .and_then(number)
                    .ok_or_else(|| syntax("bad size"))?;
                let peer = number(peer).ok_or_else(|| syntax("bad peer"))? as usize;
                let tag = number(tag).ok_or_else(|| syntax("bad tag"))?;
                if peer >= n || peer == me {
                    return Err(GoalError::BadPeer {
                        line,
                        peer,
                        ranks: n,
                    });
                }
                if *kind == "send" {
                    messages.entry((me, peer, tag)).or_default().0.push(size);
                    sum.sends += 1;
                    sum.bytes += size;
                } else {
                    messages.entry((peer, me, tag)).or_default().1.push(size);
                    sum.recvs += 1;
                }
            }
            _ => return Err(syntax("expected calc, send or recv")),
        }
        let next = labels.len();
        if labels.insert(label.to_string(), next).is_some() {
            return Err(GoalError::DuplicateLabel {
                line,
                label: label.to_string(),
            });
        }
    }
    if current.is_some() {
        return Err(GoalError::Syntax {
            line: text.lines().count(),
            what: "the last rank block is not closed".into(),
        });
    }
    let n = ranks.ok_or(GoalError::Syntax {
        line: text.lines().count(),
        what: "no num_ranks".into(),
    })?;
    if let Some(rank) = seen.iter().position(|s| !s) {
        return Err(GoalError::MissingRank { rank, ranks: n });
    }
    let mut keys: Vec<_> = messages.keys().copied().collect();
    keys.sort_unstable();
    for key @ (from, to, tag) in keys {
        let (sends, recvs) = &messages[&key];
        if sends.len() != 1 || recvs.len() != 1 {
            return Err(GoalError::Unmatched {
                from,
                to,
                tag,
                sends: sends.len(),
                recvs: recvs.len(),
            });
        }
        if sends[0] != recvs[0] {
            return Err(GoalError::SizeMismatch {
                from,
                to,
                tag,
                sent: sends[0],
                received: recvs[0],
            });
        }
    }
    sum.ranks = n;
    Ok(sum)
}

fn number(s: &str) -> Option<u64> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

/// GOAL identifiers: a letter, then letters, digits and underscores.
fn is_label(s: &str) -> bool {
    let mut b = s.bytes();
    b.next().is_some_and(|c| c.is_ascii_alphabetic())
        && b.all(|c| c.is_ascii_alphanumeric() || c == b'_')
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{algorithm, BufferId, Range};

    #[test]
    fn renders_loggopsim_text() {
        let whole = Range::new(BufferId::Recv, 0, 8);
        let mut a = Schedule::new(0, 2, 0, 8);
        a.send(1, vec![whole], &[]);
        a.send(1, vec![whole], &[]);
        let mut b = Schedule::new(1, 2, 0, 16);
        let x = b.recv(0, vec![whole], &[]);
        let y = b.recv(0, vec![Range::new(BufferId::Recv, 8, 8)], &[]);
        b.copy(whole, Range::new(BufferId::Recv, 8, 8), &[x, y]);
        let text = to_goal(&[a, b]).unwrap();
        let want = "num_ranks 2\n\nrank 0 {\nl1: send 8b to 1 tag 0\nl2: send 8b to 1 tag 1\n}\n\n\
                    rank 1 {\nl1: recv 8b from 0 tag 0\nl2: recv 8b from 0 tag 1\nl3: calc 8\n\
                    l3 requires l1\nl3 requires l2\n}\n";
        assert_eq!(text, want);
        assert_eq!(
            check(&text),
            Ok(GoalSummary {
                ranks: 2,
                sends: 2,
                recvs: 2,
                calcs: 1,
                requires: 2,
                bytes: 16
            })
        );
    }

    #[test]
    fn comments_open_the_text_and_are_skipped_by_check() {
        let a = Schedule::new(0, 1, 0, 0);
        let text = to_goal_commented(&[a], &["one".into(), "two\nthree".into()]).unwrap();
        assert_eq!(
            text,
            "// one\n// two\n// three\nnum_ranks 1\n\nrank 0 {\n}\n"
        );
        assert_eq!(check(&text).map(|s| s.ranks), Ok(1));
    }

    /// A well-formed text, then one defect at a time: the checker must name each.
    #[test]
    fn check_rejects_each_defect() {
        let good = "num_ranks 2\nrank 0 {\nl1: send 4b to 1 tag 0\nl2: calc 4\nl2 requires l1\n}\n\
                    rank 1 {\nl1: recv 4b from 0 tag 0\n}\n";
        assert!(check(good).is_ok());
        let bad = |from: &str, to: &str| check(&good.replacen(from, to, 1)).unwrap_err();
        assert!(matches!(
            bad("recv 4b", "recv 8b"),
            GoalError::SizeMismatch {
                sent: 4,
                received: 8,
                ..
            }
        ));
        assert!(matches!(
            bad("from 0 tag 0", "from 0 tag 1"),
            GoalError::Unmatched {
                tag: 0,
                sends: 1,
                recvs: 0,
                ..
            }
        ));
        assert!(matches!(
            bad("l2 requires l1", "l1 requires l2"),
            GoalError::BadRequire { .. }
        ));
        assert!(matches!(
            bad("l2 requires l1", "l2 requires l7"),
            GoalError::BadRequire { .. }
        ));
        assert!(matches!(
            bad("l2: calc", "l1: calc"),
            GoalError::DuplicateLabel { .. }
        ));
        assert!(matches!(
            bad("to 1 tag", "to 0 tag"),
            GoalError::BadPeer { peer: 0, .. }
        ));
        assert!(matches!(
            bad("to 1 tag", "to 2 tag"),
            GoalError::BadPeer { peer: 2, .. }
        ));
        assert!(matches!(
            bad("rank 1 {", "rank 0 {"),
            GoalError::BadRank { rank: 0, .. }
        ));
        assert!(matches!(
            bad("num_ranks 2", "num_ranks 3"),
            GoalError::MissingRank { rank: 2, .. }
        ));
        assert!(matches!(
            bad("calc 4", "calc x"),
            GoalError::Syntax { line: 4, .. }
        ));
        assert!(matches!(
            bad("send 4b", "send 4"),
            GoalError::Syntax { line: 3, .. }
        ));
        assert!(matches!(bad("to 1", "from 1"), GoalError::Syntax { .. }));
        assert!(matches!(
            check(&good[..good.len() - 2]),
            Err(GoalError::Syntax { .. })
        ));
        // A second send with the same tag is ambiguous for a simulator.
        let twice = good.replace("l2: calc 4\n", "l2: send 4b to 1 tag 0\n");
        assert!(matches!(
            check(&twice),
            Err(GoalError::Unmatched {
                sends: 2,
                recvs: 1,
                ..
            })
        ));
    }

    #[test]
    fn resolves_status_broadcast_with_its_free_first_order() {
        let info = algorithm("bcast.status_binomial").expect("registered");
        // 8 ranks, root 7, ranks 1..=4 busy (SEEDS.md S1): root sends to 0, 5, 1 in turn.
        let q = Params::uniform(0, 8, 7, 16).free_first(vec![0, 5, 6, 7, 1, 2, 3, 4]);
        let all = resolved_schedules(info, &q).unwrap();
        assert!(all.iter().all(|s| !s.is_dynamic()));
        let root_sends: Vec<usize> = all[7]
            .nodes()
            .iter()
            .filter_map(|n| match n.op {
                Op::Send { peer, .. } => Some(peer),
                _ => None,
            })
            .collect();
        assert_eq!(root_sends, [0, 5, 1]);
        let text = to_goal(&all).unwrap();
        let sum = check(&text).unwrap();
        assert_eq!((sum.ranks, sum.sends, sum.recvs), (8, 7, 7));
        // Each message carries the 8-entry table (one byte per entry) before the payload.
        assert_eq!(sum.bytes, 7 * (16 + 8));
    }
}

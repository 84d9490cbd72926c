//! Export of a whole collective as a GOAL text file, the schedule format of the LogGOPSim
//! simulator (`txt2bin` turns it into its binary form):
//!
//! ```text
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
//! Dynamic schedules (`recv_any`, continuations) are exported after a run resolved them.

use crate::schedule::{span_len, Op, Schedule};
use crate::validate::{validate, ScheduleError};
use std::fmt::Write;

/// Renders all ranks' schedules of one collective as GOAL text. The set is validated first.
pub fn to_goal(all: &[Schedule]) -> Result<String, ScheduleError> {
    validate(all)?;
    let p = all.len();
    let mut sent = vec![0usize; p * p];
    let mut received = vec![0usize; p * p];
    let mut out = String::new();
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{BufferId, Range};

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
    }
}

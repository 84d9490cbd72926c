//! Per-message timelines: JSON lines (one object per message, the fields of
//! [`MessageRecord`]) or the Chrome trace event format (open in chrome://tracing or
//! Perfetto): one track per node, a slice on the sender from the transfer's start to its
//! last byte out, and one on the receiver from the first byte in to the receive's end.

use crate::engine::{MessageRecord, Time};
use serde_json::json;

/// One JSON object per line.
pub fn json_lines(records: &[MessageRecord]) -> String {
    let mut s = String::new();
    for r in records {
        s.push_str(&serde_json::to_string(r).expect("records are plain data"));
        s.push('\n');
    }
    s
}

/// Chrome trace events; `latency` and `overhead` (the model's L and o) place the first
/// byte's arrival.
pub fn chrome(records: &[MessageRecord], latency: Time, overhead: Time) -> String {
    let mut events = Vec::with_capacity(2 * records.len());
    for r in records {
        let cat = if r.background { "background" } else { "collective" };
        events.push(json!({
            "name": format!("send {} B to {}", r.bytes, r.dst),
            "cat": cat, "ph": "X", "pid": 0, "tid": r.src,
            "ts": r.start, "dur": r.injected - r.start,
            "args": {"issued": r.issued, "matched": r.matched},
        }));
        let first = r.start + overhead + latency;
        events.push(json!({
            "name": format!("recv {} B from {}", r.bytes, r.src),
            "cat": cat, "ph": "X", "pid": 0, "tid": r.dst,
            "ts": first, "dur": r.done - first,
        }));
    }
    serde_json::to_string(&json!({"traceEvents": events, "displayTimeUnit": "ns"}))
        .expect("events are plain data")
}

/// The format by file name: `.jsonl` (JSON lines) or `.json` (Chrome trace).
pub fn render(path: &str, records: &[MessageRecord], latency: Time, overhead: Time) -> Result<String, String> {
    if path.ends_with(".jsonl") {
        Ok(json_lines(records))
    } else if path.ends_with(".json") {
        Ok(chrome(records, latency, overhead))
    } else {
        Err(format!("trace file {path:?}: name it .jsonl (JSON lines) or .json (Chrome trace format)"))
    }
}

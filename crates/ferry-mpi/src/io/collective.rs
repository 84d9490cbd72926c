//! Collective data access by explicit offset or individual file pointer (`_all`, their
//! split and non-blocking forms): the members exchange the spans they access and decide
//! together between two-phase collective buffering (`twophase`) and each member's own
//! system calls (`access::independent`), by the hints `romio_cb_read`/`romio_cb_write`
//! (`enable`, `disable`, `automatic`), `cb_nodes` and `cb_buffer_size`.

use super::access::{independent, At, Buf, Dir};
use super::plan;
use super::twophase::{self, Setup};
use super::{checked_exchange, file, hint};
use crate::consts::*;
use crate::error::MpiResult;
use crate::objects::request::Outcome;
use crate::objects::Runtime;
use ferry_data::datatype::Datatype;

/// In automatic mode, collective buffering is taken for interleaved accesses whose pieces
/// are at most this long on average. On one host the members share the page cache, and
/// from 2 KiB pieces up each member's own system calls (on all cores at once) timed faster
/// than an aggregator copying every piece twice (docs/io.md gives the timings).
pub const AUTO_PIECE_MAX: u64 = 1 << 10;

/// Whether the members' accesses go through collective buffering. `spans`: each member's
/// `[lo, hi)`; `pieces`, `bytes`: the members' extents and bytes together.
pub fn use_buffering(mode: &str, spans: &[(u64, u64)], pieces: u64, bytes: u64) -> bool {
    if bytes == 0 {
        return false;
    }
    match mode {
        "enable" => true,
        "disable" => false,
        _ => plan::interleaved(spans) && bytes / pieces.max(1) <= AUTO_PIECE_MAX,
    }
}

/// A collective access (`checked`: this member's own checks, the datatype and byte count).
pub fn access_all(rt: &mut Runtime, fh: MPI_File, dir: Dir, at: At, b: Buf, checked: MpiResult<(Datatype, u64)>) -> MpiResult<Outcome> {
    let prepared = checked.and_then(|(t, total)| {
        let f = file(rt, fh)?;
        let esize = f.view.esize;
        let pos = match at {
            At::Explicit(off) => off as u64,
            _ => f.pointer,
        };
        let mut extents = f.view.extents(pos * esize, total);
        if dir == Dir::Read {
            let size = super::open::size(rt, fh)?;
            cut_at(&mut extents, size);
        }
        Ok((t, total, pos, extents))
    });
    // The hints that steer the call, rank 0's for all (members may have been given
    // different ones; all must take the same path).
    let f = file(rt, fh)?;
    let mode = match hint(f, if dir == Dir::Write { "romio_cb_write" } else { "romio_cb_read" }) {
        Some("enable") => 1u64,
        Some("disable") => 2,
        _ => 0,
    };
    let cb_nodes = hint(f, "cb_nodes").and_then(|v| v.trim().parse::<u64>().ok()).unwrap_or(0);
    let buf = hint(f, "cb_buffer_size").and_then(|v| v.trim().parse::<u64>().ok()).filter(|&n| n > 0).unwrap_or(super::open::CB_BUFFER);
    let span = match &prepared {
        Ok((_, _, _, e)) if !e.is_empty() => {
            let (lo, hi) = (e[0].0, e[e.len() - 1].0 + e[e.len() - 1].1);
            [lo, hi, e.len() as u64, e.iter().map(|x| x.1).sum()]
        }
        _ => [0; 4],
    };
    let mine: Vec<u8> = span.iter().chain(&[mode, cb_nodes, buf]).flat_map(|v| v.to_le_bytes()).collect();
    let local = prepared.as_ref().map(|_| ()).map_err(|e| e.clone());
    let all = checked_exchange(rt, fh, local, &mine)?;
    let (t, total, pos, extents) = prepared?;
    let word = |b: &[u8], i: usize| u64::from_le_bytes(b[i * 8..i * 8 + 8].try_into().expect("8 bytes"));
    let spans: Vec<(u64, u64)> = all.iter().map(|b| (word(b, 0), word(b, 1))).collect();
    let (pieces, bytes) = all.iter().fold((0, 0), |(p, n), b| (p + word(b, 2), n + word(b, 3)));
    let (mode, cb_nodes, buf) = (word(&all[0], 4), word(&all[0], 5), word(&all[0], 6));
    let mode = ["automatic", "enable", "disable"][mode as usize];
    let moved = if use_buffering(mode, &spans, pieces, bytes) {
        let group = file(rt, fh)?.group.clone();
        let hosts = rt.hosts_of(&group).map_or_else(|| vec![0; group.len()], |h| h.to_vec());
        let (lo, hi) = spans.iter().filter(|s| s.0 < s.1).fold((u64::MAX, 0), |(a, z), s| (a.min(s.0), z.max(s.1)));
        let setup = Setup::new(&hosts, (cb_nodes > 0).then_some(cb_nodes as usize), buf, lo, hi);
        buffered(rt, fh, dir, &t, b, &setup, &extents, total)?
    } else {
        independent(file(rt, fh)?, dir, &t, b, &extents, total)?
    };
    if at == At::Individual {
        let f = file(rt, fh)?;
        f.pointer = pos + moved / f.view.esize;
    }
    Ok(Outcome { bytes: moved as usize, ..Outcome::empty() })
}

/// Drop what lies past `end` from ascending extents.
fn cut_at(extents: &mut Vec<(u64, u64)>, end: u64) {
    extents.retain(|e| e.0 < end);
    if let Some(last) = extents.last_mut() {
        last.1 = last.1.min(end - last.0);
    }
}

/// Two-phase access of this member's `extents` with its buffer `b`. The bytes moved.
#[allow(clippy::too_many_arguments)]
fn buffered(rt: &mut Runtime, fh: MPI_File, dir: Dir, t: &Datatype, b: Buf, setup: &Setup, extents: &[(u64, u64)], total: u64) -> MpiResult<u64> {
    let n: u64 = extents.iter().map(|e| e.1).sum();
    let contiguous = t.is_contiguous() || total == 0;
    let mut tmp = Vec::new();
    let stream: *mut u8 = if contiguous {
        b.ptr as *mut u8
    } else {
        tmp.resize(total as usize, 0);
        if dir == Dir::Write {
            // SAFETY: `buf` holds `count` items of the type (MPI's contract).
            unsafe { t.pack(b.ptr as *const u8, b.count as usize, &mut tmp) };
        }
        tmp.as_mut_ptr()
    };
    twophase::run(rt, fh, dir, setup, &plan::pieces(extents), stream)?;
    if dir == Dir::Read && !contiguous {
        // SAFETY: `buf` has room for `count` items; `tmp` is ours.
        unsafe { t.unpack(&tmp[..n as usize], b.ptr as *mut u8, b.count as usize) };
    }
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn automatic_buffering_takes_small_interleaved_pieces_only() {
        let inter = [(0, 100), (4, 104)];
        let apart = [(0, 100), (100, 200)];
        assert!(use_buffering("automatic", &inter, 50, 200));
        assert!(!use_buffering("automatic", &apart, 50, 200));
        assert!(!use_buffering("automatic", &inter, 2, 2 << 20));
        assert!(!use_buffering("automatic", &inter, 16, 16 * 4096));
        assert!(use_buffering("enable", &apart, 1, 1 << 30));
        assert!(!use_buffering("disable", &inter, 50, 200));
        assert!(!use_buffering("enable", &inter, 0, 0));
    }

    #[test]
    fn reads_stop_at_the_end_of_the_file() {
        let mut e = vec![(0, 10), (20, 10), (40, 10)];
        cut_at(&mut e, 25);
        assert_eq!(e, vec![(0, 10), (20, 5)]);
        let mut e = vec![(30, 10)];
        cut_at(&mut e, 25);
        assert_eq!(e, vec![]);
    }
}

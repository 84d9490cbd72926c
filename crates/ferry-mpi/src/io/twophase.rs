//! Two-phase collective access (docs/io.md "Collective buffering"): the members' accesses
//! are cut into file domains, one per aggregator; round by round each aggregator gathers
//! into its buffer the pieces of its domain's next window (writes) and writes the runs they
//! cover, or reads the window's runs and hands each member its pieces (reads). The plan is
//! `plan`'s; this module moves the bytes, over the file's own context.

use std::os::unix::fs::FileExt;
use std::os::unix::io::AsRawFd;

use super::access::Dir;
use super::errno::file_error;
use super::plan::{self, Piece};
use super::shared_fp::lock_range;
use super::file;
use crate::error::MpiResult;
use crate::internal::{alltoall_among, wait_all, TAG_ALLTOALL};
use crate::objects::Runtime;
use ferry_core::engine::Pattern;

/// The tag of the pieces on the file's context (the exchanges of `io` use 1 and 2).
const TAG_PIECES: i32 = 9;

/// What every member knows of one collective access.
pub struct Setup {
    pub aggs: Vec<usize>,
    pub doms: Vec<(u64, u64)>,
    pub buf: u64,
}

impl Setup {
    /// The aggregators and their domains over `[lo, hi)`, from the hosts of the members.
    pub fn new(hosts: &[u32], cb_nodes: Option<usize>, buf: u64, lo: u64, hi: u64) -> Setup {
        let aggs = plan::aggregators(hosts, cb_nodes);
        let doms = plan::domains(lo, hi, aggs.len(), 4096);
        Setup { aggs, doms, buf: buf.max(4096) }
    }
}

fn encode(ps: &[Piece]) -> Vec<u8> {
    ps.iter().flat_map(|p| p.off.to_le_bytes().into_iter().chain(p.len.to_le_bytes())).collect()
}

fn decode(b: &[u8]) -> Vec<Piece> {
    b.chunks_exact(16)
        .map(|c| Piece { off: u64::from_le_bytes(c[..8].try_into().expect("8")), len: u64::from_le_bytes(c[8..].try_into().expect("8")), data: 0 })
        .collect()
}

/// Run one collective access: `mine` are this member's pieces (ascending), `stream` its data
/// stream (the bytes to write, or room for the bytes read). Every member calls it with the
/// same `setup`. A failed system call on an aggregator fails the call on every member.
pub fn run(rt: &mut Runtime, fh: super::super::consts::MPI_File, dir: Dir, setup: &Setup, mine: &[Piece], stream: *mut u8) -> MpiResult<()> {
    let f = file(rt, fh)?;
    let (ctx, group, me, atomic) = (f.ctx, f.group.clone(), f.rank, f.atomic);
    let fd = f.fd.try_clone().map_err(|e| file_error("cannot use", &f.path, &e))?;
    let path = f.path.clone();
    let n = group.len();
    // Each aggregator learns which pieces of its domain each member accesses.
    let to_agg: Vec<Vec<Piece>> = setup.doms.iter().map(|&(a, b)| plan::clip(mine, a, b)).collect();
    let mut items = vec![Vec::new(); n];
    for (i, &a) in setup.aggs.iter().enumerate() {
        items[a] = encode(&to_agg[i]);
    }
    let heard = alltoall_among(rt, ctx, &group, me, TAG_ALLTOALL, items)?;
    let my_agg = setup.aggs.iter().position(|&a| a == me);
    let from: Vec<Vec<Piece>> = if my_agg.is_some() { heard.iter().map(|b| decode(b)).collect() } else { Vec::new() };
    let rounds = plan::rounds(&setup.doms, setup.buf);
    // The file's buffer from its last collective access, grown if need be.
    let mut buffer = std::mem::take(&mut file(rt, fh)?.cb_buffer);
    if let Some(i) = my_agg {
        let need = (setup.doms[i].1 - setup.doms[i].0).min(setup.buf) as usize;
        if buffer.len() < need {
            buffer.resize(need, 0);
        }
    }
    let mut failed: MpiResult<()> = Ok(());
    for r in 0..rounds {
        let mut reqs = Vec::new();
        // Packed transfers, kept alive until the round's wait: (source or destination, pieces, bytes).
        let mut packs: Vec<(usize, Vec<Piece>, Vec<u8>)> = Vec::new();
        // The aggregator's window and the pieces each member has in it.
        let mut at_agg: Vec<Vec<Piece>> = Vec::new();
        let mut win = (0, 0);
        if let Some(i) = my_agg {
            win = plan::window(setup.doms[i], r, setup.buf);
            at_agg = from.iter().map(|ps| plan::clip(ps, win.0, win.1)).collect();
            if dir == Dir::Read {
                let runs = plan::merge(at_agg.iter().flatten().map(|p| (p.off, p.len)).collect());
                if failed.is_ok() {
                    failed = read_runs(&fd, &path, &runs, win.0, &mut buffer, atomic);
                }
            }
            for (src, ps) in at_agg.iter().enumerate() {
                if src == me || ps.is_empty() {
                    continue;
                }
                let w = group[src];
                if plan::packed(ps) {
                    let total: u64 = ps.iter().map(|p| p.len).sum();
                    let mut v = vec![0u8; total as usize];
                    if dir == Dir::Read {
                        let mut at = 0;
                        for p in ps {
                            let s = (p.off - win.0) as usize;
                            v[at..at + p.len as usize].copy_from_slice(&buffer[s..s + p.len as usize]);
                            at += p.len as usize;
                        }
                    }
                    packs.push((src, ps.clone(), v));
                } else {
                    for p in ps {
                        let ptr = buffer[(p.off - win.0) as usize..].as_mut_ptr();
                        // SAFETY: `buffer` outlives the round's wait and is not touched until then.
                        unsafe {
                            match dir {
                                Dir::Write => reqs.push(rt.engine.irecv(Pattern { ctx, src: Some(w), tag: Some(TAG_PIECES) }, ptr, p.len as usize)),
                                Dir::Read => reqs.extend(rt.engine.isend(w, ctx, TAG_PIECES, ptr, p.len as usize, false)),
                            }
                        }
                    }
                }
            }
        }
        // This member's pieces of each aggregator's window.
        let mut own: Vec<(usize, Vec<Piece>)> = Vec::new();
        for (i, &a) in setup.aggs.iter().enumerate() {
            let w = plan::window(setup.doms[i], r, setup.buf);
            let ps = plan::clip(&to_agg[i], w.0, w.1);
            if ps.is_empty() {
                continue;
            }
            if a == me {
                own.push((i, ps));
                continue;
            }
            if plan::packed(&ps) {
                let total: u64 = ps.iter().map(|p| p.len).sum();
                let mut v = vec![0u8; total as usize];
                if dir == Dir::Write {
                    let mut at = 0;
                    for p in &ps {
                        // SAFETY: `stream` holds the member's whole data stream.
                        unsafe { std::ptr::copy_nonoverlapping(stream.add(p.data as usize), v[at..].as_mut_ptr(), p.len as usize) };
                        at += p.len as usize;
                    }
                }
                packs.push((n + a, ps, v));
            } else {
                for p in &ps {
                    // SAFETY: `stream` covers the piece and outlives the round's wait.
                    let ptr = unsafe { stream.add(p.data as usize) };
                    // SAFETY: as above.
                    unsafe {
                        match dir {
                            Dir::Write => reqs.extend(rt.engine.isend(group[a], ctx, TAG_PIECES, ptr, p.len as usize, false)),
                            Dir::Read => reqs.push(rt.engine.irecv(Pattern { ctx, src: Some(group[a]), tag: Some(TAG_PIECES) }, ptr, p.len as usize)),
                        }
                    }
                }
            }
        }
        // Packed messages: to or from an aggregator (peer >= n: this member's side).
        for (peer, _, v) in packs.iter_mut() {
            let (w, incoming) = if *peer >= n { (group[*peer - n], dir == Dir::Read) } else { (group[*peer], dir == Dir::Write) };
            // SAFETY: `packs` outlives the round's wait and is not touched until then.
            unsafe {
                if incoming {
                    reqs.push(rt.engine.irecv(Pattern { ctx, src: Some(w), tag: Some(TAG_PIECES) }, v.as_mut_ptr(), v.len()));
                } else {
                    reqs.extend(rt.engine.isend(w, ctx, TAG_PIECES, v.as_ptr(), v.len(), false));
                }
            }
        }
        // The member's own pieces in its own window.
        for (_, ps) in &own {
            for p in ps {
                let s = &mut buffer[(p.off - win.0) as usize..][..p.len as usize];
                // SAFETY: `stream` covers the piece; `buffer` is this process's own.
                unsafe {
                    match dir {
                        Dir::Write => std::ptr::copy_nonoverlapping(stream.add(p.data as usize), s.as_mut_ptr(), s.len()),
                        Dir::Read => std::ptr::copy_nonoverlapping(s.as_ptr(), stream.add(p.data as usize), s.len()),
                    }
                }
            }
        }
        wait_all(rt, &reqs)?;
        for (peer, ps, v) in &packs {
            let mut at = 0;
            for p in ps {
                let bytes = &v[at..at + p.len as usize];
                if *peer >= n && dir == Dir::Read {
                    // SAFETY: `stream` covers the piece.
                    unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), stream.add(p.data as usize), bytes.len()) };
                } else if *peer < n && dir == Dir::Write {
                    let s = (p.off - win.0) as usize;
                    buffer[s..s + bytes.len()].copy_from_slice(bytes);
                }
                at += p.len as usize;
            }
        }
        if my_agg.is_some() && dir == Dir::Write && failed.is_ok() {
            let runs = plan::merge(at_agg.iter().flatten().map(|p| (p.off, p.len)).collect());
            failed = write_runs(&fd, &path, &runs, win.0, &buffer, atomic);
        }
    }
    file(rt, fh)?.cb_buffer = buffer;
    super::agree(rt, fh, failed, "a collective access")
}

/// Lock the span of `runs` when the file is in atomic mode, for `op`.
fn locked(fd: &std::fs::File, path: &str, runs: &[(u64, u64)], atomic: bool, op: impl FnOnce() -> MpiResult<()>) -> MpiResult<()> {
    let span = match (runs.first(), runs.last()) {
        (Some(&(a, _)), Some(&(o, l))) if atomic => Some((a, o + l - a)),
        _ => None,
    };
    if let Some((a, l)) = span {
        lock_range(fd.as_raw_fd(), a, l, true).map_err(|e| file_error("cannot lock", path, &e))?;
    }
    let r = op();
    if let Some((a, l)) = span {
        let _ = lock_range(fd.as_raw_fd(), a, l, false);
    }
    r
}

/// Write the covered runs of the window starting at `base` from `buffer`: one system call
/// per run (holes are left alone, so no other process's bytes are rewritten).
fn write_runs(fd: &std::fs::File, path: &str, runs: &[(u64, u64)], base: u64, buffer: &[u8], atomic: bool) -> MpiResult<()> {
    locked(fd, path, runs, atomic, || {
        for &(o, l) in runs {
            let s = (o - base) as usize;
            fd.write_all_at(&buffer[s..s + l as usize], o).map_err(|e| file_error("cannot write", path, &e))?;
        }
        Ok(())
    })
}

/// Read the runs of the window starting at `base` into `buffer`: their whole span at once
/// when the holes between them are small, else run by run. Bytes past the end of the file
/// read as zeros (the members' accesses were cut at the end beforehand).
fn read_runs(fd: &std::fs::File, path: &str, runs: &[(u64, u64)], base: u64, buffer: &mut [u8], atomic: bool) -> MpiResult<()> {
    let reads: Vec<(u64, u64)> = match (runs.first(), runs.last()) {
        (Some(&(a, _)), Some(&(o, l))) if plan::read_span(runs) => vec![(a, o + l - a)],
        _ => runs.to_vec(),
    };
    locked(fd, path, runs, atomic, || {
        for &(o, l) in &reads {
            let s = (o - base) as usize;
            read_full(fd, path, &mut buffer[s..s + l as usize], o)?;
        }
        Ok(())
    })
}

/// Fill `room` from offset `off`; zeros past the end of the file. The bytes that were there.
pub fn read_full(fd: &std::fs::File, path: &str, room: &mut [u8], off: u64) -> MpiResult<usize> {
    let mut got = 0;
    while got < room.len() {
        match fd.read_at(&mut room[got..], off + got as u64) {
            Ok(0) => break,
            Ok(k) => got += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(file_error("cannot read", path, &e)),
        }
    }
    room[got..].fill(0);
    Ok(got)
}

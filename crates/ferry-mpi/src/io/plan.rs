//! Planning collective buffering and data sieving (docs/io.md "Collective buffering"): which
//! members aggregate, the file domain each owns, the rounds its buffer takes, the pieces of
//! an access that fall in a window, the runs they cover, and the groups of extents one sieve
//! buffer reads. Pure: numbers in, numbers out; `twophase` and `sieve` do the I/O.

use std::ops::Range;

/// A piece of one member's access: `len` bytes at file offset `off`, which are the bytes at
/// `data` of the member's data stream (its buffer as packed bytes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Piece {
    pub off: u64,
    pub len: u64,
    pub data: u64,
}

/// An access's extents (ascending, as a view yields them) as pieces of the data stream.
pub fn pieces(extents: &[(u64, u64)]) -> Vec<Piece> {
    let mut data = 0;
    extents
        .iter()
        .map(|&(off, len)| {
            let p = Piece { off, len, data };
            data += len;
            p
        })
        .collect()
}

/// The parts of `ps` (ascending by offset) inside `[lo, hi)`, cut at its edges.
pub fn clip(ps: &[Piece], lo: u64, hi: u64) -> Vec<Piece> {
    let first = ps.partition_point(|p| p.off + p.len <= lo);
    let mut out = Vec::new();
    for p in &ps[first..] {
        if p.off >= hi {
            break;
        }
        let a = p.off.max(lo);
        let b = (p.off + p.len).min(hi);
        if a < b {
            out.push(Piece { off: a, len: b - a, data: p.data + (a - p.off) });
        }
    }
    out
}

/// The runs `(offset, length)` that `parts` cover together: sorted, overlapping and
/// adjacent ones merged, empty ones dropped.
pub fn merge(mut parts: Vec<(u64, u64)>) -> Vec<(u64, u64)> {
    parts.retain(|&(_, l)| l > 0);
    parts.sort_unstable();
    let mut out: Vec<(u64, u64)> = Vec::with_capacity(parts.len());
    for (o, l) in parts {
        match out.last_mut() {
            Some(last) if o <= last.0 + last.1 => last.1 = last.1.max(o + l - last.0),
            _ => out.push((o, l)),
        }
    }
    out
}

/// `[lo, hi)` cut into `n` contiguous file domains `[start, end)` of nearly equal size, the
/// inner boundaries on multiples of `align` where the domains are larger than it (so that no
/// two aggregators write the same file system block). Some may be empty.
pub fn domains(lo: u64, hi: u64, n: usize, align: u64) -> Vec<(u64, u64)> {
    let n = n.max(1) as u64;
    let size = (hi.saturating_sub(lo)).div_ceil(n);
    let mut out = Vec::with_capacity(n as usize);
    let mut start = lo;
    for i in 1..=n {
        let mut end = if i == n { hi } else { (lo + i * size).min(hi) };
        if align > 1 && size > align && end < hi {
            end = (end / align * align).max(start);
        }
        out.push((start, end));
        start = end;
    }
    out
}

/// The aggregators, as ranks of the group, from the host of each rank (`hosts[r]`): one per
/// host (its lowest rank) by default; `want` of them when given, spread over the hosts in
/// turn (each host's lowest rank first, then each host's next one, ...). At least one.
pub fn aggregators(hosts: &[u32], want: Option<usize>) -> Vec<usize> {
    let mut by_host: Vec<(u32, Vec<usize>)> = Vec::new();
    for (r, &h) in hosts.iter().enumerate() {
        match by_host.iter_mut().find(|(k, _)| *k == h) {
            Some((_, v)) => v.push(r),
            None => by_host.push((h, vec![r])),
        }
    }
    let want = want.unwrap_or(by_host.len()).clamp(1, hosts.len().max(1));
    let mut out = Vec::with_capacity(want);
    let mut depth = 0;
    while out.len() < want {
        for (_, ranks) in &by_host {
            if let Some(&r) = ranks.get(depth) {
                if out.len() < want {
                    out.push(r);
                }
            }
        }
        depth += 1;
    }
    out.sort_unstable();
    out
}

/// Rounds needed for every domain to pass through a buffer of `buf` bytes.
pub fn rounds(domains: &[(u64, u64)], buf: u64) -> usize {
    domains.iter().map(|&(a, b)| (b - a).div_ceil(buf.max(1)) as usize).max().unwrap_or(0)
}

/// The window of `domain` that round `r` moves, `[lo, hi)` (empty once the domain is done).
pub fn window(domain: (u64, u64), r: usize, buf: u64) -> (u64, u64) {
    let lo = domain.0.saturating_add(r as u64 * buf).min(domain.1);
    (lo, lo.saturating_add(buf).min(domain.1))
}

/// Whether the members' spans `[lo, hi)` interleave: some two non-empty ones overlap.
pub fn interleaved(spans: &[(u64, u64)]) -> bool {
    let mut s: Vec<(u64, u64)> = spans.iter().copied().filter(|&(a, b)| a < b).collect();
    s.sort_unstable();
    s.windows(2).any(|w| w[1].0 < w[0].1)
}

/// Whether the pieces one member sends one aggregator in one round travel packed in one
/// message (many small pieces) rather than one message each, straight from and to the
/// buffers. Both sides decide from the same pieces.
pub fn packed(ps: &[Piece]) -> bool {
    const DIRECT_MIN: u64 = 32 << 10;
    ps.len() > 1 && ps.iter().map(|p| p.len).sum::<u64>() / ps.len() as u64 <= DIRECT_MIN
}

/// Whether a window's pieces, covering `runs`, are better read with one read of their whole
/// span than one read per run: when the holes are no larger than the data.
pub fn read_span(runs: &[(u64, u64)]) -> bool {
    match (runs.first(), runs.last()) {
        (Some(&(a, _)), Some(&(o, l))) if runs.len() > 1 => {
            let covered: u64 = runs.iter().map(|r| r.1).sum();
            o + l - a - covered <= covered
        }
        _ => false,
    }
}

/// Extents (ascending) grouped for data sieving: consecutive extents whose span fits in
/// `buf` bytes go together; an extent larger than `buf` is a group alone.
pub fn sieve_groups(extents: &[(u64, u64)], buf: u64) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < extents.len() {
        let start = extents[i].0;
        let mut j = i + 1;
        while j < extents.len() && extents[j].0 + extents[j].1 - start <= buf {
            j += 1;
        }
        out.push(i..j);
        i = j;
    }
    out
}

/// Whether a sieve group is worth one large access: more than one extent, and (unless
/// `always`, the hint asking for sieving whenever a group has more than one) holes between
/// them of at most `SIEVE_HOLE_MAX` bytes on average, where reading a hole costs less than
/// the system call it saves.
pub fn sieve(group: &[(u64, u64)], always: bool) -> bool {
    const SIEVE_HOLE_MAX: u64 = 8 << 10;
    if group.len() < 2 {
        return false;
    }
    let span = group[group.len() - 1].0 + group[group.len() - 1].1 - group[0].0;
    let data: u64 = group.iter().map(|e| e.1).sum();
    always || (span - data) / (group.len() as u64 - 1) <= SIEVE_HOLE_MAX
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pieces_count_the_data_stream() {
        let ps = pieces(&[(100, 8), (116, 8), (200, 4)]);
        assert_eq!(ps.iter().map(|p| p.data).collect::<Vec<_>>(), vec![0, 8, 16]);
    }

    #[test]
    fn clip_cuts_pieces_at_the_window_edges() {
        let ps = pieces(&[(0, 10), (20, 10), (40, 10)]);
        assert_eq!(clip(&ps, 5, 25), vec![Piece { off: 5, len: 5, data: 5 }, Piece { off: 20, len: 5, data: 10 }]);
        assert_eq!(clip(&ps, 10, 20), vec![]);
        assert_eq!(clip(&ps, 0, 100), ps);
        assert_eq!(clip(&ps, 45, 46), vec![Piece { off: 45, len: 1, data: 25 }]);
        assert_eq!(clip(&[], 0, 10), vec![]);
    }

    #[test]
    fn merge_joins_adjacent_and_overlapping_runs() {
        assert_eq!(merge(vec![(20, 10), (0, 10), (10, 5), (40, 0), (50, 5), (52, 10)]), vec![(0, 15), (20, 10), (50, 12)]);
        // Four members' interleaved blocks cover the whole range.
        let all: Vec<(u64, u64)> = (0..16).map(|b| (b * 64, 64)).rev().collect();
        assert_eq!(merge(all), vec![(0, 1024)]);
        assert_eq!(merge(vec![]), vec![]);
    }

    #[test]
    fn domains_split_the_range_evenly_and_aligned() {
        assert_eq!(domains(0, 100, 4, 1), vec![(0, 25), (25, 50), (50, 75), (75, 100)]);
        assert_eq!(domains(10, 11, 3, 1), vec![(10, 11), (11, 11), (11, 11)]);
        assert_eq!(domains(0, 1 << 20, 1, 4096), vec![(0, 1 << 20)]);
        let d = domains(1000, 1000 + 3 * 10_000, 3, 4096);
        assert_eq!(d, vec![(1000, 8192), (8192, 20480), (20480, 31000)]);
        // Contiguous and covering, always.
        for (lo, hi, n) in [(0u64, 7u64, 3usize), (5, 5, 2), (3, 1 << 30, 7)] {
            let d = domains(lo, hi, n, 4096);
            assert_eq!(d.len(), n);
            assert_eq!((d[0].0, d[n - 1].1), (lo, hi));
            assert!(d.windows(2).all(|w| w[0].1 == w[1].0 && w[0].0 <= w[0].1));
        }
    }

    #[test]
    fn aggregators_are_one_per_host_unless_asked() {
        assert_eq!(aggregators(&[0, 0, 0, 0], None), vec![0]);
        assert_eq!(aggregators(&[0, 0, 1, 1], None), vec![0, 2]);
        assert_eq!(aggregators(&[0, 1, 0, 1], Some(3)), vec![0, 1, 2]);
        assert_eq!(aggregators(&[0, 0, 0, 0], Some(2)), vec![0, 1]);
        assert_eq!(aggregators(&[0, 0], Some(9)), vec![0, 1]);
        assert_eq!(aggregators(&[0, 0, 1, 1], Some(1)), vec![0]);
        assert_eq!(aggregators(&[5], Some(0)), vec![0]);
    }

    #[test]
    fn rounds_and_windows_walk_each_domain() {
        let d = [(0, 100), (100, 130)];
        assert_eq!(rounds(&d, 40), 3);
        assert_eq!(window(d[0], 2, 40), (80, 100));
        assert_eq!(window(d[1], 0, 40), (100, 130));
        assert_eq!(window(d[1], 2, 40), (130, 130));
        assert_eq!(rounds(&[(5, 5)], 40), 0);
    }

    #[test]
    fn interleaving_and_the_choices_of_transfer_and_read() {
        assert!(interleaved(&[(0, 100), (50, 150)]));
        assert!(!interleaved(&[(0, 100), (100, 150), (7, 7)]));
        assert!(!packed(&pieces(&[(0, 1 << 20)])));
        assert!(packed(&pieces(&[(0, 4), (8, 4)])));
        assert!(!packed(&pieces(&[(0, 64 << 10), (256 << 10, 64 << 10)])));
        assert!(read_span(&[(0, 10), (15, 10)]));
        assert!(!read_span(&[(0, 10), (100, 10)]));
        assert!(!read_span(&[(0, 10)]));
    }

    #[test]
    fn sieve_groups_fit_the_buffer() {
        let e = [(0, 4), (8, 4), (16, 4), (100, 4), (104, 200)];
        assert_eq!(sieve_groups(&e, 20), vec![0..3, 3..4, 4..5]);
        assert_eq!(sieve_groups(&e, 1000), vec![0..5]);
        assert!(sieve(&e[0..3], false));
        assert!(!sieve(&e[3..4], true));
        // Holes of 3 blocks of 64 KiB: reading them costs more than the calls saved.
        let strided: Vec<(u64, u64)> = (0..8).map(|i| (i * (256 << 10), 64 << 10)).collect();
        assert!(!sieve(&strided, false));
        assert!(sieve(&strided, true));
        assert!(sieve(&[(0, 1 << 20), (1 << 20 | 4096, 1 << 20)], false));
    }
}

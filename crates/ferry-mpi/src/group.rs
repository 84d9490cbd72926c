//! Groups: ordered lists of distinct world ranks. The set operations, rank lists and range
//! triplets of MPI's group functions are pure functions over those lists; the exported
//! functions validate handles and arguments and keep the handle table.

use std::os::raw::c_int;

use crate::consts::*;
use crate::error::{err, MpiResult};
pub use crate::objects::records::Members;
use crate::objects::Runtime;


/// Group rank of world rank `w` in `g`, or `MPI_UNDEFINED`.
pub(crate) fn rank_of(g: &[u32], w: u32) -> i32 {
    g.iter().position(|&x| x == w).map_or(MPI_UNDEFINED, |r| r as i32)
}

/// The rank in `b` of each process `ranks` names in `a`; `MPI_PROC_NULL` stays itself.
pub fn translate(a: &[u32], ranks: &[i32], b: &[u32]) -> MpiResult<Vec<i32>> {
    ranks
        .iter()
        .map(|&r| match r {
            MPI_PROC_NULL => Ok(MPI_PROC_NULL),
            r if r < 0 || r as usize >= a.len() => err(MPI_ERR_RANK, format!("rank {r} is not in a group of size {}", a.len())),
            r => Ok(rank_of(b, a[r as usize])),
        })
        .collect()
}

/// `MPI_IDENT` for the same members in the same order, `MPI_SIMILAR` for the same members in
/// another order, `MPI_UNEQUAL` otherwise.
pub fn compare(a: &[u32], b: &[u32]) -> i32 {
    if a == b {
        return MPI_IDENT;
    }
    let (mut x, mut y) = (a.to_vec(), b.to_vec());
    x.sort_unstable();
    y.sort_unstable();
    if x == y {
        MPI_SIMILAR
    } else {
        MPI_UNEQUAL
    }
}

/// The members of `a` in its order, then those of `b` not in `a`, in `b`'s order.
pub fn union(a: &[u32], b: &[u32]) -> Vec<u32> {
    let mut u = a.to_vec();
    u.extend(b.iter().filter(|w| !a.contains(w)));
    u
}

/// The members of `a` that are in `b`, in `a`'s order.
pub fn intersection(a: &[u32], b: &[u32]) -> Vec<u32> {
    a.iter().copied().filter(|w| b.contains(w)).collect()
}

/// The members of `a` that are not in `b`, in `a`'s order.
pub fn difference(a: &[u32], b: &[u32]) -> Vec<u32> {
    a.iter().copied().filter(|w| !b.contains(w)).collect()
}

/// Check that `ranks` are distinct valid ranks of a group of `size`.
fn check_ranks(size: usize, ranks: &[i32]) -> MpiResult<()> {
    let mut seen = vec![false; size];
    for (i, &r) in ranks.iter().enumerate() {
        if r < 0 || r as usize >= size {
            return err(MPI_ERR_RANK, format!("ranks[{i}] = {r} is not in a group of size {size}"));
        }
        if std::mem::replace(&mut seen[r as usize], true) {
            return err(MPI_ERR_RANK, format!("ranks[{i}] = {r} appears twice"));
        }
    }
    Ok(())
}

/// The members `ranks` names, in that order.
pub fn incl(g: &[u32], ranks: &[i32]) -> MpiResult<Vec<u32>> {
    check_ranks(g.len(), ranks)?;
    Ok(ranks.iter().map(|&r| g[r as usize]).collect())
}

/// The members `ranks` does not name, in `g`'s order.
pub fn excl(g: &[u32], ranks: &[i32]) -> MpiResult<Vec<u32>> {
    check_ranks(g.len(), ranks)?;
    Ok(g.iter().enumerate().filter(|(r, _)| !ranks.contains(&(*r as i32))).map(|(_, &w)| w).collect())
}

/// The ranks the triplets `(first, last, stride)` name, in order: `first`, `first + stride`,
/// ... as far as `last`. Every rank must lie in a group of `size`, every stride be non-zero
/// and point from `first` towards `last`, and no rank be named twice.
pub fn expand_ranges(size: usize, ranges: &[[i32; 3]]) -> MpiResult<Vec<i32>> {
    let mut ranks = Vec::new();
    for (i, &[first, last, stride]) in ranges.iter().enumerate() {
        let bad = |why: &str| err(MPI_ERR_ARG, format!("ranges[{i}] = ({first}, {last}, {stride}): {why}"));
        if stride == 0 {
            return bad("the stride is 0");
        }
        for end in [first, last] {
            if end < 0 || end as usize >= size {
                return bad(&format!("{end} is not a rank of a group of size {size}"));
            }
        }
        if (stride > 0 && first > last) || (stride < 0 && first < last) {
            return bad("the stride points away from the last rank");
        }
        let (mut r, last, stride) = (first as i64, last as i64, stride as i64);
        while (stride > 0 && r <= last) || (stride < 0 && r >= last) {
            ranks.push(r as i32);
            r += stride;
        }
    }
    if let Err(e) = check_ranks(size, &ranks) {
        return err(MPI_ERR_ARG, format!("the ranges name a rank twice ({})", e.msg));
    }
    Ok(ranks)
}

impl Runtime {
    /// The members of group `h` (`MPI_GROUP_EMPTY` included).
    pub fn group(&self, h: i32) -> MpiResult<Members> {
        match self.groups.get(&h) {
            Some(g) => Ok(g.clone()),
            None if h == MPI_GROUP_EMPTY => Ok(Members::default()),
            None if h == MPI_GROUP_NULL => err(MPI_ERR_GROUP, "MPI_GROUP_NULL is not a group"),
            None => err(MPI_ERR_GROUP, format!("invalid group handle {h:#x}")),
        }
    }

    /// A handle for `members`: `MPI_GROUP_EMPTY` when there are none.
    pub fn add_group(&mut self, members: Members) -> i32 {
        if members.is_empty() {
            return MPI_GROUP_EMPTY;
        }
        loop {
            self.next_group = (self.next_group + 1) & 0x03ff_ffff;
            let h = 0x88000000u32 as i32 | self.next_group;
            if let std::collections::hash_map::Entry::Vacant(v) = self.groups.entry(h) {
                v.insert(members);
                return h;
            }
        }
    }
}

/// The `n` ints at `p` (`n` checked non-negative; `p` may be NULL only when `n` is 0).
pub(crate) fn ints<'a, T>(p: *const T, n: c_int, name: &str) -> MpiResult<&'a [T]> {
    if n < 0 {
        return err(MPI_ERR_ARG, format!("{name} has a negative length {n}"));
    }
    if n == 0 {
        return Ok(&[]);
    }
    if p.is_null() {
        return err(MPI_ERR_ARG, format!("{name} is NULL"));
    }
    // SAFETY: MPI's contract: a non-null array argument holds `n` elements.
    Ok(unsafe { std::slice::from_raw_parts(p, n as usize) })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn translate_maps_members_and_keeps_proc_null() {
        let (a, b) = ([4, 1, 7], [7, 4]);
        assert_eq!(translate(&a, &[0, 1, 2, MPI_PROC_NULL], &b).unwrap(), vec![1, MPI_UNDEFINED, 0, MPI_PROC_NULL]);
        assert_eq!(translate(&a, &[3], &b).unwrap_err().class, MPI_ERR_RANK);
        assert_eq!(translate(&a, &[-2], &b).unwrap_err().class, MPI_ERR_RANK);
    }

    #[test]
    fn compare_tells_order_from_membership() {
        assert_eq!(compare(&[1, 2], &[1, 2]), MPI_IDENT);
        assert_eq!(compare(&[1, 2], &[2, 1]), MPI_SIMILAR);
        assert_eq!(compare(&[1, 2], &[1, 3]), MPI_UNEQUAL);
        assert_eq!(compare(&[1], &[1, 2]), MPI_UNEQUAL);
        assert_eq!(compare(&[], &[]), MPI_IDENT);
    }

    #[test]
    fn set_operations_keep_the_first_groups_order() {
        let (a, b) = ([5, 1, 3], [3, 0, 5, 2]);
        assert_eq!(union(&a, &b), vec![5, 1, 3, 0, 2]);
        assert_eq!(intersection(&a, &b), vec![5, 3]);
        assert_eq!(intersection(&b, &a), vec![3, 5]);
        assert_eq!(difference(&a, &b), vec![1]);
        assert_eq!(difference(&b, &a), vec![0, 2]);
    }

    #[test]
    fn incl_and_excl_check_their_ranks() {
        let g = [10, 11, 12, 13];
        assert_eq!(incl(&g, &[3, 0]).unwrap(), vec![13, 10]);
        assert_eq!(excl(&g, &[3, 0]).unwrap(), vec![11, 12]);
        assert_eq!(incl(&g, &[1, 1]).unwrap_err().class, MPI_ERR_RANK);
        assert_eq!(excl(&g, &[4]).unwrap_err().class, MPI_ERR_RANK);
        assert_eq!(incl(&g, &[-1]).unwrap_err().class, MPI_ERR_RANK);
    }

    #[test]
    fn ranges_expand_in_either_direction() {
        assert_eq!(expand_ranges(8, &[[0, 6, 3]]).unwrap(), vec![0, 3, 6]);
        assert_eq!(expand_ranges(8, &[[7, 0, -3], [2, 2, 5]]).unwrap(), vec![7, 4, 1, 2]);
        assert_eq!(expand_ranges(8, &[[5, 4, -2]]).unwrap(), vec![5]);
        for bad in [[0, 8, 1], [0, 3, 0], [3, 0, 1], [0, 3, -1], [-1, 2, 1]] {
            assert_eq!(expand_ranges(8, &[bad]).unwrap_err().class, MPI_ERR_ARG, "{bad:?}");
        }
        assert_eq!(expand_ranges(8, &[[0, 4, 2], [4, 5, 1]]).unwrap_err().class, MPI_ERR_ARG);
    }
}

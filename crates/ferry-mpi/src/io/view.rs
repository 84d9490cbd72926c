//! A file view (MPI-4.0 14.3): the file seen from a displacement as copies of the filetype
//! laid end to end, of which only the bytes the filetype's type map covers are this process's.
//! Here a view turns a stretch of the process's data (a byte position and length in the
//! stream of visible bytes) into the file extents that hold it, and back. Pure.

use std::ops::ControlFlow;

use ferry_data::datatype::Datatype;

use crate::consts::*;
use crate::error::{err, MpiResult};

/// The shape of a view, in bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Shape {
    /// Where the first filetype copy starts.
    pub disp: u64,
    /// Size of the etype: offsets and file pointers count in etypes.
    pub esize: u64,
    /// Data bytes in one filetype copy, and the copy's extent.
    pub fsize: u64,
    pub fextent: u64,
    /// The dense runs of one copy from its origin, ascending and apart (merged).
    pub runs: Vec<(u64, u64)>,
}

impl Shape {
    /// The default view: displacement 0, etype and filetype `MPI_BYTE`.
    pub fn bytes() -> Shape {
        Shape { disp: 0, esize: 1, fsize: 1, fextent: 1, runs: vec![(0, 1)] }
    }

    /// The view of `filetype` from `disp`, with etype size `esize`. The filetype's
    /// displacements must be non-negative and non-decreasing, and its size a multiple of the
    /// etype's (MPI-4.0 14.3).
    pub fn new(disp: u64, esize: usize, filetype: &Datatype) -> MpiResult<Shape> {
        if esize == 0 {
            return err(MPI_ERR_ARG, "the etype has size 0");
        }
        let fsize = filetype.size();
        if fsize == 0 || fsize % esize != 0 {
            return err(MPI_ERR_ARG, format!("the filetype's size {fsize} is not a positive multiple of the etype's size {esize}"));
        }
        if filetype.extent() <= 0 {
            return err(MPI_ERR_ARG, "the filetype's extent is not positive");
        }
        let mut runs: Vec<(u64, u64)> = Vec::new();
        let mut bad = None;
        let _ = filetype.for_each_run(1, |off, len| {
            let end = runs.last().map_or(0, |&(o, l)| o + l);
            if off < 0 || (off as u64) < end {
                bad = Some(off);
                return ControlFlow::Break(());
            }
            runs.push((off as u64, len as u64));
            ControlFlow::Continue(())
        });
        if let Some(off) = bad {
            return err(MPI_ERR_ARG, format!("the filetype's displacements must be non-negative and non-decreasing (a block at {off})"));
        }
        // A copy's data reaching past its upper bound would overlap the next copy's.
        let fextent = filetype.extent() as u64;
        if runs.last().is_some_and(|&(o, l)| (o + l) as i128 > filetype.ub() as i128) {
            return err(MPI_ERR_ARG, "the filetype's copies would overlap (its data reaches past its upper bound)");
        }
        Ok(Shape { disp, esize: esize as u64, fsize: fsize as u64, fextent, runs })
    }

    /// Whether the view is the file itself from `disp` (one run filling the extent).
    fn contiguous(&self) -> bool {
        self.runs.len() == 1 && self.runs[0] == (0, self.fextent)
    }

    /// The file extents `(offset, length)` holding `len` data bytes from data byte `pos`, in
    /// order, adjacent ones merged.
    pub fn extents(&self, pos: u64, len: u64) -> Vec<(u64, u64)> {
        let mut out: Vec<(u64, u64)> = Vec::new();
        if len == 0 {
            return out;
        }
        if self.contiguous() {
            out.push((self.disp + pos, len));
            return out;
        }
        let mut copy = pos / self.fsize;
        let mut skip = pos % self.fsize;
        let mut left = len;
        while left > 0 {
            let base = self.disp + copy * self.fextent;
            for &(o, l) in &self.runs {
                if skip >= l {
                    skip -= l;
                    continue;
                }
                let take = (l - skip).min(left);
                let at = base + o + skip;
                skip = 0;
                match out.last_mut() {
                    Some(last) if last.0 + last.1 == at => last.1 += take,
                    _ => out.push((at, take)),
                }
                left -= take;
                if left == 0 {
                    break;
                }
            }
            copy += 1;
        }
        out
    }

    /// The absolute byte position of data byte `pos` (`MPI_File_get_byte_offset`).
    pub fn byte_of(&self, pos: u64) -> u64 {
        let copy = pos / self.fsize;
        let mut skip = pos % self.fsize;
        let base = self.disp + copy * self.fextent;
        for &(o, l) in &self.runs {
            if skip < l {
                return base + o + skip;
            }
            skip -= l;
        }
        base + self.fextent
    }

    /// Data bytes of the view that lie before absolute byte `end` (the end of the file as
    /// `MPI_SEEK_END` sees it).
    pub fn data_before(&self, end: u64) -> u64 {
        if end <= self.disp {
            return 0;
        }
        let rel = end - self.disp;
        let (copy, rem) = (rel / self.fextent, rel % self.fextent);
        let part: u64 = self.runs.iter().map(|&(o, l)| rem.saturating_sub(o).min(l)).sum();
        copy * self.fsize + part
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ferry_data::datatype::Primitive;

    fn int() -> Datatype {
        Datatype::primitive(Primitive::Int32)
    }

    /// Blocks of 2 ints every 4 ints: the vector type every test of views starts from.
    fn vector() -> Datatype {
        Datatype::vector(3, 2, 4, &int()).expect("a valid vector")
    }

    #[test]
    fn the_default_view_is_the_file() {
        let s = Shape::bytes();
        assert_eq!(s.extents(10, 100), vec![(10, 100)]);
        assert_eq!(s.byte_of(7), 7);
        assert_eq!(s.data_before(50), 50);
    }

    #[test]
    fn a_vector_filetype_maps_to_strided_extents() {
        // runs of one copy: (0,8) (16,8) (32,8); extent 40 (last block ends at 40), size 24.
        let s = Shape::new(100, 4, &vector()).expect("a valid view");
        assert_eq!((s.fsize, s.fextent), (24, 40));
        assert_eq!(s.runs, vec![(0, 8), (16, 8), (32, 8)]);
        assert_eq!(s.extents(0, 24), vec![(100, 8), (116, 8), (132, 8)]);
        // From the middle of the second block into the second copy; the third block of the
        // first copy abuts the first block of the second, so they merge.
        assert_eq!(s.extents(12, 24), vec![(120, 4), (132, 16), (156, 4)]);
        assert_eq!(s.byte_of(12), 120);
        assert_eq!(s.byte_of(24), 140);
        assert_eq!(s.data_before(100), 0);
        assert_eq!(s.data_before(120), 12);
        assert_eq!(s.data_before(140), 24);
        assert_eq!(s.data_before(150), 24 + 8);
    }

    #[test]
    fn a_resized_filetype_leaves_holes_for_the_other_ranks() {
        // Rank r of 4 owns ints r, r+4, ... : one int at displacement 0, extent 16.
        let t = Datatype::resized(&int(), 0, 16).expect("valid");
        let s = Shape::new(8, 4, &t).expect("a valid view");
        assert_eq!(s.extents(0, 12), vec![(8, 4), (24, 4), (40, 4)]);
        assert_eq!(s.data_before(8 + 16 + 2), 4 + 2);
    }

    #[test]
    fn bad_filetypes_are_refused() {
        let neg = Datatype::hindexed(&[1], &[-8], &int()).expect("valid type");
        assert_eq!(Shape::new(0, 4, &neg).unwrap_err().class, MPI_ERR_ARG);
        let dec = Datatype::hindexed(&[1, 1], &[8, 0], &int()).expect("valid type");
        assert_eq!(Shape::new(0, 4, &dec).unwrap_err().class, MPI_ERR_ARG);
        // An etype that does not divide the filetype.
        assert!(Shape::new(0, 8, &vector()).is_ok());
        assert_eq!(Shape::new(0, 16, &vector()).unwrap_err().class, MPI_ERR_ARG);
    }
}

//! The MPI type constructors: each builds a new node over its children and works out, once,
//! the size, bounds, alignment and (for types with few runs) the byte runs of one copy.

use std::borrow::Borrow;
use std::ops::ControlFlow;
use std::sync::Arc;

use super::{
    to_isize, Block, Datatype, Layout, Node, Primitive, Run, StructBlock, TypeError, MAX_CACHED_RUNS,
};

/// Accumulates size, bounds and the other per-type facts over the blocks of a new type.
struct Summary {
    size: usize,
    elements: usize,
    /// Bounds from children without markers.
    plain: Option<(i128, i128)>,
    /// Bounds from children with markers.
    marked: Option<(i128, i128)>,
    /// Span of the data.
    data: Option<(i128, i128)>,
    align: usize,
    uniform: Uniform,
}

#[derive(Clone, Copy)]
enum Uniform {
    Empty,
    One(Primitive),
    Mixed,
}

fn widen(acc: &mut Option<(i128, i128)>, lo: i128, hi: i128) {
    *acc = Some(match *acc {
        None => (lo, hi),
        Some((l, h)) => (l.min(lo), h.max(hi)),
    });
}

impl Summary {
    fn new() -> Summary {
        Summary {
            size: 0,
            elements: 0,
            plain: None,
            marked: None,
            data: None,
            align: 1,
            uniform: Uniform::Empty,
        }
    }

    /// Adds `blocks` blocks of `len` copies of `child` (copy `j` of a block `j * extent` past
    /// the block's origin), whose origins lie between `origin_lo` and `origin_hi`.
    fn add(
        &mut self,
        child: &Datatype,
        len: usize,
        blocks: usize,
        origin_lo: i128,
        origin_hi: i128,
    ) -> Result<(), TypeError> {
        if len == 0 || blocks == 0 {
            return Ok(());
        }
        let c = &*child.0;
        let last = (len as i128 - 1) * (c.ub as i128 - c.lb as i128);
        let (lo, hi) = (origin_lo + last.min(0), origin_hi + last.max(0));
        if c.has_markers {
            widen(&mut self.marked, lo + c.lb as i128, hi + c.ub as i128);
        } else if c.elements > 0 {
            widen(&mut self.plain, lo + c.lb as i128, hi + c.ub as i128);
        }
        if c.size > 0 {
            widen(&mut self.data, lo + c.true_lb as i128, hi + c.true_ub as i128);
        }
        let copies = len.checked_mul(blocks).ok_or(TypeError::Overflow)?;
        let size = copies.checked_mul(c.size).ok_or(TypeError::Overflow)?;
        self.size = self.size.checked_add(size).ok_or(TypeError::Overflow)?;
        let elements = copies.checked_mul(c.elements).ok_or(TypeError::Overflow)?;
        self.elements = self.elements.checked_add(elements).ok_or(TypeError::Overflow)?;
        if c.elements > 0 {
            self.align = self.align.max(c.align);
            self.uniform = match (self.uniform, c.uniform) {
                (Uniform::Empty, Some(p)) => Uniform::One(p),
                (Uniform::One(q), Some(p)) if p == q => Uniform::One(p),
                _ => Uniform::Mixed,
            };
        }
        Ok(())
    }

    /// Builds the node; `pad` applies the struct epsilon when there are no markers.
    fn finish(self, layout: Layout, pad: bool) -> Result<Datatype, TypeError> {
        if isize::try_from(self.size).is_err() {
            return Err(TypeError::Overflow);
        }
        let has_markers = self.marked.is_some();
        let (lb, mut ub) = self.marked.or(self.plain).unwrap_or((0, 0));
        if pad && !has_markers {
            let align = self.align as i128;
            let rem = (ub - lb).rem_euclid(align);
            if rem != 0 {
                ub += align - rem;
            }
        }
        let (true_lb, true_ub) = self.data.unwrap_or((0, 0));
        to_isize(ub - lb)?;
        to_isize(true_ub - true_lb)?;
        let node = Node {
            layout,
            size: self.size,
            elements: self.elements,
            lb: to_isize(lb)?,
            ub: to_isize(ub)?,
            true_lb: to_isize(true_lb)?,
            true_ub: to_isize(true_ub)?,
            has_markers,
            align: self.align,
            uniform: match self.uniform {
                Uniform::One(p) => Some(p),
                _ => None,
            },
            runs: None,
        };
        Ok(Datatype::with_cached_runs(node))
    }
}

impl Datatype {
    /// One element of a predefined C type.
    pub fn primitive(p: Primitive) -> Datatype {
        let size = p.size();
        Datatype(Arc::new(Node {
            layout: Layout::Primitive(p),
            size,
            elements: 1,
            lb: 0,
            ub: size as isize,
            true_lb: 0,
            true_ub: size as isize,
            has_markers: false,
            align: p.align(),
            uniform: Some(p),
            runs: Some(Box::new([Run { offset: 0, len: size }])),
        }))
    }

    /// A value-and-index pair type for MINLOC/MAXLOC, laid out as the C struct
    /// `{ value; index; }`: `index` at the first offset past `value` that suits its alignment,
    /// extent padded to the struct's alignment (`pair(Double, Int)` is `MPI_DOUBLE_INT`: size
    /// 12, extent 16).
    pub fn pair(value: Primitive, index: Primitive) -> Datatype {
        let second = value.size().next_multiple_of(index.align()) as isize;
        Datatype::create_struct(
            &[1, 1],
            &[0, second],
            &[Datatype::primitive(value), Datatype::primitive(index)],
        )
        .expect("a pair of primitives cannot overflow")
    }

    /// `count` copies of `old`, one extent apart (`MPI_Type_contiguous`).
    pub fn contiguous(count: usize, old: &Datatype) -> Result<Datatype, TypeError> {
        Datatype::hvector(1, count, 0, old)
    }

    /// `count` blocks of `blocklen` copies of `old`, block starts `stride` extents of `old`
    /// apart (`MPI_Type_vector`).
    pub fn vector(
        count: usize,
        blocklen: usize,
        stride: isize,
        old: &Datatype,
    ) -> Result<Datatype, TypeError> {
        let stride = stride.checked_mul(old.extent()).ok_or(TypeError::Overflow)?;
        Datatype::hvector(count, blocklen, stride, old)
    }

    /// `count` blocks of `blocklen` copies of `old`, block starts `stride` bytes apart
    /// (`MPI_Type_create_hvector`).
    pub fn hvector(
        count: usize,
        blocklen: usize,
        stride: isize,
        old: &Datatype,
    ) -> Result<Datatype, TypeError> {
        let mut s = Summary::new();
        let last = (count.max(1) as i128 - 1) * stride as i128;
        s.add(old, blocklen, count, last.min(0), last.max(0))?;
        let layout = Layout::Vector { count, blocklen, stride, child: old.clone() };
        s.finish(layout, false)
    }

    /// Blocks of copies of `old`, block `i` of `blocklens[i]` copies at `displs[i]` extents of
    /// `old` (`MPI_Type_indexed`).
    pub fn indexed(
        blocklens: &[usize],
        displs: &[isize],
        old: &Datatype,
    ) -> Result<Datatype, TypeError> {
        let bytes = displs
            .iter()
            .map(|&d| d.checked_mul(old.extent()).ok_or(TypeError::Overflow))
            .collect::<Result<Vec<_>, _>>()?;
        Datatype::hindexed(blocklens, &bytes, old)
    }

    /// Blocks of copies of `old`, block `i` of `blocklens[i]` copies at `displs[i]` bytes
    /// (`MPI_Type_create_hindexed`).
    pub fn hindexed(
        blocklens: &[usize],
        displs: &[isize],
        old: &Datatype,
    ) -> Result<Datatype, TypeError> {
        check_len("displacements", blocklens.len(), displs.len())?;
        let mut s = Summary::new();
        let mut blocks = Vec::new();
        for (&len, &displ) in blocklens.iter().zip(displs) {
            s.add(old, len, 1, displ as i128, displ as i128)?;
            if len > 0 {
                blocks.push(Block { displ, len });
            }
        }
        let layout = Layout::Indexed { blocks: blocks.into(), child: old.clone() };
        s.finish(layout, false)
    }

    /// Blocks of copies of different types, block `i` of `blocklens[i]` copies of `types[i]`
    /// at `displs[i]` bytes (`MPI_Type_create_struct`). Without markers, the extent is padded
    /// to the strictest alignment of the primitives inside.
    pub fn create_struct<T: Borrow<Datatype>>(
        blocklens: &[usize],
        displs: &[isize],
        types: &[T],
    ) -> Result<Datatype, TypeError> {
        check_len("displacements", blocklens.len(), displs.len())?;
        check_len("types", blocklens.len(), types.len())?;
        let mut s = Summary::new();
        let mut blocks = Vec::new();
        for ((&len, &displ), child) in blocklens.iter().zip(displs).zip(types) {
            let child = child.borrow();
            s.add(child, len, 1, displ as i128, displ as i128)?;
            if len > 0 {
                blocks.push(StructBlock { displ, len, child: child.clone() });
            }
        }
        s.finish(Layout::Struct { blocks: blocks.into() }, true)
    }

    /// The data of `old` with lower bound `lb` and extent `extent` (`MPI_Type_create_resized`).
    pub fn resized(old: &Datatype, lb: isize, extent: isize) -> Result<Datatype, TypeError> {
        let ub = lb.checked_add(extent).ok_or(TypeError::Overflow)?;
        let o = &*old.0;
        Ok(Datatype(Arc::new(Node {
            layout: Layout::Resized { child: old.clone() },
            size: o.size,
            elements: o.elements,
            lb,
            ub,
            true_lb: o.true_lb,
            true_ub: o.true_ub,
            has_markers: true,
            align: o.align,
            uniform: o.uniform,
            runs: o.runs.clone(),
        })))
    }

    /// Wraps `node` and caches its runs when it has few.
    fn with_cached_runs(node: Node) -> Datatype {
        let mut t = Datatype(Arc::new(node));
        let mut runs = Vec::new();
        let flow = t.for_each_run(1, |offset, len| {
            if runs.len() == MAX_CACHED_RUNS {
                return ControlFlow::Break(());
            }
            runs.push(Run { offset, len });
            ControlFlow::Continue(())
        });
        if flow.is_continue() {
            Arc::get_mut(&mut t.0).expect("a new node is not shared").runs = Some(runs.into());
        }
        t
    }
}

fn check_len(what: &'static str, expected: usize, got: usize) -> Result<(), TypeError> {
    if expected == got {
        Ok(())
    } else {
        Err(TypeError::LengthMismatch { what, expected, got })
    }
}

//! MPI datatype type maps: which bytes of a user buffer a message covers, and in which order.
//!
//! A [`Datatype`] is the tree the MPI type constructors build (contiguous, vector, hvector,
//! indexed, hindexed, struct, resized over [`Primitive`] leaves), kept as a tree: a vector of a
//! million blocks is one node, never a million entries. Packing walks the tree and emits the
//! dense byte runs of the type map in type-map order; runs that abut are merged, so a
//! contiguous type (or a contiguous of a contiguous) packs as one copy. Types with few runs
//! cache them, so the walk is short for the common small structs.
//!
//! Bounds follow the MPI standard (MPI-4.0, section 5.1):
//! - without markers, `lb` is the lowest displacement of any entry and `ub` the highest end;
//!   a type built with [`Datatype::create_struct`] pads its extent up to a multiple of the
//!   strictest alignment of the primitives inside (the standard's epsilon, chosen as MPICH
//!   does, so `MPI_DOUBLE_INT` has size 12 and extent 16);
//! - [`Datatype::resized`] sets explicit lb/ub markers; markers are sticky: once any part of a
//!   type carries them, its bounds come from the markers only, and no epsilon is added.
//!   (MPICH 4 differs here: it mixes marked and unmarked bounds and still pads.)
//! - entries of empty blocks (block length 0, or a child without entries or markers) do not
//!   count; a type without entries or markers has `lb = ub = 0`.
//!
//! The true bounds (`true_lb`, `true_ub`) span the bytes actually holding data; they are 0 for
//! a type of size 0.
//!
//! [`Datatype::elements`] and [`Datatype::count_of`] give the answers of `MPI_Get_elements` and
//! `MPI_Get_count`: `None` stands for `MPI_UNDEFINED`. A byte count that stops inside a
//! primitive is `None` for both (MPICH floors such counts for `MPI_Get_elements`; a message that
//! splits an element breaks the standard's type-matching rules, so the answer is ours to pick).
//!
//! Everything here is pure: no I/O, no allocation proportional to the number of blocks a
//! vector describes. Only [`Datatype::pack`], [`Datatype::unpack`] and their `_range`
//! variants touch memory, through raw pointers the caller vouches for.
//!
//! The leaves are in `primitive`, the constructors in `construct`, the walk over byte runs
//! with packing and unpacking in `pack`; this file holds the tree and the queries on it.

mod array;
mod construct;
mod external32;
mod pack;
mod primitive;

pub use array::{Distribution, Order};
pub use external32::ConversionError;
pub use primitive::Primitive;

use std::fmt;
use std::ops::{ControlFlow, Range};
use std::sync::Arc;

/// Most byte runs a type caches for one copy; types with more runs are walked each time.
const MAX_CACHED_RUNS: usize = 16;

/// Why a type constructor refused its arguments.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TypeError {
    /// The size, the number of elements or a bound does not fit the address space.
    #[error("datatype size or bounds overflow the address space")]
    Overflow,
    /// Two argument arrays that must be parallel have different lengths.
    #[error("{what} has {got} entries where {expected} were expected")]
    LengthMismatch {
        /// which argument array is short or long
        what: &'static str,
        /// length of the first array
        expected: usize,
        /// length of this array
        got: usize,
    },
    /// An argument the constructor cannot use (an array block outside its array, a process
    /// grid that does not hold the rank, ...).
    #[error("{0}")]
    BadArgument(String),
}

/// An MPI datatype: a type map (a sequence of primitives at byte displacements) with its
/// bounds. Cloning is cheap (the tree is shared).
#[derive(Clone)]
pub struct Datatype(Arc<Node>);

struct Node {
    layout: Layout,
    /// Bytes of data in one copy.
    size: usize,
    /// Primitive elements in one copy.
    elements: usize,
    lb: isize,
    ub: isize,
    true_lb: isize,
    true_ub: isize,
    /// Bounds come from explicit markers (set by `resized`), which stick through constructors.
    has_markers: bool,
    /// Strictest alignment of the primitives inside (1 when there are none).
    align: usize,
    /// The one primitive every element has, if there is exactly one.
    uniform: Option<Primitive>,
    /// Merged byte runs of one copy, relative to the copy's origin, in type-map order; `None`
    /// when there are more than [`MAX_CACHED_RUNS`].
    runs: Option<Box<[Run]>>,
}

/// A dense stretch of bytes: `len` bytes starting at `offset` from an origin.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Run {
    offset: isize,
    len: usize,
}

enum Layout {
    Primitive(Primitive),
    /// `count` blocks, block `i` at `i * stride` bytes, each `blocklen` copies of `child` laid
    /// `child.extent()` apart. Contiguous is one block; vector scales the stride by the extent.
    Vector {
        count: usize,
        blocklen: usize,
        stride: isize,
        child: Datatype,
    },
    /// Blocks of copies of `child` at byte displacements (empty blocks are dropped).
    Indexed {
        blocks: Box<[Block]>,
        child: Datatype,
    },
    /// Blocks of copies of different types at byte displacements (empty blocks are dropped).
    Struct {
        blocks: Box<[StructBlock]>,
    },
    /// The data of `child` under new bounds.
    Resized {
        child: Datatype,
    },
}

struct Block {
    displ: isize,
    len: usize,
}

struct StructBlock {
    displ: isize,
    len: usize,
    child: Datatype,
}

fn to_isize(v: i128) -> Result<isize, TypeError> {
    isize::try_from(v).map_err(|_| TypeError::Overflow)
}

impl Datatype {
    /// Bytes of data in one copy (`MPI_Type_size`).
    pub fn size(&self) -> usize {
        self.0.size
    }

    /// Distance from one copy to the next in a buffer (`MPI_Type_get_extent`); may be
    /// negative or smaller than the size after [`Datatype::resized`].
    pub fn extent(&self) -> isize {
        self.0.ub - self.0.lb
    }

    /// Lower bound.
    pub fn lb(&self) -> isize {
        self.0.lb
    }

    /// Upper bound.
    pub fn ub(&self) -> isize {
        self.0.ub
    }

    /// Whether the bounds were set explicitly ([`Datatype::resized`], or a child so made), and
    /// so hold in the types built from this one as MPI-1's bound markers did.
    pub fn has_markers(&self) -> bool {
        self.0.has_markers
    }

    /// Offset of the first byte of data (`MPI_Type_get_true_extent`); 0 for size 0.
    pub fn true_lb(&self) -> isize {
        self.0.true_lb
    }

    /// Span from the first to past the last byte of data; 0 for size 0.
    pub fn true_extent(&self) -> isize {
        self.0.true_ub - self.0.true_lb
    }

    /// Primitive elements in one copy.
    pub fn element_count(&self) -> usize {
        self.0.elements
    }

    /// The primitive, if this type is a bare primitive.
    pub fn as_primitive(&self) -> Option<Primitive> {
        match self.0.layout {
            Layout::Primitive(p) => Some(p),
            _ => None,
        }
    }

    /// The primitive every element has, if there is exactly one (a contiguous of doubles is
    /// `Double`); what a reduction needs to know.
    pub fn uniform_primitive(&self) -> Option<Primitive> {
        self.0.uniform
    }

    /// Whether `count` copies occupy exactly the first `count * size()` bytes of the buffer,
    /// in order, so the buffer can be sent or received as is. True for any type of size 0.
    pub fn is_contiguous(&self) -> bool {
        let n = &*self.0;
        n.size == 0
            || (self.extent() == n.size as isize
                && matches!(n.runs.as_deref(), Some([Run { offset: 0, .. }])))
    }

    /// Bytes `count` copies take once packed, if that fits a `usize`.
    pub fn packed_len(&self, count: usize) -> Option<usize> {
        count.checked_mul(self.0.size)
    }

    /// The byte range, relative to the buffer's base, holding the data of `count` copies;
    /// `None` when there is no data or the range overflows.
    pub fn true_span(&self, count: usize) -> Option<Range<isize>> {
        if count == 0 || self.0.size == 0 {
            return None;
        }
        let last = (count as i128 - 1) * self.extent() as i128;
        let lo = self.0.true_lb as i128 + last.min(0);
        let hi = self.0.true_ub as i128 + last.max(0);
        Some(to_isize(lo).ok()?..to_isize(hi).ok()?)
    }

    /// Number of primitive elements in the first `bytes` bytes of a buffer of copies of this
    /// type (`MPI_Get_elements`); `None` when `bytes` stops inside an element.
    pub fn elements(&self, bytes: usize) -> Option<usize> {
        let n = &*self.0;
        if n.size == 0 {
            return (bytes == 0).then_some(0);
        }
        let whole = (bytes / n.size).checked_mul(n.elements)?;
        let mut rest = bytes % n.size;
        let mut partial = 0;
        if rest > 0 {
            match self.prefix_elements(1, &mut rest, &mut partial) {
                ControlFlow::Break(false) => return None,
                ControlFlow::Break(true) | ControlFlow::Continue(()) => {}
            }
        }
        whole.checked_add(partial)
    }

    /// Number of whole copies in `bytes` bytes (`MPI_Get_count`); `None` when `bytes` is not a
    /// multiple of the size. A type of size 0 counts 0 copies in 0 bytes.
    pub fn count_of(&self, bytes: usize) -> Option<usize> {
        match self.0.size {
            0 => (bytes == 0).then_some(0),
            size => bytes.is_multiple_of(size).then_some(bytes / size),
        }
    }

    /// Counts the elements of up to `copies` copies that fit in `rest` bytes, type-map order.
    /// Breaks with `true` when `rest` ran out on an element boundary, `false` inside one.
    fn prefix_elements(
        &self,
        copies: usize,
        rest: &mut usize,
        acc: &mut usize,
    ) -> ControlFlow<bool> {
        let n = &*self.0;
        if n.size == 0 || copies == 0 {
            return ControlFlow::Continue(());
        }
        let whole = (*rest / n.size).min(copies);
        *rest -= whole * n.size;
        *acc += whole * n.elements;
        if whole == copies {
            return if *rest == 0 { ControlFlow::Break(true) } else { ControlFlow::Continue(()) };
        }
        if *rest == 0 {
            return ControlFlow::Break(true);
        }
        // The next copy is only partly there.
        match &n.layout {
            Layout::Primitive(_) => return ControlFlow::Break(false),
            Layout::Vector { count, blocklen, child, .. } => {
                child.prefix_elements(count * blocklen, rest, acc)?
            }
            Layout::Indexed { blocks, child } => {
                for block in blocks.iter() {
                    child.prefix_elements(block.len, rest, acc)?;
                }
            }
            Layout::Struct { blocks } => {
                for block in blocks.iter() {
                    block.child.prefix_elements(block.len, rest, acc)?;
                }
            }
            Layout::Resized { child } => child.prefix_elements(1, rest, acc)?,
        }
        unreachable!("a partial copy ends inside the copy")
    }
}

impl fmt::Debug for Datatype {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let n = &*self.0;
        write!(f, "{} {{ size: {}, lb: {}, extent: {}", self.kind(), n.size, n.lb, self.extent())?;
        write!(f, ", true_lb: {}, true_extent: {} }}", n.true_lb, self.true_extent())
    }
}

impl Datatype {
    /// One-line description of the constructor, for debugging output.
    fn kind(&self) -> String {
        match &self.0.layout {
            Layout::Primitive(p) => format!("{p:?}"),
            Layout::Vector { count, blocklen, stride, child } => {
                format!("hvector({count} x {blocklen}, stride {stride}, {})", child.kind())
            }
            Layout::Indexed { blocks, child } => {
                format!("hindexed({} blocks, {})", blocks.len(), child.kind())
            }
            Layout::Struct { blocks } => format!("struct({} blocks)", blocks.len()),
            Layout::Resized { child } => format!("resized({})", child.kind()),
        }
    }
}

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_array;

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

use std::borrow::Borrow;
use std::fmt;
use std::ops::{ControlFlow, Range};
use std::sync::Arc;

/// Most byte runs a type caches for one copy; types with more runs are walked each time.
const MAX_CACHED_RUNS: usize = 16;

/// A predefined C datatype of the MPI standard: one element of a basic C type.
///
/// Sizes and alignments are those of x86_64 Linux (LP64, 16-byte `long double`, 4-byte
/// `wchar_t`). The pair types of MINLOC/MAXLOC are not primitives; see [`Datatype::pair`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Primitive {
    /// `char` (`MPI_CHAR`)
    Char,
    /// `signed char` (`MPI_SIGNED_CHAR`)
    SignedChar,
    /// `unsigned char` (`MPI_UNSIGNED_CHAR`)
    UnsignedChar,
    /// an uninterpreted byte (`MPI_BYTE`)
    Byte,
    /// `wchar_t` (`MPI_WCHAR`)
    WChar,
    /// `short` (`MPI_SHORT`)
    Short,
    /// `unsigned short` (`MPI_UNSIGNED_SHORT`)
    UnsignedShort,
    /// `int` (`MPI_INT`)
    Int,
    /// `unsigned` (`MPI_UNSIGNED`)
    Unsigned,
    /// `long` (`MPI_LONG`)
    Long,
    /// `unsigned long` (`MPI_UNSIGNED_LONG`)
    UnsignedLong,
    /// `long long` (`MPI_LONG_LONG_INT`, `MPI_LONG_LONG`)
    LongLong,
    /// `unsigned long long` (`MPI_UNSIGNED_LONG_LONG`)
    UnsignedLongLong,
    /// `float` (`MPI_FLOAT`)
    Float,
    /// `double` (`MPI_DOUBLE`)
    Double,
    /// `long double` (`MPI_LONG_DOUBLE`): x87 extended precision in 16 bytes
    LongDouble,
    /// a byte of packed data (`MPI_PACKED`)
    Packed,
    /// `int8_t` (`MPI_INT8_T`)
    Int8,
    /// `int16_t` (`MPI_INT16_T`)
    Int16,
    /// `int32_t` (`MPI_INT32_T`)
    Int32,
    /// `int64_t` (`MPI_INT64_T`)
    Int64,
    /// `uint8_t` (`MPI_UINT8_T`)
    UInt8,
    /// `uint16_t` (`MPI_UINT16_T`)
    UInt16,
    /// `uint32_t` (`MPI_UINT32_T`)
    UInt32,
    /// `uint64_t` (`MPI_UINT64_T`)
    UInt64,
    /// `_Bool` (`MPI_C_BOOL`)
    CBool,
    /// `MPI_Aint` (`MPI_AINT`)
    Aint,
    /// `MPI_Offset` (`MPI_OFFSET`)
    Offset,
    /// `MPI_Count` (`MPI_COUNT`)
    Count,
    /// `float _Complex` (`MPI_C_FLOAT_COMPLEX`, `MPI_C_COMPLEX`)
    CFloatComplex,
    /// `double _Complex` (`MPI_C_DOUBLE_COMPLEX`)
    CDoubleComplex,
    /// `long double _Complex` (`MPI_C_LONG_DOUBLE_COMPLEX`)
    CLongDoubleComplex,
}

impl Primitive {
    /// Every primitive, in declaration order.
    pub const ALL: [Primitive; 32] = [
        Primitive::Char,
        Primitive::SignedChar,
        Primitive::UnsignedChar,
        Primitive::Byte,
        Primitive::WChar,
        Primitive::Short,
        Primitive::UnsignedShort,
        Primitive::Int,
        Primitive::Unsigned,
        Primitive::Long,
        Primitive::UnsignedLong,
        Primitive::LongLong,
        Primitive::UnsignedLongLong,
        Primitive::Float,
        Primitive::Double,
        Primitive::LongDouble,
        Primitive::Packed,
        Primitive::Int8,
        Primitive::Int16,
        Primitive::Int32,
        Primitive::Int64,
        Primitive::UInt8,
        Primitive::UInt16,
        Primitive::UInt32,
        Primitive::UInt64,
        Primitive::CBool,
        Primitive::Aint,
        Primitive::Offset,
        Primitive::Count,
        Primitive::CFloatComplex,
        Primitive::CDoubleComplex,
        Primitive::CLongDoubleComplex,
    ];

    /// Size of one element in bytes.
    pub const fn size(self) -> usize {
        use Primitive::*;
        match self {
            Char | SignedChar | UnsignedChar | Byte | Packed | Int8 | UInt8 | CBool => 1,
            Short | UnsignedShort | Int16 | UInt16 => 2,
            WChar | Int | Unsigned | Float | Int32 | UInt32 => 4,
            Long | UnsignedLong | LongLong | UnsignedLongLong | Double | Int64 | UInt64 | Aint
            | Offset | Count | CFloatComplex => 8,
            LongDouble | CDoubleComplex => 16,
            CLongDoubleComplex => 32,
        }
    }

    /// Alignment the C compiler gives the type; pads the extent of struct types.
    pub const fn align(self) -> usize {
        use Primitive::*;
        match self {
            CFloatComplex => 4,
            CDoubleComplex => 8,
            CLongDoubleComplex => 16,
            other => other.size(),
        }
    }
}

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

fn to_isize(v: i128) -> Result<isize, TypeError> {
    isize::try_from(v).map_err(|_| TypeError::Overflow)
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

    /// Calls `f(offset, len)` for each dense byte run of `count` copies, in type-map order,
    /// offsets relative to the buffer's base; adjacent runs are merged. Stops when `f` breaks.
    ///
    /// # Panics
    /// If `count * size()` overflows `usize`.
    pub fn for_each_run<F>(&self, count: usize, f: F) -> ControlFlow<()>
    where
        F: FnMut(isize, usize) -> ControlFlow<()>,
    {
        self.packed_len(count).expect("count * size overflows usize");
        let mut m = Merger { start: 0, len: 0, emit: f };
        self.walk(0, count, &mut m)?;
        m.finish()
    }

    /// Packs `count` copies laid out from `base` into `out`, which must be exactly
    /// `count * size()` bytes long.
    ///
    /// # Safety
    /// Every byte the type map of `count` copies covers (see [`Datatype::true_span`]) must be
    /// readable at `base` plus its offset.
    ///
    /// # Panics
    /// If `out.len()` differs from `count * size()`.
    pub unsafe fn pack(&self, base: *const u8, count: usize, out: &mut [u8]) {
        let total = self.packed_len(count).expect("count * size overflows usize");
        assert_eq!(out.len(), total, "pack: output length must be count * size");
        // SAFETY: forwarded from the caller.
        unsafe { self.pack_range(base, count, 0, out) }
    }

    /// Packs bytes `offset..offset + out.len()` of the packed form of `count` copies: a
    /// window of the stream, for pipelined transfers. Cost is proportional to the runs in the
    /// window plus one copy's runs, wherever the window starts.
    ///
    /// # Safety
    /// As for [`Datatype::pack`].
    ///
    /// # Panics
    /// If the window reaches past `count * size()`.
    pub unsafe fn pack_range(&self, base: *const u8, count: usize, offset: usize, out: &mut [u8]) {
        let dst = out.as_mut_ptr();
        self.transfer(count, offset, out.len(), |mem_off, pos, n| {
            // SAFETY: the caller vouches that the type map's bytes are readable from `base`;
            // `pos + n <= out.len()` is ensured by `transfer`; a packed buffer owned by us
            // cannot overlap user memory we only read.
            unsafe { std::ptr::copy_nonoverlapping(base.wrapping_offset(mem_off), dst.add(pos), n) }
        });
    }

    /// Unpacks `src`, a prefix of the packed form of `count` copies (a short message leaves
    /// the rest untouched), into the buffer at `base`.
    ///
    /// # Safety
    /// Every byte the type map of `count` copies covers must be writable at `base` plus its
    /// offset, and none of it may overlap `src`.
    ///
    /// # Panics
    /// If `src` is longer than `count * size()`.
    pub unsafe fn unpack(&self, src: &[u8], base: *mut u8, count: usize) {
        // SAFETY: forwarded from the caller.
        unsafe { self.unpack_range(src, base, count, 0) }
    }

    /// Unpacks `src` as bytes `offset..offset + src.len()` of the packed form of `count`
    /// copies into the buffer at `base`.
    ///
    /// # Safety
    /// As for [`Datatype::unpack`].
    ///
    /// # Panics
    /// If the window reaches past `count * size()`.
    pub unsafe fn unpack_range(&self, src: &[u8], base: *mut u8, count: usize, offset: usize) {
        let from = src.as_ptr();
        self.transfer(count, offset, src.len(), |mem_off, pos, n| {
            // SAFETY: the caller vouches that the type map's bytes are writable from `base` and
            // do not overlap `src`; `pos + n <= src.len()` is ensured by `transfer`.
            unsafe {
                std::ptr::copy_nonoverlapping(from.add(pos), base.wrapping_offset(mem_off), n)
            }
        });
    }

    /// Walks the runs that hold stream bytes `offset..offset + len` of `count` copies and calls
    /// `copy(memory offset, stream position - offset, bytes)` for each piece.
    fn transfer(
        &self,
        count: usize,
        offset: usize,
        len: usize,
        mut copy: impl FnMut(isize, usize, usize),
    ) {
        let total = self.packed_len(count).expect("count * size overflows usize");
        assert!(
            offset <= total && len <= total - offset,
            "window {offset}+{len} reaches past the {total} packed bytes"
        );
        if len == 0 {
            return;
        }
        assert!(self.true_span(count).is_some(), "the buffer span overflows isize");
        if self.is_contiguous() {
            copy(offset as isize, 0, len);
            return;
        }
        let size = self.0.size;
        let first = offset / size;
        let mut skip = offset % size;
        let mut pos = 0;
        let origin = (first as isize).wrapping_mul(self.extent());
        let mut m = Merger {
            start: 0,
            len: 0,
            emit: |mut off: isize, mut n: usize| {
                if skip > 0 {
                    if n <= skip {
                        skip -= n;
                        return ControlFlow::Continue(());
                    }
                    off = off.wrapping_add(skip as isize);
                    n -= skip;
                    skip = 0;
                }
                let n = n.min(len - pos);
                copy(off, pos, n);
                pos += n;
                if pos == len {
                    ControlFlow::Break(())
                } else {
                    ControlFlow::Continue(())
                }
            },
        };
        if self.walk(origin, count - first, &mut m).is_continue() {
            let _ = m.finish();
        }
    }

    /// Pushes the runs of `count` copies whose first copy starts at `origin`.
    fn walk<F>(&self, origin: isize, count: usize, m: &mut Merger<F>) -> ControlFlow<()>
    where
        F: FnMut(isize, usize) -> ControlFlow<()>,
    {
        let n = &*self.0;
        if n.size == 0 || count == 0 {
            return ControlFlow::Continue(());
        }
        let extent = self.extent();
        if let Some(runs) = n.runs.as_deref() {
            if let [run] = runs {
                if extent == n.size as isize {
                    return m.push(origin.wrapping_add(run.offset), count * n.size);
                }
            }
            for i in 0..count {
                let base = origin.wrapping_add((i as isize).wrapping_mul(extent));
                for run in runs {
                    m.push(base.wrapping_add(run.offset), run.len)?;
                }
            }
            return ControlFlow::Continue(());
        }
        for i in 0..count {
            let base = origin.wrapping_add((i as isize).wrapping_mul(extent));
            match &n.layout {
                Layout::Primitive(p) => m.push(base, p.size())?,
                Layout::Vector { count: blocks, blocklen, stride, child } => {
                    if let Some(run) = child.block_run(*blocklen) {
                        if *stride == run.len as isize {
                            // Every block abuts the next: one run for the whole vector.
                            m.push(base.wrapping_add(run.offset), run.len * blocks)?;
                            continue;
                        }
                    }
                    for b in 0..*blocks {
                        let at = base.wrapping_add((b as isize).wrapping_mul(*stride));
                        child.walk(at, *blocklen, m)?;
                    }
                }
                Layout::Indexed { blocks, child } => {
                    for block in blocks.iter() {
                        child.walk(base.wrapping_add(block.displ), block.len, m)?;
                    }
                }
                Layout::Struct { blocks } => {
                    for block in blocks.iter() {
                        block.child.walk(base.wrapping_add(block.displ), block.len, m)?;
                    }
                }
                Layout::Resized { child } => child.walk(base, 1, m)?,
            }
        }
        ControlFlow::Continue(())
    }

    /// The single run `len` copies form, relative to the first copy's origin, if they form one.
    fn block_run(&self, len: usize) -> Option<Run> {
        let n = &*self.0;
        match n.runs.as_deref() {
            Some([run]) if len <= 1 || self.extent() == n.size as isize => {
                Some(Run { offset: run.offset, len: len * n.size })
            }
            _ => None,
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

/// Joins runs that abut before handing them on.
struct Merger<F> {
    start: isize,
    len: usize,
    emit: F,
}

impl<F: FnMut(isize, usize) -> ControlFlow<()>> Merger<F> {
    #[inline]
    fn push(&mut self, offset: isize, len: usize) -> ControlFlow<()> {
        if len == 0 {
            return ControlFlow::Continue(());
        }
        if self.len > 0 && self.start.wrapping_add(self.len as isize) == offset {
            self.len += len;
            return ControlFlow::Continue(());
        }
        let (start, pending) = (self.start, self.len);
        self.start = offset;
        self.len = len;
        if pending > 0 {
            (self.emit)(start, pending)
        } else {
            ControlFlow::Continue(())
        }
    }

    fn finish(&mut self) -> ControlFlow<()> {
        let pending = std::mem::take(&mut self.len);
        if pending > 0 {
            (self.emit)(self.start, pending)
        } else {
            ControlFlow::Continue(())
        }
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

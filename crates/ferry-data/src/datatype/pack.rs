//! Walking a type map as dense byte runs, and packing and unpacking user buffers with them,
//! whole or a window at a time. The only code of the crate that follows raw pointers into
//! user buffers.

use std::ops::ControlFlow;

use super::{Datatype, Layout, Run};

impl Datatype {
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

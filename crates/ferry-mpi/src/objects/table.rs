//! Direct handle tables: a handle's bits say which table it belongs to and where in it the
//! object lives, so turning a handle into an object is a mask, a compare and an index, never
//! a hash.
//!
//! MPICH's handles (the ABI Ferry keeps) spend their top six bits on the kind of object and
//! its storage class; the low 26 bits are the implementation's. A [`Table`] splits those 26
//! bits into a slot index and a generation that changes each time the slot is reused, so a
//! freed handle is still refused (with the caller's error class) after its slot holds another
//! object. Predefined handles, whose values the ABI fixes, have fixed slots of their own, and
//! a few handles of fixed value made on demand (Fortran's parameterized types) sit in a small
//! side map. A second ABI face maps its own handle values onto the same slots.

use ferry_core::fastmap::FastMap;

/// The six bits that name a handle's kind and storage class.
const PREFIX: u32 = 0xfc00_0000;

struct Slot<T> {
    generation: u32,
    value: Option<T>,
}

pub struct Table<T> {
    /// The prefix of the handles this table hands out (`0xac000000` for requests, ...).
    prefix: u32,
    index_bits: u32,
    /// The low `index_bits` bits, and the generation's bits above them (shifted down).
    index_mask: u32,
    generation_mask: u32,
    slots: Vec<Slot<T>>,
    free: Vec<u32>,
    len: usize,
    /// The prefix of the predefined handles, and their objects by the low bits.
    builtin_prefix: u32,
    builtin: Vec<Option<T>>,
    /// Objects whose fixed handle values fit neither range.
    fixed: FastMap<i32, T>,
}

impl<T> Table<T> {
    /// A table handing out `prefix | generation << index_bits | index`; predefined handles are
    /// `builtin_prefix | i` (slot `i`).
    pub fn new(prefix: u32, index_bits: u32, builtin_prefix: u32) -> Table<T> {
        assert!(prefix & !PREFIX == 0 && builtin_prefix & !PREFIX == 0 && index_bits < 26, "a table's prefixes are the handles' top six bits");
        Table { prefix, index_bits, index_mask: (1 << index_bits) - 1, generation_mask: (1 << (26 - index_bits)) - 1, slots: Vec::new(), free: Vec::new(), len: 0, builtin_prefix, builtin: Vec::new(), fixed: FastMap::default() }
    }

    /// How many objects of this kind can live at once.
    pub fn capacity(&self) -> usize {
        1 << self.index_bits
    }

    /// Store `value` under a new handle.
    ///
    /// # Panics
    /// When [`capacity`](Self::capacity) objects live already: the handle's bits cannot name
    /// another (the boundary ends the job with this message).
    #[inline]
    pub fn add(&mut self, value: T) -> i32 {
        let index = match self.free.pop() {
            Some(i) => i as usize,
            None => {
                assert!(self.slots.len() < self.capacity(), "more than {} objects of one kind at once: the handles' bits cannot name more", self.capacity());
                self.slots.push(Slot { generation: 0, value: None });
                self.slots.len() - 1
            }
        };
        let mask = self.generation_mask;
        let s = &mut self.slots[index];
        // Generations run 1..=mask: no handle has generation and index both zero, so a
        // table may hand out handles in the storage class of a null handle (whose low bits
        // are zero) without ever handing out the null handle itself.
        s.generation = if s.generation >= mask { 1 } else { s.generation + 1 };
        s.value = Some(value);
        self.len += 1;
        (self.prefix | s.generation << self.index_bits | index as u32) as i32
    }

    /// Store `value` under the fixed handle `h`: a predefined one, or another of fixed value.
    pub fn insert(&mut self, h: i32, value: T) {
        let u = h as u32;
        if u & PREFIX == self.builtin_prefix {
            let i = (u & !PREFIX) as usize;
            if self.builtin.len() <= i {
                self.builtin.resize_with(i + 1, || None);
            }
            self.builtin[i] = Some(value);
        } else {
            assert!(u & PREFIX != self.prefix, "handle {h:#x} is one this table hands out, not a fixed one");
            self.fixed.insert(h, value);
        }
    }

    #[inline]
    fn slot(&self, u: u32) -> Option<usize> {
        let index = u & self.index_mask;
        let generation = (u >> self.index_bits) & self.generation_mask;
        let s = self.slots.get(index as usize)?;
        (s.generation == generation && s.value.is_some()).then_some(index as usize)
    }

    #[inline]
    pub fn get(&self, h: &i32) -> Option<&T> {
        let u = *h as u32;
        if u & PREFIX == self.prefix {
            let i = self.slot(u)?;
            return self.slots[i].value.as_ref();
        }
        if u & PREFIX == self.builtin_prefix {
            return self.builtin.get((u & !PREFIX) as usize).and_then(Option::as_ref);
        }
        self.get_fixed(u)
    }

    #[cold]
    fn get_fixed(&self, u: u32) -> Option<&T> {
        if self.fixed.is_empty() {
            return None;
        }
        self.fixed.get(&(u as i32))
    }

    #[inline]
    pub fn get_mut(&mut self, h: &i32) -> Option<&mut T> {
        let u = *h as u32;
        if u & PREFIX == self.prefix {
            let i = self.slot(u)?;
            return self.slots[i].value.as_mut();
        }
        if u & PREFIX == self.builtin_prefix {
            return self.builtin.get_mut((u & !PREFIX) as usize).and_then(Option::as_mut);
        }
        self.fixed.get_mut(h)
    }

    #[inline]
    pub fn contains_key(&self, h: &i32) -> bool {
        self.get(h).is_some()
    }

    /// Take the object out; its handle is refused from now on.
    #[inline]
    pub fn remove(&mut self, h: &i32) -> Option<T> {
        let u = *h as u32;
        let v = if u & PREFIX == self.prefix {
            let i = self.slot(u)?;
            self.free.push(i as u32);
            self.slots[i].value.take()
        } else if u & PREFIX == self.builtin_prefix {
            return self.builtin.get_mut((u & !PREFIX) as usize).and_then(Option::take);
        } else {
            return self.fixed.remove(h);
        };
        if v.is_some() {
            self.len -= 1;
        }
        v
    }

    /// [`remove`](Self::remove) for a handle of the kind this table makes (no predefined or
    /// fixed one), always inline: the completion of a request takes this way.
    #[inline(always)]
    pub fn remove_made(&mut self, h: i32) -> Option<T> {
        let u = h as u32;
        if u & PREFIX != self.prefix {
            return None;
        }
        let i = self.slot(u)?;
        self.len -= 1;
        self.free.push(i as u32);
        self.slots[i].value.take()
    }

    /// What `take` returns from the object, which then leaves the table (dropped where it
    /// lies, not moved out); with `None` it stays. One lookup for both.
    #[inline]
    pub fn remove_with<R>(&mut self, h: &i32, take: impl FnOnce(&mut T) -> Option<R>) -> Option<R> {
        let u = *h as u32;
        if u & PREFIX != self.prefix {
            let r = take(self.get_mut(h)?)?;
            self.remove(h);
            return Some(r);
        }
        let i = self.slot(u)?;
        let r = take(self.slots[i].value.as_mut()?)?;
        self.slots[i].value = None;
        self.free.push(i as u32);
        self.len -= 1;
        Some(r)
    }

    /// How many objects live under handles [`add`](Self::add) made (the predefined and
    /// fixed ones are not counted).
    pub fn len(&self) -> usize {
        self.len
    }

    /// Every object with its handle: the predefined ones first, then by slot.
    pub fn iter(&self) -> impl Iterator<Item = (i32, &T)> {
        let builtin = self.builtin.iter().enumerate().filter_map(|(i, v)| v.as_ref().map(|v| ((self.builtin_prefix | i as u32) as i32, v)));
        let made = self.slots.iter().enumerate().filter_map(|(i, s)| s.value.as_ref().map(|v| ((self.prefix | s.generation << self.index_bits | i as u32) as i32, v)));
        builtin.chain(made).chain(self.fixed.iter().map(|(h, v)| (*h, v)))
    }
}

impl<T> std::ops::Index<&i32> for Table<T> {
    type Output = T;
    fn index(&self, h: &i32) -> &T {
        self.get(h).expect("the handle was checked before")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table() -> Table<&'static str> {
        Table::new(0xac00_0000, 20, 0x6c00_0000)
    }

    #[test]
    fn handles_carry_the_prefix_and_find_their_object() {
        let mut t = table();
        let a = t.add("a");
        let b = t.add("b");
        assert_eq!(a as u32 & PREFIX, 0xac00_0000);
        assert_eq!((t.get(&a), t.get(&b)), (Some(&"a"), Some(&"b")));
        assert_eq!(t.len(), 2);
        assert_eq!(t[&b], "b");
    }

    #[test]
    fn a_freed_handle_is_refused_after_its_slot_is_reused() {
        let mut t = table();
        let a = t.add("a");
        assert_eq!(t.remove(&a), Some("a"));
        assert_eq!(t.get(&a), None);
        assert_eq!(t.remove_made(a), None, "gone");
        let b = t.add("b");
        assert_ne!(a, b, "same slot, another generation");
        assert_eq!(a & 0xfffff, b & 0xfffff, "the slot is reused");
        assert_eq!(t.get(&a), None);
        assert_eq!(t.remove(&a), None);
        assert_eq!(t.get(&b), Some(&"b"));
        assert_eq!(t.remove_made(0x6c00_0001), None, "not a made handle");
        assert_eq!((t.remove_made(b), t.len()), (Some("b"), 0));
        assert_eq!(t.remove_made(b), None);
    }

    #[test]
    fn remove_with_drops_what_it_took_from() {
        let mut t = table();
        let a = t.add("a");
        assert_eq!(t.remove_with(&a, |_| None::<u8>), None);
        assert_eq!(t.get(&a), Some(&"a"), "left in place");
        assert_eq!(t.remove_with(&a, |v| Some(v.len())), Some(1));
        assert_eq!((t.get(&a), t.len()), (None, 0));
        assert_eq!(t.remove_with(&a, |v| Some(v.len())), None, "a freed handle");
        let b = t.add("b");
        assert_eq!(a & 0xfffff, b & 0xfffff, "the slot went back to the free list");
    }

    #[test]
    fn generations_wrap_within_their_bits() {
        let mut t = table();
        let mut seen = std::collections::HashSet::new();
        // 20 index bits leave 6 for the generation, which runs 1..=63.
        for _ in 0..63 {
            let h = t.add("x");
            assert!(seen.insert(h), "63 reuses of one slot give 63 handles");
            assert_eq!(h as u32 & PREFIX, 0xac00_0000);
            t.remove(&h);
        }
    }

    #[test]
    fn no_handle_has_generation_and_index_zero() {
        let mut t: Table<u8> = Table::new(0x2c00_0000, 22, 0x6c00_0000);
        for _ in 0..40 {
            let h = t.add(1);
            assert_ne!(h, 0x2c00_0000, "the null handle of the storage class");
            assert_eq!(t.get(&0x2c00_0000), None);
            t.remove(&h);
        }
    }

    #[test]
    fn forged_and_foreign_handles_find_nothing() {
        let mut t = table();
        let a = t.add("a");
        for h in [a + 1, a ^ 0x0010_0000, 0x2c00_0000, 0x4400_0000, -1, 0] {
            assert_eq!(t.get(&h), None, "{h:#x}");
        }
    }

    #[test]
    fn fixed_handles_live_beside_the_made_ones() {
        let mut t = table();
        t.insert(0x6c00_0001, "builtin");
        t.insert(0x1234_5678, "fixed");
        let a = t.add("made");
        assert_eq!(t.get(&0x6c00_0001), Some(&"builtin"));
        assert_eq!(t.get(&0x6c00_0000), None);
        assert_eq!(t.get(&0x1234_5678), Some(&"fixed"));
        let mut all: Vec<_> = t.iter().collect();
        all.sort();
        let mut want = vec![(0x6c00_0001, &"builtin"), (0x1234_5678, &"fixed"), (a, &"made")];
        want.sort();
        assert_eq!(all, want);
        assert_eq!(t.len(), 1, "only the made one counts");
        assert_eq!(t.remove(&0x6c00_0001), Some("builtin"));
        assert_eq!(t.get(&0x6c00_0001), None);
        assert_eq!(t.remove(&a), Some("made"));
        assert_eq!(t.len(), 0);
    }

    #[test]
    #[should_panic(expected = "more than 4 objects")]
    fn a_full_table_says_so() {
        let mut t: Table<u8> = Table::new(0xac00_0000, 2, 0x6c00_0000);
        for _ in 0..5 {
            t.add(0);
        }
    }
}

//! Request storage: a slab of slots reused through a free list, so starting a request costs
//! no allocation and finding one costs an index. An id carries its slot's generation, so an
//! id whose request is gone (taken, or completed after `MPI_Request_free`) never finds the
//! slot's next occupant.

/// Slot index in the low 32 bits, generation in the next 31; the top bit is never set, so
/// that the engine can tell other kinds of ids apart by it.
pub type SlabId = u64;

struct Slot<T> {
    generation: u32,
    value: Option<T>,
}

pub struct Slab<T> {
    slots: Vec<Slot<T>>,
    free: Vec<u32>,
    len: usize,
}

impl<T> Default for Slab<T> {
    fn default() -> Self {
        Slab { slots: Vec::new(), free: Vec::new(), len: 0 }
    }
}

#[inline]
fn split(id: SlabId) -> (usize, u32) {
    ((id & 0xffff_ffff) as usize, (id >> 32) as u32)
}

impl<T> Slab<T> {
    #[inline(always)]
    pub fn insert(&mut self, value: T) -> SlabId {
        self.len += 1;
        let index = match self.free.pop() {
            Some(i) => i as usize,
            None => {
                self.slots.push(Slot { generation: 0, value: None });
                self.slots.len() - 1
            }
        };
        let s = &mut self.slots[index];
        // Generations start at 1, so that no id is ever 0, and stay below 2^31.
        s.generation = (s.generation.wrapping_add(1) & 0x7fff_ffff).max(1);
        s.value = Some(value);
        (u64::from(s.generation) << 32) | index as u64
    }

    #[inline]
    pub fn get(&self, id: SlabId) -> Option<&T> {
        let (i, g) = split(id);
        self.slots.get(i).filter(|s| s.generation == g).and_then(|s| s.value.as_ref())
    }

    #[inline]
    pub fn get_mut(&mut self, id: SlabId) -> Option<&mut T> {
        let (i, g) = split(id);
        self.slots.get_mut(i).filter(|s| s.generation == g).and_then(|s| s.value.as_mut())
    }

    #[inline]
    pub fn remove(&mut self, id: SlabId) -> Option<T> {
        let (i, g) = split(id);
        let s = self.slots.get_mut(i).filter(|s| s.generation == g)?;
        let v = s.value.take()?;
        self.free.push(i as u32);
        self.len -= 1;
        Some(v)
    }

    /// Remove the value when `take` returns something from it (what it returns), in one
    /// lookup; else leave it.
    #[inline]
    pub fn remove_if<R>(&mut self, id: SlabId, take: impl FnOnce(&mut T) -> Option<R>) -> Option<R> {
        let (i, g) = split(id);
        let s = self.slots.get_mut(i).filter(|s| s.generation == g)?;
        let r = take(s.value.as_mut()?)?;
        s.value = None;
        self.free.push(i as u32);
        self.len -= 1;
        Some(r)
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn iter(&self) -> impl Iterator<Item = (SlabId, &T)> {
        self.slots.iter().enumerate().filter_map(|(i, s)| s.value.as_ref().map(|v| ((u64::from(s.generation) << 32) | i as u64, v)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_of_removed_values_never_find_the_next_occupant() {
        let mut s = Slab::default();
        let a = s.insert("a");
        assert_eq!(s.get(a), Some(&"a"));
        assert_eq!(s.remove(a), Some("a"));
        let b = s.insert("b");
        assert_ne!(a, b, "same slot, new generation");
        assert_eq!(s.get(a), None);
        assert_eq!(s.remove(a), None);
        assert_eq!(s.get(b), Some(&"b"));
        assert_eq!(s.len(), 1);
        assert!(a != 0 && b != 0);
    }

    #[test]
    fn remove_if_removes_only_what_it_takes_from() {
        let mut s = Slab::default();
        let a = s.insert(Some(1));
        assert_eq!(s.remove_if(a, |_| None::<i32>), None);
        assert_eq!(s.get(a), Some(&Some(1)), "left");
        assert_eq!(s.remove_if(a, |v| v.take()), Some(1));
        assert_eq!((s.get(a), s.len()), (None, 0));
        assert_eq!(s.remove_if(a, |v| v.take()), None, "gone");
        let b = s.insert(Some(2));
        assert_ne!(a, b);
        assert_eq!(s.remove_if(a, |v| v.take()), None, "an old id finds nothing in the reused slot");
    }

    #[test]
    fn iterates_live_values_with_their_ids() {
        let mut s = Slab::default();
        let ids: Vec<_> = (0..5).map(|i| s.insert(i)).collect();
        s.remove(ids[2]);
        let seen: Vec<_> = s.iter().map(|(id, v)| (id, *v)).collect();
        assert_eq!(seen, vec![(ids[0], 0), (ids[1], 1), (ids[3], 3), (ids[4], 4)]);
    }
}

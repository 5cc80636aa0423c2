//! Copy on write for the parts of a state: a successor starts as a copy of its parent, and
//! most of it (every process but the one that stepped) never changes. A `Shared` part is
//! copied only when it is first written, so copying a state costs a reference count per
//! part instead of a deep copy.

use std::fmt;
use std::ops::{Deref, DerefMut};
use std::rc::Rc;

/// A value shared between states until one of them writes it (`DerefMut` copies it then).
/// Equality, hashing and `Debug` are the value's own.
#[derive(Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Shared<T>(Rc<T>);

impl<T> Shared<T> {
    #[must_use]
    pub fn new(v: T) -> Self {
        Shared(Rc::new(v))
    }

    /// Whether both are the one shared value (then they are equal without looking).
    #[must_use]
    pub fn same(a: &Self, b: &Self) -> bool {
        Rc::ptr_eq(&a.0, &b.0)
    }

    /// Whether another holder shares the value: then no holder can change it in place (a
    /// write copies), so it stays what it is for as long as it is held.
    #[must_use]
    pub fn is_shared(this: &Self) -> bool {
        Rc::strong_count(&this.0) > 1
    }

    /// Where the value lies: the same for every holder, and not reused while one holds it.
    #[must_use]
    pub fn addr(this: &Self) -> usize {
        Rc::as_ptr(&this.0).cast::<u8>() as usize
    }
}

/// A copy shares the value (whatever `T` is): it costs a reference count.
impl<T> Clone for Shared<T> {
    #[inline]
    fn clone(&self) -> Self {
        Shared(Rc::clone(&self.0))
    }
}

impl<T> Deref for Shared<T> {
    type Target = T;
    #[inline]
    fn deref(&self) -> &T {
        &self.0
    }
}

impl<T: Clone> DerefMut for Shared<T> {
    #[inline]
    fn deref_mut(&mut self) -> &mut T {
        Rc::make_mut(&mut self.0)
    }
}

impl<T: fmt::Debug> fmt::Debug for Shared<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl<T> From<T> for Shared<T> {
    fn from(v: T) -> Self {
        Shared::new(v)
    }
}

/// Something remembered of shared values, by identity: a slot per value, chosen by where the
/// value lies (direct-mapped: a later value takes an earlier one's slot). A slot holds the
/// value itself, so that its address is not reused by another value while it is remembered,
/// and, being shared, it cannot change in place meanwhile. (Values of the same kind lie at
/// least 16 bytes apart: the lowest four bits of an address say little.)
pub struct ByAddr<T, V> {
    slots: Vec<Option<(Shared<T>, V)>>,
}

impl<T, V> Default for ByAddr<T, V> {
    /// No slot yet: [`ByAddr::size`] makes them.
    fn default() -> Self {
        ByAddr { slots: Vec::new() }
    }
}

impl<T, V> ByAddr<T, V> {
    /// Makes `slots` empty slots (a power of two) if it has none yet.
    pub fn size(&mut self, slots: usize) {
        debug_assert!(slots.is_power_of_two());
        if self.slots.is_empty() {
            self.slots.resize_with(slots, || None);
        }
    }

    /// Forgets everything, keeping the slots.
    pub fn clear(&mut self) {
        self.slots.iter_mut().for_each(|s| *s = None);
    }

    /// What is remembered of `v` itself, if anything.
    #[must_use]
    pub fn get(&self, v: &Shared<T>) -> Option<&V> {
        match self.slots.get(self.slot(v))? {
            Some((k, x)) if Shared::same(k, v) => Some(x),
            _ => None,
        }
    }

    /// The slot of `v`, whatever it now holds (`None`: empty), to look at and to fill.
    /// The table must have slots.
    pub fn slot_mut(&mut self, v: &Shared<T>) -> &mut Option<(Shared<T>, V)> {
        let i = self.slot(v);
        &mut self.slots[i]
    }

    /// Remembers `x` of `v`, in place of what its slot held.
    pub fn put(&mut self, v: &Shared<T>, x: V) {
        *self.slot_mut(v) = Some((v.clone(), x));
    }

    fn slot(&self, v: &Shared<T>) -> usize {
        (Shared::addr(v) >> 4) & self.slots.len().wrapping_sub(1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn by_addr_remembers_a_value_itself_not_an_equal_one() {
        let mut t: ByAddr<u64, &str> = ByAddr::default();
        let (a, equal) = (Shared::new(7), Shared::new(7));
        assert_eq!(t.get(&a), None, "no slots yet");
        t.size(8);
        t.put(&a, "a");
        assert_eq!(t.get(&a), Some(&"a"));
        assert_eq!(t.get(&a.clone()), Some(&"a"), "a copy shares the value");
        assert_eq!(
            t.get(&equal),
            None,
            "an equal value elsewhere is another value"
        );
        // The slot holds the value: its address stays taken while it is remembered.
        assert!(Shared::is_shared(&a));
        t.clear();
        assert_eq!(t.get(&a), None);
        assert!(!Shared::is_shared(&a));
    }
}

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

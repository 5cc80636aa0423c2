//! Values held by processes, rows, keys and ghosts.

/// An interned string; `Sym(0)` is always `OK`, Redis's reply to a successful `SET`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Sym(pub u32);

impl Sym {
    /// `OK`, Redis's reply to a successful `SET`.
    pub const OK: Sym = Sym(0);
}

/// A process id. It is a value of the world (lock owners, Redis lock tokens), never a string,
/// so that a symmetry reduction can permute it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Pid(pub u16);

impl Pid {
    /// The process's place among the model's processes, from 0.
    #[must_use]
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Value {
    /// SQL NULL, Redis nil.
    #[default]
    Nil,
    Bool(bool),
    Int(i64),
    Str(Sym),
    Pid(Pid),
}

impl Value {
    /// Conditions: nil, false and 0 are false; everything else is true.
    #[must_use]
    pub fn truthy(self) -> bool {
        !matches!(self, Value::Nil | Value::Bool(false) | Value::Int(0))
    }
}

//! Which property a state breaks, if any.

use crate::exec::eval::{eval, Scope};
use crate::ir::{Model, PropertyKind};
use crate::world::process::Status;
use crate::world::value::Pid;
use crate::world::State;

/// Why a state is a counterexample.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Failure {
    /// Property number `0` (index into `Model::properties`) is false.
    Property(usize),
    /// A process stopped on a runtime error in the model.
    RuntimeError(Pid),
    /// No process can step, time cannot pass, and some process has not finished.
    Deadlock,
}

impl Failure {
    /// The name `expect violated …` uses.
    #[must_use]
    pub fn name(self, m: &Model) -> String {
        match self {
            Failure::Property(i) => m.properties[i].name.clone(),
            Failure::RuntimeError(_) => "no_runtime_error".into(),
            Failure::Deadlock => "deadlock".into(),
        }
    }
}

/// The failures of one state (not deadlock, which needs its successors), in priority order:
/// the expected property first, then declaration order, then runtime errors.
pub fn check(m: &Model, s: &State, out: &mut Vec<Failure>) {
    out.clear();
    let fin = s.is_final();
    let sc = Scope::global(m, s);
    for (i, p) in m.properties.iter().enumerate() {
        if (p.kind == PropertyKind::Final && !fin) || p.kind.is_liveness() {
            continue;
        }
        // A property that cannot be evaluated (nil arithmetic) counts as false.
        if !eval(&p.expr, &sc).is_ok_and(|v| v.truthy()) {
            out.push(Failure::Property(i));
        }
    }
    for (i, p) in s.procs.iter().enumerate() {
        if matches!(p.status, Status::Failed(_)) {
            out.push(Failure::RuntimeError(Pid(i as u16)));
        }
    }
}

/// The rank of a failure when several happen at the same depth: lower is reported first.
#[must_use]
pub fn rank(m: &Model, f: Failure) -> (u8, Failure) {
    let expected = match (&m.expect, f) {
        (crate::ir::Expect::Violated(name), Failure::Property(i)) => m.properties[i].name == *name,
        (crate::ir::Expect::Deadlock, Failure::Deadlock) => true,
        _ => false,
    };
    (u8::from(!expected), f)
}

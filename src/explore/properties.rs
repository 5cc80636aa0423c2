//! Which property a state breaks, if any.

use crate::exec::eval::{eval, Scope};
use crate::ir::{Expr, Model, PropertyKind};
use crate::world::db::Db;
use crate::world::process::Status;
use crate::world::shared::{ByAddr, Shared};
use crate::ir::value::Pid;
use crate::world::State;

/// Why a state is a counterexample.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Failure {
    /// Property number `0` (index into `Model::properties`) is false.
    Property(usize),
    /// Property number `0` cannot be evaluated in the state (nil compared with an integer, a
    /// division by zero): a mistake in the model, not a verdict about it.
    Unevaluable(usize),
    /// `reachable` property number `0` holds in no reachable state (the search covered them
    /// all): there is no path to show.
    Unreached(usize),
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
            Failure::Property(i) | Failure::Unevaluable(i) | Failure::Unreached(i) => {
                m.properties[i].name.clone()
            }
            Failure::RuntimeError(_) => "no_runtime_error".into(),
            Failure::Deadlock => "deadlock".into(),
        }
    }
}

/// Why property `i` cannot be evaluated in `s`, if it cannot.
#[must_use]
pub fn evaluation_error(m: &Model, s: &State, i: usize) -> Option<crate::world::process::RunError> {
    eval(&m.properties[i].expr, &Scope::global(m, s)).err()
}

/// The failures of one state (not deadlock, which needs its successors), in priority order:
/// the expected property first, then declaration order, then runtime errors.
pub fn check(m: &Model, s: &State, out: &mut Vec<Failure>) {
    out.clear();
    properties(m, s, out);
    runtime_errors(s, out);
}

fn properties(m: &Model, s: &State, out: &mut Vec<Failure>) {
    let fin = s.is_final();
    let sc = Scope::global(m, s);
    for (i, p) in m.properties.iter().enumerate() {
        let per_state = match p.kind {
            PropertyKind::Invariant => true,
            PropertyKind::Final => fin,
            PropertyKind::Reachable
            | PropertyKind::Eventually
            | PropertyKind::AlwaysEventually
            | PropertyKind::LeadsTo => false,
        };
        if !per_state {
            continue;
        }
        match eval(&p.expr, &sc) {
            Ok(v) if v.truthy() => {}
            Ok(_) => out.push(Failure::Property(i)),
            Err(_) => out.push(Failure::Unevaluable(i)),
        }
    }
}

fn runtime_errors(s: &State, out: &mut Vec<Failure>) {
    for (i, p) in s.procs.iter().enumerate() {
        if matches!(p.status, Status::Failed(_)) {
            out.push(Failure::RuntimeError(Pid(i as u16)));
        }
    }
}

/// [`check`] for the successors of states, one after another. Most steps leave the
/// database and the ghosts as they were (the database stays the very same shared value), and
/// when every property reads nothing else, their verdicts carry over from a state checked
/// lately with the same world.
pub struct Checker {
    /// Every safety property is an invariant over the database and ghosts only.
    world_only: bool,
    /// Worlds checked lately, by their database: its ghosts, and the properties that world
    /// breaks. Successors alternate between a few databases (the one of the state expanded,
    /// and those that steps made or the step memo handed out).
    known: ByAddr<Db, (Vec<i64>, Vec<Failure>)>,
}

/// Slots of [`Checker::known`].
const KNOWN: usize = 16;

impl Checker {
    #[must_use]
    pub fn new(m: &Model) -> Self {
        let world_only = m.properties.iter().all(|p| match p.kind {
            PropertyKind::Invariant => reads_world_only(&p.expr),
            PropertyKind::Final => false,
            _ => true, // liveness is not checked here
        });
        Checker {
            world_only,
            known: ByAddr::default(),
        }
    }

    /// The failures of `s`, as [`check`] finds them. Returns whether the properties'
    /// verdicts were remembered rather than evaluated.
    pub fn check(&mut self, m: &Model, s: &State, out: &mut Vec<Failure>) -> bool {
        out.clear();
        if !self.world_only {
            check(m, s, out);
            return false;
        }
        self.known.size(KNOWN);
        let slot = self.known.slot_mut(&s.db);
        let remembered = matches!(slot, Some((db, (ghosts, _)))
            if Shared::same(db, &s.db) && *ghosts == s.ghosts);
        if !remembered {
            match slot {
                // Becomes the world of `s`, in the buffers it has.
                Some((db, (ghosts, fails))) => {
                    db.clone_from(&s.db);
                    ghosts.clone_from(&s.ghosts);
                    fails.clear();
                    properties(m, s, fails);
                }
                None => {
                    let mut fails = Vec::new();
                    properties(m, s, &mut fails);
                    *slot = Some((s.db.clone(), (s.ghosts.clone(), fails)));
                }
            }
        }
        if let Some((_, (_, fails))) = slot {
            out.extend_from_slice(fails);
        }
        runtime_errors(s, out);
        remembered
    }
}

/// Whether an expression reads nothing but the database and ghosts. (Every kind of
/// expression is named, so that a new one must be placed on one side or the other.)
fn reads_world_only(e: &Expr) -> bool {
    let mut only = true;
    e.visit(&mut |x| {
        only &= match x {
            Expr::Lit(_)
            | Expr::Ghost(_)
            | Expr::Cell { .. }
            | Expr::Sum { .. }
            | Expr::Unary(..)
            | Expr::Binary(..) => true,
            Expr::Local(_)
            | Expr::Me
            | Expr::Column(_)
            | Expr::Now
            | Expr::Clock
            | Expr::Key { .. }
            | Expr::Rows { .. }
            | Expr::Count { .. }
            | Expr::Status { .. } => false,
        };
    });
    only
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A process finishing changes neither the database nor a ghost: a property that counts
    /// processes is checked afresh on every state, never carried over.
    #[test]
    fn a_property_over_processes_is_never_remembered() {
        let text = r#"model "Two clients finish"
about "Each client returns at once."
process client[2] {
  return "done"
}
invariant one_done: count(client, done) <= 1
expect violated one_done
"#;
        let model = crate::Model::from_str(text).unwrap_or_else(|e| panic!("{e}"));
        let m = model.ir();
        let mut s = State::initial(m);
        let (mut checker, mut got, mut want, mut succ) =
            (Checker::new(m), Vec::new(), Vec::new(), Vec::new());
        for _ in 0..3 {
            check(m, &s, &mut want);
            assert!(!checker.check(m, &s, &mut got));
            assert_eq!(got, want);
            if crate::exec::successors(m, &s, &mut succ) == 0 {
                break;
            }
            s = succ.swap_remove(0).1;
        }
        assert_eq!(got, vec![Failure::Property(0)], "both clients finished");
    }
}

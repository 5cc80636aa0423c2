//! Dead locals: a local that a process will write before it reads it again, on every way its
//! program can go from where it stands, is dead there: its value can no longer matter. The
//! search resets dead locals to nil in every state it keeps (the dead-variable reduction of
//! SPIN), so states that differ only in values nobody will read are one state. Properties do
//! not read locals, and counterexamples are replayed on the concrete states, so neither sees
//! the reset (docs/explorer.md).

use crate::ir::{Model, Op, OpKind, SqlStmt};
use crate::world::process::Proc;
use crate::world::shared::Shared;
use crate::ir::value::Value;
use crate::world::State;

/// Per process group and op, the locals that are dead when a process is about to run it.
pub struct Dead {
    by_group: Vec<Vec<Box<[u16]>>>,
}

impl Dead {
    /// `None` when no program has a local: the reduction would change nothing.
    #[must_use]
    pub fn of(m: &Model) -> Option<Self> {
        let by_group: Vec<Vec<Box<[u16]>>> = m
            .groups
            .iter()
            .map(|g| dead_per_op(&g.program.ops, g.program.locals.len()))
            .collect();
        // With any local at all, a finished process's locals are dead.
        let any = m.groups.iter().any(|g| !g.program.locals.is_empty());
        any.then_some(Dead { by_group })
    }

    /// Resets the dead locals of every process of `s` to nil: all of them once a process
    /// has finished, else those dead at its next op. A process that `s` shares with another
    /// holder is skipped: it is one of the state `s` came from, already cleared (every
    /// state the search keeps has been), or one a cache holds, which is as it was then.
    pub fn clear(&self, m: &Model, s: &mut State) {
        for (p, proc) in m.processes.iter().zip(&mut s.procs) {
            let group = &self.by_group[p.group];
            if Shared::is_shared(proc) {
                debug_assert!(stale(group, proc).is_none(), "a shared process is cleared");
                continue;
            }
            // Nothing to reset: the process is left as the step made it.
            let Some(dead) = stale(group, proc) else {
                continue;
            };
            let proc: &mut Proc = proc;
            if proc.status.finished() {
                proc.locals.iter_mut().for_each(|v| *v = Value::Nil);
            }
            for &l in dead {
                proc.locals[l as usize] = Value::Nil;
            }
        }
    }
}

/// The locals dead at `proc`'s next op (none once it has finished, when all are reset), if
/// one of them (or, finished, any local) is not nil yet; `dead` is its group's table.
fn stale<'d>(dead: &'d [Box<[u16]>], proc: &Proc) -> Option<&'d [u16]> {
    if proc.status.finished() {
        return proc
            .locals
            .iter()
            .any(|&v| v != Value::Nil)
            .then_some(&[][..]);
    }
    let dead: &[u16] = dead.get(proc.pc as usize).map_or(&[], |d| d);
    dead.iter()
        .any(|&l| proc.locals[l as usize] != Value::Nil)
        .then_some(dead)
}

/// The edges out of op `pc`, each given to `edge` as where control goes and the locals it
/// certainly writes on the way. A SQL statement that completes writes its `into` locals (a
/// SELECT all of them, nil without a row; a count goes to the first) and its error local
/// (nil); a caught error writes only the error local. A Redis command writes its `into`.
/// Other writes are not counted, which only keeps a local alive longer.
fn edges(op: &Op, pc: usize, edge: &mut dyn FnMut(usize, &[u16])) {
    match &op.kind {
        OpKind::Jump(t) => edge(*t as usize, &[]),
        OpKind::JumpUnless { target, .. } => {
            edge(pc + 1, &[]);
            edge(*target as usize, &[]);
        }
        OpKind::Return { .. } | OpKind::Raise { .. } => {}
        OpKind::Assign { local, .. } | OpKind::Pick { local, .. } => edge(pc + 1, &[*local]),
        OpKind::Sql {
            stmt,
            into,
            on_error,
        } => {
            let mut writes: Vec<u16> = match stmt {
                SqlStmt::Select { .. } => into.clone(),
                SqlStmt::Update { .. } | SqlStmt::Insert { .. } | SqlStmt::Delete { .. } => {
                    into.first().copied().into_iter().collect()
                }
                SqlStmt::Begin { .. } | SqlStmt::Commit | SqlStmt::Rollback => Vec::new(),
            };
            if let Some(h) = on_error {
                writes.push(h.local);
                edge(h.target.map_or(pc + 1, |t| t as usize), &[h.local]);
            }
            edge(pc + 1, &writes);
        }
        OpKind::Redis { into, .. } | OpKind::AwaitRedis { into, .. } => {
            edge(pc + 1, into.as_slice());
        }
        // What an `atomic` body writes is not counted (it stays alive longer: safe); the
        // others write no local.
        OpKind::SetGhost { .. }
        | OpKind::Work { .. }
        | OpKind::Sleep { .. }
        | OpKind::SleepFor { .. }
        | OpKind::Atomic { .. }
        | OpKind::WatchdogStart { .. }
        | OpKind::WatchdogStop
        | OpKind::Lock { .. }
        | OpKind::Unlock { .. } => edge(pc + 1, &[]),
    }
}

/// Sets the bits (in `row`) of the locals op `op` reads: those in its expressions, and the
/// code a `raise` re-raises.
fn reads(op: &Op, row: &mut [u64]) {
    op.kind.exprs(&mut |e| {
        e.visit(&mut |x| {
            if let crate::ir::Expr::Local(l) = x {
                set(row, *l);
            }
        });
    });
    if let OpKind::Raise { local } = op.kind {
        set(row, local);
    }
}

fn set(row: &mut [u64], l: u16) {
    row[usize::from(l) / 64] |= 1 << (l % 64);
}

/// Backward liveness over the op list, to a fixed point: a local is live before an op when
/// the op reads it, or when it is live after some edge that does not write it. Sets of
/// locals are bit rows of `w` words: one row per op in `read` (what it reads) and `live`
/// (plus one for the end of the program), one per edge in `kill` (what it writes).
fn dead_per_op(ops: &[Op], locals: usize) -> Vec<Box<[u16]>> {
    let (n, w) = (ops.len(), locals.div_ceil(64).max(1));
    let mut read = vec![0u64; n * w];
    // Per op, its edges: `(to, kill row)`, the ops' edges one after another.
    let (mut out, mut first) = (Vec::new(), Vec::with_capacity(n + 1));
    let mut kill: Vec<u64> = Vec::new();
    for (pc, op) in ops.iter().enumerate() {
        reads(op, &mut read[pc * w..(pc + 1) * w]);
        first.push(out.len());
        edges(op, pc, &mut |to, writes| {
            let row = kill.len();
            kill.resize(row + w, 0);
            writes.iter().for_each(|&l| set(&mut kill[row..row + w], l));
            out.push((to.min(n), row));
        });
    }
    first.push(out.len());
    let mut live = vec![0u64; (n + 1) * w];
    let mut changed = true;
    while changed {
        changed = false;
        for pc in (0..n).rev() {
            for k in 0..w {
                let mut now = read[pc * w + k];
                for &(to, row) in &out[first[pc]..first[pc + 1]] {
                    now |= live[to * w + k] & !kill[row + k];
                }
                changed |= now != live[pc * w + k];
                live[pc * w + k] = now;
            }
        }
    }
    (0..n)
        .map(|pc| {
            let row = &live[pc * w..(pc + 1) * w];
            (0..locals as u16)
                .filter(|&l| row[usize::from(l) / 64] & (1 << (l % 64)) == 0)
                .collect()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::Expr;

    /// The program of the model's first group, and its dead locals per op.
    fn analysed(text: &str) -> (crate::ir::Program, Vec<Box<[u16]>>) {
        let m = crate::Model::from_str(text).unwrap_or_else(|e| panic!("{e}"));
        let p = m.ir().groups[0].program.clone();
        let dead = dead_per_op(&p.ops, p.locals.len());
        (p, dead)
    }

    fn local(p: &crate::ir::Program, name: &str) -> u16 {
        let i = p
            .locals
            .iter()
            .position(|l| l.trim_start_matches('$') == name);
        i.unwrap_or_else(|| panic!("no local {name} in {:?}", p.locals)) as u16
    }

    /// Whether a local is dead before every op that `which` picks (and there is one).
    fn dead_at(
        p: &crate::ir::Program,
        dead: &[Box<[u16]>],
        which: &dyn Fn(&Op) -> bool,
        l: u16,
    ) -> bool {
        let at: Vec<usize> = (0..p.ops.len()).filter(|&pc| which(&p.ops[pc])).collect();
        assert!(!at.is_empty(), "no such op");
        at.iter().all(|&pc| dead[pc].contains(&l))
    }

    fn reads_local(op: &Op, l: u16) -> bool {
        let mut yes = false;
        op.kind
            .exprs(&mut |e| e.visit(&mut |x| yes |= matches!(x, Expr::Local(k) if *k == l)));
        yes
    }

    const HEAD: &str = "model \"m\"\nabout \"a\"\ndb postgres\n\
                        table sku (id int primary key, stock int)\nrow sku (1, 2)\nghost sold = 0\n";

    #[test]
    fn a_read_value_lives_from_its_read_to_its_last_use() {
        let (p, dead) = analysed(&format!(
            "{HEAD}process c[2] {{
               repeat 3 {{
                 select stock from sku where id = 1 into $s
                 if $s = 0 {{ return \"sold out\" }}
                 update sku set stock = $s - 1 where id = 1 and stock = $s into $n
                 if $n = 1 {{ sold += 1; return \"bought\" }}
               }}
             }}
             invariant i: sold >= 0\nexpect holds\n"
        ));
        let (s, n) = (local(&p, "s"), local(&p, "n"));
        let select = |op: &Op| {
            matches!(
                &op.kind,
                OpKind::Sql {
                    stmt: SqlStmt::Select { .. },
                    ..
                }
            )
        };
        let update = |op: &Op| {
            matches!(
                &op.kind,
                OpKind::Sql {
                    stmt: SqlStmt::Update { .. },
                    ..
                }
            )
        };
        let test_s = |op: &Op| matches!(op.kind, OpKind::JumpUnless { .. }) && reads_local(op, s);
        let test_n = |op: &Op| matches!(op.kind, OpKind::JumpUnless { .. }) && reads_local(op, n);
        // Before the read both are dead: the read writes $s, the update writes $n.
        assert!(dead_at(&p, &dead, &select, s) && dead_at(&p, &dead, &select, n));
        assert!(!dead_at(&p, &dead, &test_s, s) && dead_at(&p, &dead, &test_s, n));
        assert!(!dead_at(&p, &dead, &update, s) && dead_at(&p, &dead, &update, n));
        // After the update only the count matters: the next attempt reads the stock again.
        assert!(dead_at(&p, &dead, &test_n, s) && !dead_at(&p, &dead, &test_n, n));
    }

    #[test]
    fn a_caught_error_does_not_write_the_into_locals() {
        // On an error the select binds only $e: the $v set before it is still read after.
        let (p, dead) = analysed(&format!(
            "{HEAD}process c[1] {{
               $v = 5
               select stock from sku where id = 1 into $v catch $e
               sold = $v
             }}
             invariant i: sold >= 0\nexpect holds\n"
        ));
        let (v, e) = (local(&p, "v"), local(&p, "e"));
        let select = |op: &Op| matches!(op.kind, OpKind::Sql { .. });
        assert!(!dead_at(&p, &dead, &select, v), "{dead:?}");
        assert!(dead_at(&p, &dead, &select, e));
        // Nothing reads $e: it is dead everywhere.
        assert!((0..p.ops.len()).all(|pc| dead[pc].contains(&e)));
    }

    #[test]
    fn locals_past_the_first_word_of_bits_are_tracked_too() {
        // 70 locals: the sets take two 64-bit words.
        let sets: String = (0..70).map(|i| format!("$v{i} = {i}\n")).collect();
        let (p, dead) = analysed(&format!(
            "{HEAD}process c[1] {{\n{sets}sold = $v69 + $v0\n}}\ninvariant i: sold >= 0\nexpect holds\n"
        ));
        let (first, last) = (local(&p, "v0"), local(&p, "v69"));
        assert!(last >= 64, "{last}");
        let writes =
            |l: u16| move |op: &Op| matches!(op.kind, OpKind::Assign { local, .. } if local == l);
        // Each is dead until it is written, and alive from then to the sum.
        assert!(dead_at(&p, &dead, &writes(last), last));
        assert!(!dead_at(&p, &dead, &writes(last), first));
        let sum = |op: &Op| matches!(op.kind, OpKind::SetGhost { .. });
        assert!(!dead_at(&p, &dead, &sum, last) && !dead_at(&p, &dead, &sum, first));
        let unread = local(&p, "v65");
        assert!((0..p.ops.len()).all(|pc| dead[pc].contains(&unread)));
    }

    #[test]
    fn clearing_resets_a_finished_process_and_the_dead_locals_of_a_running_one() {
        use crate::world::process::Status;
        let m = crate::Model::from_str(&format!(
            "{HEAD}process c[2] {{
               select stock from sku where id = 1 into $s
               sold = $s
             }}
             invariant i: sold >= 0\nexpect holds\n"
        ))
        .unwrap_or_else(|e| panic!("{e}"));
        let m = m.ir();
        let d = Dead::of(m).expect("the model has a local");
        let mut s = State::initial(m);
        for p in &mut s.procs {
            p.locals[0] = Value::Int(2);
        }
        // Process 0 has finished; process 1 stands before the read, which writes $s.
        s.procs[0].status = Status::Done(None);
        d.clear(m, &mut s);
        assert_eq!(&s.procs[0].locals[..], &[Value::Nil]);
        assert_eq!(&s.procs[1].locals[..], &[Value::Nil]);
        // Before the assignment $s is alive: it stays.
        s.procs[1].locals[0] = Value::Int(2);
        s.procs[1].pc += 1;
        d.clear(m, &mut s);
        assert_eq!(&s.procs[1].locals[..], &[Value::Int(2)]);
    }
}

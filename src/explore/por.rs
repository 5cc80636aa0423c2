//! Partial-order reduction by singleton ample sets: when a process's next step touches only
//! what is private to it — a Redis key no other process names, the mutex of an instance it
//! runs alone on, its own locals and timers — and no property can see it, that step is taken
//! alone and its interleavings with every other step are skipped.
//!
//! Soundness for invariants, `final` properties and deadlocks (docs/explorer.md, "Partial-
//! order reduction"): the step is independent of every transition another process or the
//! environment can take while it waits (C1), invisible to every property (C2), and the search
//! takes it alone only when it leads to a state not visited yet (the cycle proviso C3, in
//! `bfs`). Liveness models are searched without it.

use crate::exec::observe::{Event, Footprint};
use crate::exec::{step, Choice};
use crate::ir::{Expr, FaultKind, Model, OpKind, RedisCmd, Timing};
use crate::world::process::Status;
use crate::ir::value::{Pid, Sym};
use crate::world::State;

/// What is private to whom, computed once per model.
#[derive(Debug)]
pub struct Por {
    /// Per process: whether its steps may be taken alone at all (no fault can strike it or
    /// its instance, no property reads its status).
    eligible: Vec<bool>,
    /// Per process: the Redis keys only it names.
    keys: Vec<Vec<Sym>>,
    /// Per process: it runs alone on its instance, so its mutexes are its own.
    alone: Vec<bool>,
    /// Per process and program position: whether a step starting there can be private at
    /// all (a static over-approximation; `ample` confirms it by running the step).
    may: Vec<Vec<bool>>,
}

impl Por {
    /// `None` when no step of the model can ever be private (then the reduction costs
    /// nothing), or when time may pass between any two steps (`timing async`).
    #[must_use]
    pub fn of(m: &Model) -> Option<Por> {
        if m.timing == Timing::Async {
            return None;
        }
        let n = m.processes.len();
        let mut on_instance = vec![0usize; m.instances.len()];
        for p in &m.processes {
            on_instance[p.instance] += 1;
        }
        let alone: Vec<bool> = m
            .processes
            .iter()
            .map(|p| on_instance[p.instance] == 1)
            .collect();
        let struck: Vec<bool> = (0..n).map(|p| struck(m, p)).collect();
        let watched = watched(m);
        let eligible: Vec<bool> = (0..n)
            .map(|p| {
                let instance = m.processes[p].instance;
                let faulted = (0..n).any(|q| m.processes[q].instance == instance && struck[q]);
                !faulted
                    && !watched.pids.contains(&p)
                    && !watched.groups.contains(&m.processes[p].group)
            })
            .collect();
        let named: Vec<Vec<Sym>> = (0..n).map(|p| keys_named(m, p)).collect();
        // A watchdog's renewals are the environment's steps on its key: never private.
        let renewed: Vec<Sym> = m
            .groups
            .iter()
            .flat_map(|g| &g.program.ops)
            .filter_map(|op| match op.kind {
                OpKind::WatchdogStart { key, .. } => Some(key),
                OpKind::Assign { .. }
                | OpKind::SetGhost { .. }
                | OpKind::Jump(_)
                | OpKind::JumpUnless { .. }
                | OpKind::Return { .. }
                | OpKind::Work { .. }
                | OpKind::Sleep { .. }
                | OpKind::SleepFor { .. }
                | OpKind::Sql { .. }
                | OpKind::Redis { .. }
                | OpKind::AwaitRedis { .. }
                | OpKind::Atomic { .. }
                | OpKind::Raise { .. }
                | OpKind::Pick { .. }
                | OpKind::WatchdogStop
                | OpKind::Lock { .. }
                | OpKind::Unlock { .. } => None,
            })
            .collect();
        let server_env = m.redis.iter().any(|r| r.replicas > 0)
            || m.faults.iter().any(|f| {
                matches!(
                    f.kind,
                    FaultKind::Failover { .. }
                        | FaultKind::ClockJump { .. }
                        | FaultKind::Restart { .. }
                        | FaultKind::Partition { .. }
                )
            });
        let keys: Vec<Vec<Sym>> = (0..n)
            .map(|p| {
                if server_env {
                    return Vec::new();
                }
                named[p]
                    .iter()
                    .copied()
                    .filter(|k| !watched.keys.contains(k) && !renewed.contains(k))
                    .filter(|k| (0..n).all(|q| q == p || !named[q].contains(k)))
                    .collect()
            })
            .collect();
        // Interchangeable processes (one program, the same private keys, alone or not)
        // get the same answers: each is worked out once.
        let same = |p: usize, q: usize| {
            m.processes[p].group == m.processes[q].group
                && (&keys[p], alone[p], eligible[p]) == (&keys[q], alone[q], eligible[q])
        };
        let mut may: Vec<Vec<bool>> = Vec::with_capacity(n);
        for p in 0..n {
            let known = (0..p).find(|&q| same(p, q)).map(|q| may[q].clone());
            may.push(known.unwrap_or_else(|| {
                let ops = &m.groups[m.processes[p].group].program.ops;
                let allowed = |op: &crate::ir::Op| allowed(op, &keys[p], alone[p]);
                (0..ops.len())
                    .map(|pc| eligible[p] && may_be_private(ops, pc, &allowed))
                    .collect()
            }));
        }
        let useful = may.iter().any(|v| v.iter().any(|&b| b));
        useful.then_some(Por {
            eligible,
            keys,
            alone,
            may,
        })
    }

    /// The index in `succ` (the transitions of `s`, in choice order) of a step that may be
    /// taken alone, if any: the first eligible process whose next step is private.
    #[must_use]
    pub fn ample(&self, m: &Model, s: &State, succ: &[(Choice, State)]) -> Option<usize> {
        succ.iter().position(|(c, n)| match *c {
            Choice::Proc(p) => {
                self.eligible[p.index()]
                    && self.may[p.index()]
                        .get(s.procs[p.index()].pc as usize)
                        .copied()
                        .unwrap_or(false)
                    && !matches!(n.procs[p.index()].status, Status::Failed(_))
                    && self.private_step(m, s, p)
            }
            // Timers, time and faults are the environment's: never taken alone.
            Choice::Check(_)
            | Choice::Timeout(_)
            | Choice::Tick
            | Choice::Renew(_)
            | Choice::Resume(_)
            | Choice::Fault { .. }
            | Choice::Replicate(_)
            | Choice::Failover { .. }
            | Choice::ServerFault { .. }
            | Choice::Partition { .. }
            | Choice::Drift { .. }
            | Choice::Finish(_)
            | Choice::Pass(_)
            | Choice::Restart(_)
            // A pick is the process's, but many values at once: never taken alone.
            | Choice::Pick { .. } => false,
        })
    }

    /// Whether `p`'s next step in `s` touches nothing but what is private to `p`: replays
    /// the step with a recording observer and accepts only the events listed here.
    fn private_step(&self, m: &Model, s: &State, p: Pid) -> bool {
        let mut rec = Footprint::default();
        if step::step(m, s, p, &mut rec).is_none() {
            return false;
        }
        let key = |k: &Sym| self.keys[p.index()].contains(k);
        rec.events.iter().all(|e| match e {
            Event::At { .. }
            | Event::Delay { .. }
            | Event::Finished { .. }
            | Event::Picked { .. } => true,
            Event::Redis { cmd, .. } => {
                !matches!(cmd, RedisCmd::Wait { .. } | RedisCmd::GetReplica { .. })
                    && key(&cmd.key())
            }
            Event::KeySet { key: k, .. }
            | Event::KeyTtl { key: k, .. }
            | Event::KeyDeleted { key: k, .. }
            | Event::KeyExpired { key: k, .. } => key(k),
            Event::ServerRestarted { .. }
            | Event::Partitioned { .. }
            | Event::Reachable { .. }
            | Event::Unreached { .. } => false,
            Event::Lock { .. } | Event::Unlock { .. } => self.alone[p.index()],
            // Anything else another process or a property could see.
            Event::Sql { .. }
            | Event::Waits { .. }
            | Event::SetGhost { .. }
            | Event::ReplyLost { .. }
            | Event::Drift { .. }
            | Event::EndedEarly { .. }
            | Event::Restarted { .. }
            | Event::Failed(_)
            | Event::Uncaught { .. }
            | Event::RowCommitted { .. }
            | Event::RowLocked { .. }
            | Event::Deadlock { .. }
            | Event::Interrupted { .. }
            | Event::Aborted { .. }
            | Event::Granted { .. }
            | Event::Watchdog { .. }
            | Event::Renewal { .. }
            | Event::Paused { .. }
            | Event::Hung { .. }
            | Event::Replicated { .. }
            | Event::ClockJump { .. }
            | Event::Failover { .. }
            | Event::TimePasses { .. }
            | Event::Woke { .. }
            | Event::Crashed { .. } => false,
        })
    }
}

/// Whether a visible operation can be part of a private step of a process whose private
/// keys are `keys` (and that runs alone on its instance if `alone`).
fn allowed(op: &crate::ir::Op, keys: &[Sym], alone: bool) -> bool {
    let cmd_ok = |cmd: &RedisCmd| {
        !matches!(cmd, RedisCmd::Wait { .. } | RedisCmd::GetReplica { .. })
            && keys.contains(&cmd.key())
    };
    match &op.kind {
        OpKind::Redis { cmd, .. } | OpKind::AwaitRedis { cmd, .. } => cmd_ok(cmd),
        OpKind::Atomic { body, .. } => body.iter().all(|b| match &b.kind {
            OpKind::Redis { cmd, .. } => cmd_ok(cmd),
            OpKind::SetGhost { .. } | OpKind::WatchdogStart { .. } | OpKind::WatchdogStop => false,
            // Local code of the script (no other visible operation is allowed in a body).
            OpKind::Assign { .. }
            | OpKind::Jump(_)
            | OpKind::JumpUnless { .. }
            | OpKind::Return { .. }
            | OpKind::Raise { .. } => true,
            OpKind::Work { .. }
            | OpKind::Pick { .. }
            | OpKind::Sleep { .. }
            | OpKind::SleepFor { .. }
            | OpKind::Sql { .. }
            | OpKind::AwaitRedis { .. }
            | OpKind::Atomic { .. }
            | OpKind::Lock { .. }
            | OpKind::Unlock { .. } => false,
        }),
        OpKind::Lock { .. } | OpKind::Unlock { .. } => alone,
        // A SQL statement is never private (the database is shared); local ops are not
        // visible operations.
        OpKind::Sql { .. }
        | OpKind::Assign { .. }
        | OpKind::SetGhost { .. }
        | OpKind::Jump(_)
        | OpKind::JumpUnless { .. }
        | OpKind::Return { .. }
        | OpKind::Work { .. }
        | OpKind::Sleep { .. }
        | OpKind::SleepFor { .. }
        | OpKind::Pick { .. }
        | OpKind::Raise { .. }
        | OpKind::WatchdogStart { .. }
        | OpKind::WatchdogStop => false,
    }
}

/// Whether a step starting at `pc` can touch only private things: every operation it may
/// run — local code, at most one visible operation, local code up to a delay or the next
/// visible operation — is allowed.
fn may_be_private(
    ops: &[crate::ir::Op],
    pc: usize,
    allowed: &dyn Fn(&crate::ir::Op) -> bool,
) -> bool {
    let mut todo = vec![(pc, false)];
    let mut seen = vec![[false; 2]; ops.len() + 1];
    while let Some((i, after)) = todo.pop() {
        if i >= ops.len() || seen[i][usize::from(after)] {
            continue;
        }
        seen[i][usize::from(after)] = true;
        let op = &ops[i];
        if op.kind.is_visible() {
            if after {
                continue; // the step ends before a second visible operation
            }
            if !allowed(op) {
                return false;
            }
            // Where a visible operation goes next depends on its reply: any later op.
            todo.push((i + 1, true));
            if let OpKind::Sql { .. } = op.kind {
                return false;
            }
            continue;
        }
        match &op.kind {
            // A computed sleep of no time goes on with the step.
            OpKind::Assign { .. } | OpKind::SleepFor { .. } => todo.push((i + 1, after)),
            OpKind::Jump(t) => todo.push((*t as usize, after)),
            OpKind::JumpUnless { target, .. } => {
                todo.push((i + 1, after));
                todo.push((*target as usize, after));
            }
            // A pick ends the step before it (the next is the environment's choice).
            OpKind::Return { .. }
            | OpKind::Work { .. }
            | OpKind::Sleep { .. }
            | OpKind::Pick { .. } => {}
            // A ghost is seen by properties, a raise ends the process, a watchdog starts a
            // timer of the environment's, and a BEGIN (local code) starts a transaction.
            OpKind::SetGhost { .. }
            | OpKind::Raise { .. }
            | OpKind::WatchdogStart { .. }
            | OpKind::WatchdogStop
            | OpKind::Sql { .. } => return false,
            // Visible: handled above.
            OpKind::Redis { .. }
            | OpKind::AwaitRedis { .. }
            | OpKind::Atomic { .. }
            | OpKind::Lock { .. }
            | OpKind::Unlock { .. } => return false,
        }
    }
    true
}

/// Whether some fault may strike process `p` (crash, hang, pause, lost reply, drift).
fn struck(m: &Model, p: usize) -> bool {
    m.faults.iter().any(|f| {
        f.group == m.processes[p].group
            && !matches!(
                f.kind,
                FaultKind::Failover { .. } | FaultKind::ClockJump { .. }
            )
    })
}

/// What the properties read.
#[derive(Default)]
struct Watched {
    pids: Vec<usize>,
    groups: Vec<usize>,
    keys: Vec<Sym>,
}

fn watched(m: &Model) -> Watched {
    let mut w = Watched::default();
    for p in &m.properties {
        for e in std::iter::once(&p.expr).chain(p.then.as_ref()) {
            e.visit(&mut |x| match x {
                Expr::Status { pid, .. } => w.pids.push(pid.index()),
                Expr::Count { group, .. } => w.groups.push(*group as usize),
                Expr::Key { key, .. } => w.keys.push(*key),
                // Ghosts and cells change only in steps that write them (never private);
                // the rest reads no process's private state.
                Expr::Lit(_)
                | Expr::Local(_)
                | Expr::Ghost(_)
                | Expr::Me
                | Expr::Column(_)
                | Expr::Cell { .. }
                | Expr::Rows { .. }
                | Expr::Sum { .. }
                | Expr::Now
                | Expr::Clock
                | Expr::Unary(..)
                | Expr::Binary(..) => {}
            });
        }
    }
    w
}

/// Every Redis key process `p`'s program names (commands, scripts, `await`, watchdogs).
fn keys_named(m: &Model, p: usize) -> Vec<Sym> {
    let mut out = Vec::new();
    let add = |ops: &[crate::ir::Op], out: &mut Vec<Sym>| {
        for op in ops {
            match &op.kind {
                OpKind::Redis { cmd, .. } | OpKind::AwaitRedis { cmd, .. } => out.push(cmd.key()),
                OpKind::WatchdogStart { key, .. } => out.push(*key),
                OpKind::Atomic { body, .. } => {
                    for b in body {
                        if let OpKind::Redis { cmd, .. } = &b.kind {
                            out.push(cmd.key());
                        }
                    }
                }
                OpKind::Assign { .. }
                | OpKind::SetGhost { .. }
                | OpKind::Jump(_)
                | OpKind::JumpUnless { .. }
                | OpKind::Return { .. }
                | OpKind::Work { .. }
                | OpKind::Sleep { .. }
                | OpKind::SleepFor { .. }
                | OpKind::Sql { .. }
                | OpKind::Raise { .. }
                | OpKind::Pick { .. }
                | OpKind::WatchdogStop
                | OpKind::Lock { .. }
                | OpKind::Unlock { .. } => {}
            }
        }
    };
    add(&m.groups[m.processes[p].group].program.ops, &mut out);
    out
}

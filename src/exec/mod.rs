//! Step semantics: the transitions of a state, for every engine (pure and deterministic).

pub mod capacity;
pub mod deadlock;
pub mod env;
pub mod eval;
pub mod observe;
mod redis_ops;
pub mod remote;
mod scan;
mod sql;
pub mod step;
pub mod waits;
mod write;

use crate::ir::{FaultKind, Model, Timing};
use crate::ir::value::Pid;
use crate::world::process::{Status, Wait};
use crate::world::State;
use observe::Observer;

/// A stable name for one transition out of a state: replay, traces and a deterministic
/// search depend on these never being renumbered.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Choice {
    /// The process takes its next step.
    Proc(Pid),
    /// A waiting PostgreSQL backend runs its deadlock check (`deadlock_timeout` is over).
    Check(Pid),
    /// A lock wait times out.
    Timeout(Pid),
    /// Time passes to the next deadline.
    Tick,
    /// A watchdog's renewal is due.
    Renew(Pid),
    /// A paused process goes on.
    Resume(Pid),
    /// The environment injects fault number `fault` into `pid`.
    Fault { fault: u16, pid: Pid },
    /// A replica (node index) applies the oldest write of its replication stream.
    Replicate(u16),
    /// Failover fault number `fault` promotes replica `node`.
    Failover { fault: u16, node: u16 },
    /// Server fault number `fault` strikes: a clock jump or a restart.
    ServerFault { fault: u16 },
    /// Partition fault number `fault` strikes: the clients lose their path to its server,
    /// while a request is on its way (`in_flight`) or between requests.
    Partition { fault: u16, in_flight: bool },
    /// Drift fault number `fault` sets `pid`'s clock ahead (or behind) by its bound.
    Drift { fault: u16, pid: Pid, ahead: bool },
    /// A ranged delay of `pid` ends before its longest length.
    Finish(Pid),
    /// Time passes by this many ticks, short of the next deadline (`simulate` only).
    Pass(u32),
    /// A finished process of a repeating group starts its next request (`simulate` only).
    Restart(Pid),
    /// The process, standing at `pick`, picks this value and takes the rest of its step.
    Pick { pid: Pid, value: i32 },
}

impl Choice {
    /// The process that acts, if a process acts.
    #[must_use]
    pub fn actor(self) -> Option<Pid> {
        match self {
            Choice::Proc(p) | Choice::Pick { pid: p, .. } => Some(p),
            _ => None,
        }
    }

    /// The process the transition belongs to: its actor, or the process a timer, fault or
    /// delay of it concerns; `None` for time, replication, failover and clock jumps.
    #[must_use]
    pub fn concerns(self) -> Option<Pid> {
        match self {
            Choice::Proc(p)
            | Choice::Pick { pid: p, .. }
            | Choice::Check(p)
            | Choice::Timeout(p)
            | Choice::Renew(p)
            | Choice::Resume(p)
            | Choice::Finish(p)
            | Choice::Restart(p)
            | Choice::Fault { pid: p, .. }
            | Choice::Drift { pid: p, .. } => Some(p),
            Choice::Tick
            | Choice::Pass(_)
            | Choice::Replicate(_)
            | Choice::Failover { .. }
            | Choice::Partition { .. }
            | Choice::ServerFault { .. } => None,
        }
    }
}

impl Choice {
    /// The same transition taken by process `to` instead (a choice that concerns no process
    /// is itself).
    #[must_use]
    pub fn by(self, to: Pid) -> Choice {
        match self {
            Choice::Proc(_) => Choice::Proc(to),
            Choice::Check(_) => Choice::Check(to),
            Choice::Timeout(_) => Choice::Timeout(to),
            Choice::Renew(_) => Choice::Renew(to),
            Choice::Resume(_) => Choice::Resume(to),
            Choice::Finish(_) => Choice::Finish(to),
            Choice::Restart(_) => Choice::Restart(to),
            Choice::Pick { value, .. } => Choice::Pick { pid: to, value },
            Choice::Fault { fault, .. } => Choice::Fault { fault, pid: to },
            Choice::Drift { fault, ahead, .. } => Choice::Drift {
                fault,
                pid: to,
                ahead,
            },
            Choice::Tick
            | Choice::Pass(_)
            | Choice::Replicate(_)
            | Choice::Failover { .. }
            | Choice::Partition { .. }
            | Choice::ServerFault { .. } => self,
        }
    }
}

/// Where [`successors`] lists `c` out of `s`: its section (process steps, a process's due
/// timers, time, ends of pauses and ranged delays, replication, faults), then the fault
/// or node, then the process. [`successors`] lists in this order (a debug assertion), and
/// choices with equal keys belong to one process: sorting the transitions of some
/// processes, and those of others derived from them, by this key (stably) gives the order
/// [`successors`] would.
#[must_use]
pub fn listing_key(s: &State, c: Choice) -> (u8, u16, u16) {
    match c {
        Choice::Proc(p) | Choice::Pick { pid: p, .. } => (0, 0, p.0),
        Choice::Check(p) | Choice::Timeout(p) | Choice::Renew(p) => (1, 0, p.0),
        Choice::Resume(p) if s.procs[p.index()].paused == Some(0) => (1, 0, p.0),
        Choice::Tick => (2, 0, 0),
        Choice::Finish(p) | Choice::Resume(p) => (3, 0, p.0),
        Choice::Replicate(n) => (4, n, 0),
        Choice::Drift { fault, pid, .. } | Choice::Fault { fault, pid } => (5, fault, pid.0),
        Choice::ServerFault { fault }
        | Choice::Failover { fault, .. }
        | Choice::Partition { fault, .. } => (5, fault, 0),
        Choice::Pass(_) | Choice::Restart(_) => (6, 0, 0),
    }
}

/// Runs one chosen transition; `None` when it is not enabled in `s`.
pub fn apply<O: Observer>(m: &Model, s: &State, c: Choice, obs: &mut O) -> Option<State> {
    match c {
        Choice::Proc(p) => step::step(m, s, p, obs),
        Choice::Pick { pid, value } => step::pick(m, s, pid, value, obs),
        Choice::Check(p) => deadlock::pg_check(m, s, p, obs),
        Choice::Timeout(p) => deadlock::timeout(m, s, p, obs),
        Choice::Tick => {
            let any = (0..s.procs.len()).any(|p| step::can_act(m, s, Pid(p as u16)));
            if any && m.timing == Timing::Bounded {
                None
            } else {
                env::tick(m, s, obs)
            }
        }
        Choice::Renew(p) => env::renew(m, s, p, obs),
        Choice::Replicate(n) => env::replicate(m, s, n as usize, obs),
        Choice::ServerFault { fault } => match m.faults[fault as usize].kind {
            FaultKind::Restart { .. } => env::restart_server(m, s, fault as usize, obs),
            _ => env::jump(m, s, fault as usize, obs),
        },
        Choice::Partition { fault, in_flight } => {
            env::partition(m, s, fault as usize, in_flight, obs)
        }
        Choice::Drift { fault, pid, ahead } => env::drift(m, s, fault as usize, pid, ahead, obs),
        Choice::Finish(p) => env::finish(s, p, obs),
        Choice::Pass(dt) => {
            let any = (0..s.procs.len()).any(|p| step::can_act(m, s, Pid(p as u16)));
            if any && m.timing == Timing::Bounded {
                None
            } else {
                env::pass(m, s, dt, obs)
            }
        }
        Choice::Restart(p) => env::restart(m, s, p, obs),
        Choice::Failover { fault, node } => env::failover(m, s, fault as usize, node as usize, obs),
        Choice::Resume(p) => env::resume(s, p, obs),
        Choice::Fault { fault, pid } => env::fault(m, s, fault as usize, pid, obs),
    }
}

/// Every transition out of `s`, in choice order: processes by pid, then due deadlock checks
/// and lock timeouts, then time, then faults.
/// Returns how many of them are progress (process steps, time, and replication a `WAIT`
/// waits for), as opposed to faults: a state with no progress transition and unfinished
/// processes is a deadlock.
pub fn successors(m: &Model, s: &State, out: &mut Vec<(Choice, State)>) -> usize {
    successors_except(m, s, &[], out)
}

/// [`successors`] without the transitions of the processes `skip` marks (a symmetry
/// reduction's mirror images); `skip` may be shorter than the process list.
pub fn successors_except(
    m: &Model,
    s: &State,
    skip: &[bool],
    out: &mut Vec<(Choice, State)>,
) -> usize {
    let mut silent = observe::Silent;
    successors_stepping(m, s, skip, out, |pid, pick| match pick {
        None => step::step(m, s, pid, &mut silent),
        Some(v) => step::pick(m, s, pid, v, &mut silent),
    })
}

/// [`successors_except`] with the processes' steps taken by `step`, which must give what
/// [`step::step`] gives for `(pid, None)` (the explorer's step memo, `explore::memo`,
/// answers from memory) and what [`step::pick`] gives for `(pid, Some(value))`.
pub fn successors_stepping(
    m: &Model,
    s: &State,
    skip: &[bool],
    out: &mut Vec<(Choice, State)>,
    mut step: impl FnMut(Pid, Option<i32>) -> Option<State>,
) -> usize {
    out.clear();
    let mut silent = observe::Silent;
    let skipped = |p: usize| skip.get(p).copied().unwrap_or(false);
    for p in 0..s.procs.len() {
        let pid = Pid(p as u16);
        if skipped(p) {
            continue;
        }
        if let Some(n) = step(pid, None) {
            out.push((Choice::Proc(pid), n));
        } else if let Some((lo, hi)) = step::picking(m, s, pid) {
            for value in lo..=hi {
                if let Some(n) = step(pid, Some(value)) {
                    out.push((Choice::Pick { pid, value }, n));
                }
            }
        }
    }
    for p in (0..s.procs.len()).filter(|&p| !skipped(p)) {
        let pid = Pid(p as u16);
        let q = &s.procs[p];
        if q.check_in == Some(0) {
            if let Some(n) = deadlock::pg_check(m, s, pid, &mut silent) {
                out.push((Choice::Check(pid), n));
            }
        }
        if q.timeout_in == Some(0) {
            if let Some(n) = deadlock::timeout(m, s, pid, &mut silent) {
                out.push((Choice::Timeout(pid), n));
            }
        }
        if q.watchdog.is_some_and(|w| w.next_in == 0) {
            if let Some(n) = env::renew(m, s, pid, &mut silent) {
                out.push((Choice::Renew(pid), n));
            }
        }
        // A pause that reached its longest possible length must end now.
        if q.paused == Some(0) {
            if let Some(n) = env::resume(s, pid, &mut silent) {
                out.push((Choice::Resume(pid), n));
            }
        }
    }
    // Bounded timing: time passes only when nothing else can happen; async: at any moment.
    if out.is_empty() || m.timing == Timing::Async {
        if let Some(n) = env::tick(m, s, &mut silent) {
            out.push((Choice::Tick, n));
        }
    }
    let progress = out.len();
    // A pause, or a ranged delay past its minimum, may also end earlier: the environment
    // chooses when.
    for p in (0..s.procs.len()).filter(|&p| !skipped(p)) {
        if let Some(n) = env::finish(s, Pid(p as u16), &mut silent) {
            out.push((Choice::Finish(Pid(p as u16)), n));
        }
        if s.procs[p].paused.is_some_and(|t| t > 0) {
            let pid = Pid(p as u16);
            if let Some(n) = env::resume(s, pid, &mut silent) {
                out.push((Choice::Resume(pid), n));
            }
        }
    }
    // Replication is asynchronous: a replica catches up whenever the environment lets it.
    // It is progress for a process that waits for it (`WAIT n 0` has no other way out).
    let mut awaited = 0;
    for n in 0..s.redis.len() {
        if let Some(next) = env::replicate(m, s, n, &mut silent) {
            let server = m.server_of(n);
            awaited += usize::from(s.procs.iter().any(|p| {
                matches!(p.status, Status::Waiting(Wait::Replicas { server: w, .. }) if w == server)
            }));
            out.push((Choice::Replicate(n as u16), next));
        }
    }
    for (f, fault) in m.faults.iter().enumerate() {
        if s.faults_used[f] >= fault.budget {
            continue;
        }
        if let FaultKind::Drift { .. } = fault.kind {
            for p in (0..s.procs.len()).filter(|&p| !skipped(p)) {
                for ahead in [true, false] {
                    let pid = Pid(p as u16);
                    if let Some(n) = env::drift(m, s, f, pid, ahead, &mut silent) {
                        out.push((
                            Choice::Drift {
                                fault: f as u16,
                                pid,
                                ahead,
                            },
                            n,
                        ));
                    }
                }
            }
            continue;
        }
        if let FaultKind::ClockJump { .. } | FaultKind::Restart { .. } = fault.kind {
            let c = Choice::ServerFault { fault: f as u16 };
            if let Some(n) = apply(m, s, c, &mut silent) {
                out.push((c, n));
            }
            continue;
        }
        if let FaultKind::Partition { .. } = fault.kind {
            for in_flight in [false, true] {
                let c = Choice::Partition {
                    fault: f as u16,
                    in_flight,
                };
                if let Some(n) = env::partition(m, s, f, in_flight, &mut silent) {
                    out.push((c, n));
                }
            }
            continue;
        }
        if let FaultKind::Failover { server } = fault.kind {
            for node in s.replicas(m, server) {
                let c = Choice::Failover {
                    fault: f as u16,
                    node: node as u16,
                };
                if let Some(n) = env::failover(m, s, f, node, &mut silent) {
                    out.push((c, n));
                }
            }
            continue;
        }
        for p in (0..s.procs.len()).filter(|&p| !skipped(p)) {
            let c = Choice::Fault {
                fault: f as u16,
                pid: Pid(p as u16),
            };
            if let Some(n) = apply(m, s, c, &mut silent) {
                out.push((c, n));
            }
        }
    }
    debug_assert!(
        out.windows(2)
            .all(|w| listing_key(s, w[0].0) <= listing_key(s, w[1].0)),
        "successors are listed in the order of listing_key"
    );
    progress + awaited
}

//! One step of one process: local code, at most one visible operation, local code again.

use super::eval::{eval, Scope};
use super::observe::{Event, Observer};
use super::{redis_ops, sql};
use crate::ir::{Isolation, Model, Op, OpKind, RedisCmd, SqlStmt};
use crate::world::process::{RunError, Status, Txn, Wait, Watchdog};
use crate::ir::value::{Pid, Value};
use crate::world::redis::Off;
use crate::world::State;

/// How a visible operation ended.
pub(super) enum Flow {
    /// It completed; the process moves on.
    Next,
    /// It failed and a handler continues at this op.
    Jump(u32),
    /// It must wait; the process stays at this op with a `Waiting` status.
    Blocked,
    /// It ended the process (an uncaught SQL error).
    Stop,
}

/// Whether `pid` can take a step in `s`.
#[must_use]
pub fn enabled(m: &Model, s: &State, pid: Pid) -> bool {
    let p = &s.procs[pid.index()];
    if p.paused.is_some() {
        return false;
    }
    match p.status {
        Status::Ready => picking(m, s, pid).is_none() && !queued(m, s, pid),
        Status::Waiting(Wait::Mutex(l)) => s.mutexes[l as usize].held_by(pid),
        Status::Waiting(Wait::Row { .. } | Wait::Gap { .. }) => {
            !super::deadlock::blocked_on_row(s, pid)
        }
        Status::Waiting(Wait::Await { .. }) => match &m.program(pid).ops[p.pc as usize].kind {
            OpKind::AwaitRedis { cmd, server, .. } => {
                redis_ops::would_succeed(m, s, cmd, *server) && on(m, s, *server)
            }
            _ => false,
        },
        Status::Waiting(Wait::Replicas { server, need }) => {
            p.timeout_in == Some(0) || redis_ops::acked(m, s, server) >= need
        }
        Status::Busy(_)
        | Status::Done(_)
        | Status::Errored(_)
        | Status::Crashed
        | Status::Hung
        | Status::Failed(_) => false,
    }
}

/// The range of values `pid` is about to pick (`pick $x from lo..hi`), when it stands ready
/// at a `pick`: then it steps by [`pick`], not [`step`].
#[must_use]
pub fn picking(m: &Model, s: &State, pid: Pid) -> Option<(i32, i32)> {
    let p = &s.procs[pid.index()];
    if p.status != Status::Ready || p.paused.is_some() {
        return None;
    }
    match m.program(pid).ops.get(p.pc as usize).map(|op| &op.kind) {
        Some(OpKind::Pick { lo, hi, .. }) => Some((*lo, *hi)),
        _ => None,
    }
}

/// Whether `pid` stands before an op that needs a database worker or a connection while
/// none is free (docs/semantics.md, SIM-8 and SIM-9).
#[must_use]
pub fn queued(m: &Model, s: &State, pid: Pid) -> bool {
    super::capacity::must_wait(m, s, pid)
}

/// Whether `pid` can act: step, or pick a value.
#[must_use]
pub fn can_act(m: &Model, s: &State, pid: Pid) -> bool {
    enabled(m, s, pid) || picking(m, s, pid).is_some()
}

/// Runs the next step of `pid`, or returns `None` when it cannot step.
pub fn step<O: Observer>(m: &Model, s: &State, pid: Pid, obs: &mut O) -> Option<State> {
    if !enabled(m, s, pid) {
        return None;
    }
    Some(run_step(m, s, pid, None, obs))
}

/// `pid` picks `value` at its `pick` and goes on with the rest of its step; `None` unless it
/// stands at a `pick` whose range holds `value`.
pub fn pick<O: Observer>(m: &Model, s: &State, pid: Pid, value: i32, obs: &mut O) -> Option<State> {
    let (lo, hi) = picking(m, s, pid)?;
    (lo..=hi)
        .contains(&value)
        .then(|| run_step(m, s, pid, Some(value), obs))
}

fn run_step<O: Observer>(m: &Model, s: &State, pid: Pid, pick: Option<i32>, obs: &mut O) -> State {
    let mut st = s.clone();
    if let Err(e) = run(m, &mut st, pid, pick, obs) {
        fail(m, &mut st, pid, e, obs);
    }
    st.normalise();
    st
}

fn run<O: Observer>(
    m: &Model,
    st: &mut State,
    pid: Pid,
    mut pick: Option<i32>,
    obs: &mut O,
) -> Result<(), RunError> {
    let ops = &m.program(pid).ops;
    let mut visible_done = false;
    loop {
        let pc = st.procs[pid.index()].pc as usize;
        let op = &ops[pc];
        if op.kind.is_visible() && visible_done {
            return Ok(());
        }
        if op.kind.is_visible() && super::capacity::must_wait(m, st, pid) {
            return Ok(()); // a statement with no connection free: the step ends before it
        }
        if let OpKind::Pick { local, .. } = op.kind {
            // A pick starts a step of its own: the environment chooses the value.
            let Some(value) = pick.take() else {
                return Ok(());
            };
            if O::COVER {
                obs.ran(pid, pc as u32);
            }
            st.procs[pid.index()].locals[local as usize] = Value::Int(i64::from(value));
            st.procs[pid.index()].pc += 1;
            if O::EVENTS {
                obs.event(Event::Picked { local, value });
            }
            continue;
        }
        if O::COVER {
            obs.ran(pid, pc as u32);
        }
        if op.kind.is_visible() {
            visible_done = true;
            let flow = visible(m, st, pid, op, obs)?;
            if !moved_on(st, pid, flow) || m.split_steps {
                return Ok(());
            }
            continue;
        }
        if !local(m, st, pid, op, obs)? {
            return Ok(());
        }
    }
}

/// After a visible operation: the process moves on to its next op (true), or stays, waiting
/// or ended (false).
pub(super) fn moved_on(st: &mut State, pid: Pid, flow: Flow) -> bool {
    let p = &mut st.procs[pid.index()];
    match flow {
        Flow::Blocked | Flow::Stop => return false,
        Flow::Next => p.pc += 1,
        Flow::Jump(t) => p.pc = t,
    }
    p.status = Status::Ready;
    (p.check_in, p.timeout_in, p.candidates) = (None, None, None);
    true
}

/// Runs one local op (or delay, or return); false when the step ends after it.
pub(super) fn local<O: Observer>(
    m: &Model,
    st: &mut State,
    pid: Pid,
    op: &Op,
    obs: &mut O,
) -> Result<bool, RunError> {
    let i = pid.index();
    let next = st.procs[i].pc + 1;
    match &op.kind {
        OpKind::Assign { .. } | OpKind::SetGhost { .. } => assign(m, st, pid, &op.kind, obs)?,
        OpKind::Jump(t) => {
            st.procs[i].pc = *t;
            return Ok(true);
        }
        OpKind::JumpUnless { cond, target } => {
            let c = eval(cond, &scope(m, st, pid))?.truthy();
            if O::COVER {
                obs.branch(pid, st.procs[i].pc, c);
            }
            st.procs[i].pc = if c { next } else { *target };
            return Ok(true);
        }
        OpKind::Return { outcome } => {
            // The request ends: its connection goes back with no transaction open.
            sql::end_txn(m, st, pid, false, obs);
            st.procs[i].status = Status::Done(*outcome);
            if O::EVENTS {
                obs.event(Event::Finished { outcome: *outcome });
            }
            return Ok(false);
        }
        OpKind::Work { ticks, upto, .. } | OpKind::Sleep { ticks, upto, .. } => {
            if super::capacity::must_wait(m, st, pid) {
                // No worker or connection is free: the step ends before the latency.
                return Ok(false);
            }
            st.procs[i].pc = next;
            if *upto > 0 {
                st.procs[i].status = Status::Busy(*ticks);
                st.procs[i].slack = upto - ticks;
                if O::EVENTS {
                    let work = matches!(op.kind, OpKind::Work { .. });
                    obs.event(Event::Delay {
                        work,
                        ticks: *ticks,
                        upto: *upto,
                    });
                }
                return Ok(false);
            }
            return Ok(true);
        }
        OpKind::SleepFor { expr, unit } => {
            let Value::Int(v) = eval(expr, &scope(m, st, pid))? else {
                return Err(RunError::BadDelay);
            };
            let ticks = u32::try_from(v)
                .ok()
                .and_then(|v| v.checked_mul(*unit))
                .ok_or(RunError::BadDelay)?;
            st.procs[i].pc = next;
            if ticks == 0 {
                return Ok(true);
            }
            st.procs[i].status = Status::Busy(ticks);
            st.procs[i].slack = 0;
            if O::EVENTS {
                obs.event(Event::Delay {
                    work: false,
                    ticks,
                    upto: ticks,
                });
            }
            return Ok(false);
        }
        OpKind::Sql {
            stmt: SqlStmt::Begin { isolation },
            ..
        } => {
            if super::capacity::must_wait(m, st, pid) {
                return Ok(false); // no connection is free: the step ends before BEGIN
            }
            // BEGIN touches nothing until the first statement, so it folds into it.
            begin(m, st, pid, *isolation);
            if O::EVENTS {
                obs.event(Event::Sql {
                    stmt: SqlStmt::Begin {
                        isolation: *isolation,
                    },
                    reply: super::observe::Reply::None,
                    locals: Box::default(),
                });
            }
        }
        OpKind::Raise { local } => {
            let Value::Str(code) = st.procs[i].locals[*local as usize] else {
                return Err(RunError::Type);
            };
            sql::end_txn(m, st, pid, false, obs);
            st.procs[i].status = Status::Errored(code);
            if O::EVENTS {
                obs.event(Event::Uncaught { code });
            }
            return Ok(false);
        }
        OpKind::WatchdogStart { key, lease } => {
            st.procs[i].watchdog = Some(Watchdog {
                key: *key,
                lease: *lease,
                next_in: lease / 3,
            });
            if O::EVENTS {
                obs.event(Event::Watchdog {
                    key: *key,
                    running: true,
                });
            }
        }
        OpKind::WatchdogStop => {
            if let Some(w) = st.procs[i].watchdog.take() {
                if O::EVENTS {
                    obs.event(Event::Watchdog {
                        key: w.key,
                        running: false,
                    });
                }
            }
        }
        _ => unreachable!("visible ops are run by `visible`"),
    }
    st.procs[i].pc = next;
    Ok(true)
}

fn visible<O: Observer>(
    m: &Model,
    st: &mut State,
    pid: Pid,
    op: &Op,
    obs: &mut O,
) -> Result<Flow, RunError> {
    if O::EVENTS {
        obs.event(Event::At { span: op.span });
    }
    if let Some(flow) = unreached(m, st, pid, op, obs) {
        return Ok(flow);
    }
    match &op.kind {
        OpKind::Sql {
            stmt,
            into,
            on_error,
        } => sql::run(m, st, pid, stmt, into, on_error.as_ref(), obs),
        OpKind::Redis {
            cmd: RedisCmd::Wait { replicas, timeout },
            into,
            server,
        } => Ok(wait_replicas(
            m,
            st,
            pid,
            (*server, *replicas, *timeout),
            *into,
            obs,
        )),
        OpKind::Redis { cmd, into, server } => {
            let mut reply = redis_ops::run(m, st, pid, cmd, *server, obs)?;
            if cut_in_flight(m, st, *server) {
                reply = Value::Str(crate::ir::error_code("TIMEOUT"));
                if O::EVENTS {
                    obs.event(Event::ReplyLost { pid });
                }
            }
            let p = &mut st.procs[pid.index()];
            if p.lose_reply {
                // The command took effect; its reply missed the client's timeout.
                p.lose_reply = false;
                reply = Value::Str(crate::ir::error_code("TIMEOUT"));
                if O::EVENTS {
                    obs.event(Event::ReplyLost { pid });
                }
            }
            bind(st, pid, *into, reply);
            Ok(Flow::Next)
        }
        OpKind::AwaitRedis { cmd, into, server } => {
            if !redis_ops::would_succeed(m, st, cmd, *server) || !on(m, st, *server) {
                let key = cmd.key();
                st.procs[pid.index()].status = Status::Waiting(Wait::Await { key });
                if O::EVENTS {
                    let holder = redis_ops::key_owner(m, st, cmd, *server);
                    let arg = match cmd {
                        crate::ir::RedisCmd::Set { value, .. } => {
                            eval(value, &scope(m, st, pid)).unwrap_or(Value::Nil)
                        }
                        _ => Value::Nil,
                    };
                    obs.event(Event::Redis {
                        server: *server,
                        cmd: cmd.clone(),
                        arg,
                        reply: Value::Nil,
                    });
                    obs.event(Event::Waits {
                        wait: Wait::Await { key },
                        holder,
                    });
                }
                return Ok(Flow::Blocked);
            }
            let reply = redis_ops::run(m, st, pid, cmd, *server, obs)?;
            bind(st, pid, *into, reply);
            Ok(Flow::Next)
        }
        OpKind::Atomic { body, server } => {
            let node = st.node(m, *server);
            let in_flight = matches!(st.redis[node].off, Off::InFlight(_));
            let before = in_flight.then(|| st.procs[pid.index()].locals.clone());
            redis_ops::atomic(m, st, pid, body, *server, obs)?;
            if let Some(before) = before {
                // The script ran; the client learns nothing of what it replied.
                cut_in_flight(m, st, *server);
                st.procs[pid.index()].locals = before;
                fail_replies(st, pid, body, "TIMEOUT");
                if O::EVENTS {
                    obs.event(Event::ReplyLost { pid });
                }
            }
            Ok(Flow::Next)
        }
        OpKind::Lock { mutex } => lock(m, st, pid, *mutex, obs),
        OpKind::Unlock { mutex } => {
            let l = mutex_index(m, pid, *mutex);
            if !st.mutexes[l as usize].held_by(pid) {
                return Err(RunError::UnlockNotHeld);
            }
            if O::EVENTS {
                obs.event(Event::Unlock { mutex: *mutex });
            }
            if let Some(next) = st.mutexes[l as usize].release() {
                if O::EVENTS {
                    obs.event(Event::Granted {
                        pid: next,
                        wait: Wait::Mutex(l),
                    });
                }
            }
            Ok(Flow::Next)
        }
        _ => unreachable!("only visible ops reach here"),
    }
}

/// A command or script sent to a server the clients cannot reach (RL-2, RL-4, RL-6):
/// nothing happens there, and every reply it would bind is an error, `'TIMEOUT'` (a
/// partition) or `'REFUSED'` (a server down after a restart). `None` when it reaches the
/// server, as the one in flight when a partition struck does (`cut_in_flight` loses its
/// reply after it ran); a `WAIT` needs no delivery to fail, so it is cut off at once.
fn unreached<O: Observer>(
    m: &Model,
    st: &mut State,
    pid: Pid,
    op: &Op,
    obs: &mut O,
) -> Option<Flow> {
    let (server, wait) = match &op.kind {
        OpKind::Redis { server, cmd, .. } => (*server, matches!(cmd, RedisCmd::Wait { .. })),
        OpKind::Atomic { server, .. } => (*server, false),
        _ => return None,
    };
    let node = st.node(m, server);
    let code = match st.redis[node].off {
        Off::On => return None,
        Off::InFlight(_) if !wait => return None,
        Off::InFlight(left) => {
            st.redis[node].off = Off::Cut(left);
            "TIMEOUT"
        }
        Off::Cut(_) => "TIMEOUT",
        Off::Down(_) => "REFUSED",
    };
    fail_replies(st, pid, std::slice::from_ref(op), code);
    if O::EVENTS {
        obs.event(Event::Unreached {
            pid,
            server,
            refused: code == "REFUSED",
        });
    }
    Some(Flow::Next)
}

/// Binds the error `code` to every local that a reply among `ops` (an op, or a script's
/// body) would have set.
fn fail_replies(st: &mut State, pid: Pid, ops: &[Op], code: &str) {
    let error = Value::Str(crate::ir::error_code(code));
    for op in ops {
        match &op.kind {
            OpKind::Redis { into, .. } => bind(st, pid, *into, error),
            OpKind::Atomic { body, .. } => fail_replies(st, pid, body, code),
            _ => {}
        }
    }
}

/// After a command ran on `server`: if a partition struck while it was on its way, the
/// path is now cut and its reply is lost (true).
fn cut_in_flight(m: &Model, st: &mut State, server: u16) -> bool {
    let node = st.node(m, server);
    let Off::InFlight(left) = st.redis[node].off else {
        return false;
    };
    st.redis[node].off = Off::Cut(left);
    true
}

/// Whether server `server`'s primary is reachable with nothing in flight: an `await`
/// retries only then.
fn on(m: &Model, s: &State, server: u16) -> bool {
    s.redis[s.node(m, server)].off == Off::On
}

/// `WAIT n timeout`: replies at once when `n` replicas have every write, else waits (the
/// resume replies however many have them by then, RF-4); with timeout 0, until they have.
/// `n` may exceed the replicas: it then waits out the timeout (or for ever).
fn wait_replicas<O: Observer>(
    m: &Model,
    st: &mut State,
    pid: Pid,
    (server, need, timeout): (u16, u8, u32),
    into: Option<u16>,
    obs: &mut O,
) -> Flow {
    // A write made before a failover went to a primary that is gone: the connection that made
    // it broke, and the client must treat that as "not acknowledged".
    let lost = st.procs[pid.index()]
        .last_write
        .is_some_and(|(s, e)| s == server && e != st.epochs[server as usize]);
    let acked = if lost {
        0
    } else {
        redis_ops::acked(m, st, server)
    };
    let resuming = matches!(
        st.procs[pid.index()].status,
        Status::Waiting(Wait::Replicas { .. })
    );
    let cmd = RedisCmd::Wait {
        replicas: need,
        timeout,
    };
    if acked < need && !resuming && !lost {
        let p = &mut st.procs[pid.index()];
        p.status = Status::Waiting(Wait::Replicas { server, need });
        // `WAIT n 0` has no timeout: it waits until n replicas have the writes (RF-4).
        p.timeout_in = (timeout > 0).then_some(timeout);
        if O::EVENTS {
            obs.event(Event::Waits {
                wait: Wait::Replicas { server, need },
                holder: None,
            });
        }
        return Flow::Blocked;
    }
    let reply = Value::Int(i64::from(acked));
    bind(st, pid, into, reply);
    if O::EVENTS {
        obs.event(Event::Redis {
            server,
            cmd,
            arg: Value::Nil,
            reply,
        });
    }
    Flow::Next
}

fn lock<O: Observer>(
    m: &Model,
    st: &mut State,
    pid: Pid,
    mutex: u16,
    obs: &mut O,
) -> Result<Flow, RunError> {
    let l = mutex_index(m, pid, mutex);
    let resuming = st.procs[pid.index()].status == Status::Waiting(Wait::Mutex(l));
    let lock = &mut st.mutexes[l as usize];
    if lock.held_by(pid) && !resuming {
        return Err(RunError::Relock);
    }
    match lock.acquire(pid) {
        crate::world::lock::Acquire::Granted => {
            if O::EVENTS {
                obs.event(Event::Lock { mutex });
            }
            Ok(Flow::Next)
        }
        crate::world::lock::Acquire::Queued { holder } => {
            st.procs[pid.index()].status = Status::Waiting(Wait::Mutex(l));
            if O::EVENTS {
                obs.event(Event::Lock { mutex });
                obs.event(Event::Waits {
                    wait: Wait::Mutex(l),
                    holder: Some(holder),
                });
            }
            Ok(Flow::Blocked)
        }
    }
}

/// The index into `State::mutexes` of mutex `m` on `pid`'s instance.
#[must_use]
pub fn mutex_index(model: &Model, pid: Pid, mutex: u16) -> u16 {
    let inst = model.processes[pid.index()].instance;
    (inst * model.mutexes.len() + mutex as usize) as u16
}

pub(super) fn scope<'a>(m: &'a Model, st: &'a State, pid: Pid) -> Scope<'a> {
    Scope {
        model: m,
        state: st,
        locals: &st.procs[pid.index()].locals,
        me: Some(pid),
        row: None,
    }
}

/// `$x = e` and `ghost = e`: the assignments process code and `atomic` bodies share.
pub(super) fn assign<O: Observer>(
    m: &Model,
    st: &mut State,
    pid: Pid,
    kind: &OpKind,
    obs: &mut O,
) -> Result<(), RunError> {
    match kind {
        OpKind::Assign { local, expr } => {
            let v = eval(expr, &scope(m, st, pid))?;
            st.procs[pid.index()].locals[*local as usize] = v;
        }
        OpKind::SetGhost { ghost, expr } => {
            let Value::Int(v) = eval(expr, &scope(m, st, pid))? else {
                return Err(RunError::Type);
            };
            st.ghosts[*ghost as usize] = v;
            if O::EVENTS {
                obs.event(Event::SetGhost {
                    ghost: *ghost,
                    value: v,
                });
            }
        }
        _ => unreachable!("only assignments"),
    }
    Ok(())
}

pub(super) fn bind(st: &mut State, pid: Pid, into: Option<u16>, v: Value) {
    if let Some(l) = into {
        st.procs[pid.index()].locals[l as usize] = v;
    }
}

/// `BEGIN`: opens a transaction at the named level or the database's default. Inside a
/// transaction it only warns (PostgreSQL), so it changes nothing.
fn begin(m: &Model, st: &mut State, pid: Pid, isolation: Option<Isolation>) {
    let clock = st.clock;
    let p = &mut st.procs[pid.index()];
    if p.txn.is_some() {
        return;
    }
    let default =
        m.db.as_ref()
            .map_or(Isolation::ReadCommitted, |d| d.isolation);
    p.txn = Some(Txn {
        isolation: isolation.unwrap_or(default),
        explicit: true,
        snapshot: None,
        aborted: false,
        weight: 0,
        started: clock,
    });
}

pub(super) fn fail<O: Observer>(m: &Model, st: &mut State, pid: Pid, e: RunError, obs: &mut O) {
    sql::end_txn(m, st, pid, false, obs);
    st.procs[pid.index()].status = Status::Failed(e);
    if O::EVENTS {
        obs.event(Event::Failed(e));
    }
}

//! A process whose statements run on a real server (`interlock load`): its local code runs
//! here by the rules of a step (`step::local`), and each statement's answer, brought back from
//! the server, ends the statement by the rules of a simulated one (`sql::conclude`): the same
//! binding of `into`, the same handlers, retries and rollbacks. Nothing here decides what a
//! statement returns.

use super::observe::{Event, Observer, Reply};
use super::sql::{self, Outcome};
use super::step;
use crate::ir::value::{Pid, Sym, Value};
use crate::ir::{Isolation, Model, OpKind, SqlStmt};
use crate::world::process::Status;
use crate::world::State;

/// What the process does next, outside this module.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Next<'m> {
    /// Send BEGIN (at this level, or the session's). The process has already moved past it.
    Begin(Option<Isolation>),
    /// Send this statement, with the process's locals as they are now; answer with
    /// [`answer`].
    Sql(&'m SqlStmt),
    /// Let this many ticks pass (a `work` or `sleep`; `upto > ticks` for a ranged one, whose
    /// length `draw` may name), then call [`next`] again.
    Delay {
        ticks: u32,
        upto: u32,
        draw: Option<u16>,
    },
    /// Choose a value of `lo..=hi` and give it to [`pick`].
    Pick { lo: i32, hi: i32, zipf: Option<f64> },
    /// The request ended: its status says how (done, errored, failed).
    Ended,
    /// An operation that does not run on a SQL server (a mutex, Redis, a watchdog).
    Unsupported(&'static str),
}

/// A server's answer to a statement.
#[derive(Clone, Debug, PartialEq)]
pub enum Answer {
    /// The rows a SELECT returned, as values.
    Rows(Vec<Box<[Value]>>),
    /// The rows an INSERT, UPDATE or DELETE counted.
    Count(i64),
    /// It succeeded with nothing to show (COMMIT, ROLLBACK).
    Done,
    /// It failed with this code (SQLSTATE or errno).
    Error(Sym),
}

/// Runs `pid`'s local code up to what it does next. A delay the caller let pass ends here.
pub fn next<'m, O: Observer>(m: &'m Model, st: &mut State, pid: Pid, obs: &mut O) -> Next<'m> {
    let i = pid.index();
    if let Status::Busy(_) = st.procs[i].status {
        let p = &mut st.procs[i];
        (p.status, p.slack) = (Status::Ready, 0);
    }
    loop {
        if st.procs[i].status != Status::Ready {
            return Next::Ended;
        }
        let pc = st.procs[i].pc as usize;
        let op = &m.program(pid).ops[pc];
        match &op.kind {
            OpKind::Pick { lo, hi, zipf, .. } => {
                return Next::Pick {
                    lo: *lo,
                    hi: *hi,
                    zipf: *zipf,
                }
            }
            OpKind::Sql { stmt, .. } if !matches!(stmt, SqlStmt::Begin { .. }) => {
                if O::COVER {
                    obs.ran(pid, pc as u32);
                }
                if O::EVENTS {
                    obs.event(Event::At { span: op.span });
                }
                return Next::Sql(stmt);
            }
            kind if kind.is_visible() => return Next::Unsupported(unsupported(kind)),
            OpKind::WatchdogStart { .. } | OpKind::WatchdogStop => {
                return Next::Unsupported("a watchdog");
            }
            _ => {}
        }
        if O::COVER {
            obs.ran(pid, pc as u32);
        }
        let goes_on = match step::local(m, st, pid, op, obs) {
            Ok(goes_on) => goes_on,
            Err(e) => {
                step::fail(m, st, pid, e, obs);
                return Next::Ended;
            }
        };
        if let OpKind::Sql {
            stmt: SqlStmt::Begin { isolation },
            ..
        } = &op.kind
        {
            return Next::Begin(*isolation);
        }
        if !goes_on {
            return match (st.procs[i].status, &op.kind) {
                (
                    Status::Busy(ticks),
                    OpKind::Work { draw, .. } | OpKind::Sleep { draw, .. },
                ) => Next::Delay {
                    ticks,
                    upto: ticks + st.procs[i].slack,
                    draw: *draw,
                },
                (Status::Busy(ticks), _) => Next::Delay {
                    ticks,
                    upto: ticks,
                    draw: None,
                },
                // A delay that could not start: only a full connection pool stops one.
                (Status::Ready, _) => Next::Unsupported("a connection pool or database workers"),
                _ => Next::Ended,
            };
        }
    }
}

fn unsupported(kind: &OpKind) -> &'static str {
    match kind {
        OpKind::Lock { .. } | OpKind::Unlock { .. } => "an in-process mutex",
        _ => "a Redis command",
    }
}

/// `pid`, standing at a `pick`, takes `value`.
pub fn pick<O: Observer>(m: &Model, st: &mut State, pid: Pid, value: i32, obs: &mut O) {
    let p = &mut st.procs[pid.index()];
    let pc = p.pc;
    if let Some(OpKind::Pick { local, .. }) = m.program(pid).ops.get(pc as usize).map(|o| &o.kind)
    {
        if O::COVER {
            obs.ran(pid, pc);
        }
        p.locals[*local as usize] = Value::Int(i64::from(value));
        p.pc += 1;
        if O::EVENTS {
            obs.event(Event::Picked {
                local: *local,
                value,
            });
        }
    }
}

/// The server answered the statement [`next`] returned: the process binds, handles or fails
/// as a simulated statement's outcome would make it.
pub fn answer<O: Observer>(m: &Model, st: &mut State, pid: Pid, a: Answer, obs: &mut O) {
    let pc = st.procs[pid.index()].pc as usize;
    let OpKind::Sql {
        stmt,
        into,
        on_error,
    } = &m.program(pid).ops[pc].kind
    else {
        return;
    };
    let out = match a {
        Answer::Rows(rows) => Outcome::Done(Reply::Rows(rows)),
        Answer::Count(n) => Outcome::Done(Reply::Count(n)),
        Answer::Done => Outcome::Done(Reply::None),
        Answer::Error(code) => Outcome::Error(code.into()),
    };
    let ok = matches!(out, Outcome::Done(_));
    let locals: Box<[Value]> = if O::LOCALS {
        st.procs[pid.index()].locals.iter().copied().collect()
    } else {
        Box::default()
    };
    let flow = sql::conclude(m, st, pid, (stmt, into, on_error.as_ref()), out, locals, obs);
    if ok && matches!(stmt, SqlStmt::Commit | SqlStmt::Rollback) {
        // The server ended the transaction; so does the process's own record of it.
        sql::end_txn(m, st, pid, matches!(stmt, SqlStmt::Commit), obs);
    }
    step::moved_on(st, pid, flow);
}

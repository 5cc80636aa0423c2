//! Expression evaluation for process code, SQL rows and properties.

use crate::ir::{BinOp, Expr, Model, StatusKind, UnOp};
use crate::world::process::{RunError, Status};
use crate::ir::value::{Pid, Value};
use crate::world::State;

/// What an expression can see. Process code has locals and `me`; SQL adds the row under
/// evaluation; properties see the whole state.
#[derive(Clone, Copy)]
pub struct Scope<'a> {
    pub model: &'a Model,
    pub state: &'a State,
    pub locals: &'a [Value],
    pub me: Option<Pid>,
    pub row: Option<&'a [Value]>,
}

impl<'a> Scope<'a> {
    /// The scope of a property: the whole state, no process.
    #[must_use]
    pub fn global(model: &'a Model, state: &'a State) -> Self {
        Scope {
            model,
            state,
            locals: &[],
            me: None,
            row: None,
        }
    }
}

/// Evaluates an expression.
///
/// # Errors
/// [`RunError`] on arithmetic over nil or mismatched kinds, overflow or division by zero.
// Inlined so that a leaf, what most operands are, is read where it is needed rather than
// by a call.
#[inline(always)]
pub fn eval(e: &Expr, sc: &Scope) -> Result<Value, RunError> {
    match leaf(e, sc) {
        Some(v) => Ok(v),
        None => compound(e, sc),
    }
}

/// The value of a leaf: a literal, a local, a ghost or a column.
#[inline(always)]
fn leaf(e: &Expr, sc: &Scope) -> Option<Value> {
    Some(match e {
        Expr::Lit(v) => *v,
        Expr::Local(i) => sc.locals[*i as usize],
        Expr::Ghost(g) => Value::Int(sc.state.ghosts[*g as usize]),
        Expr::Column(c) => sc.row.map_or(Value::Nil, |r| r[*c as usize]),
        _ => return None,
    })
}

/// [`eval`] of anything but a leaf.
fn compound(e: &Expr, sc: &Scope) -> Result<Value, RunError> {
    Ok(match e {
        Expr::Lit(_) | Expr::Local(_) | Expr::Ghost(_) | Expr::Column(_) => {
            unreachable!("leaves are read by `leaf`")
        }
        Expr::Me => sc.me.map_or(Value::Nil, Value::Pid),
        Expr::Cell { table, pk, column } => cell(sc, *table, *pk, *column),
        Expr::Sum { table, column } => sum(sc, *table, *column)?,
        Expr::Now => now(sc),
        Expr::Clock => {
            let drift = sc.me.map_or(0, |p| sc.state.procs[p.index()].drift);
            let ticks = (i64::from(sc.state.clock) + i64::from(drift)).max(0);
            Value::Int(ticks * sc.model.tick_ms as i64)
        }
        Expr::Key { key: k, server } => key(sc, *k, *server),
        Expr::Rows { table, filter } => rows(sc, *table, filter.as_deref())?,
        Expr::Count { group, status } => Value::Int(count(sc, *group, *status)),
        Expr::Status { pid, status } => {
            Value::Bool(proc_kind(&sc.state.procs[pid.index()]) == *status)
        }
        Expr::Unary(UnOp::Not, a) => Value::Bool(!eval(a, sc)?.truthy()),
        Expr::Unary(UnOp::Neg, a) => match eval(a, sc)? {
            Value::Int(i) => Value::Int(i.checked_neg().ok_or(RunError::Overflow)?),
            _ => return Err(RunError::Type),
        },
        Expr::Binary(BinOp::And, a, b) => {
            Value::Bool(eval(a, sc)?.truthy() && eval(b, sc)?.truthy())
        }
        Expr::Binary(BinOp::Or, a, b) => {
            Value::Bool(eval(a, sc)?.truthy() || eval(b, sc)?.truthy())
        }
        Expr::Binary(op, a, b) => binary(*op, eval(a, sc)?, eval(b, sc)?)?,
    })
}

fn binary(op: BinOp, a: Value, b: Value) -> Result<Value, RunError> {
    match op {
        BinOp::Eq => return Ok(Value::Bool(a == b)),
        BinOp::Ne => return Ok(Value::Bool(a != b)),
        _ => {}
    }
    let (Value::Int(x), Value::Int(y)) = (a, b) else {
        return Err(RunError::Type);
    };
    let arith = |r: Option<i64>| r.map(Value::Int).ok_or(RunError::Overflow);
    match op {
        BinOp::Add => arith(x.checked_add(y)),
        BinOp::Sub => arith(x.checked_sub(y)),
        BinOp::Mul => arith(x.checked_mul(y)),
        BinOp::Div if y == 0 => Err(RunError::DivideByZero),
        BinOp::Div => arith(x.checked_div(y)),
        BinOp::Rem if y == 0 => Err(RunError::DivideByZero),
        BinOp::Rem => arith(x.checked_rem(y)),
        BinOp::Lt => Ok(Value::Bool(x < y)),
        BinOp::Le => Ok(Value::Bool(x <= y)),
        BinOp::Gt => Ok(Value::Bool(x > y)),
        BinOp::Ge => Ok(Value::Bool(x >= y)),
        BinOp::Eq | BinOp::Ne | BinOp::And | BinOp::Or => unreachable!("handled above"),
    }
}

/// `redis(key on S)`: the key on the server's current primary.
fn key(sc: &Scope, k: crate::ir::value::Sym, server: u16) -> Value {
    if sc.model.redis.is_empty() {
        return Value::Nil;
    }
    let node = sc.state.node(sc.model, server);
    sc.state.redis[node].get(k).map_or(Value::Nil, |k| k.value)
}

/// `now()` in milliseconds: PostgreSQL returns the start of the transaction (PG-33), InnoDB
/// the start of the statement.
fn now(sc: &Scope) -> Value {
    let innodb = sc.model.db.as_ref().is_some_and(|d| d.flavour.innodb());
    let txn_start = sc
        .me
        .and_then(|p| sc.state.procs[p.index()].txn)
        .map(|t| t.started);
    let ticks = match txn_start {
        Some(t) if !innodb => t,
        _ => sc.state.clock,
    };
    Value::Int(i64::from(ticks) * sc.model.tick_ms as i64)
}

fn cell(sc: &Scope, table: u16, pk: Value, column: u16) -> Value {
    let db = &sc.state.db;
    db.find(table, pk)
        .ok()
        .and_then(|r| db.row(table, r).latest())
        .map_or(Value::Nil, |row| row[column as usize])
}

/// `sum(t.col)`: over the rows' newest committed versions; a deleted row or a nil adds nothing.
fn sum(sc: &Scope, table: u16, column: u16) -> Result<Value, RunError> {
    let db = &sc.state.db;
    let mut total: i64 = 0;
    for r in 0..db.rows(table) {
        match db.row(table, r).latest().map(|row| row[column as usize]) {
            Some(Value::Int(v)) => total = total.checked_add(v).ok_or(RunError::Overflow)?,
            Some(Value::Nil) | None => {}
            Some(_) => return Err(RunError::Type),
        }
    }
    Ok(Value::Int(total))
}

/// `count(t where cond)`: the rows' newest committed versions the condition holds for; a
/// deleted row is not counted.
fn rows(sc: &Scope, table: u16, filter: Option<&Expr>) -> Result<Value, RunError> {
    let db = &sc.state.db;
    let mut n = 0;
    for r in 0..db.rows(table) {
        let Some(row) = db.row(table, r).latest() else {
            continue;
        };
        let holds = match filter {
            None => true,
            Some(c) => eval(c, &Scope { row: Some(row), ..*sc })?.truthy(),
        };
        n += i64::from(holds);
    }
    Ok(Value::Int(n))
}

fn count(sc: &Scope, group: u16, status: StatusKind) -> i64 {
    sc.model
        .processes
        .iter()
        .zip(&sc.state.procs)
        .filter(|(p, q)| p.group == group as usize && proc_kind(q) == status)
        .count() as i64
}

/// A process's status as properties name it; a paused process is `paused`.
#[must_use]
pub fn proc_kind(p: &crate::world::process::Proc) -> StatusKind {
    if p.paused.is_some() {
        StatusKind::Paused
    } else {
        kind(p.status)
    }
}

/// The status as properties name it.
#[must_use]
pub fn kind(s: Status) -> StatusKind {
    match s {
        Status::Ready | Status::Busy(_) => StatusKind::Running,
        Status::Waiting(_) => StatusKind::Waiting,
        Status::Done(_) => StatusKind::Done,
        Status::Errored(_) => StatusKind::Failed,
        Status::Hung => StatusKind::Hung,
        Status::Crashed | Status::Failed(_) => StatusKind::Crashed,
    }
}

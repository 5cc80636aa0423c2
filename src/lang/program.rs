//! Lowering of a process body: structured statements to a flat op list with jumps.

use std::collections::HashMap;

mod unroll;

use super::ast::{BackoffAst, Block, DelayAst, DistAst, GhostOp, Name, ProcessDecl, RedisAst, SqlText, Stmt, StmtKind};
use super::diag::Diagnostic;
use super::lower_expr::{self, Locals, Place};
use super::lower_workload;
use super::schema::duplicate;
use super::scope::Cx;
use super::sql::lower_sql;
use crate::ir::workload::{latency_of, Arrival, Spent};
use crate::ir::{
    BinOp, Expr, OnError, Op, OpKind, Program, RedisCmd, Span, SqlStmt, Sym, Value, ERROR_CODES,
};

/// A `region NAME { … }` of a program: the op indices `start..end` its body lowered to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Region {
    pub name: String,
    pub start: u32,
    pub end: u32,
}

/// How late a process of an open group may start, in milliseconds (about eleven days).
pub const ARRIVAL_HORIZON_MS: u32 = 1_000_000_000;

/// Lowers a group's body; durations stay in milliseconds until [`apply_tick`]. Also returns
/// the body's regions, in source order.
pub fn lower_program(cx: &mut Cx, decl: &ProcessDecl) -> (Program, Vec<Region>) {
    let mut builder = Builder {
        cx,
        locals: Locals::new(decl.defined.clone()),
        loops: Vec::new(),
        in_atomic: false,
        atomic_server: None,
        repeats: 0,
        retries: 0,
        handlers: Vec::new(),
        regions: Vec::new(),
        region_lines: HashMap::new(),
        unrolled: 0,
        unroll_reported: false,
        tests: Vec::new(),
        raised: {
            let mut codes = Vec::new();
            raised_codes(&decl.body, &mut codes);
            codes
        },
    };
    let mut ops = Vec::new();
    if let Some(Arrival::Open { gap }) = builder.cx.workload.arrivals.last() {
        // `check` lets each process of an open group start at any moment; `simulate`
        // ends this wait at the process's arrival.
        let wait = OpKind::Sleep {
            ticks: 0,
            upto: ARRIVAL_HORIZON_MS,
            draw: Some(*gap),
        };
        push(&mut ops, wait, decl.header);
    }
    builder.block(&decl.body, &mut ops);
    ops.push(Op {
        kind: OpKind::Return { outcome: None },
        span: decl.end,
    });
    let program = Program {
        ops,
        tests: std::mem::take(&mut builder.tests),
        locals: builder.locals.into_names(),
    };
    (program, builder.regions)
}

struct Builder<'a, 'd> {
    cx: &'a mut Cx<'d>,
    locals: Locals,
    /// Open loops, innermost last, with their `break` jumps to patch; `None` marks an
    /// `atomic` boundary, which `break` may not cross.
    loops: Vec<Option<Vec<usize>>>,
    in_atomic: bool,
    /// The server of the enclosing `atomic` block, when it resolved.
    atomic_server: Option<u16>,
    repeats: usize,
    retries: usize,
    /// Open `retry` blocks, innermost last: the handler their SQL statements get.
    handlers: Vec<Handler>,
    regions: Vec<Region>,
    /// Region names seen, with their lines (for duplicates).
    region_lines: HashMap<String, usize>,
    /// The ops that test an `if`'s condition, at the program's top level (not in `atomic`).
    tests: Vec<u32>,
    /// Statements the `for` loops have unrolled to so far, and whether too many were reported.
    unrolled: usize,
    unroll_reported: bool,
    /// The application's error codes a `raise` of this program raises: the only ones its
    /// `retry … on` may list besides the databases'.
    raised: Vec<String>,
}

/// The codes every `raise` in `block` (and the blocks inside it) raises.
fn raised_codes(block: &Block, out: &mut Vec<String>) {
    for s in block {
        match &s.kind {
            StmtKind::Raise((code, _)) => out.push(code.clone()),
            StmtKind::If { arms, otherwise } => {
                arms.iter().for_each(|(_, b)| raised_codes(b, out));
                otherwise.iter().for_each(|b| raised_codes(b, out));
            }
            StmtKind::Repeat { body, .. }
            | StmtKind::For { body, .. }
            | StmtKind::Loop { body, .. }
            | StmtKind::Retry { body, .. }
            | StmtKind::Atomic { body, .. }
            | StmtKind::Region { body, .. } => raised_codes(body, out),
            _ => {}
        }
    }
}

/// The error handler a `retry` block installs on the SQL statements of its body.
struct Handler {
    /// `#errK`: receives the error code.
    local: u16,
    codes: Vec<Sym>,
    /// Ops whose `on_error.target` is patched to the handler once it is placed.
    patches: Vec<usize>,
    /// The jumps of `raise` statements it catches, patched to the handler.
    raises: Vec<usize>,
}

fn sql_op(stmt: SqlStmt, into: Vec<u16>, on_error: Option<OnError>) -> OpKind {
    OpKind::Sql {
        stmt,
        into,
        on_error,
    }
}

fn push(ops: &mut Vec<Op>, kind: OpKind, span: Span) -> usize {
    ops.push(Op { kind, span });
    ops.len() - 1
}

/// Points the jump at `at` to `target`.
fn patch(ops: &mut [Op], at: usize, target: usize) {
    match &mut ops[at].kind {
        OpKind::Jump(t) | OpKind::JumpUnless { target: t, .. } => *t = target as u32,
        _ => {}
    }
}

/// What a statement is called when refused inside `atomic`; `None` if allowed there.
fn refused_in_atomic(kind: &StmtKind) -> Option<&'static str> {
    Some(match kind {
        StmtKind::Sql(_) => "SQL",
        StmtKind::Lock(_) => "`lock`",
        StmtKind::Unlock(_) => "`unlock`",
        StmtKind::Work(..) => "`work`",
        StmtKind::Sleep(..) | StmtKind::SleepFor(..) => "`sleep`",
        StmtKind::Call(..) => "`call`",
        StmtKind::Pick { .. } => "`pick`",
        StmtKind::Redis {
            cmd: RedisAst::Wait { .. },
            ..
        } => "`WAIT`",
        StmtKind::Redis {
            cmd: RedisAst::GetReplica { .. },
            ..
        } => "a replica read (`GET … replica`)",
        StmtKind::Redis { wait: true, .. } => "`await`",
        StmtKind::Atomic { .. } => "a nested `atomic`",
        StmtKind::Return(_) => "`return`",
        StmtKind::Retry { .. } => "`retry`",
        StmtKind::Loop { .. } => "`loop`",
        StmtKind::Watchdog { .. } | StmtKind::WatchdogStop => "`watchdog`",
        StmtKind::Region { .. } => "`region`",
        StmtKind::Raise(_) => "`raise`",
        _ => return None,
    })
}

impl Builder<'_, '_> {
    fn block(&mut self, stmts: &Block, ops: &mut Vec<Op>) {
        for s in stmts {
            self.stmt(s, ops);
        }
    }

    fn code(&mut self, e: &super::ast::Expr) -> Expr {
        lower_expr::lower(self.cx, &mut Place::Code(&mut self.locals), e)
    }

    fn stmt(&mut self, s: &Stmt, ops: &mut Vec<Op>) {
        if let (true, Some(what)) = (self.in_atomic, refused_in_atomic(&s.kind)) {
            let msg = format!("{what} is not allowed inside `atomic`");
            let hint = "an atomic block runs Redis commands and local code as one step, \
                        like a Lua script";
            let d = Diagnostic::new(msg, s.span, "not allowed here").with_hint(hint);
            self.cx.report(d);
            return;
        }
        match &s.kind {
            StmtKind::If { arms, otherwise } => self.if_stmt(arms, otherwise.as_ref(), ops),
            StmtKind::Repeat { count, head, body } => self.repeat(*count, body, *head, ops),
            StmtKind::For {
                var,
                items,
                head,
                body,
            } => self.for_stmt(var, items, *head, body, ops),
            StmtKind::Loop { head, body } => self.loop_stmt(body, *head, ops),
            StmtKind::Break => self.break_stmt(s.span, ops),
            StmtKind::Retry {
                attempts,
                codes,
                backoff,
                head,
                body,
            } => self.retry(*attempts, codes, *backoff, *head, body, ops),
            StmtKind::Region { name, body } => self.region(name, body, ops),
            StmtKind::Raise(code) => self.raise(code, s.span, ops),
            _ => {
                if let Some(kind) = self.op(&s.kind, s.span) {
                    let handled = matches!(
                        &kind,
                        OpKind::Sql {
                            on_error: Some(OnError {
                                target: Some(_),
                                ..
                            }),
                            ..
                        }
                    );
                    let at = self.push_visible(ops, kind, s.span);
                    if let (true, Some(h)) = (handled, self.handlers.last_mut()) {
                        h.patches.push(at);
                    }
                }
            }
        }
    }

    /// The one op of a statement without control flow; `None` when it was reported.
    fn op(&mut self, kind: &StmtKind, span: Span) -> Option<OpKind> {
        Some(match kind {
            StmtKind::SetLocal { name, expr } => {
                let expr = self.code(expr);
                let local = self.bind(name);
                OpKind::Assign { local, expr }
            }
            StmtKind::SetGhost { name, op, expr } => self.set_ghost(name, *op, expr)?,
            StmtKind::Return(outcome) => OpKind::Return {
                outcome: outcome.as_ref().map(|o| self.cx.intern(o)),
            },
            StmtKind::Work(d) => OpKind::Work {
                ticks: self.ms(d.lo),
                upto: self.ms(d.hi),
                draw: self.drawn(d, Spent::Work),
            },
            StmtKind::Sleep(d) => OpKind::Sleep {
                ticks: self.ms(d.lo),
                upto: self.ms(d.hi),
                draw: self.drawn(d, Spent::Sleep),
            },
            StmtKind::Call(name, d) => {
                let service = self.cx.intern(&name.text);
                OpKind::Work {
                    ticks: self.ms(d.lo),
                    upto: self.ms(d.hi),
                    draw: Some(lower_workload::draw(self.cx, d, Spent::Call(service))),
                }
            }
            StmtKind::SleepFor(e, unit) => {
                // Any whole number of milliseconds can come out: the tick is at most 1 ms.
                self.cx.durations.push(1);
                OpKind::SleepFor {
                    expr: self.code(e),
                    unit: *unit as u32,
                }
            }
            StmtKind::Pick { local, lo, hi, zipf } => OpKind::Pick {
                local: self.bind(local),
                lo: *lo as i32,
                hi: *hi as i32,
                zipf: *zipf,
            },
            StmtKind::Lock(m) => OpKind::Lock {
                mutex: self.cx.mutex(m)?,
            },
            StmtKind::Unlock(m) => OpKind::Unlock {
                mutex: self.cx.mutex(m)?,
            },
            StmtKind::Sql(sql) => self.sql(sql)?,
            StmtKind::Redis {
                cmd,
                into,
                wait,
                on,
            } => {
                let server = self.server(on.as_ref(), span, "GET key on NAME");
                let cmd = self.redis(cmd, server);
                let into = into.as_ref().map(|n| self.bind(n));
                let (cmd, server) = (cmd?, server?);
                if *wait {
                    OpKind::AwaitRedis { cmd, into, server }
                } else {
                    OpKind::Redis { cmd, into, server }
                }
            }
            StmtKind::Atomic { body, on, head } => self.atomic(body, on.as_ref(), *head)?,
            StmtKind::Watchdog { key, lease } => {
                self.cx.redis_used = true;
                // The watchdog renews every lease/3: that period counts toward the tick too.
                self.cx.durations.push(lease / 3);
                OpKind::WatchdogStart {
                    key: self.key(key)?,
                    lease: self.ms(*lease),
                }
            }
            StmtKind::WatchdogStop => OpKind::WatchdogStop,
            StmtKind::If { .. }
            | StmtKind::Repeat { .. }
            | StmtKind::For { .. }
            | StmtKind::Loop { .. }
            | StmtKind::Break
            | StmtKind::Retry { .. }
            | StmtKind::Raise(_)
            | StmtKind::Region { .. } => return None,
        })
    }

    /// Records a duration; it stays in milliseconds until the tick is known.
    /// The draw of a delay with a named distribution; `None` for a plain length or range.
    fn drawn(&mut self, d: &DelayAst, spent: Spent) -> Option<u16> {
        (d.dist != DistAst::Range).then(|| lower_workload::draw(self.cx, d, spent))
    }

    /// Pushes a visible op, after the delay its kind's `latency` line prices it at.
    fn push_visible(&mut self, ops: &mut Vec<Op>, kind: OpKind, span: Span) -> usize {
        let priced = latency_of(&kind).and_then(|k| lower_workload::latency(self.cx, k));
        if let (Some(draw), false) = (priced, self.in_atomic) {
            let (lo, hi) = self.cx.workload.draws[draw as usize].dist.range();
            let latency = OpKind::Work {
                ticks: lo,
                upto: hi,
                draw: Some(draw),
            };
            push(ops, latency, span);
        }
        push(ops, kind, span)
    }

    fn ms(&mut self, ms: u64) -> u32 {
        self.cx.durations.push(ms);
        ms as u32
    }

    fn set_ghost(
        &mut self,
        name: &super::ast::Name,
        op: GhostOp,
        e: &super::ast::Expr,
    ) -> Option<OpKind> {
        let ghost = self.cx.ghost(name);
        let value = self.code(e);
        let ghost = ghost?;
        let expr = match op {
            GhostOp::Set => value,
            GhostOp::Add => Expr::Binary(BinOp::Add, Box::new(Expr::Ghost(ghost)), Box::new(value)),
            GhostOp::Sub => Expr::Binary(BinOp::Sub, Box::new(Expr::Ghost(ghost)), Box::new(value)),
        };
        Some(OpKind::SetGhost { ghost, expr })
    }

    fn if_stmt(
        &mut self,
        arms: &[(super::ast::Expr, Block)],
        otherwise: Option<&Block>,
        ops: &mut Vec<Op>,
    ) {
        let mut to_end = Vec::new();
        for (i, (cond, body)) in arms.iter().enumerate() {
            let c = self.code(cond);
            let test = push(ops, OpKind::JumpUnless { cond: c, target: 0 }, cond.span);
            if !self.in_atomic {
                self.tests.push(test as u32);
            }
            self.block(body, ops);
            if i + 1 < arms.len() || otherwise.is_some() {
                to_end.push(push(ops, OpKind::Jump(0), cond.span));
            }
            let next = ops.len();
            patch(ops, test, next);
        }
        if let Some(body) = otherwise {
            self.block(body, ops);
        }
        let end = ops.len();
        for at in to_end {
            patch(ops, at, end);
        }
    }

    /// `#repeatK = 0; head: unless #repeatK < N goto end; #repeatK += 1; body; goto head; end:`
    fn repeat(&mut self, count: u32, body: &Block, span: Span, ops: &mut Vec<Op>) {
        self.repeats += 1;
        let counter = self.locals.bind(&format!("#repeat{}", self.repeats));
        let head = counted_head(ops, counter, count, span);
        self.loops.push(Some(Vec::new()));
        self.block(body, ops);
        let breaks = self.loops.pop().flatten().unwrap_or_default();
        push(ops, OpKind::Jump(head as u32), span);
        let end = ops.len();
        patch(ops, head, end);
        for at in breaks {
            patch(ops, at, end);
        }
    }

    /// `head: body; goto head; end:`, where `break` jumps to `end`.
    fn loop_stmt(&mut self, body: &Block, span: Span, ops: &mut Vec<Op>) {
        let head = ops.len();
        let reported = self.cx.diags.len();
        self.loops.push(Some(Vec::new()));
        self.block(body, ops);
        let breaks = self.loops.pop().flatten().unwrap_or_default();
        let back = push(ops, OpKind::Jump(head as u32), span);
        let end = ops.len();
        for at in breaks {
            patch(ops, at, end);
        }
        // A body already reported may have lost the ops that step; say nothing more then.
        if self.cx.diags.len() == reported && spins(ops, head, back) {
            let d = Diagnostic::new(
                "this `loop` can go round without taking a step",
                span,
                "would spin forever",
            )
            .with_hint(
                "every way round the loop must run a SQL or Redis command, a `lock`, an \
                 `unlock`, a `work` or a `sleep`, or leave it with `break` or `return`",
            );
            self.cx.report(d);
        }
    }

    /// `retry N on codes [backoff D] { body }`:
    /// ```text
    ///    #retryK = 0
    /// L: unless #retryK < N goto X
    ///    #retryK = #retryK + 1
    ///    body          -- its SQL without `catch` jumps to H on a listed error, code in #errK
    ///    goto E
    /// H: ROLLBACK
    ///    unless #retryK < N goto X   -- no wait after the last attempt
    ///    [sleep W(#retryK)]         -- the backoff: one sleep, or one per attempt
    ///    goto L
    /// X: raise #errK
    /// E:
    /// ```
    fn retry(
        &mut self,
        attempts: u32,
        codes: &[(String, Span)],
        backoff: Option<BackoffAst>,
        span: Span,
        body: &Block,
        ops: &mut Vec<Op>,
    ) {
        let codes = self.error_codes(codes, false);
        self.retries += 1;
        let counter = self.locals.bind(&format!("#retry{}", self.retries));
        let error = self.locals.bind(&format!("#err{}", self.retries));
        let head = counted_head(ops, counter, attempts, span);
        self.handlers.push(Handler {
            local: error,
            codes,
            patches: Vec::new(),
            raises: Vec::new(),
        });
        self.loops.push(Some(Vec::new()));
        self.block(body, ops);
        let breaks = self.loops.pop().flatten().unwrap_or_default();
        let (handler, raises) = self
            .handlers
            .pop()
            .map(|h| (h.patches, h.raises))
            .unwrap_or_default();
        let done = push(ops, OpKind::Jump(0), span);
        let h = sql_op(SqlStmt::Rollback, Vec::new(), None);
        let before = ops.len();
        self.push_visible(ops, h, span);
        // Handlers jump to the ROLLBACK's latency, when it has one: it is paid like any other.
        let h = before;
        let last = ops.len();
        let again = Expr::Binary(
            BinOp::Lt,
            Box::new(Expr::Local(counter)),
            Box::new(Expr::Lit(Value::Int(i64::from(attempts)))),
        );
        push(ops, OpKind::JumpUnless { cond: again, target: 0 }, span);
        if let Some(b) = backoff {
            self.backoff(&b, attempts, counter, head, ops);
        }
        push(ops, OpKind::Jump(head as u32), span);
        let raise = push(ops, OpKind::Raise { local: error }, span);
        patch(ops, head, raise);
        patch(ops, last, raise);
        let end = ops.len();
        patch(ops, done, end);
        for at in breaks {
            patch(ops, at, end);
        }
        for at in raises {
            patch(ops, at, h);
        }
        for at in handler {
            if let OpKind::Sql {
                on_error: Some(OnError { target, .. }),
                ..
            } = &mut ops[at].kind
            {
                *target = Some(h as u32);
            }
        }
    }

    /// The waits of a retry's backoff, after the attempt `counter` counts: one sleep when
    /// they are alike, else one per attempt, each followed by a jump back to `head`.
    fn backoff(&mut self, b: &BackoffAst, attempts: u32, counter: u16, head: usize, ops: &mut Vec<Op>) {
        let waits = match b.waits(attempts) {
            Ok(w) => w,
            Err(d) => return self.cx.report(d),
        };
        let BackoffAst::Exponential { span, .. } = *b;
        let sleep = |me: &mut Self, (lo, hi): (u64, u64)| OpKind::Sleep {
            ticks: me.ms(lo),
            upto: me.ms(hi),
            draw: None,
        };
        if waits.windows(2).all(|w| w[0] == w[1]) {
            if let Some(&w) = waits.first() {
                let op = sleep(self, w);
                push(ops, op, span);
            }
            return;
        }
        for (k, &w) in waits.iter().enumerate() {
            let attempt = Expr::Binary(
                BinOp::Eq,
                Box::new(Expr::Local(counter)),
                Box::new(Expr::Lit(Value::Int(k as i64 + 1))),
            );
            let test = push(ops, OpKind::JumpUnless { cond: attempt, target: 0 }, span);
            let op = sleep(self, w);
            push(ops, op, span);
            push(ops, OpKind::Jump(head as u32), span);
            let next = ops.len();
            patch(ops, test, next);
        }
    }

    /// `raise 'Code'`: the nearest enclosing `retry` that lists the code catches it (its
    /// handler rolls back and tries again); otherwise the process ends with the error, as an exception
    /// nobody catches ends a request.
    fn raise(&mut self, code: &(String, Span), span: Span, ops: &mut Vec<Op>) {
        let Some(sym) = self.error_codes(std::slice::from_ref(code), true).pop() else {
            return;
        };
        let value = Expr::Lit(Value::Str(sym));
        // The nearest enclosing `retry` that lists the code, as an exception rises through
        // the decorators that do not retry it to the first that does.
        let caught = self.handlers.iter().rposition(|h| h.codes.contains(&sym));
        if let Some(k) = caught {
            let local = self.handlers[k].local;
            push(ops, OpKind::Assign { local, expr: value }, span);
            let at = push(ops, OpKind::Jump(0), span);
            self.handlers[k].raises.push(at);
            return;
        }
        let local = self.locals.bind("#raise");
        push(ops, OpKind::Assign { local, expr: value }, span);
        push(ops, OpKind::Raise { local }, span);
    }

    /// The symbols of a retry's (or a raise's) error codes: the databases' codes, and an
    /// application's, which start with a letter (`'VersionConflict'`) and, in a `retry`,
    /// must be raised by a `raise` of the program; others are reported.
    fn error_codes(&mut self, codes: &[(String, Span)], raising: bool) -> Vec<Sym> {
        let mut syms = Vec::new();
        for (code, span) in codes {
            let application = code.starts_with(|c: char| c.is_ascii_alphabetic())
                && code.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                && !ERROR_CODES.contains(&code.as_str());
            if application && !raising && !self.raised.contains(code) {
                let msg = format!("no `raise` raises '{code}'");
                let d = Diagnostic::new(msg, *span, "nothing raises this").with_hint(
                    "an application's error is caught only if the process raises it (`raise \'VersionConflict\'`); a database's code is a number such as '40001' or '1213'",
                );
                self.cx.report(d);
                continue;
            }
            if ERROR_CODES.contains(&code.as_str()) || application {
                let sym = self.cx.intern(code);
                if !syms.contains(&sym) {
                    syms.push(sym);
                }
                continue;
            }
            let known: Vec<String> = ERROR_CODES.iter().map(|c| format!("'{c}'")).collect();
            let msg = format!("unknown error code '{code}'");
            let d = Diagnostic::new(msg, *span, "not an error the databases raise")
                .with_hint(format!(
                    "the databases' error codes are {}; an application's error (`raise`) is a name, like 'VersionConflict'",
                    known.join(", ")
                ));
            self.cx.report(d);
        }
        syms
    }

    fn break_stmt(&mut self, span: Span, ops: &mut Vec<Op>) {
        let at = push(ops, OpKind::Jump(0), span);
        match self.loops.last_mut() {
            Some(Some(breaks)) => breaks.push(at),
            innermost => {
                ops.pop();
                let (msg, hint) = if innermost.is_some() {
                    ("`break` cannot leave an `atomic` block", "put the loop inside the atomic block, or the atomic block inside the loop without `break`")
                } else {
                    (
                        "`break` outside a loop",
                        "`break` leaves the innermost `repeat`, `loop`, `for` or `retry`",
                    )
                };
                self.cx
                    .report(Diagnostic::new(msg, span, "no loop to leave").with_hint(hint));
            }
        }
    }

    /// `region NAME { body }`: the body inline; the region covers the ops it lowered to.
    fn region(&mut self, name: &Name, body: &Block, ops: &mut Vec<Op>) {
        let fresh = !duplicate(self.cx, &mut self.region_lines, name, "region");
        let start = ops.len();
        self.block(body, ops);
        let end = ops.len();
        if !fresh {
            return;
        }
        if start == end {
            let msg = format!("region \"{}\" is empty", name.text);
            let d = Diagnostic::new(msg, name.span, "covers no statement")
                .with_hint("a region covers the statements of its body; a fault `during` it could never happen");
            self.cx.report(d);
            return;
        }
        self.regions.push(Region {
            name: name.text.clone(),
            start: start as u32,
            end: end as u32,
        });
    }

    fn atomic(&mut self, body: &Block, on: Option<&Name>, head: Span) -> Option<OpKind> {
        let server = self.server(on, head, "atomic on NAME { … }");
        let mut inner = Vec::new();
        self.in_atomic = true;
        self.atomic_server = server;
        self.loops.push(None);
        self.block(body, &mut inner);
        self.loops.pop();
        self.in_atomic = false;
        self.atomic_server = None;
        Some(OpKind::Atomic {
            body: inner,
            server: server?,
        })
    }

    /// The server a command or `atomic` block runs on: its `on NAME`, the enclosing atomic
    /// block's, or the only one. `example` shows how to name one (see [`Cx::only_server`]).
    fn server(&mut self, on: Option<&Name>, span: Span, example: &str) -> Option<u16> {
        self.cx.redis_used = true;
        let server = match on {
            Some(name) => {
                let name = self.server_named(name)?;
                self.cx.server(&name)?
            }
            None if self.in_atomic => return Some(self.atomic_server.unwrap_or(0)),
            None => return self.cx.only_server(span, example),
        };
        match self.atomic_server {
            Some(outer) if self.in_atomic && outer != server => {
                let names = |s: u16| self.cx.redis[usize::from(s)].name.clone();
                let (outer, this) = (names(outer), names(server));
                let msg = format!("a command inside `atomic on {outer}` names `{this}`");
                let d = Diagnostic::new(msg, on.map_or(span, |n| n.span), "another server")
                    .with_hint(
                        "an atomic block runs on one server, as a Lua script does; \
                         move the command out of the block",
                    );
                self.cx.report(d);
                None
            }
            _ => Some(server),
        }
    }

    /// A Redis command; `WAIT` is checked against the server's replicas when it is known.
    fn redis(&mut self, cmd: &RedisAst, server: Option<u16>) -> Option<RedisCmd> {
        Some(match cmd {
            RedisAst::Set {
                key,
                value,
                nx,
                px,
                ex,
            } => RedisCmd::Set {
                key: self.key(key)?,
                value: self.code(value),
                nx: *nx,
                px: px.map(|ms| self.ms(ms)),
                ex: *ex,
            },
            RedisAst::Get(key) => RedisCmd::Get {
                key: self.key(key)?,
            },
            RedisAst::GetReplica { key, replica, span } => {
                if let Some(s) = server {
                    self.replica_exists(s, *replica, *span)?;
                }
                RedisCmd::GetReplica {
                    key: self.key(key)?,
                    replica: *replica,
                }
            }
            RedisAst::Del(key) => RedisCmd::Del {
                key: self.key(key)?,
            },
            RedisAst::Pexpire { key, ttl } => RedisCmd::Pexpire {
                key: self.key(key)?,
                ttl: self.ms(*ttl),
            },
            RedisAst::Pttl(key) => RedisCmd::Pttl {
                key: self.key(key)?,
            },
            RedisAst::Incr(key) => RedisCmd::Incr {
                key: self.key(key)?,
            },
            RedisAst::Wait { replicas, timeout } => {
                // 0 waits for ever: it is no duration, and does not count toward the tick.
                let timeout = if *timeout == 0 { 0 } else { self.ms(*timeout) };
                RedisCmd::Wait {
                    replicas: *replicas,
                    timeout,
                }
            }
        })
    }

    /// `GET … replica K` on server `s`: K is 1-based and at most its replicas, else it is
    /// reported.
    fn replica_exists(&mut self, s: u16, k: u8, span: Span) -> Option<()> {
        let server = &self.cx.redis[usize::from(s)];
        if k >= 1 && k <= server.replicas {
            return Some(());
        }
        let (name, has) = (server.name.clone(), server.replicas);
        let d = if k == 0 {
            Diagnostic::new("replicas are numbered from 1", span, "no replica 0").with_hint(
                "without `replica` the primary answers: `GET key on S`; \
                 `replica 1` is the first replica",
            )
        } else {
            let plural = |n: u8| if n == 1 { "replica" } else { "replicas" };
            let label = match has {
                0 => format!("`{name}` has no replica"),
                n => format!("`{name}` has {n} {}", plural(n)),
            };
            let declare = if self.cx.redis_declared {
                format!("redis {name} with {k} {}", plural(k))
            } else {
                format!("redis NAME with {k} {}", plural(k))
            };
            let hint = match has {
                0 => format!("declare `{declare}` to read from a replica"),
                1 => format!("declare `{declare}`, or read `replica 1`"),
                n => format!("declare `{declare}`, or read a replica from 1 to {n}"),
            };
            let msg = format!("`{name}` has no replica {k}");
            Diagnostic::new(msg, span, label).with_hint(hint)
        };
        self.cx.report(d);
        None
    }

    fn sql(&mut self, sql: &SqlText) -> Option<OpKind> {
        let into: Vec<u16> = sql.into.iter().map(|n| self.bind(n)).collect();
        let on_error = match &sql.catch {
            Some(name) => Some(OnError {
                local: self.bind(name),
                codes: Vec::new(),
                target: None,
            }),
            // The target is patched when the enclosing `retry` places its handler.
            None => self.handlers.last().map(|h| OnError {
                local: h.local,
                codes: h.codes.clone(),
                target: Some(u32::MAX),
            }),
        };
        let stmt = lower_sql(self.cx, &mut self.locals, sql)?;
        let (wanted, what) = match &stmt {
            SqlStmt::Select { columns, .. } => (columns.len(), "the columns the select reads"),
            SqlStmt::Update { .. } => (1, "one local: the number of rows updated"),
            SqlStmt::Insert { .. } => (1, "one local: the number of rows inserted"),
            SqlStmt::Delete { .. } => (1, "one local: the number of rows deleted"),
            _ => (0, "nothing: transaction control returns no value"),
        };
        if !sql.into.is_empty() && sql.into.len() != wanted {
            self.arity_error(sql, wanted, what);
            return None;
        }
        Some(sql_op(stmt, into, on_error))
    }

    fn arity_error(&mut self, sql: &SqlText, wanted: usize, what: &str) {
        let (first, last) = (&sql.into[0], &sql.into[sql.into.len() - 1]);
        let span = Span {
            start: first.span.start,
            end: last.span.end,
        };
        let n = sql.into.len();
        let msg = format!(
            "`into` binds {n} local{} but the statement gives {wanted}",
            if n == 1 { "" } else { "s" }
        );
        let d = Diagnostic::new(msg, span, format!("{n} here"))
            .with_hint(format!("`into` takes {what}"));
        self.cx.report(d);
    }
}

/// Divides every duration in `ops` (and atomic bodies) by the tick.
pub fn apply_tick(ops: &mut [Op], tick: u64) {
    let scale = |t: &mut u32| *t = (u64::from(*t) / tick) as u32;
    for op in ops {
        match &mut op.kind {
            OpKind::Work { ticks, upto, .. } | OpKind::Sleep { ticks, upto, .. } => {
                scale(ticks);
                scale(upto);
            }
            OpKind::WatchdogStart { lease, .. } | OpKind::SleepFor { unit: lease, .. } => {
                scale(lease);
            }
            OpKind::Redis { cmd, .. } | OpKind::AwaitRedis { cmd, .. } => match cmd {
                RedisCmd::Set { px: Some(t), .. }
                | RedisCmd::Pexpire { ttl: t, .. }
                | RedisCmd::Wait { timeout: t, .. } => scale(t),
                _ => {}
            },
            OpKind::Atomic { body, .. } => apply_tick(body, tick),
            _ => {}
        }
    }
}

/// The head of a counted loop (`repeat`, `retry`): `#c = 0; head: unless #c < count goto end;
/// #c = #c + 1`. Returns the index of the conditional jump, whose target the caller patches.
fn counted_head(ops: &mut Vec<Op>, counter: u16, count: u32, span: Span) -> usize {
    let int = |v: i64| Box::new(Expr::Lit(Value::Int(v)));
    let zero = OpKind::Assign {
        local: counter,
        expr: Expr::Lit(Value::Int(0)),
    };
    push(ops, zero, span);
    let cond = Expr::Binary(
        BinOp::Lt,
        Box::new(Expr::Local(counter)),
        int(i64::from(count)),
    );
    let head = push(ops, OpKind::JumpUnless { cond, target: 0 }, span);
    let step = Expr::Binary(BinOp::Add, Box::new(Expr::Local(counter)), int(1));
    let bump = OpKind::Assign {
        local: counter,
        expr: step,
    };
    push(ops, bump, span);
    head
}

/// The loop `head..=back` (`back` jumps to `head`) can reach `back` from `head` through local
/// ops only: the engine would run it forever within one step.
fn spins(ops: &[Op], head: usize, back: usize) -> bool {
    let mut seen = vec![false; back + 1 - head];
    let mut todo = vec![head];
    while let Some(i) = todo.pop() {
        if i < head || i > back || std::mem::replace(&mut seen[i - head], true) {
            continue;
        }
        if i == back {
            return true;
        }
        match &ops[i].kind {
            k if k.is_visible() => {}
            OpKind::Work { upto, .. } | OpKind::Sleep { upto, .. } if *upto > 0 => {}
            OpKind::Return { .. } | OpKind::Raise { .. } => {}
            OpKind::Jump(t) => todo.push(*t as usize),
            OpKind::JumpUnless { target, .. } => todo.extend([i + 1, *target as usize]),
            _ => todo.push(i + 1),
        }
    }
    false
}

//! Lowering of code and property expressions: names to indices, literals to values.

use std::collections::BTreeSet;

use indexmap::IndexSet;

use super::ast::{self, ExprKind, LitKind, Name};
use super::diag::Diagnostic;
use super::scope::Cx;
use super::suggest;
use crate::ir::{Expr, Pid, Span, StatusKind, Value};

/// A program's locals: index = position; `defined` are those assigned or bound somewhere.
/// `consts` are the variables of the `for` loops being unrolled, innermost last.
pub struct Locals {
    names: IndexSet<String>,
    defined: BTreeSet<String>,
    reported: BTreeSet<String>,
    consts: Vec<ForConst>,
}

/// A `for` variable in one copy of its body: the item it stands for.
pub struct ForConst {
    pub name: String,
    /// The item when it is a whole number; otherwise it is a string (a name or a string).
    pub int: Option<i64>,
    /// The item as written, for keys and servers.
    pub text: String,
    /// Where the item is written.
    pub span: Span,
}

impl Locals {
    pub fn new(defined: BTreeSet<String>) -> Self {
        Locals {
            names: IndexSet::new(),
            defined,
            reported: BTreeSet::new(),
            consts: Vec::new(),
        }
    }

    /// The `for` variable `name` is bound to an item until [`Locals::pop_const`].
    pub fn push_const(&mut self, c: ForConst) {
        self.consts.push(c);
    }

    pub fn pop_const(&mut self) {
        self.consts.pop();
    }

    /// The innermost `for` variable called `name`, if one is bound.
    pub fn constant(&self, name: &str) -> Option<&ForConst> {
        self.consts.iter().rev().find(|c| c.name == name)
    }

    /// A local read in code or SQL: the item of a `for` variable, else the local.
    pub fn value(&mut self, cx: &mut Cx, name: &Name) -> Expr {
        match self.constant(&name.text) {
            Some(ForConst { int: Some(v), .. }) => Expr::Lit(Value::Int(*v)),
            Some(c) => Expr::Lit(Value::Str(cx.intern(&c.text))),
            None => Expr::Local(self.read(cx, name)),
        }
    }

    /// The index of a local being written (or a hidden `#repeat` counter).
    pub fn bind(&mut self, name: &str) -> u16 {
        self.names.insert_full(name.to_string()).0 as u16
    }

    /// The index of a local being read; reports it (once) if nothing ever sets it.
    pub fn read(&mut self, cx: &mut Cx, name: &Name) -> u16 {
        if !self.defined.contains(&name.text) && self.reported.insert(name.text.clone()) {
            let known: Vec<&str> = self.defined.iter().map(String::as_str).collect();
            let hint = match suggest::closest(&name.text, known) {
                Some(best) => format!("did you mean `${best}`?"),
                None => format!(
                    "set it with `${0} = ...` or bind it with `into ${0}`",
                    name.text
                ),
            };
            let msg = format!("unknown variable \"${}\"", name.text);
            let d = Diagnostic::new(msg, name.span, "never assigned in this process");
            cx.report(d.with_hint(hint));
        }
        self.bind(&name.text)
    }

    pub fn into_names(self) -> Vec<String> {
        self.names.into_iter().collect()
    }
}

/// Where an expression is written: process code sees locals, properties see the world.
pub enum Place<'a> {
    Code(&'a mut Locals),
    Property,
    /// The condition of `count(t where …)`: names are the columns of table `t`.
    Row(u16),
}

const NIL: Expr = Expr::Lit(Value::Nil);

pub fn lit_value(cx: &mut Cx, lit: &LitKind) -> Value {
    match lit {
        LitKind::Int(v) => Value::Int(*v),
        LitKind::Str(s) => Value::Str(cx.intern(s)),
        LitKind::Null => Value::Nil,
    }
}

/// Lowers `e`; errors are reported and replaced by `nil` so lowering goes on.
pub fn lower(cx: &mut Cx, place: &mut Place, e: &ast::Expr) -> Expr {
    match &e.kind {
        ExprKind::Lit(lit) => Expr::Lit(lit_value(cx, lit)),
        ExprKind::Bool(b) => Expr::Lit(Value::Bool(*b)),
        ExprKind::Local(_) | ExprKind::Me => local(cx, place, e),
        ExprKind::Name(n) => {
            let name = Name {
                text: n.clone(),
                span: e.span,
            };
            match place {
                Place::Row(t) => cx.column(*t, &name).map_or(NIL, Expr::Column),
                _ => cx.ghost(&name).map_or(NIL, Expr::Ghost),
            }
        }
        ExprKind::Clock => match place {
            Place::Code(_) => Expr::Clock,
            Place::Property | Place::Row(_) => {
                let d = Diagnostic::new(
                    "properties cannot read a process's clock",
                    e.span,
                    "a process's clock",
                )
                .with_hint(
                    "each client has its own clock; record what a property needs in a ghost",
                );
                cx.report(d);
                NIL
            }
        },
        ExprKind::Unary(op, inner) => Expr::Unary(*op, Box::new(lower(cx, place, inner))),
        ExprKind::Binary(op, l, r) => {
            let l = lower(cx, place, l);
            Expr::Binary(*op, Box::new(l), Box::new(lower(cx, place, r)))
        }
        _ if matches!(place, Place::Code(_)) => {
            let d = Diagnostic::new("only properties can read the world", e.span, "not in code")
                .with_hint("`t[pk].col`, `sum(t.col)`, `redis(k)`, `count(...)` and `status(...)` are for properties; code reads with SQL and Redis commands");
            cx.report(d);
            NIL
        }
        _ => world(cx, e).unwrap_or(NIL),
    }
}

fn local(cx: &mut Cx, place: &mut Place, e: &ast::Expr) -> Expr {
    match (place, &e.kind) {
        (Place::Code(_), ExprKind::Me) => Expr::Me,
        (Place::Code(locals), ExprKind::Local(n)) => {
            let name = Name {
                text: n.clone(),
                span: e.span,
            };
            locals.value(cx, &name)
        }
        _ => {
            let d = Diagnostic::new("properties cannot read locals", e.span, "a process's local")
                .with_hint("properties read ghosts, cells, Redis keys and process statuses; count events with a ghost");
            cx.report(d);
            NIL
        }
    }
}

/// `t[pk].col`, `redis(k)`, `count(g, s)`, `status(g[i], s)`.
fn world(cx: &mut Cx, e: &ast::Expr) -> Option<Expr> {
    Some(match &e.kind {
        ExprKind::Cell { table, pk, column } => {
            let t = cx.table(table)?;
            let c = cx.column(t, column)?;
            let pk = lit_value(cx, &pk.kind);
            Expr::Cell {
                table: t,
                pk,
                column: c,
            }
        }
        ExprKind::Sum { table, column } => {
            let t = cx.table(table)?;
            let c = cx.column(t, column)?;
            Expr::Sum {
                table: t,
                column: c,
            }
        }
        ExprKind::Key { key, on } => {
            cx.redis_used = true;
            let server = match on {
                Some(name) => cx.server(name)?,
                None => cx.only_server(e.span, "redis(KEY on NAME)")?,
            };
            Expr::Key {
                key: cx.intern(&key.text),
                server,
            }
        }
        ExprKind::Rows { table, filter } => {
            let t = cx.table(table)?;
            let filter = filter
                .as_ref()
                .map(|c| Box::new(lower(cx, &mut Place::Row(t), c)));
            Expr::Rows { table: t, filter }
        }
        ExprKind::Process { group, index } => Expr::Lit(Value::Pid(process(cx, group, Some(index))?)),
        ExprKind::Count { group, status } => {
            let g = cx.group(group);
            let status = status_kind(cx, status)?;
            Expr::Count {
                group: g? as u16,
                status,
            }
        }
        ExprKind::Status {
            group,
            index,
            status,
        } => {
            let pid = process(cx, group, index.as_ref());
            let status = status_kind(cx, status)?;
            Expr::Status { pid: pid?, status }
        }
        _ => return None,
    })
}

/// `buyer[1]` (or `buyer` for a group of one) as a pid.
pub fn process(cx: &mut Cx, group: &Name, index: Option<&ast::Lit>) -> Option<Pid> {
    let g = cx.group(group)?;
    let info = cx.groups[g].clone();
    let (i, span) = match index {
        Some(ast::Lit {
            kind: LitKind::Int(i),
            span,
        }) => (*i, *span),
        Some(lit) => (-1, lit.span),
        None if info.count == 1 => (0, group.span),
        None => (-1, group.span),
    };
    if i < 0 || i as usize >= info.count {
        let last = info.count - 1;
        let msg = format!("no such process in group \"{}\"", info.name);
        let name = &info.name;
        let hint = format!(
            "`{name}` has {} processes: `{name}[0]` to `{name}[{last}]`",
            info.count
        );
        cx.report(Diagnostic::new(msg, span, "not a process of the group").with_hint(hint));
        return None;
    }
    Some(Pid((info.first + i as usize) as u16))
}

fn status_kind(cx: &mut Cx, name: &Name) -> Option<StatusKind> {
    const ALL: [StatusKind; 7] = [
        StatusKind::Running,
        StatusKind::Waiting,
        StatusKind::Done,
        StatusKind::Crashed,
        StatusKind::Failed,
        StatusKind::Hung,
        StatusKind::Paused,
    ];
    if let Some(s) = ALL
        .iter()
        .find(|s| s.name() == name.text.to_ascii_lowercase())
    {
        return Some(*s);
    }
    let names = ALL.map(StatusKind::name);
    let hint = suggest::hint(&name.text, names, "statuses are", "");
    let msg = format!("unknown status \"{}\"", name.text);
    cx.report(Diagnostic::new(msg, name.span, "no such status").with_hint(hint));
    None
}

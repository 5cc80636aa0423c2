//! Expressions: in process code, in SQL (columns), and in properties.

use super::{Pid, Sym, Value};

#[derive(Clone, Debug, PartialEq)]
pub enum Expr {
    Lit(Value),
    /// A process local (`$stock`), by index into [`super::Program::locals`].
    Local(u16),
    /// A ghost counter, by index into [`super::Model::ghosts`].
    Ghost(u16),
    /// `$me`: the acting process's id.
    Me,
    /// A column of the row under evaluation (SQL only), by column index.
    Column(u16),
    /// `table[pk].column`: the newest committed value of a cell (properties only).
    Cell {
        table: u16,
        pk: Value,
        column: u16,
    },
    /// `sum(table.column)`: the sum of the column's newest committed values, nil ones left
    /// out (properties only).
    Sum { table: u16, column: u16 },
    /// `redis(key)`, `redis(key on S)`: the key's value on the server's current primary,
    /// `nil` when absent (properties only).
    Key { key: Sym, server: u16 },
    /// `count(table)`, `count(table where cond)`: how many rows (newest committed versions;
    /// deleted rows not counted) the condition holds for; the condition reads the row's
    /// columns as [`Expr::Column`] (properties only).
    Rows {
        table: u16,
        filter: Option<Box<Expr>>,
    },
    /// `count(group, status)`: how many processes of the group have the status (properties only).
    Count {
        group: u16,
        status: StatusKind,
    },
    /// `holder(mutex)` is not modelled; properties read the status of one process instead:
    /// `status(buyer[1]) = done` is lowered to this.
    Status {
        pid: Pid,
        status: StatusKind,
    },
    /// `now()`: the time in milliseconds since the model's start (PostgreSQL: when the
    /// transaction began, PG-33; InnoDB: when the statement began).
    Now,
    /// `clock()` in process code: the client's own clock, in milliseconds since the start
    /// (Redlock measures elapsed time with it, RL-2).
    Clock,
    Unary(UnOp, Box<Expr>),
    Binary(BinOp, Box<Expr>, Box<Expr>),
}

impl Expr {
    /// Calls `f` on the expression and on every expression inside it, outermost first.
    pub fn visit(&self, f: &mut dyn FnMut(&Expr)) {
        f(self);
        match self {
            Expr::Unary(_, a) => a.visit(f),
            Expr::Binary(_, a, b) => {
                a.visit(f);
                b.visit(f);
            }
            Expr::Rows {
                filter: Some(c), ..
            } => c.visit(f),
            _ => {}
        }
    }

    /// Whether the expression reads the clock.
    #[must_use]
    pub fn reads_clock(&self) -> bool {
        let mut clock = false;
        self.visit(&mut |e| clock |= matches!(e, Expr::Now | Expr::Clock));
        clock
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnOp {
    Neg,
    Not,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    Div,
    /// `%`: the remainder of an integer division, with the sign of the dividend (both engines).
    Rem,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    And,
    Or,
}

/// Process status as properties see it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum StatusKind {
    /// Able to take its next step (or busy working/sleeping).
    Running,
    /// Blocked on a lock, a row or an `await`.
    Waiting,
    /// Finished its program.
    Done,
    /// Stopped by a crash fault.
    Crashed,
    /// Finished by a SQL error it did not catch.
    Failed,
    /// Stopped for good by a hang fault (its connections stay open).
    Hung,
    /// Stopped for a while by a pause fault.
    Paused,
}

impl StatusKind {
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            StatusKind::Running => "running",
            StatusKind::Waiting => "waiting",
            StatusKind::Done => "done",
            StatusKind::Crashed => "crashed",
            StatusKind::Failed => "failed",
            StatusKind::Hung => "hung",
            StatusKind::Paused => "paused",
        }
    }
}

impl BinOp {
    #[must_use]
    pub fn symbol(self) -> &'static str {
        match self {
            BinOp::Add => "+",
            BinOp::Sub => "-",
            BinOp::Mul => "*",
            BinOp::Div => "/",
            BinOp::Rem => "%",
            BinOp::Eq => "=",
            BinOp::Ne => "<>",
            BinOp::Lt => "<",
            BinOp::Le => "<=",
            BinOp::Gt => ">",
            BinOp::Ge => ">=",
            BinOp::And => "and",
            BinOp::Or => "or",
        }
    }
}

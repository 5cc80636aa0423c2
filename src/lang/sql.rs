//! SQL lowering: sqlparser's AST to `ir::SqlStmt`, resolved against the schema.

use sqlparser::ast::{
    self as sq, AssignmentTarget, BinaryOperator, GroupByExpr, LockType, SelectItem, SetExpr,
    Spanned, Statement, TableFactor, UnaryOperator,
};

use super::ast::{Name, SqlText};
use super::diag::Diagnostic;
use super::lower_expr::Locals;
use super::scope::Cx;
use super::sqltext::SQL_SUBSET;
use crate::ir::{BinOp, Expr, LockMode, Span, SqlStmt, UnOp, Value};

/// Lowers one statement; `None` when it was reported as wrong or unsupported.
pub fn lower_sql(cx: &mut Cx, locals: &mut Locals, sql: &SqlText) -> Option<SqlStmt> {
    let stmt = sql.stmt.as_ref()?;
    let mut lower = SqlLower { cx, locals, sql };
    lower.statement(stmt)
}

struct SqlLower<'a, 'b, 'd> {
    cx: &'a mut Cx<'d>,
    locals: &'b mut Locals,
    sql: &'b SqlText,
}

impl SqlLower<'_, '_, '_> {
    fn unsupported<T>(&mut self, what: &str, span: Span) -> Option<T> {
        let msg = format!("{what} is not supported yet");
        let d = Diagnostic::new(msg, span, "not supported yet").with_hint(SQL_SUBSET);
        self.cx.report(d);
        None
    }

    /// Reports the first clause present; true if one was.
    fn reject(&mut self, clauses: &[(bool, &str, &str)]) -> bool {
        let Some((_, what, word)) = clauses.iter().find(|c| c.0) else {
            return false;
        };
        let span = self.sql.word_span(word);
        self.unsupported::<()>(what, span);
        true
    }

    fn statement(&mut self, stmt: &Statement) -> Option<SqlStmt> {
        let first = self.sql.words.first().map_or("", |w| w.text.as_str());
        let first_span = self.sql.word_span(first);
        match stmt {
            Statement::Query(q) => self.select(q),
            Statement::Update(u) => self.update(u),
            Statement::StartTransaction {
                modes, statements, ..
            } if modes.is_empty() && statements.is_empty() => Some(SqlStmt::Begin),
            Statement::Commit {
                chain: false,
                end: false,
                modifier: None,
            } => Some(SqlStmt::Commit),
            Statement::Rollback {
                chain: false,
                savepoint: None,
            } => Some(SqlStmt::Rollback),
            Statement::StartTransaction { .. } => {
                self.unsupported("transaction options", first_span)
            }
            Statement::Insert(_) => self.unsupported("INSERT", first_span),
            Statement::Delete(_) => self.unsupported("DELETE", first_span),
            _ => self.unsupported("this form of the statement", self.sql.span()),
        }
    }

    fn select(&mut self, q: &sq::Query) -> Option<SqlStmt> {
        let rejected = self.reject(&[
            (q.with.is_some(), "WITH", "with"),
            (q.order_by.is_some(), "ORDER BY", "order"),
            (q.limit_clause.is_some(), "LIMIT / OFFSET", "limit"),
            (q.fetch.is_some(), "FETCH", "fetch"),
            (q.for_clause.is_some(), "this FOR clause", "for"),
            (q.settings.is_some(), "SETTINGS", "settings"),
            (q.format_clause.is_some(), "FORMAT", "format"),
            (!q.pipe_operators.is_empty(), "a pipe operator", "select"),
        ]);
        if rejected {
            return None;
        }
        let lock = self.lock(&q.locks)?;
        let SetExpr::Select(sel) = q.body.as_ref() else {
            let span = self.sql.map_span(q.body.span());
            return self.unsupported("a compound query", span);
        };
        let (table, columns, filter) = self.select_body(sel)?;
        let text = self.sql.text.clone();
        Some(SqlStmt::Select {
            table,
            columns,
            filter,
            lock,
            text,
        })
    }

    /// `FOR UPDATE` → `Some(Update)`; other lock clauses are unsupported.
    fn lock(&mut self, locks: &[sq::LockClause]) -> Option<Option<LockMode>> {
        let Some(first) = locks.first() else {
            return Some(None);
        };
        let rejected = self.reject(&[
            (first.lock_type == LockType::Share, "FOR SHARE", "share"),
            (first.of.is_some(), "FOR UPDATE OF", "of"),
            (
                first.nonblock == Some(sq::NonBlock::Nowait),
                "NOWAIT",
                "nowait",
            ),
            (first.nonblock.is_some(), "SKIP LOCKED", "skip"),
            (locks.len() > 1, "several lock clauses", "for"),
        ]);
        (!rejected).then_some(Some(LockMode::Update))
    }

    fn select_body(&mut self, sel: &sq::Select) -> Option<(u16, Vec<u16>, Option<Expr>)> {
        let grouped = !matches!(&sel.group_by, GroupByExpr::Expressions(e, m) if e.is_empty() && m.is_empty());
        let rejected = self.reject(&[
            (sel.distinct.is_some(), "DISTINCT", "distinct"),
            (sel.top.is_some(), "TOP", "top"),
            (sel.into.is_some(), "SELECT INTO", "into"),
            (sel.from.is_empty(), "SELECT without FROM", "select"),
            (grouped, "GROUP BY", "group"),
            (sel.having.is_some(), "HAVING", "having"),
            (!sel.named_window.is_empty(), "WINDOW", "window"),
            (sel.qualify.is_some(), "QUALIFY", "qualify"),
            (sel.prewhere.is_some(), "PREWHERE", "prewhere"),
            (!sel.lateral_views.is_empty(), "LATERAL VIEW", "lateral"),
            (
                sel.flavor != sq::SelectFlavor::Standard,
                "FROM-first SELECT",
                "from",
            ),
        ]);
        if rejected {
            return None;
        }
        let table = self.from(&sel.from)?;
        let mut columns = Vec::new();
        for item in &sel.projection {
            columns.extend(self.projection(table, item)?);
        }
        let filter = match &sel.selection {
            Some(e) => Some(self.expr(table, e)?),
            None => None,
        };
        Some((table, columns, filter))
    }

    /// The one table a statement reads or writes.
    fn from(&mut self, from: &[sq::TableWithJoins]) -> Option<u16> {
        if let Some(second) = from.get(1) {
            let span = self.sql.map_span(second.span());
            return self.unsupported("reading several tables", span);
        }
        let twj = from.first()?;
        if let Some(join) = twj.joins.first() {
            let span = self.sql.map_span(join.span());
            return self.unsupported("JOIN", span);
        }
        self.relation(&twj.relation)
    }

    fn relation(&mut self, relation: &TableFactor) -> Option<u16> {
        let span = self.sql.map_span(relation.span());
        let TableFactor::Table {
            name, alias, args, ..
        } = relation
        else {
            return self.unsupported("a subquery or table function", span);
        };
        if alias.is_some() || args.is_some() {
            return self.unsupported("a table alias or arguments", span);
        }
        match name.0.as_slice() {
            [sq::ObjectNamePart::Identifier(ident)] => {
                let name = self.name(ident);
                self.cx.table(&name)
            }
            _ => self.unsupported("a qualified table name", span),
        }
    }

    fn name(&self, ident: &sq::Ident) -> Name {
        Name {
            text: ident.value.clone(),
            span: self.sql.map_span(ident.span),
        }
    }

    /// A selected item: a column, `t.column`, or `*`.
    fn projection(&mut self, table: u16, item: &SelectItem) -> Option<Vec<u16>> {
        match item {
            SelectItem::Wildcard(_) => {
                let n = self.cx.tables[table as usize].columns.len() as u16;
                Some((0..n).collect())
            }
            SelectItem::UnnamedExpr(e) => match self.column_ref(table, e) {
                Some(Some(c)) => Some(vec![c]),
                Some(None) => {
                    let span = self.sql.map_span(e.span());
                    self.unsupported("selecting an expression (only columns)", span)
                }
                None => None,
            },
            _ => {
                let span = self.sql.map_span(item.span());
                self.unsupported("this select item (only columns and `*`)", span)
            }
        }
    }

    /// `Some(Some(c))` for a column reference, `Some(None)` for another expression.
    fn column_ref(&mut self, table: u16, e: &sq::Expr) -> Option<Option<u16>> {
        let ident = match e {
            sq::Expr::Identifier(ident) => ident,
            sq::Expr::CompoundIdentifier(parts) if parts.len() == 2 => {
                let qualifier = self.name(&parts[0]);
                if self.cx.table(&qualifier)? != table {
                    let msg = format!("table \"{}\" is not in this statement", qualifier.text);
                    self.cx
                        .report(Diagnostic::new(msg, qualifier.span, "other table"));
                    return None;
                }
                &parts[1]
            }
            _ => return Some(None),
        };
        let name = self.name(ident);
        Some(Some(self.cx.column(table, &name)?))
    }

    fn update(&mut self, u: &sq::Update) -> Option<SqlStmt> {
        let rejected = self.reject(&[
            (u.from.is_some(), "UPDATE ... FROM", "from"),
            (u.returning.is_some(), "RETURNING", "returning"),
            (!u.order_by.is_empty(), "ORDER BY", "order"),
            (u.limit.is_some(), "LIMIT", "limit"),
            (u.output.is_some(), "OUTPUT", "output"),
            (u.or.is_some(), "UPDATE OR", "or"),
        ]);
        if rejected {
            return None;
        }
        let table = self.from(std::slice::from_ref(&u.table))?;
        let mut sets = Vec::new();
        let mut ok = true;
        for a in &u.assignments {
            match self.assignment(table, a) {
                Some(set) => sets.push(set),
                None => ok = false,
            }
        }
        let filter = match &u.selection {
            Some(e) => Some(self.expr(table, e)?),
            None => None,
        };
        let text = self.sql.text.clone();
        ok.then_some(SqlStmt::Update {
            table,
            sets,
            filter,
            text,
        })
    }

    fn assignment(&mut self, table: u16, a: &sq::Assignment) -> Option<(u16, Expr)> {
        let AssignmentTarget::ColumnName(name) = &a.target else {
            let span = self.sql.map_span(a.target.span());
            return self.unsupported("assigning a tuple", span);
        };
        let column = match name.0.as_slice() {
            [sq::ObjectNamePart::Identifier(ident)] => {
                let name = self.name(ident);
                self.cx.column(table, &name)
            }
            _ => {
                let span = self.sql.map_span(name.span());
                self.unsupported("a qualified column name", span)
            }
        };
        let value = self.expr(table, &a.value);
        Some((column?, value?))
    }

    fn expr(&mut self, table: u16, e: &sq::Expr) -> Option<Expr> {
        if let Some(column) = self.column_ref(table, e)? {
            return Some(Expr::Column(column));
        }
        let span = self.sql.map_span(e.span());
        match e {
            sq::Expr::Value(v) => self.value(&v.value, span),
            sq::Expr::Nested(inner) => self.expr(table, inner),
            sq::Expr::BinaryOp { left, op, right } => {
                let l = self.expr(table, left);
                let r = self.expr(table, right);
                let Some(op) = binop(op) else {
                    return self.unsupported(&format!("the operator `{op}`"), span);
                };
                Some(Expr::Binary(op, Box::new(l?), Box::new(r?)))
            }
            sq::Expr::UnaryOp { op, expr } => self.unary(table, *op, expr, span),
            _ => self.unsupported(&format!("the expression `{e}`"), span),
        }
    }

    fn unary(&mut self, table: u16, op: UnaryOperator, e: &sq::Expr, span: Span) -> Option<Expr> {
        let inner = self.expr(table, e)?;
        match (op, inner) {
            (UnaryOperator::Plus, inner) => Some(inner),
            (UnaryOperator::Minus, Expr::Lit(Value::Int(v))) => {
                Some(Expr::Lit(Value::Int(v.wrapping_neg())))
            }
            (UnaryOperator::Minus, inner) => Some(Expr::Unary(UnOp::Neg, Box::new(inner))),
            (UnaryOperator::Not, inner) => Some(Expr::Unary(UnOp::Not, Box::new(inner))),
            _ => self.unsupported(&format!("the operator `{op}`"), span),
        }
    }

    fn value(&mut self, v: &sq::Value, span: Span) -> Option<Expr> {
        let value = match v {
            sq::Value::Number(n, _) => match n.parse::<i64>() {
                Ok(i) => Value::Int(i),
                Err(_) => return self.unsupported("a non-integer number", span),
            },
            sq::Value::SingleQuotedString(s) => Value::Str(self.cx.intern(s)),
            sq::Value::Null => Value::Nil,
            sq::Value::Boolean(b) => Value::Bool(*b),
            sq::Value::Placeholder(p) => return Some(self.placeholder(p, span)),
            _ => return self.unsupported("this kind of literal", span),
        };
        Some(Expr::Lit(value))
    }

    /// `$me` or `$local`.
    fn placeholder(&mut self, p: &str, span: Span) -> Expr {
        let name = p.trim_start_matches('$');
        if name == "me" {
            return Expr::Me;
        }
        let name = Name {
            text: name.to_string(),
            span,
        };
        Expr::Local(self.locals.read(self.cx, &name))
    }
}

fn binop(op: &BinaryOperator) -> Option<BinOp> {
    Some(match op {
        BinaryOperator::Plus => BinOp::Add,
        BinaryOperator::Minus => BinOp::Sub,
        BinaryOperator::Multiply => BinOp::Mul,
        BinaryOperator::Divide => BinOp::Div,
        BinaryOperator::Eq => BinOp::Eq,
        BinaryOperator::NotEq => BinOp::Ne,
        BinaryOperator::Lt => BinOp::Lt,
        BinaryOperator::LtEq => BinOp::Le,
        BinaryOperator::Gt => BinOp::Gt,
        BinaryOperator::GtEq => BinOp::Ge,
        BinaryOperator::And => BinOp::And,
        BinaryOperator::Or => BinOp::Or,
        _ => return None,
    })
}

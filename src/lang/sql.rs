//! SQL lowering: sqlparser's AST to `ir::SqlStmt`, resolved against the schema.

use sqlparser::ast::{
    self as sq, AssignmentTarget, BinaryOperator, GroupByExpr, InTarget, SelectItem, SetExpr,
    Spanned, Statement, TableFactor, TransactionIsolationLevel, TransactionMode, UnaryOperator,
};

use super::ast::{LockAst, Name, SqlText};
use super::diag::Diagnostic;
use super::lower_expr::Locals;
use super::scope::Cx;
use super::sqltext::SQL_SUBSET;
use crate::ir::{
    BinOp, Expr, Flavour, Isolation, LockClause, LockMode, Span, SqlStmt, UnOp, Value,
};

/// Lowers one statement; `None` when it was reported as wrong or unsupported.
pub fn lower_sql(cx: &mut Cx, locals: &mut Locals, sql: &SqlText) -> Option<SqlStmt> {
    let stmt = sql.stmt.as_ref()?;
    if cx.flavour.is_none() {
        // Said once, at the first statement: every other one has the same cause (and a
        // model with tables was told already that they need a `db` line).
        if !std::mem::replace(&mut cx.sql_without_db, true) && cx.tables.is_empty() {
            let first = sql.words.first().map_or("", |w| w.text.as_str());
            let d = Diagnostic::new(
                "SQL needs a database, and this model declares none",
                sql.word_span(first),
                "no `db` line above",
            )
            .with_hint("add a `db postgres` (or `mysql`, `mariadb`) line and the tables it uses");
            cx.report(d);
        }
        return None;
    }
    let mut lower = SqlLower {
        cx,
        locals,
        sql,
        in_values: false,
    };
    lower.statement(stmt)
}

struct SqlLower<'a, 'b, 'd> {
    cx: &'a mut Cx<'d>,
    locals: &'b mut Locals,
    sql: &'b SqlText,
    /// Lowering an INSERT's values, where no column is in scope.
    in_values: bool,
}

/// How a locking clause is written, for messages.
fn spelling(lock: &LockAst) -> &'static str {
    match (lock.mode, lock.in_share_mode) {
        (_, true) => "LOCK IN SHARE MODE",
        (LockMode::Update, _) => "FOR UPDATE",
        (LockMode::NoKeyUpdate, _) => "FOR NO KEY UPDATE",
        (LockMode::Share, _) => "FOR SHARE",
        (LockMode::KeyShare, _) => "FOR KEY SHARE",
    }
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
            Statement::Insert(i) => self.insert(i),
            Statement::Delete(d) => self.delete(d),
            Statement::StartTransaction {
                modes,
                modifier: None,
                statements,
                exception: None,
                has_end_keyword: false,
                ..
            } if statements.is_empty() => self.begin(modes),
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
                self.unsupported("this form of BEGIN", first_span)
            }
            _ => self.unsupported("this form of the statement", self.sql.span()),
        }
    }

    /// `BEGIN` / `START TRANSACTION` `[ISOLATION LEVEL …]`.
    fn begin(&mut self, modes: &[TransactionMode]) -> Option<SqlStmt> {
        let mut isolation = None;
        for mode in modes {
            let level = match mode {
                TransactionMode::IsolationLevel(level) => level,
                TransactionMode::AccessMode(_) => {
                    let span = self.sql.word_span("read");
                    return self.unsupported("READ ONLY / READ WRITE", span);
                }
            };
            let span = self.sql.word_span("isolation");
            isolation = Some(match level {
                TransactionIsolationLevel::ReadCommitted => Isolation::ReadCommitted,
                TransactionIsolationLevel::RepeatableRead => Isolation::RepeatableRead,
                TransactionIsolationLevel::Serializable => Isolation::Serializable,
                TransactionIsolationLevel::ReadUncommitted => Isolation::ReadUncommitted,
                TransactionIsolationLevel::Snapshot => {
                    return self.unsupported("SNAPSHOT isolation", span)
                }
            });
        }
        Some(SqlStmt::Begin { isolation })
    }

    fn select(&mut self, q: &sq::Query) -> Option<SqlStmt> {
        let rejected = self.reject(&[
            (q.with.is_some(), "WITH", "with"),
            (q.fetch.is_some(), "FETCH", "fetch"),
            (q.for_clause.is_some(), "this FOR clause", "for"),
            (!q.locks.is_empty(), "this locking clause", "for"),
            (q.settings.is_some(), "SETTINGS", "settings"),
            (q.format_clause.is_some(), "FORMAT", "format"),
            (!q.pipe_operators.is_empty(), "a pipe operator", "select"),
        ]);
        if rejected {
            return None;
        }
        let lock = self.lock();
        let SetExpr::Select(sel) = q.body.as_ref() else {
            let span = self.sql.map_span(q.body.span());
            return self.unsupported("a compound query", span);
        };
        let (table, columns, filter) = self.select_body(sel)?;
        let order = match &q.order_by {
            Some(ob) => self.order(table, ob),
            None => Some(Vec::new()),
        };
        let limit = match &q.limit_clause {
            Some(lc) => self.limit(lc),
            None => Some(None),
        };
        let text = self.sql.text.clone();
        Some(SqlStmt::Select {
            table,
            columns,
            filter,
            order: order?,
            limit: limit?,
            lock: lock?,
            text,
        })
    }

    /// The locking clause, checked against the flavour.
    fn lock(&mut self) -> Option<Option<LockClause>> {
        let Some(lock) = &self.sql.lock else {
            return Some(None);
        };
        let written = spelling(lock);
        let flavour = self.cx.flavour;
        let refusal = match flavour {
            Some(Flavour::Postgres) if lock.in_share_mode => Some((
                "MySQL and MariaDB only".to_string(),
                "PostgreSQL spells it `FOR SHARE`".to_string(),
            )),
            Some(f)
                if f.innodb()
                    && matches!(lock.mode, LockMode::NoKeyUpdate | LockMode::KeyShare) =>
            {
                let share = if f == Flavour::Mariadb {
                    "`LOCK IN SHARE MODE`"
                } else {
                    "`FOR SHARE` (or `LOCK IN SHARE MODE`)"
                };
                Some((
                    "PostgreSQL only".to_string(),
                    format!(
                        "InnoDB locks a row exclusively with `FOR UPDATE`, or shared with {share}"
                    ),
                ))
            }
            Some(Flavour::Mariadb) if lock.mode == LockMode::Share && !lock.in_share_mode => {
                Some((
                    "not MariaDB syntax".to_string(),
                    "MariaDB spells it `LOCK IN SHARE MODE`".to_string(),
                ))
            }
            _ => None,
        };
        if let (Some((label, hint)), Some(f)) = (refusal, flavour) {
            let msg = format!("SQL syntax error: `{written}` on {}", f.name());
            let d = Diagnostic::new(msg, lock.mode_span, label).with_hint(hint);
            self.cx.report(d);
            return None;
        }
        if let (Some(Flavour::Mysql), true, Some(span)) =
            (flavour, lock.in_share_mode, lock.wait_span)
        {
            let msg =
                "SQL syntax error: `LOCK IN SHARE MODE` takes no NOWAIT or SKIP LOCKED on mysql";
            let d = Diagnostic::new(msg, span, "not after LOCK IN SHARE MODE")
                .with_hint("MySQL takes NOWAIT and SKIP LOCKED after `FOR UPDATE` or `FOR SHARE`");
            self.cx.report(d);
            return None;
        }
        Some(Some(LockClause {
            mode: lock.mode,
            wait: lock.wait,
        }))
    }

    /// `ORDER BY col [ASC|DESC], …`: columns of the table only.
    fn order(&mut self, table: u16, ob: &sq::OrderBy) -> Option<Vec<(u16, bool)>> {
        let span = self.sql.word_span("order");
        let sq::OrderByKind::Expressions(exprs) = &ob.kind else {
            return self.unsupported("ORDER BY ALL", span);
        };
        if ob.interpolate.is_some() {
            return self.unsupported("INTERPOLATE", span);
        }
        let mut order = Vec::new();
        for item in exprs {
            let span = self.sql.map_span(item.expr.span());
            if item.with_fill.is_some() {
                return self.unsupported("WITH FILL", span);
            }
            if item.options.nulls_first.is_some() {
                return self.unsupported("NULLS FIRST / NULLS LAST", self.sql.word_span("nulls"));
            }
            let descending = match &item.options.sort {
                None | Some(sq::OrderBySort::Asc) => false,
                Some(sq::OrderBySort::Desc) => true,
                Some(sq::OrderBySort::Using(_)) => {
                    return self.unsupported("ORDER BY ... USING", self.sql.word_span("using"))
                }
            };
            match self.column_ref(table, &item.expr)? {
                Some(column) => order.push((column, descending)),
                None => {
                    let d = Diagnostic::new("ORDER BY takes a column", span, "not a column")
                        .with_hint("order by columns of the table, like `ORDER BY id DESC`");
                    self.cx.report(d);
                    return None;
                }
            }
        }
        Some(order)
    }

    /// `LIMIT n`: a non-negative integer literal.
    fn limit(&mut self, lc: &sq::LimitClause) -> Option<Option<u32>> {
        let (limit, offset, by) = match lc {
            sq::LimitClause::LimitOffset {
                limit,
                offset,
                limit_by,
            } => (limit, offset.is_some(), !limit_by.is_empty()),
            sq::LimitClause::OffsetCommaLimit { .. } => {
                return self.unsupported("LIMIT offset, count", self.sql.word_span("limit"))
            }
        };
        if self.reject(&[(offset, "OFFSET", "offset"), (by, "LIMIT BY", "by")]) {
            return None;
        }
        let Some(e) = limit else {
            return Some(None);
        };
        let span = self.sql.map_span(e.span());
        if let sq::Expr::Value(v) = e {
            if let sq::Value::Number(n, _) = &v.value {
                if let Ok(n) = n.parse::<u32>() {
                    return Some(Some(n));
                }
            }
        }
        let d = Diagnostic::new(
            "LIMIT takes a non-negative integer",
            span,
            "not a row count",
        )
        .with_hint("write the number of rows, like `LIMIT 1`");
        self.cx.report(d);
        None
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
        self.table_name(name)
    }

    fn table_name(&mut self, name: &sq::ObjectName) -> Option<u16> {
        match name.0.as_slice() {
            [sq::ObjectNamePart::Identifier(ident)] => {
                let name = self.name(ident);
                self.cx.table(&name)
            }
            _ => {
                let span = self.sql.map_span(name.span());
                self.unsupported("a qualified table name", span)
            }
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

    /// `INSERT INTO t (cols) VALUES (…)`: one row, the primary key among the columns.
    fn insert(&mut self, ins: &sq::Insert) -> Option<SqlStmt> {
        let rejected = self.reject(&[
            (ins.replace_into, "REPLACE", "replace"),
            (ins.ignore, "INSERT IGNORE", "ignore"),
            (ins.or.is_some(), "INSERT OR", "or"),
            (ins.on.is_some(), "ON CONFLICT / ON DUPLICATE KEY", "on"),
            (ins.returning.is_some(), "RETURNING", "returning"),
            (!ins.assignments.is_empty(), "INSERT ... SET", "set"),
            (ins.table_alias.is_some(), "a table alias", "as"),
            (ins.overriding.is_some(), "OVERRIDING", "overriding"),
            (ins.output.is_some(), "OUTPUT", "output"),
            (ins.partitioned.is_some(), "PARTITION", "partition"),
            (ins.priority.is_some(), "an insert priority", "insert"),
            (ins.insert_alias.is_some(), "an insert alias", "as"),
            (ins.settings.is_some(), "SETTINGS", "settings"),
            (ins.format_clause.is_some(), "FORMAT", "format"),
            (
                ins.has_table_keyword || ins.overwrite || ins.by_name,
                "this form of INSERT",
                "insert",
            ),
            (
                ins.multi_table_insert_type.is_some() || !ins.optimizer_hints.is_empty(),
                "this form of INSERT",
                "insert",
            ),
        ]);
        if rejected {
            return None;
        }
        let table = match &ins.table {
            sq::TableObject::TableName(name) => self.table_name(name)?,
            other => {
                let span = self.sql.map_span(other.span());
                return self.unsupported("inserting into a table function", span);
            }
        };
        let columns = self.insert_columns(table, ins)?;
        let values = self.insert_values(ins.source.as_deref(), columns.len())?;
        let text = self.sql.text.clone();
        Some(SqlStmt::Insert {
            table,
            columns,
            values,
            text,
        })
    }

    /// The named columns of an INSERT: each once, the primary key among them.
    fn insert_columns(&mut self, table: u16, ins: &sq::Insert) -> Option<Vec<u16>> {
        let t = &self.cx.tables[table as usize];
        let (pk, table_name) = (t.columns[t.pk].name.clone(), t.name.clone());
        if ins.columns.is_empty() {
            let span = self.sql.word_span(&table_name);
            let d = Diagnostic::new("INSERT needs a column list", span, "no column list")
                .with_hint(format!(
                    "name the columns: `INSERT INTO {table_name} ({pk}, ...) VALUES (...)`"
                ));
            self.cx.report(d);
            return None;
        }
        let mut columns = Vec::new();
        let mut ok = true;
        for name in &ins.columns {
            let span = self.sql.map_span(name.span());
            let [sq::ObjectNamePart::Identifier(ident)] = name.0.as_slice() else {
                return self.unsupported("a qualified column name", span);
            };
            let name = self.name(ident);
            let Some(c) = self.cx.column(table, &name) else {
                ok = false;
                continue;
            };
            if columns.contains(&c) {
                let msg = format!("column \"{}\" is named twice", name.text);
                self.cx
                    .report(Diagnostic::new(msg, name.span, "named again here"));
                ok = false;
            }
            columns.push(c);
        }
        let pk_index = self.cx.tables[table as usize].pk as u16;
        if ok && !columns.contains(&pk_index) {
            let first = self.sql.map_span(ins.columns[0].span());
            let last = self.sql.map_span(ins.columns[ins.columns.len() - 1].span());
            let span = Span {
                start: first.start,
                end: last.end,
            };
            let msg = format!("INSERT must give the primary key \"{pk}\"");
            let d = Diagnostic::new(msg, span, format!("no `{pk}` here"))
                .with_hint(format!("add `{pk}` and its value: keys are not generated"));
            self.cx.report(d);
            return None;
        }
        ok.then_some(columns)
    }

    /// `VALUES (e, …)`: one row of `wanted` values, without columns.
    fn insert_values(&mut self, source: Option<&sq::Query>, wanted: usize) -> Option<Vec<Expr>> {
        let Some(query) = source else {
            return self.unsupported("INSERT without VALUES", self.sql.span());
        };
        let SetExpr::Values(values) = query.body.as_ref() else {
            let span = self.sql.map_span(query.body.span());
            return self.unsupported("INSERT ... SELECT", span);
        };
        let rejected = self.reject(&[
            (query.order_by.is_some(), "ORDER BY", "order"),
            (query.limit_clause.is_some(), "LIMIT", "limit"),
            (query.with.is_some(), "WITH", "with"),
        ]);
        if rejected {
            return None;
        }
        let [row] = values.rows.as_slice() else {
            let second = values.rows.get(1).map_or(self.sql.span(), |r| {
                let open = self.sql.map_span(r.opening_token.0.span);
                let close = self.sql.map_span(r.closing_token.0.span);
                Span {
                    start: open.start,
                    end: close.end.max(open.start),
                }
            });
            return self.unsupported("inserting several rows", second);
        };
        let row = &row.content;
        if row.len() != wanted {
            let span = match (row.first(), row.last()) {
                (Some(a), Some(b)) => {
                    let (a, b) = (self.sql.map_span(a.span()), self.sql.map_span(b.span()));
                    Span {
                        start: a.start,
                        end: b.end,
                    }
                }
                _ => self.sql.word_span("values"),
            };
            let n = row.len();
            let values = format!("{n} value{}", if n == 1 { "" } else { "s" });
            let msg = format!("INSERT names {wanted} columns but gives {values}");
            let d = Diagnostic::new(msg, span, values).with_hint("give one value per named column");
            self.cx.report(d);
            return None;
        }
        self.in_values = true;
        let values: Vec<Option<Expr>> = row.iter().map(|e| self.expr(0, e)).collect();
        self.in_values = false;
        values.into_iter().collect()
    }

    /// `DELETE FROM t [WHERE e]`
    fn delete(&mut self, d: &sq::Delete) -> Option<SqlStmt> {
        let rejected = self.reject(&[
            (
                !d.tables.is_empty(),
                "deleting from several tables",
                "delete",
            ),
            (d.using.is_some(), "DELETE ... USING", "using"),
            (d.returning.is_some(), "RETURNING", "returning"),
            (d.output.is_some(), "OUTPUT", "output"),
            (!d.order_by.is_empty(), "ORDER BY", "order"),
            (d.limit.is_some(), "LIMIT", "limit"),
            (d.settings.is_some(), "SETTINGS", "settings"),
            (d.on_cluster.is_some(), "ON CLUSTER", "on"),
            (!d.optimizer_hints.is_empty(), "optimizer hints", "delete"),
        ]);
        if rejected {
            return None;
        }
        let (sq::FromTable::WithFromKeyword(from) | sq::FromTable::WithoutKeyword(from)) = &d.from;
        let table = self.from(from)?;
        let filter = match &d.selection {
            Some(e) => Some(self.expr(table, e)?),
            None => None,
        };
        let text = self.sql.text.clone();
        Some(SqlStmt::Delete {
            table,
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
        // Found only where it is used: sqlparser computes a span from the whole subtree, which
        // for every node of a long `a AND b AND …` chain is quadratic.
        let span = |this: &Self| this.sql.map_span(e.span());
        if self.in_values {
            if let sq::Expr::Identifier(_) | sq::Expr::CompoundIdentifier(_) = e {
                let d = Diagnostic::new(
                    "an INSERT value cannot read a column",
                    span(self),
                    "a column",
                )
                .with_hint("INSERT values are literals, `$locals` and `$me`");
                self.cx.report(d);
                return None;
            }
        } else if let Some(column) = self.column_ref(table, e)? {
            return Some(Expr::Column(column));
        }
        match e {
            sq::Expr::IsNull(inner) | sq::Expr::IsNotNull(inner) => {
                let op = if matches!(e, sq::Expr::IsNull(_)) {
                    BinOp::Eq
                } else {
                    BinOp::Ne
                };
                let inner = self.expr(table, inner)?;
                Some(Expr::Binary(
                    op,
                    Box::new(inner),
                    Box::new(Expr::Lit(Value::Nil)),
                ))
            }
            sq::Expr::Between {
                expr,
                negated,
                low,
                high,
            } => {
                let x = self.expr(table, expr);
                let (lo, hi) = (self.expr(table, low), self.expr(table, high));
                let (x, lo, hi) = (x?, lo?, hi?);
                let bin =
                    |op, a: &Expr, b: Expr| Expr::Binary(op, Box::new(a.clone()), Box::new(b));
                Some(if *negated {
                    bin(BinOp::Or, &bin(BinOp::Lt, &x, lo), bin(BinOp::Gt, &x, hi))
                } else {
                    bin(BinOp::And, &bin(BinOp::Ge, &x, lo), bin(BinOp::Le, &x, hi))
                })
            }
            sq::Expr::In {
                expr,
                target: InTarget::List(list),
                negated,
                global: false,
            } => self.in_list(table, expr, list, *negated),
            sq::Expr::Value(v) => self.value(&v.value, span(self)),
            sq::Expr::Nested(inner) => self.expr(table, inner),
            sq::Expr::BinaryOp { left, op, right } => {
                let l = self.expr(table, left);
                let r = self.expr(table, right);
                let Some(op) = binop(op) else {
                    return self.unsupported(&format!("the operator `{op}`"), span(self));
                };
                Some(Expr::Binary(op, Box::new(l?), Box::new(r?)))
            }
            sq::Expr::UnaryOp { op, expr } => {
                let at = span(self);
                self.unary(table, *op, expr, at)
            }
            sq::Expr::Function(f) => {
                let at = span(self);
                self.function(f, at)
            }
            _ => {
                let at = span(self);
                self.unsupported(&format!("the expression `{e}`"), at)
            }
        }
    }

    /// `x IN (a, b)` → `x = a OR x = b`; `x NOT IN (a, b)` → `x <> a AND x <> b`.
    fn in_list(
        &mut self,
        table: u16,
        x: &sq::Expr,
        list: &[sq::Expr],
        negated: bool,
    ) -> Option<Expr> {
        let x = self.expr(table, x);
        let items: Vec<Option<Expr>> = list.iter().map(|e| self.expr(table, e)).collect();
        let x = x?;
        let (test, join) = if negated {
            (BinOp::Ne, BinOp::And)
        } else {
            (BinOp::Eq, BinOp::Or)
        };
        let mut folded: Option<Expr> = None;
        for item in items {
            let test = Expr::Binary(test, Box::new(x.clone()), Box::new(item?));
            folded = Some(match folded {
                None => test,
                Some(acc) => Expr::Binary(join, Box::new(acc), Box::new(test)),
            });
        }
        Some(folded.unwrap_or(Expr::Lit(Value::Bool(negated))))
    }

    /// `now()` and `current_timestamp`, the only functions modelled.
    fn function(&mut self, f: &sq::Function, span: Span) -> Option<Expr> {
        let name = f.name.to_string().to_ascii_lowercase();
        let no_args = match &f.args {
            sq::FunctionArguments::None => true,
            sq::FunctionArguments::List(l) => l.args.is_empty(),
            sq::FunctionArguments::Subquery(_) => false,
        };
        if no_args
            && matches!(
                name.as_str(),
                "now" | "current_timestamp" | "localtimestamp"
            )
        {
            return Some(Expr::Now);
        }
        let hint = if name == "clock" {
            "`clock()` is the client's clock: read it into a local first (`$t = clock()`) and \
             use `$t`; the database's clock is `now()`"
        } else {
            "the clock is read with `now()`; other functions are not modelled"
        };
        let d = Diagnostic::new(
            format!("the function `{f}` is not supported yet"),
            span,
            "here",
        )
        .with_hint(hint);
        self.cx.report(d);
        None
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
        self.locals.value(self.cx, &name)
    }
}

fn binop(op: &BinaryOperator) -> Option<BinOp> {
    Some(match op {
        BinaryOperator::Plus => BinOp::Add,
        BinaryOperator::Minus => BinOp::Sub,
        BinaryOperator::Multiply => BinOp::Mul,
        BinaryOperator::Divide => BinOp::Div,
        BinaryOperator::Modulo => BinOp::Rem,
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

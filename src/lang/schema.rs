//! Lowering of `table`, `index` and `row` declarations: columns, keys, indexes, typed and
//! sorted rows.

use std::collections::HashMap;

use super::ast::{ColumnDef, Decl, DeclKind, Lit, LitKind, Name};
use super::diag::Diagnostic;
use super::lower_expr::lit_value;
use super::scope::Cx;
use crate::ir::{Column, ColumnType, Index, Table, Value};

/// Declares every table, then fills them with their rows.
pub fn lower_schema(cx: &mut Cx, decls: &[Decl], has_db: bool) {
    let mut seen = HashMap::new();
    for decl in decls {
        if let DeclKind::Table { name, columns } = &decl.kind {
            if duplicate(cx, &mut seen, name, "table") {
                continue;
            }
            let table = table(cx, name, columns);
            cx.add_table(table);
        }
    }
    for decl in decls {
        if let DeclKind::Index {
            unique,
            table,
            columns,
        } = &decl.kind
        {
            index(cx, *unique, table, columns);
        }
    }
    let mut keys: Vec<HashMap<Value, usize>> = vec![HashMap::new(); cx.tables.len()];
    for decl in decls {
        if let DeclKind::Row {
            table,
            values,
            through,
        } = &decl.kind
        {
            match through {
                None => row(cx, &mut keys, table, values),
                Some((at, upper)) => rows(cx, &mut keys, table, values, (*at, upper)),
            }
        }
    }
    for t in &mut cx.tables {
        let pk = t.pk;
        t.rows.sort_by(|a, b| a[pk].cmp(&b[pk]));
    }
    if !has_db {
        require_db(cx, decls);
    }
}

/// Reports `name` if `seen` already has it; otherwise records it.
pub fn duplicate(cx: &mut Cx, seen: &mut HashMap<String, usize>, name: &Name, what: &str) -> bool {
    if let Some(&line) = seen.get(&name.text) {
        let msg = format!("duplicate {what} \"{}\"", name.text);
        let d = Diagnostic::new(msg, name.span, "declared again here")
            .with_hint(format!("`{}` is first declared on line {line}", name.text));
        cx.report(d);
        return true;
    }
    let line = cx.line(name.span);
    seen.insert(name.text.clone(), line);
    false
}

/// `table`/`row` need a `db` line; reported once, at the first of them.
fn require_db(cx: &mut Cx, decls: &[Decl]) {
    let first = decls.iter().find(|d| {
        matches!(
            d.kind,
            DeclKind::Table { .. } | DeclKind::Row { .. } | DeclKind::Index { .. }
        )
    });
    if let Some(decl) = first {
        let d = Diagnostic::new("a table needs a database", decl.span, "no `db` line")
            .with_hint("add `db postgres` before the tables");
        cx.report(d);
    }
}

fn table(cx: &mut Cx, name: &Name, defs: &[ColumnDef]) -> Table {
    let mut seen = HashMap::new();
    let mut columns = Vec::new();
    let mut pk = None;
    let mut indexes = Vec::new();
    for def in defs {
        if def.unique.is_some() && def.pk.is_none() {
            indexes.push(Index {
                columns: vec![columns.len()],
                unique: true,
            });
        }
        duplicate(cx, &mut seen, &def.name, "column");
        if let Some(span) = def.pk {
            if pk.is_some() {
                let d = Diagnostic::new("a second primary key", span, "one too many")
                    .with_hint("a table has exactly one `primary key` column");
                cx.report(d);
            } else {
                pk = Some(columns.len());
            }
        }
        columns.push(Column {
            name: def.name.text.clone(),
            ty: def.ty,
        });
    }
    if pk.is_none() {
        let msg = format!("table \"{}\" has no primary key", name.text);
        let d = Diagnostic::new(msg, name.span, "no primary key")
            .with_hint("mark one column `primary key`, like `id int primary key`");
        cx.report(d);
    }
    Table {
        name: name.text.clone(),
        columns,
        pk: pk.unwrap_or(0),
        rows: Vec::new(),
        indexes,
    }
}

/// `[unique] index T (col, …)`: known columns, each once.
fn index(cx: &mut Cx, unique: bool, table: &Name, names: &[Name]) {
    let Some(t) = cx.table(table) else {
        return;
    };
    let mut columns = Vec::new();
    for name in names {
        let Some(c) = cx.column(t, name) else {
            return;
        };
        let c = usize::from(c);
        if columns.contains(&c) {
            let msg = format!("column \"{}\" is indexed twice", name.text);
            cx.report(Diagnostic::new(msg, name.span, "named again here"));
            return;
        }
        columns.push(c);
    }
    let index = Index { columns, unique };
    let indexes = &mut cx.tables[t as usize].indexes;
    if !indexes.contains(&index) {
        indexes.push(index);
    }
}

fn row(cx: &mut Cx, keys: &mut [HashMap<Value, usize>], table: &Name, values: &[Lit]) {
    let Some(t) = cx.table(table) else {
        return;
    };
    let t = t as usize;
    let columns = cx.tables[t].columns.clone();
    if values.len() != columns.len() {
        arity(cx, table, values, &columns);
        return;
    }
    let mut ok = true;
    for (lit, column) in values.iter().zip(&columns) {
        ok &= typed(cx, lit, column);
    }
    let row: Vec<Value> = values.iter().map(|v| lit_value(cx, &v.kind)).collect();
    let pk = cx.tables[t].pk;
    ok &= key(cx, &mut keys[t], &row[pk], &values[pk], &table.text);
    if ok {
        cx.tables[t].rows.push(row);
    }
}

/// The most rows one `row t (A..B, …)` declares.
const MAX_RANGE_ROWS: i64 = 100_000;

/// `row t (A..B, …)`: one row for each key from A to B, the other values alike.
fn rows(
    cx: &mut Cx,
    keys: &mut [HashMap<Value, usize>],
    table: &Name,
    values: &[Lit],
    (at, upper): (usize, &Lit),
) {
    let Some(t) = cx.table(table) else {
        return;
    };
    let lower = &values[at];
    let (LitKind::Int(a), LitKind::Int(b)) = (&lower.kind, &upper.kind) else {
        let d = Diagnostic::new("a range of keys is of integers", upper.span, "not an integer")
            .with_hint("write the keys as `1..100`");
        return cx.report(d);
    };
    let span = crate::ir::Span {
        start: lower.span.start,
        end: upper.span.end,
    };
    if at != cx.tables[t as usize].pk {
        let d = Diagnostic::new("only the primary key may be a range", span, "a range here")
            .with_hint("a range declares one row for each key: write it in the key's place");
        return cx.report(d);
    }
    if b < a || b - a >= MAX_RANGE_ROWS {
        let what = if b < a { "an empty range" } else { "too many rows" };
        let d = Diagnostic::new(format!("{what} of keys: {a}..{b}"), span, what).with_hint(
            format!("a range runs from its lower key to its upper, at most {MAX_RANGE_ROWS} rows"),
        );
        return cx.report(d);
    }
    for k in *a..=*b {
        let mut one = values.to_vec();
        one[at].kind = LitKind::Int(k);
        row(cx, keys, table, &one);
    }
}

fn arity(cx: &mut Cx, table: &Name, values: &[Lit], columns: &[Column]) {
    let span = match (values.first(), values.last()) {
        (Some(a), Some(b)) => crate::ir::Span {
            start: a.span.start,
            end: b.span.end,
        },
        _ => table.span,
    };
    let names: Vec<&str> = columns.iter().map(|c| c.name.as_str()).collect();
    let (n, m) = (values.len(), columns.len());
    let msg = format!(
        "row has {n} value{} but table \"{}\" has {m} columns",
        if n == 1 { "" } else { "s" },
        table.text
    );
    let d = Diagnostic::new(msg, span, format!("{n} values"))
        .with_hint(format!("give one value per column: {}", names.join(", ")));
    cx.report(d);
}

/// Checks a value against its column's type and range; `null` fits any column.
fn typed(cx: &mut Cx, lit: &Lit, column: &Column) -> bool {
    let fits = matches!(
        (&lit.kind, column.ty),
        (LitKind::Null, _)
            | (
                LitKind::Int(_),
                ColumnType::Int | ColumnType::BigInt | ColumnType::Timestamp
            )
            | (LitKind::Str(_), ColumnType::Text)
    );
    if !fits {
        let ty = if column.ty == ColumnType::Text {
            "a string"
        } else {
            "an integer"
        };
        let msg = format!("wrong type for column \"{}\"", column.name);
        cx.report(Diagnostic::new(msg, lit.span, format!("expected {ty}")));
        return false;
    }
    if let (LitKind::Int(v), Some((lo, hi))) = (&lit.kind, column.ty.range()) {
        if !(lo..=hi).contains(v) {
            let msg = format!("value out of range for column \"{}\"", column.name);
            let d = Diagnostic::new(msg, lit.span, format!("an int holds {lo} to {hi}"))
                .with_hint("declare the column `bigint` to hold 64-bit integers");
            cx.report(d);
            return false;
        }
    }
    true
}

/// The primary key must be present and unique.
fn key(cx: &mut Cx, seen: &mut HashMap<Value, usize>, pk: &Value, lit: &Lit, table: &str) -> bool {
    if *pk == Value::Nil {
        let d = Diagnostic::new("a primary key cannot be null", lit.span, "null key");
        cx.report(d);
        return false;
    }
    if let Some(line) = seen.get(pk) {
        let msg = format!("duplicate primary key in table \"{table}\"");
        let d = Diagnostic::new(msg, lit.span, "this key is already used")
            .with_hint(format!("the row on line {line} has the same key"));
        cx.report(d);
        return false;
    }
    let line = cx.line(lit.span);
    seen.insert(*pk, line);
    true
}

//! What a replay sends: a model's SQL with its `$locals` written as literals, each flavour's
//! BEGIN, the session settings the model names, the schema and its rows.

use crate::ir::{ColumnType, Flavour, Isolation, Model, Pid, SqlStmt, Table, Value};

/// The statement as the server gets it: the model's text, with each `$name` the value the
/// process's local had when the statement ran.
pub fn text(m: &Model, pid: Pid, stmt: &SqlStmt, locals: &[Value]) -> String {
    let written = crate::trace::describe::sql_text(stmt);
    crate::trace::describe::with_locals(m, pid, written, locals, literal)
}

/// A value as a SQL literal.
pub fn literal(m: &Model, v: Value) -> String {
    crate::trace::describe::literal(m, v)
}

/// The statements a BEGIN is on this flavour (MySQL names the level before it starts).
pub fn begin(flavour: Flavour, isolation: Option<Isolation>) -> Vec<String> {
    match (flavour, isolation) {
        (Flavour::Postgres, None) => vec!["BEGIN".into()],
        (Flavour::Postgres, Some(l)) => vec![format!("BEGIN ISOLATION LEVEL {}", level(l))],
        (_, None) => vec!["START TRANSACTION".into()],
        (_, Some(l)) => vec![
            format!("SET TRANSACTION ISOLATION LEVEL {}", level(l)),
            "START TRANSACTION".into(),
        ],
    }
}

fn level(l: Isolation) -> &'static str {
    match l {
        Isolation::ReadUncommitted => "READ UNCOMMITTED",
        Isolation::ReadCommitted => "READ COMMITTED",
        Isolation::RepeatableRead => "REPEATABLE READ",
        Isolation::Serializable => "SERIALIZABLE",
    }
}

/// The settings every session of the model starts with: its isolation level, the timeouts
/// and modes it names (scaled by `scale`), and on PostgreSQL `enable_seqscan = off`, so that
/// a tiny table is read through its index as the model assumes (SSI's predicate locks then
/// cover the rows read, not the whole relation: PG-26).
pub fn settings(m: &Model, scale: f64, mariadb: bool) -> Vec<String> {
    let Some(db) = &m.db else { return Vec::new() };
    let ms = |ticks: u32| ((f64::from(ticks) * m.tick_ms as f64 * scale).round() as u64).max(1);
    let s = &db.settings;
    let mut out = Vec::new();
    if db.flavour == Flavour::Postgres {
        out.push(format!(
            "SET SESSION CHARACTERISTICS AS TRANSACTION ISOLATION LEVEL {}",
            level(db.isolation)
        ));
        out.push("SET enable_seqscan = off".into());
        out.push(format!(
            "SET lock_timeout = '{}ms'",
            s.lock_timeout.map_or(0, ms)
        ));
        out.push(format!(
            "SET deadlock_timeout = '{}ms'",
            s.deadlock_timeout
                .map_or((1000.0 * scale).round().max(1.0) as u64, ms)
        ));
    } else {
        out.push(format!(
            "SET SESSION TRANSACTION ISOLATION LEVEL {}",
            level(db.isolation)
        ));
        let wait = s
            .innodb_lock_wait_timeout
            .map_or(50_000.0 * scale, |t| ms(t) as f64);
        out.push(format!(
            "SET SESSION innodb_lock_wait_timeout = {}",
            ((wait / 1000.0).ceil() as u64).max(1)
        ));
        let mode = if s.non_strict {
            ""
        } else {
            "STRICT_TRANS_TABLES"
        };
        out.push(format!("SET SESSION sql_mode = '{mode}'"));
        if mariadb {
            let on = if s.innodb_snapshot_isolation {
                "ON"
            } else {
                "OFF"
            };
            out.push(format!("SET SESSION innodb_snapshot_isolation = {on}"));
        }
    }
    out
}

/// `CREATE TABLE`, its indexes and its rows, for this flavour.
pub fn schema(m: &Model, t: &Table, flavour: Flavour) -> Vec<String> {
    let ty = |c: ColumnType| match (c, flavour) {
        (ColumnType::Int, _) => "int",
        (ColumnType::BigInt | ColumnType::Timestamp, _) => "bigint",
        (ColumnType::Text, Flavour::Postgres) => "text",
        (ColumnType::Text, _) => "varchar(255)",
    };
    let cols: Vec<String> = t
        .columns
        .iter()
        .map(|c| format!("{} {}", c.name, ty(c.ty)))
        .collect();
    let engine = if flavour == Flavour::Postgres {
        ""
    } else {
        " ENGINE=InnoDB"
    };
    let mut out = vec![format!(
        "CREATE TABLE {} ({}, PRIMARY KEY ({})){engine}",
        t.name,
        cols.join(", "),
        t.columns[t.pk].name
    )];
    for (i, ix) in t.indexes.iter().enumerate() {
        let names: Vec<&str> = ix
            .columns
            .iter()
            .map(|&c| t.columns[c].name.as_str())
            .collect();
        out.push(format!(
            "CREATE {}INDEX {}_ix{i} ON {} ({})",
            if ix.unique { "UNIQUE " } else { "" },
            t.name,
            t.name,
            names.join(", ")
        ));
    }
    for chunk in t.rows.chunks(500) {
        let tuples: Vec<String> = chunk
            .iter()
            .map(|r| {
                let vs: Vec<String> = r.iter().map(|&v| literal(m, v)).collect();
                format!("({})", vs.join(", "))
            })
            .collect();
        out.push(format!(
            "INSERT INTO {} VALUES {}",
            t.name,
            tuples.join(", ")
        ));
    }
    out
}

/// Every row of table `t`, every column, in primary-key order: the final rows read back.
pub fn select_all(t: &Table) -> String {
    let cols: Vec<&str> = t.columns.iter().map(|c| c.name.as_str()).collect();
    format!(
        "SELECT {} FROM {} ORDER BY {}",
        cols.join(", "),
        t.name,
        t.columns[t.pk].name
    )
}

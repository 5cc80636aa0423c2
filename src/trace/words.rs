//! The server's own words for an error the simulation raised: the message each engine
//! prints with its code (docs/semantics.md, "The servers' messages"), as its command-line
//! client shows it: `ERROR:  deadlock detected` (psql), `ERROR 1213 (40001): Deadlock found
//! when trying to get lock; try restarting transaction` (mysql, mariadb).

use crate::exec::observe::{About, Refusal};
use crate::ir::{ColumnType, Flavour, Model, Table, Value};

/// The part of an InnoDB message the simulation does not reproduce: the expression as the
/// server prints it. A message ending in it is compared up to it.
pub const UNWRITTEN: &str = "…";

/// An error's message, or `None` for a code no server sends (`TIMEOUT`: a lost Redis reply).
#[must_use]
pub fn message(m: &Model, r: &Refusal) -> Option<String> {
    let flavour = m.db.as_ref().map_or(Flavour::Postgres, |d| d.flavour);
    message_in(m, r, flavour)
}

/// The message as `flavour` words it (a replay of the mysql flavour on MariaDB compares
/// MariaDB's words).
#[must_use]
pub fn message_in(m: &Model, r: &Refusal, flavour: Flavour) -> Option<String> {
    let code = m.symbol(r.code);
    let t = table(m, r.table);
    let table = t.map_or("?", |t| t.name.as_str());
    let column = |c: u16| t.and_then(|t| t.columns.get(usize::from(c)));
    Some(match (code, r.about) {
        ("40001", About::Dependencies) => {
            "could not serialize access due to read/write dependencies among transactions".into()
        }
        ("40001", About::Deleted) => "could not serialize access due to concurrent delete".into(),
        ("40001", _) => "could not serialize access due to concurrent update".into(),
        ("40P01", _) => "deadlock detected".into(),
        ("55P03", About::LockTimeout) => "canceling statement due to lock timeout".into(),
        ("55P03", _) => format!("could not obtain lock on row in relation \"{table}\""),
        ("25P02", _) => {
            "current transaction is aborted, commands ignored until end of transaction block".into()
        }
        ("22003", About::Range { column: c, .. }) => {
            let big = column(c).is_some_and(|c| c.ty == ColumnType::BigInt);
            let word = if big { "bigint" } else { "integer" };
            format!("{word} out of range")
        }
        ("22003", _) => "bigint out of range".into(),
        ("23505", _) => format!("duplicate key value violates unique constraint \"{table}_pkey\""),
        ("1213", _) => "Deadlock found when trying to get lock; try restarting transaction".into(),
        ("1205", _) => "Lock wait timeout exceeded; try restarting transaction".into(),
        ("3572", _) => "Statement aborted because lock(s) could not be acquired immediately and \
                        NOWAIT is set."
            .into(),
        ("1020", _) => format!("Record has changed since last read in table '{table}'"),
        ("1264", About::Range { column: c, row }) => {
            let name = column(c).map_or("?", |c| c.name.as_str());
            format!("Out of range value for column '{name}' at row {row}")
        }
        ("1690", _) => format!("BIGINT value is out of range in '{UNWRITTEN}'"),
        ("1062", About::Duplicate(key)) => {
            let index = match flavour {
                Flavour::Mysql => format!("{table}.PRIMARY"),
                _ => "PRIMARY".into(),
            };
            format!("Duplicate entry '{}' for key '{index}'", entry(m, key))
        }
        _ => return None,
    })
}

/// The error as the engine's command-line client prints it.
#[must_use]
pub fn line(m: &Model, r: &Refusal) -> Option<String> {
    let text = message(m, r)?;
    let code = m.symbol(r.code);
    Some(match sqlstate(code) {
        Some(state) => format!("ERROR {code} ({state}): {text}"),
        None => format!("ERROR:  {text}"),
    })
}

/// Whether a server's message is the simulation's: the same text, or the same up to the
/// part the simulation does not write.
#[must_use]
pub fn agree(ours: &str, theirs: &str) -> bool {
    match ours.split_once(UNWRITTEN) {
        Some((head, _)) => theirs.starts_with(head),
        None => ours == theirs,
    }
}

/// The SQLSTATE the mysql client prints beside an InnoDB error number; `None` for a
/// PostgreSQL code (a SQLSTATE itself).
fn sqlstate(code: &str) -> Option<&'static str> {
    Some(match code {
        "1213" => "40001",
        "1205" | "3572" | "1020" => "HY000",
        "1264" | "1690" => "22003",
        "1062" => "23000",
        _ => return None,
    })
}

/// The statement's table, when it has one.
fn table(m: &Model, t: Option<u16>) -> Option<&Table> {
    m.db.as_ref().zip(t).and_then(|(d, t)| d.tables.get(usize::from(t)))
}

/// A key as InnoDB writes it in a duplicate-entry message: the value's text, unquoted.
fn entry(m: &Model, key: Value) -> String {
    match key {
        Value::Int(i) => i.to_string(),
        Value::Str(s) => m.symbol(s).to_string(),
        Value::Bool(b) => i64::from(b).to_string(),
        Value::Nil => "NULL".into(),
        Value::Pid(p) => m.process_name(p),
    }
}

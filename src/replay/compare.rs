//! One statement's answer, simulated and real, in the same words, and whether they agree:
//! rows as multisets (in order where the statement has `ORDER BY`), row counts, error codes
//! and their messages.

use crate::exec::observe::Reply;
use crate::ir::{Flavour, Model, Value};
use crate::servers::{Cell, Outcome, RedisReply};
use crate::trace::words;

/// What the simulation answered, as the table shows it.
pub fn simulated(m: &Model, reply: &Reply) -> String {
    match reply {
        Reply::None | Reply::Tag(_) => "ok".into(),
        Reply::Count(n) => rows_word(u64::try_from(*n).unwrap_or(0)),
        Reply::Error(r) => format!("ERROR {}", m.symbol(r.code)),
        Reply::Rows(rows) => {
            let cells: Vec<Vec<Cell>> = rows
                .iter()
                .map(|r| r.iter().map(|&v| cell(m, v)).collect())
                .collect();
            rows_text(&cells)
        }
    }
}

/// Both sides of an error whose code agrees and whose message does not, message and all.
pub fn words_differ(
    m: &Model,
    reply: &Reply,
    out: &Outcome,
    flavour: Flavour,
) -> Option<(String, String)> {
    let (Reply::Error(r), Some(e)) = (reply, &out.error) else {
        return None;
    };
    let code = m.symbol(r.code);
    let ours = words::message_in(m, r, flavour)?;
    (e.code == code && !words::agree(&ours, &e.message)).then(|| {
        (
            format!("ERROR {code}: {ours}"),
            format!("ERROR {code}: {}", e.message),
        )
    })
}

/// What the server answered, in the same words.
pub fn server(out: &Outcome) -> String {
    if let Some(e) = &out.error {
        return format!("ERROR {}", e.code);
    }
    match (&out.rows, out.affected) {
        (Some(rows), _) => rows_text(rows),
        (None, Some(n)) => rows_word(n),
        (None, None) => "ok".into(),
    }
}

/// Whether the server's answer is the simulation's: for an error, the code and the message
/// (docs/semantics.md, "The servers' messages").
/// `flavour` is the server's: the mysql flavour replayed on MariaDB is compared with
/// MariaDB's words.
pub fn agree(m: &Model, reply: &Reply, out: &Outcome, ordered: bool, flavour: Flavour) -> bool {
    match reply {
        Reply::Error(r) => {
            let same_code = out
                .error
                .as_ref()
                .is_some_and(|e| e.code == m.symbol(r.code));
            same_code && words_differ(m, reply, out, flavour).is_none()
        }
        _ if out.error.is_some() => false,
        Reply::None | Reply::Tag(_) => true,
        Reply::Count(n) => out.affected.is_some_and(|a| i64::try_from(a) == Ok(*n)),
        Reply::Rows(rows) => {
            let Some(got) = &out.rows else { return false };
            let want: Vec<Vec<Cell>> = rows
                .iter()
                .map(|r| r.iter().map(|&v| cell(m, v)).collect())
                .collect();
            if ordered {
                *got == want
            } else {
                sorted(got) == sorted(&want)
            }
        }
    }
}

/// A simulated value as the server would send it.
pub fn cell(m: &Model, v: Value) -> Cell {
    match v {
        Value::Nil => Cell::Null,
        Value::Int(i) => Cell::Int(i),
        Value::Bool(b) => Cell::Int(i64::from(b)),
        Value::Str(s) => Cell::from_text(m.symbol(s)),
        Value::Pid(p) => Cell::Text(m.process_name(p)),
    }
}

fn sorted(rows: &[Vec<Cell>]) -> Vec<String> {
    let mut keys: Vec<String> = rows.iter().map(|r| format!("{r:?}")).collect();
    keys.sort();
    keys
}

fn rows_word(n: u64) -> String {
    format!("{n} row{}", if n == 1 { "" } else { "s" })
}

/// Rows as the trace writes them: `10`, `(1, 10) (2, 20)`, `no row`.
pub fn rows_text(rows: &[Vec<Cell>]) -> String {
    if rows.is_empty() {
        return "no row".into();
    }
    let shown: Vec<String> = rows
        .iter()
        .map(|r| {
            let cells: Vec<String> = r.iter().map(ToString::to_string).collect();
            if cells.len() == 1 {
                cells[0].clone()
            } else {
                format!("({})", cells.join(", "))
            }
        })
        .collect();
    shown.join(" ")
}

/// A Redis reply as the simulation gave it.
pub fn redis_simulated(m: &Model, reply: Value) -> String {
    match reply {
        Value::Nil => "nil".into(),
        Value::Int(i) => i.to_string(),
        v => format!("\"{}\"", super::redis::value_text(m, v)),
    }
}

/// A Redis reply as the server gave it, in the same words.
pub fn redis_server(got: &RedisReply) -> String {
    match got {
        RedisReply::Nil => "nil".into(),
        RedisReply::Int(i) => i.to_string(),
        RedisReply::Text(t) => format!("\"{t}\""),
        RedisReply::List(items) => {
            let shown: Vec<String> = items.iter().map(redis_server).collect();
            format!("[{}]", shown.join(", "))
        }
        RedisReply::Error(e) => format!("ERROR {}", e.code),
    }
}

/// Whether the server's Redis reply is the simulation's; a PTTL within `tolerance` ms.
pub fn redis_agree(m: &Model, reply: Value, got: &RedisReply, pttl: bool, tolerance: i64) -> bool {
    match (reply, got) {
        (Value::Nil, RedisReply::Nil) => true,
        (Value::Int(a), RedisReply::Int(b)) if pttl && a >= 0 && *b >= 0 => {
            (a - b).abs() <= tolerance
        }
        (Value::Int(a), RedisReply::Int(b)) => a == *b,
        (Value::Nil | Value::Int(_), _) => false,
        (v, RedisReply::Text(t)) => super::redis::value_text(m, v) == *t,
        _ => false,
    }
}

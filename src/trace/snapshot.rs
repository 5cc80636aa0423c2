//! The whole world at one moment, as data: every row (committed values, the uncommitted change
//! and who made it, locks held and queued), every gap lock, every Redis node's keys with their
//! TTLs, every mutex, every ghost, and how each process stands. A step's JSON carries the one
//! after it (`state`), the trace the one before the first step (`start`); the HTML page's world
//! panel shows exactly this. Only reads the state.

use super::describe::{finished_name, ms, node_name, row_name, wait_name};
use super::json::value;
use crate::ir::LockMode;
use crate::ir::value::Pid;
use crate::ir::Model;
use crate::world::db::{Gap, GapRange, Row};
use crate::world::process::{Proc, Status};
use crate::world::State;
use serde_json::{json, Map, Value as Json};

/// The world of `s`, as docs/json.md describes a step's `state`.
#[must_use]
pub fn render(m: &Model, s: &State) -> Json {
    json!({
        "rows": rows(m, s),
        "gaps": s.db.gaps.iter().map(|g| gap(m, g)).collect::<Vec<_>>(),
        "redis": redis(m, s),
        "mutexes": mutexes(m, s),
        "ghosts": m.ghosts.iter().zip(&s.ghosts)
            .map(|(g, v)| json!({"name": g.name, "value": v}))
            .collect::<Vec<_>>(),
        "processes": s.procs.iter().enumerate()
            .map(|(i, p)| process(m, Pid(i as u16), p))
            .collect::<Vec<_>>(),
    })
}

/// A lock mode as SQL writes it.
#[must_use]
pub fn mode_name(mode: LockMode) -> &'static str {
    match mode {
        LockMode::Update => "FOR UPDATE",
        LockMode::NoKeyUpdate => "FOR NO KEY UPDATE",
        LockMode::Share => "FOR SHARE",
        LockMode::KeyShare => "FOR KEY SHARE",
    }
}

fn rows(m: &Model, s: &State) -> Vec<Json> {
    let Some(db) = m.db.as_ref() else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for t in 0..db.tables.len() as u16 {
        for r in 0..s.db.rows(t) {
            out.push(row(m, t, s.db.row(t, r)));
        }
    }
    out
}

fn columns(m: &Model, table: u16, values: Option<&[crate::ir::value::Value]>) -> Json {
    let db = m.db.as_ref().expect("rows exist only with a db");
    match values {
        None => Json::Null,
        Some(vs) => Json::Object(
            db.tables[table as usize]
                .columns
                .iter()
                .zip(vs)
                .map(|(c, v)| (c.name.clone(), value(m, *v)))
                .collect::<Map<_, _>>(),
        ),
    }
}

fn row(m: &Model, table: u16, r: &Row) -> Json {
    let lock = |(p, mode): &(Pid, LockMode)| json!({"by": m.process_name(*p), "mode": mode_name(*mode)});
    json!({
        "table": m.db.as_ref().expect("a db").tables[table as usize].name,
        "key": value(m, r.key),
        "name": row_name(m, table, r.key),
        "values": columns(m, table, r.latest()),
        "commits": r.versions.len(),
        "pending": r.pending.as_ref().map(|(p, vs)| json!({
            "by": m.process_name(*p), "values": columns(m, table, vs.as_deref()),
        })),
        "locks": r.locks.held.iter().map(lock).collect::<Vec<_>>(),
        "queue": r.locks.queue.iter().map(lock).collect::<Vec<_>>(),
    })
}

fn gap(m: &Model, g: &Gap) -> Json {
    let t = &m.db.as_ref().expect("a db").tables[g.table as usize];
    let range = match &g.range {
        GapRange::All => "every gap".to_string(),
        GapRange::Between(lo, hi) => {
            let end = |v: &Option<_>, inf: &str| v.map_or(inf.to_string(), |v| m.show(&v));
            format!("({}, {})", end(lo, "-∞"), end(hi, "+∞"))
        }
        GapRange::Value { column, value } => {
            format!("{} = {}", t.columns[*column as usize].name, m.show(value))
        }
    };
    json!({"table": t.name, "by": m.process_name(g.owner), "range": range})
}

fn redis(m: &Model, s: &State) -> Vec<Json> {
    (0..m.redis_nodes())
        .map(|node| {
            let server = (0..m.redis.len() as u16)
                .rfind(|&sv| m.redis_base(sv) <= node)
                .expect("every node belongs to a server");
            let n = &s.redis[node];
            json!({
                "node": node_name(m, node as u16),
                "server": m.redis[server as usize].name,
                "primary": s.node(m, server) == node,
                "down": n.down,
                "keys": n.keys.iter().map(|k| json!({
                    "key": m.symbol(k.name),
                    "value": value(m, k.value),
                    "ttl_ms": k.ttl.map(|t| u64::from(t) * m.tick_ms),
                })).collect::<Vec<_>>(),
            })
        })
        .collect()
}

fn mutexes(m: &Model, s: &State) -> Vec<Json> {
    let n = m.mutexes.len();
    s.mutexes
        .iter()
        .enumerate()
        .map(|(i, l)| {
            json!({
                "name": m.mutexes[i % n],
                "instance": m.instances[i / n],
                "holder": l.holder.map(|p| m.process_name(p)),
                "queue": l.queue.iter().map(|p| m.process_name(*p)).collect::<Vec<_>>(),
            })
        })
        .collect()
}

fn process(m: &Model, pid: Pid, p: &Proc) -> Json {
    let status = match p.status {
        Status::Ready => "ready".to_string(),
        Status::Busy(t) => format!("busy for {}", ms(m, u64::from(t))),
        Status::Waiting(w) => format!("waiting for {}", wait_name(m, w)),
        s => finished_name(m, s),
    };
    let ops = &m.program(pid).ops;
    let line = (!p.status.finished())
        .then(|| ops.get(p.pc as usize).map(|op| m.line_of(op.span)))
        .flatten();
    json!({
        "name": m.process_name(pid),
        "status": status,
        "paused": p.paused.is_some(),
        "line": line,
        "in_transaction": p.txn.is_some(),
    })
}

//! The trace as JSON data (docs/json.md): per step the step's name (as the replay token
//! writes it), who acted, where in the model, the time, what it did in words, and every event
//! as data — SQL replies, Redis commands, row versions, locks, keys and their TTLs, faults.
//! Only reads the trace; computes no semantics.

use super::schedule::Cause;
use super::describe::{describe, ms, node_name, redis, row_name, sql_text, wait_name};
use super::{token, Step, Trace};
use crate::exec::observe::{Event, Reply};
use crate::exec::waits::Edge;
use crate::ir::Model;
use crate::ir::value::{Pid, Value};
use serde_json::{json, Map, Value as Json};

/// The trace: its failure, replay token, steps, and for a deadlock the waits at its end.
#[must_use]
pub fn render(m: &Model, t: &Trace) -> Json {
    let held = super::holders::after_each(m, t);
    let notes = super::belief::notes(m, t);
    let steps: Vec<Json> = t
        .steps
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let mut j = step(m, i, s, t.causes.get(i).copied());
            j["beliefs"] = json!(super::belief::words(m, &notes.shown[i]));
            j["state"] = super::snapshot::render(m, &s.after);
            j["held"] = json!(held[i]
                .iter()
                .map(|h| json!({"what": h.what, "by": m.process_name(h.who)}))
                .collect::<Vec<_>>());
            j
        })
        .collect();
    let edges = |es: &[Edge]| -> Vec<Json> { es.iter().map(|e| edge(m, e)).collect() };
    json!({
        "failure": t.failure.map(|f| f.name(m)),
        "summary": super::summary::lines(m, t, &held, &notes),
        "replay": token::render(m, t),
        "start": super::snapshot::render(m, &t.start),
        "steps": steps,
        "context_switches": t.context_switches(),
        "loop_start": t.loop_start.map(|k| k + 1),
        "waits": edges(&t.waits),
        "wait_cycle": t.cycle.as_ref().map(|c| edges(c)),
    })
}

fn step(m: &Model, i: usize, s: &Step, cause: Option<Cause>) -> Json {
    let d = describe(m, s);
    let at = s.events.iter().find_map(|e| match e {
        Event::At { span } => Some(*span),
        _ => None,
    });
    let ticks: u64 = s
        .events
        .iter()
        .map(|e| match e {
            Event::TimePasses { ticks } => u64::from(*ticks),
            _ => 0,
        })
        .sum();
    let mut out = json!({
        "index": i + 1,
        "step": token::name(m, s.choice, ticks),
        "actor": d.actor.map(|p| m.process_name(p)),
        "line": at.map(|span| m.line_of(span)),
        "time_ms": s.time * m.tick_ms,
        "did": d.doing_text(),
        "world": d.world_text(),
        "events": s.events.iter().filter_map(|e| event(m, d.actor, e)).collect::<Vec<_>>(),
    });
    if let Some(cause) = cause {
        let (k, automatic) = match cause {
            Cause::Scheduled(k) => (Some(k), false),
            Cause::After(k) => (Some(k), true),
            Cause::Drain => (None, true),
        };
        out["schedule_step"] = json!(k);
        out["automatic"] = json!(automatic);
    }
    out
}

fn edge(m: &Model, e: &Edge) -> Json {
    json!({
        "waiter": m.process_name(e.waiter),
        "holder": m.process_name(e.holder),
        "for": wait_name(m, e.wait),
    })
}

/// A value: nil is null, a process id is `{"process": "buyer[0]"}`.
#[must_use]
pub fn value(m: &Model, v: Value) -> Json {
    match v {
        Value::Nil => Json::Null,
        Value::Bool(b) => json!(b),
        Value::Int(i) => json!(i),
        Value::Str(s) => json!(m.symbol(s)),
        Value::Pid(p) => json!({ "process": m.process_name(p) }),
    }
}

fn row(m: &Model, table: u16, key: Value, values: Option<&[Value]>) -> Json {
    let db = m.db.as_ref().expect("rows exist only with a db");
    let t = &db.tables[table as usize];
    let values = values.map(|vs| {
        let cols: Map<String, Json> = t
            .columns
            .iter()
            .zip(vs)
            .map(|(c, v)| (c.name.clone(), value(m, *v)))
            .collect();
        Json::Object(cols)
    });
    json!({ "table": t.name, "key": value(m, key), "name": row_name(m, table, key), "values": values })
}

fn reply(m: &Model, r: &Reply) -> Json {
    match r {
        Reply::None => Json::Null,
        Reply::Rows(rows) => json!({
            "rows": rows
                .iter()
                .map(|r| r.iter().map(|v| value(m, *v)).collect::<Vec<_>>())
                .collect::<Vec<_>>()
        }),
        Reply::Count(n) => json!({ "count": n }),
        Reply::Tag(t) => json!({ "tag": t }),
        Reply::Error(r) => match super::words::message(m, r) {
            Some(message) => json!({ "error": m.symbol(r.code), "message": message }),
            None => json!({ "error": m.symbol(r.code) }),
        },
    }
}

fn server(m: &Model, s: u16) -> &str {
    m.redis[s as usize].name.as_str()
}

/// One event as data, with its `kind`; `None` for the bookkeeping ones (where a step starts
/// is the step's `line`).
#[must_use]
pub fn event(m: &Model, actor: Option<Pid>, e: &Event) -> Option<Json> {
    let p = |pid: &Pid| m.process_name(*pid);
    let key = |k: &crate::ir::value::Sym| m.symbol(*k).to_string();
    Some(match e {
        Event::At { .. } => return None,
        Event::Sql {
            stmt, reply: r, ..
        } => {
            json!({ "kind": "sql", "statement": sql_text(stmt), "reply": reply(m, r) })
        }
        Event::Redis {
            server: s,
            cmd,
            arg,
            reply: r,
        } => json!({
            "kind": "redis", "server": server(m, *s), "command": redis(m, cmd, *arg),
            "reply": value(m, *r),
        }),
        Event::Lock { mutex } => json!({ "kind": "lock", "mutex": m.mutexes[*mutex as usize] }),
        Event::Unlock { mutex } => {
            json!({ "kind": "unlock", "mutex": m.mutexes[*mutex as usize] })
        }
        Event::Waits { wait, holder } => json!({
            "kind": "waits", "for": wait_name(m, *wait), "holder": holder.as_ref().map(p),
        }),
        Event::SetGhost { ghost, value: v } => {
            json!({ "kind": "ghost", "ghost": m.ghosts[*ghost as usize].name, "value": v })
        }
        Event::Delay { work, ticks, upto } => json!({
            "kind": if *work { "work" } else { "sleep" },
            "ms": u64::from(*ticks) * m.tick_ms, "up_to_ms": u64::from(*upto) * m.tick_ms,
        }),
        Event::ReplyLost { pid } => json!({ "kind": "reply_lost", "process": p(pid) }),
        Event::Drift { pid, by } => json!({
            "kind": "drift", "process": p(pid), "by_ms": i64::from(*by) * m.tick_ms as i64,
        }),
        Event::EndedEarly { pid } => json!({ "kind": "ended_early", "process": p(pid) }),
        Event::Restarted { pid } => json!({ "kind": "restarted", "process": p(pid) }),
        Event::Picked { local, value } => {
            let name = actor.map(|a| format!("${}", m.program(a).locals[*local as usize]));
            json!({ "kind": "picked", "local": name, "value": value })
        }
        Event::Finished { outcome } => json!({
            "kind": "finished", "outcome": outcome.as_ref().map(key),
        }),
        Event::Failed(err) => json!({ "kind": "runtime_error", "message": err.message() }),
        Event::Uncaught { code } => json!({ "kind": "uncaught", "code": key(code) }),
        Event::RowCommitted {
            table,
            key: k,
            values,
        } => {
            let mut r = row(m, *table, *k, values.as_deref());
            r["kind"] = json!(if values.is_some() {
                "row_committed"
            } else {
                "row_deleted"
            });
            r
        }
        Event::RowLocked { table, key: k } => {
            let mut r = row(m, *table, *k, None);
            r["kind"] = json!("row_locked");
            r
        }
        Event::Deadlock { cycle, victim } => json!({
            "kind": "deadlock",
            "cycle": cycle.iter().map(|e| edge(m, e)).collect::<Vec<_>>(),
            "victim": p(victim),
        }),
        Event::Interrupted { pid, code } => {
            json!({ "kind": "interrupted", "process": p(pid), "code": key(code) })
        }
        Event::Aborted { pid } => json!({ "kind": "aborted", "process": p(pid) }),
        Event::Granted { pid, wait } => {
            json!({ "kind": "granted", "process": p(pid), "what": wait_name(m, *wait) })
        }
        Event::KeySet {
            server: s,
            key: k,
            value: v,
            ttl,
        } => json!({
            "kind": "key_set", "server": server(m, *s), "key": key(k), "value": value(m, *v),
            "ttl_ms": ttl.map(|t| u64::from(t) * m.tick_ms),
        }),
        Event::Watchdog { key: k, running } => {
            json!({ "kind": "watchdog", "key": key(k), "running": running })
        }
        Event::Renewal {
            pid,
            key: k,
            renewed,
            ..
        } => json!({ "kind": "renewal", "process": p(pid), "key": key(k), "renewed": renewed }),
        Event::Paused { pid, paused } => {
            json!({ "kind": "paused", "process": p(pid), "paused": paused })
        }
        Event::Hung { pid } => json!({ "kind": "hung", "process": p(pid) }),
        Event::Replicated { node, key: k } => {
            json!({ "kind": "replicated", "node": node_name(m, *node), "key": key(k) })
        }
        Event::ClockJump {
            server: s,
            replica,
            by,
        } => json!({
            "kind": "clock_jump", "server": server(m, *s), "replica": replica,
            "by_ms": i64::from(*by) * m.tick_ms as i64,
        }),
        Event::ServerRestarted {
            server: s,
            lost,
            down,
        } => json!({
            "kind": "server_restarted", "server": server(m, *s),
            "lost": lost.iter().map(key).collect::<Vec<_>>(),
            "down_ms": u64::from(*down) * m.tick_ms,
        }),
        Event::Partitioned {
            server: s,
            in_flight,
        } => json!({
            "kind": "partitioned", "server": server(m, *s), "in_flight": in_flight,
        }),
        Event::Reachable { server: s } => json!({ "kind": "reachable", "server": server(m, *s) }),
        Event::Unreached {
            pid,
            server: s,
            refused,
        } => json!({
            "kind": "unreached", "process": p(pid), "server": server(m, *s), "refused": refused,
        }),
        Event::Failover {
            server: s,
            promoted,
        } => json!({
            "kind": "failover", "server": server(m, *s), "promoted": node_name(m, *promoted),
        }),
        Event::KeyTtl {
            server: s,
            key: k,
            ttl,
        } => json!({
            "kind": "key_ttl", "server": server(m, *s), "key": key(k),
            "ttl_ms": u64::from(*ttl) * m.tick_ms,
        }),
        Event::KeyDeleted { server: s, key: k } => {
            json!({ "kind": "key_deleted", "server": server(m, *s), "key": key(k) })
        }
        Event::KeyExpired { server: s, key: k } => {
            json!({ "kind": "key_expired", "server": server(m, *s), "key": key(k) })
        }
        Event::TimePasses { ticks } => json!({
            "kind": "time_passes", "ms": u64::from(*ticks) * m.tick_ms,
            "as_written": ms(m, u64::from(*ticks)),
        }),
        Event::Woke { pid } => json!({ "kind": "woke", "process": p(pid) }),
        Event::Crashed { pid } => json!({ "kind": "crashed", "process": p(pid) }),
    })
}

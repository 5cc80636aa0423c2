//! Who holds what after each step of a trace: Redis lock keys, mutexes and row locks.
//!
//! A Redis key is a lock held by a process while its value is the one that process wrote
//! with `SET … NX` (a token, whatever its type), or while the value is a process id. What
//! is held is read off the state after the step; who set it, off the trace's events.

use super::describe::{row_name, wait_name};
use super::Trace;
use crate::exec::observe::Event;
use crate::ir::value::{Pid, Sym, Value};
use crate::ir::{Model, RedisCmd};
use crate::world::process::Wait;
use crate::world::State;

/// One thing held: `lock@n1`, `mutex m on app`, `sku#1`, and its holder.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Held {
    pub what: String,
    pub who: Pid,
    /// A row lock (a lock a database takes for a statement), not a lock the model takes.
    pub row: bool,
}

/// Who wrote which lock token: (server, key, value, writer), newest last.
pub type Writers = Vec<(u16, Sym, Value, Pid)>;

/// What each step's events add to `writers`: the tokens its actor set with `SET … NX`.
pub fn note_writers(step: &super::Step, writers: &mut Writers) {
    let Some(actor) = step.choice.actor() else {
        return;
    };
    for e in &step.events {
        if let Event::Redis {
            server,
            cmd: RedisCmd::Set { key, nx: true, .. },
            arg,
            reply: Value::Str(_),
        } = e
        {
            writers.retain(|w| (w.0, w.1) != (*server, *key));
            writers.push((*server, *key, *arg, actor));
        }
    }
}

/// The Redis key `key` on server `server` as a lock name: `lock@n1`, or `lock` with one
/// server.
pub fn key_name(m: &Model, server: u16, key: Sym) -> String {
    if m.redis.len() > 1 {
        format!("{}@{}", m.symbol(key), m.redis[server as usize].name)
    } else {
        m.symbol(key).to_string()
    }
}

/// Everything held in `s`, given who wrote which token: Redis locks server by server, then
/// mutexes, then row locks table by table.
pub fn held(m: &Model, s: &State, writers: &Writers) -> Vec<Held> {
    let mut out = Vec::new();
    for server in 0..m.redis.len() as u16 {
        for k in &s.redis[s.node(m, server)].keys {
            let who = match k.value {
                Value::Pid(p) => Some(p),
                v => writers
                    .iter()
                    .find(|w| (w.0, w.1, w.2) == (server, k.name, v))
                    .map(|w| w.3),
            };
            if let Some(who) = who {
                out.push(Held {
                    what: key_name(m, server, k.name),
                    who,
                    row: false,
                });
            }
        }
    }
    for (i, l) in s.mutexes.iter().enumerate() {
        if let Some(who) = l.holder {
            let what = wait_name(m, Wait::Mutex(i as u16));
            out.push(Held {
                what,
                who,
                row: false,
            });
        }
    }
    for t in 0..s.db.tables.len() as u16 {
        for r in 0..s.db.rows(t) {
            let row = s.db.row(t, r);
            for &(who, _) in &row.locks.held {
                out.push(Held {
                    what: row_name(m, t, row.key),
                    who,
                    row: true,
                });
            }
        }
    }
    out
}

/// What is held after each step of the trace.
pub fn after_each(m: &Model, t: &Trace) -> Vec<Vec<Held>> {
    let mut writers = Writers::new();
    t.steps
        .iter()
        .map(|step| {
            note_writers(step, &mut writers);
            held(m, &step.after, &writers)
        })
        .collect()
}

/// In words: `lock@n1…n5: client[0], sku#1: buyer[1]`, or `nothing held`.
pub fn words(held: &[Held], m: &Model) -> String {
    if held.is_empty() {
        return "nothing held".into();
    }
    let phrases: Vec<String> = held
        .iter()
        .map(|h| format!("{} by {}", h.what, m.process_name(h.who)))
        .collect();
    super::series::merge(&phrases).join(", ")
}

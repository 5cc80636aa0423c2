//! Redis commands and `atomic` blocks (the model of a Lua script), answered by a server's
//! current primary; its writes enter the replicas' replication streams.

use super::eval::eval;
use super::observe::{Event, Observer};
use super::step::{assign, bind, scope};
use crate::ir::{Model, Op, OpKind, RedisCmd};
use crate::world::process::RunError;
use crate::ir::value::{Pid, Sym, Value};
use crate::world::State;

/// Runs one command on `server` and returns its reply.
pub(super) fn run<O: Observer>(
    m: &Model,
    st: &mut State,
    pid: Pid,
    cmd: &RedisCmd,
    server: u16,
    obs: &mut O,
) -> Result<Value, RunError> {
    let n = st.node(m, server);
    let mut arg = Value::Nil;
    let reply = match cmd {
        RedisCmd::Set {
            key, value, nx, px, ..
        } => {
            let v = eval(value, &scope(m, st, pid))?;
            arg = v;
            let set = st.redis[n].set(*key, v, *nx, *px);
            if set && O::EVENTS {
                obs.event(Event::KeySet {
                    server,
                    key: *key,
                    value: v,
                    ttl: *px,
                });
            }
            if set {
                Value::Str(Sym::OK)
            } else {
                Value::Nil
            }
        }
        RedisCmd::Get { key } => {
            st.redis[n].get(*key).map_or(Value::Nil, |k| k.value)
        }
        RedisCmd::GetReplica { key, replica } => {
            st.replicas(m, server)
                .get(usize::from(*replica).saturating_sub(1))
                .and_then(|&r| st.redis[r].get(*key))
                .map_or(Value::Nil, |k| k.value)
        }
        RedisCmd::Pexpire { key, ttl } => {
            let found = st.redis[n].expire(*key, *ttl);
            if found && O::EVENTS {
                obs.event(Event::KeyTtl {
                    server,
                    key: *key,
                    ttl: *ttl,
                });
            }
            Value::Int(i64::from(found))
        }
        RedisCmd::Pttl { key } => {
            Value::Int(match st.redis[n].get(*key) {
                None => -2,
                Some(k) => k.ttl.map_or(-1, |t| i64::from(t) * m.tick_ms as i64),
            })
        }
        RedisCmd::Incr { key } => {
            let next = match st.redis[n].get(*key).map(|k| k.value) {
                None => 1,
                Some(Value::Int(i)) => i.checked_add(1).ok_or(RunError::Overflow)?,
                Some(_) => return Err(RunError::Type),
            };
            st.redis[n].incr(*key, Value::Int(next));
            if O::EVENTS {
                obs.event(Event::KeySet {
                    server,
                    key: *key,
                    value: Value::Int(next),
                    ttl: st.redis[n].get(*key).and_then(|k| k.ttl),
                });
            }
            Value::Int(next)
        }
        RedisCmd::Del { key } => {
            let removed = st.redis[n].del(*key);
            if removed > 0 && O::EVENTS {
                obs.event(Event::KeyDeleted { server, key: *key });
            }
            Value::Int(removed)
        }
        RedisCmd::Wait { .. } => unreachable!("WAIT blocks: the step runs it"),
    };
    if writes(cmd) {
        replicate(m, st, server, cmd.key());
        st.procs[pid.index()].last_write = Some((server, st.epochs[server as usize]));
    }
    if O::EVENTS {
        obs.event(Event::Redis {
            server,
            cmd: cmd.clone(),
            arg,
            reply,
        });
    }
    Ok(reply)
}

/// Whether a command changes the key (and so must be replicated).
fn writes(cmd: &RedisCmd) -> bool {
    !matches!(
        cmd,
        RedisCmd::Get { .. }
            | RedisCmd::GetReplica { .. }
            | RedisCmd::Pttl { .. }
            | RedisCmd::Wait { .. }
    )
}

/// Queues the key's new state for every live replica of `server` (RF-1).
fn replicate(m: &Model, st: &mut State, server: u16, key: Sym) {
    let w = st.redis[st.node(m, server)].state_of(key);
    st.send_to_replicas(m, server, &w);
}

/// How many live replicas of `server` have applied every write so far (WAIT's count).
#[must_use]
pub fn acked(m: &Model, s: &State, server: u16) -> u8 {
    s.replicas(m, server)
        .into_iter()
        .filter(|&r| s.redis[r].backlog.is_empty())
        .count() as u8
}

/// Whether the command's reply would be truthy now (for `await`); changes nothing.
#[must_use]
pub fn would_succeed(m: &Model, s: &State, cmd: &RedisCmd, server: u16) -> bool {
    let r = &s.redis[s.node(m, server)];
    match cmd {
        RedisCmd::Set { key, nx, .. } => !*nx || r.get(*key).is_none(),
        RedisCmd::Get { key } | RedisCmd::GetReplica { key, .. } => {
            r.get(*key).is_some_and(|k| k.value.truthy())
        }
        RedisCmd::Del { key } | RedisCmd::Pexpire { key, .. } => r.get(*key).is_some(),
        RedisCmd::Pttl { .. } | RedisCmd::Incr { .. } | RedisCmd::Wait { .. } => true,
    }
}

/// The process a key's value names, if it names one (a lock token `$me`): whom an `await`
/// on that key waits for.
#[must_use]
pub fn key_owner(m: &Model, s: &State, cmd: &RedisCmd, server: u16) -> Option<Pid> {
    match s.redis[s.node(m, server)].get(cmd.key())?.value {
        Value::Pid(p) => Some(p),
        _ => None,
    }
}

/// Runs an `atomic` body: nothing else runs and no key expires until it ends (RS-7).
pub(super) fn atomic<O: Observer>(
    m: &Model,
    st: &mut State,
    pid: Pid,
    body: &[Op],
    server: u16,
    obs: &mut O,
) -> Result<(), RunError> {
    let mut pc = 0usize;
    while pc < body.len() {
        match &body[pc].kind {
            OpKind::Redis { cmd, into, .. } => {
                let reply = run(m, st, pid, cmd, server, obs)?;
                bind(st, pid, *into, reply);
            }
            k @ (OpKind::Assign { .. } | OpKind::SetGhost { .. }) => assign(m, st, pid, k, obs)?,
            OpKind::Jump(t) => {
                pc = *t as usize;
                continue;
            }
            OpKind::JumpUnless { cond, target } => {
                if !eval(cond, &scope(m, st, pid))?.truthy() {
                    pc = *target as usize;
                    continue;
                }
            }
            other => unreachable!("the parser admits no {other:?} in an atomic block"),
        }
        pc += 1;
    }
    Ok(())
}

//! Redis commands as a replay sends them: one connection for every process (a replay sends
//! one command at a time), each server of the model a key prefix of its own on the one real
//! server, TTLs scaled with time.

use super::compare;
use crate::ir::{Model, RedisCmd, Value};
use crate::servers::{RedisConn, RedisReply};

/// The Redis side of a replay.
pub struct RedisSide {
    conn: RedisConn,
    /// `interlock_replay_<pid>_<n>:`; a model server's keys are `<prefix><server>:<key>`.
    prefix: String,
    scale: f64,
    /// Milliseconds added to every TTL sent: the model's key is still there at its deadline
    /// (RS-2), and the replay reaches a deadline a margin late.
    pad: u64,
}

impl RedisSide {
    /// Connects and clears the prefix (a replay of the same process number may have left
    /// keys behind).
    pub fn open(url: &str, prefix: String, scale: f64, pad: u64) -> Result<Self, String> {
        let mut conn = RedisConn::open(url)?;
        conn.flush_prefix(&prefix)?;
        Ok(RedisSide {
            conn,
            prefix,
            scale,
            pad,
        })
    }

    /// The key as the real server holds it.
    pub fn key(&self, m: &Model, server: u16, key: crate::ir::Sym) -> String {
        format!(
            "{}{}:{}",
            self.prefix,
            m.redis[server as usize].name,
            m.symbol(key)
        )
    }

    /// The words sent for `cmd` (the value a SET writes is `arg`), with the model's key.
    pub fn words(&self, m: &Model, server: u16, cmd: &RedisCmd, arg: Value) -> Vec<String> {
        let ms = |ticks: u32| {
            let v = (u64::from(ticks) * m.tick_ms) as f64 * self.scale;
            (v.round() as u64).max(1).to_string()
        };
        let ttl = |ticks: u32| self.ttl_ms(m, ticks).to_string();
        let k = |key| self.key(m, server, key);
        match cmd {
            RedisCmd::Set { key, nx, px, .. } => {
                let mut w = vec!["SET".into(), k(*key), value_text(m, arg)];
                if *nx {
                    w.push("NX".into());
                }
                if let Some(t) = px {
                    w.extend(["PX".into(), ttl(*t)]);
                }
                w
            }
            RedisCmd::Get { key } | RedisCmd::GetReplica { key, .. } => vec!["GET".into(), k(*key)],
            RedisCmd::Del { key } => vec!["DEL".into(), k(*key)],
            RedisCmd::Pexpire { key, ttl: t } => vec!["PEXPIRE".into(), k(*key), ttl(*t)],
            RedisCmd::Pttl { key } => vec!["PTTL".into(), k(*key)],
            RedisCmd::Incr { key } => vec!["INCR".into(), k(*key)],
            RedisCmd::Wait { replicas, timeout } => {
                vec!["WAIT".into(), replicas.to_string(), ms(*timeout)]
            }
        }
    }

    /// Sends `words`.
    pub fn send(&mut self, words: &[String]) -> Result<RedisReply, String> {
        self.conn.command(words)
    }

    /// The value of `key` on the real server now (`None`: absent).
    pub fn get(&mut self, key: &str) -> Result<Option<String>, String> {
        match self.conn.command(&["GET".into(), key.into()])? {
            RedisReply::Text(t) => Ok(Some(t)),
            RedisReply::Int(i) => Ok(Some(i.to_string())),
            _ => Ok(None),
        }
    }

    /// Sets the keys the model declares present at the start (`key K = V [ttl D]`), their
    /// TTLs scaled as the commands' are.
    pub fn seed(&mut self, m: &Model) -> Result<(), String> {
        for k in &m.keys {
            let mut w = vec![
                "SET".into(),
                self.key(m, k.server, k.key),
                value_text(m, k.value),
            ];
            if let Some(t) = k.ttl {
                w.extend(["PX".into(), self.ttl_ms(m, t).to_string()]);
            }
            self.send(&w)?;
        }
        Ok(())
    }

    /// A TTL as sent: scaled, and padded so that the key outlives the replay's lateness.
    fn ttl_ms(&self, m: &Model, ticks: u32) -> u64 {
        let v = (u64::from(ticks) * m.tick_ms) as f64 * self.scale;
        (v.round() as u64).max(1) + self.pad
    }

    /// The padding every TTL sent carries, in milliseconds.
    pub fn pad(&self) -> u64 {
        self.pad
    }

    /// A model server restarts without persistence: its keys on the real server go; returns
    /// how many there were.
    pub fn forget(&mut self, m: &Model, server: u16) -> Result<u64, String> {
        let prefix = format!("{}{}:", self.prefix, m.redis[server as usize].name);
        self.conn.flush_prefix(&prefix)
    }

    /// Removes the replay's keys.
    pub fn clear(&mut self) {
        let _ = self.conn.flush_prefix(&self.prefix);
    }

    /// How far a PTTL may differ, in milliseconds: the replay's own time between steps.
    pub fn tolerance(&self) -> i64 {
        (50.0 * self.scale.max(1.0)) as i64 + 30
    }
}

/// A value as a Redis string: a process as its name (a lock token).
pub fn value_text(m: &Model, v: Value) -> String {
    match compare::cell(m, v) {
        crate::servers::Cell::Null => String::new(),
        c => c.to_string(),
    }
}

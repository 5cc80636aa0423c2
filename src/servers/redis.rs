//! Redis through the synchronous `redis` client, with no TLS.

use std::time::Duration;

use ::redis::{Client, Cmd, Connection, ConnectionLike, RedisError, Value};

use super::ServerError;

/// How long connecting, sending a command and waiting for its reply may each take.
const TIMEOUT: Duration = Duration::from_secs(30);

/// A reply from Redis, in the simple form `redis-cli` prints.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RedisReply {
    /// A nil reply (`(nil)`): a missing key, a `SET ... NX` that did not set.
    Nil,
    /// An integer reply (RESP3 booleans too, as 1 and 0).
    Int(i64),
    /// A bulk or status reply (`OK`), or a RESP3 double, big number or verbatim string, as text.
    Text(String),
    /// An array, set or map reply (a map flattened into key, value, key, value, ...).
    List(Vec<RedisReply>),
    /// An error reply: `code` is its first word (`ERR`, `WRONGTYPE`, `READONLY`).
    Error(ServerError),
}

/// One connection to a Redis server.
pub struct RedisConn {
    conn: Connection,
}

impl std::fmt::Debug for RedisConn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisConn").finish_non_exhaustive()
    }
}

fn server_error(e: &RedisError) -> Option<ServerError> {
    let code = e.code()?;
    Some(ServerError {
        code: code.to_owned(),
        message: e.detail().unwrap_or_default().to_owned(),
    })
}

fn reply(value: Value) -> RedisReply {
    match value {
        Value::Nil => RedisReply::Nil,
        Value::Int(n) => RedisReply::Int(n),
        Value::Boolean(b) => RedisReply::Int(i64::from(b)),
        Value::BulkString(bytes) => RedisReply::Text(String::from_utf8_lossy(&bytes).into_owned()),
        Value::SimpleString(text) | Value::VerbatimString { text, .. } => RedisReply::Text(text),
        Value::Okay => RedisReply::Text("OK".to_owned()),
        Value::Double(x) => RedisReply::Text(x.to_string()),
        Value::Array(items) | Value::Set(items) | Value::Push { data: items, .. } => {
            RedisReply::List(items.into_iter().map(reply).collect())
        }
        Value::Map(pairs) => RedisReply::List(
            pairs
                .into_iter()
                .flat_map(|(k, v)| [reply(k), reply(v)])
                .collect(),
        ),
        Value::Attribute { data, .. } => reply(*data),
        Value::ServerError(e) => RedisReply::Error(ServerError {
            code: e.code().to_owned(),
            message: e.details().unwrap_or_default().to_owned(),
        }),
        other => RedisReply::Text(format!("{other:?}")),
    }
}

/// `prefix` with the characters that `SCAN ... MATCH` reads as a pattern escaped.
fn glob_escape(prefix: &str) -> String {
    let mut pattern = String::with_capacity(prefix.len() + 1);
    for c in prefix.chars() {
        if matches!(c, '*' | '?' | '[' | ']' | '\\') {
            pattern.push('\\');
        }
        pattern.push(c);
    }
    pattern.push('*');
    pattern
}

impl RedisConn {
    /// Connects to the server at `url` (`redis://127.0.0.1:port/`). Connecting, and each
    /// command's sending and reply, may take up to 30 s before they fail.
    ///
    /// # Errors
    /// A malformed URL or a failed connection.
    pub fn open(url: &str) -> Result<RedisConn, String> {
        let fail = |e: RedisError| format!("connecting to Redis at {url}: {e}");
        let conn = Client::open(url)
            .map_err(fail)?
            .get_connection_with_timeout(TIMEOUT)
            .map_err(fail)?;
        conn.set_read_timeout(Some(TIMEOUT)).map_err(fail)?;
        conn.set_write_timeout(Some(TIMEOUT)).map_err(fail)?;
        Ok(RedisConn { conn })
    }

    /// Runs one command, given as words (`["SET", "k", "v", "NX", "PX", "3000"]`). An error
    /// reply is [`RedisReply::Error`].
    ///
    /// # Errors
    /// No words, or a failed connection.
    pub fn command(&mut self, words: &[String]) -> Result<RedisReply, String> {
        let (name, args) = words
            .split_first()
            .ok_or_else(|| "a Redis command needs a name".to_owned())?;
        let mut cmd = ::redis::cmd(name);
        for arg in args {
            cmd.arg(arg.as_str());
        }
        self.send(&cmd)
    }

    fn send(&mut self, cmd: &Cmd) -> Result<RedisReply, String> {
        match self.conn.req_command(cmd) {
            Ok(value) => Ok(reply(value)),
            Err(e) => match server_error(&e) {
                Some(error) => Ok(RedisReply::Error(error)),
                None => Err(format!("Redis connection: {e}")),
            },
        }
    }

    /// Runs one command that must not fail.
    fn send_ok(&mut self, cmd: &Cmd) -> Result<RedisReply, String> {
        match self.send(cmd)? {
            RedisReply::Error(e) => Err(format!("Redis: {e}")),
            reply => Ok(reply),
        }
    }

    /// Deletes every key that starts with `prefix` (`SCAN ... MATCH` and `DEL`); returns how
    /// many `DEL` removed (an expired key not yet evicted counts none).
    ///
    /// # Errors
    /// An empty prefix (which would be every key), a failed connection or command.
    pub fn flush_prefix(&mut self, prefix: &str) -> Result<u64, String> {
        if prefix.is_empty() {
            return Err("flush_prefix: refusing an empty prefix (every key)".to_owned());
        }
        let pattern = glob_escape(prefix);
        let mut cursor = "0".to_owned();
        let mut removed = 0;
        loop {
            let mut scan = ::redis::cmd("SCAN");
            scan.arg(cursor.as_str())
                .arg("MATCH")
                .arg(pattern.as_str())
                .arg("COUNT")
                .arg(1000);
            let RedisReply::List(parts) = self.send_ok(&scan)? else {
                return Err("SCAN: not an array reply".to_owned());
            };
            let [RedisReply::Text(next), RedisReply::List(keys)] = parts.as_slice() else {
                return Err(format!("SCAN: unexpected reply {parts:?}"));
            };
            let mut del = ::redis::cmd("DEL");
            let mut any = false;
            for key in keys {
                if let RedisReply::Text(key) = key {
                    if key.starts_with(prefix) {
                        del.arg(key.as_str());
                        any = true;
                    }
                }
            }
            if any {
                if let RedisReply::Int(n) = self.send_ok(&del)? {
                    removed += u64::try_from(n).unwrap_or(0);
                }
            }
            if next == "0" {
                return Ok(removed);
            }
            cursor.clone_from(next);
        }
    }

    /// `REPLICAOF NO ONE`: a replica becomes a primary.
    ///
    /// # Errors
    /// A failed connection or command.
    pub fn replicaof_no_one(&mut self) -> Result<(), String> {
        let mut cmd = ::redis::cmd("REPLICAOF");
        cmd.arg("NO").arg("ONE");
        self.send_ok(&cmd).map(drop)
    }

    /// `REPLICAOF host port`: the server becomes a replica of that primary.
    ///
    /// # Errors
    /// A failed connection or command.
    pub fn replicaof(&mut self, host: &str, port: u16) -> Result<(), String> {
        let mut cmd = ::redis::cmd("REPLICAOF");
        cmd.arg(host).arg(port);
        self.send_ok(&cmd).map(drop)
    }
}

#[cfg(test)]
mod tests {
    use super::glob_escape;

    #[test]
    fn prefixes_are_matched_literally() {
        assert_eq!(glob_escape("a:b"), "a:b*");
        assert_eq!(glob_escape("x*[?]\\"), "x\\*\\[\\?\\]\\\\*");
    }
}

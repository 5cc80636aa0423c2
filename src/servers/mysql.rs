//! MySQL and MariaDB through the synchronous `mysql` client, with no TLS and the text
//! protocol: every value arrives as text.

use std::time::Duration;

use ::mysql::prelude::Queryable;
use ::mysql::{Conn, Opts, OptsBuilder, Value};

use super::{counts_rows, Cell, Outcome, ServerError};

/// Error numbers that mean the connection is gone: `ER_CONNECTION_KILLED` (MariaDB), the
/// server shutting down, and the client's "server has gone away" and "lost connection".
const CONNECTION_ERRORS: [u16; 4] = [1927, 1053, 2006, 2013];

/// The options for the server with no database selected and for the scratch database `name`.
pub(super) fn opts(url: &str, name: &str) -> Result<(Opts, Opts), String> {
    let opts = Opts::from_url(url).map_err(|e| format!("MySQL URL {url:?}: {e}"))?;
    let server = OptsBuilder::from_opts(opts)
        .db_name(None::<String>)
        // The URL's address, not the server's Unix socket that the client would switch to.
        .prefer_socket(false)
        // No `CLIENT_FOUND_ROWS`: an UPDATE's count is the rows it changed, the protocol's
        // default and what the simulation models (MY-24, docs/semantics.md).
        .tcp_connect_timeout(Some(Duration::from_secs(10)));
    let scratch = server.clone().db_name(Some(name));
    Ok((server.into(), scratch.into()))
}

/// A new connection.
pub(super) fn connect(opts: &Opts) -> Result<Conn, String> {
    Conn::new(opts.clone()).map_err(|e| {
        format!(
            "connecting to MySQL at {}:{}: {e}",
            opts.get_ip_or_hostname(),
            opts.get_tcp_port()
        )
    })
}

/// The error the server raised, or the connection's failure.
fn classify(e: ::mysql::Error) -> Result<ServerError, String> {
    match e {
        ::mysql::Error::MySqlError(e) if !CONNECTION_ERRORS.contains(&e.code) => Ok(ServerError {
            code: e.code.to_string(),
            message: e.message,
        }),
        e => Err(format!("MySQL connection: {e}")),
    }
}

fn cell(value: Value) -> Cell {
    match value {
        Value::NULL => Cell::Null,
        Value::Bytes(bytes) => Cell::from_text(&String::from_utf8_lossy(&bytes)),
        Value::Int(n) => Cell::Int(n),
        Value::UInt(n) => i64::try_from(n).map_or_else(|_| Cell::Text(n.to_string()), Cell::Int),
        other => Cell::Text(other.as_sql(true)),
    }
}

/// Runs one statement with the text protocol.
pub(super) fn run(conn: &mut Conn, sql: &str) -> Result<Outcome, String> {
    let mut result = match conn.query_iter(sql) {
        Ok(result) => result,
        Err(e) => return classify(e).map(Outcome::failed),
    };
    let mut rows: Option<Vec<Vec<Cell>>> = None;
    let mut affected = 0;
    while let Some(set) = result.iter() {
        affected = set.affected_rows();
        let has_columns = !set.columns().as_ref().is_empty();
        let mut set_rows = Vec::new();
        for row in set {
            match row {
                Ok(row) => set_rows.push(row.unwrap().into_iter().map(cell).collect()),
                Err(e) => return classify(e).map(Outcome::failed),
            }
        }
        if has_columns {
            rows = Some(set_rows);
        }
    }
    Ok(Outcome {
        rows,
        affected: counts_rows(sql).then_some(affected),
        error: None,
    })
}

/// The first cell of the first row of a query that must succeed.
fn scalar(conn: &mut Conn, sql: &str) -> Result<Option<Cell>, String> {
    let outcome = run(conn, sql)?;
    if let Some(error) = outcome.error {
        return Err(format!("{sql}: {error}"));
    }
    Ok(outcome
        .rows
        .and_then(|rows| rows.into_iter().next())
        .and_then(|row| row.into_iter().next()))
}

/// Runs a statement that must succeed.
fn ok(conn: &mut Conn, sql: &str) -> Result<(), String> {
    scalar(conn, sql).map(drop)
}

/// Whether connection `id`'s statement waits for a lock: an InnoDB row or table lock (its
/// transaction is in `LOCK WAIT`), or a metadata, table or global lock (the process list's
/// state `Waiting for ... lock`).
///
/// The InnoDB wait is read from `SHOW ENGINE INNODB STATUS`, which the server writes afresh
/// for each call, and not from `information_schema.INNODB_TRX`: InnoDB refreshes that table
/// only after 100 ms in which no one has read it, so polling it every few milliseconds would
/// read the same stale copy for ever.
pub(super) fn waits(conn: &mut Conn, id: u64) -> Result<bool, String> {
    if innodb_lock_wait(&innodb_status(conn)?, id) {
        return Ok(true);
    }
    let sql = format!(
        "SELECT count(*) FROM information_schema.PROCESSLIST \
         WHERE ID = {id} AND STATE LIKE 'Waiting for % lock'"
    );
    Ok(scalar(conn, &sql)? != Some(Cell::Int(0)))
}

/// The text of `SHOW ENGINE INNODB STATUS` (its `Status` column).
pub(super) fn innodb_status(conn: &mut Conn) -> Result<String, String> {
    let status = run(conn, "SHOW ENGINE INNODB STATUS")?;
    if let Some(error) = status.error {
        return Err(format!("SHOW ENGINE INNODB STATUS: {error}"));
    }
    Ok(status
        .rows
        .into_iter()
        .flatten()
        .find_map(|row| match row.into_iter().nth(2) {
            Some(Cell::Text(text)) => Some(text),
            _ => None,
        })
        .unwrap_or_default())
}

/// The connection ids of every transaction the InnoDB status `text` lists as waiting for a
/// lock (a `LOCK WAIT` line in its block, before its thread id line).
pub(super) fn innodb_lock_waiters(text: &str) -> Vec<u64> {
    let mut lock_wait = false;
    let mut out = Vec::new();
    for line in text.lines() {
        if line.starts_with("---TRANSACTION ") {
            lock_wait = false;
        } else if line.starts_with("LOCK WAIT ") {
            lock_wait = true;
        } else if lock_wait {
            let rest = line
                .strip_prefix("MySQL thread id ")
                .or_else(|| line.strip_prefix("MariaDB thread id "));
            if let Some(id) = rest.and_then(|r| r.split(',').next()?.trim().parse().ok()) {
                out.push(id);
                lock_wait = false;
            }
        }
    }
    out
}

/// Whether the InnoDB status `text` lists connection `id`'s transaction as waiting for a lock:
/// in the list of transactions, the block of the transaction whose `MySQL thread id` (MariaDB:
/// `MariaDB thread id`) is `id` has a `LOCK WAIT` line before that one (the statement's text
/// comes after it).
fn innodb_lock_wait(text: &str, id: u64) -> bool {
    let thread = format!(" thread id {id},");
    let mut lock_wait = false;
    for line in text.lines() {
        if line.starts_with("---TRANSACTION ") {
            lock_wait = false;
        } else if line.starts_with("LOCK WAIT ") {
            lock_wait = true;
        } else if (line.starts_with("MySQL thread id ") || line.starts_with("MariaDB thread id "))
            && line.contains(&thread)
        {
            return lock_wait;
        }
    }
    false
}

/// Ends connection `id`; one that is already gone is no error.
pub(super) fn kill(conn: &mut Conn, id: u64) -> Result<(), String> {
    match run(conn, &format!("KILL {id}"))?.error {
        // ER_NO_SUCH_THREAD
        Some(e) if e.code != "1094" => Err(format!("KILL {id}: {e}")),
        _ => Ok(()),
    }
}

/// Whether connection `id` is still there.
pub(super) fn has_connection(conn: &mut Conn, id: u64) -> Result<bool, String> {
    let sql = format!("SELECT count(*) FROM information_schema.PROCESSLIST WHERE ID = {id}");
    Ok(scalar(conn, &sql)? != Some(Cell::Int(0)))
}

/// Drops database `name` if it exists (ending the connections to it), and creates it.
pub(super) fn recreate(conn: &mut Conn, name: &str) -> Result<(), String> {
    drop_database(conn, name)?;
    ok(conn, &format!("CREATE DATABASE `{name}`"))
}

/// Ends the connections to database `name` and drops it.
pub(super) fn drop_database(conn: &mut Conn, name: &str) -> Result<(), String> {
    let ids = run(
        conn,
        &format!(
            "SELECT ID FROM information_schema.PROCESSLIST \
             WHERE DB = '{name}' AND ID <> CONNECTION_ID()"
        ),
    )?;
    for row in ids.rows.unwrap_or_default() {
        if let Some(Cell::Int(id)) = row.first() {
            kill(conn, id.unsigned_abs())?;
        }
    }
    // Not a year's wait for a metadata lock that some connection still holds.
    ok(conn, "SET SESSION lock_wait_timeout = 10")?;
    ok(conn, &format!("DROP DATABASE IF EXISTS `{name}`"))
}

#[cfg(test)]
mod tests {
    use super::{innodb_lock_wait, innodb_lock_waiters};

    #[test]
    fn lock_waits_are_read_from_the_innodb_status() {
        let status = "\
LIST OF TRANSACTIONS FOR EACH SESSION:
---TRANSACTION 120, ACTIVE 0 sec starting index read
mysql tables in use 1, locked 1
LOCK WAIT 2 lock struct(s), heap size 1128, 1 row lock(s)
MariaDB thread id 55, OS thread handle 140595456317120, query id 16665 localhost root Updating
update t set v=3 where id=1
------- TRX HAS BEEN WAITING 498194 us FOR THIS LOCK TO BE GRANTED:
---TRANSACTION 119, ACTIVE 1 sec
2 lock struct(s), heap size 1128, 1 row lock(s), undo log entries 1
MySQL thread id 5, OS thread handle 140595455395520, query id 16663 localhost root
select 'LOCK WAIT 1'
--------
";
        assert!(innodb_lock_wait(status, 55));
        assert!(!innodb_lock_wait(status, 5));
        assert!(!innodb_lock_wait(status, 54));
        assert_eq!(innodb_lock_waiters(status), vec![55]);
    }
}

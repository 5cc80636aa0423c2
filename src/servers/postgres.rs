//! PostgreSQL through the synchronous `postgres` client, with no TLS and the simple query
//! protocol: every value arrives as text.

use std::time::Duration;

use ::postgres::{Client, Config, NoTls, SimpleQueryMessage};

use super::{counts_rows, Cell, Outcome, ServerError};

/// The configurations of the URL's database and of the scratch database `name`.
pub(super) fn configs(url: &str, name: &str) -> Result<(Config, Config), String> {
    let mut server: Config = url
        .parse()
        .map_err(|e| format!("PostgreSQL URL {url:?}: {e}"))?;
    server
        .connect_timeout(Duration::from_secs(10))
        .application_name("interlock");
    if server.get_dbname().is_none() {
        server.dbname("postgres");
    }
    let mut scratch = server.clone();
    scratch.dbname(name);
    Ok((server, scratch))
}

/// A new connection.
pub(super) fn connect(config: &Config) -> Result<Client, String> {
    config.connect(NoTls).map_err(|e| {
        format!(
            "connecting to PostgreSQL at {:?}: {e}",
            config.get_hosts().first()
        )
    })
}

/// Runs one statement with the simple query protocol.
pub(super) fn run(client: &mut Client, sql: &str) -> Result<Outcome, String> {
    let messages = match client.simple_query(sql) {
        Ok(messages) => messages,
        Err(e) => {
            return match e.as_db_error() {
                // An error the server raised on a connection that is still open; a FATAL one
                // (the backend terminated) closes it, which is a connection failure.
                Some(db) if !client.is_closed() => Ok(Outcome::failed(ServerError {
                    code: db.code().code().to_owned(),
                    message: db.message().to_owned(),
                })),
                _ => Err(format!("PostgreSQL connection: {e}")),
            };
        }
    };
    let mut rows: Option<Vec<Vec<Cell>>> = None;
    let mut count = 0;
    for message in messages {
        match message {
            SimpleQueryMessage::RowDescription(_) => rows = Some(Vec::new()),
            SimpleQueryMessage::Row(row) => {
                let cells = (0..row.len())
                    .map(|i| row.get(i).map_or(Cell::Null, Cell::from_text))
                    .collect();
                rows.get_or_insert_with(Vec::new).push(cells);
            }
            SimpleQueryMessage::CommandComplete(n) => count = n,
            _ => {}
        }
    }
    Ok(Outcome {
        rows,
        affected: counts_rows(sql).then_some(count),
        error: None,
    })
}

/// The first cell of the first row of a query that must succeed.
fn scalar(client: &mut Client, sql: &str) -> Result<Option<Cell>, String> {
    let outcome = run(client, sql)?;
    if let Some(error) = outcome.error {
        return Err(format!("{sql}: {error}"));
    }
    Ok(outcome
        .rows
        .and_then(|rows| rows.into_iter().next())
        .and_then(|row| row.into_iter().next()))
}

/// Runs a statement that must succeed.
fn ok(client: &mut Client, sql: &str) -> Result<(), String> {
    match run(client, sql)?.error {
        Some(error) => Err(format!("{sql}: {error}")),
        None => Ok(()),
    }
}

/// This connection's backend pid.
pub(super) fn backend_pid(client: &mut Client) -> Result<u64, String> {
    match scalar(client, "SELECT pg_backend_pid()")? {
        Some(Cell::Int(pid)) => u64::try_from(pid).map_err(|e| e.to_string()),
        other => Err(format!("pg_backend_pid() returned {other:?}")),
    }
}

/// Whether backend `pid` waits for a heavyweight lock (a row, a table, an advisory lock, a
/// transaction id).
pub(super) fn waits(client: &mut Client, pid: u64) -> Result<bool, String> {
    let sql = format!("SELECT wait_event_type = 'Lock' FROM pg_stat_activity WHERE pid = {pid}");
    Ok(scalar(client, &sql)? == Some(Cell::Text("t".to_owned())))
}

/// Ends backend `pid`.
pub(super) fn terminate(client: &mut Client, pid: u64) -> Result<(), String> {
    scalar(client, &format!("SELECT pg_terminate_backend({pid})")).map(drop)
}

/// Whether backend `pid` is still there.
pub(super) fn has_backend(client: &mut Client, pid: u64) -> Result<bool, String> {
    let sql = format!("SELECT count(*) FROM pg_stat_activity WHERE pid = {pid}");
    Ok(scalar(client, &sql)? != Some(Cell::Int(0)))
}

/// Drops database `name` if it exists (ending the connections to it), and creates it.
pub(super) fn recreate(client: &mut Client, name: &str) -> Result<(), String> {
    drop_database(client, name)?;
    ok(client, &format!("CREATE DATABASE \"{name}\""))
}

/// Ends the connections to database `name` and drops it.
pub(super) fn drop_database(client: &mut Client, name: &str) -> Result<(), String> {
    // `DROP DATABASE ... WITH (FORCE)` would need PostgreSQL 13; DROP DATABASE itself waits a
    // few seconds for the terminated backends to exit.
    scalar(
        client,
        &format!(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity \
             WHERE datname = '{name}' AND pid <> pg_backend_pid()"
        ),
    )?;
    ok(client, &format!("DROP DATABASE IF EXISTS \"{name}\""))
}

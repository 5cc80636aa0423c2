//! Clients of real PostgreSQL, MySQL/MariaDB and Redis servers (feature `servers`).
//!
//! A synchronous layer, with no TLS, for driving an interleaving statement by statement on real
//! servers (`interlock replay`) and for the tests that need servers:
//!
//! - [`Scratch`]: a fresh database on a PostgreSQL or MySQL/MariaDB server, with an admin
//!   connection for setup SQL, dropped (best effort) when the `Scratch` is dropped;
//! - [`Session`]: one more connection to that database, owned by a thread of its own, so that a
//!   statement that waits for a lock can be left waiting while other sessions go on; whether
//!   it waits is asked of the server itself;
//! - [`RedisConn`]: one connection to a Redis server, one command at a time.
//!
//! Every value a SQL server returns is read as text (PostgreSQL's simple query protocol,
//! MySQL's text protocol) and then normalised into a [`Cell`]: text that is an integer in its
//! canonical decimal form becomes [`Cell::Int`], so results compare the same across servers.
//!
//! [`Scratch`]: crate::servers::Scratch
//! [`Session`]: crate::servers::Session
//! [`RedisConn`]: crate::servers::RedisConn
//! [`Cell`]: crate::servers::Cell
//! [`Cell::Int`]: crate::servers::Cell::Int

mod client;
mod mysql;
mod postgres;
mod redis;
mod session;

use std::fmt;

pub use self::client::{Client, Watcher};
pub use self::redis::{RedisConn, RedisReply};
pub use self::session::Session;

/// Which SQL server a [`Scratch`] database is on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kind {
    /// PostgreSQL.
    Postgres,
    /// MySQL or MariaDB (InnoDB).
    Mysql,
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Kind::Postgres => "PostgreSQL",
            Kind::Mysql => "MySQL",
        })
    }
}

/// One value a server returned: integers as [`Cell::Int`], everything else as text.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Cell {
    /// SQL `NULL`.
    Null,
    /// A value whose text is a canonical decimal integer that fits an `i64` (`-?[0-9]+` with no
    /// leading zeros, no `-0`): numbers of integer columns, and also text such as `'12'`.
    Int(i64),
    /// Any other value, as the server wrote it in text (`'007'`, `1.50`, `t`, dates, ...).
    Text(String),
}

impl Cell {
    /// The cell for a non-null value the server sent as text.
    #[must_use]
    pub fn from_text(text: &str) -> Cell {
        match text.parse::<i64>() {
            Ok(n) if n.to_string() == text => Cell::Int(n),
            _ => Cell::Text(text.to_owned()),
        }
    }
}

impl fmt::Display for Cell {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Cell::Null => f.write_str("NULL"),
            Cell::Int(n) => write!(f, "{n}"),
            Cell::Text(s) => f.write_str(s),
        }
    }
}

/// An error the server raised for a statement or command (the connection is still usable).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ServerError {
    /// PostgreSQL: the SQLSTATE (`"40001"` serialization failure, `"55P03"` lock not available,
    /// `"40P01"` deadlock). MySQL/MariaDB: the error number (`"1213"` deadlock, `"1205"` lock
    /// wait timeout, `"1020"` record changed, `"1062"` duplicate key). Redis: the error's first
    /// word (`"ERR"`, `"WRONGTYPE"`, `"READONLY"`).
    pub code: String,
    /// The server's message.
    pub message: String,
}

impl fmt::Display for ServerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.code, self.message)
    }
}

/// What one SQL statement did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Outcome {
    /// The rows, for a statement that returned a result set (`SELECT`, `... RETURNING`, `SHOW`),
    /// even an empty one; `None` for any other statement.
    pub rows: Option<Vec<Vec<Cell>>>,
    /// The row count, for a statement whose first keyword is `INSERT`, `UPDATE` or `DELETE`:
    /// PostgreSQL counts the rows an `UPDATE` matched, MySQL/MariaDB those it changed (the
    /// protocol's default, without `CLIENT_FOUND_ROWS`: PG-32, MY-24); `None` for any other
    /// statement, and when the statement failed.
    pub affected: Option<u64>,
    /// The error the server raised, if it did.
    pub error: Option<ServerError>,
}

impl Outcome {
    /// An outcome that is only the server's error.
    fn failed(error: ServerError) -> Outcome {
        Outcome {
            error: Some(error),
            ..Outcome::default()
        }
    }
}

/// What [`Session::step`] saw.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Step {
    /// The server answered.
    Done(Outcome),
    /// The statement waits: the server says it waits for a lock, or it had not answered within
    /// the step's limit. [`Session::resume`] collects its answer.
    Waiting,
}

/// Whether a statement's count of rows is its [`Outcome::affected`]: its first keyword,
/// after white space and comments, is `INSERT`, `UPDATE` or `DELETE`.
fn counts_rows(sql: &str) -> bool {
    let keyword = first_keyword(sql);
    ["INSERT", "UPDATE", "DELETE"]
        .iter()
        .any(|k| keyword.eq_ignore_ascii_case(k))
}

/// The statement's first word, after white space, `--` and `/* */` comments and `(`.
fn first_keyword(sql: &str) -> &str {
    let mut rest = sql;
    loop {
        rest = rest.trim_start_matches(|c: char| c.is_whitespace() || c == '(');
        if let Some(after) = rest.strip_prefix("--") {
            rest = after.find('\n').map_or("", |i| &after[i + 1..]);
        } else if let Some(after) = rest.strip_prefix("/*") {
            rest = after.find("*/").map_or("", |i| &after[i + 2..]);
        } else {
            break;
        }
    }
    let end = rest
        .find(|c: char| !c.is_ascii_alphabetic())
        .unwrap_or(rest.len());
    &rest[..end]
}

/// Checks a scratch database's name: `[a-z0-9_]`, 1 to 63 characters.
fn check_name(name: &str) -> Result<(), String> {
    if name.is_empty()
        || name.len() > 63
        || !name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
    {
        return Err(format!(
            "scratch database name {name:?}: want 1 to 63 characters of [a-z0-9_]"
        ));
    }
    Ok(())
}

/// Where a kind of server is, and how to reach its scratch database.
enum Target {
    Postgres {
        /// The URL's database: the one `CREATE DATABASE` and `DROP DATABASE` run in.
        server: Box<::postgres::Config>,
        /// The scratch database.
        scratch: Box<::postgres::Config>,
    },
    Mysql {
        /// No database selected.
        server: ::mysql::Opts,
        /// The scratch database.
        scratch: ::mysql::Opts,
    },
}

impl Target {
    fn kind(&self) -> Kind {
        match self {
            Target::Postgres { .. } => Kind::Postgres,
            Target::Mysql { .. } => Kind::Mysql,
        }
    }

    /// A new connection to the scratch database.
    fn connect(&self) -> Result<Conn, String> {
        match self {
            Target::Postgres { scratch, .. } => postgres::connect(scratch).map(Conn::postgres),
            Target::Mysql { scratch, .. } => mysql::connect(scratch).map(Conn::mysql),
        }
    }
}

/// One connection to a SQL server, of either kind.
enum Conn {
    Postgres(Box<::postgres::Client>),
    Mysql(Box<::mysql::Conn>),
}

impl Conn {
    fn postgres(client: ::postgres::Client) -> Conn {
        Conn::Postgres(Box::new(client))
    }

    fn mysql(conn: ::mysql::Conn) -> Conn {
        Conn::Mysql(Box::new(conn))
    }

    /// Runs one statement: `Err` only when the connection failed.
    fn run(&mut self, sql: &str) -> Result<Outcome, String> {
        match self {
            Conn::Postgres(client) => postgres::run(client, sql),
            Conn::Mysql(conn) => mysql::run(conn, sql),
        }
    }

    /// Runs one statement that must succeed.
    fn run_ok(&mut self, sql: &str) -> Result<Outcome, String> {
        let outcome = self.run(sql)?;
        match outcome.error {
            Some(error) => Err(format!("{sql}: {error}")),
            None => Ok(outcome),
        }
    }

    /// The server's id of this connection: the backend's pid, the connection id.
    fn id(&mut self) -> Result<u64, String> {
        match self {
            Conn::Postgres(client) => postgres::backend_pid(client),
            Conn::Mysql(conn) => Ok(u64::from(conn.connection_id())),
        }
    }

    /// Whether the server says connection `id`'s statement waits for a lock.
    fn waits(&mut self, id: u64) -> Result<bool, String> {
        match self {
            Conn::Postgres(client) => postgres::waits(client, id),
            Conn::Mysql(conn) => mysql::waits(conn, id),
        }
    }

    /// Has the server end connection `id` (rolling back its transaction).
    fn kill(&mut self, id: u64) -> Result<(), String> {
        match self {
            Conn::Postgres(client) => postgres::terminate(client, id),
            Conn::Mysql(conn) => mysql::kill(conn, id),
        }
    }

    /// Whether the server still has connection `id`.
    fn has(&mut self, id: u64) -> Result<bool, String> {
        match self {
            Conn::Postgres(client) => postgres::has_backend(client, id),
            Conn::Mysql(conn) => mysql::has_connection(conn, id),
        }
    }

    /// The server's version string.
    fn version(&mut self) -> Result<String, String> {
        let outcome = self.run_ok("SELECT version()")?;
        match outcome.rows.as_deref() {
            Some([row, ..]) if !row.is_empty() => Ok(row[0].to_string()),
            _ => Err("SELECT version() returned no row".to_owned()),
        }
    }
}

/// A scratch database on a PostgreSQL or MySQL/MariaDB server, with an admin connection to it.
///
/// Dropping it closes the admin connection, ends any connection still using the database and
/// drops the database, ignoring failures.
pub struct Scratch {
    target: Target,
    name: String,
    version: String,
    admin: Option<Conn>,
}

impl Scratch {
    /// Connects to the server at `url` (`postgres://user@127.0.0.1:port/db`,
    /// `mysql://root@127.0.0.1:port/`), creates a fresh database named `name` (dropping it
    /// first if it exists; names are `[a-z0-9_]`), and connects an admin connection to it.
    ///
    /// # Errors
    /// A malformed URL or name, a failed connection, or a server that refused to create the
    /// database.
    pub fn create(kind: Kind, url: &str, name: &str) -> Result<Scratch, String> {
        check_name(name)?;
        let target = match kind {
            Kind::Postgres => {
                let (server, scratch) = postgres::configs(url, name)?;
                postgres::recreate(&mut postgres::connect(&server)?, name)?;
                Target::Postgres {
                    server: Box::new(server),
                    scratch: Box::new(scratch),
                }
            }
            Kind::Mysql => {
                let (server, scratch) = mysql::opts(url, name)?;
                mysql::recreate(&mut mysql::connect(&server)?, name)?;
                Target::Mysql { server, scratch }
            }
        };
        let mut admin = target.connect()?;
        let version = admin.version()?;
        Ok(Scratch {
            target,
            name: name.to_owned(),
            version,
            admin: Some(admin),
        })
    }

    /// Which kind of server the database is on.
    #[must_use]
    pub fn kind(&self) -> Kind {
        self.target.kind()
    }

    /// The scratch database's name.
    #[must_use]
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The server's version string (`SELECT version()`).
    #[must_use]
    pub fn version(&self) -> String {
        self.version.clone()
    }

    /// Runs setup SQL (one statement) on the admin connection.
    ///
    /// # Errors
    /// Only a failed connection: an error the server raised is the outcome's
    /// [`error`](Outcome::error).
    pub fn execute(&mut self, sql: &str) -> Result<Outcome, String> {
        self.admin
            .as_mut()
            .ok_or_else(|| "the admin connection is closed".to_owned())?
            .run(sql)
    }

    /// Opens a session: its own connection to the scratch database, on its own thread, with a
    /// second connection of its own to watch it from (see [`Session`]). Runs each of
    /// `settings` (`"SET lock_timeout = '2s'"`, `"SET SESSION TRANSACTION ISOLATION LEVEL
    /// REPEATABLE READ"`) on it first.
    ///
    /// # Errors
    /// A failed connection, or a setting the server refused.
    pub fn session(&mut self, settings: &[String]) -> Result<Session, String> {
        let mut conn = self.target.connect()?;
        for setting in settings {
            conn.run_ok(setting)?;
        }
        let id = conn.id()?;
        let monitor = self.target.connect()?;
        Session::start(conn, id, monitor)
    }
}

impl Scratch {
    /// Opens a plain connection to the scratch database for one load client, with each of
    /// `settings` run on it first.
    ///
    /// # Errors
    /// A failed connection, or a setting the server refused.
    pub fn client(&self, settings: &[String]) -> Result<Client, String> {
        let mut conn = self.target.connect()?;
        for setting in settings {
            conn.run_ok(setting)?;
        }
        Client::new(conn)
    }

    /// Opens a connection that watches the others (see [`Watcher`]).
    ///
    /// # Errors
    /// A failed connection.
    pub fn watcher(&self) -> Result<Watcher, String> {
        Ok(Watcher::new(self.target.connect()?, self.kind()))
    }
}

impl fmt::Debug for Scratch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Scratch")
            .field("kind", &self.kind())
            .field("name", &self.name)
            .field("version", &self.version)
            .finish_non_exhaustive()
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        drop(self.admin.take());
        let _ = match &self.target {
            Target::Postgres { server, .. } => postgres::connect(server)
                .and_then(|mut client| postgres::drop_database(&mut client, &self.name)),
            Target::Mysql { server, .. } => mysql::connect(server)
                .and_then(|mut conn| mysql::drop_database(&mut conn, &self.name)),
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers_in_canonical_form_become_ints() {
        assert_eq!(Cell::from_text("0"), Cell::Int(0));
        assert_eq!(Cell::from_text("-12"), Cell::Int(-12));
        assert_eq!(Cell::from_text("9223372036854775807"), Cell::Int(i64::MAX));
        for text in [
            "007",
            "-0",
            "+1",
            "1.0",
            " 1",
            "",
            "9223372036854775808",
            "t",
        ] {
            assert_eq!(
                Cell::from_text(text),
                Cell::Text(text.to_owned()),
                "{text:?}"
            );
        }
    }

    #[test]
    fn the_first_keyword_decides_whether_rows_are_counted() {
        assert!(counts_rows("UPDATE t SET v = 1"));
        assert!(counts_rows("  -- note\n /* x */ insert into t values (1)"));
        assert!(counts_rows("delete from t"));
        assert!(!counts_rows("SELECT 1"));
        assert!(!counts_rows("BEGIN"));
        assert!(!counts_rows("-- UPDATE"));
        assert_eq!(first_keyword("(SELECT 1)"), "SELECT");
    }

    #[test]
    fn clients_can_move_to_other_threads() {
        fn send<T: Send>() {}
        send::<Scratch>();
        send::<Session>();
        send::<RedisConn>();
    }

    #[test]
    fn scratch_names_are_checked() {
        assert!(check_name("it_pg_1").is_ok());
        for name in ["", "A", "a-b", "a;b", &"a".repeat(64)] {
            assert!(check_name(name).is_err(), "{name:?}");
        }
    }
}

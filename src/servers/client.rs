//! A plain connection for load (one per client thread, blocking), and a watcher that asks the
//! server which connections wait for a lock and reads its counters.

use super::{Cell, Conn, Kind, Outcome};

/// One connection to a [`Scratch`](super::Scratch) database, used from one thread: each
/// statement blocks until the server answers.
pub struct Client {
    conn: Conn,
    id: u64,
}

impl Client {
    pub(super) fn new(mut conn: Conn) -> Result<Client, String> {
        let id = conn.id()?;
        Ok(Client { conn, id })
    }

    /// Runs one statement; `Err` only when the connection failed.
    ///
    /// # Errors
    /// The connection failed.
    pub fn run(&mut self, sql: &str) -> Result<Outcome, String> {
        self.conn.run(sql)
    }

    /// The server's id of the connection (backend pid, connection id).
    #[must_use]
    pub fn id(&self) -> u64 {
        self.id
    }
}

/// A connection that watches the others: which wait for a lock now, and the server's own
/// counters of lock waits and deadlocks.
pub struct Watcher {
    conn: Conn,
    kind: Kind,
}

impl Watcher {
    pub(super) fn new(conn: Conn, kind: Kind) -> Watcher {
        Watcher { conn, kind }
    }

    /// The ids of the connections whose statement waits for a lock right now (PostgreSQL:
    /// `wait_event_type = 'Lock'` in `pg_stat_activity`; InnoDB: a transaction in `LOCK WAIT`
    /// in `SHOW ENGINE INNODB STATUS`).
    ///
    /// # Errors
    /// The watcher's connection failed, or the server refused the query.
    pub fn waiting(&mut self) -> Result<Vec<u64>, String> {
        match self.kind {
            Kind::Postgres => {
                let out = self.conn.run_ok(
                    "SELECT pid FROM pg_stat_activity \
                     WHERE wait_event_type = 'Lock' AND datname = current_database()",
                )?;
                Ok(ints(&out).into_iter().map(|v| v as u64).collect())
            }
            Kind::Mysql => match &mut self.conn {
                Conn::Mysql(conn) => Ok(super::mysql::innodb_lock_waiters(
                    &super::mysql::innodb_status(conn)?,
                )),
                Conn::Postgres(_) => Err("a MySQL watcher on a PostgreSQL connection".into()),
            },
        }
    }

    /// The server's cumulative counters that bear on locking, by name: InnoDB's
    /// `Innodb_row_lock_waits`, `Innodb_row_lock_time` (ms) and `Innodb_deadlocks`;
    /// PostgreSQL's `deadlocks` and `xact_rollback` of the database
    /// (`pg_stat_database`, which a backend updates when its transaction ends, at most once
    /// a second while busy).
    ///
    /// # Errors
    /// The watcher's connection failed, or the server refused the query.
    pub fn counters(&mut self) -> Result<Vec<(String, i64)>, String> {
        match self.kind {
            Kind::Postgres => {
                let _ = self.conn.run("SELECT pg_stat_clear_snapshot()");
                let out = self.conn.run_ok(
                    "SELECT deadlocks, xact_rollback FROM pg_stat_database \
                     WHERE datname = current_database()",
                )?;
                let row = out
                    .rows
                    .unwrap_or_default()
                    .into_iter()
                    .next()
                    .unwrap_or_default();
                let names = ["deadlocks", "xact_rollback"];
                Ok(names
                    .iter()
                    .zip(row)
                    .filter_map(|(n, c)| match c {
                        Cell::Int(v) => Some(((*n).to_owned(), v)),
                        _ => None,
                    })
                    .collect())
            }
            Kind::Mysql => {
                let out = self.conn.run_ok(
                    "SHOW GLOBAL STATUS WHERE Variable_name IN \
                     ('Innodb_row_lock_waits', 'Innodb_row_lock_time', 'Innodb_deadlocks')",
                )?;
                let mut all: Vec<(String, i64)> = out
                    .rows
                    .unwrap_or_default()
                    .into_iter()
                    .filter_map(|r| match (r.first(), r.get(1)) {
                        (Some(Cell::Text(n)), Some(Cell::Int(v))) => Some((n.clone(), *v)),
                        _ => None,
                    })
                    .collect();
                all.sort();
                Ok(all)
            }
        }
    }
}

/// The integer first column of every row.
fn ints(out: &Outcome) -> Vec<i64> {
    out.rows
        .iter()
        .flatten()
        .filter_map(|r| match r.first() {
            Some(Cell::Int(v)) => Some(*v),
            _ => None,
        })
        .collect()
}

//! A session: one connection on a thread of its own, watched from a second connection.

use std::fmt;
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::sync::{Mutex, PoisonError};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use super::{Conn, Outcome, Step};

/// How often [`Session::step`] asks the server whether the statement waits.
const POLL: Duration = Duration::from_millis(3);

/// How long closing waits for each of: the session's thread to end, the server to forget the
/// connection.
const CLOSE_LIMIT: Duration = Duration::from_secs(10);

/// A connection to a [`Scratch`](super::Scratch) database, standing for one simulated process.
///
/// The connection belongs to a thread of its own, which takes statements over a channel and
/// sends back their outcomes, so that a statement that waits for a lock leaves the caller free
/// to drive other sessions (the one that holds the lock among them).
///
/// Each session also has a monitor: a second connection of its own to the same database, from
/// which it asks the server whether the session's statement waits for a lock (PostgreSQL:
/// `pg_stat_activity.wait_event_type = 'Lock'` for its backend; MySQL/MariaDB: its
/// connection's transaction in `LOCK WAIT` in `SHOW ENGINE INNODB STATUS`, or a process list
/// state `Waiting for ... lock`), and ends it on [`close`](Session::close). One monitor per
/// session (two connections per session) rather than one shared per scratch database: no lock
/// between sessions, and a session can be moved to another thread on its own.
///
/// Dropping a session closes it as [`close`](Session::close) does.
pub struct Session {
    id: u64,
    requests: Option<Sender<String>>,
    replies: Receiver<Result<Outcome, String>>,
    thread: Option<JoinHandle<()>>,
    monitor: Mutex<Conn>,
    pending: bool,
}

impl Session {
    /// Starts the thread that owns `conn` (the server's connection `id`).
    pub(super) fn start(mut conn: Conn, id: u64, monitor: Conn) -> Result<Session, String> {
        let (requests, inbox) = mpsc::channel::<String>();
        let (outbox, replies) = mpsc::channel();
        let thread = thread::Builder::new()
            .name(format!("interlock-session-{id}"))
            .spawn(move || {
                for sql in inbox {
                    if outbox.send(conn.run(&sql)).is_err() {
                        break;
                    }
                }
            })
            .map_err(|e| format!("starting a session's thread: {e}"))?;
        Ok(Session {
            id,
            requests: Some(requests),
            replies,
            thread: Some(thread),
            monitor: Mutex::new(monitor),
            pending: false,
        })
    }

    /// Issues `sql`, and returns [`Step::Done`] with its outcome if the server answers before it
    /// says the statement waits; [`Step::Waiting`] as soon as the server says the statement
    /// waits for a lock (asked every 3 ms). A statement that neither answers nor waits for a
    /// lock within `limit` (a long computation, `pg_sleep`, a wait the server does not show as
    /// a lock wait) also gives `Waiting`, once `limit` has passed. After `Waiting`, the
    /// statement is [`pending`](Session::pending) and [`resume`](Session::resume) collects its
    /// outcome.
    ///
    /// # Errors
    /// A statement is already pending, the session's connection or its monitor failed.
    pub fn step(&mut self, sql: &str, limit: Duration) -> Result<Step, String> {
        if self.pending {
            return Err(format!(
                "session {}: the last statement is still pending; resume it first",
                self.id
            ));
        }
        let sent = self
            .requests
            .as_ref()
            .is_some_and(|requests| requests.send(sql.to_owned()).is_ok());
        if !sent {
            return Err(self.ended());
        }
        self.pending = true;
        let start = Instant::now();
        loop {
            let left = limit.saturating_sub(start.elapsed());
            match self.replies.recv_timeout(POLL.min(left)) {
                Ok(reply) => {
                    self.pending = false;
                    return reply.map(Step::Done);
                }
                Err(RecvTimeoutError::Disconnected) => {
                    self.pending = false;
                    return Err(self.ended());
                }
                Err(RecvTimeoutError::Timeout) => {
                    if start.elapsed() >= limit || self.waiting_now()? {
                        return Ok(Step::Waiting);
                    }
                }
            }
        }
    }

    /// For a session whose last [`step`](Session::step) returned [`Step::Waiting`]: waits up to
    /// `limit` for the statement's outcome; `Ok(None)` if it still has none.
    ///
    /// # Errors
    /// No statement is pending, or the session's connection failed.
    pub fn resume(&mut self, limit: Duration) -> Result<Option<Outcome>, String> {
        if !self.pending {
            return Err(format!("session {}: no statement is pending", self.id));
        }
        match self.replies.recv_timeout(limit) {
            Ok(reply) => {
                self.pending = false;
                reply.map(Some)
            }
            Err(RecvTimeoutError::Timeout) => Ok(None),
            Err(RecvTimeoutError::Disconnected) => {
                self.pending = false;
                Err(self.ended())
            }
        }
    }

    /// Whether a statement was issued and its outcome not yet collected.
    #[must_use]
    pub fn pending(&self) -> bool {
        self.pending
    }

    /// The server's id of the session's connection: the PostgreSQL backend's pid, the MySQL
    /// connection id.
    #[must_use]
    pub fn id(&self) -> u64 {
        self.id
    }

    /// Whether, according to the server, the session's statement waits for a lock right now.
    ///
    /// # Errors
    /// The monitor connection failed.
    pub fn waiting_now(&self) -> Result<bool, String> {
        self.monitor
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .waits(self.id)
    }

    /// Closes the connection as a crashed client would: the server rolls back its transaction.
    /// A pending statement is ended from the monitor (`pg_terminate_backend`, `KILL`), so this
    /// does not wait for it. Returns once the server no longer lists the connection, so its
    /// locks are released (each wait bounded by 10 s; past that it returns anyway, leaving
    /// the thread behind rather than hanging).
    pub fn close(self) {
        drop(self);
    }

    fn ended(&self) -> String {
        format!("session {}: its connection's thread has ended", self.id)
    }

    /// Waits up to `limit` for the thread to end (dropping any outcome it still sends), and
    /// joins it; whether it ended.
    fn join(&mut self, limit: Duration) -> bool {
        let deadline = Instant::now() + limit;
        loop {
            match self
                .replies
                .recv_timeout(deadline.saturating_duration_since(Instant::now()))
            {
                Ok(_) => {}
                Err(RecvTimeoutError::Disconnected) => {
                    if let Some(thread) = self.thread.take() {
                        let _ = thread.join();
                    }
                    return true;
                }
                Err(RecvTimeoutError::Timeout) => return false,
            }
        }
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        let id = self.id;
        if self.pending {
            let _ = self
                .monitor
                .get_mut()
                .unwrap_or_else(PoisonError::into_inner)
                .kill(id);
        }
        // The thread ends when the channel closes, dropping (closing) the connection.
        drop(self.requests.take());
        if !self.join(CLOSE_LIMIT) {
            let _ = self
                .monitor
                .get_mut()
                .unwrap_or_else(PoisonError::into_inner)
                .kill(id);
            self.join(CLOSE_LIMIT);
        }
        let monitor = self
            .monitor
            .get_mut()
            .unwrap_or_else(PoisonError::into_inner);
        let deadline = Instant::now() + CLOSE_LIMIT;
        while monitor.has(id).unwrap_or(false) && Instant::now() < deadline {
            thread::sleep(Duration::from_millis(2));
        }
    }
}

impl fmt::Debug for Session {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Session")
            .field("id", &self.id)
            .field("pending", &self.pending)
            .finish_non_exhaustive()
    }
}

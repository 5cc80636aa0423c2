//! One load client: a thread with its own connection that runs processes of the model, one
//! request after another, their local code by `exec::remote` and their statements on the
//! server.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::time::{Duration, Instant};

use super::watch::Slot;
use crate::exec::remote::{self, Answer, Next};
use crate::ir::value::{Pid, Sym, Value};
use crate::ir::workload::Arrival;
use crate::ir::{Flavour, Model, SqlStmt};
use crate::replay::statement;
use crate::servers::{Cell, Client, Outcome};
use crate::sim::observer::{Rounds, Watch};
use crate::sim::program::Plan;
use crate::sim::sample::Sampler;
use crate::sim::tally::Tally;
use crate::world::process::{Proc, Status};
use crate::world::State;

/// What every client shares.
pub struct Shared<'m> {
    pub m: &'m Model,
    pub plan: Plan,
    /// The ghosts (`sold += 1`), updated under this lock with the local code around them.
    pub ghosts: Mutex<Vec<i64>>,
    /// The next process no client has taken yet.
    pub next: AtomicUsize,
    /// No request starts after this.
    pub until: Instant,
    /// Real time per model tick.
    pub tick: Duration,
    pub slots: Arc<Vec<Slot>>,
    /// Free connections per pool (`pool P size N`), and the signal that one came back.
    pub pools: Vec<(Mutex<usize>, Condvar)>,
    pub seed: u64,
    /// Every process's last state, for the final check.
    pub finals: Mutex<Vec<Option<Proc>>>,
}

/// What one client measured, in microseconds.
pub struct Measured {
    pub tally: Tally,
}

/// Runs processes until none is left; the figures of their requests.
pub fn run(sh: &Shared, index: usize, mut conn: Client) -> Result<Measured, String> {
    let m = sh.m;
    sh.slots[index]
        .conn
        .store(conn.id(), std::sync::atomic::Ordering::SeqCst);
    let mut c = Runner {
        sh,
        index,
        conn: &mut conn,
        tally: Tally::new(m.groups.len(), m.mutexes.len()),
        rng: Sampler::new(sh.seed, index as u64),
        statements: 0,
        pool: None,
    };
    loop {
        let i = sh.next.fetch_add(1, Ordering::SeqCst);
        if i >= m.processes.len() {
            break;
        }
        c.process(Pid(i as u16))?;
    }
    Ok(Measured { tally: c.tally })
}

struct Runner<'a, 'm> {
    sh: &'a Shared<'m>,
    index: usize,
    conn: &'a mut Client,
    tally: Tally,
    rng: Sampler,
    statements: u64,
    /// The pool whose connection this client holds now.
    pool: Option<u16>,
}

impl<'m> Runner<'_, 'm> {
    /// Runs `pid`'s requests: once, or in a closed loop until the time is up.
    fn process(&mut self, pid: Pid) -> Result<(), String> {
        let m = self.sh.m;
        let group = m.processes[pid.index()].group;
        let mut st = State::initial(m);
        loop {
            let p = self.request(&mut st, pid)?;
            self.sh
                .finals
                .lock()
                .unwrap_or_else(PoisonError::into_inner)[pid.index()] = Some(p);
            let Arrival::Closed { think } = m.workload.arrival(group) else {
                return Ok(());
            };
            let think = self.rng.draw(m.workload.draws[think as usize].dist);
            std::thread::sleep(self.sh.tick * think);
            if Instant::now() >= self.sh.until {
                return Ok(());
            }
        }
    }

    /// One request of `pid`, from a fresh start; the process as it ended.
    fn request(&mut self, st: &mut State, pid: Pid) -> Result<Proc, String> {
        let m = self.sh.m;
        let group = m.processes[pid.index()].group;
        st.procs[pid.index()] = Proc::new(m.program(pid).locals.len()).into();
        let mut watch = Watch::new(Some(group), Some(self.sh.plan.rounds(m, pid)));
        let started = Instant::now();
        let mut begun = false;
        loop {
            let next = self.local(st, &mut watch, |m, st, w| remote::next(m, st, pid, w));
            match next {
                Next::Begin(isolation) => {
                    self.take_connection(group);
                    for sql in statement::begin(flavour(m), isolation) {
                        self.send_ok(&sql)?;
                    }
                    begun = true;
                }
                Next::Sql(stmt) => {
                    self.take_connection(group);
                    let answer = self.statement(st, pid, stmt)?;
                    begun &= !matches!(stmt, SqlStmt::Commit | SqlStmt::Rollback);
                    self.local(st, &mut watch, |m, st, w| {
                        remote::answer(m, st, pid, answer, w);
                    });
                    if st.procs[pid.index()].txn.is_none() {
                        self.give_back();
                    }
                }
                Next::Delay { ticks, upto, draw } => {
                    let len = if upto > ticks {
                        self.rng.delay(m, (ticks, upto), draw).clamp(ticks, upto)
                    } else {
                        ticks
                    };
                    std::thread::sleep(self.sh.tick * len);
                }
                Next::Pick { lo, hi, zipf } => {
                    let v = self.rng.value(lo, hi, zipf);
                    self.local(st, &mut watch, |m, st, w| remote::pick(m, st, pid, v, w));
                }
                Next::Ended => break,
                Next::Unsupported(what) => return Err(format!("load cannot run {what}")),
            }
        }
        if begun {
            // The request ended with its transaction open: its connection goes back rolled
            // back, as the model's end of a request does.
            self.send_ok("ROLLBACK")?;
        }
        self.give_back();
        let mut rounds = Rounds {
            retries: 0,
            entered: vec![false; m.program(pid).locals.len()],
        };
        watch.book(m, &mut self.tally, Some(&mut rounds));
        let p = (*st.procs[pid.index()]).clone();
        let micros = u32::try_from(started.elapsed().as_micros()).unwrap_or(u32::MAX);
        if !self.tally.groups[group].end_request(m, p.status, micros, rounds.retries) {
            if let Status::Failed(e) = p.status {
                return Err(format!(
                    "{} stopped on a run-time error of the model: {}",
                    m.process_name(pid),
                    e.message()
                ));
            }
        }
        Ok(p)
    }

    /// Runs local code with the shared ghosts in `st`, under their lock.
    fn local<R>(
        &self,
        st: &mut State,
        watch: &mut Watch,
        f: impl FnOnce(&'m Model, &mut State, &mut Watch) -> R,
    ) -> R {
        let mut ghosts = self
            .sh
            .ghosts
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        st.ghosts.clone_from(&ghosts);
        let r = f(self.sh.m, st, watch);
        ghosts.clone_from(&st.ghosts);
        r
    }

    /// Sends the statement `pid` stands at, its locals as literals; its answer as values.
    fn statement(&mut self, st: &State, pid: Pid, stmt: &SqlStmt) -> Result<Answer, String> {
        let m = self.sh.m;
        let sql = statement::text(m, pid, stmt, &st.procs[pid.index()].locals);
        self.statements += 1;
        let slot = &self.sh.slots[self.index];
        slot.start(self.statements);
        let t0 = Instant::now();
        let out = self.conn.run(&sql)?;
        let took = t0.elapsed();
        if slot.end(self.statements) {
            let g = &mut self.tally.groups[m.processes[pid.index()].group];
            g.lock_waits += 1;
            g.wait_time
                .push(u32::try_from(took.as_micros()).unwrap_or(u32::MAX));
        }
        answer(m, &sql, out)
    }

    fn send_ok(&mut self, sql: &str) -> Result<(), String> {
        match self.conn.run(sql)?.error {
            None => Ok(()),
            Some(e) => Err(format!("the server refused `{sql}`: {e}")),
        }
    }

    /// Takes a connection of `group`'s pool, if it has one and this client holds none
    /// (waiting for one to come back), as a transaction or an autocommit statement does.
    fn take_connection(&mut self, group: usize) {
        let Some(pool) = self.sh.m.workload.pool_of(group) else {
            return;
        };
        if self.pool.is_some() {
            return;
        }
        let (free, back) = &self.sh.pools[pool as usize];
        let t0 = Instant::now();
        let mut n = free.lock().unwrap_or_else(PoisonError::into_inner);
        let waited = *n == 0;
        while *n == 0 {
            n = back.wait(n).unwrap_or_else(PoisonError::into_inner);
        }
        *n -= 1;
        if waited {
            let g = &mut self.tally.groups[group];
            g.pool_wait
                .push(u32::try_from(t0.elapsed().as_micros()).unwrap_or(u32::MAX));
        }
        self.pool = Some(pool);
    }

    fn give_back(&mut self) {
        if let Some(pool) = self.pool.take() {
            let (free, back) = &self.sh.pools[pool as usize];
            *free.lock().unwrap_or_else(PoisonError::into_inner) += 1;
            back.notify_one();
        }
    }
}

fn flavour(m: &Model) -> Flavour {
    m.db.as_ref().map_or(Flavour::Postgres, |d| d.flavour)
}

/// The server's outcome as the engine's answer: rows as values, a count, or an error code
/// the model names.
fn answer(m: &Model, sql: &str, out: Outcome) -> Result<Answer, String> {
    if let Some(e) = out.error {
        return symbol(m, &e.code).map(Answer::Error).ok_or_else(|| {
            format!("`{sql}`: the server answered {e}, an error the model has no name for")
        });
    }
    if let Some(rows) = out.rows {
        let rows = rows
            .into_iter()
            .map(|r| r.into_iter().map(|c| value(m, sql, c)).collect())
            .collect::<Result<Vec<Box<[Value]>>, String>>()?;
        return Ok(Answer::Rows(rows));
    }
    Ok(match out.affected {
        Some(n) => Answer::Count(i64::try_from(n).unwrap_or(i64::MAX)),
        None => Answer::Done,
    })
}

/// A value a server sent, as the engine's: text must be a string the model names.
pub(super) fn value(m: &Model, sql: &str, c: Cell) -> Result<Value, String> {
    Ok(match c {
        Cell::Null => Value::Nil,
        Cell::Int(v) => Value::Int(v),
        Cell::Text(t) => Value::Str(symbol(m, &t).ok_or_else(|| {
            format!("`{sql}`: the server returned {t:?}, a value the model never names")
        })?),
    })
}

fn symbol(m: &Model, text: &str) -> Option<Sym> {
    m.symbols
        .iter()
        .position(|s| s == text)
        .map(|i| Sym(i as u32))
}

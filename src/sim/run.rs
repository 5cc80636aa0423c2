//! One simulated run: a discrete-event loop over the checker's own transitions.
//!
//! Every step is `exec::apply` of a [`Choice`] the search also knows (or `Pass`/`Restart`,
//! which only a simulation takes): what is due now runs first, one at a time in an order the
//! seed draws; when nothing is due, time passes to the next deadline of the state or the next
//! end of a drawn delay, whichever comes first. The path taken is kept, so a violation is a
//! counterexample `check --path` replays.

use super::observer::{Rounds, Watch};
use super::program::Plan;
use super::sample::Sampler;
use super::tally::Tally;
use crate::exec::{self, env, step, Choice};
use crate::explore::{self, Failure, Stop};
use crate::ir::value::Pid;
use crate::ir::workload::{Arrival, Dist, Spent};
use crate::ir::{Model, OpKind};
use crate::world::process::{Status, Wait};
use crate::world::State;

/// A run tells its progress (and looks at its stop) once every this many steps.
pub const PROGRESS_EVERY: u64 = 4096;

/// How long a run lasts and what it may spend.
#[derive(Clone, Copy, Debug)]
pub struct Bounds {
    /// No request starts after this many ticks; the run then lets those in flight end.
    pub horizon: u64,
    /// A run that is still busy this long after the horizon is cut off.
    pub drain: u64,
    /// At most this many steps in a run.
    pub max_events: u64,
}

/// What a run ended with.
#[derive(Clone, Debug)]
pub struct RunResult {
    pub tally: Tally,
    /// The property it broke, with the path to the state that breaks it.
    pub violation: Option<(Failure, Vec<Choice>)>,
    /// Requests still in flight when it was cut off.
    pub unfinished: u64,
}

/// A process's bookkeeping outside the state.
#[derive(Clone, Debug, Default)]
struct Client {
    /// When its current request arrived (or started); `None` between requests.
    started: Option<u64>,
    /// When its drawn delay ends, if before the longest length.
    finish_at: Option<u64>,
    /// When it starts its next request (after thinking, or at once for an open group).
    restart_at: Option<u64>,
    /// When its pause ends, if before the longest the fault allows.
    resume_at: Option<u64>,
    /// Since when it waits for a lock.
    waiting_since: Option<u64>,
    /// Since when it waits for a connection (true) or a database worker (false).
    queued_since: Option<(u64, bool)>,
    /// `repeat`/`retry` rounds of the current request.
    rounds: Rounds,
}

struct Sim<'m> {
    m: &'m Model,
    plan: &'m Plan,
    s: State,
    now: u64,
    rng: Sampler,
    clients: Vec<Client>,
    /// Per group: when its next request arrives (open groups).
    arrivals: Vec<u64>,
    tally: Tally,
    path: Vec<Choice>,
    /// Keep the path (until the first violation).
    keep_path: bool,
    bounds: Bounds,
    failures: Vec<Failure>,
    /// Faults still to strike (docs/semantics.md, SIM-6).
    strikes: Vec<super::strikes::Strike>,
    /// Per Redis node, when the oldest write of its replication stream arrives
    /// (`latency replication D`).
    replicate_at: Vec<Option<u64>>,
}

/// Runs the model once from its initial state with the random source `rng`;
/// `None` when `stop` was raised before it ended.
#[must_use]
pub fn run(
    m: &Model,
    plan: &Plan,
    rng: Sampler,
    bounds: Bounds,
    (stop, progress): (&Stop, &super::Progress),
) -> Option<RunResult> {
    let clients = m
        .processes
        .iter()
        .map(|p| Client {
            // An open group's process has no request until its first arrival.
            started: (!matches!(m.workload.arrival(p.group), Arrival::Open { .. })).then_some(0),
            rounds: Rounds {
                retries: 0,
                entered: vec![false; m.groups[p.group].program.locals.len()],
            },
            ..Client::default()
        })
        .collect();
    let mut sim = Sim {
        m,
        plan,
        s: State::initial(m),
        now: 0,
        rng,
        clients,
        arrivals: vec![0; m.groups.len()],
        tally: Tally::new(m.groups.len(), m.mutexes.len()),
        path: Vec::new(),
        keep_path: true,
        bounds,
        failures: Vec::new(),
        strikes: Vec::new(),
        replicate_at: vec![None; m.redis_nodes()],
    };
    for g in 0..m.groups.len() {
        if let Arrival::Open { gap } = m.workload.arrival(g) {
            sim.arrivals[g] = u64::from(sim.draw_id(gap));
        }
    }
    sim.strikes = super::strikes::draw(m, &mut sim.rng, bounds.horizon);
    let violation = sim.go(stop, progress)?;
    let unfinished = sim.clients.iter().filter(|c| c.started.is_some()).count() as u64;
    sim.tally.time = sim.now;
    sim.tally.runs = 1;
    Some(RunResult {
        tally: sim.tally,
        violation,
        unfinished,
    })
}

impl Sim<'_> {
    /// The event loop; returns the first violation, or `None` when stopped from outside.
    /// A run goes on after a violation (its figures are still measured), without checking
    /// the properties again or keeping its path.
    #[allow(clippy::option_option)]
    fn go(
        &mut self,
        stop: &Stop,
        progress: &super::Progress,
    ) -> Option<Option<(Failure, Vec<Choice>)>> {
        let mut due = Vec::new();
        let mut found = self.broken().map(|f| (f, Vec::new()));
        let mut told = 0;
        while self.tally.events < self.bounds.max_events {
            if self.tally.events % PROGRESS_EVERY == 0 && self.tally.events > told {
                told = self.tally.events;
                let relaxed = std::sync::atomic::Ordering::Relaxed;
                progress.steps.fetch_add(PROGRESS_EVERY, relaxed);
                if stop.raised().is_some() {
                    return None;
                }
            }
            self.due(&mut due);
            if self.take_one(&mut due).is_some() {
                if found.is_none() {
                    if let Some(f) = self.broken() {
                        found = Some((f, std::mem::take(&mut self.path)));
                        self.keep_path = false;
                    }
                }
                continue;
            }
            if self.over() || !self.advance() {
                break;
            }
        }
        progress
            .steps
            .fetch_add(self.tally.events - told, std::sync::atomic::Ordering::Relaxed);
        if found.is_none() && self.deadlocked() {
            found = Some((Failure::Deadlock, std::mem::take(&mut self.path)));
        }
        Some(found)
    }

    /// No process can step, no time can pass, and some process has not finished.
    fn deadlocked(&self) -> bool {
        let mut succ = Vec::new();
        self.tally.events < self.bounds.max_events
            && !self.s.is_final()
            && self.now < self.bounds.horizon + self.bounds.drain
            && exec::successors(self.m, &self.s, &mut succ) == 0
            && self.clients.iter().all(|c| c.restart_at.is_none())
    }

    /// The first property the current state breaks, by the checker's order.
    fn broken(&mut self) -> Option<Failure> {
        explore::check(self.m, &self.s, &mut self.failures);
        self.failures
            .iter()
            .map(|&f| explore::rank(self.m, f))
            .min()
            .map(|r| r.1)
    }

    /// The run is over: past the horizon with nothing in flight, or past the drain.
    fn over(&self) -> bool {
        let idle = self.clients.iter().all(|c| c.started.is_none());
        self.now >= self.bounds.horizon && idle
            || self.now >= self.bounds.horizon + self.bounds.drain
    }

    /// Every transition due now, in a fixed order.
    fn due(&mut self, out: &mut Vec<Choice>) {
        out.clear();
        let m = self.m;
        let s = &self.s;
        for (i, p) in s.procs.iter().enumerate() {
            let pid = Pid(i as u16);
            if step::enabled(m, s, pid) {
                out.push(Choice::Proc(pid));
            } else if p.status == Status::Ready
                && self.clients[i].queued_since.is_none()
                && step::picking(m, s, pid).is_none()
            {
                // Ready but not able to step: it waits for a connection or a worker.
                let pool = exec::capacity::waiting_for(m, s, pid)
                    .is_some_and(|(r, _)| matches!(r, exec::capacity::Resource::Connection(_)));
                self.clients[i].queued_since = Some((self.now, pool));
            }
            if let Some((lo, hi)) = step::picking(m, s, pid) {
                let pc = p.pc as usize;
                let zipf = match m.program(pid).ops[pc].kind {
                    OpKind::Pick { zipf, .. } => zipf,
                    _ => None,
                };
                let value = self.rng.value(lo, hi, zipf);
                out.push(Choice::Pick { pid, value });
            }
            if p.check_in == Some(0) {
                out.push(Choice::Check(pid));
            }
            if p.timeout_in == Some(0) {
                out.push(Choice::Timeout(pid));
            }
            if p.watchdog.is_some_and(|w| w.next_in == 0) {
                out.push(Choice::Renew(pid));
            }
            let c = &self.clients[i];
            if c.finish_at == Some(self.now) {
                out.push(Choice::Finish(pid));
            }
            if c.restart_at.is_some_and(|t| t <= self.now) {
                out.push(Choice::Restart(pid));
            }
            if p.paused == Some(0) || p.paused.is_some() && c.resume_at == Some(self.now) {
                out.push(Choice::Resume(pid));
            }
        }
        if self.now < self.bounds.horizon {
            for k in 0..self.strikes.len() {
                let strike = self.strikes[k];
                if strike.at <= self.now {
                    if let Some(c) = super::strikes::resolve(m, &self.s, strike, &mut self.rng) {
                        out.push(c);
                    }
                }
            }
        }
        if self.plan.replicas {
            self.replication_due(out);
        }
    }

    /// Replicas that catch up now: each as soon as nothing else is due, or, with `latency
    /// replication D`, each write a drawn `D` after it (or the write before it) reached the
    /// stream (docs/semantics.md, SIM-6).
    fn replication_due(&mut self, out: &mut Vec<Choice>) {
        let Some(lag) = self.m.workload.replication() else {
            out.extend((0..self.s.redis.len()).map(|n| Choice::Replicate(n as u16)));
            return;
        };
        for n in 0..self.s.redis.len() {
            let r = &self.s.redis[n];
            if r.down || r.backlog.is_empty() {
                self.replicate_at[n] = None;
                continue;
            }
            match self.replicate_at[n] {
                None => {
                    let at = self.now + u64::from(self.draw_id(lag));
                    self.replicate_at[n] = Some(at);
                    if at == self.now {
                        out.push(Choice::Replicate(n as u16));
                    }
                }
                Some(t) if t <= self.now => out.push(Choice::Replicate(n as u16)),
                Some(_) => {}
            }
        }
    }

    /// Takes one of the due transitions, drawn by the seed; `None` when none is enabled.
    fn take_one(&mut self, due: &mut Vec<Choice>) -> Option<Choice> {
        while !due.is_empty() {
            let c = due.swap_remove(self.rng.pick(due.len()));
            if self.take(c) {
                return Some(c);
            }
        }
        None
    }

    /// Applies `c` and books what it did; false when it is not enabled.
    fn take(&mut self, c: Choice) -> bool {
        let actor = match c {
            Choice::Proc(p)
            | Choice::Pick { pid: p, .. }
            | Choice::Check(p)
            | Choice::Timeout(p)
            | Choice::Renew(p) => Some(p),
            _ => None,
        };
        let (next, watch) = {
            let group = actor.map(|p| self.m.processes[p.index()].group);
            let rounds = actor.map(|p| self.plan.rounds(self.m, p));
            let mut watch = Watch::new(group, rounds);
            (exec::apply(self.m, &self.s, c, &mut watch), watch)
        };
        let Some(next) = next else {
            return false;
        };
        let was = actor.map(|p| self.s.procs[p.index()].status);
        self.s = next;
        if self.keep_path {
            self.path.push(c);
        }
        self.tally.events += 1;
        let rounds = actor.map(|p| &mut self.clients[p.index()].rounds);
        watch.book(self.m, &mut self.tally, rounds);
        match c {
            Choice::Proc(p) | Choice::Pick { pid: p, .. } => self.after_step(p, was),
            Choice::Finish(p) => self.clients[p.index()].finish_at = None,
            Choice::Restart(p) => self.restarted(p),
            Choice::Resume(p) => self.clients[p.index()].resume_at = None,
            Choice::Replicate(n) => self.replicate_at[n as usize] = None,
            Choice::Fault { .. }
            | Choice::Drift { .. }
            | Choice::ServerFault { .. }
            | Choice::Partition { .. }
            | Choice::Failover { .. } => self.struck(c),
            _ => {}
        }
        true
    }

    /// Books a fault that struck: its strike is spent, a pause gets its drawn length, and
    /// the requests of processes it stopped end (crashed or hung).
    fn struck(&mut self, c: Choice) {
        let same = |a: Choice, b: Choice| match (a, b) {
            (Choice::Failover { fault: x, .. }, Choice::Failover { fault: y, .. }) => x == y,
            _ => a == b,
        };
        if let Some(k) = self.strikes.iter().position(|s| same(s.choice, c)) {
            self.strikes.remove(k);
        }
        self.tally.faults += 1;
        if let Choice::Fault { fault, pid } = c {
            if let crate::ir::FaultKind::Pause { max } = self.m.faults[fault as usize].kind {
                let len = self.rng.draw(Dist::Uniform { lo: 0, hi: max });
                self.clients[pid.index()].resume_at = Some(self.now + u64::from(len));
            }
        }
        for i in 0..self.s.procs.len() {
            let stopped = match self.s.procs[i].status {
                Status::Crashed => "crashed",
                Status::Hung => "hung",
                _ => continue,
            };
            let client = &mut self.clients[i];
            client.restart_at = None;
            if let Some(started) = client.started.take() {
                let group = self.m.processes[i].group;
                let t = &mut self.tally.groups[group];
                t.latency.push((self.now - started) as u32);
                t.retries.push(std::mem::take(&mut client.rounds.retries));
                *t.failed.entry(stopped.to_string()).or_default() += 1;
            }
        }
    }

    /// Books what a process's step started or ended: a wait, a delay, its request.
    fn after_step(&mut self, p: Pid, was: Option<Status>) {
        let i = p.index();
        let now = self.now;
        let group = self.m.processes[i].group;
        if let Some((since, pool)) = self.clients[i].queued_since.take() {
            let t = &mut self.tally.groups[group];
            let waits = if pool { &mut t.pool_wait } else { &mut t.worker_wait };
            waits.push((now - since) as u32);
        }
        if matches!(was, Some(Status::Waiting(w)) if is_lock(w)) {
            if let Some(since) = self.clients[i].waiting_since.take() {
                self.tally.groups[group].wait_time.push((now - since) as u32);
            }
        }
        match self.s.procs[i].status {
            Status::Waiting(w) if is_lock(w) => self.clients[i].waiting_since = Some(now),
            Status::Busy(_) => self.delay_started(p),
            Status::Done(_) | Status::Errored(_) => self.ended(p),
            _ => {}
        }
    }

    /// Draws the length of the delay `p` just started, or its arrival if it waits for one.
    fn delay_started(&mut self, p: Pid) {
        let i = p.index();
        let pc = self.s.procs[i].pc.saturating_sub(1) as usize;
        let op = &self.m.program(p).ops[pc].kind;
        let (OpKind::Work { ticks, upto, draw } | OpKind::Sleep { ticks, upto, draw }) = *op
        else {
            return;
        };
        if upto <= ticks {
            return;
        }
        let spent = draw.map(|d| self.m.workload.draws[d as usize].spent);
        let len = if spent == Some(Spent::Arrival) {
            let g = self.m.processes[i].group;
            if self.now >= self.bounds.horizon {
                return; // no more arrivals: it stays idle
            }
            let at = self.arrivals[g].max(self.now);
            let gap = draw.map_or(0, |d| self.draw_id(d));
            self.clients[i].started = Some(self.arrivals[g]);
            self.arrivals[g] += u64::from(gap);
            (at - self.now) as u32
        } else {
            self.rng.delay(self.m, (ticks, upto), draw)
        };
        if len < upto {
            self.clients[i].finish_at = Some(self.now + u64::from(len.max(ticks)));
        }
    }

    /// Books a request that ended and schedules the next one of a repeating group.
    fn ended(&mut self, p: Pid) {
        let i = p.index();
        let group = self.m.processes[i].group;
        let c = &mut self.clients[i];
        let started = c.started.take().unwrap_or(0);
        let retries = std::mem::take(&mut c.rounds.retries);
        let t = &mut self.tally.groups[group];
        let latency = (self.now - started) as u32;
        if t.end_request(self.m, self.s.procs[i].status, latency, retries) {
            self.schedule(p);
        }
    }

    fn schedule(&mut self, p: Pid) {
        let group = self.m.processes[p.index()].group;
        let at = match self.m.workload.arrival(group) {
            Arrival::Once => return,
            Arrival::Closed { think } => self.now + u64::from(self.draw_id(think)),
            Arrival::Open { .. } => self.now,
        };
        if at < self.bounds.horizon {
            self.clients[p.index()].restart_at = Some(at);
        }
    }

    fn restarted(&mut self, p: Pid) {
        let group = self.m.processes[p.index()].group;
        let c = &mut self.clients[p.index()];
        c.restart_at = None;
        if !matches!(self.m.workload.arrival(group), Arrival::Open { .. }) {
            c.started = Some(self.now);
        }
    }

    fn draw_id(&mut self, d: u16) -> u32 {
        self.rng.draw(self.m.workload.draws[d as usize].dist)
    }

    /// Lets time pass to the next deadline or drawn end; false when nothing is ahead.
    fn advance(&mut self) -> bool {
        let state = env::next_deadline(&self.s).map(u64::from);
        let drawn = self
            .clients
            .iter()
            .flat_map(|c| [c.finish_at, c.restart_at, c.resume_at])
            .flatten()
            .chain(
                self.strikes
                    .iter()
                    .map(|s| s.at)
                    .filter(|&t| t > self.now && t < self.bounds.horizon),
            )
            .chain(self.replicate_at.iter().flatten().copied().filter(|&t| t > self.now))
            .map(|t| t.saturating_sub(self.now))
            .min();
        let cut = (self.bounds.horizon + self.bounds.drain).saturating_sub(self.now);
        let dt = match (state, drawn) {
            (Some(a), Some(b)) => a.min(b),
            (a, b) => match a.or(b) {
                Some(t) => t,
                None => return false,
            },
        };
        if dt == 0 {
            // A key at its deadline goes as time moves on (RS-2); anything else due now
            // that cannot happen means the run is stuck.
            return state == Some(0) && self.take(Choice::Tick);
        }
        let dt = dt.min(cut.max(1));
        let c = if Some(dt) == state {
            Choice::Tick
        } else {
            Choice::Pass(dt as u32)
        };
        let taken = self.take(c);
        if taken {
            self.book_time(dt);
            self.now += dt;
        }
        taken
    }

    /// Books `dt` ticks of the present: requests in flight, mutexes held.
    fn book_time(&mut self, dt: u64) {
        let now = self.now;
        let in_flight = self
            .clients
            .iter()
            .filter(|c| c.started.is_some_and(|t| t <= now))
            .count() as u128;
        self.tally.in_flight_area += in_flight * u128::from(dt);
        let per = self.m.mutexes.len().max(1);
        for (k, l) in self.s.mutexes.iter().enumerate() {
            if l.holder.is_some() {
                self.tally.mutex_held[k % per] += dt;
            }
        }
    }
}

/// A wait for a lock (row, gap or mutex), as opposed to a wait for replicas or a key.
fn is_lock(w: Wait) -> bool {
    matches!(w, Wait::Row { .. } | Wait::Gap { .. } | Wait::Mutex(_))
}

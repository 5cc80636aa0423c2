//! What the simulator observes of a step: the events and ops it books.

use super::program::Round;
use super::tally::{GroupTally, Tally};
use crate::exec::observe::{Event, Observer, Reply};
use crate::ir::value::Pid;
use crate::ir::{Model, SqlStmt, Sym};
use crate::world::process::Wait;

/// Gathers one step's figures; [`Watch::book`] adds them to the run's.
pub struct Watch<'p> {
    group: Option<usize>,
    rounds: Option<&'p [Option<Round>]>,
    ran: Vec<u32>,
    counts: GroupTally,
    errors: Vec<Sym>,
    deadlocks: u64,
    expiries: u64,
}

impl<'p> Watch<'p> {
    #[must_use]
    pub fn new(group: Option<usize>, rounds: Option<&'p [Option<Round>]>) -> Self {
        Watch {
            group,
            rounds,
            ran: Vec::new(),
            counts: GroupTally::default(),
            errors: Vec::new(),
            deadlocks: 0,
            expiries: 0,
        }
    }

    /// Adds what the step did to `tally`, and the retries it began to `client`'s count.
    pub fn book(self, m: &Model, tally: &mut Tally, client: Option<&mut Rounds>) {
        tally.deadlocks += self.deadlocks;
        tally.expiries += self.expiries;
        let Some(g) = self.group else { return };
        let t = &mut tally.groups[g];
        // A request that waits is told again when it is granted: count it once, then.
        t.lock_requests += self.counts.lock_requests.saturating_sub(self.counts.lock_waits);
        t.lock_waits += self.counts.lock_waits;
        t.writes += self.counts.writes;
        t.empty_writes += self.counts.empty_writes;
        for code in &self.errors {
            *t.errors.entry(m.symbol(*code).to_string()).or_default() += 1;
        }
        if let (Some(c), Some(rounds)) = (client, self.rounds) {
            for pc in self.ran {
                match rounds.get(pc as usize).copied().flatten() {
                    Some(Round::Enter(l)) => c.enter(l),
                    Some(Round::Next(l)) => c.next(l),
                    None => {}
                }
            }
        }
    }

}

/// A request's retries so far, and which counted loops it has just entered.
#[derive(Clone, Debug, Default)]
pub struct Rounds {
    pub retries: u32,
    /// Per local: a counted loop on it was just entered (its first round is no retry).
    pub entered: Vec<bool>,
}

impl Rounds {
    fn enter(&mut self, l: u16) {
        if let Some(e) = self.entered.get_mut(l as usize) {
            *e = true;
        }
    }

    fn next(&mut self, l: u16) {
        match self.entered.get_mut(l as usize) {
            Some(e) if *e => *e = false,
            _ => self.retries += 1,
        }
    }
}

impl Observer for Watch<'_> {
    const EVENTS: bool = true;
    const COVER: bool = true;

    fn event(&mut self, e: Event) {
        let c = &mut self.counts;
        match e {
            Event::Sql { stmt, reply, .. } => {
                let locking = match &stmt {
                    SqlStmt::Select { lock, .. } => lock.is_some(),
                    SqlStmt::Update { .. } | SqlStmt::Delete { .. } | SqlStmt::Insert { .. } => {
                        true
                    }
                    _ => false,
                };
                c.lock_requests += u64::from(locking);
                // A statement that waits is told twice: when it waits (no reply) and when
                // it ends.
                let ended = !matches!(reply, Reply::None);
                if ended && matches!(stmt, SqlStmt::Update { .. } | SqlStmt::Delete { .. }) {
                    c.writes += 1;
                    c.empty_writes += u64::from(matches!(reply, Reply::Count(0)));
                }
                if let Reply::Error(r) = reply {
                    self.errors.push(r.code);
                }
            }
            Event::Lock { .. } => c.lock_requests += 1,
            Event::Waits { wait, .. } => {
                let lock = matches!(wait, Wait::Row { .. } | Wait::Gap { .. } | Wait::Mutex(_));
                c.lock_waits += u64::from(lock);
            }
            Event::Deadlock { .. } => self.deadlocks += 1,
            Event::KeyExpired { .. } => self.expiries += 1,
            _ => {}
        }
    }

    fn ran(&mut self, _pid: Pid, pc: u32) {
        if self.rounds.is_some() {
            self.ran.push(pc);
        }
    }
}

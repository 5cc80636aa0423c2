//! What a simulation measures: counts, durations and their distribution, per process
//! group. Runs are measured apart and merged in run order, so the figures do not depend on
//! how runs were spread over threads.

use std::collections::BTreeMap;

/// The figures of one group of processes (requests of one kind).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct GroupTally {
    /// Requests that ended with `return`/the end, by outcome label (`done` when unlabelled).
    pub outcomes: BTreeMap<String, u64>,
    /// Requests that ended on an error nothing caught, by code.
    pub failed: BTreeMap<String, u64>,
    /// Every error a statement or command returned (caught or not), by code.
    pub errors: BTreeMap<String, u64>,
    /// Ticks from arrival (or start) to the end, for each request that ended.
    pub latency: Vec<u32>,
    /// Rounds of `repeat`/`retry` after the first, for each request that ended.
    pub retries: Vec<u32>,
    /// Lock requests: locking SQL statements (`FOR UPDATE`/`SHARE`, UPDATE, DELETE, INSERT)
    /// and `lock` of a mutex.
    pub lock_requests: u64,
    /// Lock requests that had to wait.
    pub lock_waits: u64,
    /// Ticks each wait for a row, gap or mutex lasted.
    pub wait_time: Vec<u32>,
    /// Ticks each wait for a connection of a pool lasted (`pool P size N`).
    pub pool_wait: Vec<u32>,
    /// Ticks each wait for a database worker lasted (`db workers N`).
    pub worker_wait: Vec<u32>,
    /// UPDATE/DELETE statements run, and those that matched no row (a version check lost).
    pub writes: u64,
    pub empty_writes: u64,
}

/// The figures of one run, or of several merged.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Tally {
    pub groups: Vec<GroupTally>,
    /// Steps taken (process steps and the environment's).
    pub events: u64,
    /// Model time simulated, in ticks (summed over runs).
    pub time: u64,
    /// Runs merged.
    pub runs: u64,
    /// Deadlocks the database detected (each picks one victim).
    pub deadlocks: u64,
    /// Redis keys that expired.
    pub expiries: u64,
    /// Faults that struck.
    pub faults: u64,
    /// Ticks × requests in flight, summed over time (Little's L is this over `time`).
    pub in_flight_area: u128,
    /// Ticks each mutex was held (index = mutex; every instance's copy counted).
    pub mutex_held: Vec<u64>,
}

impl Tally {
    #[must_use]
    pub fn new(groups: usize, mutexes: usize) -> Self {
        Tally {
            groups: vec![GroupTally::default(); groups],
            mutex_held: vec![0; mutexes],
            ..Tally::default()
        }
    }

    /// Adds `other`'s figures after this one's.
    pub fn merge(&mut self, other: &Tally) {
        if self.groups.len() < other.groups.len() {
            self.groups.resize(other.groups.len(), GroupTally::default());
        }
        if self.mutex_held.len() < other.mutex_held.len() {
            self.mutex_held.resize(other.mutex_held.len(), 0);
        }
        for (g, o) in self.groups.iter_mut().zip(&other.groups) {
            g.merge(o);
        }
        for (a, b) in self.mutex_held.iter_mut().zip(&other.mutex_held) {
            *a += b;
        }
        self.events += other.events;
        self.time += other.time;
        self.runs += other.runs;
        self.deadlocks += other.deadlocks;
        self.expiries += other.expiries;
        self.faults += other.faults;
        self.in_flight_area += other.in_flight_area;
    }

    /// Every group's figures as one.
    #[must_use]
    pub fn overall(&self) -> GroupTally {
        let mut all = GroupTally::default();
        for g in &self.groups {
            all.merge(g);
        }
        all
    }
}

impl GroupTally {
    pub fn merge(&mut self, o: &GroupTally) {
        for (into, from) in [
            (&mut self.outcomes, &o.outcomes),
            (&mut self.failed, &o.failed),
            (&mut self.errors, &o.errors),
        ] {
            for (k, v) in from {
                *into.entry(k.clone()).or_default() += v;
            }
        }
        self.latency.extend_from_slice(&o.latency);
        self.retries.extend_from_slice(&o.retries);
        self.wait_time.extend_from_slice(&o.wait_time);
        self.pool_wait.extend_from_slice(&o.pool_wait);
        self.worker_wait.extend_from_slice(&o.worker_wait);
        self.lock_requests += o.lock_requests;
        self.lock_waits += o.lock_waits;
        self.writes += o.writes;
        self.empty_writes += o.empty_writes;
    }

    /// Books a request that ended with `status` after `latency` (in the tally's unit) and
    /// `retries` rounds; false when the status is not an end (the request is not booked).
    pub fn end_request(
        &mut self,
        m: &crate::ir::Model,
        status: crate::world::process::Status,
        latency: u32,
        retries: u32,
    ) -> bool {
        use crate::world::process::Status;
        let (into, key) = match status {
            Status::Done(o) => (
                &mut self.outcomes,
                o.map_or("done", |o| m.symbol(o)).to_string(),
            ),
            Status::Errored(code) => (&mut self.failed, m.symbol(code).to_string()),
            _ => return false,
        };
        *into.entry(key).or_default() += 1;
        self.latency.push(latency);
        self.retries.push(retries);
        true
    }

    /// Requests that ended, either way.
    #[must_use]
    pub fn ended(&self) -> u64 {
        self.outcomes.values().sum::<u64>() + self.failed.values().sum::<u64>()
    }

    /// Attempts that ended in a retry, over all attempts (each request's first try and its
    /// retries): the conflict rate of an optimistic strategy.
    #[must_use]
    pub fn retry_rate(&self) -> f64 {
        let retries: u64 = self.retries.iter().map(|&r| u64::from(r)).sum();
        ratio(retries, retries + self.retries.len() as u64)
    }

    /// Lock requests that had to wait, over all lock requests: the conflict rate of a
    /// pessimistic strategy.
    #[must_use]
    pub fn wait_rate(&self) -> f64 {
        ratio(self.lock_waits, self.lock_requests)
    }

    /// Retries per request: how many requests needed 0, 1, 2, … retries.
    #[must_use]
    pub fn retry_histogram(&self) -> Vec<u64> {
        let top = self.retries.iter().copied().max().unwrap_or(0) as usize;
        let mut h = vec![0; top + 1];
        for &r in &self.retries {
            h[r as usize] += 1;
        }
        h
    }
}

/// `a / b`, 0 when `b` is 0.
#[must_use]
pub fn ratio(a: u64, b: u64) -> f64 {
    if b == 0 {
        0.0
    } else {
        a as f64 / b as f64
    }
}

/// The `q`-quantile (0 ≤ q ≤ 1) of `v` by the nearest-rank method; 0 for no values.
#[must_use]
pub fn quantile(v: &[u32], q: f64) -> u32 {
    if v.is_empty() {
        return 0;
    }
    let mut s = v.to_vec();
    let rank = ((q * s.len() as f64).ceil() as usize).clamp(1, s.len());
    *s.select_nth_unstable(rank - 1).1
}

/// The mean of `v`; 0 for no values.
#[must_use]
pub fn mean(v: &[u32]) -> f64 {
    if v.is_empty() {
        0.0
    } else {
        v.iter().map(|&x| f64::from(x)).sum::<f64>() / v.len() as f64
    }
}

//! `simulate`'s results as a user reads them: figures per process group, in text, JSON
//! (docs/json.md, "Simulation") and CSV, and the counterexample of a run that broke a
//! property, replayed as `check` shows it.

use serde_json::{json, Value};

use crate::sim::tally::{mean, quantile, ratio, GroupTally};
use crate::sim::Report;
use crate::Model;

/// The version of the JSON document `--format json` prints for `simulate`.
pub const SIMULATION_JSON_VERSION: u32 = 1;

/// How to simulate a model.
#[derive(Clone, Debug)]
pub struct SimulateOptions {
    /// The seed every run's random source is derived from, with the run's number.
    pub seed: u64,
    /// Independent runs.
    pub runs: u64,
    /// Model time during which requests start, per run, in milliseconds; the run then lets
    /// the requests in flight end (for at most as long again).
    pub duration_ms: u64,
    /// At most this many steps a run.
    pub max_events: u64,
    /// Threads the runs are spread over; the figures do not depend on it.
    pub threads: usize,
    /// Stop after this many seconds of wall-clock time (the runs done are reported).
    pub time_limit: Option<u64>,
}

impl Default for SimulateOptions {
    fn default() -> Self {
        SimulateOptions {
            seed: 1,
            runs: 10,
            duration_ms: 10_000,
            max_events: 50_000_000,
            threads: 1,
            time_limit: None,
        }
    }
}

/// The figures of one process group (or of all, as `all`), ready to print or compare.
#[derive(Clone, Debug, PartialEq)]
pub struct Figures {
    /// The group, as `buyer[100]`, or `all`.
    pub group: String,
    /// Requests that ended, either way.
    pub requests: u64,
    /// Requests that ended well, by outcome label.
    pub outcomes: Vec<(String, u64)>,
    /// Requests that ended on an uncaught error, by code.
    pub failed: Vec<(String, u64)>,
    /// Errors returned by statements (caught or not), by code.
    pub errors: Vec<(String, u64)>,
    /// Requests ended per second of model time.
    pub throughput: f64,
    /// Mean `repeat`/`retry` rounds after the first, per request.
    pub retries_per_request: f64,
    /// Requests by number of retries (index = retries).
    pub retry_histogram: Vec<u64>,
    /// Attempts that ended in a retry, over all attempts.
    pub retry_rate: f64,
    /// Lock requests that had to wait, over all lock requests.
    pub wait_rate: f64,
    /// Locking statements and `lock`s.
    pub lock_requests: u64,
    /// UPDATE/DELETE statements.
    pub writes: u64,
    /// UPDATE/DELETE statements that matched no row.
    pub empty_writes: u64,
    /// Mean lock wait, in milliseconds.
    pub lock_wait_mean_ms: f64,
    /// 99th percentile of the lock waits, in milliseconds.
    pub lock_wait_p99_ms: f64,
    /// Waits for a connection of a pool (`pool P size N`).
    pub pool_waits: u64,
    /// Their mean, in milliseconds.
    pub pool_wait_mean_ms: f64,
    /// Their 99th percentile.
    pub pool_wait_p99_ms: f64,
    /// Waits for a database's or a Redis server's worker (`db workers N`, `redis workers N`).
    pub worker_waits: u64,
    /// Their mean, in milliseconds.
    pub worker_wait_mean_ms: f64,
    /// Their 99th percentile.
    pub worker_wait_p99_ms: f64,
    /// Mean time from arrival to the end of a request, in milliseconds.
    pub latency_mean_ms: f64,
    /// Median time from arrival to the end of a request.
    pub latency_p50_ms: f64,
    /// 95th percentile of it.
    pub latency_p95_ms: f64,
    /// 99th percentile of it.
    pub latency_p99_ms: f64,
    /// The longest.
    pub latency_max_ms: f64,
}

/// How far a running simulation has got: `steps` taken and `runs` done, over every thread
/// (atomic counters; read them with `load`).
pub use crate::sim::Progress as SimProgress;

/// What `simulate` measured.
#[derive(Clone, Debug)]
pub struct Simulation {
    model: Model,
    opts: SimulateOptions,
    report: Report,
    stopped: bool,
}

impl Model {
    /// Simulates the model under its workload: `opts.runs` seeded runs of the same steps
    /// `check` explores, timed by the latencies the model declares.
    #[must_use]
    pub fn simulate(&self, opts: &SimulateOptions) -> Simulation {
        self.simulate_watched(opts, &SimProgress::default())
    }

    /// [`Model::simulate`], telling `progress` how far it has got as it goes (another
    /// thread may read it for a progress line; the figures do not depend on it).
    #[must_use]
    pub fn simulate_watched(&self, opts: &SimulateOptions, progress: &SimProgress) -> Simulation {
        let m = &self.ir;
        let tick = m.tick_ms.max(1);
        let horizon = opts.duration_ms.div_ceil(tick);
        let sim = crate::sim::SimOptions {
            seed: opts.seed,
            runs: opts.runs,
            bounds: crate::sim::Bounds {
                horizon,
                drain: horizon.max(1),
                max_events: opts.max_events,
            },
            threads: opts.threads.max(1),
        };
        let limits = crate::Options {
            time_limit: opts.time_limit,
            max_memory: None,
            ..crate::Options::default()
        };
        let stop = crate::explore::Stop::default();
        let report = crate::limits::watched(&limits, &stop, || {
            crate::sim::simulate(m, sim, &stop, progress)
        });
        Simulation {
            model: self.clone(),
            opts: opts.clone(),
            stopped: report.runs < opts.runs,
            report,
        }
    }
}

impl Simulation {
    /// The model simulated.
    #[must_use]
    pub fn model(&self) -> &Model {
        &self.model
    }

    /// Runs done: fewer than asked when the time limit stopped the simulation.
    #[must_use]
    pub fn runs(&self) -> u64 {
        self.report.runs
    }

    /// The time limit ended the simulation before every run was done.
    #[must_use]
    pub fn stopped(&self) -> bool {
        self.stopped
    }

    /// Steps taken over every run.
    #[must_use]
    pub fn events(&self) -> u64 {
        self.report.tally.events
    }

    /// Model time simulated over every run, in milliseconds.
    #[must_use]
    pub fn model_time_ms(&self) -> u64 {
        self.report.tally.time * self.model.ir.tick_ms
    }

    /// Runs that broke a property (or deadlocked).
    #[must_use]
    pub fn violated_runs(&self) -> u64 {
        self.report.violated_runs
    }

    /// Deadlocks the database detected, over every run.
    #[must_use]
    pub fn deadlocks(&self) -> u64 {
        self.report.tally.deadlocks
    }

    /// Faults that struck, over every run (each unit of a fault's budget strikes once a run
    /// when it can: docs/semantics.md, SIM-6).
    #[must_use]
    pub fn faults(&self) -> u64 {
        self.report.tally.faults
    }

    /// The counterexample of the first run that broke a property: its trace, as `check`
    /// prints it, replayable with `check --path`.
    #[must_use]
    pub fn violation(&self) -> Option<crate::Trace> {
        let (_, failure, path) = self.report.violation.as_ref()?;
        crate::trace::replay(&self.model.ir, path, Some(*failure)).ok()
    }

    /// The name of the property the first violating run broke.
    #[must_use]
    pub fn violated_property(&self) -> Option<String> {
        let (_, f, _) = self.report.violation.as_ref()?;
        Some(f.name(&self.model.ir))
    }

    /// Whether a run broke a property the model expects to hold (the exit code 1).
    #[must_use]
    pub fn unexpected_violation(&self) -> bool {
        match (&self.report.violation, &self.model.ir.expect) {
            (None, _) => false,
            (Some((_, f, _)), crate::ir::Expect::Violated(name)) => f.name(&self.model.ir) != *name,
            (Some((_, crate::Failure::Deadlock, _)), crate::ir::Expect::Deadlock) => false,
            (Some(_), _) => true,
        }
    }

    /// Little's law on the runs: (L, λ, W) — requests in flight on average, requests ended
    /// per millisecond, mean time in the system in milliseconds.
    #[must_use]
    pub fn little(&self) -> (f64, f64, f64) {
        let t = &self.report.tally;
        let tick = self.model.ir.tick_ms as f64;
        let time = t.time as f64 * tick;
        let all = t.overall();
        let l = if time > 0.0 {
            t.in_flight_area as f64 * tick / time
        } else {
            0.0
        };
        let lambda = if time > 0.0 {
            all.latency.len() as f64 / time
        } else {
            0.0
        };
        (l, lambda, mean(&all.latency) * tick)
    }

    /// Share of the model time each mutex was held, by name (every instance's copy summed).
    #[must_use]
    pub fn mutex_utilisation(&self) -> Vec<(String, f64)> {
        let t = &self.report.tally;
        let time = t.time as f64;
        self.model
            .ir
            .mutexes
            .iter()
            .zip(&t.mutex_held)
            .map(|(n, &h)| (n.clone(), if time > 0.0 { h as f64 / time } else { 0.0 }))
            .collect()
    }

    /// Mean wait for a lock, in milliseconds, over every group.
    #[must_use]
    pub fn mean_lock_wait_ms(&self) -> f64 {
        let all = self.report.tally.overall();
        let waits: u64 = all.wait_time.iter().map(|&w| u64::from(w)).sum();
        ratio(waits, all.latency.len() as u64) * self.model.ir.tick_ms as f64
    }

    /// The figures of every group, then of all of them together (`all`).
    #[must_use]
    pub fn figures(&self) -> Vec<Figures> {
        let m = &self.model.ir;
        let t = &self.report.tally;
        let mut out: Vec<Figures> = m
            .groups
            .iter()
            .zip(&t.groups)
            .map(|(g, gt)| self.figures_of(&label(&g.name, g.count), gt))
            .collect();
        if m.groups.len() > 1 {
            out.push(self.figures_of("all", &t.overall()));
        }
        out
    }

    fn figures_of(&self, group: &str, g: &GroupTally) -> Figures {
        let tick = self.model.ir.tick_ms as f64;
        figures_of(
            group,
            g,
            self.report.tally.time as f64 * tick / 1000.0,
            tick,
        )
    }
}

impl Simulation {
    /// The report as text: a table of figures, what ended how, and the verdict on the
    /// properties (≤ 100 columns).
    #[must_use]
    pub fn text(&self) -> String {
        crate::simulation_text::render(self)
    }

    /// The CSV rows (a header first): one row per group and `all`.
    #[must_use]
    pub fn csv(&self, with_header: bool, extra: &[(&str, &str)]) -> String {
        let mut out = String::new();
        if with_header {
            let mut head: Vec<&str> = vec!["model"];
            head.extend(extra.iter().map(|(k, _)| *k));
            head.extend(CSV_COLUMNS);
            out.push_str(&head.join(","));
            out.push('\n');
        }
        for f in self.figures() {
            let mut row = vec![csv_field(self.model.origin())];
            row.extend(extra.iter().map(|(_, v)| csv_field(v)));
            row.extend(csv_values(&f));
            out.push_str(&row.join(","));
            out.push('\n');
        }
        out
    }

    /// The report as the versioned JSON document of docs/json.md ("Simulation").
    #[must_use]
    pub fn json(&self) -> Value {
        let m = &self.model.ir;
        let (l, lambda, w) = self.little();
        let violation = self.report.violation.as_ref().map(|(run, f, _)| {
            let trace = self.violation();
            json!({
                "run": run,
                "property": f.name(m),
                "token": trace.as_ref().map(|t| t.token(&self.model)),
                "trace": trace.map(|t| t.json(&self.model)),
            })
        });
        json!({
            "version": SIMULATION_JSON_VERSION,
            "model": self.model.origin(),
            "name": self.model.name(),
            "flavour": self.model.flavour().map(crate::Flavour::name),
            "seed": self.opts.seed,
            "runs": self.report.runs,
            "runs_asked": self.opts.runs,
            "duration_ms": self.opts.duration_ms,
            "tick_ms": m.tick_ms,
            "model_time_ms": self.model_time_ms(),
            "events": self.report.tally.events,
            "groups": self.figures().iter().map(figures_json).collect::<Vec<_>>(),
            "deadlocks": self.report.tally.deadlocks,
            "ttl_expiries": self.report.tally.expiries,
            "faults": self.report.tally.faults,
            "unfinished": self.report.unfinished,
            "mutex_utilisation": self.mutex_utilisation().into_iter()
                .map(|(n, u)| json!({"mutex": n, "share": round(u)})).collect::<Vec<_>>(),
            "little": {"in_flight": round(l), "per_ms": round(lambda), "time_ms": round(w)},
            "violated_runs": self.report.violated_runs,
            "violation": violation,
        })
    }
}

/// `buyer[100]`, or `buyer` for a group of one.
pub(crate) fn label(name: &str, count: usize) -> String {
    if count == 1 {
        name.to_string()
    } else {
        format!("{name}[{count}]")
    }
}

/// Six significant decimals: enough, and stable to print.
fn round(x: f64) -> f64 {
    (x * 1e6).round() / 1e6
}

pub(crate) fn figures_json(f: &Figures) -> Value {
    let pairs = |v: &[(String, u64)]| {
        let mut o = serde_json::Map::new();
        for (k, n) in v {
            o.insert(k.clone(), json!(n));
        }
        Value::Object(o)
    };
    json!({
        "group": f.group,
        "requests": f.requests,
        "outcomes": pairs(&f.outcomes),
        "failed": pairs(&f.failed),
        "errors": pairs(&f.errors),
        "throughput_per_s": round(f.throughput),
        "retries": {
            "per_request": round(f.retries_per_request),
            "histogram": f.retry_histogram,
            "rate": round(f.retry_rate),
        },
        "lock_requests": f.lock_requests,
        "wait_rate": round(f.wait_rate),
        "writes": f.writes,
        "empty_writes": f.empty_writes,
        "lock_wait_ms": {"mean": round(f.lock_wait_mean_ms), "p99": f.lock_wait_p99_ms},
        "pool_wait_ms": {
            "count": f.pool_waits, "mean": round(f.pool_wait_mean_ms), "p99": f.pool_wait_p99_ms,
        },
        "worker_wait_ms": {
            "count": f.worker_waits, "mean": round(f.worker_wait_mean_ms),
            "p99": f.worker_wait_p99_ms,
        },
        "latency_ms": {
            "mean": round(f.latency_mean_ms),
            "p50": f.latency_p50_ms,
            "p95": f.latency_p95_ms,
            "p99": f.latency_p99_ms,
            "max": f.latency_max_ms,
        },
    })
}

/// The CSV columns after `model` (and any swept parameters).
pub const CSV_COLUMNS: [&str; 18] = [
    "group",
    "requests",
    "failed",
    "throughput_per_s",
    "retries_per_request",
    "retry_rate",
    "wait_rate",
    "lock_wait_mean_ms",
    "lock_wait_p99_ms",
    "latency_mean_ms",
    "latency_p50_ms",
    "latency_p95_ms",
    "latency_p99_ms",
    "latency_max_ms",
    "pool_waits",
    "pool_wait_p99_ms",
    "worker_waits",
    "worker_wait_p99_ms",
];

fn csv_values(f: &Figures) -> Vec<String> {
    let failed: u64 = f.failed.iter().map(|(_, n)| n).sum();
    let x = |v: f64| format!("{}", round(v));
    vec![
        csv_field(&f.group),
        f.requests.to_string(),
        failed.to_string(),
        x(f.throughput),
        x(f.retries_per_request),
        x(f.retry_rate),
        x(f.wait_rate),
        x(f.lock_wait_mean_ms),
        x(f.lock_wait_p99_ms),
        x(f.latency_mean_ms),
        x(f.latency_p50_ms),
        x(f.latency_p95_ms),
        x(f.latency_p99_ms),
        x(f.latency_max_ms),
        f.pool_waits.to_string(),
        x(f.pool_wait_p99_ms),
        f.worker_waits.to_string(),
        x(f.worker_wait_p99_ms),
    ]
}

/// A CSV field, quoted when it holds a comma, a quote or a line break (RFC 4180).
fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// The figures of group `group`'s tally `g`, measured over `seconds`, its durations in units
/// of `tick` milliseconds (a model's tick for `simulate`, a microsecond for `load`).
pub(crate) fn figures_of(group: &str, g: &GroupTally, seconds: f64, tick: f64) -> Figures {
    let ms = |v: u32| f64::from(v) * tick;
    let list = |m: &std::collections::BTreeMap<String, u64>| {
        m.iter().map(|(k, v)| (k.clone(), *v)).collect::<Vec<_>>()
    };
    let retries: u64 = g.retries.iter().map(|&r| u64::from(r)).sum();
    Figures {
        group: group.to_string(),
        requests: g.ended(),
        outcomes: list(&g.outcomes),
        failed: list(&g.failed),
        errors: list(&g.errors),
        throughput: if seconds > 0.0 {
            g.ended() as f64 / seconds
        } else {
            0.0
        },
        retries_per_request: ratio(retries, g.retries.len() as u64),
        retry_histogram: g.retry_histogram(),
        retry_rate: g.retry_rate(),
        wait_rate: g.wait_rate(),
        lock_requests: g.lock_requests,
        writes: g.writes,
        empty_writes: g.empty_writes,
        lock_wait_mean_ms: mean(&g.wait_time) * tick,
        lock_wait_p99_ms: ms(quantile(&g.wait_time, 0.99)),
        pool_waits: g.pool_wait.len() as u64,
        pool_wait_mean_ms: mean(&g.pool_wait) * tick,
        pool_wait_p99_ms: ms(quantile(&g.pool_wait, 0.99)),
        worker_waits: g.worker_wait.len() as u64,
        worker_wait_mean_ms: mean(&g.worker_wait) * tick,
        worker_wait_p99_ms: ms(quantile(&g.worker_wait, 0.99)),
        latency_mean_ms: mean(&g.latency) * tick,
        latency_p50_ms: ms(quantile(&g.latency, 0.50)),
        latency_p95_ms: ms(quantile(&g.latency, 0.95)),
        latency_p99_ms: ms(quantile(&g.latency, 0.99)),
        latency_max_ms: ms(quantile(&g.latency, 1.0)),
    }
}

//! interlock: a deterministic concurrency simulator and explicit-state model checker for the
//! ways backend services protect shared data — in-process mutexes, Redis locks, database row
//! locks and optimistic versions.
//!
//! A [`Model`] is read from a `.model` file (or text); [`Model::check`] explores every
//! interleaving and returns a [`Verdict`]: what was found ([`Outcome`]), whether the model
//! expected it, the search's [`Stats`], the counterexample as a [`Trace`], and what the search
//! did not cover ([`Coverage`], [`Warning`]s). [`Options`] bound and shape the search.
//!
//! ```no_run
//! let verdict = interlock::Model::from_file("models/optimistic/version-check.model")
//!     .unwrap()
//!     .check();
//! verdict.assert_holds(); // on failure, panics with the rendered counterexample
//! ```
//!
//! In a crate's own tests, searches want an optimised build: add to its `Cargo.toml`
//! `[profile.test.package.interlock] opt-level = 3` (a debug build runs them about 13 times
//! slower).
#![cfg_attr(not(feature = "internals"), warn(missing_docs))]

/// The engine's modules: private, but public (and hidden from the documentation) under the
/// `internals` feature, which this crate's own tests and benchmarks turn on. Nothing outside
/// them should depend on them: they change without notice.
macro_rules! internal {
    ($($name:ident),* $(,)?) => {
        $(
            #[cfg(feature = "internals")]
            #[doc(hidden)]
            #[allow(missing_docs)]
            pub mod $name;
            #[cfg(not(feature = "internals"))]
            #[allow(dead_code, unused_imports)]
            mod $name;
        )*
    };
}

internal!(exec, explore, ir, lang, sim, trace, world);

mod explain;
pub mod html;
pub mod json;
mod limits;
/// The model's processes as real concurrent clients of a real server (feature `servers`).
#[cfg(feature = "servers")]
pub mod load;
pub mod matrix;
/// Replay of a trace on a real server (feature `servers`).
#[cfg(feature = "servers")]
pub mod replay;
pub mod schedules;
/// Clients of real servers: sessions, scratch databases, lock-wait detection.
#[cfg(feature = "servers")]
pub mod servers;
mod simulation;
mod simulation_text;
mod verdict;
mod warnings;

pub use explore::coverage::{Coverage, End, OpCount};
pub use explore::probe::Probe;
pub use explore::{Bound, Failure, Options, Outcome, Progress, Stats, StepMemo};
pub use ir::value::{Pid, Sym};
pub use ir::Flavour;
pub use lang::{Diagnostic, Diagnostics, ParseOptions};
pub use schedules::ScheduleRun;
pub use simulation::{Figures, SimProgress, SimulateOptions, Simulation, SIMULATION_JSON_VERSION};
pub use trace::schedule::{Cause, Driver, ScheduleError};
pub use trace::states::MAX_STATES as STATE_GRAPH_MAX;
pub use trace::token::TokenError;
pub use trace::Trace;
pub use verdict::Verdict;
pub use warnings::Warning;

use std::path::Path;
use std::sync::Arc;

/// The largest model file read, in bytes.
const MAX_FILE: u64 = 16 << 20;

/// A parsed, resolved model, ready to check.
#[derive(Clone, Debug)]
pub struct Model {
    ir: Arc<ir::Model>,
}

/// Why a model could not be loaded. Its `Debug` is its `Display`, the rendered
/// diagnostics with their carets, so that `Model::from_file(…).unwrap()` shows them.
pub enum Error {
    /// The file could not be read.
    Io {
        /// The file, as given.
        path: String,
        /// Why not.
        source: std::io::Error,
    },
    /// The text has mistakes; every one found is listed.
    Invalid(Diagnostics),
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Error::Io { path, source } => write!(f, "error: cannot read {path}: {source}"),
            Error::Invalid(d) => write!(f, "{}", d.render()),
        }
    }
}

impl std::fmt::Debug for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Display::fmt(self, f)
    }
}

impl std::error::Error for Error {}

impl Model {
    /// Reads and parses a `.model` file.
    ///
    /// # Errors
    /// [`Error::Io`] when the file cannot be read, [`Error::Invalid`] when it has mistakes.
    pub fn from_file(path: impl AsRef<Path>) -> Result<Self, Error> {
        Self::from_file_with(path, &ParseOptions::default())
    }

    /// [`Model::from_file`] with options: another flavour, `param` values (`--set`).
    ///
    /// # Errors
    /// As [`Model::from_file`].
    pub fn from_file_with(path: impl AsRef<Path>, opts: &ParseOptions) -> Result<Self, Error> {
        let path = path.as_ref();
        let shown = path.display().to_string();
        let io = |source| Error::Io {
            path: shown.clone(),
            source,
        };
        let mut bytes = Vec::new();
        let file = std::fs::File::open(path).map_err(io)?;
        if file.metadata().map_err(io)?.is_dir() {
            let e = std::io::Error::new(std::io::ErrorKind::InvalidInput, "it is a folder");
            return Err(io(e));
        }
        // A model is a few kilobytes: reading stops past the limit (`/dev/zero` never ends).
        std::io::Read::read_to_end(&mut std::io::Read::take(file, MAX_FILE + 1), &mut bytes)
            .map_err(io)?;
        if bytes.len() as u64 > MAX_FILE {
            let e = std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                format!(
                    "it is larger than {} MiB, far more than a model",
                    MAX_FILE >> 20
                ),
            );
            return Err(io(e));
        }
        match String::from_utf8(bytes) {
            Ok(text) => Self::parse_with(&shown, &text, opts),
            Err(e) => Err(Error::Invalid(lang::not_utf8(
                &shown,
                e.as_bytes(),
                e.utf8_error(),
            ))),
        }
    }

    /// Parses model text; `origin` names it in messages.
    ///
    /// # Errors
    /// [`Error::Invalid`] with every mistake found.
    pub fn parse(origin: &str, text: &str) -> Result<Self, Error> {
        Self::parse_with(origin, text, &ParseOptions::default())
    }

    /// Parses model text with options (e.g. another database flavour than the file's).
    ///
    /// # Errors
    /// [`Error::Invalid`] with every mistake found.
    pub fn parse_with(origin: &str, text: &str, opts: &ParseOptions) -> Result<Self, Error> {
        lang::parse_with(origin, text, opts)
            .map(|ir| Model { ir: Arc::new(ir) })
            .map_err(Error::Invalid)
    }

    /// The model with one more declaration in the model language — a property, a fault, an
    /// expectation — as if it ended the file. This is how Rust code declares properties:
    /// `model.with_declaration("eventually all_done: done = 2")?.check()`.
    ///
    /// # Errors
    /// [`Error::Invalid`] when the declaration has mistakes (reported at its line, after the
    /// file's own).
    pub fn with_declaration(&self, declaration: &str) -> Result<Self, Error> {
        let text = format!("{}\n{declaration}\n", self.ir.source.trim_end());
        let flavour = self.flavour();
        let m = Self::parse(&self.ir.origin, &text)?;
        match flavour {
            Some(f) if m.flavour() != Some(f) => m.with_flavour(f),
            _ => Ok(m),
        }
    }

    /// The model priced by a cost file's `latency` (and `param`) lines, as if they ended the
    /// file (`simulate --cost`, `check --cost`).
    ///
    /// # Errors
    /// [`Error::Io`] when the file cannot be read; [`Error::Invalid`] when it holds more than
    /// costs or has mistakes, or when it prices a kind the model already prices.
    pub fn with_costs(&self, path: impl AsRef<Path>) -> Result<Self, Error> {
        let path = path.as_ref();
        let shown = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|source| Error::Io {
            path: shown.clone(),
            source,
        })?;
        lang::check_costs(&shown, &text).map_err(Error::Invalid)?;
        let source = format!("{}\n{}\n", self.ir.source.trim_end(), text.trim_end());
        let opts = ParseOptions {
            db: self.flavour(),
            set: self.settings(),
        };
        let mut m = Self::parse_with(&self.ir.origin, &source, &opts)?;
        Arc::make_mut(&mut m.ir).costs = Some(shown);
        Ok(m)
    }

    /// The same model against another database flavour (`--db`), with the expectation the
    /// file states for that flavour.
    ///
    /// # Errors
    /// [`Error::Invalid`] when the model uses what the flavour does not have (e.g. `FOR NO KEY
    /// UPDATE` on MySQL).
    pub fn with_flavour(&self, flavour: Flavour) -> Result<Self, Error> {
        let opts = ParseOptions {
            db: Some(flavour),
            set: self.settings(),
        };
        let mut m = Self::parse_with(&self.ir.origin, &self.ir.source, &opts)?;
        Arc::make_mut(&mut m.ir).costs.clone_from(&self.ir.costs);
        Ok(m)
    }

    /// The `param` values in force, as `--set` would give them (so a re-read keeps them).
    fn settings(&self) -> Vec<(String, String)> {
        self.ir.workload.params.clone()
    }

    /// The model once per flavour it states expectations for (`expect postgres, mysql: …`),
    /// or just itself when its expectations name no flavour.
    ///
    /// # Errors
    /// As [`Model::with_flavour`].
    pub fn variants(&self) -> Result<Vec<Self>, Error> {
        if self.ir.expect_flavours.is_empty() {
            return Ok(vec![self.clone()]);
        }
        self.ir
            .expect_flavours
            .iter()
            .map(|&f| self.with_flavour(f))
            .collect()
    }

    /// The database flavour, if the model has a database.
    #[must_use]
    pub fn flavour(&self) -> Option<Flavour> {
        self.ir.db.as_ref().map(|d| d.flavour)
    }

    /// Parses model text that did not come from a file.
    ///
    /// # Errors
    /// [`Error::Invalid`] with every mistake found.
    #[allow(clippy::should_implement_trait)] // the documented API name; `FromStr` is implemented too
    pub fn from_str(text: &str) -> Result<Self, Error> {
        Self::parse("<string>", text)
    }

    /// The resolved model (the engine's view of it).
    #[cfg(feature = "internals")]
    #[doc(hidden)]
    #[must_use]
    pub fn ir(&self) -> &ir::Model {
        &self.ir
    }

    /// The resolved model, inside the crate.
    #[cfg(not(feature = "internals"))]
    #[allow(dead_code)] // the verdict and JSON modules reach it when the command line does
    pub(crate) fn ir(&self) -> &ir::Model {
        &self.ir
    }

    /// The title, as `model "…"` gives it.
    #[must_use]
    pub fn name(&self) -> &str {
        &self.ir.name
    }

    /// The lesson, as `about "…"` gives it.
    #[must_use]
    pub fn about(&self) -> &str {
        &self.ir.about
    }

    /// The `tags` lines' `NAME=value` pairs, in the order written (docs/language.md, "Tags").
    #[must_use]
    pub fn tags(&self) -> &[(String, String)] {
        &self.ir.tags
    }

    /// The value of one tag (`strategy`, `fault`, `lesson`), if the model gives it.
    #[must_use]
    pub fn tag(&self, name: &str) -> Option<&str> {
        let found = self.ir.tags.iter().find(|(n, _)| n == name);
        found.map(|(_, v)| v.as_str())
    }

    /// Where the text came from (a path, or `<string>`): messages and replay lines name it.
    #[must_use]
    pub fn origin(&self) -> &str {
        &self.ir.origin
    }

    /// What `interlock explain` prints: the lesson, the world, each process group's steps with
    /// their model lines, the environment's moves and faults, the properties, and for each
    /// flavour the file is checked on its expectation and the rules of docs/semantics.md that
    /// apply. Nothing is searched.
    ///
    /// # Errors
    /// As [`Model::variants`].
    pub fn explain(&self) -> Result<String, Error> {
        let variants = self.variants()?;
        let irs: Vec<&ir::Model> = variants.iter().map(|v| &*v.ir).collect();
        Ok(explain::render(&irs))
    }

    /// The expectation, as the `expect` line says it: `holds`, `violated NAME`, `deadlock`,
    /// or `nothing stated` for a flavour the file states nothing for.
    #[must_use]
    pub fn expected(&self) -> String {
        match &self.ir.expect {
            ir::Expect::Holds => "holds".to_string(),
            ir::Expect::Violated(n) => format!("violated {n}"),
            ir::Expect::Deadlock => "deadlock".to_string(),
            ir::Expect::Unstated => "nothing stated".to_string(),
        }
    }

    /// What a failure is called: the property's name, `deadlock` or `no_runtime_error`.
    #[must_use]
    pub fn failure_name(&self, f: Failure) -> String {
        f.name(&self.ir)
    }

    /// A process's name: `buyer[0]`, or `a` for a group of one.
    #[must_use]
    pub fn process_name(&self, pid: Pid) -> String {
        self.ir.process_name(pid)
    }

    /// The text of a symbol (an error code, an outcome's label, a key's name).
    #[must_use]
    pub fn symbol(&self, sym: Sym) -> &str {
        self.ir.symbol(sym)
    }

    /// Explores every interleaving with no bounds.
    #[must_use]
    pub fn check(&self) -> Verdict {
        self.check_with(Options::default())
    }

    /// Explores every interleaving within the bounds of `opts`.
    #[must_use]
    pub fn check_with(&self, opts: Options) -> Verdict {
        self.check_monitored(opts, &mut |_| None)
    }

    /// As [`Model::check_with`], calling `monitor` with the search's progress every few
    /// thousand states; it may end the search with a bound, which gives an incomplete verdict.
    /// The limits of `opts` (`time_limit`, `max_memory`) are watched on a thread of their own
    /// and hold within one state's expansion, the counterexample pass included.
    #[must_use]
    pub fn check_monitored(
        &self,
        mut opts: Options,
        monitor: &mut dyn FnMut(&explore::Progress) -> Option<explore::Bound>,
    ) -> Verdict {
        if opts.threads == 0 {
            opts.threads =
                std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get);
        }
        let started = std::time::Instant::now();
        let stop = explore::Stop::default();
        let (outcome, stats, coverage) = limits::watched(&opts, &stop, || {
            let mut watch =
                |p: &explore::Progress| monitor(p).or_else(|| limits::store_too_big(&opts, p));
            let (outcome, stats, coverage) =
                explore::explore_with(&self.ir, opts, &mut watch, &stop);
            let outcome = match outcome {
                // Building the trace is part of the search: a limit raised meanwhile holds.
                explore::Outcome::Failed { .. } if stop.raised().is_some() => {
                    let bound = stop.raised().expect("checked");
                    explore::Outcome::Incomplete { bound }
                }
                explore::Outcome::Holds => unreached(&self.ir, &coverage),
                o => o,
            };
            (outcome, stats, coverage)
        });
        let seconds = started.elapsed().as_secs_f64();
        let trace = match &outcome {
            explore::Outcome::Failed {
                failure: explore::Failure::Unreached(_),
                ..
            } => None,
            explore::Outcome::Failed {
                failure,
                path,
                loop_start,
                ..
            } => Some(
                trace::replay(&self.ir, path, Some(*failure))
                    .map(|mut t| {
                        t.loop_start = *loop_start;
                        t
                    })
                    .expect("a path found by the search replays"),
            ),
            _ => None,
        };
        let warnings = warnings::warnings(&self.ir, &outcome, &coverage);
        let schedules = schedules::run_all(&self.ir);
        Verdict {
            model: self.clone(),
            outcome,
            stats,
            seconds,
            trace,
            coverage,
            warnings,
            schedules,
        }
    }
}

impl Model {
    /// A stepping driver at the model's initial state: [`Driver::take`] runs one scheduled
    /// step (`T1`, `tick 100ms`, `fault crash T2`) as a client driver would, then what follows
    /// it on its own (docs/language.md, "Schedules").
    #[must_use]
    pub fn driver(&self) -> Driver<'_> {
        Driver::new(&self.ir)
    }

    /// The trace of a schedule written on one line (`"T1 T2 T1 tick 100ms T2"`), as
    /// `interlock run --schedule` prints it.
    ///
    /// # Errors
    /// The first step that cannot run where it stands, with its number and a hint.
    pub fn run_schedule(&self, schedule: &str) -> Result<trace::Trace, ScheduleError> {
        trace::schedule::run(&self.ir, &trace::schedule::split(schedule))
    }

    /// As [`Model::run_schedule`]; when a step cannot run, the trace of the steps before it
    /// and the error.
    #[must_use]
    pub fn run_schedule_partly(&self, schedule: &str) -> (trace::Trace, Option<ScheduleError>) {
        trace::schedule::run_partly(&self.ir, &trace::schedule::split(schedule))
    }

    /// Runs every `schedule` block of the model and judges the claims of its `expect
    /// schedule` lines for this flavour (`check` runs only the blocks with claims).
    #[must_use]
    pub fn schedule_runs(&self) -> Vec<ScheduleRun> {
        schedules::run_each(&self.ir, false)
    }

    /// Whether the model uses Redis.
    #[must_use]
    pub fn uses_redis(&self) -> bool {
        !self.ir.redis.is_empty()
    }

    /// The names of the model's `schedule` blocks, in order.
    #[must_use]
    pub fn schedule_names(&self) -> Vec<&str> {
        self.ir.schedules.iter().map(|s| s.name.as_str()).collect()
    }

    /// The trace of the path a replay token names (the step names a trace shows, every step
    /// explicit: `buyer[0] buyer[1] tick 100ms …`; see docs/json.md, "Replay tokens"), with what its end
    /// state breaks: the first property by the checker's order, or a deadlock.
    ///
    /// # Errors
    /// The first step of the token that does not fit the model or the path, with a hint.
    pub fn trace_of(&self, token: &str) -> Result<trace::Trace, trace::token::TokenError> {
        let m = &self.ir;
        let read = trace::token::path(m, token)?;
        let path = read.choices;
        let mut bare = trace::replay(m, &path, None).expect("a token's path replays");
        if read.loop_start.is_some() {
            // A lasso: the properties it breaks are about the whole run, not its end.
            bare.loop_start = read.loop_start;
            return Ok(bare);
        }
        let failure = trace::end_failure(m, &bare.end);
        if failure.is_none() {
            return Ok(bare);
        }
        Ok(trace::replay(m, &path, failure).expect("a token's path replays"))
    }
}

#[cfg(feature = "servers")]
impl Model {
    /// Why `t` cannot be replayed on a real server (empty: it can).
    #[must_use]
    pub fn replay_cannot(&self, t: &Trace) -> Vec<String> {
        replay::cannot(&self.ir, t)
    }

    /// Replays `t` on the server `opts` names (docs/replay.md).
    ///
    /// # Errors
    /// The server cannot be reached, or refused the schema or a setting.
    pub fn replay_on(&self, t: &Trace, opts: &replay::Options) -> Result<replay::Report, String> {
        replay::run(&self.ir, t, opts)
    }

    /// Why the model cannot run under `load` (empty: it can).
    #[must_use]
    pub fn load_cannot(&self) -> Vec<String> {
        load::cannot(&self.ir)
    }

    /// Runs the model's processes as concurrent clients of the server `opts` names, and
    /// measures (docs/load.md).
    ///
    /// # Errors
    /// The model cannot run under load, or the server cannot be reached or refused the schema.
    pub fn load_on(&self, opts: &load::Options) -> Result<load::Load, String> {
        load::run(&self.ir, opts)
    }

    /// A load run's report as text (≤ 100 columns).
    #[must_use]
    pub fn load_text(&self, l: &load::Load) -> String {
        load::text(self.origin(), &self.ir, l)
    }

    /// A load run's report as JSON (docs/json.md, "Load").
    #[must_use]
    pub fn load_json(&self, l: &load::Load) -> serde_json::Value {
        load::json(self.origin(), &self.ir, l)
    }
}

/// A search that covered every state: `holds`, unless a `reachable` property met no state.
fn unreached(m: &ir::Model, coverage: &explore::coverage::Coverage) -> explore::Outcome {
    let never = m.properties.iter().enumerate().find(|(i, p)| {
        p.kind == ir::PropertyKind::Reachable && !coverage.reached.get(*i).copied().unwrap_or(false)
    });
    match never {
        Some((i, _)) => explore::Outcome::Failed {
            failure: explore::Failure::Unreached(i),
            path: Vec::new(),
            loop_start: None,
            also: Vec::new(),
        },
        None => explore::Outcome::Holds,
    }
}

impl std::str::FromStr for Model {
    type Err = Error;
    fn from_str(text: &str) -> Result<Self, Error> {
        Self::parse("<string>", text)
    }
}

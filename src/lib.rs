//! interlock: a deterministic concurrency simulator and explicit-state model checker for the
//! ways backend services protect shared data — in-process mutexes, Redis locks, database row
//! locks and optimistic versions.
//!
//! ```no_run
//! let verdict = interlock::Model::from_file("models/optimistic/version-check.model")
//!     .unwrap()
//!     .check();
//! verdict.assert_holds(); // on failure, panics with the rendered counterexample
//! ```

pub mod exec;
pub mod explore;
pub mod ir;
pub mod lang;
pub mod trace;
pub mod verdict;
pub mod world;

pub use explore::Options;
pub use lang::Diagnostics;
pub use verdict::Verdict;

use std::path::Path;
use std::sync::Arc;

/// A parsed, resolved model, ready to check.
#[derive(Clone, Debug)]
pub struct Model {
    ir: Arc<ir::Model>,
}

/// Why a model could not be loaded.
#[derive(Debug)]
pub enum Error {
    /// The file could not be read.
    Io {
        path: String,
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

impl std::error::Error for Error {}

impl Model {
    /// Reads and parses a `.model` file.
    ///
    /// # Errors
    /// [`Error::Io`] when the file cannot be read, [`Error::Invalid`] when it has mistakes.
    pub fn from_file(path: impl AsRef<Path>) -> Result<Self, Error> {
        let path = path.as_ref();
        let shown = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|source| Error::Io {
            path: shown.clone(),
            source,
        })?;
        Self::parse(&shown, &text)
    }

    /// Parses model text; `origin` names it in messages.
    ///
    /// # Errors
    /// [`Error::Invalid`] with every mistake found.
    pub fn parse(origin: &str, text: &str) -> Result<Self, Error> {
        lang::parse(origin, text)
            .map(|ir| Model { ir: Arc::new(ir) })
            .map_err(Error::Invalid)
    }

    /// Parses model text that did not come from a file.
    ///
    /// # Errors
    /// [`Error::Invalid`] with every mistake found.
    #[allow(clippy::should_implement_trait)] // the documented API name; `FromStr` is implemented too
    pub fn from_str(text: &str) -> Result<Self, Error> {
        Self::parse("<string>", text)
    }

    /// The resolved model.
    #[must_use]
    pub fn ir(&self) -> &ir::Model {
        &self.ir
    }

    /// Explores every interleaving with no bounds.
    #[must_use]
    pub fn check(&self) -> Verdict {
        self.check_with(Options::default())
    }

    /// Explores every interleaving within the bounds of `opts`.
    #[must_use]
    pub fn check_with(&self, opts: Options) -> Verdict {
        let started = std::time::Instant::now();
        let (outcome, stats) = explore::explore(&self.ir, opts);
        let seconds = started.elapsed().as_secs_f64();
        let trace = match &outcome {
            explore::Outcome::Failed { failure, path } => Some(
                trace::replay(&self.ir, path, *failure)
                    .expect("a path found by the search replays"),
            ),
            _ => None,
        };
        Verdict {
            model: Arc::clone(&self.ir),
            outcome,
            stats,
            seconds,
            trace,
        }
    }
}

impl std::str::FromStr for Model {
    type Err = Error;
    fn from_str(text: &str) -> Result<Self, Error> {
        Self::parse("<string>", text)
    }
}

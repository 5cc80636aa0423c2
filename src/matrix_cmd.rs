//! `interlock matrix`: checks every tagged model under the paths and prints the strategy ×
//! fault table (docs/matrix.md); `--cost` adds the simulator's figures per strategy.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use interlock::matrix::{Cost, Entry, Links, Matrix, Workload};
use interlock::{Model, Options, SimulateOptions};

use crate::{load, model_files, write_out, Loading};

/// The output formats of `matrix`.
#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum MatrixFormat {
    Text,
    Markdown,
    Html,
}

pub struct Args {
    pub paths: Vec<PathBuf>,
    pub format: MatrixFormat,
    pub cost: Option<PathBuf>,
    pub links_from: String,
    pub html_dir: Option<String>,
}

/// The exercise's workload `--cost` measures: the article's 100 buyers and 50 units.
const EXERCISE_SET: [(&str, &str); 2] = [("clients", "100"), ("units", "50")];
/// Fixed, so that the figures are byte-stable.
const SEED: u64 = 1;
const RUNS: u64 = 5;
const DURATION_MS: u64 = 10_000;

pub const EXIT_CODES: &str = "Exit codes (as `check`):
  0  every model in the matrix met its expectation
  1  a model did not
  2  bad input or usage: a model with mistakes, a missing file or cost file
  3  a search ended incomplete, and nothing else went wrong";

pub fn run(args: &Args) -> ExitCode {
    let files = match model_files(&args.paths) {
        Ok(f) => f,
        Err((_, e)) => {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    };
    if let Some(cost) = &args.cost {
        // Read first: a bad cost file is bad input before any search runs.
        if let Err(e) = std::fs::metadata(cost) {
            eprintln!(
                "error: cannot read {}: {e}\n  hint: give a cost file of `latency` lines, \
                 e.g. models/choice/shared.cost",
                cost.display()
            );
            return ExitCode::from(2);
        }
    }
    let how = Loading {
        db: None,
        cost: None,
        set: Vec::new(),
    };
    let (mut entries, mut untagged) = (Vec::new(), Vec::new());
    let mut incomplete = false;
    let mut exercises = Vec::new();
    for f in &files {
        let shown = f.display().to_string();
        let models = match load(f, &how) {
            Ok(m) => m,
            Err(e) => {
                eprint!("{e}");
                return ExitCode::from(2);
            }
        };
        let several = models.len() > 1;
        for m in &models {
            if m.tag("strategy").is_none() || m.tag("fault").is_none() {
                if !untagged.contains(&shown) {
                    untagged.push(shown.clone());
                }
                continue;
            }
            let v = m.check_with(Options::default());
            incomplete |= matches!(v.outcome, interlock::Outcome::Incomplete { .. });
            let flavour = m.flavour().filter(|_| several).map(|fl| fl.name());
            entries.extend(Entry::of(&shown, flavour, &v));
        }
        if is_exercise(f) && models.len() == 1 && models[0].tag("strategy").is_some() {
            exercises.push((shown, models[0].clone()));
        }
    }
    if entries.is_empty() {
        eprintln!(
            "error: no model under the paths has `tags strategy=… fault=…`\n  hint: tag a \
             model (docs/language.md, \"Tags\"), or give the `models` folder"
        );
        return ExitCode::from(2);
    }
    let mut matrix = Matrix::new(entries, untagged);
    if let Some(cost) = &args.cost {
        match costs(cost, &exercises) {
            Ok(c) => matrix.costs = Some(c),
            Err(code) => return code,
        }
    }
    let links = Links {
        from: args.links_from.clone(),
        html_dir: args.html_dir.clone(),
    };
    let text = match args.format {
        MatrixFormat::Text => matrix.text(),
        MatrixFormat::Markdown => matrix.markdown(&links),
        MatrixFormat::Html => matrix.html(&links),
    };
    write_out(&text);
    let met = matrix.all_met();
    ExitCode::from(match (met, incomplete) {
        (false, _) => 1,
        (true, true) => 3,
        (true, false) => 0,
    })
}

/// `models/choice/exercise-*.model`: a file named `exercise-….model`.
fn is_exercise(f: &Path) -> bool {
    f.file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.starts_with("exercise-") && n.ends_with(".model"))
}

/// The exercise models simulated under the exercise's workload with the cost file.
fn costs(cost: &Path, exercises: &[(String, Model)]) -> Result<(Workload, Vec<Cost>), ExitCode> {
    if exercises.is_empty() {
        eprintln!(
            "error: --cost measures the exercise models (`exercise-*.model`), and none is \
             under the paths\n  hint: include models/choice"
        );
        return Err(ExitCode::from(2));
    }
    let set: Vec<(String, String)> = EXERCISE_SET
        .iter()
        .map(|(k, v)| ((*k).to_string(), (*v).to_string()))
        .collect();
    let opts = SimulateOptions {
        seed: SEED,
        runs: RUNS,
        duration_ms: DURATION_MS,
        threads: std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get),
        ..SimulateOptions::default()
    };
    let mut out = Vec::new();
    for (path, _) in exercises {
        let how = Loading {
            db: None,
            cost: Some(cost.to_path_buf()),
            set: set.clone(),
        };
        let m = match load(Path::new(path), &how) {
            Ok(mut m) if m.len() == 1 => m.pop().expect("one"),
            Ok(_) => continue,
            Err(e) => {
                eprint!("{e}");
                return Err(ExitCode::from(2));
            }
        };
        let sim = m.simulate(&opts);
        let all = sim.figures().into_iter().find(|f| f.group == "all");
        let Some(figures) = all.or_else(|| sim.figures().into_iter().next()) else {
            continue;
        };
        out.push(Cost {
            path: path.clone(),
            strategy: m.tag("strategy").unwrap_or("-").to_string(),
            figures,
            violated_runs: sim.violated_runs(),
        });
    }
    let w = Workload {
        cost_file: cost.display().to_string(),
        set,
        seed: SEED,
        runs: RUNS,
        duration_ms: DURATION_MS,
    };
    Ok((w, out))
}

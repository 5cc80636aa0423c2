//! `interlock simulate`: runs models under their workload and prints what they cost, for one
//! set of parameters or a sweep over one of them.

use std::path::PathBuf;
use std::process::ExitCode;

use interlock::{Flavour, Model, ParseOptions, SimProgress, SimulateOptions, Simulation};

/// What `simulate` was asked for.
pub struct Args {
    pub opts: SimulateOptions,
    pub set: Vec<(String, String)>,
    pub sweep: Option<(String, Vec<String>)>,
    pub db: Option<Flavour>,
    pub cost: Option<PathBuf>,
    pub format: SimFormat,
    pub plot: Option<PathBuf>,
}

#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum SimFormat {
    Text,
    Json,
    Csv,
}

/// `NAME=V` of `--set`.
pub fn assignment(text: &str) -> Result<(String, String), String> {
    match text.split_once('=') {
        Some((n, v)) if !n.trim().is_empty() && !v.trim().is_empty() => {
            Ok((n.trim().to_string(), v.trim().to_string()))
        }
        _ => Err("expected NAME=VALUE, like `hot_rows=100`".to_string()),
    }
}

/// `NAME=V1,V2,…` of `--sweep`.
pub fn sweep(text: &str) -> Result<(String, Vec<String>), String> {
    let (name, values) = assignment(text)
        .map_err(|_| "expected NAME=V1,V2,…, like `clients=10,50,100`".to_string())?;
    let values: Vec<String> = values.split(',').map(|v| v.trim().to_string()).collect();
    if values.iter().any(String::is_empty) {
        return Err("a swept value is empty: write `clients=10,50,100`".to_string());
    }
    Ok((name, values))
}

/// `300ms`, `10s`, `2m` as milliseconds (a bare number is seconds).
pub fn model_time(text: &str) -> Result<u64, String> {
    let t = text.trim();
    let (num, scale) = if let Some(n) = t.strip_suffix("ms") {
        (n, 1)
    } else if let Some(n) = t.strip_suffix('s') {
        (n, 1000)
    } else if let Some(n) = t.strip_suffix('m') {
        (n, 60_000)
    } else {
        (t, 1000)
    };
    let bad = || format!("`{t}`: write a model time like `500ms`, `10s` or `2m`");
    let n: u64 = num.parse().map_err(|_| bad())?;
    match n.checked_mul(scale) {
        Some(ms) if ms > 0 && ms <= 1_000_000_000 => Ok(ms),
        _ => Err(bad()),
    }
}

/// Runs every model (and every swept value) and prints the reports.
pub fn run(args: &Args, files: &[PathBuf]) -> ExitCode {
    let values: Vec<Option<&str>> = match &args.sweep {
        Some((_, vs)) => vs.iter().map(|v| Some(v.as_str())).collect(),
        None => vec![None],
    };
    let mut sims: Vec<(String, Option<String>, Simulation)> = Vec::new();
    for f in files {
        for v in &values {
            let mut set = args.set.clone();
            if let (Some((name, _)), Some(v)) = (&args.sweep, v) {
                set.retain(|(n, _)| n != name);
                set.push((name.clone(), (*v).to_string()));
            }
            let model = match load(f, args, set) {
                Ok(m) => m,
                Err(e) => {
                    eprint!("{e}");
                    if matches!(e, interlock::Error::Io { .. }) {
                        eprintln!();
                    }
                    return ExitCode::from(2);
                }
            };
            let label = match v {
                Some(v) => format!(
                    "{} {}={v}",
                    short(&f.display().to_string()),
                    args.sweep.as_ref().map_or("", |s| s.0.as_str())
                ),
                None => short(&f.display().to_string()).to_string(),
            };
            let sim = watched(&model, &args.opts, &label);
            sims.push((f.display().to_string(), v.map(str::to_string), sim));
        }
    }
    print(args, &sims);
    if let Some(path) = &args.plot {
        let Some((name, _)) = &args.sweep else {
            eprintln!("error: --plot draws a sweep\n  hint: add `--sweep NAME=V1,V2,…`");
            return ExitCode::from(2);
        };
        if let Err(e) = crate::plot::write(path, name, &sims) {
            eprintln!("error: cannot write {}: {e}", path.display());
            return ExitCode::from(2);
        }
    }
    let bad = sims.iter().any(|(_, _, s)| s.unexpected_violation());
    let stopped = sims.iter().any(|(_, _, s)| s.stopped());
    ExitCode::from(if bad {
        1
    } else if stopped {
        3
    } else {
        0
    })
}

/// Runs the simulation, with a live line on the terminal (runs done, steps, steps a second)
/// when stderr is one.
fn watched(model: &Model, opts: &SimulateOptions, label: &str) -> Simulation {
    use std::io::IsTerminal;
    use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
    let progress = SimProgress::default();
    if !std::io::stderr().is_terminal() {
        return model.simulate_watched(opts, &progress);
    }
    let done = AtomicBool::new(false);
    std::thread::scope(|scope| {
        scope.spawn(|| {
            let started = std::time::Instant::now();
            let bar = indicatif::ProgressBar::new_spinner();
            bar.set_style(
                indicatif::ProgressStyle::with_template("{spinner} {prefix} {msg}")
                    .expect("a valid template"),
            );
            bar.set_prefix(label.to_string());
            while !done.load(Relaxed) {
                let steps = progress.steps.load(Relaxed);
                let rate = steps as f64 / started.elapsed().as_secs_f64().max(1e-3);
                bar.set_message(format!(
                    "{} of {} runs done, {steps} steps, {rate:.0}/s",
                    progress.runs.load(Relaxed),
                    opts.runs
                ));
                bar.tick();
                std::thread::sleep(std::time::Duration::from_millis(100));
            }
            bar.finish_and_clear();
        });
        let sim = model.simulate_watched(opts, &progress);
        done.store(true, Relaxed);
        sim
    })
}

fn load(
    f: &std::path::Path,
    args: &Args,
    set: Vec<(String, String)>,
) -> Result<Model, interlock::Error> {
    let mut m = Model::from_file_with(f, &ParseOptions { db: None, set })?;
    if let Some(cost) = &args.cost {
        m = m.with_costs(cost)?;
    }
    match args.db {
        Some(fl) => m.with_flavour(fl),
        None => Ok(m),
    }
}

fn print(args: &Args, sims: &[(String, Option<String>, Simulation)]) {
    let swept = args.sweep.as_ref().map(|(n, _)| n.as_str());
    match args.format {
        SimFormat::Text if swept.is_some() => {
            crate::write_out(&sweep_table(swept.unwrap_or(""), sims));
        }
        SimFormat::Text => {
            for (i, (_, _, s)) in sims.iter().enumerate() {
                if i > 0 {
                    crate::write_out("\n");
                }
                crate::write_out(&s.text());
            }
        }
        SimFormat::Csv => {
            for (i, (_, v, s)) in sims.iter().enumerate() {
                let extra: Vec<(&str, &str)> = match (swept, v) {
                    (Some(n), Some(v)) => vec![(n, v.as_str())],
                    _ => Vec::new(),
                };
                crate::write_out(&s.csv(i == 0, &extra));
            }
        }
        SimFormat::Json => {
            let docs: Vec<serde_json::Value> = sims
                .iter()
                .map(|(_, v, s)| {
                    let mut j = s.json();
                    if let (Some(n), Some(v), Some(o)) = (swept, v, j.as_object_mut()) {
                        o.insert(
                            "swept".into(),
                            serde_json::json!({ "param": n, "value": v }),
                        );
                    }
                    j
                })
                .collect();
            let doc = if docs.len() == 1 {
                docs.into_iter().next().unwrap_or_default()
            } else {
                serde_json::Value::Array(docs)
            };
            crate::write_out(&format!("{doc:#}\n"));
        }
    }
}

/// One row per model and swept value: the figures of all its requests.
fn sweep_table(name: &str, sims: &[(String, Option<String>, Simulation)]) -> String {
    let file_w = sims
        .iter()
        .map(|(f, _, _)| short(f).len())
        .max()
        .unwrap_or(5)
        .max(5);
    let val_w = name.len().max(5);
    let mut out = format!(
        "{:<file_w$} {:>val_w$} {:>9} {:>8} {:>7} {:>7} {:>8} {:>8} {:>6}\n",
        "model", name, "per s", "failed", "retry/r", "waited", "p99", "wait99", "broken"
    );
    for (f, v, s) in sims {
        let figs = s.figures();
        let Some(all) = figs.last() else { continue };
        let failed: u64 = all.failed.iter().map(|(_, n)| n).sum();
        out.push_str(&format!(
            "{:<file_w$} {:>val_w$} {:>9.1} {:>8} {:>7.2} {:>6.1}% {:>6.0}ms {:>6.0}ms {:>6}\n",
            short(f),
            v.as_deref().unwrap_or(""),
            all.throughput,
            failed,
            all.retries_per_request,
            all.wait_rate * 100.0,
            all.latency_p99_ms,
            all.lock_wait_p99_ms,
            s.violated_runs(),
        ));
    }
    out
}

/// A model's file name without its folders and `.model`.
pub fn short(f: &str) -> &str {
    let base = f.rsplit(['/', '\\']).next().unwrap_or(f);
    base.strip_suffix(".model").unwrap_or(base)
}

/// What `bench --simulate` was asked for.
pub struct Bench {
    pub repeat: usize,
    pub duration: u64,
    pub cost: Option<PathBuf>,
    pub set: Vec<(String, String)>,
}

/// `interlock bench --simulate`: times one run of each model on one thread, `repeat` times,
/// and prints the median wall time and steps per second.
pub fn bench(files: &[PathBuf], how: &Bench) -> ExitCode {
    let args = Args {
        opts: SimulateOptions::default(),
        set: how.set.clone(),
        sweep: None,
        db: None,
        cost: how.cost.clone(),
        format: SimFormat::Text,
        plot: None,
    };
    let opts = SimulateOptions {
        runs: 1,
        threads: 1,
        duration_ms: how.duration,
        ..SimulateOptions::default()
    };
    println!(
        "one run of {} model time, one thread",
        how.duration_ms_text()
    );
    println!(
        "{:<48}  {:>10}  {:>9}  {:>12}",
        "model", "steps", "median s", "steps/s"
    );
    for f in files {
        let m = match load(f, &args, how.set.clone()) {
            Ok(m) => m,
            Err(e) => {
                eprint!("{e}");
                return ExitCode::from(2);
            }
        };
        let mut secs = Vec::new();
        let mut steps = 0;
        for _ in 0..how.repeat {
            let start = std::time::Instant::now();
            let sim = m.simulate(&opts);
            secs.push(start.elapsed().as_secs_f64());
            steps = sim.events();
        }
        secs.sort_by(f64::total_cmp);
        let median = secs[secs.len() / 2];
        println!(
            "{:<48}  {:>10}  {:>9.3}  {:>12.0}",
            f.display(),
            steps,
            median,
            steps as f64 / median.max(1e-9)
        );
    }
    ExitCode::SUCCESS
}

impl Bench {
    fn duration_ms_text(&self) -> String {
        if self.duration % 1000 == 0 {
            format!("{}s", self.duration / 1000)
        } else {
            format!("{}ms", self.duration)
        }
    }
}

//! The `interlock` command line: the only place that touches files, terminals and exit codes.

mod check_out;
mod load_cmd;
mod matrix_cmd;
mod memory;
mod plot;
mod replay_cmd;
mod run_cmd;
mod simulate_cmd;
mod units;

use check_out::CheckFormat;
use clap::{Parser, Subcommand, ValueEnum};
use interlock::{Error, Flavour, Model, Options, Probe, StepMemo, Verdict};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// The search allocates and frees a state per transition: mimalloc does that markedly faster
/// than the system allocator (docs/explorer.md, benchmarks).
#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Writes to stdout; a closed pipe (`interlock list | head`) ends the program quietly instead
/// of panicking.
pub(crate) fn write_out(text: &str) {
    let mut stdout = std::io::stdout().lock();
    if stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
        .is_err()
    {
        std::process::exit(0);
    }
}

macro_rules! out {
    ($($arg:tt)*) => { write_out(&format!($($arg)*)) };
}

macro_rules! outln {
    ($($arg:tt)*) => { write_out(&format!("{}\n", format!($($arg)*))) };
}

#[derive(Parser)]
#[command(
    name = "interlock",
    version,
    about = "Explore every interleaving of a concurrency scenario: prove its invariants or print the shortest counterexample.",
    after_help = EXIT_CODES
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

/// The exit codes of `simulate`.
const SIM_EXIT_CODES: &str = "Exit codes:
  0  no run broke a property the model expects to hold
  1  a run broke one (its trace is printed; `check --path` replays it)
  2  bad input or usage
  3  the time limit ended the simulation before every run was done";

/// The exit codes, as `--help` prints them (docs/tutorial.md says the same).
const EXIT_CODES: &str =
    "Exit codes (over several models the highest in this order wins: 2, 1, 3, 0):
  0  every model's expectation is met
  1  an expectation is not met (a property violated that should hold, or the reverse)
  2  bad input or usage: a model with mistakes, a missing file, a folder with no .model file
  3  incomplete: a bound or limit (--max-states, --max-depth, --time-limit, --max-memory)
     ended a search before it covered every state, and nothing else went wrong";

#[derive(Subcommand)]
enum Command {
    /// Check model files (or every `.model` file under a folder) against their expectations.
    #[command(after_help = EXIT_CODES)]
    Check {
        /// Files or folders; default `models`.
        paths: Vec<PathBuf>,
        #[arg(long, value_enum, default_value_t = CheckFormat::Text)]
        format: CheckFormat,
        /// Also write a page per model file to this folder, to step through its trace in a
        /// browser, and an `index.html` listing them (docs/html.md).
        #[arg(long, value_name = "DIR")]
        html_dir: Option<PathBuf>,
        /// Print only the summary table.
        #[arg(long, short)]
        quiet: bool,
        /// Print every step of a counterexample on a row of its own (by default, runs of
        /// steps that change nothing, and one command sent to server after server, share a
        /// row).
        #[arg(long)]
        full: bool,
        /// After each verdict, print what the search covered: each statement with the times
        /// it ran and the states it ran from, each `if` with how often it went each way.
        #[arg(long)]
        coverage: bool,
        /// Print the trace of this path instead of searching: a replay token, as printed under
        /// every counterexample (`'buyer[0] buyer[1] tick 100ms …'`). One model file; exit 0
        /// when the path fits the model, 2 when a step does not. With `--format json`,
        /// `mermaid` or `dot`, the trace in that form (not `html`).
        #[arg(long, value_name = "TOKEN")]
        path: Option<String>,
        /// Stop (verdict: incomplete) after this many distinct states.
        #[arg(long)]
        max_states: Option<usize>,
        /// Do not explore past this many steps (verdict: incomplete if there was more).
        #[arg(long)]
        max_depth: Option<usize>,
        /// Run against this database flavour instead of the ones the file names.
        #[arg(long, value_enum)]
        db: Option<Db>,
        /// Price the models' operations with this cost file's `latency` lines (as `simulate
        /// --cost` does), so that a simulation's counterexample replays.
        #[arg(long, value_name = "FILE")]
        cost: Option<PathBuf>,
        /// Give a `param` of the models this value (repeatable): `--set clients=4`.
        #[arg(long = "set", value_name = "NAME=V", value_parser = simulate_cmd::assignment)]
        set: Vec<(String, String)>,
        #[command(flatten)]
        search: SearchArgs,
    },
    /// Time the search of each model: median of several runs, states per second.
    Bench {
        /// Files or folders; default `models`.
        paths: Vec<PathBuf>,
        /// Runs per model; the median is reported.
        #[arg(long, default_value_t = 3)]
        repeat: usize,
        /// Time `simulate` instead of the search: one run of `--duration` on one thread, steps
        /// (events) per second.
        #[arg(long)]
        simulate: bool,
        /// With `--simulate`: model time of the run (`60s`).
        #[arg(long, default_value = "60s", value_parser = simulate_cmd::model_time)]
        duration: u64,
        /// With `--simulate`: the cost file the operations are priced with.
        #[arg(long, value_name = "FILE")]
        cost: Option<PathBuf>,
        /// Give a `param` this value (repeatable): `--set clients=100`.
        #[arg(long = "set", value_name = "NAME=V", value_parser = simulate_cmd::assignment)]
        set: Vec<(String, String)>,
        #[command(flatten)]
        search: SearchArgs,
    },
    /// Simulate model files under their workload (latencies, arrivals, think times) and
    /// measure what each strategy costs: throughput, retries, lock waits, latency.
    #[command(after_help = SIM_EXIT_CODES)]
    Simulate {
        /// Model files or folders.
        #[arg(required = true)]
        paths: Vec<PathBuf>,
        /// The seed every run's random source comes from (with the run's number).
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Independent runs per model.
        #[arg(long, default_value_t = 10)]
        runs: u64,
        /// Model time during which requests start, per run (`500ms`, `10s`, `2m`); the run
        /// then lets the requests in flight end.
        #[arg(long, default_value = "10s", value_parser = simulate_cmd::model_time)]
        duration: u64,
        /// Give a `param` of the model this value (repeatable): `--set hot_rows=100`.
        #[arg(long = "set", value_name = "NAME=V", value_parser = simulate_cmd::assignment)]
        set: Vec<(String, String)>,
        /// Run once for each value of a `param`: `--sweep clients=10,50,100`.
        #[arg(long, value_name = "NAME=V1,V2,…", value_parser = simulate_cmd::sweep)]
        sweep: Option<(String, Vec<String>)>,
        /// Price the operations with this cost file's `latency` lines (every strategy
        /// measured with the same costs): `--cost models/choice/shared.cost`.
        #[arg(long, value_name = "FILE")]
        cost: Option<PathBuf>,
        /// Draw a sweep's throughput, retries and p99 latency to this SVG file.
        #[arg(long, value_name = "FILE")]
        plot: Option<PathBuf>,
        #[arg(long, value_enum, default_value_t = simulate_cmd::SimFormat::Text)]
        format: simulate_cmd::SimFormat,
        /// Run against this database flavour instead of the file's.
        #[arg(long, value_enum)]
        db: Option<Db>,
        /// Threads the runs are spread over; default: every core. Output does not depend on it.
        #[arg(long)]
        threads: Option<usize>,
        /// At most this many steps a run.
        #[arg(long, default_value_t = 50_000_000)]
        max_events: u64,
        /// Stop after this long (`90s`, `10m`); the runs done are reported, exit code 3.
        #[arg(long, value_name = "DURATION", value_parser = units::seconds)]
        time_limit: Option<u64>,
    },
    /// Print the trace of a chosen interleaving: `--schedule "T1 T2 T1 …"`, or the model's
    /// own `schedule` blocks. A statement that must wait is shown waiting and the schedule
    /// goes on; a waiter resumes as soon as its wait is over, before the next step.
    #[command(after_help = run_cmd::EXIT_CODES)]
    Run {
        /// One model file.
        file: PathBuf,
        /// The steps, as a trace names them: `T1 T2 buyer[0] tick 100ms fault crash T2`.
        #[arg(long, value_name = "STEPS", conflicts_with = "named")]
        schedule: Option<String>,
        /// Run only this one of the model's `schedule` blocks (default: all of them).
        #[arg(long, value_name = "NAME")]
        named: Option<String>,
        #[arg(long, value_enum, default_value_t = Format::Text)]
        format: Format,
        /// Run against this database flavour (needed when the file names several).
        #[arg(long, value_enum)]
        db: Option<Db>,
        /// Give a `param` of the model this value (repeatable): `--set clients=4`.
        #[arg(long = "set", value_name = "NAME=V", value_parser = simulate_cmd::assignment)]
        set: Vec<(String, String)>,
    },
    /// Replay a schedule, a path or the counterexample on real PostgreSQL, MariaDB and Redis
    /// and compare every step with the simulation (build with `--features servers`).
    #[command(after_help = replay_cmd::EXIT_CODES)]
    Replay {
        /// One model file.
        file: PathBuf,
        /// Replay this schedule (steps as a trace names them).
        #[arg(long, value_name = "STEPS", group = "what")]
        schedule: Option<String>,
        /// Replay this one of the model's `schedule` blocks (default: every block with claims
        /// for the flavour, or the counterexample when the model has no schedule).
        #[arg(long, value_name = "NAME", group = "what")]
        named: Option<String>,
        /// Replay the path of this replay token.
        #[arg(long, value_name = "TOKEN", group = "what")]
        path: Option<String>,
        /// Replay the counterexample `check` finds.
        #[arg(long, group = "what")]
        counterexample: bool,
        /// The PostgreSQL server for the postgres flavour.
        #[arg(long, value_name = "URL", env = "INTERLOCK_POSTGRES_URL")]
        postgres: Option<String>,
        /// The MySQL or MariaDB server for the mysql and mariadb flavours.
        #[arg(long, value_name = "URL", env = "INTERLOCK_MYSQL_URL")]
        mysql: Option<String>,
        /// The Redis server for a model that uses Redis (every server of the model is a key
        /// prefix of its own there).
        #[arg(long, value_name = "URL", env = "INTERLOCK_REDIS_URL")]
        redis: Option<String>,
        /// Real time per model time: `0.1` runs ticks and the model's timeouts ten times
        /// faster (InnoDB's lock wait timeout has whole seconds, at least 1).
        #[arg(long, default_value_t = 1.0)]
        time_scale: f64,
        /// Replay only this flavour of a file that names several.
        #[arg(long, value_enum)]
        db: Option<Db>,
        #[arg(long, value_enum, default_value_t = Format::Text)]
        format: Format,
        /// Give a `param` of the model this value (repeatable).
        #[arg(long = "set", value_name = "NAME=V", value_parser = simulate_cmd::assignment)]
        set: Vec<(String, String)>,
    },
    /// Run the model's processes as real concurrent clients of a real PostgreSQL or MariaDB
    /// server, and measure as `simulate` does (build with `--features servers`).
    #[command(after_help = load_cmd::EXIT_CODES)]
    Load {
        /// Model files or folders.
        #[arg(required = true)]
        paths: Vec<PathBuf>,
        /// The PostgreSQL server for the postgres flavour.
        #[arg(long, value_name = "URL", env = "INTERLOCK_POSTGRES_URL")]
        postgres: Option<String>,
        /// The MySQL or MariaDB server for the mysql and mariadb flavours.
        #[arg(long, value_name = "URL", env = "INTERLOCK_MYSQL_URL")]
        mysql: Option<String>,
        /// At most this many clients at once (threads, one connection each); default: one
        /// per process.
        #[arg(long, value_parser = clap::value_parser!(u16).range(1..))]
        clients: Option<u16>,
        /// No request starts after this (`500ms`, `10s`): closed-loop groups (`loop think`)
        /// repeat until then; other processes run once.
        #[arg(long, default_value = "10s", value_parser = simulate_cmd::model_time)]
        duration: u64,
        /// Real time per model time, for `work`, `sleep` and think times.
        #[arg(long, default_value_t = 1.0)]
        time_scale: f64,
        /// The seed of the clients' draws (delays, `pick`).
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Load only this flavour of a file that names several.
        #[arg(long, value_enum)]
        db: Option<Db>,
        #[arg(long, value_enum, default_value_t = Format::Text)]
        format: Format,
        /// Give a `param` of the model this value (repeatable): `--set clients=100`.
        #[arg(long = "set", value_name = "NAME=V", value_parser = simulate_cmd::assignment)]
        set: Vec<(String, String)>,
    },
    /// Check every tagged model (`tags strategy=… fault=…`) and print the strategy × fault
    /// table of their verdicts (docs/matrix.md).
    #[command(after_help = matrix_cmd::EXIT_CODES)]
    Matrix {
        /// Files or folders; default `models`.
        paths: Vec<PathBuf>,
        #[arg(long, value_enum, default_value_t = matrix_cmd::MatrixFormat::Text)]
        format: matrix_cmd::MatrixFormat,
        /// Add the cost per strategy: the exercise models (`exercise-*.model`) simulated with
        /// this cost file (`models/choice/shared.cost`), 100 clients, 50 units, seed 1.
        #[arg(long, value_name = "FILE")]
        cost: Option<PathBuf>,
        /// The folder the Markdown or HTML output will be read from: links are relative to
        /// it (`docs` for docs/matrix.md).
        #[arg(long, value_name = "DIR", default_value = ".")]
        links_from: String,
        /// Link each model to the page `check --html-dir DIR` writes for it, instead of to
        /// its file.
        #[arg(long, value_name = "DIR")]
        html_dir: Option<String>,
    },
    /// List models: file, expectation and title.
    List {
        /// Files or folders; default `models`.
        paths: Vec<PathBuf>,
    },
    /// Read a model aloud before checking it: its lesson, its world, its processes as the
    /// steps the checker interleaves (with their model lines), the environment's moves and
    /// faults, its properties, and per flavour its expectation and the rules of
    /// docs/semantics.md that apply. Searches nothing; exit 0, or 2 for a bad model.
    Explain {
        /// Model files or folders.
        #[arg(required = true)]
        paths: Vec<PathBuf>,
    },
}

/// How to search (docs/explorer.md).
#[derive(clap::Args, Clone, Copy)]
struct SearchArgs {
    /// Reductions: `all` (dead locals, symmetry and partial-order; the default), `locals`,
    /// `symmetry`, `por` or `none`. Models with liveness properties are always searched
    /// without.
    #[arg(long, value_enum, default_value_t = Reduce::All)]
    reduce: Reduce,
    /// Threads expanding each layer; default: every core. Output does not depend on it.
    #[arg(long)]
    threads: Option<usize>,
    /// Keep 64-bit fingerprints of visited states instead of the states (much less memory;
    /// the chance of a missed state is printed).
    #[arg(long)]
    fingerprints: bool,
    /// Do not remember process steps by what they read. The memo is a cache: the same states,
    /// verdicts and traces come out without it, more slowly
    #[arg(long)]
    no_step_memo: bool,
    /// Search depth-first: far less memory (with --fingerprints, the visited set and one path),
    /// but the counterexample is not the shortest. Safety only: models with liveness
    /// properties are searched breadth-first. Also spelt --first: the first counterexample
    /// found, shortened, instead of a shortest one.
    #[arg(long, visible_alias = "first")]
    dfs: bool,
    /// Prove the counterexample shortest however long it takes. By default a search that
    /// has found nothing in 32,768 states probes depth-first, and if the probe finds a
    /// failure, looks for a shorter one up to 65,536 states only.
    #[arg(long, conflicts_with = "dfs")]
    shortest: bool,
    /// Stop (verdict: incomplete) after this long: seconds (`90`), or with a unit (`90s`,
    /// `10m`, `2h`).
    #[arg(long, value_name = "DURATION", value_parser = units::seconds)]
    time_limit: Option<u64>,
    /// Stop (verdict: incomplete) once the process uses this much memory: MiB (`512`), or
    /// with a unit (`512MiB`, `512M`, `2GiB`, `2G`); `none` for no limit. Default: 75% of
    /// the memory this process may use (the smaller of physical memory and the control
    /// group's limit), so that a search that would be killed ends incomplete instead.
    #[arg(long, value_name = "SIZE", value_parser = units::memory_limit)]
    max_memory: Option<units::Limit>,
    /// No live progress line (it is shown on a terminal only, and not with --quiet).
    #[arg(long)]
    no_progress: bool,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Reduce {
    All,
    Locals,
    Symmetry,
    Por,
    None,
}

impl SearchArgs {
    /// The memory limit in MiB: the one given, or the default (none where the system does
    /// not say how much memory there is).
    fn max_memory(&self) -> Option<u64> {
        match self.max_memory {
            Some(units::Limit::None) => None,
            Some(units::Limit::Mib(m)) => Some(m),
            None => memory::default_limit(),
        }
    }

    fn options(&self, max_states: Option<usize>, max_depth: Option<usize>) -> Options {
        let threads = self.threads.unwrap_or_else(|| {
            std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get)
        });
        Options {
            max_states,
            max_depth,
            symmetry: matches!(self.reduce, Reduce::All | Reduce::Symmetry),
            por: matches!(self.reduce, Reduce::All | Reduce::Por),
            dead_locals: matches!(self.reduce, Reduce::All | Reduce::Locals),
            threads: threads.max(1),
            fingerprints: self.fingerprints,
            dfs: self.dfs,
            step_memo: if self.no_step_memo {
                StepMemo::Off
            } else {
                StepMemo::Warm
            },
            time_limit: self.time_limit,
            max_memory: self.max_memory(),
            probe: if self.shortest {
                Probe {
                    budget: None,
                    ..Probe::default()
                }
            } else {
                Probe::default()
            },
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Db {
    Postgres,
    Mysql,
    Mariadb,
}

impl Db {
    fn flavour(self) -> Flavour {
        match self {
            Db::Postgres => Flavour::Postgres,
            Db::Mysql => Flavour::Mysql,
            Db::Mariadb => Flavour::Mariadb,
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Format {
    Text,
    Json,
}

/// The command line, with the default memory limit of this machine in its help.
fn parse_cli() -> Cli {
    use clap::{CommandFactory, FromArgMatches};
    let default = match memory::available() {
        Some((mib, what)) => format!(
            "Default: {}% of {what} ({mib} MiB), {} MiB here",
            memory::DEFAULT_SHARE,
            mib * memory::DEFAULT_SHARE / 100
        ),
        None => "Default: none (this system does not say how much memory it has)".to_string(),
    };
    let help = format!(
        "Stop (verdict: incomplete) once the process uses this much memory: MiB (`512`), or \
         with a unit (`512MiB`, `512M`, `2GiB`, `2G`); `none` for no limit. {default}: a \
         search that would be killed for memory ends incomplete instead"
    );
    let with_help = |c: clap::Command| c.mut_arg("max_memory", |a| a.help(help.clone()));
    let cmd = Cli::command()
        .mut_subcommand("check", with_help)
        .mut_subcommand("bench", with_help);
    let matches = cmd.get_matches();
    Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.exit())
}

fn main() -> ExitCode {
    let cli = parse_cli();
    match cli.command {
        Command::Check {
            paths,
            format,
            html_dir,
            quiet,
            full,
            coverage,
            path,
            max_states,
            max_depth,
            db,
            cost,
            set,
            search,
        } => {
            let db = Loading {
                db: db.map(Db::flavour),
                cost,
                set,
            };
            if let Some(token) = path {
                return replay(&paths, &db, &token, full, format);
            }
            if search.threads == Some(0) {
                eprintln!(
                    "error: --threads must be at least 1\n  hint: leave it out to use every core"
                );
                return ExitCode::from(2);
            }
            let opts = search.options(max_states, max_depth);
            let watch = Watch::new(&search, !quiet && format == CheckFormat::Text);
            let show = Show {
                format,
                html_dir,
                quiet,
                coverage,
                full,
                default_memory: search.max_memory.is_none() && opts.max_memory.is_some(),
            };
            check(&paths, &show, opts, &db, &watch)
        }
        Command::List { paths } => list(&paths),
        Command::Explain { paths } => explain(&paths),
        Command::Matrix {
            paths,
            format,
            cost,
            links_from,
            html_dir,
        } => matrix_cmd::run(&matrix_cmd::Args {
            paths,
            format,
            cost,
            links_from,
            html_dir,
        }),
        Command::Load {
            paths,
            postgres,
            mysql,
            clients,
            duration,
            time_scale,
            seed,
            db,
            format,
            set,
        } => {
            if let Err(code) = time_scale_ok(time_scale) {
                return code;
            }
            let how = Loading {
                db: db.map(Db::flavour),
                cost: None,
                set,
            };
            let files = match model_files(&paths) {
                Ok(f) => f,
                Err((_, e)) => {
                    eprintln!("{e}");
                    return ExitCode::from(2);
                }
            };
            let mut all = Vec::new();
            for f in files {
                match load(&f, &how) {
                    Ok(m) => all.push((f.display().to_string(), m)),
                    Err(e) => {
                        eprint!("{e}");
                        return ExitCode::from(2);
                    }
                }
            }
            let args = load_cmd::Args {
                postgres,
                mysql,
                clients: clients.map(usize::from),
                duration_ms: duration,
                time_scale,
                seed,
                json: format == Format::Json,
            };
            load_cmd::run(&all, &args)
        }
        Command::Replay {
            file,
            schedule,
            named,
            path,
            counterexample,
            postgres,
            mysql,
            redis,
            time_scale,
            db,
            format,
            set,
        } => {
            if let Err(code) = time_scale_ok(time_scale) {
                return code;
            }
            let how = Loading {
                db: db.map(Db::flavour),
                cost: None,
                set,
            };
            let models = match load(&file, &how) {
                Ok(m) => m,
                Err(e) => {
                    eprint!("{e}");
                    return ExitCode::from(2);
                }
            };
            let args = replay_cmd::Args {
                schedule,
                named,
                path,
                counterexample,
                postgres,
                mysql,
                redis,
                time_scale,
                json: format == Format::Json,
            };
            replay_cmd::run(&file.display().to_string(), &models, &args)
        }
        Command::Run {
            file,
            schedule,
            named,
            format,
            db,
            set,
        } => {
            let how = Loading {
                db: db.map(Db::flavour),
                cost: None,
                set,
            };
            let (file, m) = match one_model(std::slice::from_ref(&file), &how, "run") {
                Ok(x) => x,
                Err(code) => return code,
            };
            let args = run_cmd::Args {
                schedule,
                named,
                json: format == Format::Json,
            };
            run_cmd::run(&file.display().to_string(), &m, &args)
        }
        Command::Simulate {
            paths,
            seed,
            runs,
            duration,
            set,
            sweep,
            cost,
            plot,
            format,
            db,
            threads,
            max_events,
            time_limit,
        } => {
            if threads == Some(0) || runs == 0 {
                eprintln!("error: --threads and --runs must be at least 1");
                return ExitCode::from(2);
            }
            let files = match model_files(&paths) {
                Ok(f) => f,
                Err((_, e)) => {
                    eprintln!("{e}");
                    return ExitCode::from(2);
                }
            };
            let threads = threads.unwrap_or_else(|| {
                std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get)
            });
            let args = simulate_cmd::Args {
                opts: interlock::SimulateOptions {
                    seed,
                    runs,
                    duration_ms: duration,
                    max_events,
                    threads,
                    time_limit,
                },
                set,
                sweep,
                db: db.map(Db::flavour),
                cost,
                format,
                plot,
            };
            simulate_cmd::run(&args, &files)
        }
        Command::Bench {
            paths,
            repeat,
            simulate,
            duration,
            cost,
            set,
            search,
        } => {
            if simulate {
                let files = match model_files(&paths) {
                    Ok(f) => f,
                    Err((_, e)) => {
                        eprintln!("{e}");
                        return ExitCode::from(2);
                    }
                };
                let how = simulate_cmd::Bench {
                    repeat: repeat.max(1),
                    duration,
                    cost,
                    set,
                };
                return simulate_cmd::bench(&files, &how);
            }
            let watch = Watch::new(&search, false);
            bench(&paths, repeat.max(1), search.options(None, None), &watch)
        }
    }
}

/// Every `.model` file named, or under a named folder, in sorted order.
/// The paths given, or `models` when none is.
fn default_paths(paths: &[PathBuf]) -> Vec<&Path> {
    if paths.is_empty() {
        vec![Path::new("models")]
    } else {
        paths.iter().map(PathBuf::as_path).collect()
    }
}

/// `--time-scale` of `replay` and `load`: a finite number above 0.
fn time_scale_ok(scale: f64) -> Result<(), ExitCode> {
    if scale > 0.0 && scale.is_finite() {
        return Ok(());
    }
    eprintln!("error: --time-scale must be above 0\n  hint: 1 is real time, 0.1 ten times faster");
    Err(ExitCode::from(2))
}

fn model_files(paths: &[PathBuf]) -> Result<Vec<PathBuf>, (PathBuf, String)> {
    let mut out = Vec::new();
    let paths = default_paths(paths);
    for p in paths {
        if p.is_dir() {
            let before = out.len();
            collect(p, &mut out).map_err(|e| {
                (
                    p.to_path_buf(),
                    format!("error: cannot read {}: {e}", p.display()),
                )
            })?;
            if out.len() == before {
                return Err((
                    p.to_path_buf(),
                    format!(
                        "error: no .model file in {}\n  hint: give a .model file, or a folder \
                         that holds some (its subfolders are searched too)",
                        p.display()
                    ),
                ));
            }
        } else if p.exists() {
            out.push(p.to_path_buf());
        } else {
            return Err((
                p.to_path_buf(),
                format!(
                    "error: no such file or folder: {}\n  hint: give a .model file or a folder \
                     of them",
                    p.display()
                ),
            ));
        }
    }
    Ok(out)
}

fn collect(dir: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)?
        .map(|e| e.map(|e| e.path()))
        .collect::<Result<_, _>>()?;
    entries.sort();
    for p in entries {
        if p.is_dir() {
            collect(&p, out)?;
        } else if p.extension().is_some_and(|e| e == "model") {
            out.push(p);
        }
    }
    Ok(())
}

#[allow(clippy::too_many_arguments)]
/// What `check` prints.
struct Show {
    format: CheckFormat,
    /// `--html-dir`: where the pages go.
    html_dir: Option<PathBuf>,
    quiet: bool,
    /// `--coverage`: the table of what each search covered.
    coverage: bool,
    /// `--full`: one row per step in every trace.
    full: bool,
    /// The memory limit is the default one (a verdict it ends says how to lift it).
    default_memory: bool,
}

fn check(paths: &[PathBuf], show: &Show, opts: Options, db: &Loading, watch: &Watch) -> ExitCode {
    let (format, quiet) = (show.format, show.quiet);
    // A path that names nothing is a row of its own: the other models still run.
    let mut rows: Vec<(String, Result<Verdict, Error>)> = Vec::new();
    let entries: Vec<Result<PathBuf, (PathBuf, String)>> = default_paths(paths)
        .into_iter()
        .flat_map(|p| match model_files(&[p.to_path_buf()]) {
            Ok(f) => f.into_iter().map(Ok).collect(),
            Err(e) => vec![Err(e)],
        })
        .collect();
    let files: Vec<&PathBuf> = entries.iter().filter_map(|e| e.as_ref().ok()).collect();
    for entry in &entries {
        let f = match entry {
            Ok(f) => f,
            Err((path, e)) => {
                if format != CheckFormat::Json {
                    eprintln!("{e}");
                }
                let why = e.lines().next().unwrap_or("").trim_start_matches("error: ");
                let source = std::io::Error::new(std::io::ErrorKind::NotFound, why.to_string());
                let shown = path.display().to_string();
                rows.push((
                    shown.clone(),
                    Err(Error::Io {
                        path: shown,
                        source,
                    }),
                ));
                continue;
            }
        };
        let shown = f.display().to_string();
        match load(f, db) {
            Ok(models) => {
                let several = models.len() > 1;
                for m in models {
                    let label = match (several || db.db.is_some(), m.flavour()) {
                        (true, Some(fl)) => format!("{shown} [{}]", fl.name()),
                        _ => shown.clone(),
                    };
                    let v = watch.check(&m, opts, &label);
                    let alone = files.len() == 1 && !several;
                    let notable = v.trace.is_some() || !v.met() || !v.warnings.is_empty();
                    if format == CheckFormat::Text && !quiet && (alone || notable || show.coverage)
                    {
                        outln!("{label}: {}\n{}", v.model.name(), v.render_with(show.full));
                        if show.coverage {
                            outln!("{}", v.coverage_table());
                        }
                        if show.default_memory && stopped_for_memory(&v) {
                            outln!(
                                "  the default memory limit ({}% of what this process may use) \
                                 ended it: `--max-memory none` lifts it;\n  `--fingerprints` \
                                 or `--dfs` need far less memory\n",
                                memory::DEFAULT_SHARE
                            );
                        }
                    }
                    rows.push((label, Ok(v)));
                }
            }
            Err(e) => {
                if format != CheckFormat::Json {
                    eprint!("{e}");
                    if matches!(e, Error::Io { .. }) {
                        eprintln!();
                    }
                }
                rows.push((shown, Err(e)));
            }
        }
    }
    let single = rows.len() == 1;
    match format {
        CheckFormat::Text if !single || quiet => out!("{}", table(&rows)),
        CheckFormat::Text => {}
        _ => out!("{}", check_out::render(format, &rows)),
    }
    if let Some(dir) = &show.html_dir {
        if let Err(e) = check_out::html_dir(dir, &rows) {
            eprintln!("{e}\n  hint: name a folder this user may write to");
            return ExitCode::from(2);
        }
    }
    ExitCode::from(check_out::exit_number(&rows))
}

/// `check FILE --path TOKEN`: the trace of that path, and what its end state breaks.
/// The one model a command that takes one file reads: its file, and the model for the one
/// flavour it runs against; `Err` (printed) when that is not one.
fn one_model(paths: &[PathBuf], db: &Loading, what: &str) -> Result<(PathBuf, Model), ExitCode> {
    let files = match model_files(paths) {
        Ok(f) if f.len() == 1 => f,
        Ok(f) => {
            eprintln!(
                "error: {what} takes one model, and {} were given\n  hint: name one .model \
                 file",
                f.len()
            );
            return Err(ExitCode::from(2));
        }
        Err((_, e)) => {
            eprintln!("{e}");
            return Err(ExitCode::from(2));
        }
    };
    let mut models = match load(&files[0], db) {
        Ok(m) => m,
        Err(e) => {
            eprint!("{e}");
            return Err(ExitCode::from(2));
        }
    };
    if models.len() != 1 {
        let names: Vec<&str> = models
            .iter()
            .filter_map(|m| m.flavour())
            .map(Flavour::name)
            .collect();
        eprintln!(
            "error: {} runs against several databases ({})\n  hint: pick one with --db",
            files[0].display(),
            names.join(", ")
        );
        return Err(ExitCode::from(2));
    }
    let m = models.pop().expect("one model");
    Ok((files[0].clone(), m))
}

fn replay(
    paths: &[PathBuf],
    db: &Loading,
    token: &str,
    full: bool,
    format: CheckFormat,
) -> ExitCode {
    if format == CheckFormat::Html {
        eprintln!(
            "error: --path does not write an HTML page\n  hint: `--format html` without \
             --path draws the counterexample's page; --path takes text, json, mermaid or dot"
        );
        return ExitCode::from(2);
    }
    let (file, m) = match one_model(paths, db, "--path") {
        Ok(x) => x,
        Err(code) => return code,
    };
    let (files, m) = ([file], &m);
    match m.trace_of(token) {
        Ok(t) if format != CheckFormat::Text => {
            match format {
                CheckFormat::Mermaid => out!("{}", t.mermaid(m)),
                CheckFormat::Dot => out!("{}", t.dot(m)),
                _ => outln!(
                    "{}",
                    serde_json::to_string_pretty(&t.json(m)).expect("JSON values serialise")
                ),
            }
            ExitCode::SUCCESS
        }
        Ok(t) => {
            outln!("{}: {}", files[0].display(), m.name());
            let n = t.len();
            outln!(
                "the path of --path: {n} step{}\n",
                if n == 1 { "" } else { "s" }
            );
            if n > 0 {
                out!("{}", if full { t.text_full(m) } else { t.text(m) });
            }
            let end = match (t.failure, t.loop_start) {
                (_, Some(k)) => format!("its steps from step {} repeat forever", k + 1),
                (Some(f), None) => format!("✗ its end breaks {}", m.failure_name(f)),
                (None, None) if t.ends_finished() => {
                    "its end: every process has finished".to_string()
                }
                (None, None) => "its end: nothing is broken (the run can go on)".to_string(),
            };
            outln!("{end}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {}: {e}", files[0].display());
            ExitCode::from(2)
        }
    }
}

/// Whether a memory limit ended the search.
fn stopped_for_memory(v: &Verdict) -> bool {
    matches!(
        v.outcome,
        interlock::Outcome::Incomplete {
            bound: interlock::Bound::MaxMemory(_)
        }
    )
}

/// The model in a file, once per flavour it states expectations for, or against `db` only.
/// How `check` reads its models: `--db`, `--cost`.
struct Loading {
    db: Option<Flavour>,
    cost: Option<PathBuf>,
    set: Vec<(String, String)>,
}

fn load(path: &Path, how: &Loading) -> Result<Vec<Model>, Error> {
    let opts = interlock::ParseOptions {
        db: None,
        set: how.set.clone(),
    };
    let mut m = Model::from_file_with(path, &opts)?;
    if let Some(cost) = &how.cost {
        m = m.with_costs(cost)?;
    }
    match how.db {
        Some(f) => Ok(vec![m.with_flavour(f)?]),
        None => m.variants(),
    }
}

/// The exit code of a run over several models: each model's, the highest in the order
/// 2 (bad input) > 1 (not met) > 3 (incomplete) > 0 (met) winning ([`EXIT_CODES`]).
fn table(rows: &[(String, Result<Verdict, Error>)]) -> String {
    let w = rows
        .iter()
        .map(|(f, _)| f.len())
        .max()
        .unwrap_or(5)
        .clamp(5, 64);
    let vw = rows
        .iter()
        .map(|(_, r)| r.as_ref().map_or(13, |v| v.summary().len()))
        .max()
        .unwrap_or(7)
        .max(7);
    let mut out = format!(
        "{:<w$}  {:<vw$}  {:<9}  {:>9}  {:>7}\n",
        "model", "verdict", "expected?", "states", "time"
    );
    for (f, r) in rows {
        let line = match r {
            Ok(v) => format!(
                "{f:<w$}  {:<vw$}  {:<9}  {:>9}  {:>6.2}s",
                v.summary(),
                match (&v.outcome, v.met()) {
                    (interlock::Outcome::Incomplete { .. }, _) => "unknown",
                    (_, true) => "yes",
                    (_, false) => "NO",
                },
                v.stats.states,
                v.seconds
            ),
            Err(_) => format!("{f:<w$}  {:<vw$}  {:<9}", "invalid model", "NO"),
        };
        out.push_str(line.trim_end());
        out.push('\n');
    }
    let met = rows
        .iter()
        .filter(|(_, r)| r.as_ref().is_ok_and(Verdict::met))
        .count();
    out.push_str(&format!("{met} of {} models as expected\n", rows.len()));
    out
}

fn list(paths: &[PathBuf]) -> ExitCode {
    let files = match model_files(paths) {
        Ok(f) => f,
        Err((_, e)) => {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    };
    let mut bad = false;
    for f in &files {
        match Model::from_file(f).and_then(|m| m.variants()) {
            Ok(variants) => {
                outln!("{}\n    {}", f.display(), variants[0].name());
                for v in &variants {
                    let on = match (variants.len(), v.flavour()) {
                        (1, _) | (_, None) => String::new(),
                        (_, Some(fl)) => format!(" on {}", fl.name()),
                    };
                    outln!("    expect{on}: {}", v.expected());
                }
            }
            Err(e) => {
                eprint!("{e}");
                bad = true;
            }
        }
    }
    if bad {
        ExitCode::from(2)
    } else {
        ExitCode::SUCCESS
    }
}

fn explain(paths: &[PathBuf]) -> ExitCode {
    let files = match model_files(paths) {
        Ok(f) => f,
        Err((_, e)) => {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    };
    let mut bad = false;
    for (i, f) in files.iter().enumerate() {
        match Model::from_file(f).and_then(|m| m.explain()) {
            Ok(text) => {
                let gap = if i == 0 { "" } else { "\n" };
                out!("{gap}{text}");
            }
            Err(e) => {
                eprint!("{e}");
                bad = true;
            }
        }
    }
    if bad {
        ExitCode::from(2)
    } else {
        ExitCode::SUCCESS
    }
}

fn bench(paths: &[PathBuf], repeat: usize, opts: Options, watch: &Watch) -> ExitCode {
    let files = match model_files(paths) {
        Ok(f) => f,
        Err((_, e)) => {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    };
    let reductions: Vec<&str> = [
        (opts.dead_locals, "locals"),
        (opts.symmetry, "symmetry"),
        (opts.por, "por"),
    ]
    .into_iter()
    .filter_map(|(on, name)| on.then_some(name))
    .collect();
    outln!(
        "threads: {}; reductions: {}",
        opts.threads,
        if reductions.is_empty() {
            "none".to_string()
        } else {
            reductions.join(" ")
        }
    );
    outln!(
        "{:<48}  {:>10}  {:>12}  {:>9}  {:>12}",
        "model",
        "states",
        "transitions",
        "median s",
        "states/s"
    );
    for f in &files {
        let m = match Model::from_file(f) {
            Ok(m) => m,
            Err(e) => {
                eprint!("{e}");
                return ExitCode::from(2);
            }
        };
        let runs: Vec<Verdict> = (0..repeat)
            .map(|_| watch.check(&m, opts, &f.display().to_string()))
            .collect();
        let mut secs: Vec<f64> = runs.iter().map(|v| v.seconds).collect();
        secs.sort_by(f64::total_cmp);
        let median = secs[secs.len() / 2];
        let st = runs[0].stats;
        outln!(
            "{:<48}  {:>10}  {:>12}  {:>9.3}  {:>12.0}",
            f.display(),
            st.states,
            st.transitions,
            median,
            st.states as f64 / median.max(1e-9)
        );
    }
    ExitCode::SUCCESS
}

/// The CLI's side of a running search: the live progress line (the limits are the
/// options', measured by the library).
struct Watch {
    progress: bool,
}

impl Watch {
    fn new(args: &SearchArgs, wanted: bool) -> Self {
        use std::io::IsTerminal;
        Watch {
            progress: wanted && !args.no_progress && std::io::stderr().is_terminal(),
        }
    }

    fn check(&self, m: &Model, opts: Options, label: &str) -> Verdict {
        let started = std::time::Instant::now();
        let bar = self.progress.then(|| {
            let bar = indicatif::ProgressBar::new_spinner();
            bar.set_style(
                indicatif::ProgressStyle::with_template("{spinner} {prefix} {msg}")
                    .expect("a valid template"),
            );
            bar.set_prefix(label.to_string());
            bar
        });
        let mut last = 0.0f64;
        let v = m.check_monitored(opts, &mut |p| {
            let Some(bar) = &bar else {
                return None;
            };
            let secs = started.elapsed().as_secs_f64();
            let rate = p.states as f64 / secs.max(1e-3);
            bar.set_message(format!(
                "{} states, {:.0}/s, depth {}, queue {}, {} MiB",
                p.states,
                rate,
                p.depth,
                p.queue,
                resident_mib().map_or_else(|| "?".to_string(), |m| m.to_string())
            ));
            if secs - last > 0.1 {
                bar.tick();
                last = secs;
            }
            None
        });
        if let Some(bar) = bar {
            bar.finish_and_clear();
        }
        v
    }
}

/// The resident memory of this process in MiB, where the system tells it (Linux).
fn resident_mib() -> Option<u64> {
    let statm = std::fs::read_to_string("/proc/self/statm").ok()?;
    let pages: u64 = statm.split_whitespace().nth(1)?.parse().ok()?;
    Some((pages * 4096) >> 20)
}

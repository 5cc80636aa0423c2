//! `interlock replay`: a schedule, a replay token's path or the counterexample, driven on
//! real servers and compared step by step (docs/replay.md).

use std::process::ExitCode;

use interlock::{Flavour, Model, Trace};

/// What `replay` was asked for.
pub struct Args {
    pub schedule: Option<String>,
    pub named: Option<String>,
    pub path: Option<String>,
    pub counterexample: bool,
    pub postgres: Option<String>,
    pub mysql: Option<String>,
    pub redis: Option<String>,
    pub time_scale: f64,
    pub json: bool,
}

/// The exit codes of `replay`.
pub const EXIT_CODES: &str = "Exit codes:
  0  the server agrees with the simulation at every step and in the final rows
  1  it diverges (the first step where it does is shown)
  2  bad input or usage, a server that cannot be reached, or a build without the clients
  3  nothing was compared: the trace cannot be reproduced on a server (the reason is
     printed), there is nothing to replay, or no server was given for the model's databases";

/// The traces to replay on `m`, each with its label.
fn traces(m: &Model, args: &Args) -> Result<Vec<(String, Trace)>, String> {
    if let Some(text) = &args.schedule {
        return m
            .run_schedule(text)
            .map(|t| vec![(format!("--schedule \"{}\"", text.trim()), t)])
            .map_err(|e| e.to_string());
    }
    if let Some(token) = &args.path {
        return m
            .trace_of(token)
            .map(|t| vec![("--path".to_string(), t)])
            .map_err(|e| e.to_string());
    }
    if args.counterexample || m.schedule_names().is_empty() {
        let v = m.check();
        let label = format!("the counterexample ({})", v.summary());
        return Ok(v.trace.map(|t| vec![(label, t)]).unwrap_or_default());
    }
    let mut out = Vec::new();
    for r in m.schedule_runs() {
        let wanted = match &args.named {
            Some(n) => r.name == *n,
            None => !r.claims.is_empty(),
        };
        if !wanted {
            continue;
        }
        if let Some(e) = r.error {
            return Err(format!("schedule {}: {e}", r.name));
        }
        out.push((format!("schedule {}", r.name), r.trace));
    }
    if let (Some(n), true) = (&args.named, out.is_empty()) {
        return Err(format!(
            "no schedule named `{n}`\n  hint: the schedules are {}",
            m.schedule_names().join(", ")
        ));
    }
    Ok(out)
}

/// The server a flavour replays on: PostgreSQL's URL, or MySQL/MariaDB's (the mysql
/// flavour on MariaDB is said so in the report).
fn url(f: Flavour, args: &Args) -> Option<&str> {
    match f {
        Flavour::Postgres => args.postgres.as_deref(),
        Flavour::Mariadb | Flavour::Mysql => args.mysql.as_deref(),
    }
}

/// Replays on every model variant its servers were given for; the worst exit code wins.
pub fn run(file: &str, models: &[Model], args: &Args) -> ExitCode {
    let mut codes = Vec::new();
    let mut out = Vec::new();
    for m in models {
        let label = m
            .flavour()
            .map_or(String::new(), |f| format!(" [{}]", f.name()));
        let sql = match m.flavour() {
            None => None,
            Some(f) => match url(f, args) {
                Some(u) => Some(u.to_string()),
                None => {
                    let flag = if f == Flavour::Postgres {
                        "--postgres"
                    } else {
                        "--mysql"
                    };
                    eprintln!("{file}{label}: skipped: no {flag} URL");
                    continue;
                }
            },
        };
        if m.uses_redis() && args.redis.is_none() {
            eprintln!("{file}{label}: skipped: no --redis URL");
            continue;
        }
        let servers = (sql, args.redis.clone());
        match replay_one(file, m, servers, args, &mut out) {
            Ok(code) => codes.push(code),
            Err(e) => {
                eprintln!("error: {file}{label}: {e}");
                codes.push(2);
            }
        }
    }
    if args.json {
        let doc = serde_json::json!({"file": file, "replays": out});
        crate::write_out(&format!(
            "{}\n",
            serde_json::to_string_pretty(&doc).expect("JSON")
        ));
    }
    if codes.is_empty() {
        eprintln!(
            "error: {file}: nothing was replayed\n  hint: give --postgres URL, --mysql URL or \
             --redis URL"
        );
        return ExitCode::from(3);
    }
    let rank = |c: &u8| [0, 3, 4, 2][*c as usize];
    ExitCode::from(codes.into_iter().max_by_key(rank).unwrap_or(0))
}

#[cfg(feature = "servers")]
fn replay_one(
    file: &str,
    m: &Model,
    (sql, redis): (Option<String>, Option<String>),
    args: &Args,
    json: &mut Vec<serde_json::Value>,
) -> Result<u8, String> {
    let flavour = m.flavour().map_or("redis", Flavour::name);
    let traces = traces(m, args)?;
    if traces.is_empty() {
        eprintln!("{file} [{flavour}]: nothing to replay (no counterexample, no schedule)");
        return Ok(3);
    }
    let mut code = 0;
    for (label, t) in traces {
        let why = m.replay_cannot(&t);
        if !why.is_empty() {
            eprintln!(
                "{file} [{flavour}]: {label} cannot be replayed on a real server: {}",
                why.join("; ")
            );
            code = code.max(3);
            continue;
        }
        let opts = interlock::replay::Options {
            sql: sql.clone(),
            redis: redis.clone(),
            time_scale: args.time_scale,
        };
        let report = m.replay_on(&t, &opts)?;
        if args.json {
            let mut j = interlock::replay::json(&report);
            j["flavour"] = serde_json::json!(flavour);
            j["replayed"] = serde_json::json!(label);
            json.push(j);
        } else {
            crate::write_out(&format!(
                "{file} [{flavour}]: {}\nreplaying {label} ({} steps)\n{}\n",
                m.name(),
                t.len(),
                interlock::replay::text(&report)
            ));
        }
        if !report.agrees() {
            code = 1;
        }
    }
    Ok(code)
}

#[cfg(not(feature = "servers"))]
fn replay_one(
    _file: &str,
    _m: &Model,
    _servers: (Option<String>, Option<String>),
    args: &Args,
    _json: &mut Vec<serde_json::Value>,
) -> Result<u8, String> {
    let _ = (traces, args.time_scale);
    Err(
        "this interlock was built without the server clients\n  hint: build it with \
         `cargo build --release --features servers`"
            .into(),
    )
}

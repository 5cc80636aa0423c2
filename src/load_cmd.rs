//! `interlock load`: the model's processes as real concurrent clients of a real server,
//! measured as `simulate` measures (docs/load.md).

use std::process::ExitCode;

use interlock::{Flavour, Model};

/// What `load` was asked for.
pub struct Args {
    pub postgres: Option<String>,
    pub mysql: Option<String>,
    pub clients: Option<usize>,
    pub duration_ms: u64,
    pub time_scale: f64,
    pub seed: u64,
    pub json: bool,
}

/// The exit codes of `load`.
pub const EXIT_CODES: &str = "Exit codes:
  0  every request ran and the final rows hold every property the model expects to hold
  1  the final rows break a property the model expects to hold
  2  bad input or usage, a server that cannot be reached, a client's connection failed, or a
     build without the clients
  3  nothing ran: the model cannot run under load (the reason is printed), or no server was
     given for its database";

/// Loads every model variant whose server was given; the worst exit code wins.
pub fn run(files: &[(String, Vec<Model>)], args: &Args) -> ExitCode {
    let mut codes = Vec::new();
    let mut docs = Vec::new();
    for (file, models) in files {
        for m in models {
            let label = m
                .flavour()
                .map_or(String::new(), |f| format!(" [{}]", f.name()));
            let url = match m.flavour() {
                Some(Flavour::Postgres) => args.postgres.as_deref(),
                Some(_) => args.mysql.as_deref(),
                None => None,
            };
            let Some(url) = url else {
                let flag = if m.flavour() == Some(Flavour::Postgres) {
                    "--postgres"
                } else {
                    "--mysql"
                };
                eprintln!("{file}{label}: skipped: no {flag} URL");
                continue;
            };
            match load_one((file, &label), m, url, args, &mut docs) {
                Ok(code) => codes.push(code),
                Err(e) => {
                    eprintln!("error: {file}{label}: {e}");
                    codes.push(2);
                }
            }
        }
    }
    if args.json {
        let doc = serde_json::json!({"loads": docs});
        crate::write_out(&format!(
            "{}\n",
            serde_json::to_string_pretty(&doc).expect("JSON")
        ));
    }
    if codes.is_empty() {
        eprintln!("error: nothing was loaded\n  hint: give --postgres URL or --mysql URL");
        return ExitCode::from(3);
    }
    let rank = |c: &u8| [0, 3, 4, 2][*c as usize];
    ExitCode::from(codes.into_iter().max_by_key(rank).unwrap_or(0))
}

#[cfg(feature = "servers")]
fn load_one(
    (file, label): (&str, &str),
    m: &Model,
    url: &str,
    args: &Args,
    docs: &mut Vec<serde_json::Value>,
) -> Result<u8, String> {
    let why = m.load_cannot();
    if !why.is_empty() {
        eprintln!("{file}{label}: cannot run under load: {}", why.join("; "));
        return Ok(3);
    }
    let opts = interlock::load::Options {
        sql: url.to_string(),
        clients: args.clients,
        duration_ms: args.duration_ms,
        time_scale: args.time_scale,
        seed: args.seed,
    };
    let l = m.load_on(&opts)?;
    if args.json {
        let mut j = m.load_json(&l);
        j["flavour"] = serde_json::json!(m.flavour().map(Flavour::name));
        docs.push(j);
    } else {
        crate::write_out(&format!("{}\n", m.load_text(&l)));
    }
    let expected = m.expected();
    let unexpected = l.broken.iter().any(|b| expected != format!("violated {b}"));
    Ok(u8::from(unexpected))
}

#[cfg(not(feature = "servers"))]
fn load_one(
    _names: (&str, &str),
    _m: &Model,
    _url: &str,
    args: &Args,
    _docs: &mut Vec<serde_json::Value>,
) -> Result<u8, String> {
    let _ = (args.clients, args.duration_ms, args.time_scale, args.seed);
    Err(
        "this interlock was built without the server clients\n  hint: build it with \
         `cargo build --release --features servers`"
            .into(),
    )
}

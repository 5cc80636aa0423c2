//! `interlock run`: the trace of a chosen interleaving — a `--schedule` written on the
//! command line, or the model's own `schedule` blocks — as a client driver runs it.

use std::process::ExitCode;

use interlock::{Model, ScheduleRun};

/// What `run` was asked for.
pub struct Args {
    /// `--schedule "T1 T2 …"`.
    pub schedule: Option<String>,
    /// `--named NAME`: one of the model's `schedule` blocks.
    pub named: Option<String>,
    pub json: bool,
}

/// The exit codes of `run`.
pub const EXIT_CODES: &str = "Exit codes:
  0  the schedule ran (and every claim about it is true)
  1  a claim of the model's `expect schedule` lines is false
  2  bad input or usage, or a step of the schedule cannot run where it stands";

/// Runs what `args` names on `m` (read from `file`) and prints it.
pub fn run(file: &str, m: &Model, args: &Args) -> ExitCode {
    let runs = match pick(m, args) {
        Ok(runs) => runs,
        Err(e) => {
            eprintln!("error: {file}: {e}");
            return ExitCode::from(2);
        }
    };
    if args.json {
        let items: Vec<serde_json::Value> = runs
            .iter()
            .map(|r| interlock::json::schedule(m, r))
            .collect();
        let doc = serde_json::json!({
            "file": file,
            "model": m.name(),
            "flavour": m.flavour().map(interlock::Flavour::name),
            "schedules": items,
        });
        crate::write_out(&format!(
            "{}\n",
            serde_json::to_string_pretty(&doc).expect("JSON values serialise")
        ));
    } else {
        let flavour = m
            .flavour()
            .map_or(String::new(), |f| format!(" [{}]", f.name()));
        for (i, r) in runs.iter().enumerate() {
            if i > 0 {
                crate::write_out("\n");
            }
            crate::write_out(&format!(
                "{file}{flavour}: {}\nschedule {}\n\n",
                m.name(),
                r.name
            ));
            crate::write_out(&r.text(m));
        }
    }
    let code = |r: &ScheduleRun| match (&r.error, r.met()) {
        (Some(_), _) => 2u8,
        (None, false) => 1,
        (None, true) => 0,
    };
    ExitCode::from(runs.iter().map(code).max().unwrap_or(0))
}

/// The runs asked for: the `--schedule`, one named block, or every block.
fn pick(m: &Model, args: &Args) -> Result<Vec<ScheduleRun>, String> {
    if let Some(text) = &args.schedule {
        if text.split_whitespace().next().is_none() {
            return Err("--schedule is empty\n  hint: name the steps in order: \
                        --schedule \"T1 T2 T1\""
                .into());
        }
        let (trace, error) = m.run_schedule_partly(text);
        return Ok(vec![ScheduleRun {
            name: format!("--schedule \"{}\"", text.trim()),
            trace,
            error,
            claims: Vec::new(),
        }]);
    }
    let names = m.schedule_names();
    if names.is_empty() {
        return Err(
            "the model declares no schedule\n  hint: give one with --schedule \
                    \"T1 T2 …\", or add `schedule NAME { T1 T2 … }` to the file"
                .into(),
        );
    }
    let runs = m.schedule_runs();
    match &args.named {
        None => Ok(runs),
        Some(n) => match runs.into_iter().find(|r| r.name == *n) {
            Some(r) => Ok(vec![r]),
            None => Err(format!(
                "the model has no schedule named `{n}`\n  hint: its schedules are {}",
                names.join(", ")
            )),
        },
    }
}

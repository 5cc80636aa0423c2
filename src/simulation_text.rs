//! `simulate`'s text report: one table row per group, then how requests ended, the retry
//! histogram, and what the runs found of the properties. At most 100 columns.

use crate::simulation::{Figures, Simulation};

/// A simulated counterexample longer than this is not printed in the text report.
const LONGEST_TRACE: usize = 60;

/// Renders the whole report.
pub fn render(sim: &Simulation) -> String {
    let m = sim.model();
    let mut out = String::new();
    let flavour = m
        .flavour()
        .map_or(String::new(), |f| format!(", {}", f.name()));
    out.push_str(&format!(
        "{} — {}{flavour}\n",
        m.origin(),
        runs_line(sim.runs(), sim.model_time_ms())
    ));
    out.push_str(&table(&sim.figures()));
    for f in sim.figures().iter().filter(|f| f.group != "all") {
        out.push_str(&endings(f));
    }
    let (l, lambda, w) = sim.little();
    let mut facts = vec![
        format!("deadlocks {}", sim.deadlocks()),
        format!("in flight {l:.2} (λ {:.1}/s × W {w:.1}ms)", lambda * 1000.0),
    ];
    if sim.faults() > 0 {
        facts.push(format!("faults struck {}", sim.faults()));
    }
    for (name, share) in sim.mutex_utilisation() {
        facts.push(format!("mutex {name} held {:.1}%", share * 100.0));
    }
    out.push_str(&format!("  {}\n", facts.join(" · ")));
    out.push_str(&format!("  {} steps\n", group_digits(sim.events())));
    out.push_str(&verdict(sim));
    out
}

fn runs_line(runs: u64, time_ms: u64) -> String {
    let each = time_ms.checked_div(runs).unwrap_or(0);
    let plural = if runs == 1 { "" } else { "s" };
    format!(
        "{runs} run{plural}, {} of model time each",
        duration(each as f64)
    )
}

/// The table of figures, one row per group.
pub(crate) fn table(figs: &[Figures]) -> String {
    let width = figs.iter().map(|f| f.group.len()).max().unwrap_or(5).max(5);
    let mut out = format!(
        "  {:<width$} {:>8} {:>9} {:>7} {:>7} {:>7} {:>7} {:>7} {:>7} {:>7}\n",
        "group", "requests", "per s", "failed", "retry/r", "waited", "wait99", "p50", "p99", "max"
    );
    for f in figs {
        let failed: u64 = f.failed.iter().map(|(_, n)| n).sum();
        out.push_str(&format!(
            "  {:<width$} {:>8} {:>9.1} {:>7} {:>7.2} {:>6.1}% {:>7} {:>7} {:>7} {:>7}\n",
            f.group,
            f.requests,
            f.throughput,
            failed,
            f.retries_per_request,
            f.wait_rate * 100.0,
            duration(f.lock_wait_p99_ms),
            duration(f.latency_p50_ms),
            duration(f.latency_p99_ms),
            duration(f.latency_max_ms),
        ));
    }
    out
}

/// How a group's requests ended, its errors and its retries.
pub(crate) fn endings(f: &Figures) -> String {
    let list = |v: &[(String, u64)], quote: bool| {
        v.iter()
            .map(|(k, n)| {
                let shown = if quote { format!("'{k}'") } else { k.clone() };
                let meaning =
                    crate::ir::error_meaning(k).map_or(String::new(), |m| format!(" ({m})"));
                format!("{shown} {n}{meaning}")
            })
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut out = format!("  {}: {}", f.group, list(&f.outcomes, false));
    if !f.failed.is_empty() {
        out.push_str(&format!("; failed: {}", list(&f.failed, true)));
    }
    out.push('\n');
    if !f.errors.is_empty() {
        out.push_str(&format!("    errors returned: {}\n", list(&f.errors, true)));
    }
    if f.retry_histogram.len() > 1 {
        let h: Vec<String> = f
            .retry_histogram
            .iter()
            .enumerate()
            .map(|(r, n)| format!("{r}: {n}"))
            .collect();
        out.push_str(&format!(
            "    retries per request — {} · attempts retried {:.1}%\n",
            h.join(" · "),
            f.retry_rate * 100.0
        ));
    }
    for (what, n, mean, p99) in [
        (
            "connection",
            f.pool_waits,
            f.pool_wait_mean_ms,
            f.pool_wait_p99_ms,
        ),
        (
            "server's worker",
            f.worker_waits,
            f.worker_wait_mean_ms,
            f.worker_wait_p99_ms,
        ),
    ] {
        if n > 0 {
            out.push_str(&format!(
                "    waited for a {what} {n} times · mean {} · p99 {}\n",
                duration(mean),
                duration(p99)
            ));
        }
    }
    if f.writes > 0 {
        out.push_str(&format!(
            "    writes {} · matched no row {} ({:.1}%)\n",
            f.writes,
            f.empty_writes,
            crate::sim::tally::ratio(f.empty_writes, f.writes) * 100.0
        ));
    }
    out
}

/// What the runs found of the properties.
fn verdict(sim: &Simulation) -> String {
    let runs = sim.runs();
    let mut out = String::new();
    if sim.stopped() {
        out.push_str("  the time limit ended the simulation: the figures are of the runs done\n");
    }
    match (sim.violated_property(), sim.violation()) {
        (Some(p), Some(trace)) => {
            let broken = sim.violated_runs();
            if trace.len() > LONGEST_TRACE {
                out.push_str(&format!(
                    "✗ {p} broken in {broken} of {runs} runs; the first one's trace has {} steps, \
                     too many to read here:\n  `--format json` prints it and its replay token \
                     (`check --path` replays it); `check` finds the shortest\n",
                    trace.len()
                ));
                return out;
            }
            out.push_str(&format!(
                "✗ {p} broken in {broken} of {runs} runs; the first one's trace:\n"
            ));
            out.push_str(&trace.text(sim.model()));
            let replay = crate::verdict::replay_line_with(
                sim.model().ir(),
                &trace,
                &replay_options(sim.model()),
            );
            out.push_str(&replay);
        }
        _ => out.push_str(&format!(
            "✓ every property held in every state of the {runs} runs (a simulation samples \
             runs; `check` proves)\n"
        )),
    }
    out
}

/// What `check` needs to read the model as it was simulated: its flavour, costs, params.
fn replay_options(m: &crate::Model) -> String {
    let ir = m.ir();
    let mut out = String::new();
    if let Some(f) = m.flavour() {
        out.push_str(&format!(" --db {}", f.name()));
    }
    if let Some(c) = &ir.costs {
        out.push_str(&format!(" --cost {c}"));
    }
    for (n, v) in &ir.workload.params {
        out.push_str(&format!(" --set {n}={v}"));
    }
    out
}

/// Milliseconds as a person reads them: `850us`, `12ms`, `1.5s`, `2m30s`.
pub(crate) fn duration(ms: f64) -> String {
    if ms < 1.0 && ms > 0.0 {
        format!("{:.0}us", ms * 1000.0)
    } else if ms < 1000.0 {
        format!("{ms:.0}ms")
    } else if ms < 60_000.0 {
        format!("{:.1}s", ms / 1000.0)
    } else {
        let s = (ms / 1000.0).round() as u64;
        format!("{}m{:02}s", s / 60, s % 60)
    }
}

/// `1234567` as `1,234,567`.
fn group_digits(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

//! A load run as text (the figures table `simulate` prints, then the server's counters and the
//! final check; ≤ 100 columns) and as JSON (docs/json.md, "Load").

use serde_json::{json, Value};

use super::Load;
use crate::ir::Model;
use crate::simulation::{figures_json, figures_of, label, Figures};

/// The version of the JSON document `load --format json` prints.
pub const LOAD_JSON_VERSION: u32 = 1;

fn figures(m: &Model, l: &Load) -> Vec<Figures> {
    let seconds = l.tally.time as f64 / 1e6;
    let mut out: Vec<Figures> = m
        .groups
        .iter()
        .zip(&l.tally.groups)
        .map(|(g, t)| figures_of(&label(&g.name, g.count), t, seconds, 0.001))
        .collect();
    if m.groups.len() > 1 {
        out.push(figures_of("all", &l.tally.overall(), seconds, 0.001));
    }
    out
}

/// The report as text.
#[must_use]
pub fn text(origin: &str, m: &Model, l: &Load) -> String {
    let figs = figures(m, l);
    let mut out = format!(
        "{origin} — load on {}, {} clients, {} wall time\n",
        l.server,
        l.clients,
        crate::simulation_text::duration(l.tally.time as f64 / 1000.0)
    );
    out.push_str(&crate::simulation_text::table(&figs));
    for f in figs.iter().filter(|f| f.group != "all") {
        out.push_str(&crate::simulation_text::endings(f));
    }
    if !l.counters.is_empty() {
        let c: Vec<String> = l
            .counters
            .iter()
            .map(|(k, v)| format!("{k} +{v}"))
            .collect();
        out.push_str(&crate::verdict::wrap(
            &format!("server counters: {}", c.join(" · ")),
            "  ",
            "    ",
        ));
    }
    out.push_str(&innodb_waits(l));
    out.push_str(&verdict(l));
    for n in &l.notes {
        out.push_str(&crate::verdict::wrap(&format!("note: {n}"), "  ", "    "));
    }
    out
}

/// InnoDB's own count and time of row lock waits, over the lock requests the clients sent.
fn innodb_waits(l: &Load) -> String {
    let get = |k: &str| l.counters.iter().find(|(n, _)| n == k).map(|(_, v)| *v);
    let (Some(waits), Some(ms)) = (get("Innodb_row_lock_waits"), get("Innodb_row_lock_time"))
    else {
        return String::new();
    };
    let requests = l.tally.overall().lock_requests;
    let share = crate::sim::tally::ratio(waits.max(0) as u64, requests) * 100.0;
    let mean = if waits > 0 {
        ms as f64 / waits as f64
    } else {
        0.0
    };
    format!(
        "  row lock waits (InnoDB's counters): {waits} for {requests} lock requests ({share:.1}%) \
         · mean {mean:.1}ms\n"
    )
}

fn verdict(l: &Load) -> String {
    if l.checked.is_empty() {
        return "  final rows: the model states no property to check\n".to_string();
    }
    let each: Vec<String> = l
        .checked
        .iter()
        .map(|p| {
            let mark = if l.broken.contains(p) {
                "✗ broken"
            } else {
                "holds"
            };
            format!("{p} {mark}")
        })
        .collect();
    crate::verdict::wrap(&format!("final rows: {}", each.join(" · ")), "  ", "    ")
}

/// The report as JSON.
#[must_use]
pub fn json(origin: &str, m: &Model, l: &Load) -> Value {
    json!({
        "version": LOAD_JSON_VERSION,
        "model": origin,
        "server": l.server,
        "clients": l.clients,
        "wall_ms": (l.tally.time as f64 / 1000.0).round() as u64,
        "groups": figures(m, l).iter().map(figures_json).collect::<Vec<_>>(),
        "server_counters": l.counters.iter().map(|(k, v)| json!({"name": k, "increase": v})).collect::<Vec<_>>(),
        "properties": l.checked.iter().map(|p| json!({"name": p, "holds": !l.broken.contains(p)})).collect::<Vec<_>>(),
        "notes": l.notes,
    })
}

//! A replay side by side: statement, what the simulation answered, what the server answered.

use super::{Line, Report};
use serde_json::{json, Value as Json};

const WIDTH: usize = 100;
const NUMBER: usize = 3;
const ANSWER: usize = 20;

/// The table, at most 100 columns, then the verdict line.
#[must_use]
pub fn text(r: &Report) -> String {
    let who = r
        .lines
        .iter()
        .map(|l| l.who.chars().count())
        .max()
        .unwrap_or(3)
        .max(3);
    let statement = WIDTH - NUMBER - who - 2 * ANSWER - 2 - 8;
    let widths = [NUMBER, who, statement, ANSWER, ANSWER, 1];
    let mut out = format!("server: {}\n", r.server);
    for n in &r.notes {
        out.push_str(&format!("note: {n}\n"));
    }
    out.push('\n');
    out.push_str(&row(
        &widths,
        &["#", "who", "statement", "simulated", "server", ""],
    ));
    for l in &r.lines {
        let mark = if l.agree { "✓" } else { "✗" };
        let cells = [
            &*l.number,
            &l.who,
            &l.statement,
            &l.simulated,
            &l.server,
            mark,
        ];
        out.push_str(&row(&widths, &cells));
    }
    match r.lines.iter().position(|l| !l.agree) {
        None => out.push_str(&format!(
            "✓ the server agrees at every step ({} lines, final rows included)\n",
            r.lines.len()
        )),
        Some(i) => {
            let l = &r.lines[i];
            out.push_str(&format!(
                "✗ the server diverges at step {} ({}): simulated {}, server {}\n",
                l.number, l.who, l.simulated, l.server
            ));
        }
    }
    out
}

/// The same as data: `{server, notes, agrees, lines: [{step, who, statement, simulated,
/// server, agree}]}`.
#[must_use]
pub fn json(r: &Report) -> Json {
    let lines: Vec<Json> = r
        .lines
        .iter()
        .map(|l: &Line| {
            json!({"step": l.number, "who": l.who, "statement": l.statement,
                   "simulated": l.simulated, "server": l.server, "agree": l.agree})
        })
        .collect();
    json!({"server": r.server, "notes": r.notes, "agrees": r.agrees(), "lines": lines})
}

/// One row: the trace table's, cells wrapped at spaces to their width.
fn row(widths: &[usize], cells: &[&str]) -> String {
    let cells: Vec<String> = cells.iter().map(|c| (*c).to_string()).collect();
    crate::trace::text::grid_row(widths, &cells)
}

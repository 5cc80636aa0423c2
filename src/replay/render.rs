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

/// One row; cells wrap at spaces to their width.
fn row(widths: &[usize], cells: &[&str]) -> String {
    let wrapped: Vec<Vec<String>> = cells.iter().zip(widths).map(|(c, &w)| wrap(c, w)).collect();
    let height = wrapped.iter().map(Vec::len).max().unwrap_or(1).max(1);
    let mut out = String::new();
    for i in 0..height {
        let mut line = String::new();
        for (k, (cell, &w)) in wrapped.iter().zip(widths).enumerate() {
            let text = cell.get(i).map_or("", String::as_str);
            line.push_str(text);
            if k + 1 < widths.len() {
                line.push_str(&" ".repeat(w.saturating_sub(text.chars().count()) + 2));
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

fn wrap(text: &str, w: usize) -> Vec<String> {
    let mut lines = vec![String::new()];
    for word in text.split(' ') {
        let cur = lines.last_mut().expect("a line");
        let n = cur.chars().count();
        if n > 0 && n + 1 + word.chars().count() > w {
            lines.push(word.to_string());
        } else {
            if n > 0 {
                cur.push(' ');
            }
            cur.push_str(word);
        }
    }
    lines
}

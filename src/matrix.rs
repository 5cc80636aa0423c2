//! The strategy × fault matrix (`interlock matrix`, docs/matrix.md): built from each checked
//! model's path, tags and verdict, rendered as text (≤ 100 columns), Markdown or HTML. Pure:
//! it reads no file and runs no search; the command gathers the verdicts and the figures.

use std::fmt::Write as _;

use crate::html::escape as esc;
use crate::lang::tags::{FAULTS, STRATEGIES};
use crate::{Failure, Figures, Outcome, Verdict};

/// What the matrix shows of one check of one model (one flavour of it).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    /// The model file, as given (`models/optimistic/version-check.model`).
    pub path: String,
    /// The flavour, when the file is checked against several.
    pub flavour: Option<String>,
    /// The `strategy` tag.
    pub strategy: String,
    /// The `fault` tag.
    pub fault: String,
    /// The verdict in a cell's words: `holds`, `✗ NAME`, `deadlock`, `incomplete`.
    pub verdict: String,
    /// Whether the model met its expectation.
    pub met: bool,
    /// The counterexample's replay token, if there is one.
    pub token: Option<String>,
}

impl Entry {
    /// The entry of a verdict of the model in `path`; `None` when the model has no `strategy`
    /// or no `fault` tag (it stays out of the matrix).
    #[must_use]
    pub fn of(path: &str, flavour: Option<&str>, v: &Verdict) -> Option<Self> {
        let m = &v.model;
        let (strategy, fault) = (m.tag("strategy")?, m.tag("fault")?);
        Some(Entry {
            path: path.to_string(),
            flavour: flavour.map(str::to_string),
            strategy: strategy.to_string(),
            fault: fault.to_string(),
            verdict: cell_words(v),
            met: v.met(),
            token: v.trace.as_ref().map(|t| t.token(m)),
        })
    }

    /// The name shown in a cell: the file's folder and name without `.model`
    /// (`redis/lost-reply`), and the flavour.
    #[must_use]
    pub fn label(&self) -> String {
        let parts: Vec<&str> = self.path.rsplit('/').take(2).collect();
        let file = parts.iter().rev().copied().collect::<Vec<_>>().join("/");
        let stem = file.strip_suffix(".model").unwrap_or(&file);
        match &self.flavour {
            Some(f) => format!("{stem} [{f}]"),
            None => stem.to_string(),
        }
    }

    /// `interlock check FILE`, with `--db` for one flavour of several.
    #[must_use]
    pub fn command(&self) -> String {
        match &self.flavour {
            Some(f) => format!("interlock check {} --db {f}", self.path),
            None => format!("interlock check {}", self.path),
        }
    }

    fn failed(&self) -> bool {
        self.verdict != "holds" && self.verdict != "incomplete"
    }
}

/// A verdict in a cell's words.
fn cell_words(v: &Verdict) -> String {
    match &v.outcome {
        Outcome::Holds => "holds".into(),
        Outcome::Incomplete { .. } => "incomplete".into(),
        Outcome::Failed {
            failure: Failure::Deadlock,
            ..
        } => "deadlock".into(),
        Outcome::Failed {
            failure: Failure::Unreached(_),
            ..
        } => format!("✗ {}", v.summary()),
        Outcome::Failed { failure, .. } => format!("✗ {}", v.model.failure_name(*failure)),
    }
}

/// The page `check --html-dir DIR` writes for a model: its path with `/` turned into `-`
/// and `.model` into `.html` (`models/redis/lost-reply.model` → `models-redis-lost-reply.html`).
#[must_use]
pub fn page_name(path: &str) -> String {
    let trimmed = path.trim_start_matches("./");
    let stem = trimmed.strip_suffix(".model").unwrap_or(trimmed);
    format!("{}.html", stem.replace(['/', '\\'], "-"))
}

/// The simulator's figures of one strategy under the exercise's workload.
#[derive(Clone, Debug)]
pub struct Cost {
    /// The exercise model simulated.
    pub path: String,
    /// Its `strategy` tag.
    pub strategy: String,
    /// The figures of all its processes together.
    pub figures: Figures,
    /// Runs in which a property broke.
    pub violated_runs: u64,
}

/// How the cost rows were measured, said above them.
#[derive(Clone, Debug)]
pub struct Workload {
    /// The cost file.
    pub cost_file: String,
    /// The `param` values set (`clients=100`).
    pub set: Vec<(String, String)>,
    /// The seed.
    pub seed: u64,
    /// Runs per model.
    pub runs: u64,
    /// Model time of a run, in milliseconds.
    pub duration_ms: u64,
}

/// The matrix: entries sorted into cells, rows and columns in the vocabulary's order.
#[derive(Clone, Debug)]
pub struct Matrix {
    entries: Vec<Entry>,
    /// Models checked that have no `strategy`/`fault` tags.
    pub untagged: Vec<String>,
    /// `--cost`: the measured cost per strategy, and how.
    pub costs: Option<(Workload, Vec<Cost>)>,
}

/// Where links point: the folder the output is read from, and `--html-dir`.
#[derive(Clone, Debug, Default)]
pub struct Links {
    /// The folder the Markdown or HTML file will be in, relative to the paths (`docs`).
    pub from: String,
    /// `--html-dir`: link each model to its page there instead of to its file.
    pub html_dir: Option<String>,
}

impl Links {
    /// The link of an entry, relative to [`Links::from`].
    #[must_use]
    pub fn target(&self, e: &Entry) -> String {
        let to = match &self.html_dir {
            Some(dir) => format!("{}/{}", dir.trim_end_matches('/'), page_name(&e.path)),
            None => e.path.clone(),
        };
        relative(&self.from, &to)
    }
}

/// `to` (relative to the working folder) as seen from the folder `from` (relative too).
fn relative(from: &str, to: &str) -> String {
    let from: Vec<&str> = from
        .split('/')
        .filter(|p| !p.is_empty() && *p != ".")
        .collect();
    let to_parts: Vec<&str> = to.split('/').filter(|p| *p != ".").collect();
    let common = from
        .iter()
        .zip(&to_parts)
        .take_while(|(a, b)| a == b)
        .count();
    let mut out: Vec<&str> = vec![".."; from.len() - common];
    out.extend(&to_parts[common..]);
    out.join("/")
}

/// The order of a value in a vocabulary (unknown values last, by name).
fn rank(vocabulary: &[&str], value: &str) -> (usize, String) {
    let i = vocabulary.iter().position(|v| *v == value);
    (i.unwrap_or(vocabulary.len()), value.to_string())
}

impl Matrix {
    /// The matrix of these entries (in any order).
    #[must_use]
    pub fn new(mut entries: Vec<Entry>, untagged: Vec<String>) -> Self {
        entries.sort_by(|a, b| {
            let key = |e: &Entry| {
                (
                    rank(&STRATEGIES, &e.strategy),
                    rank(&FAULTS, &e.fault),
                    e.path.clone(),
                )
            };
            key(a).cmp(&key(b))
        });
        Matrix {
            entries,
            untagged,
            costs: None,
        }
    }

    /// The entries, by strategy, fault and path.
    #[must_use]
    pub fn entries(&self) -> &[Entry] {
        &self.entries
    }

    /// The strategies with at least one model, in order.
    fn strategies(&self) -> Vec<&str> {
        let mut out: Vec<&str> = Vec::new();
        for e in &self.entries {
            if !out.contains(&e.strategy.as_str()) {
                out.push(&e.strategy);
            }
        }
        out
    }

    /// The faults with at least one model, in order.
    fn faults(&self) -> Vec<&str> {
        let mut out: Vec<&str> = self.entries.iter().map(|e| e.fault.as_str()).collect();
        out.sort_by_key(|f| rank(&FAULTS, f));
        out.dedup();
        out
    }

    fn cell(&self, strategy: &str, fault: &str) -> Vec<&Entry> {
        let hit = |e: &&Entry| e.strategy == strategy && e.fault == fault;
        self.entries.iter().filter(hit).collect()
    }

    /// Whether every model met its expectation.
    #[must_use]
    pub fn all_met(&self) -> bool {
        self.entries.iter().all(|e| e.met)
    }

    fn counts_line(&self) -> String {
        let files: std::collections::BTreeSet<&str> =
            self.entries.iter().map(|e| e.path.as_str()).collect();
        let met = self.entries.iter().filter(|e| e.met).count();
        format!(
            "{} models ({} checks, {met} as expected); {} untagged models left out",
            files.len(),
            self.entries.len(),
            self.untagged.len()
        )
    }

    /// The matrix as text, ≤ 100 columns: a grid of counts (`3✓ 2✗`), then each cell's
    /// models with their verdicts.
    #[must_use]
    pub fn text(&self) -> String {
        let mut out = format!("strategy × fault: {}\n\n", self.counts_line());
        let faults = self.faults();
        let width = 6usize;
        let label = 19usize;
        let _ = write!(out, "{:<label$}", "");
        for f in &faults {
            let short: String = f.chars().take(width).collect();
            let _ = write!(out, " {short:<width$}");
        }
        out = out.trim_end().to_string();
        out.push('\n');
        for s in self.strategies() {
            let mut line = format!("{s:<label$}");
            for f in &faults {
                let cell = self.cell(s, f);
                let ok = cell.iter().filter(|e| e.verdict == "holds").count();
                let bad = cell.iter().filter(|e| e.failed()).count();
                let open = cell.len() - ok - bad;
                let mut words = Vec::new();
                if ok > 0 {
                    words.push(format!("{ok}✓"));
                }
                if bad > 0 {
                    words.push(format!("{bad}✗"));
                }
                if open > 0 {
                    words.push(format!("{open}?"));
                }
                let text = if cell.is_empty() {
                    "·".to_string()
                } else {
                    words.join("")
                };
                let pad = width.saturating_sub(text.chars().count());
                let _ = write!(line, " {text}{}", " ".repeat(pad));
            }
            out.push_str(line.trim_end());
            out.push('\n');
        }
        out.push_str(
            "\n✓ holds  ✗ a property violated or a deadlock  ? incomplete  · no model; \
             columns cut to 6 letters\n",
        );
        for s in self.strategies() {
            for f in &faults {
                let cell = self.cell(s, f);
                if cell.is_empty() {
                    continue;
                }
                let _ = writeln!(out, "\n{s} × {f}");
                for e in cell {
                    let unmet = if e.met { "" } else { "  (NOT as expected)" };
                    let line = format!("  {:<46} {}{unmet}", e.label(), e.verdict);
                    out.push_str(&clip(&line, 100));
                    out.push('\n');
                }
            }
        }
        if let Some((w, costs)) = &self.costs {
            out.push('\n');
            out.push_str(&cost_text(w, costs));
        }
        out
    }

    /// The matrix as Markdown: one table, each model a link (`links`), its `check` command as
    /// the link's title; the counterexamples' replay commands as footnotes below.
    #[must_use]
    pub fn markdown(&self, links: &Links) -> String {
        let faults = self.faults();
        let mut out = format!("{}.\n\n", self.counts_line());
        let _ = writeln!(out, "| strategy \\ fault | {} |", faults.join(" | "));
        let _ = writeln!(out, "|---|{}", "---|".repeat(faults.len()));
        let notes = self.notes();
        for s in self.strategies() {
            let mut row = format!("| **{s}** |");
            for f in &faults {
                let items: Vec<String> = self
                    .cell(s, f)
                    .iter()
                    .map(|e| {
                        let note = notes
                            .iter()
                            .position(|n| std::ptr::eq(*n, *e))
                            .map_or(String::new(), |i| format!(" [^{}]", i + 1));
                        let flag = if e.met { "" } else { " **(NOT as expected)**" };
                        format!(
                            "[{}]({} \"{}\"): {}{note}{flag}",
                            e.label(),
                            links.target(e),
                            e.command(),
                            md_cell(&e.verdict)
                        )
                    })
                    .collect();
                let _ = write!(row, " {} |", items.join("<br>"));
            }
            out.push_str(&row);
            out.push('\n');
        }
        out.push_str(
            "\nEach model links to its file; hover for its `check` command. `✗ NAME`: the \
             property the shortest counterexample breaks.\n",
        );
        if !notes.is_empty() {
            out.push('\n');
            for (i, e) in notes.iter().enumerate() {
                let token = e.token.as_deref().unwrap_or("");
                let _ = writeln!(
                    out,
                    "[^{}]: `{} --path '{}'`",
                    i + 1,
                    e.command(),
                    token.replace('`', "'")
                );
            }
        }
        if let Some((w, costs)) = &self.costs {
            out.push('\n');
            out.push_str(&cost_markdown(w, costs));
        }
        out
    }

    /// The entries with a counterexample, in order: the footnotes.
    fn notes(&self) -> Vec<&Entry> {
        self.entries.iter().filter(|e| e.token.is_some()).collect()
    }

    /// The matrix as one self-contained HTML page (no script, no network).
    #[must_use]
    pub fn html(&self, links: &Links) -> String {
        let faults = self.faults();
        let mut out = String::from(
            "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
             <title>interlock: strategy × fault</title>\n<style>\n\
             body{font-family:sans-serif;margin:1.5em}\
             table{border-collapse:collapse}\
             td,th{border:1px solid #bbb;padding:.3em .5em;vertical-align:top;font-size:90%}\
             .holds{color:#060}.fails{color:#a00}.unmet{background:#fdd}\n\
             </style>\n</head>\n<body>\n<h1>Strategy × fault</h1>\n",
        );
        let _ = writeln!(out, "<p>{}.</p>", esc(&self.counts_line()));
        out.push_str("<table>\n<tr><th>strategy \\ fault</th>");
        for f in &faults {
            let _ = write!(out, "<th>{}</th>", esc(f));
        }
        out.push_str("</tr>\n");
        for s in self.strategies() {
            let _ = write!(out, "<tr><th>{}</th>", esc(s));
            for f in &faults {
                out.push_str("<td>");
                for (i, e) in self.cell(s, f).iter().enumerate() {
                    if i > 0 {
                        out.push_str("<br>");
                    }
                    let class = match (e.met, e.failed()) {
                        (false, _) => "unmet",
                        (true, true) => "fails",
                        (true, false) => "holds",
                    };
                    let title = match &e.token {
                        Some(t) => format!("{} --path '{t}'", e.command()),
                        None => e.command(),
                    };
                    let _ = write!(
                        out,
                        "<a href=\"{}\" title=\"{}\">{}</a>: <span class=\"{class}\">{}</span>",
                        esc(&links.target(e)),
                        esc(&title),
                        esc(&e.label()),
                        esc(&e.verdict)
                    );
                }
                out.push_str("</td>");
            }
            out.push_str("</tr>\n");
        }
        out.push_str("</table>\n");
        if let Some((w, costs)) = &self.costs {
            let _ = writeln!(
                out,
                "<h2>Cost per strategy</h2>\n<p>{}</p>",
                esc(&workload(w))
            );
            out.push_str("<table>\n<tr>");
            for h in COST_HEADERS {
                let _ = write!(out, "<th>{}</th>", esc(h));
            }
            out.push_str("</tr>\n");
            for c in costs {
                out.push_str("<tr>");
                for v in cost_cells(c) {
                    let _ = write!(out, "<td>{}</td>", esc(&v));
                }
                out.push_str("</tr>\n");
            }
            out.push_str("</table>\n");
        }
        out.push_str("</body>\n</html>\n");
        out
    }
}

/// `|` would end a Markdown cell.
fn md_cell(s: &str) -> String {
    s.replace('|', "\\|")
}

/// At most `n` characters, the last an ellipsis when cut.
fn clip(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        return s.to_string();
    }
    let mut out: String = s.chars().take(n - 1).collect();
    out.push('…');
    out
}

const COST_HEADERS: [&str; 8] = [
    "strategy",
    "model",
    "requests",
    "outcomes",
    "retries / request",
    "lock requests that waited",
    "p99 latency",
    "throughput",
];

fn cost_cells(c: &Cost) -> Vec<String> {
    let f = &c.figures;
    let outcomes: Vec<String> = f
        .outcomes
        .iter()
        .map(|(label, n)| format!("{label} {n}"))
        .chain(
            f.failed
                .iter()
                .map(|(code, n)| format!("failed {code} {n}")),
        )
        .collect();
    let file = c.path.rsplit('/').next().unwrap_or(&c.path);
    vec![
        c.strategy.clone(),
        file.trim_end_matches(".model").to_string(),
        f.requests.to_string(),
        outcomes.join(", "),
        format!("{:.2}", f.retries_per_request),
        format!("{:.1} %", f.wait_rate * 100.0),
        format!("{:.0} ms", f.latency_p99_ms),
        format!("{:.1}/s", f.throughput),
    ]
}

fn workload(w: &Workload) -> String {
    let set: Vec<String> = w.set.iter().map(|(k, v)| format!("{k}={v}")).collect();
    format!(
        "Measured by the simulator: each exercise model with `{}`, priced by {}, seed {}, {} runs \
         of {} ms model time each (interlock simulate … --cost {} {} --seed {} --runs {}).",
        set.join(" "),
        w.cost_file,
        w.seed,
        w.runs,
        w.duration_ms,
        w.cost_file,
        w.set
            .iter()
            .map(|(k, v)| format!("--set {k}={v}"))
            .collect::<Vec<_>>()
            .join(" "),
        w.seed,
        w.runs
    )
}

fn cost_text(w: &Workload, costs: &[Cost]) -> String {
    let mut out = String::from("cost per strategy\n");
    for line in wrap(&workload(w), 98) {
        let _ = writeln!(out, "  {line}");
    }
    let _ = writeln!(
        out,
        "\n  {:<20} {:>8} {:>9} {:>9} {:>9} {:>10}",
        "strategy", "requests", "retries/r", "waited", "p99", "throughput"
    );
    for c in costs {
        let cells = cost_cells(c);
        let _ = writeln!(
            out,
            "  {:<20} {:>8} {:>9} {:>9} {:>9} {:>10}",
            clip(&cells[0], 20),
            cells[2],
            cells[4],
            cells[5],
            cells[6],
            cells[7]
        );
        let _ = writeln!(out, "  {:<20} {}", "", clip(&cells[3], 76));
        if c.violated_runs > 0 {
            let _ = writeln!(
                out,
                "  {:<20} ✗ {} runs broke a property",
                "", c.violated_runs
            );
        }
    }
    out
}

fn cost_markdown(w: &Workload, costs: &[Cost]) -> String {
    let mut out = format!("## Cost per strategy\n\n{}\n\n", workload(w));
    let _ = writeln!(out, "| {} |", COST_HEADERS.join(" | "));
    let _ = writeln!(out, "|{}", "---|".repeat(COST_HEADERS.len()));
    for c in costs {
        let cells: Vec<String> = cost_cells(c).iter().map(|s| md_cell(s)).collect();
        let _ = writeln!(out, "| {} |", cells.join(" | "));
    }
    let broke: u64 = costs.iter().map(|c| c.violated_runs).sum();
    let _ = writeln!(
        out,
        "\n{}",
        if broke == 0 {
            "No run broke a property.".to_string()
        } else {
            format!("{broke} runs broke a property.")
        }
    );
    out
}

/// Words of `text` in lines of at most `n` characters.
fn wrap(text: &str, n: usize) -> Vec<String> {
    let mut lines = Vec::new();
    let mut line = String::new();
    for word in text.split(' ') {
        if !line.is_empty() && line.chars().count() + 1 + word.chars().count() > n {
            lines.push(std::mem::take(&mut line));
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    if !line.is_empty() {
        lines.push(line);
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(path: &str, strategy: &str, fault: &str, verdict: &str) -> Entry {
        Entry {
            path: path.into(),
            flavour: None,
            strategy: strategy.into(),
            fault: fault.into(),
            verdict: verdict.into(),
            met: true,
            token: None,
        }
    }

    #[test]
    fn page_names_follow_the_documented_rule() {
        assert_eq!(
            page_name("models/redis/lost-reply.model"),
            "models-redis-lost-reply.html"
        );
        assert_eq!(page_name("./a/b.model"), "a-b.html");
    }

    #[test]
    fn links_are_relative_to_the_output() {
        let e = entry("models/a/b.model", "mutex", "none", "holds");
        let l = Links {
            from: "docs".into(),
            html_dir: None,
        };
        assert_eq!(l.target(&e), "../models/a/b.model");
        let l = Links {
            from: "out".into(),
            html_dir: Some("out/pages".into()),
        };
        assert_eq!(l.target(&e), "pages/models-a-b.html");
    }

    #[test]
    fn rows_and_columns_follow_the_vocabulary() {
        let m = Matrix::new(
            vec![
                entry("z.model", "redlock", "pause", "✗ at_most_one_inside"),
                entry("a.model", "no-lock", "drift", "holds"),
                entry("b.model", "no-lock", "none", "holds"),
            ],
            vec![],
        );
        assert_eq!(m.strategies(), ["no-lock", "redlock"]);
        assert_eq!(m.faults(), ["none", "pause", "drift"]);
        let text = m.text();
        assert!(text.lines().all(|l| l.chars().count() <= 100), "{text}");
        assert!(text.contains("redlock             ·      1✗"), "{text}");
    }
}

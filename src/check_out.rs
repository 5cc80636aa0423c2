//! What `check` prints besides its text: the JSON document, the HTML page, the Mermaid and
//! Graphviz diagrams of every counterexample, and the pages of `--html-dir`.

use interlock::{Error, Verdict};
use std::path::Path;

/// `check --format`.
#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum CheckFormat {
    /// The summary table, and each notable verdict with its trace.
    Text,
    /// One JSON document (docs/json.md).
    Json,
    /// One self-contained HTML page to step through the traces (docs/html.md).
    Html,
    /// A Mermaid sequence diagram per counterexample.
    Mermaid,
    /// A Graphviz graph per counterexample, and a small model's whole state graph.
    Dot,
}

/// What was checked: a label with its verdict, or why there is none.
pub type Row = (String, Result<Verdict, Error>);

/// The exit code of these results (docs/tutorial.md): over several, 2 wins over 1, 1 over 3,
/// 3 over 0.
pub fn exit_number<'a>(rows: impl IntoIterator<Item = &'a Row>) -> u8 {
    let code = |r: &Result<Verdict, Error>| match r {
        Err(_) => 2u8,
        Ok(v) if matches!(v.outcome, interlock::Outcome::Incomplete { .. }) => 3,
        Ok(v) if v.met() => 0,
        Ok(_) => 1,
    };
    let precedence = |c: &u8| [0, 2, 3, 1][*c as usize];
    let worst = rows
        .into_iter()
        .map(|(_, r)| code(r))
        .max_by_key(precedence);
    worst.unwrap_or(0)
}

/// The output of a format other than text.
pub fn render(format: CheckFormat, rows: &[Row]) -> String {
    let all: Vec<&Row> = rows.iter().collect();
    match format {
        CheckFormat::Text => String::new(),
        CheckFormat::Json => {
            let doc = document(&all);
            format!(
                "{}\n",
                serde_json::to_string_pretty(&doc).expect("JSON values serialise")
            )
        }
        CheckFormat::Html => page(&all),
        CheckFormat::Mermaid | CheckFormat::Dot => diagrams(format, rows),
    }
}

/// The versioned document of docs/json.md.
fn document(rows: &[&Row]) -> serde_json::Value {
    let items = rows.iter().map(|(f, r)| result(f, r)).collect();
    interlock::json::document(items, exit_number(rows.iter().copied()))
}

fn result(f: &str, r: &Result<Verdict, Error>) -> serde_json::Value {
    match r {
        Ok(v) => interlock::json::verdict(f, v),
        Err(Error::Invalid(d)) => interlock::json::invalid(f, d),
        Err(e) => {
            let item = serde_json::json!({
                "message": e.to_string().trim_start_matches("error: "), "label": "",
                "hint": null, "line": null, "column": null, "end_line": null,
                "end_column": null,
            });
            interlock::json::unreadable(f, vec![item], e.to_string())
        }
    }
}

/// The page of these results: their document, sources and diagrams.
fn page(rows: &[&Row]) -> String {
    let extras: Vec<serde_json::Value> = rows
        .iter()
        .map(|(_, r)| {
            r.as_ref()
                .map_or(serde_json::Value::Null, interlock::html::extra)
        })
        .collect();
    let title = match rows {
        [one] => format!("interlock: {}", one.0),
        _ => format!("interlock: {} models", rows.len()),
    };
    interlock::html::page(&title, &document(rows), &extras)
}

/// Each counterexample's diagram under a comment naming its model; a model without one is
/// named in a comment too, so that the output says what it covered.
fn diagrams(format: CheckFormat, rows: &[Row]) -> String {
    let comment = if format == CheckFormat::Mermaid {
        "%%"
    } else {
        "//"
    };
    let mut out = String::new();
    for (label, r) in rows {
        let Ok(v) = r else {
            out.push_str(&format!(
                "{comment} {label}: not checked (its errors are on standard error)\n\n"
            ));
            continue;
        };
        match &v.trace {
            Some(t) => {
                out.push_str(&format!("{comment} {label}: {}\n", v.summary()));
                out.push_str(&if format == CheckFormat::Mermaid {
                    t.mermaid(&v.model)
                } else {
                    t.dot(&v.model)
                });
                out.push('\n');
            }
            None => out.push_str(&format!(
                "{comment} {label}: {}, no counterexample\n\n",
                v.summary()
            )),
        }
        if format == CheckFormat::Dot {
            out.push_str(&state_graph(label, v));
        }
    }
    out
}

/// `--format dot`'s second graph of a model: its whole state graph when it is small, or a
/// comment saying why there is none.
fn state_graph(label: &str, v: &interlock::Verdict) -> String {
    match v.state_graph() {
        Some(g) => format!("// {label}: every reachable state\n{g}\n"),
        None => format!(
            "// {label}: no state graph: more than {} states\n\n",
            interlock::STATE_GRAPH_MAX
        ),
    }
}

/// `--html-dir DIR`: a page per model file (every flavour it ran against on one page, its
/// name `matrix::page_name`'s) and an `index.html` listing them.
pub fn html_dir(dir: &Path, rows: &[Row]) -> Result<(), String> {
    std::fs::create_dir_all(dir)
        .map_err(|e| format!("error: cannot create {}: {e}", dir.display()))?;
    let mut files: Vec<(String, Vec<&Row>)> = Vec::new();
    for row in rows {
        let file = row.0.split(" [").next().unwrap_or(&row.0).to_string();
        match files.iter_mut().find(|(f, _)| *f == file) {
            Some((_, mine)) => mine.push(row),
            None => files.push((file, vec![row])),
        }
    }
    let mut index = Vec::new();
    for (file, mine) in &files {
        let name = interlock::matrix::page_name(file);
        write(&dir.join(&name), &page(mine))?;
        for (label, r) in mine {
            let (summary, met) = match r {
                Ok(v) => (v.summary(), v.met()),
                Err(_) => ("not checked: the model has errors".to_string(), false),
            };
            index.push((label.clone(), name.clone(), summary, met));
        }
    }
    write(&dir.join("index.html"), &interlock::html::index(&index))
}

fn write(path: &Path, text: &str) -> Result<(), String> {
    std::fs::write(path, text).map_err(|e| format!("error: cannot write {}: {e}", path.display()))
}

//! The trace as pictures: Mermaid sequence diagrams, Graphviz graphs and the HTML page, for
//! every built-in counterexample (their rendering in a browser is .ci/browser's).

use interlock::{Model, Options};
use serde_json::Value as Json;
use std::process::Command;

/// Every counterexample of every built-in model (every flavour), with its label.
fn counterexamples() -> Vec<(String, Model, interlock::Verdict)> {
    let mut out = Vec::new();
    for path in super::models::all_models() {
        let model = Model::from_file(&path).unwrap_or_else(|e| panic!("{e}"));
        for m in model.variants().unwrap_or_else(|e| panic!("{e}")) {
            let v = m.check_with(Options::default());
            if v.trace.is_some() {
                out.push((path.display().to_string(), m, v));
            }
        }
    }
    assert!(out.len() > 40, "only {} counterexamples", out.len());
    out
}

/// A Mermaid message or note: text after the first `: `, with the entities this crate
/// writes taken out, must hold nothing Mermaid reads as syntax.
fn mermaid_text_is_plain(line: &str) -> bool {
    let Some((_, text)) = line.split_once(": ") else {
        return true;
    };
    let mut rest = text.replace("<br/>", " ");
    for entity in ["#35;", "#59;", "#lt;", "#gt;"] {
        rest = rest.replace(entity, " ");
    }
    !rest.contains([';', '#', '<', '>'])
}

#[test]
fn every_counterexample_draws_as_a_sequence_diagram() {
    for (label, m, v) in counterexamples() {
        let t = v.trace.as_ref().unwrap();
        let d = t.mermaid(&m);
        let lines: Vec<&str> = d.lines().collect();
        assert_eq!(lines[0], "sequenceDiagram", "{label}");
        for p in 0..m.ir().processes.len() {
            let name = m.ir().process_name(interlock::ir::value::Pid(p as u16));
            assert!(
                d.contains(&format!("participant P{p} as {name}")),
                "{label}: {name}\n{d}"
            );
        }
        for l in &lines[1..] {
            assert!(l.starts_with("    "), "{label}: {l}");
            assert!(mermaid_text_is_plain(l), "{label}: {l}");
        }
        let loops = lines.iter().filter(|l| l.trim() == "loop forever").count();
        let ends = lines.iter().filter(|l| l.trim() == "end").count();
        assert_eq!(
            (loops, ends),
            (usize::from(t.loop_start.is_some()), loops),
            "{label}"
        );
        let last = lines.last().unwrap();
        assert!(
            last.contains("Note over") && last.contains('✗'),
            "{label}: {last}"
        );
        let messages = lines.iter().filter(|l| l.contains("->>")).count();
        let acting = t
            .steps
            .iter()
            .filter(|s| s.choice.actor().is_some())
            .count();
        assert!(
            messages <= acting,
            "{label}: {messages} messages for {acting} steps"
        );
    }
}

#[test]
fn every_counterexample_draws_as_a_graph() {
    let (mut cycles, mut waits) = (0, 0);
    for (label, m, v) in counterexamples() {
        let t = v.trace.as_ref().unwrap();
        let g = t.dot(&m);
        assert!(
            g.starts_with("digraph trace {\n") && g.ends_with("}\n"),
            "{label}"
        );
        for l in g.lines() {
            let quotes = l
                .replace("\\\\", "")
                .replace("\\\"", "")
                .matches('"')
                .count();
            assert_eq!(quotes % 2, 0, "{label}: unbalanced quotes in {l}");
        }
        let states = g
            .lines()
            .filter(|l| l.trim_start().starts_with('s') && !l.contains(" -> "))
            .filter(|l| l.contains(" [label="))
            .count();
        let path_edges = g
            .lines()
            .filter(|l| l.trim_start().starts_with('s') && l.contains(" -> "))
            .count();
        assert_eq!(
            path_edges,
            states - 1 + usize::from(t.loop_start.is_some()),
            "{label}\n{g}"
        );
        assert!(
            g.contains("color=red, penwidth=2"),
            "{label}: the failing state is marked"
        );
        if t.cycle.is_some() {
            assert!(
                g.contains("subgraph cluster_waits") && g.contains("color=red, fontcolor=red"),
                "{label}"
            );
            cycles += 1;
        }
        if !t.waits.is_empty() {
            assert!(g.contains("subgraph cluster_waits"), "{label}");
            waits += 1;
        }
    }
    assert!(
        cycles >= 1 && waits >= 2,
        "only {cycles} cycles and {waits} wait-for graphs"
    );
}

fn cli(args: &[&str]) -> (i32, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_interlock"))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(["check", "--no-progress"])
        .args(args)
        .output()
        .expect("the binary runs");
    let code = out.status.code().expect("an exit code");
    (code, String::from_utf8(out.stdout).expect("UTF-8"))
}

/// The JSON in the page's element `id`.
fn embedded(page: &str, id: &str) -> Json {
    let open = format!("<script type=\"application/json\" id=\"{id}\">");
    let start = page.find(&open).unwrap_or_else(|| panic!("no #{id}")) + open.len();
    let end = start + page[start..].find("</script>").expect("closed");
    serde_json::from_str(&page[start..end]).expect("the data is JSON")
}

/// Seconds are the one figure that differs between runs.
fn without_seconds(mut doc: Json) -> Json {
    for r in doc["results"].as_array_mut().unwrap() {
        r["stats"]["seconds"] = Json::Null;
    }
    doc
}

#[test]
fn the_page_embeds_the_json_document_and_each_models_source_and_diagrams() {
    let file = "models/redlock/pause-after-acquire.model";
    let (code, page) = cli(&[file, "--format", "html"]);
    assert_eq!(code, 0);
    assert!(page.starts_with("<!DOCTYPE html>") && page.ends_with("</html>\n"));
    assert!(
        !page.contains("src=\"http") && !page.contains("href=\"http"),
        "no network"
    );
    let (_, json) = cli(&[file, "--format", "json"]);
    let doc: Json = serde_json::from_str(&json).unwrap();
    assert_eq!(
        without_seconds(embedded(&page, "data")),
        without_seconds(doc.clone())
    );
    let extras = embedded(&page, "extras");
    let source = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/models/redlock/pause-after-acquire.model"
    ))
    .unwrap();
    assert_eq!(extras[0]["source"], Json::String(source));
    assert!(extras[0]["mermaid"]
        .as_str()
        .unwrap()
        .starts_with("sequenceDiagram\n"));
    assert!(extras[0]["dot"]
        .as_str()
        .unwrap()
        .starts_with("digraph trace {"));
    let (_, mermaid) = cli(&[file, "--format", "mermaid"]);
    assert_eq!(
        mermaid,
        format!(
            "%% {file}: violated at_most_one_inside\n{}\n",
            extras[0]["mermaid"].as_str().unwrap()
        )
    );
}

#[test]
fn html_dir_writes_a_page_per_file_and_an_index() {
    let dir = std::env::temp_dir().join(format!("interlock-pages-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let d = dir.to_str().unwrap();
    let (code, _) = cli(&[
        "models/pessimistic/opposite-order-deadlock.model",
        "models/mutex/opposite-order.model",
        "--quiet",
        "--html-dir",
        d,
    ]);
    assert_eq!(code, 0);
    let index = std::fs::read_to_string(dir.join("index.html")).unwrap();
    for page in [
        "models-pessimistic-opposite-order-deadlock.html",
        "models-mutex-opposite-order.html",
    ] {
        assert!(index.contains(&format!("href=\"{page}\"")), "{index}");
        let text = std::fs::read_to_string(dir.join(page)).unwrap();
        let doc = embedded(&text, "data");
        let flavours = if page.contains("pessimistic") { 3 } else { 1 };
        assert_eq!(
            doc["results"].as_array().unwrap().len(),
            flavours,
            "{page}: one page, every flavour"
        );
    }
    // A folder that cannot be made is bad input, said as such.
    let out = Command::new(env!("CARGO_BIN_EXE_interlock"))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args([
            "check",
            "--no-progress",
            "-q",
            "models/mutex/opposite-order.model",
            "--html-dir",
        ])
        .arg(dir.join("index.html"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("error: cannot create"));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn model_text_cannot_break_out_of_the_page() {
    let dir = std::env::temp_dir().join(format!("interlock-hostile-page-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("evil.model");
    std::fs::write(
        &file,
        "model \"</script><script>alert(1)</script><!--\"\nabout \"<img src=x onerror=alert(1)>\"\n\
         ghost n = 0\nprocess p[2] {\n  n += 1\n}\ninvariant small: n < 2\nexpect violated small\n",
    )
    .unwrap();
    let (code, page) = cli(&[file.to_str().unwrap(), "--format", "html"]);
    assert_eq!(code, 0, "{page}");
    assert_eq!(
        page.matches("</script>").count(),
        3,
        "only the page's own elements end"
    );
    assert!(!page.contains("<img") && !page.contains("<!--"));
    let doc = embedded(&page, "data");
    assert_eq!(
        doc["results"][0]["model"],
        "</script><script>alert(1)</script><!--"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The `digraph states` of `check --format dot`: for every built-in model (every flavour)
/// small enough, every state the plain search counts, each transition once, and a
/// counterexample's path through it in red.
#[test]
fn every_small_model_draws_its_whole_state_graph_with_the_path_in_it() {
    let (mut drawn, mut marked) = (0, 0);
    for path in super::models::all_models() {
        let model = Model::from_file(&path).unwrap_or_else(|e| panic!("{e}"));
        for m in model.variants().unwrap_or_else(|e| panic!("{e}")) {
            let label = path.display().to_string();
            let plain = m.check_with(Options {
                max_states: Some(interlock::STATE_GRAPH_MAX + 1),
                ..Options::full()
            });
            let graph = plain.state_graph();
            if matches!(plain.outcome, interlock::Outcome::Incomplete { .. }) {
                assert!(graph.is_none(), "{label}: a graph past the bound");
                continue;
            }
            // A failing search stops at the failure's depth: the whole graph may be larger.
            let whole = interlock::explore::graph::build(m.ir(), interlock::STATE_GRAPH_MAX);
            let Some(g) = graph else {
                assert!(whole.is_none(), "{label}: a small graph not drawn");
                continue;
            };
            drawn += 1;
            assert!(
                g.starts_with("digraph states {\n") && g.ends_with("}\n"),
                "{label}"
            );
            let nodes = g
                .lines()
                .filter(|l| l.starts_with("  n") && l.contains(" [label=") && !l.contains(" -> "))
                .count();
            let edges: Vec<&str> = g.lines().filter(|l| l.contains(" -> ")).collect();
            if plain.outcome == interlock::Outcome::Holds {
                assert_eq!(
                    nodes, plain.stats.states,
                    "{label}: the plain search's states"
                );
                assert!(!g.contains("color=red"), "{label}: nothing to mark");
            }
            let Some(t) = &plain.trace else { continue };
            marked += 1;
            let red = edges.iter().filter(|l| l.contains("color=red")).count();
            assert!(
                red >= 1.min(t.steps.len()) && red <= t.steps.len(),
                "{label}\n{g}"
            );
            let failure = t.failure.map(|f| f.name(m.ir())).unwrap_or_default();
            let end = match t.steps.len() {
                0 => "start".to_string(),
                n => format!("after step {n}"),
            };
            assert!(
                g.lines()
                    .any(|l| l.contains(&end) && l.contains(&format!("✗ {failure}"))),
                "{label}: the path's end is marked\n{g}"
            );
        }
    }
    assert!(
        drawn >= 60 && marked >= 20,
        "only {drawn} graphs, {marked} with a path"
    );
}

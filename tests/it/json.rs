//! The JSON output against its documented schema (docs/json.md): every built-in model's
//! document, an invalid model's and a missing file's, validated against the JSON Schema the
//! document holds; and every built-in counterexample's replay token replays to the same trace.

use interlock::explore::Options;
use interlock::Model;
use serde_json::Value as Json;
use std::path::Path;
use std::process::Command;

/// The JSON Schema in docs/json.md: the ```json block after `<!-- schema -->`.
fn schema() -> Json {
    let doc = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/json.md"))
        .expect("docs/json.md");
    let after = doc
        .split("<!-- schema -->")
        .nth(1)
        .expect("a schema marker");
    let block = after
        .split("```json")
        .nth(1)
        .and_then(|b| b.split("```").next())
        .expect("a json block");
    serde_json::from_str(block).expect("the schema is JSON")
}

/// The part of JSON Schema the document's schema uses: `type` (one or several), `enum`,
/// `const`, `required`, `properties`, `additionalProperties: false`, `items`, `oneOf` and
/// `$ref` into `$defs`. Returns the first mismatch, with its path.
fn validate(root: &Json, schema: &Json, v: &Json, at: &str) -> Result<(), String> {
    let fail = |why: String| Err(format!("{at}: {why}"));
    if let Some(r) = schema.get("$ref").and_then(Json::as_str) {
        let name = r.trim_start_matches("#/$defs/");
        return validate(root, &root["$defs"][name], v, at);
    }
    if let Some(options) = schema.get("oneOf").and_then(Json::as_array) {
        let ok = options
            .iter()
            .filter(|s| validate(root, s, v, at).is_ok())
            .count();
        return if ok == 1 {
            Ok(())
        } else {
            fail(format!("matches {ok} of oneOf"))
        };
    }
    if let Some(types) = schema.get("type") {
        let types: Vec<&str> = match types {
            Json::String(t) => vec![t.as_str()],
            Json::Array(ts) => ts.iter().filter_map(Json::as_str).collect(),
            _ => vec![],
        };
        let is = |t: &str| match t {
            "null" => v.is_null(),
            "boolean" => v.is_boolean(),
            "integer" => v.is_i64() || v.is_u64(),
            "number" => v.is_number(),
            "string" => v.is_string(),
            "array" => v.is_array(),
            "object" => v.is_object(),
            _ => false,
        };
        if !types.iter().any(|t| is(t)) {
            return fail(format!("{v} is not {types:?}"));
        }
    }
    if let Some(options) = schema.get("enum").and_then(Json::as_array) {
        if !options.contains(v) {
            return fail(format!("{v} is not one of {options:?}"));
        }
    }
    if let Some(c) = schema.get("const") {
        if c != v {
            return fail(format!("{v} is not {c}"));
        }
    }
    if let Some(obj) = v.as_object() {
        for r in schema
            .get("required")
            .and_then(Json::as_array)
            .into_iter()
            .flatten()
        {
            let r = r.as_str().unwrap_or_default();
            if !obj.contains_key(r) {
                return fail(format!("no `{r}`"));
            }
        }
        let props = schema.get("properties").and_then(Json::as_object);
        for (k, x) in obj {
            match props.and_then(|p| p.get(k)) {
                Some(s) => validate(root, s, x, &format!("{at}.{k}"))?,
                None if schema.get("additionalProperties") == Some(&Json::Bool(false)) => {
                    return fail(format!("`{k}` is not in the schema"));
                }
                None => {}
            }
        }
    }
    if let (Some(items), Some(arr)) = (schema.get("items"), v.as_array()) {
        for (i, x) in arr.iter().enumerate() {
            validate(root, items, x, &format!("{at}[{i}]"))?;
        }
    }
    Ok(())
}

fn cli_json(args: &[&str]) -> (i32, Json) {
    let out = Command::new(env!("CARGO_BIN_EXE_interlock"))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(["check", "--format", "json", "--no-progress"])
        .args(args)
        .output()
        .expect("the binary runs");
    let doc = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stdout)));
    (out.status.code().expect("an exit code"), doc)
}

/// The validator itself rejects what it should (so that passing means something).
#[test]
fn the_validator_rejects_a_wrong_document() {
    let s = schema();
    let mut doc = serde_json::json!({
        "schema": 1, "tool": "t", "results": [],
        "summary": {"models": 0, "met": 0, "exit_code": 0},
    });
    assert_eq!(validate(&s, &s, &doc, "$"), Ok(()));
    doc["summary"]["exit_code"] = serde_json::json!(7);
    assert!(validate(&s, &s, &doc, "$").is_err());
    doc["summary"]["exit_code"] = serde_json::json!(0);
    doc["extra"] = serde_json::json!(true);
    assert!(validate(&s, &s, &doc, "$").is_err());
}

/// Every built-in model's document (run by the command line, one flavour each), an invalid
/// model's and a missing file's fit the documented schema.
#[test]
fn every_document_fits_the_documented_schema() {
    let s = schema();
    let (code, doc) = cli_json(&["models"]);
    assert_eq!(code, 0);
    validate(&s, &s, &doc, "$").unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(doc["schema"], 1);
    let results = doc["results"].as_array().expect("results");
    assert!(results.len() > 100, "{}", results.len());
    assert!(results.iter().any(|r| !r["trace"].is_null()));
    let (code, doc) = cli_json(&["tests/invalid/misspelled_statement.model", "no/such.model"]);
    assert_eq!(code, 2);
    validate(&s, &s, &doc, "$").unwrap_or_else(|e| panic!("{e}"));
    let bad = &doc["results"][0];
    assert_eq!(bad["verdict"]["kind"], "invalid");
    let item = &bad["diagnostics"]["items"][0];
    assert!(
        item["line"].as_u64().is_some() && item["message"].is_string(),
        "{item}"
    );
    assert_eq!(doc["results"][1]["verdict"]["kind"], "invalid");
    assert_eq!(doc["summary"]["exit_code"], 2);
}

/// Every built-in counterexample (every flavour) replays from its token to the same trace,
/// and the token names the path the search found.
#[test]
fn every_counterexample_replays_from_its_token() {
    let mut replayed = 0;
    for path in super::models::all_models() {
        let model = Model::from_file(&path).unwrap_or_else(|e| panic!("{e}"));
        for m in model.variants().unwrap_or_else(|e| panic!("{e}")) {
            let v = m.check_with(Options::default());
            let Some(t) = &v.trace else {
                continue;
            };
            let token = interlock::trace::token::render(m.ir(), t);
            let mut again = m
                .trace_of(&token)
                .unwrap_or_else(|e| panic!("{}: {e}\n{token}", path.display()));
            if t.loop_start.is_some() {
                // A token names a lasso's steps, not the property its loop starves.
                again.failure = t.failure;
            }
            let text = |t: &interlock::trace::Trace| interlock::trace::text::render(m.ir(), t);
            assert_eq!(text(&again), text(t), "{}\n{token}", path.display());
            assert_eq!(interlock::trace::token::render(m.ir(), &again), token);
            if t.loop_start.is_none() {
                assert_eq!(again.failure, t.failure, "{}", path.display());
            }
            replayed += 1;
        }
    }
    assert!(replayed > 40, "only {replayed} counterexamples");
}

/// `check FILE --path TOKEN` prints that path's trace; a step that cannot happen is an error
/// naming the step and what could happen there.
#[test]
fn check_path_prints_the_trace_of_a_token() {
    let run = |token: &str| {
        let out = Command::new(env!("CARGO_BIN_EXE_interlock"))
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .args(["check", "models/no-lock/lost-update.model", "--path", token])
            .output()
            .expect("the binary runs");
        let text = String::from_utf8_lossy(&out.stdout).into_owned()
            + &String::from_utf8_lossy(&out.stderr);
        (out.status.code().expect("an exit code"), text)
    };
    let (code, text) = run("buyer[0] buyer[1] buyer[1] buyer[0]");
    assert_eq!(code, 0, "{text}");
    assert!(text.contains("✗ its end breaks stock_conserved"), "{text}");
    let (code, text) = run("buyer[1]\nbuyer[0]");
    assert_eq!(code, 0, "{text}");
    assert!(text.contains("nothing is broken"), "{text}");
    let (code, text) = run("buyer[0] buyer[0] buyer[0]");
    assert_eq!(code, 2);
    assert!(
        text.contains("step 3 of the path: `buyer[0]` cannot happen here"),
        "{text}"
    );
    assert!(
        text.contains("what can happen after step 2: buyer[1]"),
        "{text}"
    );
    let (code, text) = run("tick 5ms");
    assert_eq!(code, 2);
    assert!(
        text.contains("step 1 of the path: `tick 5ms` cannot happen here"),
        "{text}"
    );
}

/// `check --path` in the other forms: the same trace as JSON (what `check --format json` puts
/// under the verdict), a Mermaid diagram, a Graphviz graph; an HTML page is a usage error.
#[test]
fn check_path_takes_a_format() {
    let run = |format: &str| {
        let out = Command::new(env!("CARGO_BIN_EXE_interlock"))
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .args([
                "check",
                "models/no-lock/lost-update.model",
                "--format",
                format,
            ])
            .args(["--path", "buyer[0] buyer[1]*2 buyer[0]"])
            .output()
            .expect("the binary runs");
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        (out.status.code().expect("an exit code"), text, out.stderr)
    };
    let (code, json, _) = run("json");
    assert_eq!(code, 0);
    let trace: Json = serde_json::from_str(&json).expect("one JSON value");
    let (_, doc) = cli_json(&["models/no-lock/lost-update.model"]);
    assert_eq!(
        trace, doc["results"][0]["trace"],
        "the search's trace, as --path gives it"
    );
    let (code, mermaid, _) = run("mermaid");
    assert!(
        code == 0 && mermaid.starts_with("sequenceDiagram\n"),
        "{mermaid}"
    );
    let (code, dot, _) = run("dot");
    assert!(code == 0 && dot.starts_with("digraph trace {\n"), "{dot}");
    let (code, html, err) = run("html");
    assert_eq!((code, html.as_str()), (2, ""));
    assert!(String::from_utf8_lossy(&err).contains("--path does not write an HTML page"));
}

/// The `replay:` lines under a counterexample fit 100 columns however deep the model's file
/// lies (up to a file name wider than a line), and a shell runs them as printed.
#[test]
fn replay_lines_of_deep_files_run_in_a_shell() {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/models/no-lock/lost-update.model"
    ))
    .expect("the model reads");
    let root = std::env::temp_dir().join(format!("interlock-replay-{}", std::process::id()));
    for depth in [70, 110] {
        let mut dir = root.clone();
        while dir.display().to_string().len() < depth {
            dir = dir.join("deeper");
        }
        std::fs::create_dir_all(&dir).expect("a scratch folder");
        let file = dir.join("lost-update.model");
        std::fs::write(&file, &text).expect("the model writes");
        let out = Command::new(env!("CARGO_BIN_EXE_interlock"))
            .arg("check")
            .arg(&file)
            .output()
            .expect("the binary runs");
        let shown = String::from_utf8_lossy(&out.stdout).into_owned();
        let at = shown.find("replay: ").expect("a replay line") + "replay: ".len();
        let command = &shown[at..];
        let name = file.display().to_string();
        for line in command.lines() {
            let own = if line.contains(&name) { name.len() } else { 0 };
            assert!(line.len() - own <= 100, "{line}");
        }
        let end = command.rfind('\'').expect("a closing quote") + 1;
        let command = command[..end].replacen("interlock", env!("CARGO_BIN_EXE_interlock"), 1);
        let again = Command::new("sh")
            .args(["-c", &command])
            .output()
            .expect("a shell runs");
        let again = String::from_utf8_lossy(&again.stdout);
        assert!(
            again.contains("✗ its end breaks stock_conserved"),
            "{command}\n{again}"
        );
    }
    std::fs::remove_dir_all(&root).ok();
}

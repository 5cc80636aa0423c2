//! The outputs quoted in README.md and the tutorial are what the checker prints today.

use interlock::{Flavour, Model};
use std::path::Path;

/// Replaces the wall-clock seconds, the one part of the output that varies run to run.
fn untimed(text: &str) -> String {
    text.lines()
        .map(|l| match l.rfind(", ") {
            Some(i) if l.trim_end().ends_with(" s)") => format!("{}, <seconds>)", &l[..i]),
            _ => l.to_string(),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// An example: its file, flavour, the block printed under it and the block's lines.
type Example = (String, Option<Flavour>, String, (usize, usize));

/// Every `$ … check FILE [--db X]` example in a document with the block that follows it,
/// and the block's lines (from, to).
fn examples(doc: &str) -> Vec<Example> {
    let lines: Vec<&str> = doc.lines().collect();
    let mut out = Vec::new();
    for (i, l) in lines.iter().enumerate() {
        let Some(rest) = l.strip_prefix("$ ").and_then(|r| r.split(" check ").nth(1)) else {
            continue;
        };
        let mut words = rest.split_whitespace();
        let file = words.next().unwrap_or_default().to_string();
        let db = match (words.next(), words.next()) {
            (Some("--db"), Some("mysql")) => Some(Flavour::Mysql),
            (Some("--db"), Some("postgres")) => Some(Flavour::Postgres),
            (Some("--db"), Some("mariadb")) => Some(Flavour::Mariadb),
            _ => None,
        };
        let block: Vec<&str> = lines[i + 1..]
            .iter()
            .take_while(|x| !x.starts_with("```"))
            .copied()
            .collect();
        out.push((file, db, block.join("\n"), (i + 1, i + 1 + block.len())));
    }
    out
}

/// The documents whose quoted outputs are checked: the README, the tutorial and every course
/// chapter.
fn quoting_documents(root: &Path) -> Vec<std::path::PathBuf> {
    let mut out = vec![root.join("README.md"), root.join("docs/tutorial.md")];
    let mut course: Vec<_> = std::fs::read_dir(root.join("docs/course"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    course.sort();
    out.extend(course);
    out
}

/// What `interlock check FILE [--db X]` prints for one model, as the document quotes it.
fn printed(root: &Path, file: &str, db: Option<Flavour>) -> String {
    let text = std::fs::read_to_string(root.join(file)).unwrap_or_else(|e| panic!("{file}: {e}"));
    let mut m = Model::parse(file, &text).unwrap();
    let mut label = file.to_string();
    if let Some(f) = db {
        m = m.with_flavour(f).unwrap();
        label = format!("{file} [{}]", f.name());
    }
    let v = m.check();
    format!("{label}: {}\n{}", v.model.name(), v.render())
}

/// Every quoted output in the README and the course is what the checker prints today
/// (`INTERLOCK_BLESS=1` rewrites the blocks).
#[test]
fn quoted_outputs_match_the_checker() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let bless = std::env::var_os("INTERLOCK_BLESS").is_some();
    for doc in quoting_documents(root) {
        let text = std::fs::read_to_string(&doc).unwrap();
        let found = examples(&text);
        let name = doc.strip_prefix(root).unwrap().display().to_string();
        assert!(
            !found.is_empty() || name.ends_with("README.md"),
            "{name} quotes no output"
        );
        let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
        for (file, db, block, (from, to)) in found.into_iter().rev() {
            let out = printed(root, &file, db);
            if bless {
                let new: Vec<String> = out.trim_end().lines().map(str::to_string).collect();
                lines.splice(from..to, new);
                continue;
            }
            assert_eq!(
                untimed(&block),
                untimed(out.trim_end()),
                "{name}: {file} (INTERLOCK_BLESS=1 rewrites the quoted outputs)"
            );
        }
        if bless {
            std::fs::write(&doc, lines.join("\n") + "\n").unwrap();
        }
    }
}

/// Every `$ … explain FILE` example in the tutorial and the course is what `interlock
/// explain` prints today (`INTERLOCK_BLESS=1` rewrites the blocks).
#[test]
fn quoted_explanations_match() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let bless = std::env::var_os("INTERLOCK_BLESS").is_some();
    let mut quoted = 0;
    for doc in quoting_documents(root) {
        let text = std::fs::read_to_string(&doc).unwrap();
        let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
        let starts: Vec<(usize, String)> = lines
            .iter()
            .enumerate()
            .filter_map(|(i, l)| {
                let rest = l.strip_prefix("$ ")?.split(" explain ").nth(1)?;
                Some((i, rest.trim().to_string()))
            })
            .collect();
        for (i, file) in starts.into_iter().rev() {
            quoted += 1;
            let to = (i + 1..lines.len())
                .find(|&k| lines[k].starts_with("```"))
                .unwrap_or(lines.len());
            let source = std::fs::read_to_string(root.join(&file)).unwrap();
            let m = Model::parse(&file, &source).unwrap_or_else(|e| panic!("{e}"));
            let out = m.explain().unwrap();
            let new: Vec<String> = out.trim_end().lines().map(str::to_string).collect();
            if bless {
                lines.splice(i + 1..to, new);
            } else {
                assert_eq!(lines[i + 1..to], new[..], "{}: {file}", doc.display());
            }
        }
        if bless {
            std::fs::write(&doc, lines.join("\n") + "\n").unwrap();
        }
    }
    assert!(quoted > 0, "the tutorial quotes `interlock explain`");
}

/// The five self-test questions of the first source article are each answered by at least
/// one model whose quoted verdict is the answer.
#[test]
fn every_self_test_question_is_answered_by_a_model() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(root.join("docs/course/6-self-test.md")).unwrap();
    let questions: Vec<&str> = text.split("\n## ").skip(1).collect();
    assert_eq!(questions.len(), 5, "five questions");
    for q in questions {
        let answered = examples(q);
        assert!(
            !answered.is_empty(),
            "no model answers: {}",
            q.lines().next().unwrap_or("")
        );
        for (file, db, block, _) in answered {
            let verdict = printed(root, &file, db);
            let first = verdict.lines().nth(1).unwrap_or("");
            assert!(
                block.contains(first.split(" — ").next().unwrap_or(first)),
                "{file}"
            );
        }
    }
}

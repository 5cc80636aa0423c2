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

#[test]
fn readme_examples_match_the_checker() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let found = examples(&readme);
    assert!(found.len() >= 3, "the README shows its examples");
    let bless = std::env::var_os("INTERLOCK_BLESS").is_some();
    let mut lines: Vec<String> = readme.lines().map(str::to_string).collect();
    for (file, db, block, (from, to)) in found.into_iter().rev() {
        // Named as the command line names it (the replay line shows the file).
        let text = std::fs::read_to_string(root.join(&file)).unwrap();
        let mut m = Model::parse(&file, &text).unwrap();
        let mut label = file.clone();
        if let Some(f) = db {
            m = m.with_flavour(f).unwrap();
            label = format!("{file} [{}]", f.name());
        }
        let v = m.check();
        let printed = format!("{label}: {}\n{}", v.model.name(), v.render());
        if bless {
            let new: Vec<String> = printed.trim_end().lines().map(str::to_string).collect();
            lines.splice(from..to, new);
            continue;
        }
        assert_eq!(
            untimed(&block),
            untimed(printed.trim_end()),
            "{file} (INTERLOCK_BLESS=1 rewrites README.md)"
        );
    }
    if bless {
        std::fs::write(root.join("README.md"), lines.join("\n") + "\n").unwrap();
    }
}

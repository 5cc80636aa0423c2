//! `interlock explain`: every built-in model is read back, within 100 columns, with every
//! step the checker interleaves at its model line, its faults and properties, and the rules
//! its features reach; bad input is refused as `check` refuses it.

use crate::models::all_models;
use interlock::ir::{Model as Ir, OpKind};
use interlock::Model;
use std::process::Command;

fn explained(path: &str) -> String {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let m = Model::from_file(root.join(path)).unwrap_or_else(|e| panic!("{e}"));
    m.explain().unwrap_or_else(|e| panic!("{e}"))
}

/// The lines `Lnn` the explanation names.
fn named_lines(text: &str) -> Vec<usize> {
    text.split_whitespace()
        .filter_map(|w| w.strip_prefix('L')?.parse().ok())
        .collect()
}

/// The model lines of every visible operation, delay, fault and property.
fn lines_to_name(m: &Ir) -> Vec<usize> {
    let mut out = Vec::new();
    for g in &m.groups {
        for op in &g.program.ops {
            let shown = op.kind.is_visible()
                || matches!(op.kind, OpKind::Work { .. } | OpKind::Sleep { .. });
            if shown {
                out.push(m.line_of(op.span));
            }
        }
    }
    out.extend(m.faults.iter().map(|f| m.line_of(f.span)));
    out.extend(m.properties.iter().map(|p| m.line_of(p.span)));
    out
}

#[test]
fn every_builtin_model_is_explained_with_each_step_fault_and_property_at_its_line() {
    for path in all_models() {
        let m = Model::from_file(&path).unwrap();
        let text = m
            .explain()
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let name = path.display();
        for l in text.lines() {
            assert!(
                l.chars().count() <= 100,
                "{name}: a line over 100 columns: {l}"
            );
        }
        assert!(text.contains(m.name()), "{name}: no title");
        let named = named_lines(&text);
        for line in lines_to_name(m.ir()) {
            assert!(
                named.contains(&line),
                "{name}: line {line} is not named\n{text}"
            );
        }
        for v in m.variants().unwrap() {
            assert!(
                text.contains(&v.expected()),
                "{name}: no expectation {}",
                v.expected()
            );
        }
        assert_eq!(text, m.explain().unwrap(), "{name}: the same twice");
    }
}

#[test]
fn the_rules_follow_what_the_model_uses() {
    let redlock = explained("models/redlock/clock-jump.model");
    for id in ["RS-1", "RS-2", "RS-3", "RS-7, RS-8"] {
        assert!(redlock.contains(&format!("  {id} ")), "{id}\n{redlock}");
    }
    assert!(
        !redlock.contains("PG-"),
        "no database, no PostgreSQL rule\n{redlock}"
    );

    let nowait = explained("models/pessimistic/nowait-double-click.model");
    assert!(nowait.contains("55P03"), "{nowait}");
    let watchdog = explained("models/watchdog/holder-crash.model");
    assert!(watchdog.contains("WD-1, WD-3, WD-4"), "{watchdog}");
    assert!(
        watchdog.contains("⟳ watchdog lock lease 300ms"),
        "{watchdog}"
    );
    assert!(watchdog.contains("a crash takes down"), "{watchdog}");

    // A file checked on three flavours: one expectation each, and the rules of each flavour
    // marked with it.
    let three = explained("models/pessimistic/indexed-for-update.model");
    for f in ["on postgres: holds", "on mysql: holds", "on mariadb: holds"] {
        assert!(three.contains(f), "{f}\n{three}");
    }
    assert!(three.contains("(mysql, mariadb)"), "{three}");
}

#[test]
fn a_step_inside_a_loop_and_a_condition_keeps_both_heads() {
    let m = Model::parse(
        "t.model",
        "model \"t\"\nabout \"t\"\nredis r\nprocess p[2] {\n  repeat 2 {\n    $x = 1\n    if $x = 1 {\n      \
         SET k $me NX PX 100 into $r\n    }\n    if $x = 2 { $x = 3 }\n  }\n}\n\
         expect holds\n",
    )
    .unwrap();
    let text = m.explain().unwrap();
    assert!(text.contains("L5    ↻ repeat 2 {"), "{text}");
    assert!(text.contains("L7        if $x = 1 {"), "{text}");
    assert!(
        text.contains("L8    ▸     SET k $me NX PX 100 into $r"),
        "{text}"
    );
    assert!(
        !text.contains("L10"),
        "a condition guarding no step is left out\n{text}"
    );
    assert!(
        !text.contains("L6"),
        "local code is part of a step, not one\n{text}"
    );
}

fn interlock(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_interlock"))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(args)
        .output()
        .expect("the binary runs");
    (
        out.status.code().expect("an exit code"),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn explain_refuses_bad_input_with_exit_2() {
    let (code, _, err) = interlock(&["explain", "models/no-such.model"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("models/no-such.model"), "{err}");

    let dir = std::env::temp_dir().join(format!("interlock-explain-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let bad = dir.join("bad.model");
    std::fs::write(&bad, "process p {\n  SET k 1 PX -5\n}\nexpect holds\n").unwrap();
    let (code, out, err) = interlock(&["explain", bad.to_str().unwrap()]);
    assert_eq!(code, 2, "{out}{err}");
    assert!(err.contains("bad.model:2:"), "{err}");
    assert!(out.is_empty(), "{out}");
    std::fs::remove_dir_all(&dir).unwrap();

    let (code, out, _) = interlock(&["explain", "models/no-lock"]);
    assert_eq!(code, 0);
    assert!(out.contains("models/no-lock/lost-update.model\n"), "{out}");
}

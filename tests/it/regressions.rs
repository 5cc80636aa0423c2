//! Every defect found by probing interlock, kept as a model in `tests/regressions/` with what
//! it must do now (the folder's files are copies: CI's clone has nothing beside the project).

use interlock::explore::Options;
use interlock::{Flavour, Model};
use std::path::Path;

fn load(name: &str) -> Model {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/regressions")
        .join(name);
    Model::from_file(&path).unwrap_or_else(|e| panic!("{e}"))
}

/// Every way to search that may reduce: each must give the plain search's verdict.
fn every_search() -> Vec<(&'static str, Options)> {
    vec![
        ("default", Options::default()),
        (
            "threads",
            Options {
                threads: 2,
                ..Options::default()
            },
        ),
        (
            "fingerprints",
            Options {
                fingerprints: true,
                ..Options::default()
            },
        ),
        (
            "dfs",
            Options {
                dfs: true,
                ..Options::default()
            },
        ),
        (
            "symmetry",
            Options {
                symmetry: true,
                ..Options::full()
            },
        ),
        (
            "locals",
            Options {
                dead_locals: true,
                ..Options::full()
            },
        ),
        (
            "por",
            Options {
                por: true,
                ..Options::full()
            },
        ),
    ]
}

/// W1 and P2: three interchangeable processes in a three-way InnoDB deadlock whose victim
/// was chosen between two of them by process number, which symmetry reduction treats as
/// interchangeable: a wrong `holds` (W1) and a counterexample that did not replay (P2). The
/// engines break the tie by place on the cycle; each flavour gets its own victim, and every
/// search finds it.
#[test]
fn deadlock_victims_do_not_depend_on_process_numbers() {
    for (file, mysql, mariadb) in [
        (
            "W1-symmetry-wrong-holds.model",
            "holds",
            "violated k0_never_victim",
        ),
        (
            "P2-symmetry-replay-panic.model",
            "violated k1_never_victim",
            "holds",
        ),
    ] {
        for (flavour, want) in [(Flavour::Mysql, mysql), (Flavour::Mariadb, mariadb)] {
            let m = load(file)
                .with_flavour(flavour)
                .unwrap_or_else(|e| panic!("{e}"));
            assert!(
                super::symmetry::steps_alike(m.ir(), 5000).unwrap_or_else(|e| panic!("{e}")) > 100
            );
            let full = m.check_with(Options::full());
            assert_eq!(
                full.summary(),
                want,
                "{file} {flavour:?}: {}",
                full.render()
            );
            assert!(full.met(), "{file} {flavour:?}: {}", full.render());
            for (what, opts) in every_search() {
                let v = m.check_with(opts);
                assert_eq!(
                    v.summary(),
                    want,
                    "{file} {flavour:?} {what}: {}",
                    v.render()
                );
            }
        }
    }
}

/// P1: `commit` (or any SQL) in a model with no `db` line panicked in the engine; it is a
/// mistake in the file, reported once, with where and how to fix it.
#[test]
fn sql_without_a_database_is_a_diagnostic() {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/regressions/P1-commit-without-db.model");
    let e = Model::from_file(&path).expect_err("no db line");
    let text = e.to_string();
    assert!(text.contains("SQL needs a database"), "{text}");
    assert!(text.contains("P1-commit-without-db.model:3:13"), "{text}");
    assert!(text.contains("add a `db postgres`"), "{text}");
    for stmt in ["rollback", "begin", "select v from t where id = 1"] {
        let text =
            format!("model \"m\"\nabout \"a\"\nprocess p {{ {stmt}; {stmt} }}\nexpect holds\n");
        let e = Model::from_str(&text).expect_err(stmt).to_string();
        assert_eq!(e.matches("SQL needs a database").count(), 1, "{e}");
    }
}

/// Q1: a property that cannot be evaluated (nil compared with an integer) was reported as a
/// violation with an empty trace and no reason; now it says which property, where and why.
#[test]
fn a_property_that_cannot_be_evaluated_says_so() {
    let v = load("Q1-property-error-silent-violation.model").check();
    assert_eq!(v.summary(), "cannot evaluate small");
    assert!(!v.met());
    let text = v.render();
    for part in [
        "small cannot be evaluated",
        "invariant `small` cannot be evaluated in the initial state",
        "Q1-property-error-silent-violation.model:4:1",
        "arithmetic or comparison on nil",
        "redis(k) = nil or redis(k) <= 3",
    ] {
        assert!(text.contains(part), "{part}:\n{text}");
    }
    assert!(text.lines().all(|l| l.chars().count() <= 100), "{text}");
}

/// H1: the counterexample pass stepped every one of 4,000 interchangeable processes' mirror
/// images and canonicalised each (27 s). Mirrors now reuse their partner's target; the
/// verdict and trace are the plain search's.
#[test]
fn a_counterexample_among_thousands_of_processes_is_built() {
    let v = load("H1-cex-pass-lost-update-4000.model").check();
    assert_eq!(v.summary(), "violated stock_conserved");
    let t = v.trace.as_ref().expect("a trace");
    assert_eq!(t.steps.len(), 4);
    assert_eq!(t.context_switches(), 2);
}

/// H2: limits were checked only between batches of 4,096 states, whose successors (with
/// hundreds of processes, a few kB each) were all held first. A batch is now cut short by
/// the bytes its successors take, so `--max-states` stops within one state's successors.
#[test]
fn limits_hold_within_a_batch_of_large_states() {
    for file in [
        "H2-batch-500-singleton-groups.model",
        "H2b-group500-reduce-none.model",
    ] {
        let v = load(file).check_with(Options {
            max_states: Some(20_000),
            ..Options::full()
        });
        assert_eq!(
            v.summary(),
            "incomplete (stopped at --max-states 20000)",
            "{file}"
        );
        assert!(v.stats.states <= 20_000 + 501, "{file}: {}", v.stats.states);
    }
}

/// H3: the front end's work grew with the square of a SQL statement's length (every
/// operator's span was computed from its whole subtree, every span walked its line) and of
/// the number of ghosts and groups (each declaration's line counted from the top, each
/// lookup copied every name). The 5,000-term condition is now refused at once, as too long
/// (see S1, S2); 20,000 ghosts parse in linear time.
#[test]
fn a_long_model_parses_in_linear_time() {
    let e = Model::from_file(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/regressions/H3-sql-and-5000-17s.model"),
    )
    .expect_err("too many operators")
    .to_string();
    assert!(e.contains("more than 1000 operators"), "{e}");
    let mut text = String::from("model \"g\"\nabout \"g\"\n");
    for i in 0..20_000 {
        text.push_str(&format!("ghost g{i} = 0\n"));
    }
    for i in 0..2_000 {
        text.push_str(&format!("process p{i} {{ g{i} += 1 }}\n"));
    }
    text.push_str("invariant ok: g0 = 0\nexpect holds\n");
    let m = Model::from_str(&text).expect("valid");
    assert_eq!(m.ir().processes.len(), 2_000);
}

/// S1, S2: flat chains of 25,000 `+` terms and 10,000 SQL `and` terms overflowed the stack
/// (every pass over an expression is recursive, and a chain nests one level per operator).
/// Both are refused with their place and a hint, and a chain of 1,000 still works.
#[test]
fn long_operator_chains_are_refused_not_overflowed() {
    for (file, what, at) in [
        (
            "S1-stackoverflow-plus-chain.model",
            "this expression has more than 1000 operators",
            ":5:4017",
        ),
        (
            "S2-stackoverflow-sql-and-10k.model",
            "this SQL statement has more than 1000",
            ":6:5534",
        ),
    ] {
        let e = Model::from_file(
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("tests/regressions")
                .join(file),
        )
        .expect_err(file)
        .to_string();
        assert!(e.contains(what) && e.contains(at), "{file}: {e}");
        // The long line is shown as a window around the culprit.
        assert!(e.lines().all(|l| l.chars().count() <= 100), "{file}: {e}");
    }
    let sum = vec!["g"; 1000].join(" + ");
    let text = format!("model \"m\"\nabout \"a\"\nghost g = 0\nprocess p {{ g += 1 }}\ninvariant ok: {sum} >= 0\nexpect holds\n");
    // The checker's threads have small stacks, as the test's thread does.
    let v = Model::from_str(&text).expect("1000 operators").check();
    assert_eq!(v.summary(), "holds");
}

/// Q2: one error printed 19,875 times (4.3 MB). A message is shown at most three times, and
/// a last line counts the rest.
#[test]
fn an_error_repeated_thousands_of_times_is_shown_three_times() {
    let e = Model::from_file(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/regressions/Q2-nest-repeat-error-flood.model"),
    )
    .expect_err("too deep")
    .to_string();
    assert_eq!(e.matches("error: nested too deeply").count(), 3, "{e}");
    assert!(
        e.contains("more errors not shown: 9935 \"nested too deeply\""),
        "{e}"
    );
    assert!(e.len() < 4_000, "{} bytes", e.len());
}

/// Hostile bytes: control characters are never echoed raw (a file could retitle the
/// terminal), a string holding one is refused, a file that is not UTF-8 says where, and a
/// file that never ends (`/dev/zero`) is refused after 16 MiB.
#[test]
fn hostile_files_get_plain_errors() {
    let e = Model::from_str(
        "model \"m\\x1b]0;x\\x07\"\nabout \"a\"\nprocess p { g\x1b[31m += 1 }\n"
            .replace("\\x1b", "\x1b")
            .replace("\\x07", "\x07")
            .as_str(),
    )
    .expect_err("control characters")
    .to_string();
    assert!(!e.contains('\x1b') && !e.contains('\x07'), "{e:?}");
    assert!(
        e.contains("a control character (U+001B) in a string"),
        "{e}"
    );
    let dir = std::env::temp_dir().join(format!("interlock-hostile-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temporary folder");
    let bad = dir.join("bad.model");
    std::fs::write(&bad, b"model \"a\xff\"\n").expect("written");
    let e = Model::from_file(&bad).expect_err("not UTF-8").to_string();
    assert!(
        e.contains("the file is not UTF-8 text") && e.contains("bad.model:1:9"),
        "{e}"
    );
    if Path::new("/dev/zero").exists() {
        let e = Model::from_file("/dev/zero")
            .expect_err("endless")
            .to_string();
        assert!(e.contains("larger than 16 MiB"), "{e}");
    }
    let e = Model::from_file(&dir).expect_err("a folder").to_string();
    assert!(e.contains("it is a folder"), "{e}");
    std::fs::remove_dir_all(&dir).ok();
}

/// A limit raised before the search starts ends it at once, incomplete, and so does one
/// raised while a counterexample is built (the limits are the options' own, measured by the
/// library on a thread of its own).
#[test]
fn a_time_limit_ends_the_search_incomplete() {
    let v = load("W1-symmetry-wrong-holds.model")
        .with_flavour(Flavour::Mariadb)
        .expect("mariadb")
        .check_with(Options {
            time_limit: Some(0),
            ..Options::full()
        });
    assert_eq!(v.summary(), "incomplete (stopped at --time-limit 0s)");
    assert!(v.trace.is_none());
}

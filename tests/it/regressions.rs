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

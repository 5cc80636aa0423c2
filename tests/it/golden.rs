//! The golden table: for every built-in model (every flavour it names), the verdict and the
//! counts of states and transitions with the default search and with the plain one (no
//! reduction, bounded). It guards every optimisation and reduction: a change in a count must
//! be explained in the commit that makes it. `INTERLOCK_BLESS=1 cargo test golden` rewrites
//! the table after such a change; `git diff tests/golden` then shows what moved.

use interlock::explore::Options;
use interlock::Model;
use std::fmt::Write as _;
use std::path::Path;

/// The plain search stops here: a few built-in models (a hundred buyers) are far larger
/// without reductions, and a bound reached is a row of its own ("incomplete").
const FULL_BOUND: usize = 150_000;

fn table() -> String {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut out = String::from("# model\tflavour\tsearch\tverdict\tstates\ttransitions\tdepth\n");
    for path in super::models::all_models() {
        let rel = path
            .strip_prefix(root)
            .unwrap_or(&path)
            .display()
            .to_string();
        let model = Model::from_file(&path).unwrap_or_else(|e| panic!("{e}"));
        for v in model.variants().unwrap_or_else(|e| panic!("{e}")) {
            let flavour = v.flavour().map_or("-", |f| f.name());
            let full = Options {
                max_states: Some(FULL_BOUND),
                ..Options::full()
            };
            for (search, opts) in [("default", Options::default()), ("full", full)] {
                let r = v.check_with(opts);
                let s = r.stats;
                writeln!(
                    out,
                    "{rel}\t{flavour}\t{search}\t{}\t{}\t{}\t{}",
                    r.summary(),
                    s.states,
                    s.transitions,
                    s.depth
                )
                .expect("a string takes writes");
            }
        }
    }
    out
}

#[test]
fn every_builtin_model_explores_the_golden_counts() {
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/models.tsv");
    let now = table();
    if std::env::var_os("INTERLOCK_BLESS").is_some() {
        std::fs::create_dir_all(file.parent().expect("a folder")).expect("tests/golden");
        std::fs::write(&file, &now).expect("tests/golden/models.tsv is writable");
        return;
    }
    let want = std::fs::read_to_string(&file).unwrap_or_default();
    let changed: Vec<String> = want
        .lines()
        .zip(now.lines())
        .filter(|(a, b)| a != b)
        .map(|(a, b)| format!("  was {a}\n  now {b}"))
        .collect();
    assert!(
        changed.is_empty() && want.lines().count() == now.lines().count(),
        "the golden counts moved ({} of {} rows; {} rows now, {} in the table):\n{}\n\
         explain the change in the commit, then rewrite the table with \
         `INTERLOCK_BLESS=1 cargo test golden`",
        changed.len(),
        now.lines().count(),
        now.lines().count(),
        want.lines().count(),
        changed.join("\n")
    );
}

//! Every model in `models/` meets its own expectation, and the engine's guarantees hold.

use interlock::explore::{Options, Outcome, StepMemo};
use interlock::Model;
use std::path::{Path, PathBuf};

fn model_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("models folder")
        .map(|e| e.expect("entry").path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            model_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "model") {
            out.push(p);
        }
    }
}

pub fn all_models() -> Vec<PathBuf> {
    let mut out = Vec::new();
    model_files(
        Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/models")),
        &mut out,
    );
    assert!(out.len() >= 13, "the built-in models are missing: {out:?}");
    out
}

fn load(rel: &str) -> Model {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(rel);
    Model::from_file(&path).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn every_model_meets_its_expectation() {
    for path in all_models() {
        let model = Model::from_file(&path).unwrap_or_else(|e| panic!("{e}"));
        assert!(
            !model.ir().about.trim().is_empty(),
            "{}: no about",
            path.display()
        );
        model.check().assert_expected();
    }
}

#[test]
fn lost_update_counterexample_has_four_steps() {
    let v = load("models/no-lock/lost-update.model").check();
    v.assert_violated("stock_conserved");
    let trace = v.trace.expect("a violated model has a trace");
    assert_eq!(trace.steps.len(), 4);
    // Among the 4-step traces the one chosen switches process as little as possible:
    // buyer 0 must read before buyer 1 overwrites, so two switches are the minimum.
    assert_eq!(trace.context_switches(), 2);
}

#[test]
fn checking_twice_renders_byte_identical_traces() {
    for rel in [
        "models/optimistic/no-version-condition.model",
        "models/redis/ttl-shorter-than-work.model",
        "models/pessimistic/opposite-order-deadlock.model",
    ] {
        let a = load(rel).check();
        let b = load(rel).check();
        let strip = |v: &interlock::Verdict| {
            let t = v.trace.as_ref().expect("trace");
            t.text(&v.model)
        };
        assert_eq!(strip(&a), strip(&b), "{rel}");
        assert_eq!(a.stats, b.stats, "{rel}");
    }
}

#[test]
fn counterexamples_are_shortest() {
    // A bounded search one step shorter than the counterexample must not find a failure.
    for rel in [
        "models/optimistic/no-version-condition.model",
        "models/optimistic/ignores-rowcount.model",
        "models/mutex/two-instances.model",
        "models/redis/ttl-shorter-than-work.model",
    ] {
        let m = load(rel);
        let v = m.check();
        let n = v.trace.as_ref().expect("trace").steps.len();
        let shorter = m.check_with(Options {
            max_depth: Some(n - 1),
            ..Options::default()
        });
        assert!(
            !matches!(shorter.outcome, Outcome::Failed { .. }),
            "{rel}: found a failure within {} steps",
            n - 1
        );
    }
}

#[test]
fn deadlock_names_the_wait_for_cycle() {
    let v = load("models/mutex/opposite-order.model").check();
    v.assert_violated("deadlock");
    let t = v.trace.as_ref().expect("trace");
    let cycle = t.cycle.as_ref().expect("a cycle");
    assert_eq!(cycle.len(), 2);
    let text = v.render();
    assert!(
        text.contains("a waits for mutex y on app ← held by b"),
        "{text}"
    );
    assert!(
        text.contains("b waits for mutex x on app ← held by a"),
        "{text}"
    );
}

#[test]
fn a_crashed_holder_without_ttl_deadlocks_without_a_cycle() {
    let v = load("models/redis/no-ttl-holder-crash.model").check();
    v.assert_violated("deadlock");
    let t = v.trace.as_ref().expect("trace");
    assert!(t.cycle.is_none());
    assert_eq!(t.waits.len(), 1);
}

#[test]
fn bounds_end_in_an_incomplete_verdict() {
    let m = load("models/optimistic/version-check.model");
    let v = m.check_with(Options {
        max_states: Some(10),
        ..Options::default()
    });
    assert!(
        matches!(v.outcome, Outcome::Incomplete { .. }),
        "{}",
        v.summary()
    );
    assert!(!v.met());
}

#[test]
fn traces_fit_one_hundred_columns() {
    let prints = Options {
        fingerprints: true,
        ..Options::default()
    };
    for (path, m) in all_variants() {
        // The file name is the user's: only its length beyond 60 columns may overflow a line
        // (CI's clone lives deeper than a developer's).
        let origin = path.display().to_string();
        let excess = origin.chars().count().saturating_sub(60);
        for v in [m.check(), m.check_with(prints)] {
            for line in v.render().lines() {
                let own = if line.contains(&origin) { excess } else { 0 };
                let width = line.chars().count() - own;
                assert!(width <= 100, "{}: {line}", path.display());
            }
        }
    }
}

#[test]
fn engine_core_does_no_io_and_reads_no_clock() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    for dir in ["world", "exec", "explore", "trace", "ir"] {
        let mut files = Vec::new();
        collect_rs(&root.join(dir), &mut files);
        for f in files {
            let text = std::fs::read_to_string(&f).unwrap();
            for banned in [
                "std::fs",
                "println!",
                "eprintln!",
                "Instant",
                "SystemTime",
                "std::collections::HashMap",
                "RandomState",
                "thread_rng",
            ] {
                let hits = text.lines().filter(|l| l.contains(banned)).count();
                assert_eq!(hits, 0, "{} uses {banned}", f.display());
            }
        }
    }
}

fn collect_rs(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            collect_rs(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

#[test]
fn rust_code_can_declare_a_liveness_property() {
    let m = load("models/redis/no-ttl-holder-crash.model")
        .with_declaration("eventually someone_done: done >= 1")
        .unwrap_or_else(|e| panic!("{e}"));
    // The blocking version gets stuck (a safety finding) before any run can be judged.
    m.check().assert_violated("deadlock");
    let polling = load("models/liveness/polling-progress.model")
        .with_declaration("always_eventually c1_works: in1 = 1")
        .unwrap_or_else(|e| panic!("{e}"));
    let v = polling.check();
    v.assert_violated("c1_works");
    assert!(
        v.trace.as_ref().and_then(|t| t.loop_start).is_some(),
        "a lasso"
    );
    let bad = load("models/liveness/polling-progress.model").with_declaration("eventualy x: 1");
    assert!(bad.is_err());
}

/// Issue 5's rule: reductions, fingerprints and threads never change a verdict. Every model
/// (every flavour it names) is checked with no reduction and with each option; the verdict,
/// the length of the counterexample and its context switches agree, and more threads and
/// the step memo off give the byte-identical trace.
#[test]
fn reductions_stores_and_threads_never_change_a_verdict() {
    let text = |v: &interlock::Verdict| v.trace.as_ref().map(|t| t.text(&v.model));
    let shape = |v: &interlock::Verdict| {
        let t = v.trace.as_ref();
        (
            v.summary(),
            t.map(|t| t.steps.len()),
            t.map(|t| t.loop_start),
        )
    };
    // models/scale holds the 100-buyer exercise: far beyond a search without reductions.
    for path in all_models()
        .into_iter()
        .filter(|p| !p.components().any(|c| c.as_os_str() == "scale"))
    {
        let model = Model::from_file(&path).unwrap_or_else(|e| panic!("{e}"));
        for m in model.variants().expect("variants") {
            let name = format!("{} ({:?})", path.display(), m.flavour());
            let full = m.check_with(Options::full());
            let reduced = m.check_with(Options::default());
            assert_eq!(shape(&full), shape(&reduced), "{name}: reductions");
            assert!(
                reduced.stats.states <= full.stats.states,
                "{name}: reductions explored more states"
            );
            let switches = |v: &interlock::Verdict| v.trace.as_ref().map(|t| t.context_switches());
            assert_eq!(switches(&full), switches(&reduced), "{name}: switches");
            let prints = m.check_with(Options {
                fingerprints: true,
                ..Options::full()
            });
            assert_eq!(shape(&full), shape(&prints), "{name}: fingerprints");
            assert_eq!(
                full.stats.states, prints.stats.states,
                "{name}: fingerprints"
            );
            let two = m.check_with(Options {
                threads: 2,
                ..Options::default()
            });
            assert_eq!(text(&reduced), text(&two), "{name}: threads");
            assert_eq!(reduced.stats, two.stats, "{name}: threads");
            // The step memo is a cache: the same states and the same bytes without it. Most
            // built-in models end before its warm-up, so it also runs from the first state.
            for (with, opts) in [(&reduced, Options::default()), (&full, Options::full())] {
                let plain = m.check_with(Options {
                    step_memo: StepMemo::Off,
                    ..opts
                });
                let always = m.check_with(Options {
                    step_memo: StepMemo::Always,
                    ..opts
                });
                for v in [with, &always] {
                    assert_eq!(text(v), text(&plain), "{name}: step memo");
                    assert_eq!(v.stats, plain.stats, "{name}: step memo");
                }
            }
            let dfs = m.check_with(Options {
                dfs: true,
                fingerprints: true,
                ..Options::default()
            });
            // Depth-first names the first failure it meets, not always a shallowest one.
            let holds = |v: &interlock::Verdict| v.outcome == Outcome::Holds;
            assert_eq!(holds(&full), holds(&dfs), "{name}: depth-first");
        }
    }
}

/// The parallel search merges each batch of a layer while other threads expand the next:
/// on layers of many batches (the built-in models' are small), every thread count gives
/// the same states, the same trace and the same bound as one thread, and so does the
/// search without the step memo.
#[test]
fn threads_agree_on_layers_of_many_batches() {
    // The benchmark's optimistic model with 5 clients: 182,837 states, in layers of up to
    // tens of thousands without reductions.
    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("models/bench/m2-optimistic-cas.model"),
    )
    .expect("the benchmark model")
    .replace("client[3]", "client[5]")
    .replace("row sku (1, 2)", "row sku (1, 4)")
    .replace("sold = 2\n", "sold = 4\n");
    let holds = Model::from_str(&text).unwrap_or_else(|e| panic!("{e}"));
    // Broken first in layer 9, found while merging layer 8's expansion: two batches (4,890
    // states).
    let fails = holds
        .with_declaration("invariant some_left: count(client, done) < 5")
        .unwrap_or_else(|e| panic!("{e}"));
    let runs = |m: &Model, opts: Options| {
        [1, 2, 3].map(|threads| {
            let v = m.check_with(Options { threads, ..opts });
            let trace = v.trace.as_ref().map(|t| t.text(&v.model));
            (v.summary(), v.stats, trace)
        })
    };
    let prints = Options {
        fingerprints: true,
        ..Options::full()
    };
    let bounded = Options {
        max_states: Some(50_000),
        ..Options::full()
    };
    for (m, opts, verdict) in [
        (&holds, Options::full(), "holds"),
        (&holds, prints, "holds"),
        (&fails, Options::full(), "violated some_left"),
        (&fails, prints, "violated some_left"),
        (&holds, bounded, "incomplete"),
    ] {
        let [one, two, three] = runs(m, opts);
        assert!(one.0.starts_with(verdict), "{}", one.0);
        assert!(one.1.states > 9_000, "{one:?}");
        assert_eq!(one, two);
        assert_eq!(one, three);
        // Large enough that the step memo is past its warm-up and answers most steps.
        let [plain, ..] = runs(
            m,
            Options {
                step_memo: StepMemo::Off,
                ..opts
            },
        );
        assert_eq!(one, plain, "step memo");
    }
}

/// Every flavour of every built-in model, with the file it comes from.
pub fn all_variants() -> Vec<(PathBuf, Model)> {
    all_models()
        .into_iter()
        .flat_map(|path| {
            let model = Model::from_file(&path).unwrap_or_else(|e| panic!("{e}"));
            let variants = model.variants().unwrap_or_else(|e| panic!("{e}"));
            variants.into_iter().map(move |v| (path.clone(), v))
        })
        .collect()
}

/// A state and its successors, as [`walk`] shows them.
type Visit<'a> =
    dyn FnMut(&interlock::world::State, &[(interlock::exec::Choice, interlock::world::State)]) + 'a;

/// Walks the first few thousand states `m` reaches, depth first, and shows `visit` each
/// one with its successors.
fn walk(m: &interlock::ir::Model, visit: &mut Visit<'_>) {
    use interlock::world::State;
    use std::collections::HashSet;
    let mut seen: HashSet<State> = HashSet::new();
    let mut todo = vec![State::initial(m)];
    let mut succ = Vec::new();
    while let Some(s) = todo.pop() {
        if seen.len() >= 3000 || !seen.insert(s.clone()) {
            continue;
        }
        interlock::exec::successors(m, &s, &mut succ);
        visit(&s, &succ);
        todo.extend(succ.drain(..).map(|(_, n)| n));
    }
}

/// The search checks the successors of a state with one `Checker`, which carries the
/// verdicts of the last state it saw over to a successor with the same database and ghosts
/// as its own: on every state every built-in model reaches, it finds what `check` finds.
#[test]
fn remembered_property_verdicts_are_the_checked_ones() {
    use interlock::explore::{check, Checker};
    let mut remembered = 0;
    for (path, variant) in all_variants() {
        let m = variant.ir();
        let (mut want, mut got) = (Vec::new(), Vec::new());
        let mut checker = Checker::new(m);
        walk(m, &mut |_, succ| {
            for (_, n) in succ {
                check(m, n, &mut want);
                if checker.check(m, n, &mut got) {
                    remembered += 1;
                }
                assert_eq!(got, want, "{}: {n:?}", path.display());
            }
        });
    }
    assert!(
        remembered > 1000,
        "the checker remembered only {remembered} verdicts"
    );
}

/// The step memo answers only for a process alone with the world, and then what the step
/// itself gives: on every state every built-in model reaches, for every process, with one
/// memo per model so that later states meet what earlier ones left.
#[test]
fn remembered_steps_are_the_steps() {
    use interlock::exec::{observe::Silent, step::step};
    use interlock::explore::memo::{Context, Memo};
    use interlock::ir::value::Pid;
    let mut served = 0;
    for (path, variant) in all_variants() {
        let m = variant.ir();
        let mut memo = Memo::default();
        walk(m, &mut |s, _| {
            let cx = Context::of(s);
            for p in 0..s.procs.len() {
                let pid = Pid(p as u16);
                let want = step(m, s, pid, &mut Silent);
                assert_eq!(
                    memo.step(m, s, &cx, pid),
                    want,
                    "{}: {pid:?}",
                    path.display()
                );
            }
        });
        served += memo.served();
    }
    assert!(served > 10_000, "the memo answered only {served} steps");
}

/// Every state the built-in models reach (the first few thousand of each, every flavour)
/// packs into bytes that unpack to the same state: the visited set and the frontier keep
/// states only in packed form. A packer that copies the parts it packed before, and the
/// fingerprint search's queue, which keeps states by numbered parts, give the very same
/// bytes.
#[test]
fn every_reachable_state_survives_packing() {
    use interlock::explore::queue::Queue;
    use interlock::world::codec::{pack, unpack, Packer, Unpacker};
    for (path, variant) in all_variants() {
        // One unpacker, one packer and one queue for the whole model: later states reuse
        // what earlier ones left.
        let mut unpacker = Unpacker::for_states(64);
        let mut packer = Packer::default();
        let mut queue = Queue::default();
        let mut packed = Vec::new();
        walk(variant.ir(), &mut |s, succ| {
            let bytes = pack(s);
            assert_eq!(unpack(&bytes), *s, "{}", path.display());
            assert_eq!(unpacker.unpack(&bytes), *s, "{}", path.display());
            queue.push(&bytes);
            queue.advance();
            packed.clear();
            queue.get(0, &mut packed);
            assert_eq!(packed, *bytes, "{}: the queue's copy", path.display());
            for n in std::iter::once(s).chain(succ.iter().map(|(_, n)| n)) {
                packed.clear();
                packer.pack_into(n, &mut packed);
                assert_eq!(packed, *pack(n), "{}: {n:?}", path.display());
            }
        });
    }
}

/// `check` run on every variant of every built-in model, its counts summed; the first
/// error names its file.
fn sum_over_variants(check: impl Fn(&interlock::ir::Model) -> Result<usize, String>) -> usize {
    all_variants()
        .iter()
        .map(|(path, v)| check(v.ir()).unwrap_or_else(|e| panic!("{}: {e}", path.display())))
        .sum()
}

/// Symmetry reduction's premise on every state the built-in models reach (the first few
/// thousand of each, every flavour): renaming interchangeable processes commutes with
/// stepping and with the properties (tests/it/symmetry.rs).
#[test]
fn every_builtin_model_steps_alike_in_every_arrangement() {
    let compared = sum_over_variants(|m| super::symmetry::steps_alike(m, 2000));
    assert!(compared > 10_000, "only {compared} renamed states compared");
}

/// The fewest-switches pass derives a mirror's transitions from its chain root's instead of
/// stepping it: on every built-in model, the same transitions in the same order as the
/// plain successors, each renamed onto its representative (tests/it/symmetry.rs).
#[test]
fn every_builtin_model_expands_mirrors_as_their_roots() {
    let mirrored = sum_over_variants(|m| super::symmetry::mirrors_expand_as_their_roots(m, 500));
    assert!(
        mirrored > 1000,
        "only {mirrored} mirrored transitions checked"
    );
}

/// Two invariants that the same lost update breaks at the same depth: the verdict shows the
/// expected one and names the other, whatever the reductions, threads and storage.
#[test]
fn every_failure_of_the_shortest_layer_is_named() {
    let text = "model \"two\"\nabout \"two invariants break at once\"\ndb postgres\n\
        table sku (id int primary key, stock int)\nrow sku (1, 1)\nghost sold = 0\n\
        process buyer[2] {\n  begin\n  select stock from sku where id = 1 into $s\n\
        if $s < 1 { rollback; return \"out\" }\n  update sku set stock = $s - 1 where id = 1\n\
        commit\n  sold += 1\n}\ninvariant conserved: sku[1].stock + sold = 1\n\
        invariant no_oversell: sold <= 1\nexpect violated no_oversell\n";
    let m = Model::parse("two.model", text).unwrap_or_else(|e| panic!("{e}"));
    let runs = [
        Options::default(),
        Options::full(),
        Options {
            threads: 2,
            fingerprints: true,
            ..Options::default()
        },
    ];
    for opts in runs {
        let v = m.check_with(opts);
        let Outcome::Failed { failure, also, .. } = &v.outcome else {
            panic!("{}", v.render())
        };
        let names: Vec<String> = also.iter().map(|f| f.name(m.ir())).collect();
        assert_eq!(failure.name(m.ir()), "no_oversell", "{opts:?}");
        assert_eq!(names, ["conserved"], "{opts:?}");
        assert!(v
            .render()
            .contains("also violated at the same depth (6 steps): conserved"));
    }
    // Depth-first, the first failure found is the only one named.
    let v = m.check_with(Options {
        dfs: true,
        ..Options::default()
    });
    assert!(matches!(&v.outcome, Outcome::Failed { also, .. } if also.is_empty()));
}

/// `timing … split` ends a step at each reply: the clock read after SET's reply can be late
/// by a pause, and the lesson is violated; joined to the reply (no `split`), the read cannot
/// be delayed and the same model holds — the window the lesson is about.
#[test]
fn split_steps_let_a_pause_fall_between_a_reply_and_its_code() {
    let path = "models/timing/lease-start-after-reply.model";
    let text = std::fs::read_to_string(path).unwrap();
    let split = Model::parse(path, &text).unwrap_or_else(|e| panic!("{e}"));
    assert!(split.ir().split_steps);
    assert_eq!(split.check().summary(), "violated at_most_one_inside");
    let joined_text = text.replace("timing bounded split", "timing bounded");
    let joined = Model::parse(path, &joined_text).unwrap_or_else(|e| panic!("{e}"));
    assert!(!joined.ir().split_steps);
    assert_eq!(joined.check().summary(), "holds");
    assert_eq!(joined.check_with(Options::full()).summary(), "holds");
}

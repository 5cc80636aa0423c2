//! Coverage and vacuity: a `holds` says what it did not cover — statements never run, tests
//! that always went one way, SQL that never met a row, processes failing on uncaught errors —
//! and a `reachable` property fails when no state satisfies it.

use interlock::explore::{Options, StepMemo};
use interlock::Model;

fn model(body: &str) -> Model {
    let text = format!("model \"m\"\nabout \"a lesson\"\n{body}");
    Model::from_str(&text).unwrap_or_else(|e| panic!("{e}\n{text}"))
}

/// A typo in a key: the conditional UPDATE never matches, nobody sells, and "no oversell"
/// holds vacuously. The verdict names the statement and the one never run after it.
#[test]
fn a_where_that_matches_no_row_is_reported() {
    let m = model(
        "db postgres\ntable sku (id int primary key, stock int)\nrow sku (1, 1)\nghost sold = 0\n\
         process buyer[2] {\n  update sku set stock = stock - 1 where id = 2 and stock > 0 into $n\n  \
         if $n = 1 { sold += 1 }\n}\ninvariant no_oversell: sold <= 1\nexpect holds\n",
    );
    let v = m.check();
    assert_eq!(v.summary(), "holds");
    let text = v.render();
    for part in [
        "warning: buyer: `update sku set stock = stock - 1 where i...` never returned or \
         changed a row\n  --> <string>:8:3",
        "warning: buyer: `sold += 1` (line 9) never ran: its `if $n = 1` is never true\n  \
         --> <string>:9:15",
        "final states: 1 — buyer: done in 1",
    ] {
        assert!(text.contains(part), "{part}\n{text}");
    }
    assert!(text.lines().all(|l| l.chars().count() <= 100), "{text}");
}

/// InnoDB breaks the cycle of two opposite-order transfers by rolling back a victim: no
/// state is stuck, so `expect deadlock` is not met, and the warning says why.
#[test]
fn a_victim_failing_with_1213_is_named() {
    let body = "db mysql\ntable account (id int primary key, balance int)\nrow account (1, 100)\n\
                row account (2, 100)\nprocess a {\n  begin\n  update account set balance = balance - 10 where id = 1\n  \
                update account set balance = balance + 10 where id = 2\n  commit\n}\n\
                process b {\n  begin\n  update account set balance = balance - 10 where id = 2\n  \
                update account set balance = balance + 10 where id = 1\n  commit\n}\n";
    let v = model(&format!("{body}expect deadlock\n")).check();
    assert_eq!(v.summary(), "holds");
    assert!(!v.met());
    let text = v.render();
    for part in [
        "failed with ERROR 1213 (deadlock victim)",
        "warning: a: a process fails with ERROR 1213 (deadlock victim) in",
        "a deadlock was expected, but the database broke every cycle by failing a victim",
        "expected: deadlock — NOT MET",
    ] {
        assert!(text.contains(part), "{part}\n{text}");
    }
    // Declared as the lesson, it is not warned of.
    let v = model(&format!("{body}allow failed\nexpect holds\n")).check();
    assert!(v.met(), "{}", v.render());
    assert!(v.warnings.is_empty(), "{}", v.render());
    assert!(
        v.render().contains("failed with ERROR 1213"),
        "{}",
        v.render()
    );
}

/// `reachable NAME: P` holds when some state satisfies P, and fails, with no trace, when none
/// does; `expect violated NAME` then is met.
#[test]
fn reachable_properties_fail_when_nothing_gets_there() {
    let body = "ghost sold = 0\nprocess buyer[2] { sold += 1 }\n";
    let v = model(&format!(
        "{body}reachable both_sold: sold = 2\nexpect holds\n"
    ))
    .check();
    assert_eq!(v.summary(), "holds", "{}", v.render());
    let v = model(&format!(
        "{body}reachable three_sold: sold = 3\nexpect holds\n"
    ))
    .check();
    assert_eq!(v.summary(), "never reached three_sold");
    assert!(v.trace.is_none());
    let text = v.render();
    assert!(
        text.contains("✗ three_sold never reached: no reachable state satisfies it"),
        "{text}"
    );
    assert!(text.contains("<string>:5:1"), "{text}");
    let v = model(&format!(
        "{body}reachable three_sold: sold = 3\nexpect violated three_sold\n"
    ));
    assert!(v.check().met());
    // Every search finds the same, reduced or not, on any thread count.
    for opts in [
        Options::full(),
        Options {
            threads: 2,
            ..Options::default()
        },
    ] {
        let v = model(&format!(
            "{body}reachable both_sold: sold = 2\nexpect holds\n"
        ));
        assert_eq!(v.check_with(opts).summary(), "holds");
    }
}

/// The coverage counts do not depend on the thread count nor on the step memo, which hands
/// out steps without running them but reports what they covered with them.
#[test]
fn coverage_is_the_same_on_any_thread_count_with_or_without_the_memo() {
    for rel in [
        "models/optimistic/version-check.model",
        "models/pessimistic/opposite-order-retry.model",
        "models/redlock/no-faults.model",
        "models/redlock/pause-after-acquire.model",
        "models/choice/exercise-optimistic.model",
    ] {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(rel);
        let m = Model::from_file(&path).unwrap_or_else(|e| panic!("{e}"));
        let with = |threads, step_memo| Options {
            threads,
            step_memo,
            ..Options::default()
        };
        let exact = m.check_with(with(1, StepMemo::Off));
        for (threads, memo) in [
            (2, StepMemo::Off),
            (1, StepMemo::Always),
            (2, StepMemo::Always),
            (2, StepMemo::Warm),
        ] {
            let v = m.check_with(with(threads, memo));
            assert_eq!(
                exact.coverage, v.coverage,
                "{rel}: {threads} threads, {memo:?}"
            );
            assert_eq!(exact.warnings, v.warnings, "{rel}");
        }
    }
}

/// Reductions explore fewer states, never fewer statements: on every built-in model the
/// warnings (statements never run, tests one way, SQL without a row) are the plain search's.
#[test]
fn reductions_hide_no_statement() {
    for path in super::models::all_models() {
        let m = Model::from_file(&path).unwrap_or_else(|e| panic!("{e}"));
        for v in m.variants().unwrap_or_else(|e| panic!("{e}")) {
            let full = v.check_with(Options {
                max_states: Some(150_000),
                ..Options::full()
            });
            if matches!(full.outcome, interlock::explore::Outcome::Incomplete { .. }) {
                continue;
            }
            let reduced = v.check();
            let texts = |v: &interlock::Verdict| -> Vec<String> {
                v.warnings
                    .iter()
                    .map(|w| w.message.clone())
                    .filter(|m| !m.contains("final states"))
                    .collect()
            };
            // Counts of failing final states differ with the states explored; the statements
            // and tests do not.
            let judged = |ws: Vec<String>| -> Vec<String> {
                ws.into_iter()
                    .filter(|w| !w.contains("a process fails with"))
                    .collect()
            };
            assert_eq!(
                judged(texts(&full)),
                judged(texts(&reduced)),
                "{} {:?}",
                path.display(),
                v.flavour()
            );
        }
    }
}

/// Under `timing bounded` no time passes between a GET and the DEL right after it, so the
/// key never expires there: the `holds` names that window, with the line of the second step.
/// A pause fault on the group, a delay between the two, `timing async` or a key without a TTL
/// take the warning away (the first three open the window; the last has nothing to expire).
#[test]
fn a_window_bounded_timing_keeps_shut_is_named() {
    let with = |before: &str, px: &str, delay: &str| {
        model(&format!(
            "{before}ghost done = 0\nprocess client[2] {{\n  await SET lock $me NX{px}\n{delay}  \
             GET lock into $h\n{delay}  if $h = $me {{ DEL lock }}\n  done += 1\n}}\n\
             invariant fine: done <= 2\nexpect holds\n"
        ))
        .check()
    };
    let v = with("", " PX 200", "");
    assert!(v.met(), "{}", v.render());
    let messages: Vec<&str> = v.warnings.iter().map(|w| w.message.as_str()).collect();
    let want = "client: under `timing bounded` no time passes between `await SET lock $me NX PX \
                200` and `GET lock into $h` (line 6), so `lock` never expires between them";
    assert!(messages.contains(&want), "{messages:?}");
    assert!(v.render().contains("--> <string>:5:3"), "{}", v.render());
    let shut = |v: &interlock::Verdict| v.warnings.iter().any(|w| w.message.contains("timing"));
    let pause = "fault pause client up to 100ms at most 1\n";
    assert!(!shut(&with(pause, " PX 200", "")));
    // A pause only during a region elsewhere does not open it.
    let elsewhere = "fault pause client up to 100ms at most 1 during late\n";
    let v = model(&format!(
        "{elsewhere}ghost done = 0\nprocess client[2] {{\n  await SET lock $me NX PX 200\n  \
         GET lock into $h\n  if $h = $me {{ DEL lock }}\n  region late {{\n    work 10ms\n  }}\n}}\n\
         invariant fine: done <= 2\nexpect holds\n"
    ))
    .check();
    assert!(shut(&v), "{}", v.render());
    assert!(!shut(&with("", " PX 200", "  work 10ms\n")));
    assert!(!shut(&with("timing async\n", " PX 200", "")));
    assert!(!shut(&with("", "", "")));
}

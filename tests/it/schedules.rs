//! Schedules: a chosen interleaving run as a client driver runs it (`interlock run`, the
//! `schedule` blocks and `expect schedule` claims, the stepping driver).

use interlock::{Cause, Model};

const CROSS: &str = "
model \"cross\"
about \"two transactions update two rows in opposite orders\"
db postgres
table test (id int primary key, value int)
row test (1, 10)
row test (2, 20)
process T1 {
  begin
  update test set value = 11 where id = 1
  update test set value = 21 where id = 2 catch $e
  commit
}
process T2 {
  begin
  update test set value = 22 where id = 2
  update test set value = 12 where id = 1 catch $e
  commit
}
";

fn model(extra: &str) -> Model {
    Model::parse("cross.model", &format!("{CROSS}{extra}\nexpect holds\n"))
        .unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn a_waiter_resumes_on_its_own_once_the_lock_is_free() {
    let m = model("");
    let t = m.run_schedule("T1 T1 T1 T2 T2").expect("runs");
    // T1's first update, second update, commit; T2 runs without waiting.
    assert_eq!(t.len(), 5);
    let m = model("");
    let t = m.run_schedule("T1 T1 T2 T1 T2 T2").expect("runs");
    // T2's first update waits at step 3; T1's commit (step 4) lets it go on by itself.
    let text = t.text(&m);
    assert!(text.contains("waits for T1"), "{text}");
    assert!(
        text.contains('↳'),
        "the resume is shown as automatic:\n{text}"
    );
}

#[test]
fn a_postgres_deadlock_is_found_after_the_schedule_when_time_passes() {
    let m = model("");
    let t = m.run_schedule("T1 T2 T1 T2").expect("runs");
    let text = t.text(&m);
    assert!(text.contains("ERROR 40P01"), "{text}");
    assert!(
        text.contains("time passes 1s"),
        "deadlock_timeout passes:\n{text}"
    );
}

#[test]
fn a_step_that_cannot_run_is_an_error_with_its_number_and_a_hint() {
    let m = model("");
    let e = m.run_schedule("T1 T2 T2 T2").expect_err("T2 waits at 3");
    assert_eq!((e.step, e.written.as_str()), (4, "T2"));
    assert!(e.message.contains("T2 is waiting"), "{e}");
    assert!(
        e.hint
            .as_deref()
            .unwrap_or("")
            .contains("resumes by itself"),
        "{e}"
    );
    let e = m
        .run_schedule("T1 T1 T1 T1")
        .expect_err("T1 has three steps");
    assert_eq!(e.step, 4);
    assert!(e.message.contains("has finished"), "{e}");
    let e = m.run_schedule("T1 T3").expect_err("no T3");
    assert_eq!(e.step, 2);
    assert!(e.hint.as_deref().unwrap_or("").contains("T1, T2"), "{e}");
    let e = m
        .run_schedule("T1 tick 5s")
        .expect_err("nothing to wait for");
    assert_eq!(e.step, 2);
}

#[test]
fn the_driver_steps_one_scheduled_step_at_a_time_and_says_why_each_step_ran() {
    let m = model("");
    let mut d = m.driver();
    assert_eq!(d.take("T1"), Ok(1));
    assert_eq!(d.take("T1"), Ok(1));
    assert_eq!(d.take("T2"), Ok(1), "T2 starts to wait");
    assert!(
        d.take("T2").is_err(),
        "a waiting process cannot be scheduled"
    );
    assert_eq!(d.scheduled(), 3, "a failed step changes nothing");
    // T1's commit, then T2's resume on its own.
    assert_eq!(d.take("T1"), Ok(2));
    let (_, causes) = d.steps();
    assert_eq!(
        causes,
        [
            Cause::Scheduled(1),
            Cause::Scheduled(2),
            Cause::Scheduled(3),
            Cause::Scheduled(4),
            Cause::After(4)
        ]
    );
}

#[test]
fn claims_are_judged_and_a_false_one_makes_the_expectation_unmet() {
    let ok = model(
        "schedule cross { T1 T2 T1 T2 }
         expect schedule cross: T1 waits at 3, T2 waits at 4, T1 gets '40P01' at 4,
           final test[1].value = 10",
    );
    let v = ok.check();
    assert!(v.met(), "{}", v.render());
    let bad = model(
        "schedule cross { T1 T2 T1 T2 }
         expect schedule cross: T2 gets '40P01' at 4",
    );
    let v = bad.check();
    assert!(!v.met());
    let text = v.render();
    assert!(text.contains("✗ T2 gets '40P01' at 4"), "{text}");
    assert!(text.contains("NOT MET"), "{text}");
}

#[test]
fn a_schedule_that_cannot_run_in_a_file_names_its_line_and_column() {
    let m = model("schedule s {\n  T1 T2\n  T2 T2\n}\nexpect schedule s: T1 finishes");
    let v = m.check();
    assert!(!v.met());
    let text = v.render();
    assert!(
        text.contains("cross.model:22:6: step 4 of the schedule"),
        "{text}"
    );
}

#[test]
fn mistakes_in_schedules_and_claims_are_diagnostics_with_hints() {
    let cases = [
        ("schedule s { }", "an empty schedule"),
        ("schedule s { T1", "an unclosed schedule"),
        (
            "schedule s { T1 }\nexpect schedule t: T1 finishes",
            "unknown schedule \"t\"",
        ),
        (
            "schedule s { T1 }\nexpect schedule s: T3 finishes",
            "no process is named \"T3\"",
        ),
        (
            "schedule s { T1 }\nexpect schedule s: T1 sleeps",
            "unknown claim \"sleeps\"",
        ),
        (
            "schedule s { T1 }\nschedule s { T2 }\nexpect schedule s: T1 finishes",
            "a second schedule named \"s\"",
        ),
    ];
    for (extra, want) in cases {
        let text = format!("{CROSS}{extra}\nexpect holds\n");
        let e = Model::parse("bad.model", &text).expect_err(extra);
        let shown = e.to_string();
        assert!(shown.contains(want), "{extra}: {shown}");
    }
}

#[test]
fn the_hermitage_lessons_meet_their_claims_in_every_flavour() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("models/isolation/hermitage");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("the folder")
        .map(|e| e.expect("an entry").path())
        .collect();
    files.sort();
    assert!(files.len() >= 10, "{files:?}");
    for f in files {
        let m = Model::from_file(&f).expect("reads");
        assert!(!m.schedule_names().is_empty(), "{}", f.display());
        for v in m.variants().expect("variants") {
            let runs = v.schedule_runs();
            assert!(runs.iter().any(|r| !r.claims.is_empty()), "{}", f.display());
            for r in runs.iter().filter(|r| !r.claims.is_empty()) {
                assert!(r.met(), "{} {:?}: {}", f.display(), v.flavour(), r.text(&v));
            }
        }
    }
}

#[test]
fn time_passes_after_the_schedule_only_while_a_wait_can_end() {
    // Under `timing async` time could always pass. T2 waits for T1, which is not scheduled
    // again: its deadlock check falls due after 1 s (and finds no cycle), then no timer can
    // end the wait, and the run ends.
    let text = CROSS.replace("db postgres", "db postgres\ntiming async");
    let m = Model::parse("async.model", &format!("{text}\nexpect holds\n")).expect("parses");
    let t = m.run_schedule("T1 T1 T2").expect("runs");
    let shown = t.text(&m);
    assert_eq!(t.len(), 5, "{shown}");
    assert!(
        shown.contains("checks for a cycle") && shown.matches("time passes").count() == 1,
        "{shown}"
    );
}

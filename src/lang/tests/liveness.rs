//! Unit tests of the liveness properties and of `loop`.

use super::*;
use crate::ir::{Expr, PropertyKind};

const LOOP_BODY: &str = "loop {\n  lock m\n  g += 1\n  unlock m\n  if g > 2 { break }\n}";

#[test]
fn the_three_liveness_properties_parse() {
    let after = "eventually done: g = 1\n\
                 always_eventually free: g >= 0\n\
                 always eventually again: g < 5\n\
                 leads_to answered: g = 1 => g = 2\n\
                 invariant inv: g >= 0";
    let m = with("ghost g = 0", "g = 1\ng = 2", after);
    let kinds: Vec<_> = m
        .properties
        .iter()
        .map(|p| (p.name.as_str(), p.kind))
        .collect();
    assert_eq!(
        kinds,
        vec![
            ("done", PropertyKind::Eventually),
            ("free", PropertyKind::AlwaysEventually),
            ("again", PropertyKind::AlwaysEventually),
            ("answered", PropertyKind::LeadsTo),
            ("inv", PropertyKind::Invariant),
        ]
    );
    let leads = &m.properties[3];
    assert!(matches!(leads.expr, Expr::Binary(..)));
    assert!(matches!(leads.then, Some(Expr::Binary(..))));
    assert_ne!(Some(&leads.expr), leads.then.as_ref());
    for p in m
        .properties
        .iter()
        .filter(|p| p.kind != PropertyKind::LeadsTo)
    {
        assert!(p.then.is_none(), "{}", p.name);
    }
}

#[test]
fn liveness_properties_follow_the_expression_rules() {
    let src = source(
        "ghost g = 0",
        "$x = 1",
        "eventually a: $x = 1\nleads_to b: g = 0 => $x = 2",
    );
    let errs = messages(&src);
    assert_eq!(
        errs,
        vec![
            "properties cannot read locals",
            "properties cannot read locals"
        ]
    );
}

#[test]
fn leads_to_needs_an_arrow() {
    let src = source("ghost g = 0", "g = 1", "leads_to a: g = 0");
    let errs = errors(&src);
    assert_eq!(errs.len(), 1, "{errs:?}");
    assert!(errs[0].starts_with("expected `=>`"), "{errs:?}");
    assert!(errs[0].contains("leads_to NAME: P => Q"), "{errs:?}");
}

#[test]
fn misspelled_property_keywords_get_a_suggestion() {
    for (wrong, right) in [
        ("eventualy", "eventually"),
        ("always_eventualy", "always_eventually"),
        ("leadsto", "leads_to"),
    ] {
        let src = source("ghost g = 0", "g = 1", &format!("{wrong} a: g = 1"));
        let errs = errors(&src);
        assert!(
            errs[0].contains(&format!("did you mean `{right}`?")),
            "{wrong}: {errs:?}"
        );
    }
    let src = source("ghost g = 0", "g = 1", "always a: g = 1");
    let errs = errors(&src);
    assert!(errs[0].starts_with("expected `eventually`"), "{errs:?}");
}

#[test]
fn loop_jumps_back_to_its_first_op_and_break_leaves() {
    let m = with("ghost g = 0\nmutex m", LOOP_BODY, "");
    let ops = ops(&m);
    assert!(matches!(&ops[0], OpKind::Lock { .. }));
    assert!(matches!(&ops[1], OpKind::SetGhost { .. }));
    assert!(matches!(&ops[2], OpKind::Unlock { .. }));
    assert!(matches!(&ops[3], OpKind::JumpUnless { target: 5, .. }));
    assert!(matches!(&ops[4], OpKind::Jump(6)));
    assert!(matches!(&ops[5], OpKind::Jump(0)));
    assert!(matches!(&ops[6], OpKind::Return { outcome: None }));
    assert!(m.groups[0].program.locals.is_empty());
}

#[test]
fn loop_nests_inside_repeat_and_its_break_is_its_own() {
    let body = format!("g = 0\nrepeat 2 {{\n{LOOP_BODY}\n}}");
    let m = with("ghost g = 0\nmutex m", &body, "");
    let ops = ops(&m);
    // g = 0; #r = 0; unless #r < 2 goto 11; #r += 1; loop at 4..=9; goto 2
    assert!(matches!(&ops[2], OpKind::JumpUnless { target: 11, .. }));
    assert!(matches!(&ops[4], OpKind::Lock { .. }));
    assert!(matches!(&ops[8], OpKind::Jump(10)));
    assert!(matches!(&ops[9], OpKind::Jump(4)));
    assert!(matches!(&ops[10], OpKind::Jump(2)));
}

#[test]
fn loop_is_refused_inside_atomic() {
    let src = source("", "atomic {\n  loop { INCR n }\n}", "");
    let errs = messages(&src);
    assert_eq!(errs, vec!["`loop` is not allowed inside `atomic`"]);
}

#[test]
fn a_loop_that_never_steps_is_refused() {
    for body in [
        "loop { }",
        "loop { g += 1 }",
        "loop {\n  if g > 2 { work 1ms }\n  g += 1\n}",
    ] {
        let src = source("ghost g = 0", body, "");
        let errs = messages(&src);
        assert_eq!(
            errs,
            vec!["this `loop` can go round without taking a step"],
            "{body}"
        );
    }
    // A step on every way round, or a way out: fine.
    with(
        "ghost g = 0",
        "loop {\n  if g > 2 { break }\n  work 1ms\n  g += 1\n}",
        "",
    );
    with("ghost g = 0", "loop {\n  g += 1\n  return\n}", "");
}

#[test]
fn break_outside_any_loop_names_loop() {
    let src = source("", "break", "");
    let errs = errors(&src);
    assert!(errs[0].contains("`repeat`, `loop`, `for` or `retry`"), "{errs:?}");
}

#[test]
fn fairness_is_weak_unless_said_strong() {
    use crate::ir::Fairness;
    assert_eq!(with("", "work 1ms", "").fairness, Fairness::Weak);
    assert_eq!(
        with("fairness weak", "work 1ms", "").fairness,
        Fairness::Weak
    );
    assert_eq!(
        with("fairness strong", "work 1ms", "").fairness,
        Fairness::Strong
    );
}

#[test]
fn fairness_is_said_once_and_spelled_right() {
    let src = source("fairness strong\nfairness weak", "work 1ms", "");
    let errs = errors(&src);
    assert_eq!(errs.len(), 1, "{errs:?}");
    assert!(
        errs[0].starts_with("a second `fairness` line / "),
        "{errs:?}"
    );
    assert_eq!(
        errors(&source("fairness stronk", "work 1ms", "")),
        vec!["unknown fairness \"stronk\" / did you mean `strong`?"]
    );
    assert_eq!(
        errors(&source("fairnes weak", "work 1ms", "")),
        vec!["unknown declaration \"fairnes\" / did you mean `fairness`?"]
    );
}

/// Two groups: `w[3]` and `solo` (one process), then `after`.
fn two_groups(after: &str) -> String {
    format!(
        "model \"t\"\nabout \"t\"\nmutex m\nprocess w[3] {{\n  lock m\n  unlock m\n}}\n\
         process solo {{\n  lock m\n  unlock m\n}}\n{after}\nexpect holds\n"
    )
}

#[test]
fn terminates_is_eventually_every_process_finished() {
    use crate::ir::{BinOp, StatusKind, Value};
    let m = model(&two_groups("terminates all_w: w\nterminates lone: solo"));
    let count = |group, status| Expr::Count { group, status };
    let finished = |group, n| {
        let mut sum = count(group, StatusKind::Done);
        for s in [StatusKind::Failed, StatusKind::Crashed, StatusKind::Hung] {
            sum = Expr::Binary(BinOp::Add, Box::new(sum), Box::new(count(group, s)));
        }
        Expr::Binary(BinOp::Eq, Box::new(sum), Box::new(Expr::Lit(Value::Int(n))))
    };
    let p = &m.properties;
    assert_eq!(p.len(), 2);
    assert_eq!(
        (p[0].name.as_str(), p[0].kind),
        ("all_w", PropertyKind::Eventually)
    );
    assert_eq!(p[0].expr, finished(0, 3));
    assert!(p[0].then.is_none());
    assert_eq!(
        (p[1].name.as_str(), p[1].kind),
        ("lone", PropertyKind::Eventually)
    );
    assert_eq!(p[1].expr, finished(1, 1));
}

#[test]
fn no_starvation_is_waiting_leads_to_not_waiting() {
    use crate::ir::{Pid, StatusKind, UnOp};
    let m = model(&two_groups(
        "no_starvation w2: w[2]\nno_starvation lone: solo",
    ));
    let waiting = |pid| Expr::Status {
        pid: Pid(pid),
        status: StatusKind::Waiting,
    };
    for (p, pid, name) in [(&m.properties[0], 2, "w2"), (&m.properties[1], 3, "lone")] {
        assert_eq!((p.name.as_str(), p.kind), (name, PropertyKind::LeadsTo));
        assert_eq!(p.expr, waiting(pid));
        assert_eq!(p.then, Some(Expr::Unary(UnOp::Not, Box::new(waiting(pid)))));
    }
}

#[test]
fn named_liveness_forms_report_bad_groups_and_processes() {
    let errs = errors(&two_groups(
        "terminates a: ww\nno_starvation b: w[3]\nno_starvation c: w\n\
         terminates d: w[0]\nno_starvation e: nobody",
    ));
    assert_eq!(
        errs,
        vec![
            "unknown process group \"ww\" / did you mean `w`?",
            "no such process in group \"w\" / `w` has 3 processes: `w[0]` to `w[2]`",
            "no such process in group \"w\" / `w` has 3 processes: `w[0]` to `w[2]`",
            "`terminates` takes a whole group / `terminates NAME: w` checks every process \
             of `w`; remove the index",
            "unknown process group \"nobody\" / process groups are: `w`, `solo`",
        ]
    );
    let dup = errors(&two_groups("terminates a: w\nno_starvation a: solo"));
    assert_eq!(dup.len(), 1, "{dup:?}");
}

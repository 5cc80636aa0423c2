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
    assert!(errs[0].contains("`repeat`, `loop` or `retry`"), "{errs:?}");
}

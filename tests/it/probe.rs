//! The depth-first probe (docs/explorer.md, "The depth-first probe"): a violation only the
//! last layer holds is found without covering every layer first, printed for what it is,
//! the same on any number of threads, and the breadth-first answer when it is let run.

use interlock::explore::{Options, Outcome};
use interlock::{Model, Probe, Verdict};

/// The lost update with `n` clients: violated only in final states, `2 n` steps deep.
fn lost_update(n: usize) -> Model {
    let text = format!(
        "model \"lost update\"\nabout \"a\"\ndb postgres\n\
         table sku (id int primary key, stock int)\nrow sku (1, {n})\n\
         process client[{n}] {{\n select stock from sku where id = 1 into $s\n \
         update sku set stock = $s - 1 where id = 1\n}}\n\
         final never_lost: sku[1].stock = 0\nexpect violated never_lost\n"
    );
    Model::parse("lost.model", &text).unwrap_or_else(|e| panic!("{e}"))
}

fn steps(v: &Verdict) -> usize {
    v.trace.as_ref().map_or(0, |t| t.steps.len())
}

fn probing(after: usize, budget: Option<usize>, threads: usize) -> Options {
    Options {
        probe: Probe { after, budget },
        threads,
        ..Options::default()
    }
}

#[test]
fn a_deep_violation_is_the_probes_when_the_breadth_first_search_stops_first() {
    let m = lost_update(40);
    let v = m.check_with(probing(2_000, Some(4_000), 1));
    v.assert_violated("never_lost");
    assert_eq!(
        steps(&v),
        80,
        "every run that ends takes two steps a client"
    );
    let floor = v.stats.probe.expect("the probe's path");
    assert!(floor > 0 && floor < 80, "{floor}");
    assert!(v.stats.states < 10_000, "{}", v.stats.states);
    let text = v.render();
    assert!(
        text.contains("found depth-first (not proven shortest): 80 steps"),
        "{text}"
    );
    assert!(
        text.contains(&format!("none has fewer than {floor} steps")),
        "{text}"
    );
}

#[test]
fn the_probe_decides_the_same_on_any_number_of_threads() {
    let m = lost_update(30);
    let one = m.check_with(probing(2_000, Some(4_000), 1));
    let two = m.check_with(probing(2_000, Some(4_000), 2));
    assert_eq!(one.outcome, two.outcome);
    assert_eq!(one.stats, two.stats);
}

#[test]
fn let_run_the_breadth_first_search_prints_its_own_shortest_counterexample() {
    let m = lost_update(7);
    let plain = m.check_with(probing(usize::MAX, None, 1));
    let probed = m.check_with(probing(50, None, 1));
    assert_eq!(plain.outcome, probed.outcome);
    assert_eq!(plain.stats, probed.stats);
    assert_eq!(probed.stats.probe, None);
    assert!(probed
        .render()
        .contains("shortest counterexample: 14 steps"));
}

#[test]
fn a_limit_after_the_probe_found_a_failure_still_leaves_a_violation() {
    let m = lost_update(40);
    let opts = Options {
        max_states: Some(8_000),
        ..probing(2_000, None, 1)
    };
    let v = m.check_with(opts);
    assert!(
        matches!(v.outcome, Outcome::Failed { .. }),
        "{:?}",
        v.outcome
    );
    assert!(v.stats.probe.is_some());
    let opts = Options {
        max_states: Some(8_000),
        ..probing(usize::MAX, None, 1)
    };
    assert!(matches!(
        m.check_with(opts).outcome,
        Outcome::Incomplete { .. }
    ));
}

#[test]
fn a_model_that_holds_is_proved_as_without_the_probe() {
    let text = "model \"m\"\nabout \"a\"\ndb postgres\n\
        table sku (id int primary key, stock int)\nrow sku (1, 6)\n\
        process client[6] {\n update sku set stock = stock - 1 where id = 1\n}\n\
        final sold: sku[1].stock = 0\nexpect holds\n";
    let m = Model::parse("m.model", text).unwrap_or_else(|e| panic!("{e}"));
    let plain = m.check_with(probing(usize::MAX, None, 1));
    let probed = m.check_with(probing(2, Some(4), 1));
    plain.assert_holds();
    assert_eq!(plain.outcome, probed.outcome);
    assert_eq!(plain.stats, probed.stats);
}

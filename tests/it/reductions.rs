//! Reductions never change a verdict: random small models, each checked with no reduction
//! and with every reduction, store and thread count, must give the same verdict, the same
//! counterexample length, and (exact store, no reduction vs fingerprints) the same number of
//! states.
//!
//! The models mix what the reductions treat differently: interchangeable processes (groups of
//! two or three), process ids stored in Redis (`SET k $me NX`), keys private to a process
//! (partial-order reduction's case) and shared ones, a mutex on a shared instance or on each
//! process's own, a row, ghosts, delays, a branch on a reply (locals that live for a while,
//! dead-local reduction's case), values the environment picks, processes on a connection
//! pool of one (which turns partial-order reduction and the step memo off), and invariants
//! over all of them.

use interlock::explore::{Options, StepMemo};
use interlock::Model;
use proptest::prelude::*;

#[derive(Clone, Copy, Debug, PartialEq)]
enum Stmt {
    Get(u8),
    Set(u8, u8),
    Claim(u8),
    Incr(u8),
    Del(u8),
    Read,
    Write,
    Decrement,
    Count,
    Work,
    Critical,
    /// A branch on the last reply: keeps `$a` alive from the reply to the test.
    IfGot,
    /// A transaction that locks the row while it reads and writes: others wait for it.
    Locked,
    /// `pick $a from 0..2`: the environment's value, which `IfGot` may test.
    Pick,
    /// `sleep $s * 5 ms`: a pause of a computed length (none when the stock read is 0).
    Pause,
}

#[derive(Clone, Debug)]
struct Group {
    count: usize,
    shared_instance: bool,
    /// On the connection pool of one (then the reductions that assume steps are private or
    /// alike alone are off, and the others must still agree).
    pooled: bool,
    body: Vec<Stmt>,
}

/// Key 0 and 1 are shared by every group; key 2 is private to each group (`p<group>`).
fn key(k: u8, g: usize) -> String {
    match k {
        0 => "k0".into(),
        1 => "k1".into(),
        _ => format!("p{g}"),
    }
}

fn stmt_text(s: Stmt, g: usize) -> String {
    match s {
        Stmt::Get(k) => format!("GET {} into $a", key(k, g)),
        Stmt::Set(k, v) => format!("SET {} {v}", key(k, g)),
        Stmt::Claim(k) => format!("SET {} $me NX PX 30ms into $a", key(k, g)),
        Stmt::Incr(k) => format!("INCR {} into $a", key(k, g)),
        Stmt::Del(k) => format!("DEL {}", key(k, g)),
        Stmt::Read => "select stock from sku where id = 1 into $s".into(),
        Stmt::Write => "update sku set stock = $s - 1 where id = 1".into(),
        Stmt::Decrement => "update sku set stock = stock - 1 where id = 1 and stock > 0".into(),
        Stmt::Count => "sold += 1".into(),
        Stmt::Work => "work 10ms".into(),
        Stmt::Critical => "lock m\n  inside += 1\n  work 10ms\n  inside -= 1\n  unlock m".into(),
        // The DEL puts a step between the reply and the test.
        Stmt::IfGot => format!("DEL {}\n  if $a = 1 {{ sold += 1 }}", key(2, g)),
        Stmt::Locked => "begin\n  select stock from sku where id = 1 for update into $s\n  \
                         update sku set stock = $s - 1 where id = 1\n  commit"
            .into(),
        Stmt::Pick => "pick $a from 0..2".into(),
        Stmt::Pause => "sleep $s * 5 ms".into(),
    }
}

fn model_text(groups: &[Group], invariant: &str) -> String {
    let mut t = String::from(
        "model \"random\"\nabout \"generated\"\ndb postgres\n\
         table sku (id int primary key, stock int)\nrow sku (1, 2)\n\
         ghost sold = 0\nghost inside = 0\nmutex m\npool app size 1\n",
    );
    for (g, grp) in groups.iter().enumerate() {
        let place = if grp.shared_instance {
            format!(" on app{g}")
        } else {
            String::new()
        };
        let pool = if grp.pooled { " pool app" } else { "" };
        t.push_str(&format!(
            "process g{g}[{}]{place}{pool} {{\n  $s = 2\n  $a = 0\n",
            grp.count
        ));
        for s in &grp.body {
            t.push_str(&format!("  {}\n", stmt_text(*s, g)));
        }
        t.push_str("}\n");
    }
    t.push_str(&format!("invariant check: {invariant}\nexpect holds\n"));
    t
}

fn stmt() -> impl Strategy<Value = Stmt> {
    // A locking transaction is rarer: several of them in several processes make a search
    // without reductions long (see the test's bound too).
    prop_oneof![
        3 => (0u8..3).prop_map(Stmt::Get),
        3 => (0u8..3, 1u8..3).prop_map(|(k, v)| Stmt::Set(k, v)),
        3 => (0u8..3).prop_map(Stmt::Claim),
        3 => (0u8..3).prop_map(Stmt::Incr),
        3 => (0u8..3).prop_map(Stmt::Del),
        3 => Just(Stmt::Read),
        3 => Just(Stmt::Write),
        3 => Just(Stmt::Decrement),
        3 => Just(Stmt::Count),
        3 => Just(Stmt::Work),
        3 => Just(Stmt::Critical),
        3 => Just(Stmt::IfGot),
        1 => Just(Stmt::Locked),
        2 => Just(Stmt::Pick),
        2 => Just(Stmt::Pause),
    ]
}

fn group() -> impl Strategy<Value = Group> {
    (
        1usize..=3,
        any::<bool>(),
        proptest::bool::weighted(0.25),
        proptest::collection::vec(stmt(), 1..=4),
    )
        .prop_map(|(count, shared_instance, pooled, body)| Group {
            count,
            shared_instance,
            pooled,
            body,
        })
}

fn invariant() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("sku[1].stock >= 0".to_string()),
        (0i64..3).prop_map(|n| format!("sold <= {n}")),
        Just("inside <= 1".to_string()),
        (1i64..4).prop_map(|n| format!("redis(k0) != {n}")),
        Just("sku[1].stock + sold >= 2".to_string()),
    ]
}

fn holds(v: &interlock::Verdict) -> bool {
    v.outcome == interlock::explore::Outcome::Holds
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    #[test]
    fn every_reduction_agrees_with_the_full_search(
        groups in proptest::collection::vec(group(), 1..=2),
        inv in invariant(),
    ) {
        // At most three processes that lock rows: more make a search without reductions long.
        let locking: usize = groups
            .iter()
            .filter(|g| g.body.contains(&Stmt::Locked))
            .map(|g| g.count)
            .sum();
        prop_assume!(locking <= 3);
        let text = model_text(&groups, &inv);
        let m = Model::from_str(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
        let shape = |v: &interlock::Verdict| {
            (v.summary(), v.trace.as_ref().map(|t| t.steps.len()))
        };
        let full = m.check_with(Options::full());
        for (what, opts) in [
            ("default", Options::default()),
            ("symmetry", Options { symmetry: true, ..Options::full() }),
            ("por", Options { por: true, ..Options::full() }),
            ("locals", Options { dead_locals: true, ..Options::full() }),
            ("fingerprints", Options { fingerprints: true, ..Options::default() }),
            ("threads", Options { threads: 2, ..Options::default() }),
            ("no step memo", Options { step_memo: StepMemo::Off, ..Options::default() }),
            ("step memo always", Options { step_memo: StepMemo::Always, ..Options::default() }),
        ] {
            let v = m.check_with(opts);
            prop_assert_eq!(shape(&full), shape(&v), "{}\n{}", what, text);
            prop_assert!(v.stats.states <= full.stats.states, "{}\n{}", what, text);
        }
        // Depth-first reports the first failure it meets: with several failures it may name
        // another one than breadth-first (which names a shallowest), never a false one.
        for fingerprints in [false, true] {
            let dfs = m.check_with(Options { dfs: true, fingerprints, ..Options::default() });
            prop_assert_eq!(holds(&full), holds(&dfs), "dfs\n{}", text);
        }
        let prints = m.check_with(Options { fingerprints: true, ..Options::full() });
        prop_assert_eq!(full.stats.states, prints.stats.states, "{}", text);
        // A random model is small: the memo must start at once for the comparison to mean
        // anything.
        let plain = m.check_with(Options { step_memo: StepMemo::Off, ..Options::full() });
        let memo = m.check_with(Options { step_memo: StepMemo::Always, ..Options::full() });
        prop_assert_eq!(&memo.stats, &plain.stats, "step memo\n{}", text);
        prop_assert_eq!(memo.summary(), plain.summary(), "step memo\n{}", text);
    }
}

/// The generator's vocabulary does exercise both reductions (so the agreement above is not
/// vacuous): two interchangeable claimants and a process with a private key.
#[test]
fn the_generated_vocabulary_triggers_both_reductions() {
    let groups = [
        Group {
            count: 2,
            shared_instance: false,
            pooled: false,
            body: vec![Stmt::Claim(0), Stmt::Read, Stmt::Write, Stmt::Count],
        },
        Group {
            count: 1,
            shared_instance: false,
            pooled: false,
            body: vec![Stmt::Incr(2), Stmt::Work, Stmt::Set(2, 1), Stmt::Decrement],
        },
    ];
    let text = model_text(&groups, "sku[1].stock + sold >= 2");
    let m = Model::from_str(&text).unwrap_or_else(|e| panic!("{e}"));
    let full = m.check_with(Options::full());
    let reduced = m.check_with(Options::default());
    assert_eq!(full.summary(), reduced.summary());
    assert!(
        reduced.stats.symmetry && reduced.stats.ample > 0,
        "{:?}",
        reduced.stats
    );
    assert!(
        reduced.stats.states * 2 < full.stats.states,
        "{} vs {}",
        reduced.stats.states,
        full.stats.states
    );
}

/// A reply read one step later (`INCR`, then `DEL`, then the test) must survive the
/// dead-local reduction, and the last reply, never read, must not tell states apart.
#[test]
fn the_dead_local_reduction_keeps_replies_still_to_be_read() {
    let groups = [Group {
        count: 2,
        shared_instance: false,
        pooled: false,
        body: vec![Stmt::Incr(0), Stmt::IfGot, Stmt::Incr(0)],
    }];
    for (invariant, holds_) in [("sold <= 0", false), ("sold <= 1", true)] {
        let text = model_text(&groups, invariant);
        let m = Model::from_str(&text).unwrap_or_else(|e| panic!("{e}"));
        let full = m.check_with(Options::full());
        let reduced = m.check_with(Options {
            dead_locals: true,
            ..Options::full()
        });
        assert_eq!(holds(&full), holds_, "{text}");
        assert_eq!(full.summary(), reduced.summary(), "{text}");
        assert!(reduced.stats.dead_locals, "{:?}", reduced.stats);
        if holds_ {
            assert!(
                reduced.stats.states < full.stats.states,
                "{} vs {}",
                reduced.stats.states,
                full.stats.states
            );
        }
    }
}

//! Symmetry reduction is sound only if the step semantics do not care which of two
//! interchangeable processes is which: renaming the processes of a state and then stepping
//! must give the renamed successors of the state, by the renamed choices, and the same
//! property verdicts. An engine rule that orders processes by their number (a deadlock
//! victim chosen by process id) breaks this, and with it a verdict (tests/regressions/W1…).
//!
//! Checked on every state the built-in models reach (tests/it/models.rs) and on random
//! models per flavour that exercise what an engine orders processes by: deadlock victims of
//! two-, three- and four-way cycles, lock queues, lock timeouts, `NOWAIT`, `SKIP LOCKED`,
//! gap locks, mutex queues and Redis locks. The same random models are checked with and
//! without reductions.

use interlock::exec::{successors, Choice};
use interlock::explore::symmetry::Symmetry;
use interlock::explore::{check, Options};
use interlock::world::permute::Perm;
use interlock::world::State;
use interlock::Model;
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;
use std::collections::HashSet;

/// The renamings tried on each state: per class, its first two members swapped and, with
/// three or more, the whole class rotated by one.
fn renamings(sym: &Symmetry, n: usize) -> Vec<Perm> {
    let mut out = Vec::new();
    for c in sym.classes() {
        let mut swap = Perm::identity(n);
        swap.new.swap(c[0] as usize, c[1] as usize);
        out.push(swap);
        if c.len() > 2 {
            let mut rot = Perm::identity(n);
            for (i, &p) in c.iter().enumerate() {
                rot.new[p as usize] = c[(i + 1) % c.len()];
            }
            out.push(rot);
        }
    }
    out
}

/// The fewest-switches pass's expansion (`explore/edges.rs`) on the representatives of
/// the first `cap` it reaches: the plain successors, in their order, and for each one a
/// renaming that is a permutation taking the concrete successor to the representative
/// recorded for it, mirrors' transitions included. Returns how many mirrored transitions
/// were checked.
pub fn mirrors_expand_as_their_roots(
    m: &interlock::ir::Model,
    cap: usize,
) -> Result<usize, String> {
    use interlock::explore::edges::Edges;
    use interlock::explore::reduce::Reducer;
    use interlock::ir::value::Pid;
    let Some(sym) = Symmetry::of(m) else {
        return Ok(0);
    };
    let opts = Options {
        symmetry: true,
        dead_locals: false,
        por: false,
        ..Options::default()
    };
    let r = Reducer::new(m, &opts);
    let n = m.processes.len();
    let mut seen: HashSet<State> = HashSet::new();
    let mut todo = std::collections::VecDeque::from([r.canon(State::initial(m)).0]);
    let (mut succ, mut edges, mut mirrored) = (Vec::new(), Edges::default(), 0);
    while let Some(s) = todo.pop_front() {
        if seen.len() >= cap || !seen.insert(s.clone()) {
            continue;
        }
        successors(m, &s, &mut succ);
        r.expand_all(&s, &mut edges);
        let choices: Vec<Choice> = edges.list.iter().map(|e| e.0).collect();
        let plain: Vec<Choice> = succ.iter().map(|e| e.0).collect();
        if choices != plain {
            return Err(format!("choices {choices:?}, plainly {plain:?} in {s:?}"));
        }
        for ((c, next), (_, t, renaming)) in succ.iter().zip(&edges.list) {
            let perm = Perm {
                new: (0..n)
                    .map(|p| edges.rename(*renaming, Pid(p as u16)).0)
                    .collect(),
            };
            if perm.inverse().after(&perm) != Perm::identity(n) {
                return Err(format!("{c:?}: {perm:?} is not a permutation"));
            }
            let inst = sym.instance_perm(&perm);
            let renamed = next
                .clone()
                .permuted(&perm, &inst, sym.mutexes_per_instance());
            if renamed != edges.targets[*t] {
                return Err(format!(
                    "{c:?}: {perm:?} misses the representative in {s:?}"
                ));
            }
            mirrored += usize::from(renaming.mirrored());
        }
        todo.extend(edges.targets.drain(..));
    }
    Ok(mirrored)
}

/// Walks up to `cap` states `m` reaches (breadth first, no reduction) and checks on each
/// that every renaming of interchangeable processes commutes with stepping and with the
/// properties. Returns how many (state, renaming) pairs were compared.
///
/// # Errors
/// The first state where a renamed state steps differently, described.
pub fn steps_alike(m: &interlock::ir::Model, cap: usize) -> Result<usize, String> {
    let Some(sym) = Symmetry::of(m) else {
        return Ok(0);
    };
    let n = m.processes.len();
    let perms = renamings(&sym, n);
    let rename = |s: &State, p: &Perm| {
        let inst = sym.instance_perm(p);
        s.clone().permuted(p, &inst, sym.mutexes_per_instance())
    };
    let mut seen: HashSet<State> = HashSet::new();
    let mut todo = std::collections::VecDeque::from([State::initial(m)]);
    let (mut succ, mut other) = (Vec::new(), Vec::new());
    let (mut fails, mut other_fails) = (Vec::new(), Vec::new());
    let mut compared = 0;
    while let Some(s) = todo.pop_front() {
        if seen.len() >= cap || !seen.insert(s.clone()) {
            continue;
        }
        successors(m, &s, &mut succ);
        check(m, &s, &mut fails);
        for p in &perms {
            let ps = rename(&s, p);
            successors(m, &ps, &mut other);
            check(m, &ps, &mut other_fails);
            let mut want: Vec<(Choice, State)> = succ
                .iter()
                .map(|(c, t)| (Symmetry::rename(*c, p), rename(t, p)))
                .collect();
            want.sort_by_key(|(c, _)| *c);
            other.sort_by_key(|(c, _)| *c);
            compared += 1;
            if fails != other_fails {
                return Err(format!(
                    "renamed by {:?}, the properties differ: {fails:?} vs {other_fails:?}\n\
                     state: {s:?}",
                    p.new
                ));
            }
            let choices = |v: &[(Choice, State)]| v.iter().map(|(c, _)| *c).collect::<Vec<_>>();
            if choices(&want) != choices(&other) {
                return Err(format!(
                    "renamed by {:?}, other transitions: want {:?}, got {:?}\nstate: {s:?}",
                    p.new,
                    choices(&want),
                    choices(&other)
                ));
            }
            if let Some(((c, w), (_, g))) = want.iter().zip(&other).find(|((_, w), (_, g))| w != g)
            {
                return Err(format!(
                    "renamed by {:?}, {c:?} leads elsewhere\nstate: {s:?}\nwant: {w:?}\n\
                     got:  {g:?}",
                    p.new
                ));
            }
        }
        todo.extend(succ.drain(..).map(|(_, t)| t));
    }
    Ok(compared)
}

/// What a generated transaction does to the rows `t(0..3)`.
#[derive(Clone, Copy, Debug)]
enum Op {
    /// `update t set v = v + 1 where id = ROW`
    Update(Row),
    /// `select … for update` (or for share) on a row, with an optional wait policy.
    Lock(Row, bool, Policy),
    /// A plain read.
    Read(Row),
    /// `if $k = K { update … }`: only the process that drew `K` (a heavier transaction).
    When(u8, Row),
    /// Sleeps `10ms` times one more than the number drawn: the drawn roles ask in turn.
    Stagger,
    /// Locks the row of the number drawn, waits its turn, then asks for the next row round
    /// the ring: the drawers close a cycle of waits, as many as they are.
    Ring,
    /// `insert` of a new key (a duplicate when two processes insert the same one).
    Insert(Row),
    /// A scan that locks every row it reads: `update t set v = v where v >= 0`.
    Scan,
    Delete(Row),
    /// Time passes: makes waits start in different orders.
    Sleep(u8),
}

#[derive(Clone, Copy, Debug)]
enum Row {
    Fixed(u8),
    /// The number the process drew from the counter (0, 1, 2, … in drawing order).
    Drawn,
    /// The next one after it, round the ring of numbers drawn.
    AfterDrawn,
}

#[derive(Clone, Copy, Debug)]
enum Policy {
    Wait,
    Nowait,
    SkipLocked,
}

#[derive(Clone, Debug)]
struct Group {
    count: usize,
    /// Draws `$k` from a counter first, so that interchangeable processes take different
    /// roles (as in tests/regressions/W1…).
    draws: bool,
    ops: Vec<Op>,
    /// Ends in `rollback` instead of `commit`.
    rollback: bool,
    /// Takes a mutex (on a shared instance) or a Redis lock around the transaction.
    guard: Guard,
}

#[derive(Clone, Copy, Debug)]
enum Guard {
    None,
    Mutex,
    Redis,
}

#[derive(Clone, Debug)]
struct Gen {
    flavour: &'static str,
    isolation: &'static str,
    /// A short lock wait timeout (and, on PostgreSQL, a short `deadlock_timeout`).
    timeouts: bool,
    groups: Vec<Group>,
}

fn row_sql(r: Row) -> String {
    match r {
        Row::Fixed(k) => k.to_string(),
        Row::Drawn => "$k".into(),
        Row::AfterDrawn => "$j".into(),
    }
}

fn op_sql(op: Op, flavour: &str) -> String {
    match op {
        Op::Update(r) => format!("update t set v = v + 1 where id = {} catch $e", row_sql(r)),
        Op::Lock(r, share, policy) => {
            let clause = match (share, flavour) {
                (false, _) => "for update",
                (true, "mariadb") => "lock in share mode",
                (true, _) => "for share",
            };
            let policy = match policy {
                // MySQL's LOCK IN SHARE MODE takes no wait policy; MariaDB spells share so.
                _ if share && flavour == "mariadb" => "",
                Policy::Wait => "",
                Policy::Nowait => " nowait",
                Policy::SkipLocked => " skip locked",
            };
            format!(
                "select v from t where id = {} {clause}{policy} into $x catch $e",
                row_sql(r)
            )
        }
        Op::Read(r) => format!("select v from t where id = {} into $x catch $e", row_sql(r)),
        Op::When(k, r) => format!(
            "if $k = {k} {{ update t set v = v + 1 where id = {} catch $e }}",
            row_sql(r)
        ),
        Op::Ring => format!(
            "{}\n  {}\n  {}",
            op_sql(Op::Update(Row::Drawn), flavour),
            op_sql(Op::Stagger, flavour),
            op_sql(Op::Update(Row::AfterDrawn), flavour)
        ),
        Op::Stagger => "if $k = 0 { sleep 10ms } else if $k = 1 { sleep 20ms } \
                        else if $k = 2 { sleep 30ms } else { sleep 40ms }"
            .into(),
        Op::Insert(r) => format!(
            "insert into t (id, v) values ({} + 10, 1) catch $e",
            row_sql(r)
        ),
        Op::Scan => "update t set v = v where v >= 0 catch $e".into(),
        Op::Delete(r) => format!("delete from t where id = {} catch $e", row_sql(r)),
        Op::Sleep(ms) => format!("sleep {ms}ms"),
    }
}

fn model_text(g: &Gen) -> String {
    let mut t = format!(
        "model \"generated\"\nabout \"generated\"\ndb {} isolation {}\n",
        g.flavour, g.isolation
    );
    // With timeouts, the Redis guard's server may be cut off for a while too (RL-2, RL-4):
    // an `await` waits it out, a release that does not reach it leaves the key to its TTL.
    if g.timeouts && g.groups.iter().any(|grp| matches!(grp.guard, Guard::Redis)) {
        t.push_str("fault partition redis for 30ms at most 1\n");
    }
    if g.timeouts {
        t.push_str(if g.flavour == "postgres" {
            "set lock_timeout = 40ms\nset deadlock_timeout = 15ms\n"
        } else {
            "set innodb_lock_wait_timeout = 40ms\n"
        });
    }
    t.push_str(
        "table c (id int primary key, n int)\nrow c (1, 0)\n\
         table t (id int primary key, v int)\n\
         row t (0, 0)\nrow t (1, 0)\nrow t (2, 0)\nrow t (3, 0)\n\
         ghost failed0 = 0\nghost failed1 = 0\nghost failed2 = 0\nghost done = 0\n\
         mutex m\ntable ring (id int primary key, nxt int)\n",
    );
    // The numbers drawn, 0 to drawers - 1, each followed by the next round the ring.
    let drawers: usize = g.groups.iter().filter(|g| g.draws).map(|g| g.count).sum();
    for k in 0..drawers {
        t.push_str(&format!("row ring ({k}, {})\n", (k + 1) % drawers));
    }
    for (i, grp) in g.groups.iter().enumerate() {
        t.push_str(&format!("process g{i}[{}] on app {{\n", grp.count));
        if grp.draws {
            t.push_str(
                "  begin\n  select n from c where id = 1 for update into $k\n  \
                 update c set n = n + 1 where id = 1\n  commit\n  \
                 select nxt from ring where id = $k into $j\n",
            );
        } else {
            t.push_str("  $k = 0\n  $j = 1\n");
        }
        match grp.guard {
            Guard::None => {}
            Guard::Mutex => t.push_str("  lock m\n"),
            Guard::Redis => t.push_str("  await SET lock $me NX PX 100ms\n"),
        }
        t.push_str("  begin\n");
        for &op in &grp.ops {
            t.push_str(&format!("  {}\n", op_sql(op, g.flavour)));
            // Who failed tells the roles apart: the invariants below look at it.
            if !matches!(op, Op::Sleep(_) | Op::Stagger) {
                t.push_str(
                    "  if $e <> nil and $k = 0 { failed0 = 1 }\n  \
                     if $e <> nil and $k = 1 { failed1 = 1 }\n  \
                     if $e <> nil and $k = 2 { failed2 = 1 }\n",
                );
            }
        }
        t.push_str(if grp.rollback {
            "  rollback\n"
        } else {
            "  commit catch $e\n"
        });
        match grp.guard {
            Guard::None => {}
            Guard::Mutex => t.push_str("  unlock m\n"),
            Guard::Redis => t.push_str("  DEL lock\n"),
        }
        t.push_str("  done += 1\n}\n");
    }
    t.push_str(
        "invariant k0_never_fails: failed0 = 0\n\
         invariant k1_never_fails: failed1 = 0\n\
         invariant k2_never_fails: failed2 = 0\n\
         invariant rows_bounded: t[0].v + t[1].v <= 3\n\
         expect holds\n",
    );
    t
}

fn row() -> impl Strategy<Value = Row> {
    prop_oneof![
        (0u8..3).prop_map(Row::Fixed),
        Just(Row::Drawn),
        Just(Row::AfterDrawn),
    ]
}

fn op() -> impl Strategy<Value = Op> {
    let policy = prop_oneof![
        6 => Just(Policy::Wait),
        1 => Just(Policy::Nowait),
        1 => Just(Policy::SkipLocked),
    ];
    prop_oneof![
        4 => row().prop_map(Op::Update),
        4 => (row(), any::<bool>(), policy).prop_map(|(r, s, p)| Op::Lock(r, s, p)),
        1 => row().prop_map(Op::Read),
        2 => (0u8..3, row()).prop_map(|(k, r)| Op::When(k, r)),
        3 => Just(Op::Stagger),
        3 => Just(Op::Ring),
        1 => row().prop_map(Op::Insert),
        1 => Just(Op::Scan),
        1 => row().prop_map(Op::Delete),
        2 => (1u8..4).prop_map(|ms| Op::Sleep(ms * 10)),
    ]
}

fn group() -> impl Strategy<Value = Group> {
    let guard = prop_oneof![
        6 => Just(Guard::None),
        1 => Just(Guard::Mutex),
        1 => Just(Guard::Redis),
    ];
    (
        1usize..=4,
        proptest::bool::weighted(0.7),
        proptest::collection::vec(op(), 1..=5),
        proptest::bool::weighted(0.2),
        guard,
    )
        .prop_map(|(count, draws, ops, rollback, guard)| Group {
            count,
            draws,
            ops,
            rollback,
            guard,
        })
}

fn generated() -> impl Strategy<Value = Gen> {
    let flavour = prop_oneof![Just("postgres"), Just("mysql"), Just("mariadb")];
    let isolation = prop_oneof![
        Just("read_committed"),
        Just("repeatable_read"),
        Just("serializable")
    ];
    (
        flavour,
        isolation,
        any::<bool>(),
        proptest::collection::vec(group(), 1..=2),
    )
        .prop_filter("two to four processes", |(_, _, _, groups)| {
            let n: usize = groups.iter().map(|g| g.count).sum();
            (2..=4).contains(&n)
        })
        .prop_map(|(flavour, isolation, timeouts, groups)| Gen {
            flavour,
            isolation,
            timeouts,
            groups,
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(160))]

    #[test]
    fn generated_models_step_alike_in_every_arrangement(g in generated()) {
        let text = model_text(&g);
        let m = Model::from_str(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
        if let Err(e) = steps_alike(m.ir(), 1500) {
            panic!("{e}\n{text}");
        }
    }

}

/// The verdict and counterexample length of a generated model, with every reduction, store
/// and thread count, are the plain search's (when that finishes within `bound` states).
fn reduces_alike(g: &Gen, bound: usize) -> Result<(), TestCaseError> {
    let text = model_text(g);
    let m = Model::from_str(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    let full = m.check_with(Options {
        max_states: Some(bound),
        ..Options::full()
    });
    if matches!(full.outcome, interlock::Outcome::Incomplete { .. }) {
        return Ok(());
    }
    let shape = |v: &interlock::Verdict| (v.summary(), v.trace.as_ref().map(|t| t.len()));
    for (what, opts) in [
        (
            "default",
            Options {
                threads: 1,
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
                threads: 1,
                ..Options::default()
            },
        ),
    ] {
        let v = m.check_with(opts);
        prop_assert_eq!(shape(&full), shape(&v), "{}\n{}", what, text);
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn generated_models_reduce_alike(g in generated()) {
        reduces_alike(&g, 20_000)?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1000))]

    /// The same on many more models, with larger searches: `cargo test -- --ignored`.
    #[test]
    #[ignore = "long: 1,000 generated models; run with `cargo test symmetry -- --ignored`"]
    fn generated_models_reduce_alike_long(g in generated()) {
        reduces_alike(&g, 100_000)?;
    }
}

/// The generator reaches what it is for: a deadlock whose victim is chosen among
/// interchangeable processes, on each InnoDB flavour (so the comparisons above are not
/// vacuous there).
#[test]
fn the_generator_reaches_victims_among_interchangeable_processes() {
    let g = Gen {
        flavour: "mysql",
        isolation: "read_committed",
        timeouts: false,
        groups: vec![Group {
            count: 2,
            draws: true,
            ops: vec![
                Op::Update(Row::Drawn),
                Op::Stagger,
                Op::Update(Row::AfterDrawn),
            ],
            rollback: false,
            guard: Guard::None,
        }],
    };
    for flavour in ["mysql", "mariadb"] {
        let text = model_text(&Gen {
            flavour,
            ..g.clone()
        });
        let m = Model::from_str(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
        let v = m.check_with(Options::full());
        let failed = v.summary();
        assert!(
            failed.starts_with("violated k"),
            "{flavour}: {failed}\n{text}"
        );
        assert!(steps_alike(m.ir(), 5000).unwrap() > 0);
    }
}

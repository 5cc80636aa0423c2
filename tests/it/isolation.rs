//! Random transactions never break their isolation level's guarantees.
//!
//! Each case is two processes, each one transaction of 2–4 statements over Hermitage's table
//! (rows (1, 10) and (2, 20)): reads into locals, `value = value + 1` increments and
//! read-modify-writes `value = $r + 1`. Ghosts turn each guarantee into a property the checker
//! explores exhaustively, for every flavour and level where the guarantee is documented:
//!
//! - `no_dirty_read` (every level and flavour but InnoDB's READ UNCOMMITTED; PG-1, MY-2, MY-3):
//!   a transaction that writes the sentinel 999 and rolls back is never read by the other;
//! - `repeatable` (REPEATABLE READ and SERIALIZABLE; PG-3, MY-2, MY-4): two reads of a row with
//!   no write of it by the reader in between return the same value;
//! - `no_lost_update` (PostgreSQL REPEATABLE READ and SERIALIZABLE, PG-21; InnoDB SERIALIZABLE,
//!   whose reads take shared locks, MY-4): every committed increment is in the row;
//! - `serializable` (SERIALIZABLE; PG-25, MY-4): the final rows and every read of a committed
//!   transaction are those of some serial order of the committed transactions (this covers
//!   lost updates and write skew).
//!
//! PostgreSQL's READ UNCOMMITTED is its READ COMMITTED (PG-1): the same states, the same
//! verdicts. Fixed models then show each property can fail where its level does not promise
//! it, so the instrumentation is not vacuous.

use interlock::explore::Outcome;
use interlock::ir::Flavour;
use interlock::Model;
use proptest::prelude::*;

const INITIAL: [i64; 2] = [10, 20];
const SENTINEL: i64 = 999;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Stmt {
    /// `select value from test where id = K into $rN`
    Read(u8),
    /// `update test set value = value + 1 where id = K`
    Inc(u8),
    /// `update test set value = $rN + 1 where id = K`, $rN the latest read of K (no own write
    /// of K since, so it is an increment of what the transaction sees).
    Rmw(u8),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum End {
    Commit,
    /// Write the sentinel into row K, then roll back.
    Rollback(u8),
    /// Write the sentinel into row K and commit (only to show `no_dirty_read` can fail).
    CommitSentinel(u8),
}

#[derive(Clone, Debug)]
struct Txn {
    stmts: Vec<Stmt>,
    end: End,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Prop {
    NoDirtyRead,
    Repeatable,
    NoLostUpdate,
    Serializable,
}

fn row_index(k: u8) -> usize {
    usize::from(k - 1)
}

/// Turns invalid read-modify-writes (no read of the row since the last own write) into reads.
fn fix(stmts: Vec<Stmt>) -> Vec<Stmt> {
    let mut fresh = [false; 2];
    stmts
        .into_iter()
        .map(|s| {
            let s = match s {
                Stmt::Rmw(k) if !fresh[row_index(k)] => Stmt::Read(k),
                s => s,
            };
            match s {
                Stmt::Read(k) => fresh[row_index(k)] = true,
                Stmt::Inc(k) | Stmt::Rmw(k) => fresh[row_index(k)] = false,
            }
            s
        })
        .collect()
}

fn stmt() -> impl Strategy<Value = Stmt> {
    (0..3u8, 1..=2u8).prop_map(|(kind, k)| match kind {
        0 => Stmt::Read(k),
        1 => Stmt::Inc(k),
        _ => Stmt::Rmw(k),
    })
}

fn txn() -> impl Strategy<Value = Txn> {
    let end = prop_oneof![
        3 => Just(End::Commit),
        1 => (1..=2u8).prop_map(End::Rollback),
    ];
    (proptest::collection::vec(stmt(), 2..=4), end).prop_map(|(stmts, end)| Txn {
        stmts: fix(stmts),
        end,
    })
}

/// The serial run of `order`'s transactions from the initial rows: the final rows and, per
/// transaction, the value of each read (by statement index).
fn serial(txns: &[Txn], order: &[usize]) -> ([i64; 2], Vec<Vec<(usize, i64)>>) {
    let mut rows = INITIAL;
    let mut reads = vec![Vec::new(); txns.len()];
    for &t in order {
        let mut latest = [0i64; 2];
        for (i, s) in txns[t].stmts.iter().enumerate() {
            match *s {
                Stmt::Read(k) => {
                    latest[row_index(k)] = rows[row_index(k)];
                    reads[t].push((i, rows[row_index(k)]));
                }
                Stmt::Inc(k) => rows[row_index(k)] += 1,
                Stmt::Rmw(k) => rows[row_index(k)] = latest[row_index(k)] + 1,
            }
        }
    }
    (rows, reads)
}

/// `serializable`: some serial order of the committed transactions explains the final rows
/// and every read the committed transactions made.
fn serializable_expr(txns: &[Txn]) -> String {
    let mut orders: Vec<Vec<usize>> = vec![vec![]];
    let commits: Vec<usize> = (0..txns.len())
        .filter(|&t| txns[t].end == End::Commit)
        .collect();
    for &a in &commits {
        orders.push(vec![a]);
        for &b in &commits {
            if a != b {
                orders.push(vec![a, b]);
            }
        }
    }
    let alternatives: Vec<String> = orders
        .iter()
        .map(|order| {
            let (rows, reads) = serial(txns, order);
            let mut terms: Vec<String> = (0..txns.len())
                .map(|t| format!("c{t} = {}", i64::from(order.contains(&t))))
                .collect();
            terms.push(format!("test[1].value = {}", rows[0]));
            terms.push(format!("test[2].value = {}", rows[1]));
            for &t in order {
                for &(i, v) in &reads[t] {
                    terms.push(format!("g{t}_{i} = {v}"));
                }
            }
            format!("({})", terms.join(" and "))
        })
        .collect();
    alternatives.join(" or ")
}

/// One process: the transaction inside `retry`, every read recorded in ghosts.
fn program(p: usize, t: &Txn) -> (String, Vec<String>) {
    let mut ghosts = Vec::new();
    let mut body = String::new();
    let mut clean: [Vec<usize>; 2] = [Vec::new(), Vec::new()];
    let mut latest = [0usize; 2];
    let mut incs = [0u32; 2];
    for (i, s) in t.stmts.iter().enumerate() {
        match *s {
            Stmt::Read(k) => {
                let row = row_index(k);
                body += &format!("    select value from test where id = {k} into $r{i}\n");
                body += &format!("    if $r{i} >= {SENTINEL} {{ dirty += 1 }}\n");
                for &j in &clean[row] {
                    body += &format!("    if $r{j} <> $r{i} {{ nonrepeatable += 1 }}\n");
                }
                clean[row].push(i);
                latest[row] = i;
                body += &format!("    g{p}_{i} = $r{i}\n");
                ghosts.push(format!("g{p}_{i}"));
            }
            Stmt::Inc(k) => {
                body += &format!("    update test set value = value + 1 where id = {k}\n");
                clean[row_index(k)].clear();
                incs[row_index(k)] += 1;
            }
            Stmt::Rmw(k) => {
                let j = latest[row_index(k)];
                body += &format!("    update test set value = $r{j} + 1 where id = {k}\n");
                clean[row_index(k)].clear();
                incs[row_index(k)] += 1;
            }
        }
    }
    match t.end {
        End::Commit => {
            // The ghosts change in the commit's own step.
            body += "    commit\n";
            for (row, n) in incs.iter().enumerate() {
                if *n > 0 {
                    body += &format!("    inc{} += {n}\n", row + 1);
                }
            }
            body += &format!("    c{p} = 1\n");
        }
        End::Rollback(k) => {
            body += &format!("    update test set value = {SENTINEL} where id = {k}\n");
            body += "    rollback\n";
        }
        End::CommitSentinel(k) => {
            body += &format!("    update test set value = {SENTINEL} where id = {k}\n");
            body += "    commit\n";
        }
    }
    let text = format!(
        "process P{p} {{\n  retry 2 on '40001', '40P01', '1213' {{\n    begin\n{body}  }}\n}}\n"
    );
    (text, ghosts)
}

/// The model text of `txns` at `flavour` and `level`, with `props` as its properties.
fn model_text(flavour: Flavour, level: &str, txns: &[Txn], props: &[Prop]) -> String {
    let mut ghosts = vec![
        "dirty".to_string(),
        "nonrepeatable".into(),
        "inc1".into(),
        "inc2".into(),
    ];
    let mut processes = String::new();
    for (p, t) in txns.iter().enumerate() {
        let (text, g) = program(p, t);
        processes += &text;
        ghosts.push(format!("c{p}"));
        ghosts.extend(g);
    }
    let mut out = format!(
        "model \"random transactions\"\nabout \"isolation guarantees\"\n\
         db {} isolation {level}\ntable test (id int primary key, value int)\n\
         row test (1, {})\nrow test (2, {})\n",
        flavour.name(),
        INITIAL[0],
        INITIAL[1]
    );
    for g in ghosts {
        out += &format!("ghost {g} = 0\n");
    }
    out += &processes;
    for p in props {
        out += &match p {
            Prop::NoDirtyRead => "invariant no_dirty_read: dirty = 0\n".to_string(),
            Prop::Repeatable => "invariant repeatable: nonrepeatable = 0\n".to_string(),
            Prop::NoLostUpdate => format!(
                "invariant no_lost_update: test[1].value = {} + inc1 and \
                 test[2].value = {} + inc2\n",
                INITIAL[0], INITIAL[1]
            ),
            Prop::Serializable => format!("final serializable: {}\n", serializable_expr(txns)),
        };
    }
    out += "expect holds\n";
    out
}

fn model(flavour: Flavour, level: &str, txns: &[Txn], props: &[Prop]) -> Model {
    let text = model_text(flavour, level, txns, props);
    let origin = format!("random {} {level}", flavour.name());
    Model::parse(&origin, &text).unwrap_or_else(|e| panic!("{e}\n{text}"))
}

const FLAVOURS: [Flavour; 3] = [Flavour::Postgres, Flavour::Mysql, Flavour::Mariadb];
const LEVELS: [&str; 4] = [
    "read_uncommitted",
    "read_committed",
    "repeatable_read",
    "serializable",
];

/// The guarantees the flavour documents at the level, for these programs.
fn guarantees(flavour: Flavour, level: &str) -> Vec<Prop> {
    let mut props = Vec::new();
    if !(flavour.innodb() && level == "read_uncommitted") {
        props.push(Prop::NoDirtyRead);
    }
    let snapshot = matches!(level, "repeatable_read" | "serializable");
    if snapshot {
        props.push(Prop::Repeatable);
    }
    if (flavour == Flavour::Postgres && snapshot) || level == "serializable" {
        props.push(Prop::NoLostUpdate);
    }
    if level == "serializable" {
        props.push(Prop::Serializable);
    }
    props
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn random_transactions_keep_their_levels_guarantees(t0 in txn(), t1 in txn()) {
        let txns = [t0, t1];
        for flavour in FLAVOURS {
            for level in LEVELS {
                let props = guarantees(flavour, level);
                let m = model(flavour, level, &txns, &props);
                let v = m.check();
                prop_assert!(
                    v.outcome == Outcome::Holds,
                    "{}\n{}",
                    m.ir().source,
                    v.render()
                );
            }
        }
    }

    #[test]
    fn postgres_read_uncommitted_is_read_committed(t0 in txn(), t1 in txn()) {
        let txns = [t0, t1];
        let props = [Prop::NoDirtyRead, Prop::Repeatable, Prop::NoLostUpdate];
        let run = |level| model(Flavour::Postgres, level, &txns, &props).check();
        let (ru, rc) = (run("read_uncommitted"), run("read_committed"));
        prop_assert_eq!(ru.outcome, rc.outcome);
        prop_assert_eq!(
            (ru.stats.states, ru.stats.transitions),
            (rc.stats.states, rc.stats.transitions)
        );
    }
}

// ---------------------------------------------------------------------------------------------
// Each property fails where its level does not promise it.

fn txn_of(stmts: &[Stmt], end: End) -> Txn {
    Txn {
        stmts: stmts.to_vec(),
        end,
    }
}

#[test]
fn postgres_read_committed_loses_a_read_modify_write_update() {
    let rmw = txn_of(&[Stmt::Read(1), Stmt::Rmw(1)], End::Commit);
    let txns = [rmw.clone(), rmw];
    let props = [Prop::NoLostUpdate];
    model(Flavour::Postgres, "read_committed", &txns, &props)
        .check()
        .assert_violated("no_lost_update");
    // Repeatable read prevents it (PG-21), with the retry taking a fresh snapshot.
    model(Flavour::Postgres, "repeatable_read", &txns, &props)
        .check()
        .assert_holds();
}

#[test]
fn innodb_repeatable_read_loses_a_read_modify_write_update() {
    let rmw = txn_of(&[Stmt::Read(1), Stmt::Rmw(1)], End::Commit);
    let txns = [rmw.clone(), rmw];
    for flavour in [Flavour::Mysql, Flavour::Mariadb] {
        for level in ["read_committed", "repeatable_read"] {
            model(flavour, level, &txns, &[Prop::NoLostUpdate])
                .check()
                .assert_violated("no_lost_update");
        }
    }
}

#[test]
fn increments_in_sql_are_never_lost() {
    // `value = value + 1` computes from the newest version (PG-19, MY-8) at every level.
    let inc = txn_of(&[Stmt::Inc(1), Stmt::Inc(2)], End::Commit);
    let txns = [inc.clone(), inc];
    for flavour in FLAVOURS {
        for level in LEVELS {
            model(flavour, level, &txns, &[Prop::NoLostUpdate])
                .check()
                .assert_holds();
        }
    }
}

#[test]
fn read_committed_reads_are_not_repeatable() {
    let reader = txn_of(&[Stmt::Read(1), Stmt::Read(1)], End::Commit);
    let writer = txn_of(&[Stmt::Inc(1), Stmt::Inc(2)], End::Commit);
    let txns = [reader, writer];
    for flavour in FLAVOURS {
        model(flavour, "read_committed", &txns, &[Prop::Repeatable])
            .check()
            .assert_violated("repeatable");
    }
}

#[test]
fn repeatable_read_allows_write_skew() {
    let a = txn_of(&[Stmt::Read(1), Stmt::Inc(2)], End::Commit);
    let b = txn_of(&[Stmt::Read(2), Stmt::Inc(1)], End::Commit);
    let txns = [a, b];
    for flavour in FLAVOURS {
        model(flavour, "repeatable_read", &txns, &[Prop::Serializable])
            .check()
            .assert_violated("serializable");
        model(flavour, "serializable", &txns, &[Prop::Serializable])
            .check()
            .assert_holds();
    }
}

#[test]
fn innodb_read_uncommitted_reads_a_rolled_back_write() {
    // MY-3: the sentinel that is rolled back is read while it is uncommitted. PostgreSQL's
    // READ UNCOMMITTED never shows it (PG-1).
    let reader = txn_of(&[Stmt::Read(1), Stmt::Read(1)], End::Commit);
    let writer = txn_of(&[Stmt::Inc(2)], End::Rollback(1));
    let txns = [writer, reader];
    for flavour in [Flavour::Mysql, Flavour::Mariadb] {
        model(flavour, "read_uncommitted", &txns, &[Prop::NoDirtyRead])
            .check()
            .assert_violated("no_dirty_read");
    }
    model(
        Flavour::Postgres,
        "read_uncommitted",
        &txns,
        &[Prop::NoDirtyRead],
    )
    .check()
    .assert_holds();
}

#[test]
fn a_committed_sentinel_is_read_so_the_dirty_read_counter_is_live() {
    // The same shape as the generated rollbacks, but committed: the other transaction may
    // read 999, and the counter sees it. Rolled back, nobody does.
    let reader = txn_of(&[Stmt::Read(1), Stmt::Read(1)], End::Commit);
    for flavour in FLAVOURS {
        for level in LEVELS {
            let writer = txn_of(&[Stmt::Inc(2)], End::CommitSentinel(1));
            let txns = [writer, reader.clone()];
            model(flavour, level, &txns, &[Prop::NoDirtyRead])
                .check()
                .assert_violated("no_dirty_read");
            if flavour.innodb() && level == "read_uncommitted" {
                continue; // dirty reads are the level's point (MY-3)
            }
            let writer = txn_of(&[Stmt::Inc(2)], End::Rollback(1));
            let txns = [writer, reader.clone()];
            model(flavour, level, &txns, &[Prop::NoDirtyRead])
                .check()
                .assert_holds();
        }
    }
}

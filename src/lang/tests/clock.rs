//! Unit tests of `clock()` and `fault jump`.

use super::*;
use crate::ir::{BinOp, Expr, FaultKind, OpKind};

#[test]
fn clock_reads_the_clients_clock() {
    let body = "$start = clock()\nwork 100ms\n$elapsed = clock() - $start";
    let m = model(&source("", body, ""));
    let ops: Vec<&OpKind> = m.groups[0].program.ops.iter().map(|o| &o.kind).collect();
    assert_eq!(
        ops[0],
        &OpKind::Assign {
            local: 0,
            expr: Expr::Clock
        }
    );
    assert_eq!(
        ops[2],
        &OpKind::Assign {
            local: 1,
            expr: Expr::Binary(BinOp::Sub, Box::new(Expr::Clock), Box::new(Expr::Local(0))),
        }
    );
    assert!(m.clock);
    // Without `clock()` (or `now()`) the state carries no time.
    assert!(!model(&source("", "$x = 1", "")).clock);
}

#[test]
fn clock_is_for_process_code_only() {
    let got = errors(&source("ghost g", "g = 1", "invariant late: clock() < 100"));
    assert_eq!(
        got,
        vec![
            "properties cannot read a process's clock / each client has its own clock; record \
             what a property needs in a ghost"
        ]
    );
    let got = errors(&source("", "$t = now()", ""));
    assert_eq!(got.len(), 1, "{got:?}");
    assert!(
        got[0]
            .ends_with("`now()` is for SQL; process code reads the client's clock with `clock()`"),
        "{got:?}"
    );
}

#[test]
fn clock_is_not_sql() {
    let decls = "db postgres\ntable t (id int primary key, v int)";
    let got = errors(&source(decls, "UPDATE t SET v = clock() WHERE id = 1", ""));
    assert_eq!(got.len(), 1, "{got:?}");
    assert!(
        got[0].contains("`clock()` is the client's clock: read it into a local first"),
        "{got:?}"
    );
}

#[test]
fn jump_is_a_fault_of_a_server() {
    let m = model(&source(
        "redis cache\nredis queue",
        "SET k 1 PX 300ms on queue",
        "fault jump queue by 2s at most 2",
    ));
    assert_eq!(m.tick_ms, 100);
    let f = &m.faults[0];
    assert_eq!(f.kind, FaultKind::ClockJump {
            server: 1,
            replica: 0,
            by: 20
        });
    assert_eq!((f.group, f.budget, f.during), (0, 2, None));
    // The step counts toward the tick; the implicit server works too.
    let m = model(&source(
        "",
        "SET k 1 PX 300ms",
        "fault jump redis by 50ms at most 1",
    ));
    assert_eq!(m.tick_ms, 50);
    assert_eq!(
        m.faults[0].kind,
        FaultKind::ClockJump {
            server: 0,
            replica: 0,
            by: 1
        }
    );
    // Back, and on a replica; a restart is a fault of a server too.
    let m = model(&source(
        "redis cache with 2 replicas",
        "SET k 1 PX 300ms",
        "fault jump cache replica 2 by -3s at most 1\nfault restart cache at most 2",
    ));
    assert_eq!(m.tick_ms, 300);
    let kinds: Vec<FaultKind> = m.faults.iter().map(|f| f.kind).collect();
    assert_eq!(
        kinds,
        [
            FaultKind::ClockJump {
                server: 0,
                replica: 2,
                by: -10
            },
            FaultKind::Restart { server: 0, down: 0 }
        ]
    );
}

#[test]
fn a_replica_jump_and_a_restart_are_checked() {
    let got = errors(&source(
        "redis cache with 1 replica",
        "GET k",
        "fault jump cache replica 2 by 1s at most 1\nfault restart cache at most 1 during x\n\
         fault jump cache by -30d at most 1",
    ));
    assert_eq!(got.len(), 3, "{got:?}");
    assert!(got[0].contains("`cache` has no replica 2 / its replicas are numbered 1 to 1"), "{got:?}");
    assert!(got[1].contains("`during` does not apply to a restart"), "{got:?}");
    assert!(got[2].contains("bad duration unit"), "{got:?}");
    let got = errors(&source(
        "redis cache",
        "GET k",
        "fault jump cache replica 1 by 1s at most 1\nfault jump cache by -2500000s at most 1",
    ));
    assert!(got[0].contains("has no replica 1 / `fault jump cache by D` steps its own clock"), "{got:?}");
    assert!(got[1].contains("clock jump out of range"), "{got:?}");
}

#[test]
fn jump_is_checked() {
    let got = errors(&source(
        "redis cache",
        "GET k",
        "fault jump cahce by 1s at most 1\nfault jump cache by 1s at most 1 during x",
    ));
    assert_eq!(
        got,
        vec![
            "unknown Redis server \"cahce\" / did you mean `cache`?",
            "`during` does not apply to a clock jump / a clock jump happens to a Redis server, \
             not inside a process's region; remove `during …`",
        ]
    );
    let got = errors(&source("", "GET k", "fault jump redis at most 1"));
    assert_eq!(got.len(), 1, "{got:?}");
    assert!(got[0].contains("`by` and the clock's step"), "{got:?}");
    let got = errors(&source("", "GET k", "fault jmup redis by 1s at most 1"));
    assert_eq!(got, vec!["unknown fault \"jmup\" / did you mean `jump`?"]);
    let got = errors(&source("", "GET k", "fault explode redis by 1s at most 1"));
    assert!(got[0].ends_with("`failover`, `jump`, `restart`, `partition`"), "{got:?}");
}

#[test]
fn a_restart_kept_down_and_a_partition_are_lowered_in_ticks() {
    let m = model(&source(
        "redis cache",
        "SET k 1 PX 300ms",
        "fault restart cache down 900ms at most 1\nfault partition cache for 600ms at most 2\n\
         fault partition cache at most 1",
    ));
    assert_eq!(m.tick_ms, 300);
    let kinds: Vec<(FaultKind, u8)> = m.faults.iter().map(|f| (f.kind, f.budget)).collect();
    assert_eq!(
        kinds,
        [
            (FaultKind::Restart { server: 0, down: 3 }, 1),
            (FaultKind::Partition { server: 0, heal: Some(2) }, 2),
            (FaultKind::Partition { server: 0, heal: None }, 1),
        ]
    );
}

#[test]
fn a_partition_is_checked() {
    let got = errors(&source(
        "redis cache",
        "GET k",
        "fault partition cahce for 1s at most 1\nfault partition cache for 1 at most 1\n\
         fault partition cache at most 1 during x\nfault restart cache down -1s at most 1",
    ));
    assert_eq!(got.len(), 4, "{got:?}");
    assert!(got[0].contains("cahce"), "{got:?}");
    assert!(got[1].contains("duration without a unit"), "{got:?}");
    assert!(got[2].contains("`during` does not apply to a partition"), "{got:?}");
    assert!(got[3].contains("a duration like"), "{got:?}");
}

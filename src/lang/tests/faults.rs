//! Unit tests of PEXPIRE/PTTL/INCR, the watchdog, regions, faults and the fault statuses.

use super::*;
use crate::ir::{Expr, FaultKind, OpKind, Pid, RedisCmd, StatusKind};

#[test]
fn pexpire_pttl_and_incr_lower_everywhere() {
    let body = "PEXPIRE lock 300 into $ok\nPTTL lock into $left\nINCR hits\n\
                atomic { pexpire lock 2s; pttl lock; incr hits into $n }\n\
                await PEXPIRE lock 600ms into $x";
    let m = with("", body, "");
    // 300, 2000 and 600 ms: the tick is 100 ms.
    assert_eq!(m.tick_ms, 100);
    let ops = ops(&m);
    let OpKind::Redis {
        cmd: RedisCmd::Pexpire { key, ttl: 3 },
        into: Some(0),
        server: 0,
    } = &ops[0]
    else {
        panic!("{:?}", ops[0])
    };
    assert_eq!(m.symbol(*key), "lock");
    assert!(matches!(
        ops[1],
        OpKind::Redis {
            cmd: RedisCmd::Pttl { .. },
            into: Some(1),
            server: 0,
        }
    ));
    let OpKind::Redis {
        cmd: RedisCmd::Incr { key },
        into: None,
        server: 0,
    } = &ops[2]
    else {
        panic!("{:?}", ops[2])
    };
    assert_eq!(m.symbol(*key), "hits");
    let OpKind::Atomic { body, server: 0 } = &ops[3] else {
        panic!("{:?}", ops[3])
    };
    let inner: Vec<&OpKind> = body.iter().map(|o| &o.kind).collect();
    assert!(matches!(
        inner[..],
        [
            OpKind::Redis {
                cmd: RedisCmd::Pexpire { ttl: 20, .. },
                into: None,
                server: 0,
            },
            OpKind::Redis {
                cmd: RedisCmd::Pttl { .. },
                ..
            },
            OpKind::Redis {
                cmd: RedisCmd::Incr { .. },
                into: Some(2),
                server: 0,
            },
        ]
    ));
    assert!(matches!(
        ops[4],
        OpKind::AwaitRedis {
            cmd: RedisCmd::Pexpire { ttl: 6, .. },
            into: Some(3),
            server: 0,
        }
    ));
}

#[test]
fn pexpire_needs_a_positive_ttl() {
    for ttl in ["0", "-5", "0ms"] {
        let got = errors(&source("", &format!("PEXPIRE lock {ttl}"), ""));
        assert_eq!(got.len(), 1, "{got:?}");
        assert!(
            got[0].starts_with("PEXPIRE must be a positive integer"),
            "{got:?}"
        );
        assert!(got[0].contains("`DEL`"), "{got:?}");
    }
    let got = errors(&source("", "PEXPIRE lock", ""));
    assert!(got[0].contains("expected a TTL in milliseconds"), "{got:?}");
    let got = errors(&source("", "PTTL lock 5", ""));
    assert!(
        got[0].contains("`into $x` or the end of the PTTL command"),
        "{got:?}"
    );
}

#[test]
fn watchdog_lease_and_its_third_count_toward_the_tick() {
    let m = with(
        "",
        "SET lock $me NX PX 3000\nwatchdog lock lease 300ms\nwork 1s\nwatchdog stop",
        "",
    );
    // 3000, 300, 100 (the renewal period), 1000: the tick is 100 ms.
    assert_eq!(m.tick_ms, 100);
    let first = ops(&m);
    let OpKind::WatchdogStart { key, lease: 3 } = &first[1] else {
        panic!("{:?}", first[1])
    };
    assert_eq!(m.symbol(*key), "lock");
    assert!(matches!(
        first[2],
        OpKind::Work {
            ticks: 10,
            upto: 10,
            ..
        }
    ));
    assert_eq!(first[3], OpKind::WatchdogStop);
    // A lease of 30 s renews every 10 s; a key named `stop` is still a key.
    let m = with(
        "",
        "watchdog \"stop\" lease 30s\nwatchdog stop lease 3s",
        "",
    );
    assert_eq!(m.tick_ms, 1000);
    assert!(matches!(
        ops(&m)[0],
        OpKind::WatchdogStart { lease: 30, .. }
    ));
    assert!(matches!(ops(&m)[1], OpKind::WatchdogStart { lease: 3, .. }));
}

#[test]
fn watchdog_is_checked() {
    let got = errors(&source("", "watchdog lock lease 100ms", ""));
    assert_eq!(got.len(), 1, "{got:?}");
    assert!(
        got[0].starts_with("a watchdog lease must be a multiple of 3 ms"),
        "{got:?}"
    );
    assert!(got[0].contains("`99ms` or `102ms`"), "{got:?}");
    let got = errors(&source("", "watchdog lock lease 1ms", ""));
    assert!(got[0].contains("try `3ms`"), "{got:?}");
    let got = errors(&source("", "watchdog lock 300ms", ""));
    assert!(got[0].contains("expected `lease`"), "{got:?}");
    let got = errors(&source(
        "",
        "atomic { watchdog lock lease 3s; watchdog stop }",
        "",
    ));
    assert_eq!(got.len(), 2, "{got:?}");
    assert!(
        got[0].starts_with("`watchdog` is not allowed inside `atomic`"),
        "{got:?}"
    );
}

#[test]
fn regions_cover_the_ops_of_their_body() {
    let body = "GET a\nregion critical {\n  SET lock $me NX PX 300\n  \
                if 1 { work 100ms }\n  region inner { DEL lock }\n}\nGET b";
    let m = with(
        "",
        body,
        "fault crash p at most 1 during critical\nfault hang p at most 2 during inner",
    );
    let ops = ops(&m);
    // 0 GET a, 1 SET, 2 unless, 3 work, 4 DEL, 5 GET b, 6 return
    assert!(matches!(
        ops[4],
        OpKind::Redis {
            cmd: RedisCmd::Del { .. },
            ..
        }
    ));
    assert!(matches!(
        ops[5],
        OpKind::Redis {
            cmd: RedisCmd::Get { .. },
            ..
        }
    ));
    let faults: Vec<_> = m
        .faults
        .iter()
        .map(|f| (f.kind, f.group, f.budget, f.during))
        .collect();
    assert_eq!(
        faults,
        vec![
            (FaultKind::Crash, 0, 1, Some((1, 5))),
            (FaultKind::Hang, 0, 2, Some((4, 5))),
        ]
    );
}

#[test]
fn regions_are_checked() {
    let got = errors(&source(
        "",
        "region a { GET k }\nregion a { GET k }\nregion e { }\natomic { region r { GET k } }",
        "",
    ));
    assert_eq!(got.len(), 3, "{got:?}");
    assert!(got[0].starts_with("duplicate region \"a\""), "{got:?}");
    assert!(got[1].starts_with("region \"e\" is empty"), "{got:?}");
    assert!(
        got[2].starts_with("`region` is not allowed inside `atomic`"),
        "{got:?}"
    );
    // Region names are per group: two groups may both have `critical`.
    let src = "model \"t\"\nabout \"t\"\nprocess a { region critical { GET k } }\n\
               process b { GET j\nregion critical { GET k } }\n\
               fault pause b up to 1s at most 1 during critical\nexpect holds\n";
    assert_eq!(model(src).faults[0].during, Some((1, 2)));
}

#[test]
fn faults_lower_with_their_kind() {
    let m = with(
        "",
        "work 200ms",
        "fault crash p at most 1\nfault pause p up to 3s at most 2\nfault hang p at most 1",
    );
    assert_eq!(m.tick_ms, 200);
    let kinds: Vec<_> = m
        .faults
        .iter()
        .map(|f| (f.kind, f.budget, f.during))
        .collect();
    assert_eq!(
        kinds,
        vec![
            (FaultKind::Crash, 1, None),
            (FaultKind::Pause { max: 15 }, 2, None),
            (FaultKind::Hang, 1, None),
        ]
    );
    // The pause's duration counts toward the tick.
    let m = with("", "work 200ms", "fault pause p up to 50ms at most 1");
    assert_eq!(m.tick_ms, 50);
    assert_eq!(m.faults[0].kind, FaultKind::Pause { max: 1 });
}

#[test]
fn faults_are_checked() {
    let got = errors(&source(
        "",
        "region critical { GET k }\nregion other { GET j }",
        "fault crahs p at most 1\nfault pause p at most 1\nfault hang p at most 1 during critcal\n\
         fault crash p at most 1 during zzz\nfault explode p at most 1",
    ));
    assert_eq!(got.len(), 5, "{got:?}");
    assert!(
        got[0].contains("unknown fault \"crahs\" / did you mean `crash`?"),
        "{got:?}"
    );
    assert!(
        got[1].contains("expected `up to` and the longest pause"),
        "{got:?}"
    );
    assert!(
        got[2].contains("unknown region \"critcal\" in group \"p\" / did you mean `critical`?"),
        "{got:?}"
    );
    assert!(
        got[3].contains("the regions of `p` are: `critical`, `other`"),
        "{got:?}"
    );
    assert!(
        got[4].contains("the faults are: `crash`, `pause`, `hang`"),
        "{got:?}"
    );
    let got = errors(&source(
        "",
        "GET k",
        "fault hang p at most 1 during critical",
    ));
    assert!(got[0].contains("`p` has no region"), "{got:?}");
}

#[test]
fn properties_read_hung_and_paused() {
    let src = "model \"t\"\nabout \"t\"\nprocess w[2] { work 1ms }\n\
               fault hang w at most 1\nfault pause w up to 5ms at most 1\n\
               invariant a: count(w, hung) <= 1\nfinal b: not status(w[1], paused)\nexpect holds\n";
    let m = model(src);
    let Expr::Binary(_, l, _) = &m.properties[0].expr else {
        panic!()
    };
    assert_eq!(
        **l,
        Expr::Count {
            group: 0,
            status: StatusKind::Hung
        }
    );
    let Expr::Unary(_, inner) = &m.properties[1].expr else {
        panic!()
    };
    assert_eq!(
        **inner,
        Expr::Status {
            pid: Pid(1),
            status: StatusKind::Paused
        }
    );
}

#[test]
fn the_documented_fault_example_parses() {
    let doc = include_str!("../../../docs/language.md");
    let section = &doc[doc.find("## Faults").expect("a Faults section")..];
    let start = section.find("```\n").expect("an example") + 4;
    let end = start
        + section[start..]
            .find("```")
            .expect("the end of the example");
    let m = model(&format!(
        "model \"t\"\nabout \"t\"\n{}",
        &section[start..end]
    ));
    assert_eq!(m.tick_ms, 100);
    let f = &m.faults[0];
    assert_eq!(f.kind, FaultKind::Pause { max: 10 });
    // 0 await SET, 1 watchdog, 2-4 the critical region, 5 watchdog stop
    assert_eq!(f.during, Some((2, 5)));
    assert!(matches!(
        m.groups[0].program.ops[5].kind,
        OpKind::WatchdogStop
    ));
}

//! Unit tests of Redis servers and replicas: `redis NAME`, `on NAME`, `WAIT`, failover,
//! `timing async`.

use super::*;
use crate::ir::{FaultKind, OpKind, RedisCmd, RedisServer, Timing};

/// The server of every Redis op, atomic bodies flattened after their block's.
fn servers(ops: &[OpKind]) -> Vec<u16> {
    let mut out = Vec::new();
    for op in ops {
        match op {
            OpKind::Redis { server, .. } | OpKind::AwaitRedis { server, .. } => out.push(*server),
            OpKind::Atomic { body, server } => {
                out.push(*server);
                let inner: Vec<OpKind> = body.iter().map(|o| o.kind.clone()).collect();
                out.extend(servers(&inner));
            }
            _ => {}
        }
    }
    out
}

fn server(name: &str, replicas: u8) -> RedisServer {
    RedisServer {
        name: name.into(),
        replicas,
    }
}

#[test]
fn a_model_using_redis_without_declaring_it_gets_the_default_server() {
    let m = with("", "GET k\natomic { DEL k }\nawait SET k 1 NX", "");
    assert_eq!(m.redis, vec![server("redis", 0)]);
    assert_eq!(servers(&ops(&m)), vec![0, 0, 0, 0]);
    // `on redis` names the implicit server.
    let m = with("", "GET k on redis", "");
    assert_eq!(servers(&ops(&m)), vec![0]);
    // A watchdog or a property reading a key uses Redis too.
    let m = with("", "watchdog k lease 300ms", "");
    assert_eq!(m.redis, vec![server("redis", 0)]);
    let m = with("ghost g = 0", "g += 1", "invariant i: redis(k) = nil");
    assert_eq!(m.redis, vec![server("redis", 0)]);
    // No Redis at all: no server.
    let m = with("", "work 10ms", "");
    assert!(m.redis.is_empty());
    // A declared server stays even when nothing uses it.
    let m = with("redis cache with 1 replica", "work 10ms", "");
    assert_eq!(m.redis, vec![server("cache", 1)]);
}

#[test]
fn servers_are_declared_with_replicas() {
    let decls = "redis cache with 2 replicas\nredis queue\nredis one with 1 replica\n\
                 redis zero with 0 replicas";
    let m = with(decls, "GET k on queue", "");
    assert_eq!(
        m.redis,
        vec![
            server("cache", 2),
            server("queue", 0),
            server("one", 1),
            server("zero", 0)
        ]
    );
    // The only declared server is the default.
    let m = with("redis cache with 3 replicas", "GET k\nWAIT 3 100", "");
    assert_eq!(m.redis, vec![server("cache", 3)]);
    assert_eq!(servers(&ops(&m)), vec![0, 0]);
}

#[test]
fn on_names_the_server_of_every_command() {
    let decls = "redis cache with 1 replica\nredis queue";
    let body = "SET lock $me NX PX 300 on cache into $ok\nGET lock on queue into $v\n\
                await SET lock $me NX on queue\nINCR n on cache\nPEXPIRE lock 300 on queue";
    let m = with(decls, body, "");
    let ops = ops(&m);
    assert_eq!(servers(&ops), vec![0, 1, 1, 0, 1]);
    let OpKind::Redis {
        cmd: RedisCmd::Set {
            nx: true,
            px: Some(1),
            ..
        },
        into: Some(0),
        server: 0,
    } = &ops[0]
    else {
        panic!("{:?}", ops[0])
    };
    assert!(matches!(
        ops[2],
        OpKind::AwaitRedis {
            cmd: RedisCmd::Set { nx: true, .. },
            into: None,
            server: 1
        }
    ));
}

#[test]
fn atomic_on_gives_its_server_to_the_commands_inside() {
    let decls = "redis cache\nredis queue";
    let body = "atomic on queue {\n  GET lock into $v\n  if $v = $me { DEL lock on queue }\n}\n\
                atomic on cache { INCR n }";
    let m = with(decls, body, "");
    assert_eq!(servers(&ops(&m)), vec![1, 1, 1, 0, 0]);
    // `atomic on S` with its brace on the next line.
    let m = with(decls, "atomic on cache\n{ INCR n }", "");
    assert_eq!(servers(&ops(&m)), vec![0, 0]);
}

#[test]
fn wait_lowers_with_its_timeout_in_ticks() {
    let decls = "redis cache with 2 replicas\nredis queue with 1 replica";
    let body = "SET k 1 on cache\nWAIT 2 200 on cache into $n\nWAIT 0 2s on queue\nsleep 50ms";
    let m = with(decls, body, "");
    // 200 ms, 2 s and 50 ms: the tick is 50 ms.
    assert_eq!(m.tick_ms, 50);
    let ops = ops(&m);
    assert_eq!(
        ops[1],
        OpKind::Redis {
            cmd: RedisCmd::Wait {
                replicas: 2,
                timeout: 4
            },
            into: Some(0),
            server: 0
        }
    );
    assert_eq!(
        ops[2],
        OpKind::Redis {
            cmd: RedisCmd::Wait {
                replicas: 0,
                timeout: 40
            },
            into: None,
            server: 1
        }
    );
    // WAIT's timeout alone sets the tick too; WAIT 0 on the default server is fine.
    let m = with("", "WAIT 0 300ms", "");
    assert_eq!(m.tick_ms, 300);
    assert_eq!(m.redis, vec![server("redis", 0)]);
}

#[test]
fn failover_is_a_fault_of_a_server() {
    let decls = "redis cache\nredis primary with 2 replicas";
    let m = with(
        decls,
        "SET k 1 on primary",
        "fault failover primary at most 2\nfault crash p at most 1",
    );
    assert_eq!(m.faults.len(), 2);
    let f = &m.faults[0];
    assert_eq!(f.kind, FaultKind::Failover { server: 1 });
    assert_eq!((f.group, f.budget, f.during), (0, 2, None));
    assert_eq!(m.faults[1].kind, FaultKind::Crash);
}

#[test]
fn timing_is_bounded_or_async() {
    assert_eq!(with("", "work 1ms", "").timing, Timing::Bounded);
    assert_eq!(
        with("timing bounded", "work 1ms", "").timing,
        Timing::Bounded
    );
    assert_eq!(with("timing async", "work 1ms", "").timing, Timing::Async);
    assert_eq!(with("timing ASYNC", "work 1ms", "").timing, Timing::Async);
    let got = errors(&source("timing asnyc", "work 1ms", ""));
    assert_eq!(
        got,
        vec!["unknown timing \"asnyc\" / did you mean `async`?"]
    );
    let got = errors(&source("timing async\ntiming bounded", "work 1ms", ""));
    assert_eq!(got.len(), 1, "{got:?}");
    assert!(got[0].starts_with("a second `timing` line"), "{got:?}");
}

#[test]
fn server_declarations_are_checked() {
    let got = errors(&source(
        "redis cache with 5 replicas\nredis a\nredis a with 1 replica\nredis b with 1\n\
         redis c with 2 copies",
        "work 1ms",
        "",
    ));
    assert_eq!(got.len(), 4, "{got:?}");
    assert!(
        got[0].starts_with("the number of replicas must be between 0 and 4"),
        "{got:?}"
    );
    assert!(
        got[2].starts_with("expected `replicas`, found the end of the line"),
        "{got:?}"
    );
    assert!(
        got[3].starts_with("expected `replicas`, found `copies`"),
        "{got:?}"
    );
    assert!(
        got[1].starts_with("duplicate Redis server \"a\""),
        "{got:?}"
    );
}

#[test]
fn unknown_servers_are_reported_with_a_suggestion() {
    let decls = "redis cache with 1 replica\nredis queue";
    let got = errors(&source(
        decls,
        "GET k on cahce\natomic on queu { GET k }",
        "",
    ));
    assert_eq!(
        got,
        vec![
            "unknown Redis server \"cahce\" / did you mean `cache`?",
            "unknown Redis server \"queu\" / did you mean `queue`?",
        ]
    );
    let got = errors(&source(
        decls,
        "GET k on zzz",
        "fault failover xyz at most 1",
    ));
    assert_eq!(
        got,
        vec![
            "unknown Redis server \"zzz\" / Redis servers are: `cache`, `queue`",
            "unknown Redis server \"xyz\" / Redis servers are: `cache`, `queue`",
        ]
    );
    // Without a declaration only the implicit `redis` exists.
    let got = errors(&source("", "GET k on cache", ""));
    assert_eq!(
        got,
        vec![
            "unknown Redis server \"cache\" / no Redis server is declared: add `redis cache` \
             (the implicit one is `redis`)"
        ]
    );
}

#[test]
fn several_servers_need_on() {
    let decls = "redis cache\nredis queue";
    let body = "GET k\nawait SET k 1 NX\natomic { GET k on cache }\nWAIT 0 100";
    let got = errors(&source(decls, body, ""));
    assert_eq!(got.len(), 4, "{got:?}");
    for g in &got {
        assert!(
            g.starts_with("which Redis server? add `on NAME` / the model declares several Redis servers (`cache`, `queue`)"),
            "{got:?}"
        );
    }
    assert!(got[0].ends_with("like `GET key on cache`"), "{got:?}");
    assert!(got[2].ends_with("like `atomic on cache { … }`"), "{got:?}");
}

#[test]
fn a_command_inside_atomic_stays_on_its_server() {
    let decls = "redis cache\nredis queue";
    let body = "atomic on cache {\n  GET k on cache\n  DEL k on queue\n}";
    let got = errors(&source(decls, body, ""));
    assert_eq!(
        got,
        vec![
            "a command inside `atomic on cache` names `queue` / an atomic block runs on one \
             server, as a Lua script does; move the command out of the block"
        ]
    );
}

#[test]
fn failover_needs_a_replica() {
    let got = errors(&source(
        "redis cache\nredis queue with 1 replica",
        "GET k on queue",
        "fault failover cache at most 1\nfault failover queue at most 1 during x",
    ));
    assert_eq!(
        got,
        vec![
            "`cache` has no replica to fail over to / a failover promotes a replica: declare \
             `redis cache with 1 replica`",
            "`during` does not apply to a failover / a failover happens to a Redis server, not \
             inside a process's region; remove `during …`",
        ]
    );
    // The implicit server has no replica either.
    let got = errors(&source("", "GET k", "fault failover redis at most 1"));
    assert_eq!(got.len(), 1, "{got:?}");
    assert!(
        got[0].starts_with("`redis` has no replica to fail over to"),
        "{got:?}"
    );
    let got = errors(&source("", "GET k", "fault failvoer redis at most 1"));
    assert_eq!(
        got,
        vec!["unknown fault \"failvoer\" / did you mean `failover`?"]
    );
}

#[test]
fn wait_is_checked() {
    // More replicas than the server has, and no timeout, are Redis's own: WAIT waits out its
    // timeout (for ever with 0). `check` warns of the first; neither is an error.
    let decls = "redis cache with 1 replica";
    for (body, timeout) in [("WAIT 2 100 into $n", 100), ("WAIT 1 0 into $n", 0), ("WAIT 2 0", 0)] {
        let m = with(decls, body, "");
        let waits: Vec<u32> = m
            .program(crate::ir::value::Pid(0))
            .ops
            .iter()
            .filter_map(|op| match &op.kind {
                OpKind::Redis {
                    cmd: crate::ir::RedisCmd::Wait { timeout, .. },
                    ..
                } => Some(timeout * m.tick_ms as u32),
                _ => None,
            })
            .collect();
        assert_eq!(waits, vec![timeout], "{body}");
    }
    with("", "WAIT 1 100", "");
    let body = "atomic { WAIT 1 100 }\nawait WAIT 1 100\nWAIT 1 -5\nWAIT 1\nWAIT -1 100";
    let got = errors(&source(decls, body, ""));
    assert_eq!(got.len(), 5, "{got:?}");
    assert!(
        got[0].starts_with("`WAIT` is not allowed inside `atomic`"),
        "{got:?}"
    );
    assert!(
        got[1].starts_with("`WAIT` cannot follow `await`"),
        "{got:?}"
    );
    assert!(
        got[2].starts_with("WAIT's timeout cannot be negative"),
        "{got:?}"
    );
    assert!(
        got[3].starts_with("expected a timeout in milliseconds"),
        "{got:?}"
    );
    assert!(
        got[4].starts_with("expected the number of replicas, found `-`"),
        "{got:?}"
    );
}

#[test]
fn on_comes_after_the_options_and_before_into() {
    let decls = "redis cache";
    let got = errors(&source(
        decls,
        "GET k into $v on cache\nSET k 1 on cache NX\nGET k on\nGET k cache",
        "",
    ));
    assert_eq!(got.len(), 4, "{got:?}");
    assert!(
        got[0].starts_with("`on NAME` goes before `into`"),
        "{got:?}"
    );
    assert!(
        got[1].starts_with("SET's options go before `on`"),
        "{got:?}"
    );
    assert!(
        got[2].starts_with("expected a Redis server name"),
        "{got:?}"
    );
    assert!(
        got[3].starts_with(
            "expected `on NAME`, `into $x` or the end of the GET command, found `cache`"
        ),
        "{got:?}"
    );
}

#[test]
fn get_replica_lowers_to_a_replica_read() {
    let decls = "redis cache with 2 replicas\nredis queue with 1 replica";
    let body =
        "GET lock on cache replica 2 into $v\nGET lock on queue REPLICA 1\nGET lock on cache";
    let got = ops(&with(decls, body, ""));
    let OpKind::Redis {
        cmd: RedisCmd::GetReplica { replica: 2, .. },
        into: Some(0),
        server: 0,
    } = &got[0]
    else {
        panic!("{:?}", got[0])
    };
    assert!(matches!(
        got[1],
        OpKind::Redis {
            cmd: RedisCmd::GetReplica { replica: 1, .. },
            into: None,
            server: 1
        }
    ));
    assert!(matches!(
        got[2],
        OpKind::Redis {
            cmd: RedisCmd::Get { .. },
            server: 0,
            ..
        }
    ));
    // The only server needs no `on`.
    let m = with("redis cache with 1 replica", "GET k replica 1 into $v", "");
    assert!(matches!(
        ops(&m)[0],
        OpKind::Redis {
            cmd: RedisCmd::GetReplica { replica: 1, .. },
            server: 0,
            ..
        }
    ));
}

#[test]
fn get_replica_names_an_existing_replica() {
    let decls = "redis cache with 2 replicas\nredis queue";
    let body = "GET k on cache replica 0\nGET k on cache replica 3\nGET k on queue replica 1";
    let got = errors(&source(decls, body, ""));
    assert_eq!(
        got,
        vec![
            "replicas are numbered from 1 / without `replica` the primary answers: \
             `GET key on S`; `replica 1` is the first replica",
            "`cache` has no replica 3 / declare `redis cache with 3 replicas`, or read a \
             replica from 1 to 2",
            "`queue` has no replica 1 / declare `redis queue with 1 replica` to read from a \
             replica",
        ]
    );
    let got = errors(&source("redis one with 1 replica", "GET k replica 2", ""));
    assert_eq!(
        got,
        vec!["`one` has no replica 2 / declare `redis one with 2 replicas`, or read `replica 1`"]
    );
    // The implicit server has no replica.
    let got = errors(&source("", "GET k replica 1", ""));
    assert_eq!(
        got,
        vec![
            "`redis` has no replica 1 / declare `redis NAME with 1 replica` to read from a \
             replica"
        ]
    );
}

#[test]
fn get_replica_is_only_for_a_plain_get() {
    let decls = "redis cache with 1 replica";
    let body = "atomic { GET k replica 1 }\nawait GET k replica 1\nDEL k on cache replica 1\n\
                GET k replica 1 on cache\nGET k on cache replica\nGET k replica 1 into $v";
    let got = errors(&source(decls, body, ""));
    assert_eq!(got.len(), 5, "{got:?}");
    assert!(
        got[0].starts_with(
            "a replica read (`GET … replica`) is not allowed inside `atomic` / an atomic block"
        ),
        "{got:?}"
    );
    assert!(
        got[1].starts_with("`await` cannot read from a replica / `await` repeats a command"),
        "{got:?}"
    );
    assert!(
        got[2].starts_with("only `GET` reads from a replica / commands go to the primary"),
        "{got:?}"
    );
    assert!(
        got[3].starts_with("`on NAME` goes before `replica`"),
        "{got:?}"
    );
    assert!(
        got[4].starts_with("expected the replica number, found the end of the line"),
        "{got:?}"
    );
}

#[test]
fn keys_declared_at_the_start_are_on_every_node_of_their_server() {
    let decls = "redis cache with 1 replica\nredis queue\n\
                 key lock:order:42 = 'w0' ttl 2s on cache\nkey jobs = 3 on queue";
    let m = with(decls, "work 500ms\nGET lock:order:42 on cache into $v", "");
    assert_eq!(m.tick_ms, 500);
    let keys: Vec<(u16, &str, Option<u32>)> = m
        .keys
        .iter()
        .map(|k| (k.server, m.symbol(k.key), k.ttl))
        .collect();
    assert_eq!(keys, [(0, "lock:order:42", Some(4)), (1, "jobs", None)]);
    let s = crate::world::State::initial(&m);
    let lock = m.keys[0].key;
    // The primary and its replica hold it; the other server does not.
    for node in 0..2 {
        let k = s.redis[node].get(lock).expect("on cache's nodes");
        assert_eq!((m.show(&k.value), k.ttl), ("'w0'".to_string(), Some(4)));
    }
    assert!(s.redis[2].get(lock).is_none());
    assert_eq!(s.redis[2].get(m.keys[1].key).map(|k| k.value), Some(crate::ir::value::Value::Int(3)));
}

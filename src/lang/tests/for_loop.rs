//! Unit tests of `for` loops: unrolled once per item, the variable a value, a server or a
//! piece of a key; `break` leaves the loop; mistakes reported at the right place.

use super::*;
use crate::ir::{Expr, RedisCmd, Value};

/// The first group's ops without their spans, to compare a loop with its copies written out.
fn shape(m: &Model) -> String {
    let text = format!("{:?}", ops(m));
    let mut out = String::new();
    let mut rest = text.as_str();
    while let Some(at) = rest.find("span: Span {") {
        out.push_str(&rest[..at]);
        rest = &rest[at + rest[at..].find('}').unwrap() + 1..];
    }
    out + rest
}

/// The keys of the Redis commands of the first group, in order, as text.
fn keys(m: &Model) -> Vec<String> {
    ops(m)
        .iter()
        .filter_map(|op| match op {
            OpKind::Redis {
                cmd: RedisCmd::Get { key } | RedisCmd::Del { key },
                ..
            } => Some(m.symbols[key.0 as usize].clone()),
            _ => None,
        })
        .collect()
}

#[test]
fn a_for_over_servers_is_the_body_written_once_per_server() {
    let decls = "redis n1\nredis n2\nredis n3";
    let looped = with(decls, "for $n in n1, n2, n3 {\n  GET lock on $n into $v\n}", "");
    let written = with(
        decls,
        "GET lock on n1 into $v\nGET lock on n2 into $v\nGET lock on n3 into $v",
        "",
    );
    assert_eq!(shape(&looped), shape(&written));
    let servers: Vec<u16> = ops(&looped)
        .iter()
        .filter_map(|op| match op {
            OpKind::Redis { server, .. } => Some(*server),
            _ => None,
        })
        .collect();
    assert_eq!(servers, vec![0, 1, 2]);
}

#[test]
fn atomic_blocks_take_the_loop_variable_as_their_server() {
    let decls = "redis a\nredis b";
    let body = "for $s in a, b { atomic on $s { GET k into $h\nif $h = $me { DEL k } } }";
    let written = "atomic on a { GET k into $h\nif $h = $me { DEL k } }\n\
                   atomic on b { GET k into $h\nif $h = $me { DEL k } }";
    assert_eq!(shape(&with(decls, body, "")), shape(&with(decls, written, "")));
}

#[test]
fn a_range_binds_each_whole_number_as_a_constant() {
    let m = with("ghost g = 0", "for $i in 1..3 { g += $i }", "");
    let added: Vec<Expr> = ops(&m)
        .iter()
        .filter_map(|op| match op {
            OpKind::SetGhost { expr, .. } => Some(expr.clone()),
            _ => None,
        })
        .collect();
    let lit = |v| Expr::Lit(Value::Int(v));
    assert_eq!(added.len(), 3);
    for (e, v) in added.iter().zip(1..) {
        assert!(format!("{e:?}").contains(&format!("{:?}", lit(v))), "{e:?}");
    }
    // The variable is not a local of the program: nothing of it is kept in the state.
    assert!(!m.groups[0].program.locals.iter().any(|l| l == "i"));
}

#[test]
fn keys_take_the_loop_variable_and_sql_reads_it_as_a_value() {
    let m = with("", "for $i in 1..2 { GET lock:$i into $v\nDEL job-$i-x }", "");
    assert_eq!(keys(&m), ["lock:1", "job-1-x", "lock:2", "job-2-x"]);
    let m = with(
        "db postgres\ntable t (id int primary key, v int)\nrow t (1, 0)\nrow t (2, 0)",
        "for $k in 1, 2 { UPDATE t SET v = v + 1 WHERE id = $k }",
        "",
    );
    assert_eq!(ops(&m).len(), 3, "two updates and the end");
    // Strings and names are items too, and inner loops see outer variables.
    let m = with(
        "",
        "for $a in x, 'y' { for $b in 1..2 { GET $a:$b into $v } }",
        "",
    );
    assert_eq!(keys(&m), ["x:1", "x:2", "y:1", "y:2"]);
}

#[test]
fn break_leaves_the_loop_after_the_last_copy() {
    let m = with("redis n1\nredis n2", "for $n in n1, n2 { GET k on $n into $v\nif $v { break } }\nwork 1ms", "");
    let ops = ops(&m);
    let work = ops.iter().position(|o| matches!(o, OpKind::Work { .. })).unwrap();
    let breaks: Vec<u32> = ops
        .iter()
        .filter_map(|o| match o {
            OpKind::Jump(to) => Some(*to),
            _ => None,
        })
        .collect();
    assert_eq!(breaks, vec![work as u32, work as u32]);
}

#[test]
fn mistakes_in_for_loops_are_reported() {
    let err = |body: &str| errors(&source("redis n1\nredis n2", body, ""));
    assert_eq!(
        err("for n in n1 { GET k on n1 }")[0],
        "a `for` variable is written with `$`: `$n` / write `for $n in …`"
    );
    assert!(err("for $n in 3..1 { GET k on n1 }")[0].starts_with("an empty `for` range: 3..1"));
    assert!(err("for $n in 1..5000 { GET k on n1 }")[0].starts_with("a `for` has at most 1000 items"));
    assert!(err("for $n in a..b { GET k on n1 }")[0].starts_with("a `for` range runs between two whole numbers"));
    assert!(err("for $n in n1, n3 { GET k on $n }")[0].starts_with("unknown Redis server \"n3\""));
    assert!(err("GET k on $n")[0].starts_with("`$n` names no server: it is not a `for` variable"));
    assert!(err("GET lock:$sku on n1")[0].starts_with("`$sku` in the key `lock:$sku` is not a `for` variable"));
    assert!(err("GET lock:$me on n1")[0].starts_with("a key cannot hold `$me`"));
    assert!(err("for $i in 1..2 { $i = 3\nGET k on n1 }")[0]
        .starts_with("`$i` is a `for` variable: it cannot be assigned"));
    let nested = "for $a in 1..1000 { for $b in 1..1000 { GET k on n1 } }";
    let e = err(nested);
    assert_eq!(e.len(), 1, "{e:?}");
    assert!(e[0].starts_with("the `for` loops of this process unroll to more than 10000 statements"));
}

#[test]
fn the_unknown_server_error_points_at_the_item() {
    let src = source("redis n1\nredis n2", "for $n in n1, n9 {\n  GET k on $n\n}", "");
    let d = diagnostics(&src, &ParseOptions::default());
    let at = src.find("n9").unwrap();
    assert_eq!(d[0].span.start as usize, at);
}

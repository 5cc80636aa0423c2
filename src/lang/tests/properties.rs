//! Unit tests of property forms: lines that go on, `group[i]` as a process, `count(table …)`,
//! `redis(key on S)`.

use super::*;
use crate::ir::{BinOp, Expr, Pid, Value};

/// The expression of the model's first property.
fn first(decls: &str, body: &str, after: &str) -> Expr {
    with(decls, body, after).properties[0].expr.clone()
}

#[test]
fn a_property_goes_on_after_a_line_ending_in_an_operator() {
    let e = first("ghost a = 0\nghost b = 0", "a += 1", "invariant i: a >= 0 and\n  b >= 0");
    assert!(matches!(e, Expr::Binary(BinOp::And, _, _)), "{e:?}");
    let e = first("ghost a = 0", "a += 1", "invariant i: a +\n\n  1 > 0");
    assert!(matches!(e, Expr::Binary(BinOp::Gt, _, _)), "{e:?}");
}

#[test]
fn a_property_goes_on_inside_parentheses() {
    let after = "invariant i: (a >= 0\n  and b >= 0\n  or a = b\n)";
    let e = first("ghost a = 0\nghost b = 0", "a += 1", after);
    assert!(matches!(e, Expr::Binary(BinOp::Or, _, _)), "{e:?}");
    // Function arguments too.
    let e = first(
        "db postgres\ntable sku (id int primary key, stock int)\nrow sku (1, 5)",
        "work 1ms",
        "invariant i: count(\n  sku\n  where stock < 0\n) = 0",
    );
    assert!(matches!(e, Expr::Binary(BinOp::Eq, _, _)), "{e:?}");
}

#[test]
fn a_line_that_does_not_end_in_an_operator_ends_the_property() {
    let src = source(
        "ghost a = 0\nghost b = 0",
        "a += 1",
        "invariant i: a >= 0\n  and b >= 0",
    );
    assert!(!messages(&src).is_empty());
    // An unclosed parenthesis is an error at the end, not a hang.
    let src = source("ghost a = 0", "a += 1", "invariant i: (a >= 0\n");
    assert!(!messages(&src).is_empty());
}

#[test]
fn a_process_named_by_index_is_a_process_id() {
    let m = model(
        "model \"t\"\nabout \"t\"\nghost g = 0\nprocess p[2] {\n  g += 1\n}\n\
         invariant i: redis(lock) <> p[1]\nexpect holds\n",
    );
    let Expr::Binary(BinOp::Ne, _, r) = &m.properties[0].expr else {
        panic!("{:?}", m.properties[0].expr)
    };
    assert_eq!(**r, Expr::Lit(Value::Pid(Pid(1))));
    // Out of range: an error, not a wrong process.
    let src = "model \"t\"\nabout \"t\"\nghost g = 0\nprocess p[2] {\n  g += 1\n}\n\
               invariant i: redis(lock) <> p[2]\nexpect holds\n";
    assert!(!messages(src).is_empty());
}

#[test]
fn count_reads_rows_with_or_without_a_condition() {
    let decls = "db postgres\ntable sku (id int primary key, stock int)\nrow sku (1, 5)\nrow sku (2, 0)";
    let e = first(decls, "work 1ms", "invariant i: count(sku) = 2");
    let Expr::Binary(_, l, _) = e else { panic!() };
    assert_eq!(
        *l,
        Expr::Rows {
            table: 0,
            filter: None
        }
    );
    let e = first(decls, "work 1ms", "invariant i: count(sku where stock < 0) = 0");
    let Expr::Binary(_, l, _) = e else { panic!() };
    let Expr::Rows {
        filter: Some(f), ..
    } = *l
    else {
        panic!("{l:?}")
    };
    assert!(matches!(*f, Expr::Binary(BinOp::Lt, ref c, _) if **c == Expr::Column(1)));
    // A name that is not a column is reported with the table's columns.
    let src = source(decls, "work 1ms", "invariant i: count(sku where stok < 0) = 0");
    let all = errors(&src).join("\n");
    assert!(all.contains("stok"), "{all}");
    // The old form still counts processes.
    let e = first("", "work 1ms", "invariant i: count(p, done) <= 1");
    assert!(matches!(e, Expr::Binary(BinOp::Le, ref l, _) if matches!(**l, Expr::Count { .. })));
}

#[test]
fn redis_in_a_property_names_its_server_when_there_are_several() {
    let decls = "redis n1\nredis n2";
    let e = first(decls, "GET k on n1", "invariant i: redis(k on n2) = nil");
    let Expr::Binary(_, l, _) = e else { panic!() };
    assert!(matches!(*l, Expr::Key { server: 1, .. }), "{l:?}");
    let src = source(decls, "GET k on n1", "invariant i: redis(k) = nil");
    let all = errors(&src).join("\n");
    assert!(all.contains("which Redis server?"), "{all}");
    let src = source(decls, "GET k on n1", "invariant i: redis(k on n3) = nil");
    let all = errors(&src).join("\n");
    assert!(all.contains("unknown Redis server \"n3\""), "{all}");
    // One server: `on` is optional.
    let e = first("", "GET k", "invariant i: redis(k) = nil");
    let Expr::Binary(_, l, _) = e else { panic!() };
    assert!(matches!(*l, Expr::Key { server: 0, .. }), "{l:?}");
}

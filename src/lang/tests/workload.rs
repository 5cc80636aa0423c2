//! Unit tests of the workload forms that `check` explores too: `pick`, key ranges in `row`,
//! `sum(t.col)`, `db workers`, connection pools.

use super::*;
use crate::ir::{Expr, Value};

const T: &str = "db postgres\ntable sku (id int primary key, stock int)";

#[test]
fn pick_lowers_to_its_range_and_shape() {
    let m = with(T, "pick $id from 1..10 zipf 1.25\npick $k from -2..2", "");
    let ops = ops(&m);
    assert_eq!(
        ops[0],
        OpKind::Pick {
            local: 0,
            lo: 1,
            hi: 10,
            zipf: Some(1.25)
        }
    );
    assert_eq!(
        ops[1],
        OpKind::Pick {
            local: 1,
            lo: -2,
            hi: 2,
            zipf: None
        }
    );
}

#[test]
fn a_key_range_declares_a_row_a_key() {
    let m = with(&format!("{T}\nrow sku (3..6, 50)"), "work 1ms", "");
    let rows = &m.db.as_ref().expect("db").tables[0].rows;
    let keys: Vec<Value> = rows.iter().map(|r| r[0]).collect();
    assert_eq!(keys, (3..=6).map(Value::Int).collect::<Vec<_>>());
    assert!(rows.iter().all(|r| r[1] == Value::Int(50)));
    let got = messages(&source(&format!("{T}\nrow sku (1..3, 0..2)"), "work 1ms", ""));
    assert!(got[0].contains("a row has one range of keys"), "{got:?}");
    let got = messages(&source(&format!("{T}\nrow sku (1..3, 0)\nrow sku (3, 1)"), "work 1ms", ""));
    assert!(got[0].contains("duplicate primary key"), "{got:?}");
}

#[test]
fn sum_reads_a_column_in_properties_only() {
    let m = with(&format!("{T}\nrow sku (1..3, 5)"), "work 1ms", "invariant s: sum(sku.stock) = 15");
    assert_eq!(
        m.properties[0].expr,
        Expr::Binary(
            crate::ir::BinOp::Eq,
            Box::new(Expr::Sum { table: 0, column: 1 }),
            Box::new(Expr::Lit(Value::Int(15)))
        )
    );
    let got = messages(&source(T, "$x = sum(sku.stock)", ""));
    assert!(got[0].contains("only properties can read the world"), "{got:?}");
    let got = messages(&source(T, "work 1ms", "invariant s: sum(sku.price) = 0"));
    assert!(got[0].contains("price"), "{got:?}");
}

#[test]
fn workers_and_pools_are_declared_once_and_named_right() {
    let decls = format!("{T}\ndb workers 4\npool app size 3");
    let src = format!(
        "model \"t\"\nabout \"t\"\n{decls}\nprocess p[2] pool app {{\n  work 1ms\n}}\nexpect holds\n"
    );
    let m = model(&src);
    assert_eq!(m.workload.db_workers, Some(4));
    assert_eq!(m.workload.pools[0].size, 3);
    assert_eq!(m.workload.pool_of(0), Some(0));
    let got = messages(&src.replace("pool app {", "pool ap {"));
    assert!(got[0].contains("unknown pool \"ap\""), "{got:?}");
    let got = errors(&src.replace("size 3", "size 0"));
    assert!(got[0].contains("a pool's size must be between 1"), "{got:?}");
    let got = messages(&src.replace("db workers 4", "db workers 4\ndb workers 2"));
    assert!(got[0].contains("`db workers` is declared twice"), "{got:?}");
    let m = model(&src.replace("db workers 4", "redis workers 1\nredis cache"));
    assert_eq!(m.workload.redis_workers, Some(1));
    assert_eq!(m.redis[0].name, "cache");
}

#[test]
fn a_computed_sleep_counts_its_unit_in_ticks() {
    let m = with(T, "$d = 3\nsleep $d * 2 s\nsleep ($d) ms\nwork 10ms", "");
    assert_eq!(m.tick_ms, 1);
    let units: Vec<u32> = ops(&m)
        .iter()
        .filter_map(|o| match o {
            OpKind::SleepFor { unit, .. } => Some(*unit),
            _ => None,
        })
        .collect();
    assert_eq!(units, vec![1000, 1]);
    let got = errors(&source(T, "sleep $d", ""));
    assert!(got[0].starts_with("a computed sleep needs its unit"), "{got:?}");
}

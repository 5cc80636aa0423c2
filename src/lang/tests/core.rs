//! Unit tests of the front end: the documented example and the lowering rules.

use super::*;
use crate::ir::{
    BinOp, ColumnType, Expect, Expr, LockClause, LockMode, OpKind, Pid, RedisCmd, RedisServer,
    SqlStmt, StatusKind, Sym, Value, WaitPolicy,
};

const EXAMPLE: &str = r#"model "Optimistic lock without the version condition"
about "Two buyers race for the last unit. The UPDATE forgets AND version = $v: oversold."

db postgres isolation read_committed
table sku (id int primary key, stock int, version int)
row sku (1, 1, 0)
ghost sold = 0

process buyer[2] {
  begin
  select stock, version from sku where id = 1 into $stock, $v
  if $stock < 1 { rollback; return "out of stock" }
  update sku set stock = $stock - 1, version = $v + 1 where id = 1   -- no version check
  commit
  sold += 1
}

invariant no_oversell: sold <= 1
expect violated no_oversell
"#;

#[test]
fn the_documented_example_parses() {
    let m = model(EXAMPLE);
    assert_eq!(m.name, "Optimistic lock without the version condition");
    assert!(m.about.starts_with("Two buyers race"));
    assert_eq!(m.symbols[0], "OK");
    let db = m.db.as_ref().unwrap();
    assert_eq!(db.tables[0].columns[2].ty, ColumnType::Int);
    assert_eq!(
        db.tables[0].rows,
        vec![vec![Value::Int(1), Value::Int(1), Value::Int(0)]]
    );
    assert_eq!(m.groups[0].count, 2);
    assert_eq!(m.processes.len(), 2);
    assert_eq!(m.instances, vec!["buyer[0]", "buyer[1]"]);
    assert_eq!(m.groups[0].program.locals, vec!["stock", "v"]);
    assert_eq!(m.expect, Expect::Violated("no_oversell".into()));
    assert_eq!(m.tick_ms, 1);
    assert_eq!(m.process_name(Pid(1)), "buyer[1]");
    let ops = ops(&m);
    assert!(matches!(
        ops[0],
        OpKind::Sql {
            stmt: SqlStmt::Begin { isolation: None },
            on_error: None,
            ..
        }
    ));
    assert!(matches!(ops.last(), Some(OpKind::Return { outcome: None })));
}

#[test]
fn select_and_update_are_resolved() {
    let m = model(EXAMPLE);
    let ops = ops(&m);
    let OpKind::Sql {
        stmt:
            SqlStmt::Select {
                table,
                columns,
                filter,
                lock,
                text,
                ..
            },
        into,
        ..
    } = &ops[1]
    else {
        panic!("{:?}", ops[1]);
    };
    assert_eq!(
        (*table, columns.as_slice(), *lock),
        (0, &[1u16, 2][..], None)
    );
    assert_eq!(text, "select stock, version from sku where id = 1");
    assert_eq!(into, &vec![0, 1]);
    let eq = Expr::Binary(
        BinOp::Eq,
        Box::new(Expr::Column(0)),
        Box::new(Expr::Lit(Value::Int(1))),
    );
    assert_eq!(filter.as_ref(), Some(&eq));
    let update = ops.iter().find_map(|o| match o {
        OpKind::Sql {
            stmt: SqlStmt::Update { sets, text, .. },
            ..
        } => Some((sets, text)),
        _ => None,
    });
    let (sets, text) = update.unwrap();
    assert_eq!(
        text,
        "update sku set stock = $stock - 1, version = $v + 1 where id = 1"
    );
    let minus = Expr::Binary(
        BinOp::Sub,
        Box::new(Expr::Local(0)),
        Box::new(Expr::Lit(Value::Int(1))),
    );
    assert_eq!(sets[0], (1, minus));
}

#[test]
fn if_lowers_to_a_conditional_jump() {
    let m = model(EXAMPLE);
    let ops = ops(&m);
    // 2: unless $stock < 1 goto 5; 3: rollback; 4: return "out of stock"; 5: update
    let OpKind::JumpUnless { target, .. } = &ops[2] else {
        panic!("{:?}", ops[2])
    };
    assert_eq!(*target, 5);
    assert!(matches!(
        ops[3],
        OpKind::Sql {
            stmt: SqlStmt::Rollback,
            ..
        }
    ));
    let OpKind::Return { outcome: Some(s) } = ops[4] else {
        panic!()
    };
    assert_eq!(m.symbol(s), "out of stock");
}

#[test]
fn plus_equals_reads_the_ghost() {
    let m = model(EXAMPLE);
    let ops = ops(&m);
    let OpKind::SetGhost { ghost, expr } = &ops[ops.len() - 2] else {
        panic!()
    };
    assert_eq!(*ghost, 0);
    let sum = Expr::Binary(
        BinOp::Add,
        Box::new(Expr::Ghost(0)),
        Box::new(Expr::Lit(Value::Int(1))),
    );
    assert_eq!(expr, &sum);
}

#[test]
fn repeat_uses_a_hidden_counter_and_break_leaves() {
    let m = with(
        "ghost g = 0",
        "repeat 3 {\n  g -= 1\n  if g < -1 { break }\n}",
        "",
    );
    assert_eq!(m.groups[0].program.locals, vec!["#repeat1"]);
    let ops = ops(&m);
    assert!(matches!(
        &ops[0],
        OpKind::Assign {
            local: 0,
            expr: Expr::Lit(Value::Int(0))
        }
    ));
    let OpKind::JumpUnless { cond, target } = &ops[1] else {
        panic!("{:?}", ops[1])
    };
    let lt = Expr::Binary(
        BinOp::Lt,
        Box::new(Expr::Local(0)),
        Box::new(Expr::Lit(Value::Int(3))),
    );
    assert_eq!(cond, &lt);
    assert!(matches!(&ops[2], OpKind::Assign { local: 0, .. }));
    assert!(matches!(&ops[3], OpKind::SetGhost { .. }));
    assert!(matches!(&ops[4], OpKind::JumpUnless { target: 6, .. }));
    assert!(matches!(&ops[5], OpKind::Jump(7)));
    assert!(matches!(&ops[6], OpKind::Jump(1)));
    assert_eq!(*target, 7);
    assert!(matches!(&ops[7], OpKind::Return { outcome: None }));
}

#[test]
fn else_if_chains_jump_to_the_end() {
    let m = with(
        "ghost g = 0",
        "if g = 0 { g = 1 } else if g = 1 { g = 2 } else { g = 3 }",
        "",
    );
    let ops = ops(&m);
    assert!(matches!(&ops[0], OpKind::JumpUnless { target: 3, .. }));
    assert!(matches!(&ops[2], OpKind::Jump(7)));
    assert!(matches!(&ops[3], OpKind::JumpUnless { target: 6, .. }));
    assert!(matches!(&ops[5], OpKind::Jump(7)));
    assert!(matches!(&ops[6], OpKind::SetGhost { .. }));
    assert!(matches!(&ops[7], OpKind::Return { .. }));
}

#[test]
fn tick_is_the_gcd_of_all_durations() {
    let m = with("", "work 300ms\nsleep 50ms\nSET k 1 PX 1s", "");
    assert_eq!(m.tick_ms, 50);
    let ops = ops(&m);
    assert!(matches!(ops[0], OpKind::Work { ticks: 6, upto: 6, .. }));
    assert!(matches!(ops[1], OpKind::Sleep { ticks: 1, upto: 1, .. }));
    assert!(matches!(
        ops[2],
        OpKind::Redis {
            cmd: RedisCmd::Set { px: Some(20), .. },
            ..
        }
    ));
}

#[test]
fn ex_is_a_ttl_in_seconds() {
    // RS-1: `EX s` and `PX ms` set the same TTL; the tick is their common divisor.
    let m = with("", "work 500ms\nSET k 1 NX EX 2\nSET k 1 PX 2000 NX", "");
    assert_eq!(m.tick_ms, 500);
    let ops = ops(&m);
    let px = |op: &OpKind| match op {
        OpKind::Redis {
            cmd: RedisCmd::Set { px, nx, ex, .. },
            ..
        } => (*px, *nx, *ex),
        other => panic!("{other:?}"),
    };
    assert_eq!(px(&ops[1]), (Some(4), true, true));
    assert_eq!(px(&ops[2]), (Some(4), true, false));
}

#[test]
fn instances_follow_on_clauses() {
    let src = "model \"t\"\nabout \"t\"\nprocess a[2] on api { work 1ms }\n\
               process b on api { work 1ms }\nprocess c { work 1ms }\nexpect holds\n";
    let m = model(src);
    assert_eq!(m.instances, vec!["api", "c"]);
    let placed: Vec<usize> = m.processes.iter().map(|p| p.instance).collect();
    assert_eq!(placed, vec![0, 0, 0, 1]);
    assert_eq!(m.groups[1].first, Pid(2));
    assert_eq!(m.process_name(Pid(3)), "c");
}

#[test]
fn redis_lock_with_atomic_release() {
    let body = "await SET lock $me NX PX 3000 into $ok\n\
                atomic {\n  GET lock into $v\n  if $v = $me { DEL lock }\n}";
    let m = with("", body, "");
    let ops = ops(&m);
    let OpKind::AwaitRedis {
        cmd: RedisCmd::Set { key, value, nx, px, ex: false },
        into,
        server: 0,
    } = &ops[0]
    else {
        panic!("{:?}", ops[0])
    };
    assert_eq!(
        (m.symbol(*key), value, *nx, *px, *into),
        ("lock", &Expr::Me, true, Some(1), Some(0))
    );
    assert_eq!(m.tick_ms, 3000);
    let OpKind::Atomic { body, server: 0 } = &ops[1] else {
        panic!()
    };
    assert!(matches!(
        body[0].kind,
        OpKind::Redis {
            cmd: RedisCmd::Get { .. },
            into: Some(1),
            server: 0,
        }
    ));
    assert!(matches!(body[1].kind, OpKind::JumpUnless { target: 3, .. }));
    assert!(matches!(
        body[2].kind,
        OpKind::Redis {
            cmd: RedisCmd::Del { .. },
            into: None,
            server: 0,
        }
    ));
    assert_eq!(body.len(), 3);
    assert_eq!(
        m.redis,
        vec![RedisServer {
            name: "redis".into(),
            replicas: 0
        }]
    );
}

#[test]
fn for_update_and_star() {
    let m = with(
        "db postgres\ntable t (k text primary key, n int)\nrow t ('b', 2)\nrow t ('a', 1)",
        "BEGIN; SELECT * FROM t WHERE k = 'a' FOR UPDATE into $k, $n; COMMIT",
        "",
    );
    let ops = ops(&m);
    let OpKind::Sql {
        stmt: SqlStmt::Select { columns, lock, .. },
        ..
    } = &ops[1]
    else {
        panic!()
    };
    let update = LockClause {
        mode: LockMode::Update,
        wait: WaitPolicy::Wait,
    };
    assert_eq!((columns.as_slice(), *lock), (&[0u16, 1][..], Some(update)));
    let rows = &m.db.as_ref().unwrap().tables[0].rows;
    assert_eq!(rows.len(), 2);
    assert!(rows[0][0] < rows[1][0]);
}

#[test]
fn properties_read_the_world() {
    let src = "model \"t\"\nabout \"t\"\ndb postgres\ntable sku (id int primary key, stock int)\n\
               process w[2] { work 1ms }\n\
               invariant a: sku[1].stock >= 0 and redis(lock) = nil\n\
               final b: count(w, done) = 2 or status(w[1], crashed)\nexpect holds\n";
    let m = model(src);
    let Expr::Binary(BinOp::And, l, _) = &m.properties[0].expr else {
        panic!()
    };
    let cell = Expr::Cell {
        table: 0,
        pk: Value::Int(1),
        column: 1,
    };
    assert_eq!(
        **l,
        Expr::Binary(
            BinOp::Ge,
            Box::new(cell),
            Box::new(Expr::Lit(Value::Int(0)))
        )
    );
    let Expr::Binary(BinOp::Or, _, r) = &m.properties[1].expr else {
        panic!()
    };
    assert_eq!(
        **r,
        Expr::Status {
            pid: Pid(1),
            status: StatusKind::Crashed
        }
    );
    let mut symbols = crate::ir::initial_symbols();
    symbols.push("lock".into());
    assert_eq!(m.symbols, symbols);
    assert_eq!(
        m.symbol(Sym(crate::ir::ERROR_CODES.len() as u32 + 1)),
        "lock"
    );
    assert_eq!(m.symbol(crate::ir::error_code("40001")), "40001");
}

#[test]
fn about_strings_are_joined() {
    let m = model("model \"t\"\nabout \"one\"\n  \"two\"\nexpect holds\n");
    assert_eq!(m.about, "one two");
}

#[test]
fn errors_are_all_collected() {
    let src = "model \"t\"\nabout \"t\"\ninvarient x: 1\nghost g = 0\nghost g = 1\n\
               process p { lock m; work 5sec; $a = $b }\nexpect violated y\n";
    let got = messages(src);
    assert_eq!(got.len(), 6, "{got:?}");
    assert!(got[0].contains("invarient"));
    assert!(got.iter().any(|m| m.contains("duplicate ghost")));
    assert!(got.iter().any(|m| m.contains("unknown mutex")));
    assert!(got.iter().any(|m| m.contains("bad duration unit")));
    assert!(got.iter().any(|m| m.contains("unknown variable \"$b\"")));
    assert!(got.iter().any(|m| m.contains("unknown property")));
}

#[test]
fn atomic_refuses_visible_and_delays() {
    let got = messages("model \"t\"\nabout \"t\"\nmutex m\nprocess p { atomic { lock m; work 1ms; GET k } }\nexpect holds\n");
    assert_eq!(got.len(), 2, "{got:?}");
    assert!(got[0].contains("not allowed inside `atomic`"));
}

#[test]
fn sql_errors_point_into_the_file() {
    let src = "model \"t\"\nabout \"t\"\ndb postgres\ntable t (id int primary key)\n\
               process p { select id from t where }\nexpect holds\n";
    let Err(d) = parse("x.model", src) else {
        panic!()
    };
    assert_eq!(d.items.len(), 1);
    assert!(
        d.items[0].message.starts_with("SQL syntax error"),
        "{}",
        d.render()
    );
    assert!(d.render().contains("x.model:5:"), "{}", d.render());
}

#[test]
fn deep_nesting_is_refused_not_overflowed() {
    let deep = |open: &str, close: &str| format!("{}1{}", open.repeat(5000), close.repeat(5000));
    for expr in [
        deep("(", ")"),
        deep("not ", ""),
        deep("- ", ""),
        deep("-(", ")"),
    ] {
        let src = format!("model \"t\"\nabout \"t\"\ninvariant x: {expr}\nexpect holds\n");
        assert!(parse("deep.model", &src).is_err());
    }
    let blocks = format!("{}{}", "if 1 {".repeat(3000), "}".repeat(3000));
    let sql = format!("select {}1{} from t", "(".repeat(3000), ")".repeat(3000));
    for body in [blocks, sql] {
        let src = format!("model \"t\"\nabout \"t\"\nprocess p {{ {body} }}\nexpect holds\n");
        assert!(parse("deep.model", &src).is_err());
    }
}

#[test]
fn tags_are_kept_in_order() {
    let m = model(
        "model \"t\"\ntags strategy=no-lock\ntags fault=lost-reply lesson=a-b-2\nabout \"t\"\nexpect holds\n",
    );
    let want = [("strategy", "no-lock"), ("fault", "lost-reply"), ("lesson", "a-b-2")];
    let got: Vec<(&str, &str)> = m.tags.iter().map(|(n, v)| (n.as_str(), v.as_str())).collect();
    assert_eq!(got, want);
}

#[test]
fn bad_tags_are_explained() {
    let bad = |line: &str| errors(&format!("model \"t\"\nabout \"t\"\n{line}\nexpect holds\n"));
    assert_eq!(
        bad("tags strategy"),
        ["expected `=` after the tag `strategy`, found the end of the line / a tag is `NAME=value`, e.g. `strategy=no-lock`"]
    );
    assert_eq!(
        bad("tags fault= none"),
        ["the tag `fault` has no value, found `none` / write the value right after `=`, with no space: words joined by `-`, e.g. `fault=lost-reply`"]
    );
    assert_eq!(
        bad("tags stratgy=mutex"),
        ["unknown tag \"stratgy\" / did you mean `strategy`?"]
    );
    assert_eq!(
        bad("tags fault=pase"),
        ["unknown fault \"pase\" / did you mean `pause`?"]
    );
    assert_eq!(
        bad("tags fault=none\ntags fault=pause"),
        ["the tag `fault` is given twice / a model has one `fault`; the first is on line 3"]
    );
    assert_eq!(bad("tags"), ["expected a tag, `NAME=value` (e.g. `strategy=optimistic`), found the end of the line / "]);
}

#[test]
fn a_bad_tag_points_at_its_line_and_column() {
    let src = "model \"t\"\nabout \"t\"\ntags strategy=mutex fault=pase\nexpect holds\n";
    let Err(d) = parse("test.model", src) else {
        panic!("expected errors");
    };
    let text = d.render();
    assert!(text.contains("test.model:3:27"), "{text}");
    assert!(text.contains("did you mean `pause`?"), "{text}");
}

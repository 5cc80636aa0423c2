//! Unit tests of the database-fidelity forms: flavours, settings, types and indexes, the wider
//! SQL subset, `catch` and `retry`.

use super::*;
use crate::ir::{
    error_code, BinOp, ColumnType, Db, Expect, Expr, Flavour, Index, Isolation, LockClause,
    LockMode, Model, OnError, OpKind, SqlStmt, StatusKind, Value, WaitPolicy,
};

fn db(m: &Model) -> &Db {
    m.db.as_ref().expect("a db")
}

/// The statements of the process's SQL ops, in order.
fn stmts(m: &Model) -> Vec<SqlStmt> {
    ops(m)
        .into_iter()
        .filter_map(|k| match k {
            OpKind::Sql { stmt, .. } => Some(stmt),
            _ => None,
        })
        .collect()
}

fn bin(op: BinOp, l: Expr, r: Expr) -> Expr {
    Expr::Binary(op, Box::new(l), Box::new(r))
}

fn int(v: i64) -> Expr {
    Expr::Lit(Value::Int(v))
}

const T: &str = "table t (id int primary key, n int, s text)";

#[test]
fn db_line_names_the_flavour_and_level() {
    let cases = [
        ("db postgres", Flavour::Postgres, Isolation::ReadCommitted),
        ("db mysql", Flavour::Mysql, Isolation::RepeatableRead),
        ("db mariadb", Flavour::Mariadb, Isolation::RepeatableRead),
        (
            "db postgres isolation serializable",
            Flavour::Postgres,
            Isolation::Serializable,
        ),
        (
            "db mysql isolation read_committed",
            Flavour::Mysql,
            Isolation::ReadCommitted,
        ),
        (
            "db mariadb isolation read committed",
            Flavour::Mariadb,
            Isolation::ReadCommitted,
        ),
        (
            "db postgres isolation Repeatable Read",
            Flavour::Postgres,
            Isolation::RepeatableRead,
        ),
        (
            "db postgres isolation read uncommitted",
            Flavour::Postgres,
            Isolation::ReadUncommitted,
        ),
        (
            "db mysql isolation read_uncommitted",
            Flavour::Mysql,
            Isolation::ReadUncommitted,
        ),
    ];
    for (line, flavour, isolation) in cases {
        let m = with(line, "work 1ms", "");
        assert_eq!(
            (db(&m).flavour, db(&m).isolation),
            (flavour, isolation),
            "{line}"
        );
        assert_eq!(db(&m).settings, crate::ir::Settings::default());
    }
    let got = errors(&source("db postgres isolation read uncomitted", "work 1ms", ""));
    assert!(got[0].contains("did you mean `read_uncommitted`?"), "{got:?}");
    let got = errors(&source("db mysqll isolation seralizable", "work 1ms", ""));
    assert!(got[0].contains("did you mean `mysql`?"), "{got:?}");
    assert!(got[1].contains("did you mean `serializable`?"), "{got:?}");
}

#[test]
fn the_flavour_can_be_overridden() {
    let opts = |f| ParseOptions { db: Some(f), set: Vec::new() };
    let src = source("db postgres\nset lock_timeout = 1s", "work 1ms", "");
    let m = parse_with("t.model", &src, &opts(Flavour::Postgres)).unwrap();
    assert_eq!(db(&m).settings.lock_timeout, Some(1000));
    // No level named: the new flavour's default.
    let src = source("db postgres", "work 1ms", "");
    let m = parse_with("t.model", &src, &opts(Flavour::Mysql)).unwrap();
    assert_eq!(
        (db(&m).flavour, db(&m).isolation),
        (Flavour::Mysql, Isolation::RepeatableRead)
    );
    // A level named in the file stays.
    let src = source("db postgres isolation read_committed", "work 1ms", "");
    let m = parse_with("t.model", &src, &opts(Flavour::Mariadb)).unwrap();
    assert_eq!(
        (db(&m).flavour, db(&m).isolation),
        (Flavour::Mariadb, Isolation::ReadCommitted)
    );
    // Flavour rules follow the effective flavour.
    let decls = format!("db mysql\n{T}");
    let body = "select n from t where id = 1 for share into $n";
    assert!(parse("t.model", &source(&decls, body, "")).is_ok());
    let got = errors_with(&source(&decls, body, ""), &opts(Flavour::Mariadb));
    assert!(got[0].contains("`FOR SHARE` on mariadb"), "{got:?}");
    let got = errors_with(
        &source("db postgres\nset lock_timeout = 1s", "work 1ms", ""),
        &opts(Flavour::Mysql),
    );
    assert!(
        got[0].contains("does not apply to mysql (chosen with --db)"),
        "{got:?}"
    );
    // Without a db line there is nothing to override.
    let m = parse_with(
        "t.model",
        &source("", "work 1ms", ""),
        &opts(Flavour::Mysql),
    )
    .unwrap();
    assert!(m.db.is_none());
}

#[test]
fn settings_are_read_in_ticks() {
    let decls = "db postgres\nset lock_timeout = 100ms\nset deadlock_timeout = 1s";
    let m = with(decls, "work 50ms", "");
    assert_eq!(m.tick_ms, 50);
    let s = &db(&m).settings;
    assert_eq!((s.lock_timeout, s.deadlock_timeout), (Some(2), Some(20)));
    let m = with("db postgres\nset lock_timeout = 0", "work 30ms", "");
    assert_eq!((db(&m).settings.lock_timeout, m.tick_ms), (None, 30));

    let decls = "db mysql\nset innodb_lock_wait_timeout = 2s\nset sql_mode = ''";
    let m = with(decls, "work 500ms", "");
    let s = &db(&m).settings;
    assert_eq!((s.innodb_lock_wait_timeout, s.non_strict), (Some(4), true));
    let decls = "db mysql\nset sql_mode = 'NO_ZERO_DATE,STRICT_TRANS_TABLES'";
    assert!(!db(&with(decls, "work 1ms", "")).settings.non_strict);
    let decls = "db mysql\nset sql_mode = 'NO_ZERO_DATE'";
    assert!(db(&with(decls, "work 1ms", "")).settings.non_strict);
    let decls = "db mariadb\nset innodb_snapshot_isolation = on";
    assert!(
        db(&with(decls, "work 1ms", ""))
            .settings
            .innodb_snapshot_isolation
    );
    let decls = "db mariadb\nSET innodb_snapshot_isolation = off";
    assert!(
        !db(&with(decls, "work 1ms", ""))
            .settings
            .innodb_snapshot_isolation
    );
}

#[test]
fn settings_are_checked() {
    let got = errors(&source("db postgres\nset lock_timout = 1s", "work 1ms", ""));
    assert_eq!(
        got,
        vec!["unknown setting \"lock_timout\" / did you mean `lock_timeout`?"]
    );
    let got = errors(&source(
        "db mysql\nset lock_timeout = 1s\nset deadlock_timeout = 1s",
        "work 1ms",
        "",
    ));
    assert_eq!(got.len(), 2, "{got:?}");
    assert!(got[0].starts_with("setting `lock_timeout` does not apply to mysql"));
    assert!(got[0].contains("innodb_lock_wait_timeout"), "{got:?}");
    let got = errors(&source(
        "db postgres\nset innodb_snapshot_isolation = on",
        "work 1ms",
        "",
    ));
    assert!(got[0].contains("does not apply to postgres"), "{got:?}");
    // MariaDB's variable and InnoDB's sql_mode are accepted (and ignored) elsewhere, so one
    // file can serve several flavours.
    with(
        "db mysql\nset innodb_snapshot_isolation = on",
        "work 1ms",
        "",
    );
    with("db postgres\nset sql_mode = ''", "work 1ms", "");
    let got = errors(&source("set lock_timeout = 1s", "work 1ms", ""));
    assert!(got[0].starts_with("a setting needs a database"), "{got:?}");
    let got = errors(&source(
        "db postgres\nset lock_timeout = 10",
        "work 1ms",
        "",
    ));
    assert!(got[0].starts_with("duration without a unit"), "{got:?}");
}

#[test]
fn column_types_ranges_and_indexes() {
    let decls = "db postgres\n\
                 table acct (id bigint primary key, n int, name varchar(20) unique, note text)\n\
                 index acct (n, note)\nunique index acct (n)\nindex acct (n, note)\n\
                 row acct (9000000000, -2147483648, 'a', null)";
    let m = with(decls, "work 1ms", "");
    let t = &db(&m).tables[0];
    let types: Vec<ColumnType> = t.columns.iter().map(|c| c.ty).collect();
    assert_eq!(
        types,
        vec![
            ColumnType::BigInt,
            ColumnType::Int,
            ColumnType::Text,
            ColumnType::Text
        ]
    );
    let index = |columns: Vec<usize>, unique| Index { columns, unique };
    assert_eq!(
        t.indexes,
        vec![
            index(vec![2], true),
            index(vec![1, 3], false),
            index(vec![1], true)
        ]
    );
    assert_eq!(t.rows[0][0], Value::Int(9_000_000_000));

    let decls = "db postgres\ntable t (id int primary key, n int)\nrow t (1, 2147483648)\n\
                 index t (m)\nunique index u (n)";
    let got = errors(&source(decls, "work 1ms", ""));
    assert_eq!(got.len(), 3, "{got:?}");
    assert!(
        got[0].starts_with("value out of range for column \"n\""),
        "{got:?}"
    );
    assert!(got[0].contains("bigint"), "{got:?}");
    assert!(got[1].starts_with("unknown column \"m\""), "{got:?}");
    assert!(got[2].starts_with("unknown table \"u\""), "{got:?}");
}

#[test]
fn begin_names_an_isolation_level() {
    let body = "BEGIN\nBEGIN ISOLATION LEVEL SERIALIZABLE\n\
                start transaction isolation level repeatable read\n\
                begin transaction isolation level read committed\nSTART TRANSACTION\n\
                begin isolation level read uncommitted";
    let m = with("db postgres", body, "");
    let levels: Vec<Option<Isolation>> = stmts(&m)
        .into_iter()
        .map(|s| match s {
            SqlStmt::Begin { isolation } => isolation,
            other => panic!("{other:?}"),
        })
        .collect();
    use Isolation::*;
    assert_eq!(
        levels,
        vec![
            None,
            Some(Serializable),
            Some(RepeatableRead),
            Some(ReadCommitted),
            None,
            Some(ReadUncommitted)
        ]
    );
}

/// The order, limit, lock and text of a SELECT.
type SelectParts = (Vec<(u16, bool)>, Option<u32>, Option<LockClause>, String);

/// The parts of the SELECT written in `body`.
fn select(decls: &str, body: &str) -> SelectParts {
    let m = with(&format!("{decls}\n{T}"), body, "");
    match stmts(&m).remove(0) {
        SqlStmt::Select {
            order,
            limit,
            lock,
            text,
            ..
        } => (order, limit, lock, text),
        other => panic!("{other:?}"),
    }
}

fn lock(mode: LockMode, wait: WaitPolicy) -> Option<LockClause> {
    Some(LockClause { mode, wait })
}

#[test]
fn select_order_limit_and_locks() {
    let body = "select * from t where n > 0 order by n desc, id asc, s limit 2 \
                for update skip locked into $a, $b, $c";
    let (order, limit, l, text) = select("db postgres", body);
    assert_eq!(order, vec![(1, true), (0, false), (2, false)]);
    assert_eq!(limit, Some(2));
    assert_eq!(l, lock(LockMode::Update, WaitPolicy::SkipLocked));
    assert_eq!(
        text,
        "select * from t where n > 0 order by n desc, id asc, s limit 2 for update skip locked"
    );
    use LockMode::*;
    use WaitPolicy::*;
    let cases = [
        (
            "db postgres",
            "FOR NO KEY UPDATE NOWAIT",
            lock(NoKeyUpdate, NoWait),
        ),
        ("db postgres", "for share", lock(Share, Wait)),
        (
            "db postgres",
            "for key share skip locked",
            lock(KeyShare, SkipLocked),
        ),
        ("db postgres", "limit 0", None),
        ("db mysql", "for share nowait", lock(Share, NoWait)),
        ("db mysql", "lock in share mode", lock(Share, Wait)),
        ("db mysql", "for update", lock(Update, Wait)),
        (
            "db mariadb",
            "LOCK IN SHARE MODE SKIP LOCKED",
            lock(Share, SkipLocked),
        ),
        ("db mariadb", "for update nowait", lock(Update, NoWait)),
    ];
    for (decls, tail, want) in cases {
        let (_, _, got, _) = select(decls, &format!("select n from t where id = 1 {tail}"));
        assert_eq!(got, want, "{decls}: {tail}");
    }
}

#[test]
fn lock_clauses_follow_the_flavour() {
    let cases = [
        (
            "db postgres",
            "lock in share mode",
            "PostgreSQL spells it `FOR SHARE`",
        ),
        (
            "db mariadb",
            "for share",
            "MariaDB spells it `LOCK IN SHARE MODE`",
        ),
        ("db mysql", "for no key update", "InnoDB locks a row"),
        (
            "db mariadb",
            "for key share",
            "shared with `LOCK IN SHARE MODE`",
        ),
        (
            "db mysql",
            "lock in share mode skip locked",
            "after `FOR UPDATE` or `FOR SHARE`",
        ),
        (
            "db postgres",
            "for update of t",
            "the clause locks the rows it reads",
        ),
        (
            "db postgres",
            "for update limit 1",
            "the locking clause comes last",
        ),
        ("db postgres", "for key update", "expected SHARE"),
    ];
    for (decls, tail, hint) in cases {
        let body = format!("select n from t where id = 1 {tail}");
        let got = errors(&source(&format!("{decls}\n{T}"), &body, ""));
        assert_eq!(got.len(), 1, "{tail}: {got:?}");
        assert!(got[0].contains(hint), "{tail}: {got:?}");
    }
    let got = errors(&source(
        &format!("db postgres\n{T}"),
        "select n from t order by n + 1 limit 'x'",
        "",
    ));
    assert_eq!(got.len(), 2, "{got:?}");
    assert!(got[0].starts_with("ORDER BY takes a column"));
    assert!(got[1].starts_with("LIMIT takes a non-negative integer"));
}

#[test]
fn insert_and_delete_are_resolved() {
    let body = "$x = 5\ninsert into t (n, id, s) values ($x + 1, 7, 'new') into $rows\n\
                INSERT INTO t (id) VALUES ($me)\ndelete from t where id = $x\ndelete from t";
    let m = with(&format!("db mysql\n{T}"), body, "");
    let stmts = stmts(&m);
    let SqlStmt::Insert {
        table,
        columns,
        values,
        text,
    } = &stmts[0]
    else {
        panic!("{:?}", stmts[0])
    };
    assert_eq!((*table, columns.as_slice()), (0, &[1u16, 0, 2][..]));
    let new = Expr::Lit(Value::Str(
        m.symbols
            .iter()
            .position(|s| s == "new")
            .map(|i| crate::ir::Sym(i as u32))
            .unwrap(),
    ));
    assert_eq!(
        values,
        &vec![bin(BinOp::Add, Expr::Local(0), int(1)), int(7), new]
    );
    assert_eq!(text, "insert into t (n, id, s) values ($x + 1, 7, 'new')");
    assert!(matches!(&stmts[1], SqlStmt::Insert { values, .. } if values == &vec![Expr::Me]));
    let filter = bin(BinOp::Eq, Expr::Column(0), Expr::Local(0));
    assert_eq!(
        stmts[2],
        SqlStmt::Delete {
            table: 0,
            filter: Some(filter),
            text: "delete from t where id = $x".into()
        }
    );
    assert!(matches!(&stmts[3], SqlStmt::Delete { filter: None, .. }));
    let OpKind::Sql { into, .. } = &ops(&m)[1] else {
        panic!()
    };
    assert_eq!(into, &vec![1]);

    let got = errors(&source(
        &format!("db postgres\n{T}"),
        "insert into t (n) values (1)",
        "",
    ));
    assert_eq!(got.len(), 1, "{got:?}");
    assert!(
        got[0].starts_with("INSERT must give the primary key \"id\""),
        "{got:?}"
    );
    let got = errors(&source(
        &format!("db postgres\n{T}"),
        "insert into t values (1, 2, 'x')",
        "",
    ));
    assert!(got[0].starts_with("INSERT needs a column list"), "{got:?}");
}

#[test]
fn in_between_and_null_tests_unfold() {
    let body = "select id from t where n in (1, 2, $v) into $a\n\
                select id from t where n not in (1, 2) into $a\n\
                select id from t where n between 1 and 3 into $a\n\
                select id from t where n not between 1 and 3 into $a\n\
                select id from t where s is null into $a\n\
                update t set n = 0 where s is not null";
    let m = with(&format!("db postgres\n{T}"), &format!("$v = 9\n{body}"), "");
    let filters: Vec<Expr> = stmts(&m)
        .into_iter()
        .map(|s| match s {
            SqlStmt::Select { filter, .. } | SqlStmt::Update { filter, .. } => filter.unwrap(),
            other => panic!("{other:?}"),
        })
        .collect();
    let n = || Expr::Column(1);
    let s = || Expr::Column(2);
    let nil = || Expr::Lit(Value::Nil);
    let eq = |v| bin(BinOp::Eq, n(), v);
    let ne = |v| bin(BinOp::Ne, n(), v);
    assert_eq!(
        filters[0],
        bin(
            BinOp::Or,
            bin(BinOp::Or, eq(int(1)), eq(int(2))),
            eq(Expr::Local(0))
        )
    );
    assert_eq!(filters[1], bin(BinOp::And, ne(int(1)), ne(int(2))));
    assert_eq!(
        filters[2],
        bin(
            BinOp::And,
            bin(BinOp::Ge, n(), int(1)),
            bin(BinOp::Le, n(), int(3))
        )
    );
    assert_eq!(
        filters[3],
        bin(
            BinOp::Or,
            bin(BinOp::Lt, n(), int(1)),
            bin(BinOp::Gt, n(), int(3))
        )
    );
    assert_eq!(filters[4], bin(BinOp::Eq, s(), nil()));
    assert_eq!(filters[5], bin(BinOp::Ne, s(), nil()));
}

#[test]
fn catch_binds_the_error_and_goes_on() {
    let body =
        "select n from t where id = 1 into $n catch $e\nupdate t set n = 1 catch $e2\ncommit";
    let m = with(&format!("db postgres\n{T}"), body, "");
    let locals = &m.groups[0].program.locals;
    let ops = ops(&m);
    let OpKind::Sql { into, on_error, .. } = &ops[0] else {
        panic!()
    };
    let e = locals.iter().position(|l| l == "e").unwrap() as u16;
    assert_eq!(locals[into[0] as usize], "n");
    let catch = |local| {
        Some(OnError {
            local,
            codes: vec![],
            target: None,
        })
    };
    assert_eq!(on_error, &catch(e));
    let OpKind::Sql { on_error, .. } = &ops[1] else {
        panic!()
    };
    let e2 = locals.iter().position(|l| l == "e2").unwrap() as u16;
    assert_eq!(on_error, &catch(e2));
    assert!(matches!(&ops[2], OpKind::Sql { on_error: None, .. }));
    // `$e` counts as set, so reading it is fine.
    with(
        &format!("db postgres\n{T}"),
        "commit catch $e\nif $e = '40001' { return }",
        "",
    );
}

#[test]
fn retry_lowers_to_a_loop_with_a_handler() {
    let body = "retry 3 on '40001', '40P01' backoff 20ms {\n\
                  begin\n\
                  update t set n = n - 1 where id = 1\n\
                  commit catch $e\n\
                }\nwork 10ms";
    let m = with(&format!("db postgres\n{T}"), body, "");
    let locals = &m.groups[0].program.locals;
    assert_eq!(locals, &vec!["#retry1", "#err1", "e"]);
    let codes = vec![error_code("40001"), error_code("40P01")];
    let handler = Some(OnError {
        local: 1,
        codes: codes.clone(),
        target: Some(7),
    });
    let ops = ops(&m);
    let want_head = OpKind::JumpUnless {
        cond: bin(BinOp::Lt, Expr::Local(0), int(3)),
        target: 11,
    };
    assert_eq!(
        ops[0],
        OpKind::Assign {
            local: 0,
            expr: int(0)
        }
    );
    assert_eq!(ops[1], want_head);
    assert_eq!(
        ops[2],
        OpKind::Assign {
            local: 0,
            expr: bin(BinOp::Add, Expr::Local(0), int(1))
        }
    );
    assert!(
        matches!(&ops[3], OpKind::Sql { stmt: SqlStmt::Begin { .. }, on_error, .. } if *on_error == handler)
    );
    assert!(
        matches!(&ops[4], OpKind::Sql { stmt: SqlStmt::Update { .. }, on_error, .. } if *on_error == handler)
    );
    let own = Some(OnError {
        local: 2,
        codes: vec![],
        target: None,
    });
    assert!(
        matches!(&ops[5], OpKind::Sql { stmt: SqlStmt::Commit, on_error, .. } if *on_error == own)
    );
    assert_eq!(ops[6], OpKind::Jump(12));
    assert_eq!(
        ops[7],
        OpKind::Sql {
            stmt: SqlStmt::Rollback,
            into: vec![],
            on_error: None
        }
    );
    assert_eq!(m.tick_ms, 10);
    // No wait after the last attempt: the handler re-tests the counter before it sleeps.
    assert_eq!(ops[8], OpKind::JumpUnless { cond: bin(BinOp::Lt, Expr::Local(0), int(3)), target: 11 });
    assert_eq!(ops[9], OpKind::Sleep { ticks: 2, upto: 2, draw: None });
    assert_eq!(ops[10], OpKind::Jump(1));
    assert_eq!(ops[11], OpKind::Raise { local: 1 });
    assert_eq!(ops[12], OpKind::Work { ticks: 1, upto: 1, draw: None });
    assert_eq!(m.symbol(codes[1]), "40P01");
}

#[test]
fn nested_retry_and_break() {
    let body = "retry 2 on '40001' {\n\
                  commit\n\
                  retry 5 on '40P01' { commit; break }\n\
                  break\n\
                }";
    let m = with(&format!("db postgres\n{T}"), body, "");
    let ops = ops(&m);
    // 0 #retry1=0, 1 head, 2 bump, 3 commit (outer),
    // 4 #retry2=0, 5 head, 6 bump, 7 commit (inner), 8 break→14, 9 jump 14, 10 rollback,
    // 11 unless more→13, 12 jump 5, 13 raise #err2, 14 break→outer end, 15 jump E,
    // 16 rollback, 17 unless more→19, 18 jump 1, 19 raise #err1, 20 return
    let target = |k: &OpKind| match k {
        OpKind::Sql {
            on_error: Some(h), ..
        } => (h.local, h.codes.clone(), h.target),
        other => panic!("{other:?}"),
    };
    assert_eq!(target(&ops[3]), (1, vec![error_code("40001")], Some(16)));
    assert_eq!(target(&ops[7]), (3, vec![error_code("40P01")], Some(10)));
    assert_eq!(ops[8], OpKind::Jump(14));
    assert_eq!(ops[9], OpKind::Jump(14));
    assert!(matches!(
        &ops[10],
        OpKind::Sql {
            stmt: SqlStmt::Rollback,
            on_error: None,
            ..
        }
    ));
    assert!(matches!(ops[11], OpKind::JumpUnless { target: 13, .. }));
    assert_eq!(ops[12], OpKind::Jump(5));
    assert_eq!(ops[13], OpKind::Raise { local: 3 });
    assert_eq!(ops[14], OpKind::Jump(20));
    assert_eq!(ops[15], OpKind::Jump(20));
    assert!(matches!(ops[17], OpKind::JumpUnless { target: 19, .. }));
    assert_eq!(ops[18], OpKind::Jump(1));
    assert_eq!(ops[19], OpKind::Raise { local: 1 });
    assert!(matches!(ops[20], OpKind::Return { outcome: None }));
    assert!(matches!(ops[1], OpKind::JumpUnless { target: 19, .. }));
    assert!(matches!(ops[5], OpKind::JumpUnless { target: 13, .. }));
}

/// The waits a program sleeps, in ticks, in op order.
fn sleeps(m: &Model) -> Vec<(u32, u32)> {
    ops(m)
        .iter()
        .filter_map(|o| match o {
            OpKind::Sleep { ticks, upto, .. } => Some((*ticks, *upto)),
            _ => None,
        })
        .collect()
}

#[test]
fn backoffs_wait_as_tenacity_does() {
    let decls = format!("db postgres\n{T}");
    let body = |n: u32, b: &str| {
        format!("retry {n} on '40001' backoff {b} {{\n update t set n = 1 where id = 1\n}}")
    };
    let m = with(&decls, &body(5, "exponential multiplier 1s min 1s max 5s"), "");
    assert_eq!(m.tick_ms, 1000);
    assert_eq!(sleeps(&m), vec![(1, 1), (2, 2), (4, 4), (5, 5)]);
    let m = with(&decls, &body(3, "random_exponential multiplier 1s max 5s"), "");
    assert_eq!(sleeps(&m), vec![(0, 1), (0, 2)]);
    let m = with(&decls, &body(4, "fixed 10ms"), "");
    assert_eq!(sleeps(&m), vec![(1, 1)], "alike waits are one sleep");
    let m = with(&decls, &body(1, "exponential multiplier 1s"), "");
    assert!(sleeps(&m).is_empty(), "one attempt never waits");
    for (b, want) in [
        ("exponential multiplier 1s", "longer than an hour"),
        ("exponential multiplier 1s min 5s max 1s", "max lies below its min"),
        ("linear 1s", "unknown backoff \"linear\""),
    ] {
        let got = errors(&source(&decls, &body(30, b), ""));
        assert!(got.iter().any(|e| e.contains(want)), "{b}: {got:?}");
    }
}

#[test]
fn raise_is_caught_by_the_retry_that_lists_it() {
    let decls = format!("db postgres\n{T}");
    let body = "retry 3 on 'VersionConflict' {\n\
                  update t set n = 1 where id = 1 into $n\n\
                  if $n = 0 { raise 'VersionConflict' }\n\
                  if $n = 2 { raise 'OutOfStock' }\n\
                }";
    let m = with(&decls, body, "");
    let ops = ops(&m);
    let conflict = m.symbols.iter().position(|s| s == "VersionConflict").unwrap();
    let rollback = ops
        .iter()
        .position(|o| matches!(o, OpKind::Sql { stmt: SqlStmt::Rollback, .. }))
        .unwrap();
    let caught = ops.iter().position(|o| {
        matches!(o, OpKind::Assign { expr: Expr::Lit(Value::Str(s)), .. } if s.0 as usize == conflict)
    });
    let at = caught.expect("the code is assigned to the handler's local");
    assert_eq!(ops[at + 1], OpKind::Jump(rollback as u32));
    let raises = ops.iter().filter(|o| matches!(o, OpKind::Raise { .. })).count();
    assert_eq!(raises, 2, "the retry's re-raise and the uncaught OutOfStock");
    let got = errors(&source(&decls, "raise '9999'", ""));
    assert!(got[0].starts_with("unknown error code '9999'"), "{got:?}");
    // A code nothing raises is a typo, not an application's error.
    let got = errors(&source(&decls, "retry 2 on 'deadlock' { commit }", ""));
    assert!(got[0].starts_with("no `raise` raises 'deadlock'"), "{got:?}");
}

#[test]
fn raise_rises_to_the_nearest_retry_that_lists_it() {
    let decls = format!("db postgres\n{T}");
    let body = "retry 3 on 'A' {\n\
                  retry 2 on '40001' {\n\
                    update t set n = 1 where id = 1\n\
                    raise 'A'\n\
                  }\n\
                }";
    let m = with(&decls, body, "");
    let ops = ops(&m);
    let rollbacks: Vec<usize> = ops
        .iter()
        .enumerate()
        .filter(|(_, o)| matches!(o, OpKind::Sql { stmt: SqlStmt::Rollback, .. }))
        .map(|(i, _)| i)
        .collect();
    let outer = *rollbacks.last().expect("the outer handler");
    let a = m.symbols.iter().position(|s| s == "A").unwrap();
    let at = ops
        .iter()
        .position(|o| matches!(o, OpKind::Assign { expr: Expr::Lit(Value::Str(s)), .. } if s.0 as usize == a))
        .expect("the raise assigns its code");
    assert_eq!(ops[at + 1], OpKind::Jump(outer as u32), "the outer retry catches it");
}

#[test]
fn retry_is_checked() {
    let decls = format!("db postgres\n{T}");
    let got = errors(&source(&decls, "retry 3 on '40001', '9999' { commit }", ""));
    assert_eq!(got.len(), 1, "{got:?}");
    assert!(got[0].starts_with("unknown error code '9999'"), "{got:?}");
    assert!(got[0].contains("'40001', '40P01'"), "{got:?}");
    let got = errors(&source(&decls, "retry 3 on 1213 { commit }", ""));
    assert!(got[0].contains("write it `'1213'`"), "{got:?}");
    let got = errors(&source(
        &decls,
        "atomic { retry 2 on '40001' { GET k } }",
        "",
    ));
    assert!(
        got[0].starts_with("`retry` is not allowed inside `atomic`"),
        "{got:?}"
    );
}

#[test]
fn error_codes_are_the_seeded_symbols() {
    let m = with("ghost g = 0", "$x = '40001'\nreturn '1213'", "");
    assert_eq!(
        m.symbols[..crate::ir::ERROR_CODES.len() + 1],
        crate::ir::initial_symbols()[..]
    );
    let OpKind::Assign { expr, .. } = &ops(&m)[0] else {
        panic!()
    };
    assert_eq!(expr, &Expr::Lit(Value::Str(error_code("40001"))));
    assert_eq!(
        ops(&m)[1],
        OpKind::Return {
            outcome: Some(error_code("1213"))
        }
    );
}

#[test]
fn count_failed_is_a_status() {
    let src = "model \"t\"\nabout \"t\"\nprocess w[2] { work 1ms }\n\
               final f: count(w, failed) = 0 and not status(w[1], failed)\nexpect holds\n";
    let m = model(src);
    let Expr::Binary(BinOp::And, l, r) = &m.properties[0].expr else {
        panic!()
    };
    assert_eq!(
        **l,
        bin(
            BinOp::Eq,
            Expr::Count {
                group: 0,
                status: StatusKind::Failed
            },
            int(0)
        )
    );
    assert!(matches!(
        &**r,
        Expr::Unary(_, inner) if matches!(**inner, Expr::Status { status: StatusKind::Failed, .. })
    ));
}

#[test]
fn expectations_per_flavour() {
    let src = "model \"t\"\nabout \"t\"\ndb postgres\nghost g = 0\nprocess p { work 1ms }\n\
               invariant a: g = 0\nexpect postgres: holds\nexpect mysql, mariadb: violated a\n";
    let m = model(src);
    assert_eq!(m.expect, Expect::Holds);
    assert_eq!(
        m.expect_flavours,
        vec![Flavour::Postgres, Flavour::Mysql, Flavour::Mariadb]
    );
    assert_eq!(m.line_of(m.expect_span), 7);
    let m = parse_with(
        "t.model",
        src,
        &ParseOptions {
            db: Some(Flavour::Mariadb),
            set: Vec::new(),
        },
    )
    .unwrap();
    assert_eq!(m.expect, Expect::Violated("a".into()));
    assert_eq!(m.line_of(m.expect_span), 8);
    // A flavour the file states nothing for.
    let only = src.replace("expect postgres: holds\n", "");
    let m = model(&only);
    assert_eq!((m.expect, m.expect_flavours.len()), (Expect::Unstated, 2));
    // Without flavours: one expectation for every flavour.
    let m = model(&source("db postgres", "work 1ms", ""));
    assert_eq!((m.expect, m.expect_flavours.len()), (Expect::Holds, 0));

    let bad = src.replace("expect mysql, mariadb", "expect mysql, postgres, oracle");
    let got = messages(&bad);
    assert_eq!(
        got,
        vec![
            "a second expectation for postgres",
            "unknown database \"oracle\"",
        ]
    );
    let mixed = src.replace("expect postgres: holds", "expect holds");
    let got = parse("t.model", &mixed).unwrap_err();
    assert_eq!(got.items[0].message, "an `expect` without a flavour");
    let twice = "model \"t\"\nabout \"t\"\nexpect holds\nexpect deadlock\n";
    let got = parse("t.model", twice).unwrap_err();
    assert_eq!(got.items[0].message, "a second `expect` line");
    let no_db = "model \"t\"\nabout \"t\"\nexpect mysql: holds\n";
    let got = parse("t.model", no_db).unwrap_err();
    assert!(got.items[0].message.contains("needs a database"));
}

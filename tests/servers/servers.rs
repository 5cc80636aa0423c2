//! Tests against real servers (feature `servers`).
//!
//! Each test reads its server's URL from `INTERLOCK_POSTGRES_URL`, `INTERLOCK_MYSQL_URL`,
//! `INTERLOCK_REDIS_URL` (and `INTERLOCK_REDIS_REPLICA_URL`), which `.ci/servers start DIR`
//! writes to `DIR/env`. With a URL unset a test prints one line and passes, unless `CI=true`,
//! where it fails.

pub(crate) mod with_servers {
    use std::time::{Duration, Instant};

    use interlock::servers::{Cell, Kind, Outcome, RedisConn, RedisReply, Scratch, Session, Step};

    /// Long enough for any answer that is coming.
    const LONG: Duration = Duration::from_secs(20);

    /// The URL in `var`, or `None` after one line saying the test is skipped; with `CI=true` a
    /// missing URL fails the test.
    pub(crate) fn url(var: &str) -> Option<String> {
        match std::env::var(var) {
            Ok(url) if !url.is_empty() => Some(url),
            _ => {
                assert!(
                    std::env::var("CI").as_deref() != Ok("true"),
                    "{var} is not set, and CI needs every server (start servers with .ci/servers)"
                );
                println!("skipped: {var} is not set (start servers with .ci/servers)");
                None
            }
        }
    }

    fn sql_url(kind: Kind) -> Option<String> {
        url(match kind {
            Kind::Postgres => "INTERLOCK_POSTGRES_URL",
            Kind::Mysql => "INTERLOCK_MYSQL_URL",
        })
    }

    /// A scratch database for test `test` with `test (id, value)` holding (1, 10), (2, 20).
    fn scratch(kind: Kind, test: &str) -> Option<Scratch> {
        let url = sql_url(kind)?;
        let short = match kind {
            Kind::Postgres => "pg",
            Kind::Mysql => "my",
        };
        let name = format!("it_{short}_{test}_{}", std::process::id());
        let mut db = Scratch::create(kind, &url, &name).unwrap();
        assert_eq!(db.kind(), kind);
        assert!(!db.version().is_empty());
        for sql in [
            "CREATE TABLE test (id int PRIMARY KEY, value int)",
            "INSERT INTO test VALUES (1, 10), (2, 20)",
        ] {
            let outcome = db.execute(sql).unwrap();
            assert_eq!(outcome.error, None, "{sql}");
        }
        Some(db)
    }

    fn session(db: &mut Scratch) -> Session {
        db.session(&[]).unwrap()
    }

    /// Runs `sql`, which must answer at once without an error.
    fn ok(s: &mut Session, sql: &str) -> Outcome {
        match s.step(sql, LONG).unwrap() {
            Step::Done(outcome) => {
                assert_eq!(outcome.error, None, "{sql}");
                outcome
            }
            Step::Waiting => panic!("{sql}: waits"),
        }
    }

    /// Issues `sql`, which must wait for a lock, and says so quickly.
    fn waits(s: &mut Session, sql: &str) {
        let start = Instant::now();
        assert_eq!(s.step(sql, LONG).unwrap(), Step::Waiting, "{sql}");
        let took = start.elapsed();
        assert!(
            took < Duration::from_secs(1),
            "{sql}: Waiting after {took:?}"
        );
        assert!(s.pending());
    }

    /// The outcome of a step, resuming it if it waits.
    fn finish(s: &mut Session, step: Step) -> Outcome {
        match step {
            Step::Done(outcome) => outcome,
            Step::Waiting => s.resume(LONG).unwrap().expect("an answer"),
        }
    }

    fn ints(rows: &[&[i64]]) -> Option<Vec<Vec<Cell>>> {
        Some(
            rows.iter()
                .map(|row| row.iter().map(|&n| Cell::Int(n)).collect())
                .collect(),
        )
    }

    fn select(db: &mut Scratch) -> Option<Vec<Vec<Cell>>> {
        let outcome = db
            .execute("SELECT id, value FROM test ORDER BY id")
            .unwrap();
        assert_eq!(outcome.error, None);
        assert_eq!(outcome.affected, None);
        outcome.rows
    }

    fn lock_wait(kind: Kind) {
        let Some(mut db) = scratch(kind, "wait") else {
            return;
        };
        let mut s1 = session(&mut db);
        let mut s2 = session(&mut db);
        assert_ne!(s1.id(), s2.id());
        let begin = ok(&mut s1, "BEGIN");
        assert_eq!((begin.rows, begin.affected), (None, None));
        let update = ok(&mut s1, "UPDATE test SET value = 11 WHERE id = 1");
        assert_eq!((update.rows, update.affected), (None, Some(1)));
        assert!(!s1.waiting_now().unwrap());
        ok(&mut s2, "BEGIN");
        waits(&mut s2, "UPDATE test SET value = 12 WHERE id = 1");
        assert!(s2.waiting_now().unwrap());
        assert_eq!(s2.resume(Duration::from_millis(50)).unwrap(), None);
        assert!(
            s2.step("SELECT 1", LONG).is_err(),
            "a second statement while one is pending"
        );
        let commit = ok(&mut s1, "COMMIT");
        assert_eq!((commit.rows, commit.affected), (None, None));
        let update = s2.resume(LONG).unwrap().expect("the update's answer");
        assert_eq!((update.error, update.affected), (None, Some(1)));
        assert!(!s2.pending());
        ok(&mut s2, "COMMIT");
        assert_eq!(select(&mut db), ints(&[&[1, 12], &[2, 20]]));

        // Values are text, and canonical integers become Int.
        let values = ok(&mut s1, "SELECT 'x', NULL, '007', 5, -3, 1.5");
        let text = |s: &str| Cell::Text(s.to_owned());
        assert_eq!(
            values.rows,
            Some(vec![vec![
                text("x"),
                Cell::Null,
                text("007"),
                Cell::Int(5),
                Cell::Int(-3),
                text("1.5"),
            ]])
        );
        let empty = ok(&mut s1, "SELECT id FROM test WHERE id = 99");
        assert_eq!(empty.rows, Some(vec![]));
        // PostgreSQL counts the rows an UPDATE matched, InnoDB those it changed (PG-32, MY-24).
        let same = ok(&mut s1, "UPDATE test SET value = value WHERE id = 2");
        let counted = if kind == Kind::Postgres { 1 } else { 0 };
        assert_eq!(same.affected, Some(counted));
        let none = ok(&mut s1, "DELETE FROM test WHERE id = 99");
        assert_eq!(none.affected, Some(0));
        let duplicate = match s1.step("INSERT INTO test VALUES (1, 0)", LONG).unwrap() {
            Step::Done(outcome) => outcome,
            Step::Waiting => panic!("a duplicate key waits"),
        };
        let code = match kind {
            Kind::Postgres => "23505",
            Kind::Mysql => "1062",
        };
        assert_eq!(duplicate.error.map(|e| e.code).as_deref(), Some(code));
        assert_eq!(duplicate.affected, None);
        s1.close();
        s2.close();
    }

    #[test]
    fn postgres_sessions_wait_for_row_locks() {
        lock_wait(Kind::Postgres);
    }

    #[test]
    fn mysql_sessions_wait_for_row_locks() {
        lock_wait(Kind::Mysql);
    }

    fn deadlock(kind: Kind) {
        let Some(mut db) = scratch(kind, "deadlock") else {
            return;
        };
        let mut s1 = session(&mut db);
        let mut s2 = session(&mut db);
        ok(&mut s1, "BEGIN");
        ok(&mut s2, "BEGIN");
        ok(&mut s1, "UPDATE test SET value = 11 WHERE id = 1");
        ok(&mut s2, "UPDATE test SET value = 22 WHERE id = 2");
        waits(&mut s1, "UPDATE test SET value = 12 WHERE id = 2");
        let step2 = s2
            .step("UPDATE test SET value = 21 WHERE id = 1", LONG)
            .unwrap();
        let o2 = finish(&mut s2, step2);
        let o1 = s1.resume(LONG).unwrap().expect("an answer");
        let code = match kind {
            Kind::Postgres => "40P01",
            Kind::Mysql => "1213",
        };
        let codes: Vec<_> = [&o1, &o2]
            .iter()
            .map(|o| o.error.as_ref().map(|e| e.code.as_str()))
            .collect();
        assert!(
            codes == [Some(code), None] || codes == [None, Some(code)],
            "one deadlock victim: {o1:?} {o2:?}"
        );
        let winner = if o1.error.is_none() { &o1 } else { &o2 };
        assert_eq!(winner.affected, Some(1));
        ok(&mut s1, "ROLLBACK");
        ok(&mut s2, "ROLLBACK");
        assert_eq!(select(&mut db), ints(&[&[1, 10], &[2, 20]]));
    }

    #[test]
    fn postgres_reports_a_deadlock() {
        deadlock(Kind::Postgres);
    }

    #[test]
    fn mysql_reports_a_deadlock() {
        deadlock(Kind::Mysql);
    }

    fn close(kind: Kind) {
        let Some(mut db) = scratch(kind, "close") else {
            return;
        };
        // Closing a waiting session does not hang, and rolls its transaction back.
        let mut s1 = session(&mut db);
        let mut s2 = session(&mut db);
        ok(&mut s1, "BEGIN");
        ok(&mut s1, "UPDATE test SET value = 11 WHERE id = 1");
        ok(&mut s2, "BEGIN");
        ok(&mut s2, "UPDATE test SET value = 21 WHERE id = 2");
        waits(&mut s2, "UPDATE test SET value = 12 WHERE id = 1");
        let start = Instant::now();
        s2.close();
        let took = start.elapsed();
        assert!(took < Duration::from_secs(5), "close took {took:?}");
        // s2's lock on row 2 is gone with it.
        ok(&mut s1, "UPDATE test SET value = 23 WHERE id = 2");
        ok(&mut s1, "COMMIT");
        assert_eq!(select(&mut db), ints(&[&[1, 11], &[2, 23]]));

        // Closing the lock holder (a crashed client) lets its waiter through.
        let mut s3 = session(&mut db);
        ok(&mut s1, "BEGIN");
        ok(&mut s1, "UPDATE test SET value = 100 WHERE id = 1");
        ok(&mut s3, "BEGIN");
        waits(&mut s3, "UPDATE test SET value = value + 1 WHERE id = 1");
        s1.close();
        let update = s3.resume(LONG).unwrap().expect("the waiter's answer");
        assert_eq!((update.error, update.affected), (None, Some(1)));
        ok(&mut s3, "COMMIT");
        assert_eq!(select(&mut db), ints(&[&[1, 12], &[2, 23]]));
    }

    #[test]
    fn postgres_sessions_close_even_while_waiting() {
        close(Kind::Postgres);
    }

    #[test]
    fn mysql_sessions_close_even_while_waiting() {
        close(Kind::Mysql);
    }

    fn lock_timeout(kind: Kind) {
        let Some(mut db) = scratch(kind, "timeout") else {
            return;
        };
        let (setting, code) = match kind {
            Kind::Postgres => ("SET lock_timeout = '300ms'", "55P03"),
            Kind::Mysql => ("SET SESSION innodb_lock_wait_timeout = 1", "1205"),
        };
        let mut s1 = session(&mut db);
        let mut s2 = db.session(&[setting.to_owned()]).unwrap();
        ok(&mut s1, "BEGIN");
        ok(&mut s1, "UPDATE test SET value = 11 WHERE id = 1");
        ok(&mut s2, "BEGIN");
        waits(&mut s2, "UPDATE test SET value = 12 WHERE id = 1");
        let outcome = s2.resume(LONG).unwrap().expect("the timeout");
        assert_eq!(outcome.error.map(|e| e.code).as_deref(), Some(code));
        ok(&mut s1, "ROLLBACK");
        ok(&mut s2, "ROLLBACK");
        // A refused setting fails the session's opening.
        assert!(db.session(&["SET no_such_setting = 1".to_owned()]).is_err());
    }

    #[test]
    fn postgres_session_settings_apply() {
        lock_timeout(Kind::Postgres);
    }

    #[test]
    fn mysql_session_settings_apply() {
        lock_timeout(Kind::Mysql);
    }

    fn words(command: &str) -> Vec<String> {
        command.split_whitespace().map(str::to_owned).collect()
    }

    fn text(s: &str) -> RedisReply {
        RedisReply::Text(s.to_owned())
    }

    fn code(reply: &RedisReply) -> Option<&str> {
        match reply {
            RedisReply::Error(e) => Some(&e.code),
            _ => None,
        }
    }

    #[test]
    fn redis_commands() {
        let Some(url) = url("INTERLOCK_REDIS_URL") else {
            return;
        };
        let mut r = RedisConn::open(&url).unwrap();
        let p = format!("interlock-test:{}:commands:", std::process::id());
        let mut run = |command: &str| r.command(&words(command)).unwrap();
        assert_eq!(run(&format!("SET {p}lock a NX PX 3000")), text("OK"));
        assert_eq!(run(&format!("SET {p}lock b NX PX 3000")), RedisReply::Nil);
        assert_eq!(run(&format!("GET {p}lock")), text("a"));
        match run(&format!("PTTL {p}lock")) {
            RedisReply::Int(ms) => assert!((1..=3000).contains(&ms), "{ms}"),
            other => panic!("PTTL: {other:?}"),
        }
        assert_eq!(run(&format!("DEL {p}lock")), RedisReply::Int(1));
        assert_eq!(run(&format!("GET {p}lock")), RedisReply::Nil);
        assert_eq!(run(&format!("RPUSH {p}list x y")), RedisReply::Int(2));
        assert_eq!(
            run(&format!("LRANGE {p}list 0 -1")),
            RedisReply::List(vec![text("x"), text("y")])
        );
        assert_eq!(code(&run(&format!("GET {p}list"))), Some("WRONGTYPE"));
        assert_eq!(code(&run("NOSUCHCOMMAND")), Some("ERR"));
        assert!(r.command(&[]).is_err());

        for k in ["a", "b", "*c"] {
            r.command(&words(&format!("SET {p}{k} 1"))).unwrap();
        }
        let other = format!("interlock-test:{}:other", std::process::id());
        r.command(&words(&format!("SET {other} 1"))).unwrap();
        r.flush_prefix(&p).unwrap();
        for k in ["a", "b", "*c", "list"] {
            let key = format!("{p}{k}");
            assert_eq!(
                r.command(&words(&format!("EXISTS {key}"))).unwrap(),
                RedisReply::Int(0)
            );
        }
        assert_eq!(
            r.command(&words(&format!("GET {other}"))).unwrap(),
            text("1")
        );
        r.flush_prefix(&other).unwrap();
        assert!(r.flush_prefix("").is_err());
    }

    /// The host and port of a `redis://host:port/` URL.
    fn host_port(url: &str) -> (String, u16) {
        let rest = url.trim_start_matches("redis://");
        let address = rest.split('/').next().unwrap();
        let (host, port) = address.rsplit_once(':').unwrap();
        (host.to_owned(), port.parse().unwrap())
    }

    fn replica_linked(replica: &mut RedisConn) -> bool {
        match replica.command(&words("INFO replication")).unwrap() {
            RedisReply::Text(info) => info.contains("master_link_status:up"),
            other => panic!("INFO: {other:?}"),
        }
    }

    #[test]
    fn redis_replica_is_promoted() {
        let Some(primary_url) = url("INTERLOCK_REDIS_URL") else {
            return;
        };
        let Some(replica_url) = url("INTERLOCK_REDIS_REPLICA_URL") else {
            return;
        };
        let mut primary = RedisConn::open(&primary_url).unwrap();
        let mut replica = RedisConn::open(&replica_url).unwrap();
        let p = format!("interlock-test:{}:replica:", std::process::id());
        let key = format!("{p}lock");
        assert_eq!(
            primary.command(&words(&format!("SET {key} a"))).unwrap(),
            text("OK")
        );
        // The replica has the write once WAIT counts it.
        match primary.command(&words("WAIT 1 5000")).unwrap() {
            RedisReply::Int(n) => assert!(n >= 1, "WAIT: {n} replicas"),
            other => panic!("WAIT: {other:?}"),
        }
        assert_eq!(
            replica.command(&words(&format!("GET {key}"))).unwrap(),
            text("a")
        );
        let refused = replica.command(&words(&format!("SET {key} b"))).unwrap();
        assert_eq!(code(&refused), Some("READONLY"));

        replica.replicaof_no_one().unwrap();
        assert_eq!(
            replica.command(&words(&format!("SET {key} b"))).unwrap(),
            text("OK")
        );
        assert_eq!(
            primary.command(&words(&format!("GET {key}"))).unwrap(),
            text("a")
        );

        // Back to a replica of the primary, as the servers were started.
        let (host, port) = host_port(&primary_url);
        replica.replicaof(&host, port).unwrap();
        let start = Instant::now();
        while !replica_linked(&mut replica) {
            assert!(
                start.elapsed() < Duration::from_secs(30),
                "the replica did not relink"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        primary.flush_prefix(&p).unwrap();
        primary.command(&words("WAIT 1 5000")).unwrap();
        assert_eq!(
            replica.command(&words(&format!("EXISTS {key}"))).unwrap(),
            RedisReply::Int(0)
        );
    }
}

//! Parser and diagnostics tests: snapshots of invalid models, and no panic on any input.

use std::fs;
use std::path::{Path, PathBuf};

use interlock::ir::{Expect, FaultKind, Flavour, Isolation, Timing};
use interlock::lang::{parse, parse_with, ParseOptions};
use proptest::prelude::*;

const EXAMPLE: &str = include_str!("../../models/optimistic/no-version-condition.model");

const REDIS_LOCK: &str = r#"model "Redis lock with a TTL shorter than the work"
about "The lock expires while the holder still works;"
      "a second worker takes it and both are inside."

mutex local
ghost inside = 0
timing bounded

process worker[2] on api {
  $tries = 0
  repeat 3 {
    SET lock $me NX PX 100 into $ok
    if $ok = 'OK' { break } else { sleep 50ms; $tries = $tries + 1 }
  }
  lock local
  inside += 1
  work 150ms
  inside -= 1
  unlock local
  atomic {
    GET lock into $holder
    if $holder = $me { DEL lock }
  }
}

fault crash worker at most 1
invariant exclusive: inside <= 1
final released: redis(lock) = nil or status(worker[0], crashed) or count(worker, crashed) > 0
expect violated exclusive
"#;

const WATCHDOG: &str = r#"model "A pause outlives the watchdog's lease"
about "The watchdog stops with the paused worker; the lock expires and another takes it."

ghost inside = 0

process worker[2] {
  await SET lock $me NX PX 300 into $ok
  watchdog lock lease 300ms
  region critical {
    inside += 1
    INCR visits into $n
    PTTL lock into $left
    work 500ms
    inside -= 1
  }
  watchdog stop
  atomic { GET lock into $v; if $v = $me { PEXPIRE lock 100 } }
}

fault pause worker up to 1s at most 1 during critical
fault hang worker at most 1
fault crash worker at most 1 during critical
invariant exclusive: inside <= 1
final settled: count(worker, hung) + count(worker, paused) <= 1 or status(worker[0], hung)
expect violated exclusive
"#;

const REPLICATED: &str = r#"model "A failover loses the lock"
about "The lock is written to the primary; it fails over before a replica has it,"
      "and a second worker takes the same lock on the promoted replica."

redis locks with 2 replicas
redis cache
ghost inside = 0
timing async

process worker[2] {
  await SET lock $me NX PX 3000 on locks into $ok
  WAIT 1 100 on locks into $acked
  GET hits on cache into $h
  region critical {
    inside += 1
    work 500ms
    inside -= 1
  }
  atomic on locks { GET lock into $v; if $v = $me { DEL lock } }
}

fault failover locks at most 1
invariant exclusive: inside <= 1
expect violated exclusive
"#;

const RETRY: &str = r#"model "Serializable buyers retry"
about "Two buyers under serializable isolation: one fails with a serialization error and"
      "retries; the shop never oversells."

db postgres isolation serializable
set lock_timeout = 1s
table sku (id int primary key, stock int, name text unique)
index sku (stock)
row sku (1, 1, 'pen')
ghost sold = 0

process buyer[2] {
  retry 3 on '40001', '40P01' backoff 10ms {
    begin
    select stock from sku where id in (1) order by id desc limit 1 for update into $stock
    if $stock < 1 { rollback; return "out of stock" }
    update sku set stock = $stock - 1 where id = 1
    insert into sku (id, stock, name) values (100 + $me, 0, null) catch $dup
    delete from sku where stock between 5 and 9 or name is null
    commit
  }
  sold += 1
}

invariant no_oversell: sold <= 1
final nobody_failed: count(buyer, failed) = 0
expect holds
"#;

#[test]
fn the_same_file_runs_against_every_flavour() {
    let m = parse("retry.model", RETRY).unwrap_or_else(|d| panic!("{d}"));
    let db = m.db.as_ref().unwrap();
    assert_eq!(
        (db.flavour, db.isolation),
        (Flavour::Postgres, Isolation::Serializable)
    );
    // `set lock_timeout` is PostgreSQL's: the InnoDB flavours refuse it, and only it.
    for flavour in [Flavour::Mysql, Flavour::Mariadb] {
        let opts = ParseOptions {
            db: Some(flavour),
            set: Vec::new(),
        };
        let d = parse_with("retry.model", RETRY, &opts).unwrap_err();
        assert_eq!(d.items.len(), 1, "{d}");
        assert!(d.items[0].message.contains("lock_timeout"), "{d}");
        let text = RETRY.replace("set lock_timeout = 1s\n", "");
        let m = parse_with("retry.model", &text, &opts).unwrap_or_else(|d| panic!("{d}"));
        let db = m.db.as_ref().unwrap();
        assert_eq!(
            (db.flavour, db.isolation),
            (flavour, Isolation::Serializable)
        );
    }
}

#[test]
fn valid_models_parse() {
    let m = parse("example.model", EXAMPLE).unwrap_or_else(|d| panic!("{d}"));
    assert_eq!(m.expect, Expect::Violated("no_oversell".into()));
    let m = parse("redis.model", REDIS_LOCK).unwrap_or_else(|d| panic!("{d}"));
    assert_eq!(m.tick_ms, 50);
    assert_eq!(m.instances, vec!["api"]);
    assert_eq!(m.symbols[0], "OK");
    let m = parse("watchdog.model", WATCHDOG).unwrap_or_else(|d| panic!("{d}"));
    assert_eq!(m.tick_ms, 100);
    assert_eq!(m.faults.len(), 3);
    assert_eq!(m.faults[0].during, Some((2, 7)));
    assert_eq!(m.faults[1].during, None);
    let m = parse("replicated.model", REPLICATED).unwrap_or_else(|d| panic!("{d}"));
    assert_eq!(m.redis.len(), 2);
    assert_eq!(
        (m.redis[0].name.as_str(), m.redis[0].replicas),
        ("locks", 2)
    );
    assert_eq!(m.timing, Timing::Async);
    assert_eq!(m.tick_ms, 100);
    assert_eq!(m.faults[0].kind, FaultKind::Failover { server: 0 });
}

fn invalid_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/invalid")
}

/// What `parse` reports for a file, as the snapshot stores it.
fn rendered(path: &Path) -> String {
    let name = path.file_name().unwrap().to_string_lossy();
    let source = fs::read_to_string(path).unwrap();
    match parse(&name, &source) {
        Ok(_) => "(no error)\n".to_string(),
        Err(d) => d.render(),
    }
}

/// Every `tests/invalid/NAME.model` renders exactly `NAME.expected` (`BLESS=1` rewrites them).
#[test]
fn invalid_models_match_their_snapshots() {
    let bless = std::env::var("BLESS").is_ok_and(|v| v == "1");
    let mut models: Vec<PathBuf> = fs::read_dir(invalid_dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "model"))
        .collect();
    models.sort();
    assert!(models.len() >= 12, "only {} invalid models", models.len());
    let mut mismatched = Vec::new();
    for model in &models {
        let got = rendered(model);
        assert!(got.starts_with("error: "), "{}: {got}", model.display());
        let expected = model.with_extension("expected");
        if bless {
            fs::write(&expected, &got).unwrap();
        } else if fs::read_to_string(&expected).ok().as_deref() != Some(got.as_str()) {
            mismatched.push(format!("--- {}\n{got}", expected.display()));
        }
    }
    assert!(
        mismatched.is_empty(),
        "snapshots differ (run with BLESS=1 to accept):\n{}",
        mismatched.join("\n")
    );
}

#[test]
fn headers_carry_origin_line_and_column() {
    let src = EXAMPLE.replace("from sku where", "from skus where");
    let d = parse("shop.model", &src).unwrap_err();
    let text = d.render();
    assert!(
        text.starts_with("error: unknown table \"skus\"\n"),
        "{text}"
    );
    let (line, col) = src
        .lines()
        .enumerate()
        .find_map(|(i, l)| l.find("skus").map(|c| (i + 1, c + 1)))
        .expect("the mistake is in the source");
    assert!(
        text.contains(&format!(",-[ shop.model:{line}:{col} ]")),
        "{text}"
    );
    assert!(text.contains("did you mean `sku`?"), "{text}");
    assert!(text.is_ascii() && !text.contains('\u{1b}'));
    assert_eq!(d.to_string(), text);
}

/// Parsing (and rendering what it reports) returns, whatever the input.
fn survives(source: &str) {
    if let Err(d) = parse("fuzz.model", source) {
        assert!(!d.items.is_empty());
        let _ = d.render();
    }
}

const VOCABULARY: &[&str] = &[
    "model",
    "about",
    "db",
    "table",
    "row",
    "ghost",
    "mutex",
    "process",
    "fault",
    "invariant",
    "final",
    "expect",
    "if",
    "else",
    "repeat",
    "break",
    "return",
    "work",
    "sleep",
    "lock",
    "atomic",
    "await",
    "SET",
    "select",
    "update",
    "into",
    "$x",
    "$me",
    "{",
    "}",
    "(",
    ")",
    "[",
    "]",
    "\"",
    "'",
    ";",
    "\n",
    "100ms",
    "-",
    "retry",
    "catch",
    "$e",
    "on",
    "'40001'",
    "backoff",
    "set",
    "index",
    "unique",
    "insert",
    "delete",
    "for share",
    "lock in share mode",
    "order by",
    "limit",
    "in (1, 2)",
    "between",
    "isolation",
    "mysql",
    "mariadb",
    "bigint",
    "PEXPIRE",
    "PTTL",
    "INCR",
    "watchdog",
    "lease 300ms",
    "stop",
    "region",
    "during",
    "pause",
    "hang",
    "up to",
    "redis",
    "with 1 replica",
    "with 2 replicas",
    "on locks",
    "on cache",
    "WAIT",
    "WAIT 1 100",
    "failover",
    "timing",
    "async",
];

/// Applies one edit: 0-2 delete/insert/replace a character, 3-5 the same with a token.
fn mutate(source: &str, kind: u8, at: usize, pick: usize, c: char) -> String {
    let chars: Vec<char> = source.chars().collect();
    let i = at % (chars.len() + 1);
    let token = VOCABULARY[pick % VOCABULARY.len()];
    let (head, tail): (String, String) = (chars[..i].iter().collect(), chars[i..].iter().collect());
    let word_end = tail.find(char::is_whitespace).unwrap_or(tail.len());
    match kind % 6 {
        0 => {
            head + tail
                .get(tail.chars().next().map_or(0, char::len_utf8)..)
                .unwrap_or("")
        }
        1 => format!("{head}{c}{tail}"),
        2 => format!("{head}{c}{}", tail.chars().skip(1).collect::<String>()),
        3 => head + &tail[word_end..],
        4 => format!("{head} {token} {tail}"),
        _ => format!("{head}{token}{}", &tail[word_end..]),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..300)) {
        survives(&String::from_utf8_lossy(&bytes));
    }

    #[test]
    fn mutated_models_never_panic(
        which in 0usize..5,
        edits in proptest::collection::vec((any::<u8>(), any::<usize>(), any::<usize>(), any::<char>()), 1..4),
    ) {
        let mut source = [REDIS_LOCK, WATCHDOG, REPLICATED, EXAMPLE, RETRY][which].to_string();
        for (kind, at, pick, c) in edits {
            source = mutate(&source, kind, at, pick, c);
        }
        survives(&source);
    }
}

/// `%` is the remainder with the dividend's sign, in process code and in SQL, on every
/// flavour; a remainder by zero is a runtime error of the model.
#[test]
fn the_remainder_operator_keeps_the_dividends_sign() {
    let text = "model \"remainder\"
about \"the remainder\"
db postgres
table t (id int primary key, n int)
row t (1, 10)
ghost r = 0
process p {
  $x = -7 % 3
  r += $x
  update t set n = n % 4 + $x where id = 1
}
final both: r = -1 and t[1].n = 1
expect postgres, mysql, mariadb: holds
";
    let m = interlock::Model::parse("remainder.model", text).unwrap_or_else(|e| panic!("{e}"));
    for v in m.variants().unwrap() {
        let verdict = v.check();
        assert!(verdict.met(), "{}", verdict.render());
    }
    let zero = text.replace("-7 % 3", "7 % (r - r)");
    let m = interlock::Model::parse("remainder.model", &zero).unwrap_or_else(|e| panic!("{e}"));
    let v = m.variants().unwrap().remove(0).check();
    assert!(!v.met(), "{}", v.render());
    assert!(v.render().contains("division by zero"), "{}", v.render());
}

/// Redis keys are written as Redis users write them (`lock:order:42`, `job-7`), in commands
/// and in properties; a key that ends with a joiner is an error that says to quote it.
#[test]
fn redis_keys_with_colons_and_dashes_need_no_quotes() {
    let text = "model \"keys\"
about \"keys as Redis users write them\"
redis cache
process client[2] {
  SET lock:order:42 $me NX into $ok
  if $ok { INCR job-7 }
}
invariant one: redis(job-7) = nil or redis(job-7) <= 1
final taken: redis(lock:order:42) != nil and redis(job-7) = 1
expect holds
";
    let m = interlock::Model::parse("keys.model", text).unwrap_or_else(|e| panic!("{e}"));
    let v = m.check();
    assert!(v.met(), "{}", v.render());
    let quoted = text.replace("lock:order:42 $me", "'lock:order:42' $me");
    let m = interlock::Model::parse("keys.model", &quoted).unwrap_or_else(|e| panic!("{e}"));
    assert!(m.check().met(), "a quoted key is the same key");
    let bad = text.replace("lock:order:42 $me", "lock: $me");
    let e = interlock::Model::parse("keys.model", &bad)
        .expect_err("a key ending with `:`")
        .to_string();
    assert!(
        e.contains("cannot end with `:`") && e.contains("'lock:'"),
        "{e}"
    );
    assert!(e.contains("keys.model:5:"), "{e}");
}

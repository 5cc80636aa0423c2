//! The text trace as a person reads it: the summary on top, folded runs, belief against
//! truth, marks that say what kind of thing happened, and the compact replay token.

use interlock::{Model, Options};

fn checked(file: &str) -> (Model, interlock::Verdict) {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(root.join(file)).unwrap();
    let m = Model::parse(file, &text).unwrap();
    let v = m.check_with(Options::default());
    (m, v)
}

#[test]
fn the_redlock_pause_fits_one_screen_and_its_summary_tells_the_story() {
    let (_, v) = checked("models/redlock/pause-after-acquire.model");
    let text = v.render();
    assert!(
        text.lines().count() <= 40,
        "{} lines:\n{text}",
        text.lines().count()
    );
    assert!(text.lines().all(|l| l.chars().count() <= 100), "{text}");
    let summary: Vec<&str> = text.lines().skip(3).take_while(|l| !l.is_empty()).collect();
    assert!((1..=6).contains(&summary.len()), "{summary:?}");
    let said = summary.join("\n");
    assert!(said.contains("⚡ client[0] pauses"), "{said}");
    assert!(said.contains("⌛ lock@n1…n5 expires at 1s"), "{said}");
    assert!(
        said.contains("client[1] takes lock@n1…n5 at 1200ms while client[0] believes"),
        "{said}"
    );
    assert!(said.contains("✗ at_most_one_inside"), "{said}");
    assert!(
        text.contains("⚠ client[0] believes it holds lock@n1…n5"),
        "{text}"
    );
    // The fault is marked as a fault and the expiry as an expiry; only the violation is ✗.
    let table: String = text
        .lines()
        .skip(3 + summary.len())
        .collect::<Vec<_>>()
        .join("\n");
    assert_eq!(table.matches('✗').count(), 1, "{table}");
}

#[test]
fn folded_rows_cover_every_step_and_full_unfolds_them() {
    let (m, v) = checked("models/redlock/pause-after-acquire.model");
    let t = v.trace.as_ref().expect("a counterexample");
    let folded = t.text(&m);
    let full = t.text_full(&m);
    let numbered = |s: &str| {
        s.lines()
            .filter(|l| l.starts_with(|c: char| c.is_ascii_digit()))
            .count()
    };
    assert_eq!(numbered(&full), t.len(), "{full}");
    assert!(numbered(&folded) < t.len() / 2, "{folded}");
    assert!(folded.contains("6–15 "), "{folded}");
    assert!(folded.contains("SET lock client[1] NX"), "{folded}");
}

#[test]
fn a_lost_update_says_the_write_rests_on_a_stale_read() {
    let (_, v) = checked("models/no-lock/lost-update.model");
    let text = v.render();
    assert!(
        text.contains(
            "writes sku#1 believing stock=10 (read at step 1); it is stock=9 since step 3"
        ),
        "{text}"
    );
    // Locals inside SQL are shown with their values.
    assert!(text.contains("set stock = 10 -"), "{text}");
    assert!(
        text.contains("L14 "),
        "the model line of the update:\n{text}"
    );
}

#[test]
fn a_deadlock_names_its_victim_and_the_engines_reason() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let file = "models/pessimistic/opposite-order-deadlock.model";
    let text = std::fs::read_to_string(root.join(file)).unwrap();
    let m = Model::parse(file, &text).unwrap();
    let mut reasons = Vec::new();
    for v in m.variants().unwrap() {
        let out = v.check().render();
        let line = out
            .lines()
            .find(|l| l.contains("↯ deadlock"))
            .map(str::to_string);
        reasons.push(line.unwrap_or_else(|| panic!("{out}")));
        assert!(
            out.contains("(PostgreSQL") || out.contains("(InnoDB"),
            "{out}"
        );
    }
    assert!(reasons.len() >= 2, "{reasons:?}");
}

#[test]
fn a_compact_token_reads_back_and_a_bad_count_is_an_error() {
    let (m, v) = checked("models/redlock/pause-after-acquire.model");
    let t = v.trace.as_ref().expect("a counterexample");
    let token = t.token(&m);
    assert!(
        token.contains("client[1]*10") && token.contains("tick 200ms*2 tick 1ms"),
        "{token}"
    );
    let again = m.trace_of(&token).expect("the token reads back");
    assert_eq!(again.len(), t.len());
    let long: Vec<String> = interlock::trace::token::steps(m.ir(), t);
    assert_eq!(
        m.trace_of(&long.join(" ")).expect("written out").len(),
        t.len()
    );
    for bad in ["client[0]*0", "client[0]*x", "*3", "client[0]*100001"] {
        let e = m.trace_of(bad).expect_err(bad).to_string();
        assert!(e.contains("repeated a number of times"), "{bad}: {e}");
    }
}

/// A repeated step of two words other than a tick (`replicate cache/replica1*2`) reads back
/// as that step twice, and a bad count on it names the whole step.
#[test]
fn a_repeated_two_word_step_reads_back() {
    let (m, v) = checked("models/redis/wait-forever.model");
    let token = v.trace.as_ref().expect("a counterexample").token(&m);
    assert!(token.contains("replicate cache/replica1*2"), "{token}");
    assert_eq!(m.trace_of(&token).expect("the token reads back").len(), 6);
    let e = m
        .trace_of("stuck*2 writer replicate cache/replica1*0")
        .expect_err("a zero count")
        .to_string();
    assert!(
        e.contains("`replicate cache/replica1*0` is not a step repeated"),
        "{e}"
    );
}

/// Every built-in counterexample: its rows cover each step exactly once, in order; `--full`
/// gives one row per step; the summary has one to six lines and ends with the failure.
#[test]
fn every_counterexample_folds_without_losing_a_step() {
    use interlock::trace::{belief, holders, rows, summary};
    let mut seen = 0;
    for (path, m) in super::models::all_variants() {
        let v = m.check();
        let Some(t) = &v.trace else { continue };
        let ir = m.ir();
        let notes = belief::notes(ir, t);
        for full in [false, true] {
            let rs = rows::rows(ir, t, &notes.shown, full);
            let mut next = 0;
            for r in &rs {
                assert_eq!(r.first, next, "{}", path.display());
                assert!(r.last >= r.first);
                next = r.last + 1;
            }
            assert_eq!(next, t.len(), "{}", path.display());
            if full {
                assert_eq!(rs.len(), t.len(), "{}", path.display());
            }
        }
        let held = holders::after_each(ir, t);
        let lines = summary::lines(ir, t, &held, &notes);
        assert!(
            lines.len() <= summary::LINES,
            "{}: {lines:?}",
            path.display()
        );
        if t.failure.is_some() && !t.is_empty() {
            let last = lines.last().map_or("", String::as_str);
            assert!(last.starts_with('✗'), "{}: {lines:?}", path.display());
        }
        seen += 1;
    }
    assert!(seen > 40, "{seen}");
}

/// An error's row carries the server's own words, as each engine's client prints them.
#[test]
fn an_error_shows_what_the_server_says() {
    let (m, _) = checked("models/isolation/what-the-server-says.model");
    let said = |m: &Model| -> String {
        let runs = m.schedule_runs();
        let words = runs
            .iter()
            .find(|r| r.name == "words")
            .expect("schedule words");
        words.trace.text(m)
    };
    let pg = said(&m.with_flavour(interlock::Flavour::Postgres).unwrap());
    for line in [
        "server: ERROR:  could not obtain lock on row in relation \"sku\"",
        "server: ERROR:  duplicate key value violates unique constraint \"sku_pkey\"",
        "server: ERROR:  integer out of range",
        "server: ERROR:  could not serialize access due to concurrent delete",
    ] {
        assert!(pg.contains(line), "{line}\n{pg}");
    }
    let my = said(&m.with_flavour(interlock::Flavour::Mysql).unwrap());
    for line in [
        "server: ERROR 3572 (HY000): Statement aborted because lock(s) could not be acquired",
        "server: ERROR 1062 (23000): Duplicate entry '1' for key 'sku.PRIMARY'",
        "server: ERROR 1264 (22003): Out of range value for column 'stock' at row 1",
    ] {
        assert!(my.contains(line), "{line}\n{my}");
    }
    let maria = said(&m.with_flavour(interlock::Flavour::Mariadb).unwrap());
    assert!(maria.contains("for key 'PRIMARY'"), "{maria}");
    assert!(
        maria.contains("ERROR 1205 (HY000): Lock wait timeout exceeded"),
        "{maria}"
    );
}

/// A server fault's step names its server: `jump n2` is n2's jump even where n1 has one of
/// its own (both read back as the first before), and `restart n1` restarts the server, not
/// a process's next request.
#[test]
fn a_server_fault_step_names_its_server() {
    use interlock::exec::observe::Event;
    let src = "model \"two jumps\"\nabout \"a test\"\nredis n1\nredis n2\n\
               fault jump n1 by 1s at most 1\nfault jump n2 by -1s at most 1\n\
               fault restart n1 at most 1\n\
               process p {\n SET lock 1 PX 2000 on n1\n SET lock 1 PX 2000 on n2\n}\n\
               expect holds\n";
    let m = Model::parse("two-jumps.model", src).unwrap();
    let t = m
        .trace_of("p jump n2 restart n1")
        .expect("the token reads back");
    let jumped: Vec<(u16, i32)> = t.steps[1]
        .events
        .iter()
        .filter_map(|e| match e {
            Event::ClockJump { server, by, .. } => Some((*server, *by)),
            _ => None,
        })
        .collect();
    assert_eq!(jumped, [(1, -1)]);
    assert!(
        t.steps[2].events.iter().any(
            |e| matches!(e, Event::ServerRestarted { server: 0, lost, .. } if lost.len() == 1)
        ),
        "{:?}",
        t.steps[2].events
    );
    let e = m
        .trace_of("p jump n3")
        .expect_err("no such server")
        .to_string();
    assert!(e.contains("no fault `jump` of a server `n3`"), "{e}");
}

/// A partition cuts the server off: the command in flight when it struck still takes effect
/// and loses its reply; a later one has no effect (RL-2, RL-4); a token names both choices.
#[test]
fn a_partition_delivers_only_the_request_in_flight() {
    use interlock::exec::observe::Event;
    let src = "model \"cut\"\nabout \"a test\"\nredis r\n\
               fault partition r for 1s at most 1\n\
               process p {\n SET lock 1 PX 2000 into $a\n GET lock into $b\n}\n\
               expect holds\n";
    let m = Model::parse("cut.model", src).unwrap();
    let set = |e: &Event| matches!(e, Event::KeySet { .. });
    let lost = |e: &Event| matches!(e, Event::ReplyLost { .. });
    let unreached = |e: &Event| matches!(e, Event::Unreached { refused: false, .. });
    let t = m
        .trace_of("partition r in-flight p p")
        .expect("the token reads back");
    let first = &t.steps[1].events;
    assert!(first.iter().any(set) && first.iter().any(lost), "{first:?}");
    assert!(
        t.steps[2].events.iter().any(unreached),
        "{:?}",
        t.steps[2].events
    );
    let t = m.trace_of("partition r p").expect("the token reads back");
    let first = &t.steps[1].events;
    assert!(
        !first.iter().any(set) && first.iter().any(unreached),
        "{first:?}"
    );
    // Before the partition, and once more: its budget is spent.
    let e = m
        .trace_of("p partition r p partition r")
        .expect_err("one partition")
        .to_string();
    assert!(e.contains("partition r"), "{e}");
}

/// PostgreSQL words a lock wait that `lock_timeout` ended in its own way, not as NOWAIT's
/// 55P03 (observed on PostgreSQL 15): the trace shows the server's words under the step.
#[test]
fn a_lock_timeout_says_so() {
    let text = "model \"m\"\nabout \"a\"\ndb postgres\nset lock_timeout = 100ms\n\
        table sku (id int primary key, stock int)\nrow sku (1, 1)\nghost done = 0\n\
        process holder {\n  begin\n  select stock from sku where id = 1 for update into $s\n  \
        work 200ms\n  commit\n}\nprocess waiter {\n  begin\n  \
        select stock from sku where id = 1 for update into $s\n  commit\n  done += 1\n}\n\
        final waited: done = 1\nexpect violated waited\n";
    let m = Model::parse("lt.model", text).unwrap_or_else(|e| panic!("{e}"));
    let v = m.check();
    let trace = v.render();
    assert!(
        trace.contains("server: ERROR:  canceling statement due to lock timeout"),
        "{trace}"
    );
    assert!(!trace.contains("could not obtain lock"), "{trace}");
}

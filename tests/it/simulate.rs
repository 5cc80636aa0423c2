//! `simulate`: same seed, same figures, whatever the threads; queueing theory's answers on a
//! queue; a bug found by simulation replays in `check`; bad workload input is an error.

use interlock::{Model, ParseOptions, SimulateOptions};

const COST: &str = "models/choice/shared.cost";

fn model(file: &str, set: &[(&str, &str)]) -> Model {
    let opts = ParseOptions {
        db: None,
        set: set
            .iter()
            .map(|(n, v)| ((*n).to_string(), (*v).to_string()))
            .collect(),
    };
    Model::from_file_with(file, &opts).expect("the model parses")
}

fn priced(file: &str, set: &[(&str, &str)]) -> Model {
    model(file, set).with_costs(COST).expect("the costs apply")
}

fn opts(runs: u64, duration_ms: u64, threads: usize) -> SimulateOptions {
    SimulateOptions {
        seed: 1,
        runs,
        duration_ms,
        threads,
        ..SimulateOptions::default()
    }
}

#[test]
fn same_seed_same_figures_whatever_the_threads() {
    let m = priced(
        "models/choice/exercise-optimistic.model",
        &[("clients", "30"), ("units", "10")],
    );
    let one = m.simulate(&opts(6, 10_000, 1));
    let again = m.simulate(&opts(6, 10_000, 1));
    let two = m.simulate(&opts(6, 10_000, 2));
    assert_eq!(one.text(), again.text());
    assert_eq!(one.text(), two.text());
    assert_eq!(one.json(), two.json());
    let other = m.simulate(&SimulateOptions {
        seed: 2,
        ..opts(6, 10_000, 1)
    });
    assert_ne!(one.text(), other.text(), "another seed draws other runs");
}

/// Mean wait for the mutex and its utilisation against M/M/1's ρ/(μ−λ) and ρ; Little's law.
fn mm1(rate: &str, rho: f64, customers_per_run: f64, runs: u64, tolerance: f64) {
    let text = std::fs::read_to_string("models/choice/mm1.model").expect("the model");
    let text = text.replace("arrive poisson 80/s", &format!("arrive poisson {rate}/s"));
    let set = vec![("customers".to_string(), "64".to_string())];
    let m = Model::parse_with("mm1", &text, &ParseOptions { db: None, set }).expect("parses");
    let lambda: f64 = rate.parse::<f64>().unwrap() / 1000.0; // per ms
    let mu = 1.0 / 10.0;
    let duration = (customers_per_run / lambda) as u64;
    let sim = m.simulate(&opts(runs, duration, 2));
    let want_wait = rho / (mu - lambda);
    let (l, lam, w) = sim.little();
    let wait = w - 10.0;
    assert!(
        (sim.mean_lock_wait_ms() - want_wait).abs() / want_wait < tolerance,
        "ρ = {rho}: mean wait {} ms, M/M/1 says {want_wait} ms",
        sim.mean_lock_wait_ms()
    );
    assert!(
        (wait - want_wait).abs() / want_wait < tolerance + 0.02,
        "wait from W: {wait}"
    );
    let util = sim.mutex_utilisation()[0].1;
    assert!(
        (util - rho).abs() / rho < tolerance,
        "ρ = {rho}: utilisation {util}"
    );
    // Every run drains: L = λW holds exactly (up to rounding of the printed means).
    assert!(
        (l - lam * w).abs() < 1e-9 * l.max(1.0),
        "L {l} λ {lam} W {w}"
    );
    assert_eq!(sim.violated_runs(), 0);
}

#[test]
fn a_mutex_queue_waits_as_queueing_theory_says() {
    mm1("50", 0.5, 20_000.0, 20, 0.05);
}

#[test]
#[ignore = "the acceptance run: 20 seeds × 10⁵ customers at ρ = 0.5 and 0.8 (about 30 s)"]
fn a_mutex_queue_waits_as_queueing_theory_says_at_full_size() {
    mm1("50", 0.5, 100_000.0, 20, 0.03);
    mm1("80", 0.8, 100_000.0, 20, 0.03);
}

#[test]
fn a_bug_found_by_simulation_replays_in_check() {
    let m = priced(
        "models/choice/exercise-no-version.model",
        &[("clients", "20"), ("units", "10")],
    );
    let sim = m.simulate(&opts(3, 10_000, 1));
    assert_eq!(sim.violated_property().as_deref(), Some("stock_conserved"));
    let trace = sim.violation().expect("a trace");
    let token = trace.token(&m);
    let replayed = m.trace_of(&token).expect("the token replays");
    assert_eq!(replayed.failure, trace.failure);
    assert!(!sim.unexpected_violation(), "the model expects it");
    assert!(
        sim.text().contains("✗ stock_conserved broken"),
        "{}",
        sim.text()
    );
}

#[test]
fn correct_strategies_never_oversell_and_cost_what_they_should() {
    let set = [("clients", "100"), ("units", "50")];
    let run = |f: &str| {
        let sim = priced(&format!("models/choice/{f}.model"), &set).simulate(&opts(5, 10_000, 1));
        assert_eq!(sim.violated_runs(), 0, "{f}");
        sim.figures().remove(0)
    };
    let (opt, pess, cond) = (
        run("exercise-optimistic"),
        run("exercise-pessimistic"),
        run("exercise-conditional"),
    );
    let sold = |f: &interlock::Figures| {
        f.outcomes
            .iter()
            .find(|(o, _)| o == "bought")
            .map_or(0, |x| x.1)
    };
    assert_eq!(sold(&pess), 5 * 50);
    assert_eq!(sold(&cond), 5 * 50);
    assert!(sold(&opt) < 5 * 50, "optimistic buyers give up: {opt:?}");
    assert!(opt.retries_per_request > 1.0 && pess.retries_per_request == 0.0);
}

#[test]
fn bad_workload_input_is_an_error_with_its_place() {
    let cases = [
        ("latency sql gaussian 2ms", "unknown distribution"),
        ("latency sql -1ms", "negative duration"),
        ("latency sql exponential mean 2ms", "max D"),
        ("latency disk 2ms", "unknown operation kind"),
        (
            "latency sql lognormal median 5ms p99 2ms max 1s",
            "99th percentile",
        ),
    ];
    let rejects = |text: &str, what: &str, want: &str, line: usize| {
        let e = Model::parse("bad.model", text).expect_err(what).to_string();
        assert!(
            e.contains(want) && e.contains(&format!("bad.model:{line}:")),
            "{what}: {e}"
        );
    };
    for (line, want) in cases {
        let text = format!(
            "model \"m\"\nabout \"a\"\nmutex m\n{line}\nprocess p {{\n  lock m\n  unlock m\n}}\nexpect holds\n"
        );
        rejects(&text, line, want, 4);
    }
    for (line, want) in [
        ("pick $x from 3..1", "over an empty range"),
        (
            "pick $x from 1..3 zipff 1",
            "unknown distribution \"zipff\"",
        ),
        ("pick $x from 1..3 zipf 0", "zipf exponent"),
        ("pick x from 1..3", "the local that receives"),
        ("pick $x from 1..100000", "too wide"),
    ] {
        let text = format!(
            "model \"m\"\nabout \"a\"\ndb postgres\nprocess p {{\n  {line}\n  work 1ms\n}}\nexpect holds\n"
        );
        rejects(&text, line, want, 5);
    }
    for (row, want) in [
        ("row t (5..1, 0)", "an empty range of keys"),
        ("row t (1, 0..3)", "only the primary key"),
        ("row t (1..'a', 0)", "of integers"),
        ("row t (1..200000, 0)", "too many rows"),
    ] {
        let text = format!(
            "model \"m\"\nabout \"a\"\ndb postgres\ntable t (id int primary key, v int)\n{row}\nprocess p {{\n  work 1ms\n}}\nexpect holds\n"
        );
        rejects(&text, row, want, 5);
    }
    let opts = ParseOptions {
        db: None,
        set: vec![("client".into(), "3".into())],
    };
    let e = Model::from_file_with("models/choice/hot-optimistic.model", &opts)
        .expect_err("an undeclared param")
        .to_string();
    assert!(
        e.contains("no param `client`") && e.contains("clients"),
        "{e}"
    );
}

/// docs/choosing-a-lock.md's claims, at a small size: the direction of each stated result.
#[test]
fn choice_claims_hold() {
    let all = |file: &str, set: &[(&str, &str)], ms: u64| {
        let sim = priced(&format!("models/choice/{file}.model"), set).simulate(&opts(2, ms, 2));
        sim.figures().remove(0)
    };
    let c = [("clients", "25")];
    let no_lock = all("hot-no-lock", &c, 2_000);
    let for_update = all("hot-for-update", &c, 2_000);
    assert!(
        for_update.throughput * 3.0 < no_lock.throughput,
        "FOR UPDATE costs throughput"
    );
    let opt = all("hot-optimistic", &c, 2_000);
    let pess = all("hot-pessimistic", &c, 2_000);
    assert!(
        opt.retry_rate > 0.3 && pess.throughput > opt.throughput,
        "{opt:?} {pess:?}"
    );
    let spread = all(
        "hot-optimistic",
        &[("clients", "25"), ("hot_rows", "100")],
        2_000,
    );
    assert!(
        spread.retry_rate < opt.retry_rate / 3.0 && spread.throughput > 2.0 * opt.throughput,
        "spreading the load over more rows lowers the conflict rate: {spread:?}"
    );
    let hybrid = all("hybrid", &c, 2_000);
    assert!(hybrid.throughput < pess.throughput && hybrid.failed.is_empty());
    let now = all("backoff", &[("clients", "25"), ("backoff", "0")], 10_000);
    let exp = all("backoff", &[("clients", "25"), ("backoff", "2")], 10_000);
    assert!(
        exp.retry_rate < now.retry_rate,
        "backoff lowers the conflict rate"
    );
    let after = all(
        "call-in-transaction",
        &[("clients", "10"), ("inside", "0")],
        3_000,
    );
    let inside = all(
        "call-in-transaction",
        &[("clients", "10"), ("inside", "1")],
        3_000,
    );
    assert!(inside.lock_wait_p99_ms > 5.0 * after.lock_wait_p99_ms.max(1.0));
    assert!(inside.throughput < after.throughput);
}

/// The sections of docs/choosing-a-lock.md that need a capacity, a pool or tenacity's forms.
#[test]
fn capacity_pool_and_backoff_claims_hold() {
    let group = |file: &str, set: &[(&str, &str)], ms: u64, g: usize| {
        let sim = priced(&format!("models/choice/{file}.model"), set).simulate(&opts(2, ms, 2));
        assert_eq!(sim.violated_runs(), 0, "{file}");
        sim.figures().remove(g)
    };
    let cap = |w: &str| {
        let set = [("clients", "50"), ("rows", "100"), ("db_workers", w)];
        group("capacity", &set, 2_000, 0)
    };
    let (one, four) = (cap("1"), cap("4"));
    assert!(
        (400.0..600.0).contains(&one.throughput),
        "one worker: {one:?}"
    );
    assert!(four.throughput > 2.5 * one.throughput, "{four:?}");
    let pool = |inside: &str| {
        let set = [
            ("buyers", "10"),
            ("readers", "10"),
            ("pool_size", "5"),
            ("rows", "100"),
            ("inside", inside),
        ];
        group("pool-exhaustion", &set, 3_000, 1)
    };
    let (after, inside) = (pool("0"), pool("1"));
    assert!(after.group.starts_with("reader") && inside.pool_waits > 0);
    assert!(
        inside.pool_wait_p99_ms > 5.0 * after.pool_wait_p99_ms.max(1.0)
            && inside.throughput < after.throughput,
        "readers wait for connections: {after:?} {inside:?}"
    );
    // tenacity's deterministic backoff against full jitter: more give up, later.
    let tenacity = |f: &str| {
        let set = [("clients", "40"), ("units", "20")];
        let sim = priced(&format!("models/choice/{f}.model"), &set).simulate(&opts(4, 10_000, 2));
        sim.figures().remove(0)
    };
    let (lockstep, jitter) = (tenacity("tenacity"), tenacity("tenacity-jitter"));
    let conflicts = |f: &interlock::Figures| {
        f.failed
            .iter()
            .find(|(c, _)| c == "VersionConflict")
            .map_or(0, |x| x.1)
    };
    assert!(
        conflicts(&lockstep) > conflicts(&jitter)
            && lockstep.latency_p99_ms > jitter.latency_p99_ms
            && lockstep.retries_per_request > jitter.retries_per_request,
        "jitter: fewer give up, sooner: {lockstep:?} {jitter:?}"
    );
}

/// Faults strike in a simulation too (SIM-6): a pause that outlasts the lease breaks mutual
/// exclusion in some runs, and the run's path, fault and all, replays in `check`.
#[test]
fn faults_strike_in_simulated_runs_and_replay() {
    let m = Model::from_file("models/watchdog/pause-outlasts-lease.model").expect("parses");
    let sim = m.simulate(&opts(200, 2_000, 2));
    assert!(sim.faults() > 0, "no fault struck");
    assert_eq!(
        sim.violated_property().as_deref(),
        Some("at_most_one_inside")
    );
    let trace = sim.violation().expect("a trace");
    let token = trace.token(&m);
    assert!(token.contains("fault pause"), "{token}");
    let replayed = m.trace_of(&token).expect("the token replays");
    assert_eq!(replayed.failure, trace.failure);
    let again = m.simulate(&opts(200, 2_000, 1));
    assert_eq!(
        sim.text(),
        again.text(),
        "faults are drawn from the seed alone"
    );
}

/// Replication lag (`latency replication D`): a lock read from a replica is stale only while
/// the replica lags, so the bug shows in a simulation with a lag and in none without.
#[test]
fn replication_lag_shows_a_stale_replica_read() {
    let path = "models/redis/read-lock-from-replica.model";
    let text = std::fs::read_to_string(path).expect("the model");
    let plain = Model::parse(path, &text).expect("parses");
    let lagged =
        format!("{text}\nlatency redis 1ms\nlatency replication exponential mean 5ms max 100ms\n");
    let lagged = Model::parse(path, &lagged).expect("parses with the lag");
    assert_eq!(plain.simulate(&opts(100, 1_000, 2)).violated_runs(), 0);
    let sim = lagged.simulate(&opts(100, 1_000, 2));
    assert!(sim.violated_runs() > 0, "{}", sim.text());
    let trace = sim.violation().expect("a trace");
    let replayed = lagged.trace_of(&trace.token(&lagged)).expect("replays");
    assert_eq!(replayed.failure, trace.failure);
}

/// A Redis server with one worker serves one command per latency: 1 ms each, 1,000 a second.
#[test]
fn one_redis_worker_serves_one_command_at_a_time() {
    let text = "model \"r\"\nabout \"a\"\nparam clients = 2\nredis cache\nlatency redis 1ms\n\
                process c[clients] loop think 1ms {\n  INCR hits on cache\n}\nexpect holds\n";
    let set = vec![("clients".to_string(), "50".to_string())];
    let free = Model::parse_with(
        "r",
        text,
        &ParseOptions {
            db: None,
            set: set.clone(),
        },
    )
    .unwrap();
    let one = text.replace("latency redis 1ms", "latency redis 1ms\nredis workers 1");
    let one = Model::parse_with("r", &one, &ParseOptions { db: None, set }).unwrap();
    let (free, one) = (
        free.simulate(&opts(2, 2_000, 2)).figures().remove(0),
        one.simulate(&opts(2, 2_000, 2)).figures().remove(0),
    );
    assert!(free.throughput > 10_000.0, "{free:?}");
    assert!(
        (950.0..1050.0).contains(&one.throughput) && one.worker_waits > 0,
        "{one:?}"
    );
}

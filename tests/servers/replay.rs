//! `interlock replay` against real servers (feature `servers`): the Hermitage schedules and
//! the violated built-in models' counterexamples, driven on PostgreSQL and MariaDB, agree
//! with the simulation; a trace of another engine's behaviour diverges.
//!
//! The URLs come from `INTERLOCK_POSTGRES_URL` and `INTERLOCK_MYSQL_URL` (`.ci/servers start
//! DIR` writes them to `DIR/env`); unset, each test prints one line and passes, unless
//! `CI=true`, where it fails.

mod with_servers {
    use std::path::{Path, PathBuf};

    use interlock::replay::Options;
    use interlock::{Flavour, Model};

    fn url(flavour: Flavour) -> Option<String> {
        crate::servers::with_servers::url(match flavour {
            Flavour::Postgres => "INTERLOCK_POSTGRES_URL",
            Flavour::Mysql | Flavour::Mariadb => "INTERLOCK_MYSQL_URL",
        })
    }

    fn options(flavour: Flavour) -> Option<Options> {
        url(flavour).map(|url| Options {
            sql: Some(url),
            redis: None,
            time_scale: 1.0,
        })
    }

    /// Every variant of every model in the folders, in file order, with its file.
    fn variants(dirs: &[&str]) -> Vec<(PathBuf, Model)> {
        let mut out = Vec::new();
        for dir in dirs {
            let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join(dir);
            let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
                .expect("the folder")
                .map(|e| e.expect("an entry").path())
                .filter(|p| p.extension().is_some_and(|e| e == "model"))
                .collect();
            files.sort();
            for f in files {
                let model = Model::from_file(&f).expect("reads");
                for m in model.variants().expect("variants") {
                    out.push((f.clone(), m));
                }
            }
        }
        out
    }

    #[test]
    fn every_hermitage_schedule_agrees_with_postgres_and_mariadb() {
        for (f, m) in variants(&["models/isolation/hermitage"]) {
            let flavour = m.flavour().expect("a database");
            let Some(opts) = options(flavour) else { return };
            for run in m
                .schedule_runs()
                .into_iter()
                .filter(|r| !r.claims.is_empty())
            {
                assert!(m.replay_cannot(&run.trace).is_empty(), "{}", f.display());
                let report = m.replay_on(&run.trace, &opts).expect("replays");
                assert!(
                    report.agrees(),
                    "{} [{}] schedule {}:\n{}",
                    f.display(),
                    flavour.name(),
                    run.name,
                    interlock::replay::text(&report)
                );
            }
        }
    }

    #[test]
    fn the_violated_sql_models_counterexamples_agree_with_the_servers() {
        let mut replayed = 0;
        for (f, m) in variants(&[
            "models/no-lock",
            "models/optimistic",
            "models/pessimistic",
            "models/isolation",
        ]) {
            let flavour = m.flavour().expect("a database");
            let Some(opts) = options(flavour) else { return };
            let Some(t) = m.check().trace else { continue };
            if !m.replay_cannot(&t).is_empty() {
                continue;
            }
            let report = m.replay_on(&t, &opts).expect("replays");
            assert!(
                report.agrees(),
                "{} [{}]:\n{}",
                f.display(),
                flavour.name(),
                interlock::replay::text(&report)
            );
            replayed += 1;
        }
        assert!(replayed >= 5, "only {replayed} counterexamples replayed");
    }

    #[test]
    fn the_violated_redis_models_counterexamples_agree_with_a_real_redis() {
        let Some(redis) = crate::servers::with_servers::url("INTERLOCK_REDIS_URL") else {
            return;
        };
        let mut replayed = 0;
        for (f, m) in variants(&[
            "models/redis",
            "models/watchdog",
            "models/fencing",
            "models/bench",
        ]) {
            if !m.uses_redis() {
                continue;
            }
            let sql = match m.flavour() {
                None => None,
                Some(fl) => match url(fl) {
                    Some(u) => Some(u),
                    None => return,
                },
            };
            let Some(t) = m.check().trace else { continue };
            if !m.replay_cannot(&t).is_empty() {
                continue;
            }
            let opts = Options {
                sql,
                redis: Some(redis.clone()),
                time_scale: 1.0,
            };
            // Real time on a loaded machine can put a step a few ms past a TTL: a
            // divergence is tried once more before it counts.
            let mut report = m.replay_on(&t, &opts).expect("replays");
            if !report.agrees() {
                report = m.replay_on(&t, &opts).expect("replays");
            }
            assert!(
                report.agrees(),
                "{}:\n{}",
                f.display(),
                interlock::replay::text(&report)
            );
            replayed += 1;
        }
        assert!(replayed >= 8, "only {replayed} counterexamples replayed");
    }

    #[test]
    fn a_trace_of_another_engine_diverges_where_the_server_answers_otherwise() {
        let f = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("models/isolation/hermitage/p4-lost-update.model");
        let m = Model::from_file(&f).expect("reads");
        let pg = m.with_flavour(Flavour::Postgres).expect("postgres");
        let maria = m.with_flavour(Flavour::Mariadb).expect("mariadb");
        let Some(opts) = options(Flavour::Postgres) else {
            return;
        };
        // MariaDB's run: T2 resumes and overwrites. PostgreSQL aborts T2 there (40001).
        let t = maria.run_schedule("T1 T2 T1 T2 T1 T2").expect("runs");
        let report = pg.replay_on(&t, &opts).expect("replays");
        assert!(!report.agrees());
        let bad = report
            .lines
            .iter()
            .find(|l| !l.agree)
            .expect("a divergence");
        assert_eq!(
            (bad.who.as_str(), bad.server.as_str()),
            ("T2", "ERROR 40001"),
            "{bad:?}"
        );
    }

    #[test]
    fn a_postgres_deadlock_check_ends_the_wait_on_the_server_too() {
        let text = "model \"cross\"\nabout \"x\"\ndb postgres\n\
            table test (id int primary key, value int)\nrow test (1, 10)\nrow test (2, 20)\n\
            process T1 {\n  begin\n  update test set value = 11 where id = 1\n  \
            update test set value = 21 where id = 2 catch $e\n  commit\n}\n\
            process T2 {\n  begin\n  update test set value = 22 where id = 2\n  \
            update test set value = 12 where id = 1 catch $e\n  commit\n}\nexpect holds\n";
        let m = Model::parse("cross.model", text).expect("parses");
        let Some(opts) = options(Flavour::Postgres) else {
            return;
        };
        let t = m.run_schedule("T1 T2 T1 T2 tick T1 T1 T2").expect("runs");
        let report = m.replay_on(&t, &opts).expect("replays");
        assert!(report.agrees(), "{}", interlock::replay::text(&report));
        assert!(report.lines.iter().any(|l| l.server == "ERROR 40P01"));
    }
}

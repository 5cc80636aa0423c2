//! `interlock load` against real servers: the exercise's buyers as concurrent clients. The
//! tests need `--features servers` and the servers of `.ci/servers` (CI runs them).

mod with_servers {
    use std::path::Path;

    use interlock::load::Options;
    use interlock::{Flavour, Model, ParseOptions};

    fn exercise(strategy: &str, flavour: Flavour) -> Model {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join(format!("models/choice/exercise-{strategy}.model"));
        let text = std::fs::read_to_string(&path).expect("the model");
        let opts = ParseOptions {
            db: Some(flavour),
            set: vec![
                ("clients".into(), "30".into()),
                ("units".into(), "10".into()),
            ],
        };
        Model::parse_with(&path.display().to_string(), &text, &opts).expect("it parses")
    }

    #[test]
    fn the_exercise_never_oversells_on_real_servers_and_every_figure_is_measured() {
        for (flavour, var) in [
            (Flavour::Postgres, "INTERLOCK_POSTGRES_URL"),
            (Flavour::Mysql, "INTERLOCK_MYSQL_URL"),
        ] {
            let Some(url) = crate::servers::with_servers::url(var) else {
                continue;
            };
            for strategy in ["optimistic", "pessimistic", "conditional"] {
                let m = exercise(strategy, flavour);
                assert!(m.load_cannot().is_empty());
                let opts = Options {
                    sql: url.clone(),
                    clients: None,
                    duration_ms: 10_000,
                    time_scale: 1.0,
                    seed: 1,
                };
                let l = m.load_on(&opts).expect("the load runs");
                let text = m.load_text(&l);
                assert!(l.broken.is_empty(), "{text}");
                assert_eq!(l.checked.len(), 2, "{text}");
                let all = l.tally.overall();
                assert_eq!(all.latency.len(), 30, "every buyer ended once: {text}");
                let bought = all.outcomes.get("bought").copied().unwrap_or(0);
                assert!(bought <= 10, "no oversell: {text}");
                if strategy != "optimistic" {
                    assert_eq!(bought, 10, "every unit sells: {text}");
                }
                assert!(all.lock_requests >= 10, "{text}");
                assert!(!l.counters.is_empty(), "{text}");
                let j = m.load_json(&l);
                assert_eq!(j["groups"][0]["requests"], 30, "{j}");
            }
        }
    }

    #[test]
    fn a_model_load_cannot_run_says_why_before_running() {
        let m: Model = "model \"m\"\nabout \"a mutex\"\ndb postgres\ntable t (id int primary key, v int)\nrow t (1, 0)\n\
                        mutex m\nprocess p[2] { lock m\nupdate t set v = v + 1 where id = 1\nunlock m }\nexpect holds"
            .parse()
            .expect("it parses");
        let why = m.load_cannot();
        assert!(why.iter().any(|w| w.contains("mutex")), "{why:?}");
        let opts = Options {
            sql: "postgres://nobody@127.0.0.1:1/none".into(),
            clients: None,
            duration_ms: 1,
            time_scale: 1.0,
            seed: 1,
        };
        assert!(m.load_on(&opts).unwrap_err().contains("mutex"));
    }
}

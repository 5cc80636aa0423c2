//! The command line: its exit codes (0 met, 1 not met, 2 bad input, 3 incomplete; over
//! several models 2 > 1 > 3 > 0), limits that end in an explicit incomplete verdict, bad
//! values as usage errors, and depth-first search saying its trace is not the shortest.

use std::process::Command;

fn interlock(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_interlock"))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(args)
        .output()
        .expect("the binary runs");
    (
        out.status.code().expect("an exit code"),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Checks the 100-buyer model under a limit that stops it at once; returns the output.
fn stopped_by(flag: &str, value: &str, verdict: &str) -> String {
    let model = "models/scale/buyers-100-for-update.model";
    let (code, out, _) = interlock(&["check", model, flag, value]);
    assert_eq!(code, 3, "{out}");
    assert!(out.contains(verdict), "{out}");
    out
}

#[test]
fn a_time_limit_ends_in_incomplete() {
    let out = stopped_by(
        "--time-limit",
        "0",
        "incomplete (stopped at --time-limit 0s)",
    );
    assert!(out.contains("NOT MET"), "{out}");
}

/// Each exit code, and the precedence over several models: bad input (2) over an
/// expectation not met (1) over incomplete (3) over met (0).
#[test]
fn exit_codes_say_what_happened() {
    let dir = std::env::temp_dir().join(format!("interlock-exit-{}", std::process::id()));
    let (empty, wrong, bad) = (
        dir.join("empty"),
        dir.join("wrong.model"),
        dir.join("bad.model"),
    );
    std::fs::create_dir_all(&empty).expect("a temporary folder");
    std::fs::write(
        &wrong,
        "model \"m\"\nabout \"a\"\nghost g = 0\nprocess p[2] { g += 1 }\n\
         invariant small: g <= 1\nexpect holds\n",
    )
    .expect("written");
    std::fs::write(&bad, "model \"m\"\nabout \"a\"\nproces p { }\n").expect("written");
    let (met, wrong, bad, empty) = (
        "models/no-lock/lost-update.model",
        wrong.to_str().expect("a UTF-8 path"),
        bad.to_str().expect("a UTF-8 path"),
        empty.to_str().expect("a UTF-8 path"),
    );
    let limit = ["--max-states", "3"];
    for (args, want) in [
        (vec![met], 0),
        (vec![wrong], 1),
        (vec![bad], 2),
        (vec![empty], 2),
        (vec!["no/such/file.model"], 2),
        ([vec![met], limit.to_vec()].concat(), 3),
        ([vec![met, wrong], limit.to_vec()].concat(), 1),
        (vec![met, wrong], 1),
        (vec![met, wrong, bad], 2),
        ([vec![met, bad], limit.to_vec()].concat(), 2),
    ] {
        let (code, out, err) = interlock(&[&["check", "--quiet"][..], &args].concat());
        assert_eq!(code, want, "{args:?}\n{out}{err}");
    }
    let (_, _, err) = interlock(&["check", empty]);
    assert!(err.contains("no .model file in"), "{err}");
    let (_, out, _) = interlock(&["check", "--help"]);
    for line in [
        "0  every model's expectation is met",
        "3  incomplete",
        "none` for no limit",
    ] {
        assert!(out.contains(line), "{line}: {out}");
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// A model that would exhaust memory ends incomplete, and the other models' rows still
/// print (the table is the last thing written).
#[test]
fn a_model_out_of_memory_leaves_the_others_rows() {
    let (code, out, _) = interlock(&[
        "check",
        "models/scale/buyers-100-atomic-update.model",
        "models/no-lock/lost-update.model",
        "--reduce",
        "none",
        "--max-memory",
        "150MiB",
        "--quiet",
    ]);
    assert_eq!(code, 3, "{out}");
    assert!(
        out.contains("incomplete (stopped at --max-memory 150 (MiB))"),
        "{out}"
    );
    assert!(out.contains("models/no-lock/lost-update.model"), "{out}");
    assert!(out.contains("1 of 2 models as expected"), "{out}");
}

#[test]
fn a_memory_limit_ends_in_incomplete() {
    stopped_by(
        "--max-memory",
        "1",
        "incomplete (stopped at --max-memory 1 (MiB))",
    );
}

#[test]
fn limits_take_units() {
    stopped_by(
        "--time-limit",
        "0m",
        "incomplete (stopped at --time-limit 0s)",
    );
    stopped_by(
        "--max-memory",
        "0GiB",
        "incomplete (stopped at --max-memory 0 (MiB))",
    );
}

#[test]
fn a_limit_with_an_unknown_unit_is_a_usage_error() {
    let model = "models/no-lock";
    let (code, _, err) = interlock(&["check", model, "--max-memory", "2GB"]);
    assert_eq!(code, 2);
    assert!(err.contains("unknown unit `GB`"), "{err}");
    let (code, _, err) = interlock(&["check", model, "--time-limit", "5ms"]);
    assert_eq!(code, 2);
    assert!(err.contains("`90s`, `10m` or `2h`"), "{err}");
}

#[test]
fn zero_threads_is_a_usage_error() {
    let (code, _, err) = interlock(&["check", "models/no-lock", "--threads", "0"]);
    assert_eq!(code, 2);
    assert!(err.contains("--threads must be at least 1"), "{err}");
}

#[test]
fn depth_first_says_its_counterexample_is_not_proven_shortest() {
    let (code, out, _) = interlock(&[
        "check",
        "models/no-lock/lost-update.model",
        "--dfs",
        "--fingerprints",
    ]);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("counterexample found depth-first (not proven shortest)"),
        "{out}"
    );
    // The counts wrap at 100 columns; the words are what matter.
    let joined = out.replace("\n   ", " ");
    assert!(
        joined.contains("fingerprints (chance of a missed state <"),
        "{out}"
    );
}

#[test]
fn every_reduction_setting_meets_the_expectations() {
    for reduce in ["none", "symmetry", "por", "all"] {
        let (code, out, _) = interlock(&["check", "models/mutex", "--quiet", "--reduce", reduce]);
        assert_eq!(code, 0, "--reduce {reduce}: {out}");
    }
}

#[test]
fn first_is_the_depth_first_search_and_shortest_excludes_it() {
    let (code, out, _) = interlock(&["check", "models/no-lock/lost-update.model", "--first"]);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("counterexample found depth-first (not proven shortest)"),
        "{out}"
    );
    let (code, out, _) = interlock(&["check", "models/no-lock/lost-update.model", "--shortest"]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("shortest counterexample"), "{out}");
    let (code, _, err) = interlock(&[
        "check",
        "models/no-lock/lost-update.model",
        "--shortest",
        "--first",
    ]);
    assert_eq!(code, 2);
    assert!(err.contains("cannot be used with"), "{err}");
}

//! The command line's search options: limits end in an explicit incomplete verdict (exit 1),
//! bad values are usage errors (exit 2), and depth-first search says its trace is not the
//! shortest.

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
    assert_eq!(code, 1, "{out}");
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
fn depth_first_says_its_counterexample_is_not_the_shortest() {
    let (code, out, _) = interlock(&[
        "check",
        "models/no-lock/lost-update.model",
        "--dfs",
        "--fingerprints",
    ]);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("depth-first (not the shortest) counterexample"),
        "{out}"
    );
    assert!(
        out.contains("fingerprints (chance of a missed state <"),
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

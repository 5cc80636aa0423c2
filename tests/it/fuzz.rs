//! The mutation fuzzer: every built-in model, mutated the ways a hurried hand or a hostile file
//! mutates text (lines deleted, duplicated and swapped, tokens swapped, numbers made extreme,
//! stray bytes, truncation), must give a clean error or a verdict: no panic, no abort, no
//! endless loop. The work per input is bounded by a step budget (the search's
//! `max_states`), never by the wall clock, so a run is the same on every machine. Where both
//! the reduced and the plain search finish, they must agree.
//!
//! `cargo test fuzz` runs a few thousand inputs; `cargo test fuzz -- --ignored` runs 100,000
//! and prints the distribution of exit codes the command line would give.

use interlock::explore::{Options, Outcome};
use interlock::Model;
use std::collections::BTreeMap;
use std::panic::{catch_unwind, AssertUnwindSafe};

/// The search's step budget per input: a mutated model is searched this far at most.
const FUEL: usize = 400;
/// And this long, in this much memory: one state of a mutated model can have ten thousand
/// successors of a ten-thousand-row table (`param hot_rows = 10000`), more than `FUEL`
/// states in one expansion, which the time and memory limits cut short.
const SECONDS: u64 = 1;
const MEBIBYTES: u64 = 2048;

/// A small deterministic generator (xorshift64*): the same inputs on every run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// Numbers a mutation puts in place of one: limits, off-by-ones, absurd sizes.
const EXTREMES: [&str; 12] = [
    "0",
    "-1",
    "1",
    "65536",
    "2147483647",
    "2147483648",
    "-2147483649",
    "9223372036854775807",
    "99999999999999999999999",
    "10000",
    "0ms",
    "999999999h",
];

/// Bytes a mutation inserts: brackets, quotes, operators, control and non-UTF-8 bytes.
const STRAYS: [&[u8]; 14] = [
    b"{",
    b"}",
    b"(",
    b")",
    b"\"",
    b"'",
    b";",
    b"$",
    b"--",
    b"\x1b[2J",
    b"\x00",
    b"\xff\xfe",
    b" and ",
    b"\n",
];

/// One mutation of `text`.
fn mutate(text: &[u8], rng: &mut Rng) -> Vec<u8> {
    let lines: Vec<&[u8]> = text.split(|&b| b == b'\n').collect();
    let join = |ls: Vec<&[u8]>| ls.join(&b'\n');
    match rng.below(8) {
        0 => {
            let mut ls = lines.clone();
            ls.remove(rng.below(ls.len()));
            join(ls)
        }
        1 => {
            let mut ls = lines.clone();
            let i = rng.below(ls.len());
            ls.insert(i, lines[i]);
            join(ls)
        }
        2 => {
            let mut ls = lines.clone();
            let (a, b) = (rng.below(ls.len()), rng.below(ls.len()));
            ls.swap(a, b);
            join(ls)
        }
        3 => swap_tokens(text, rng),
        4 => extreme_number(text, rng),
        5 => {
            let at = rng.below(text.len() + 1);
            let stray = STRAYS[rng.below(STRAYS.len())];
            [&text[..at], stray, &text[at..]].concat()
        }
        6 => text[..rng.below(text.len() + 1)].to_vec(),
        _ => {
            // A line repeated many times: many processes, many declarations.
            let i = rng.below(lines.len());
            let mut ls = lines.clone();
            for _ in 0..rng.below(200) {
                ls.insert(i, lines[i]);
            }
            join(ls)
        }
    }
}

/// The text's words (runs of non-space bytes), as byte ranges.
fn words(text: &[u8]) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut start = None;
    for (i, &b) in text.iter().chain(std::iter::once(&b' ')).enumerate() {
        match (b.is_ascii_whitespace(), start) {
            (false, None) => start = Some(i),
            (true, Some(s)) => {
                out.push((s, i));
                start = None;
            }
            _ => {}
        }
    }
    out
}

fn swap_tokens(text: &[u8], rng: &mut Rng) -> Vec<u8> {
    let w = words(text);
    if w.len() < 2 {
        return text.to_vec();
    }
    let (mut a, mut b) = (w[rng.below(w.len())], w[rng.below(w.len())]);
    if a.0 > b.0 {
        std::mem::swap(&mut a, &mut b);
    }
    if a == b || a.1 > b.0 {
        return text.to_vec();
    }
    [
        &text[..a.0],
        &text[b.0..b.1],
        &text[a.1..b.0],
        &text[a.0..a.1],
        &text[b.1..],
    ]
    .concat()
}

fn extreme_number(text: &[u8], rng: &mut Rng) -> Vec<u8> {
    let numbers: Vec<(usize, usize)> = words(text)
        .into_iter()
        .filter(|&(s, _)| text[s].is_ascii_digit())
        .collect();
    if numbers.is_empty() {
        return text.to_vec();
    }
    let (s, e) = numbers[rng.below(numbers.len())];
    let digits = s + text[s..e].iter().take_while(|b| b.is_ascii_digit()).count();
    let n = EXTREMES[rng.below(EXTREMES.len())].as_bytes();
    [&text[..s], n, &text[digits..]].concat()
}

/// What the command line would make of one input: its exit code (0 met, 1 not met, 2 bad
/// input, 3 incomplete), or "panic". Where the bounded search finished, the plain search
/// must agree with it (a disagreement is reported as a panic would be).
fn run(bytes: &[u8]) -> Result<u8, String> {
    let result = catch_unwind(AssertUnwindSafe(|| {
        let Ok(text) = std::str::from_utf8(bytes) else {
            return Ok(2);
        };
        let m = match Model::parse("fuzz.model", text) {
            Ok(m) => m,
            Err(e) => {
                // Rendering is part of the path a user meets.
                let _ = e.to_string();
                return Ok(2);
            }
        };
        let variants = match m.variants() {
            Ok(v) => v,
            Err(_) => return Ok(2),
        };
        let mut code = 0u8;
        for v in variants.iter().take(2) {
            let bounded = |o: Options| Options {
                max_states: Some(FUEL),
                time_limit: Some(SECONDS),
                max_memory: Some(MEBIBYTES),
                threads: 1,
                ..o
            };
            let reduced = v.check_with(bounded(Options::default()));
            let _ = reduced.render();
            let c = match reduced.outcome {
                Outcome::Incomplete { .. } => 3,
                _ if reduced.met() => 0,
                _ => 1,
            };
            if c != 3 {
                let full = v.check_with(bounded(Options::full()));
                if !matches!(full.outcome, Outcome::Incomplete { .. })
                    && full.summary() != reduced.summary()
                {
                    return Err(format!(
                        "reduced {} but plain {}",
                        reduced.summary(),
                        full.summary()
                    ));
                }
            }
            code = [code, c]
                .into_iter()
                .max_by_key(|c| [0, 2, 3, 1][*c as usize])
                .unwrap_or(0);
        }
        Ok(code)
    }));
    match result {
        Ok(r) => r,
        Err(payload) => Err(payload
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| payload.downcast_ref::<&str>().map(|s| (*s).to_string()))
            .unwrap_or_else(|| "a panic".into())),
    }
}

fn seeds() -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    for path in super::models::all_models() {
        out.push(std::fs::read(&path).expect("a built-in model"));
    }
    out
}

/// Mutates the built-in models `inputs` times (one to three mutations each); returns the
/// counts per exit code. Panics with every failing input.
fn fuzz(inputs: usize, seed: u64) -> BTreeMap<u8, usize> {
    let seeds = seeds();
    let mut rng = Rng(seed);
    let mut counts = BTreeMap::new();
    let mut failures = Vec::new();
    // The panics the fuzzer provokes on purpose are reported, not printed.
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    for _ in 0..inputs {
        let mut text = seeds[rng.below(seeds.len())].clone();
        for _ in 0..=rng.below(3) {
            text = mutate(&text, &mut rng);
        }
        match run(&text) {
            Ok(code) => *counts.entry(code).or_insert(0) += 1,
            Err(e) => failures.push(format!("{e}\n{}", String::from_utf8_lossy(&text))),
        }
    }
    std::panic::set_hook(hook);
    assert!(
        failures.is_empty(),
        "{} of {inputs} inputs failed; the first:\n{}",
        failures.len(),
        failures[0]
    );
    counts
}

#[test]
fn mutated_models_give_an_error_or_a_verdict() {
    let counts = fuzz(1_500, 0x5eed_1234_abcd_0001);
    // The mutations reach both sides: errors and verdicts.
    assert!(counts.get(&2).copied().unwrap_or(0) > 100, "{counts:?}");
    assert!(counts.get(&0).copied().unwrap_or(0) > 100, "{counts:?}");
}

#[test]
#[ignore = "long: 100,000 inputs; run with `cargo test --release fuzz -- --ignored`"]
fn mutated_models_give_an_error_or_a_verdict_long() {
    let started = std::time::Instant::now();
    let counts = fuzz(100_000, 0x5eed_1234_abcd_0002);
    println!(
        "100000 inputs in {:.0} s, exit codes: {counts:?}, panics 0, hangs 0",
        started.elapsed().as_secs_f64()
    );
}

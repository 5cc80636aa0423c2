//! The replay token: a path written with the step names a person reads in a trace, every
//! step explicit — `buyer[0] buyer[1] tick 100ms resume worker fault crash buyer[1]`, a step
//! repeated in a row written once with its count (`client[1]*10`, `tick 200ms*3`) — printed
//! under every counterexample and read back by `check --path`, so that any trace can be
//! replayed, shared and edited (docs/json.md, "Replay tokens").
//!
//! A step is one of: a process name (`buyer[0]`, or `a` for a group of one: its next step);
//! `check P` (a PostgreSQL deadlock check falls due), `timeout P` (a lock wait times out),
//! `renew P` (a watchdog renewal), `resume P` (a pause ends), `finish P` (a ranged delay ends
//! early); `tick D` (time passes by `D`, as the trace shows it: `100ms`, `2s`); `fault KIND P`
//! (`crash`, `pause`, `hang`, `timeout`), `drift P ahead|behind`, `replicate NODE`,
//! `failover NODE`, `jump SERVER`. A fault kind declared twice for one group is numbered in
//! declaration order: `crash#2`. In a liveness counterexample, `loop` marks where the steps
//! that repeat forever begin.

use super::describe::{ms, node_name};
use super::Trace;
use crate::exec::observe::{Event, Record};
use crate::exec::{apply, Choice};
use crate::ir::{FaultKind, Model};
use crate::ir::schedule::step_width;
use crate::ir::value::Pid;
use crate::world::State;

/// A token that does not fit the model or the path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TokenError {
    /// The step it is about, from 1.
    pub step: usize,
    /// What is wrong with it.
    pub message: String,
    /// What would fit.
    pub hint: Option<String>,
}

impl std::fmt::Display for TokenError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "step {} of the path: {}", self.step, self.message)?;
        if let Some(h) = &self.hint {
            write!(f, "\n  hint: {h}")?;
        }
        Ok(())
    }
}

impl std::error::Error for TokenError {}

/// The token of a trace's path, a step repeated in a row written once with its count.
#[must_use]
pub fn render(m: &Model, t: &Trace) -> String {
    compact(steps(m, t)).join(" ")
}

/// The most times `*N` may repeat a step: a token names a path, never a search.
pub const MOST_REPEATS: usize = 100_000;

/// Runs of one step written once with their count: `client[1]*10`, `tick 200ms*3`.
#[must_use]
pub fn compact(steps: Vec<String>) -> Vec<String> {
    let mut out: Vec<(String, usize)> = Vec::new();
    for s in steps {
        match out.last_mut() {
            Some((last, n)) if *last == s && s != "loop" => *n += 1,
            _ => out.push((s, 1)),
        }
    }
    out.into_iter()
        .map(|(s, n)| if n == 1 { s } else { format!("{s}*{n}") })
        .collect()
}

/// A token's words with every `STEP*N` written out `N` times (`tick 200ms*3` is three
/// ticks, `replicate cache/replica1*2` two replications), or why not. A step's words are
/// those [`step_width`] counts; the `*N` stands on its last.
fn expand(token: &str) -> Result<Vec<&str>, TokenError> {
    let words: Vec<&str> = token.split_whitespace().collect();
    let mut out = Vec::with_capacity(words.len());
    let (mut at, mut steps) = (0, 0);
    while at < words.len() {
        let width = step_width(&words[at..]).max(1);
        steps += usize::from(words[at] != "loop");
        let step = &words[at..at + width];
        at += width;
        let last = step[width - 1];
        let Some((base, count)) = last.rsplit_once('*') else {
            out.extend_from_slice(step);
            continue;
        };
        let n: usize = match count.parse() {
            Ok(n) if (1..=MOST_REPEATS).contains(&n) && !base.is_empty() => n,
            _ => {
                return Err(TokenError {
                    step: steps,
                    message: format!("`{}` is not a step repeated a number of times", step.join(" ")),
                    hint: Some(format!(
                        "write `STEP*N` with N from 1 to {MOST_REPEATS}: `client[1]*3`, `tick 200ms*2`"
                    )),
                })
            }
        };
        steps += n - 1;
        for _ in 0..n {
            out.extend_from_slice(&step[..width - 1]);
            out.push(base);
        }
    }
    Ok(out)
}

/// The token's steps, one string each (`tick 100ms` is one), with `loop` before the first
/// step of a lasso's loop.
#[must_use]
pub fn steps(m: &Model, t: &Trace) -> Vec<String> {
    let mut out = Vec::with_capacity(t.steps.len() + 1);
    for (i, s) in t.steps.iter().enumerate() {
        if t.loop_start == Some(i) {
            out.push("loop".to_string());
        }
        let ticks: u64 = s
            .events
            .iter()
            .map(|e| match e {
                Event::TimePasses { ticks } => u64::from(*ticks),
                _ => 0,
            })
            .sum();
        out.push(name(m, s.choice, ticks));
    }
    out
}

/// A token read back: the path, and where its loop begins (`loop`), if it has one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Path {
    /// The steps.
    pub choices: Vec<Choice>,
    /// Where `loop` stood: the steps from this index on repeat forever.
    pub loop_start: Option<usize>,
}

/// The name of one step; `ticks` is how long a `tick` lets time pass.
#[must_use]
pub fn name(m: &Model, c: Choice, ticks: u64) -> String {
    let p = |pid: Pid| m.process_name(pid);
    match c {
        Choice::Proc(pid) => p(pid),
        Choice::Check(pid) => format!("check {}", p(pid)),
        Choice::Timeout(pid) => format!("timeout {}", p(pid)),
        Choice::Tick => format!("tick {}", super::describe::passed(m, ticks)),
        Choice::Pass(dt) => format!("pass {}", ms(m, u64::from(dt))),
        Choice::Restart(pid) => format!("restart {}", p(pid)),
        Choice::Pick { pid, value } => format!("pick {} {value}", p(pid)),
        Choice::Renew(pid) => format!("renew {}", p(pid)),
        Choice::Resume(pid) => format!("resume {}", p(pid)),
        Choice::Finish(pid) => format!("finish {}", p(pid)),
        Choice::Fault { fault, pid } => format!("fault {} {}", fault_name(m, fault), p(pid)),
        Choice::Drift { fault, pid, ahead } => {
            let dir = if ahead { "ahead" } else { "behind" };
            format!("{} {} {dir}", fault_name(m, fault), p(pid))
        }
        Choice::Replicate(node) => format!("replicate {}", node_name(m, node)),
        Choice::Failover { fault, node } => {
            format!("{} {}", fault_name(m, fault), node_name(m, node))
        }
        Choice::Partition { fault, in_flight } => {
            let server = match m.faults[fault as usize].kind {
                FaultKind::Partition { server, .. } => m.redis[server as usize].name.as_str(),
                _ => "?",
            };
            let late = if in_flight { " in-flight" } else { "" };
            format!("{} {server}{late}", fault_name(m, fault))
        }
        Choice::ServerFault { fault } => {
            let server = match m.faults[fault as usize].kind {
                FaultKind::ClockJump { server, .. }
                | FaultKind::Restart { server, .. }
                | FaultKind::Partition { server, .. } => {
                    m.redis[server as usize].name.as_str()
                }
                _ => "?",
            };
            format!("{} {server}", fault_name(m, fault))
        }
    }
}

/// The word a fault kind is declared with.
fn kind_word(k: &FaultKind) -> &'static str {
    match k {
        FaultKind::Crash => "crash",
        FaultKind::Pause { .. } => "pause",
        FaultKind::Hang => "hang",
        FaultKind::Drift { .. } => "drift",
        FaultKind::LostReply => "timeout",
        FaultKind::ClockJump { .. } => "jump",
        FaultKind::Restart { .. } => "restart",
        FaultKind::Partition { .. } => "partition",
        FaultKind::Failover { .. } => "failover",
    }
}

/// Where a fault applies: its group, or its server.
fn target(k: &FaultKind, group: usize) -> (bool, usize) {
    match k {
        FaultKind::ClockJump { server, .. }
        | FaultKind::Restart { server, .. }
        | FaultKind::Partition { server, .. }
        | FaultKind::Failover { server } => (true, *server as usize),
        _ => (false, group),
    }
}

/// `crash`, or `crash#2` for the second crash fault declared for the same group.
fn fault_name(m: &Model, fault: u16) -> String {
    let f = &m.faults[fault as usize];
    let word = kind_word(&f.kind);
    let same: Vec<usize> = (0..m.faults.len())
        .filter(|&i| {
            let g = &m.faults[i];
            kind_word(&g.kind) == word && target(&g.kind, g.group) == target(&f.kind, f.group)
        })
        .collect();
    if same.len() < 2 {
        return word.to_string();
    }
    let k = same.iter().position(|&i| i == fault as usize).unwrap_or(0);
    format!("{word}#{}", k + 1)
}

/// Reads a token back into the path it names, checking each step against the model as it
/// goes: the step must be enabled where it stands, and a `tick` must pass the time it says.
///
/// # Errors
/// The first step that does not fit, with why and usually what would.
pub fn path(m: &Model, token: &str) -> Result<Path, TokenError> {
    let words = expand(token)?;
    let mut s = State::initial(m);
    let mut path = Vec::new();
    let mut looped: Option<(usize, State)> = None;
    let mut at = 0;
    while at < words.len() {
        let step = path.len() + 1;
        if words[at] == "loop" {
            if looped.is_some() {
                return Err(TokenError {
                    step,
                    message: "a second `loop`".into(),
                    hint: Some("a lasso has one loop: the steps after `loop` repeat".into()),
                });
            }
            looped = Some((path.len(), s.clone()));
            at += 1;
            continue;
        }
        let fail = |message: String, hint: Option<String>| TokenError {
            step,
            message,
            hint,
        };
        let (c, want, used) =
            read_step(m, &words[at..], &s).map_err(|(msg, hint)| fail(msg, hint))?;
        let mut rec = Record::default();
        let Some(next) = apply(m, &s, c, &mut rec) else {
            let here = enabled_names(m, &s);
            return Err(fail(
                format!("`{}` cannot happen here", words[at..at + used].join(" ")),
                Some(format!("what can happen after step {}: {here}", step - 1)),
            ));
        };
        if let Some(want) = want {
            let passed: u64 = rec
                .events
                .iter()
                .map(|e| match e {
                    Event::TimePasses { ticks } => u64::from(*ticks),
                    _ => 0,
                })
                .sum();
            let shown = super::describe::passed(m, passed);
            if shown != want {
                return Err(fail(
                    format!("time passes {shown} here, not {want}"),
                    Some(format!("write `tick {shown}`")),
                ));
            }
        }
        path.push(c);
        s = next;
        at += used;
    }
    if let Some((start, from)) = &looped {
        if *from != s || *start == path.len() {
            return Err(TokenError {
                step: path.len(),
                message: format!(
                    "the loop that starts at step {} does not come back to where it started",
                    start + 1
                ),
                hint: Some("the steps after `loop` must lead back to the state before it".into()),
            });
        }
    }
    Ok(Path {
        choices: path,
        loop_start: looped.map(|(k, _)| k),
    })
}

/// The names of the steps that can happen in `s`, for a hint.
pub(crate) fn enabled_names(m: &Model, s: &State) -> String {
    let mut succ = Vec::new();
    crate::exec::successors(m, s, &mut succ);
    if succ.is_empty() {
        return "nothing: the run is over".into();
    }
    let names: Vec<String> = succ
        .iter()
        .map(|(c, _)| match c {
            Choice::Tick => "tick …".to_string(),
            c => name(m, *c, 0),
        })
        .collect();
    names.join(", ")
}

type Read = (Choice, Option<String>, usize);

/// One step at the start of `words`: its choice, the time a `tick` claims, and how many
/// words it took.
pub(crate) fn read_step(m: &Model, words: &[&str], s: &State) -> Result<Read, (String, Option<String>)> {
    let arg = |i: usize| -> Result<&str, (String, Option<String>)> {
        words
            .get(i)
            .copied()
            .ok_or_else(|| (format!("`{}` needs more after it", words[0]), None))
    };
    let process = |w: &str| {
        pid_named(m, w).ok_or_else(|| {
            let names: Vec<String> = (0..m.processes.len())
                .map(|i| m.process_name(Pid(i as u16)))
                .collect();
            (
                format!("no process is named `{w}`"),
                Some(format!("the processes are {}", names.join(", "))),
            )
        })
    };
    let timer = |c: fn(Pid) -> Choice| -> Result<Read, (String, Option<String>)> {
        Ok((c(process(arg(1)?)?), None, 2))
    };
    match words[0] {
        "check" => timer(Choice::Check),
        "timeout" => timer(Choice::Timeout),
        "renew" => timer(Choice::Renew),
        "resume" => timer(Choice::Resume),
        "finish" => timer(Choice::Finish),
        "tick" => Ok((Choice::Tick, Some(arg(1)?.to_string()), 2)),
        w if w.starts_with("restart#") || w == "restart" && server_named(m, arg(1)?) => {
            let fault = server_fault_named(m, w, arg(1)?)?;
            Ok((Choice::ServerFault { fault }, None, 2))
        }
        "restart" => timer(Choice::Restart),
        "pick" => {
            let pid = process(arg(1)?)?;
            let written = arg(2)?;
            let value = written.parse::<i32>().map_err(|_| {
                (
                    format!("`pick {} {written}`: not a whole number", words[1]),
                    Some("a pick names the value chosen, like `pick buyer[1] 3`".to_string()),
                )
            })?;
            Ok((Choice::Pick { pid, value }, None, 3))
        }
        "pass" => {
            let written = arg(1)?;
            let ticks = ticks_written(m, written).ok_or_else(|| {
                (
                    format!("`pass {written}`: not a time this model can pass"),
                    Some(format!(
                        "write a whole number of {} ticks, like `pass {}`",
                        ms(m, 1),
                        ms(m, 1)
                    )),
                )
            })?;
            Ok((Choice::Pass(ticks), Some(written.to_string()), 2))
        }
        "fault" => {
            let fault = fault_named(m, arg(1)?)?;
            Ok((
                Choice::Fault {
                    fault,
                    pid: process(arg(2)?)?,
                },
                None,
                3,
            ))
        }
        "replicate" => Ok((Choice::Replicate(node_named(m, arg(1)?)?), None, 2)),
        w if w.starts_with("drift") => {
            let fault = fault_named(m, w)?;
            let pid = process(arg(1)?)?;
            let ahead = match arg(2)? {
                "ahead" => true,
                "behind" => false,
                other => return Err((format!("`{other}`: a drift is `ahead` or `behind`"), None)),
            };
            Ok((Choice::Drift { fault, pid, ahead }, None, 3))
        }
        w if w.starts_with("failover") => {
            let fault = fault_named(m, w)?;
            Ok((
                Choice::Failover {
                    fault,
                    node: node_named(m, arg(1)?)?,
                },
                None,
                2,
            ))
        }
        w if w.starts_with("partition") => {
            let fault = server_fault_named(m, w, arg(1)?)?;
            let in_flight = words.get(2) == Some(&"in-flight");
            let used = if in_flight { 3 } else { 2 };
            Ok((Choice::Partition { fault, in_flight }, None, used))
        }
        w if w.starts_with("jump") => {
            let fault = server_fault_named(m, w, arg(1)?)?;
            Ok((Choice::ServerFault { fault }, None, 2))
        }
        w => {
            let pid = process(w).map_err(|(msg, hint)| {
                let _ = s;
                (
                    format!("{msg}, and `{w}` is no step"),
                    hint.map(|h| {
                        format!(
                            "a step is a process name or `tick D`, `check P`, `timeout P`, \
                             `renew P`, `resume P`, `finish P`, `pass D`, `restart P`, `fault KIND P`, `drift P ahead`, \
                             `replicate NODE`, `failover NODE`, `jump SERVER`; {h}"
                        )
                    }),
                )
            })?;
            Ok((Choice::Proc(pid), None, 1))
        }
    }
}

/// `300ms` or `2s` as ticks of the model, if it is a whole number of them.
fn ticks_written(m: &Model, w: &str) -> Option<u32> {
    let (num, scale) = match w.strip_suffix("ms") {
        Some(n) => (n, 1),
        None => (w.strip_suffix('s')?, 1000),
    };
    let ms = num.parse::<u64>().ok()?.checked_mul(scale)?;
    let tick = m.tick_ms.max(1);
    (ms % tick == 0).then_some(ms / tick)?.try_into().ok()
}

pub(crate) fn pid_named(m: &Model, w: &str) -> Option<Pid> {
    (0..m.processes.len())
        .map(|i| Pid(i as u16))
        .find(|&p| m.process_name(p) == w)
}

fn fault_named(m: &Model, w: &str) -> Result<u16, (String, Option<String>)> {
    (0..m.faults.len() as u16)
        .find(|&f| fault_name(m, f) == w)
        .ok_or_else(|| {
            let names: Vec<String> = (0..m.faults.len() as u16)
                .map(|f| fault_name(m, f))
                .collect();
            let hint = if names.is_empty() {
                "the model declares no fault".to_string()
            } else {
                format!("the model's faults are {}", names.join(", "))
            };
            (format!("no fault is named `{w}`"), Some(hint))
        })
}

/// The fault `w` (`jump`, `jump#2`) declared for the Redis server named `server`.
fn server_fault_named(m: &Model, w: &str, server: &str) -> Result<u16, (String, Option<String>)> {
    let on = |f: &crate::ir::Fault| match target(&f.kind, f.group) {
        (true, s) => m.redis[s].name == server,
        _ => false,
    };
    (0..m.faults.len() as u16)
        .find(|&f| fault_name(m, f) == w && on(&m.faults[f as usize]))
        .ok_or_else(|| {
            let names: Vec<String> = (0..m.faults.len() as u16)
                .filter(|&f| target(&m.faults[f as usize].kind, 0).0)
                .map(|f| match m.faults[f as usize].kind {
                    FaultKind::Partition { .. } => name(
                        m,
                        Choice::Partition {
                            fault: f,
                            in_flight: false,
                        },
                        0,
                    ),
                    _ => name(m, Choice::ServerFault { fault: f }, 0),
                })
                .collect();
            let hint = if names.is_empty() {
                "the model declares no clock jump, restart or partition".to_string()
            } else {
                format!("the model's server faults are {}", names.join(", "))
            };
            (format!("no fault `{w}` of a server `{server}`"), Some(hint))
        })
}

fn node_named(m: &Model, w: &str) -> Result<u16, (String, Option<String>)> {
    (0..m.redis_nodes() as u16)
        .find(|&n| node_name(m, n) == w)
        .ok_or_else(|| {
            let names: Vec<String> = (0..m.redis_nodes() as u16)
                .map(|n| node_name(m, n))
                .collect();
            (
                format!("no Redis node is named `{w}`"),
                Some(format!("the nodes are {}", names.join(", "))),
            )
        })
}

/// Whether a Redis server has this name (`restart cache` restarts a server, `restart
/// buyer[0]` a process's next request).
fn server_named(m: &Model, name: &str) -> bool {
    m.redis.iter().any(|r| r.name == name)
}

//! The trace as JSON, for tools and replay.

use super::describe::describe;
use super::Trace;
use crate::exec::Choice;
use crate::ir::Model;
use serde_json::{json, Value};

/// One object per step: who acted (or the environment), the stable choice, what it did, what
/// changed, the model time after it.
#[must_use]
pub fn render(m: &Model, t: &Trace) -> Value {
    let steps: Vec<Value> = t
        .steps
        .iter()
        .map(|s| {
            let d = describe(m, s);
            json!({
                "actor": d.actor.map(|p| m.process_name(p)),
                "choice": choice(m, s.choice),
                "did": d.doing,
                "world": d.world,
                "time_ms": s.time * m.tick_ms,
            })
        })
        .collect();
    let cycle: Option<Vec<Value>> = t.cycle.as_ref().map(|c| {
        c.iter()
            .map(|e| {
                json!({
                    "waiter": m.process_name(e.waiter),
                    "holder": m.process_name(e.holder),
                })
            })
            .collect()
    });
    json!({
        "failure": t.failure.name(m),
        "steps": steps,
        "context_switches": t.context_switches(),
        "wait_cycle": cycle,
        "loop_start": t.loop_start,
    })
}

/// The stable name of a choice: `buyer[0]`, `tick`, `crash#0:buyer[1]`.
#[must_use]
pub fn choice(m: &Model, c: Choice) -> String {
    match c {
        Choice::Proc(p) => m.process_name(p),
        Choice::Check(p) => format!("check:{}", m.process_name(p)),
        Choice::Timeout(p) => format!("timeout:{}", m.process_name(p)),
        Choice::Tick => "tick".into(),
        Choice::Renew(p) => format!("renew:{}", m.process_name(p)),
        Choice::Resume(p) => format!("resume:{}", m.process_name(p)),
        Choice::Fault { fault, pid } => format!("fault#{fault}:{}", m.process_name(pid)),
        Choice::Replicate(n) => format!("replicate:{n}"),
        Choice::Failover { fault, node } => format!("failover#{fault}:{node}"),
        Choice::Jump { fault } => format!("jump#{fault}"),
        Choice::Drift { fault, pid, ahead } => format!(
            "drift#{fault}:{}:{}",
            m.process_name(pid),
            if ahead { "ahead" } else { "behind" }
        ),
        Choice::Finish(p) => format!("finish:{}", m.process_name(p)),
    }
}

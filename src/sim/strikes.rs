//! Faults in a simulated run: each unit of a fault's budget strikes once, at a moment drawn
//! uniformly over the run's duration (and a process of its group drawn alike; a drift's
//! direction and a failover's replica too). A strike happens at the first moment from then
//! on that the checker would allow it (a `during` region entered, a replica alive); one not
//! possible before the end of the duration is dropped. A pause lasts a length drawn
//! uniformly up to its bound.

use super::sample::Sampler;
use crate::exec::Choice;
use crate::ir::value::Pid;
use crate::ir::{FaultKind, Model};
use crate::world::State;

/// A fault waiting for its moment.
#[derive(Clone, Copy, Debug)]
pub struct Strike {
    pub at: u64,
    /// The fault's choice; a failover's replica is drawn when it strikes (`node` unused).
    pub choice: Choice,
}

/// The strikes of a run, in the order they were drawn (faults in declaration order).
pub fn draw(m: &Model, rng: &mut Sampler, horizon: u64) -> Vec<Strike> {
    let mut out = Vec::new();
    let span = horizon.max(1) as usize;
    for (f, fault) in m.faults.iter().enumerate() {
        let members: Vec<Pid> = (0..m.processes.len())
            .filter(|&p| m.processes[p].group == fault.group)
            .map(|p| Pid(p as u16))
            .collect();
        let on_server = matches!(
            fault.kind,
            FaultKind::ClockJump { .. }
                | FaultKind::Restart { .. }
                | FaultKind::Failover { .. }
                | FaultKind::Partition { .. }
        );
        if !on_server && members.is_empty() {
            continue;
        }
        for _ in 0..fault.budget {
            let at = rng.pick(span) as u64;
            let fault = f as u16;
            let choice = match m.faults[f].kind {
                FaultKind::ClockJump { .. } | FaultKind::Restart { .. } => {
                    Choice::ServerFault { fault }
                }
                FaultKind::Failover { .. } => Choice::Failover { fault, node: 0 },
                FaultKind::Partition { .. } => Choice::Partition {
                    fault,
                    in_flight: rng.pick(2) == 0,
                },
                FaultKind::Drift { .. } => Choice::Drift {
                    fault,
                    pid: members[rng.pick(members.len())],
                    ahead: rng.pick(2) == 0,
                },
                _ => Choice::Fault {
                    fault,
                    pid: members[rng.pick(members.len())],
                },
            };
            out.push(Strike { at, choice });
        }
    }
    out
}

/// The choice a due strike makes in `s`: a failover picks one of the live replicas.
pub fn resolve(m: &Model, s: &State, strike: Strike, rng: &mut Sampler) -> Option<Choice> {
    match strike.choice {
        Choice::Failover { fault, .. } => {
            let FaultKind::Failover { server } = m.faults[fault as usize].kind else {
                return None;
            };
            let replicas = s.replicas(m, server);
            if replicas.is_empty() {
                return None;
            }
            let node = replicas[rng.pick(replicas.len())] as u16;
            Some(Choice::Failover { fault, node })
        }
        c => Some(c),
    }
}

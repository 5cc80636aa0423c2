//! What the simulator reads off a model's programs once, before its runs.

use crate::ir::value::Pid;
use crate::ir::{BinOp, Expr, Model, OpKind, Value};

/// An op that starts or repeats a counted loop (`repeat`, `retry`) on a hidden local.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Round {
    /// `#c = 0`: the loop is entered.
    Enter(u16),
    /// `#c = #c + 1`: a round begins.
    Next(u16),
}

/// Per group, per op: the round it marks, if any.
#[derive(Clone, Debug, Default)]
pub struct Plan {
    rounds: Vec<Vec<Option<Round>>>,
    /// The model has Redis replicas: replication steps are tried whenever nothing else is due.
    pub replicas: bool,
}

impl Plan {
    #[must_use]
    pub fn new(m: &Model) -> Self {
        let rounds = m
            .groups
            .iter()
            .map(|g| {
                let p = &g.program;
                let counted = |l: u16| {
                    let name = &p.locals[l as usize];
                    name.starts_with("#repeat") || name.starts_with("#retry")
                };
                p.ops.iter().map(|op| round(&op.kind).filter(|r| counted(local(*r)))).collect()
            })
            .collect();
        Plan {
            rounds,
            replicas: m.redis.iter().any(|r| r.replicas > 0),
        }
    }

    /// The round marks of `p`'s program.
    #[must_use]
    pub fn rounds(&self, m: &Model, p: Pid) -> &[Option<Round>] {
        &self.rounds[m.processes[p.index()].group]
    }
}

fn local(r: Round) -> u16 {
    match r {
        Round::Enter(l) | Round::Next(l) => l,
    }
}

fn round(op: &OpKind) -> Option<Round> {
    let OpKind::Assign { local, expr } = op else {
        return None;
    };
    match expr {
        Expr::Lit(Value::Int(0)) => Some(Round::Enter(*local)),
        Expr::Binary(BinOp::Add, a, b)
            if **a == Expr::Local(*local) && **b == Expr::Lit(Value::Int(1)) =>
        {
            Some(Round::Next(*local))
        }
        _ => None,
    }
}

//! Windows that `timing bounded` keeps shut: under it, time passes only when no process can
//! step, so between a command on a key that expires and the process's next step (with no
//! delay between) the key never expires. The GET-then-DEL release holds so, and fails once
//! time may pass there (`timing async`, or a pause): a proof under bounded timing says
//! nothing about that window, and the verdict says so.

use super::{text, Warning};
use crate::ir::value::Sym;
use crate::ir::{FaultKind, Model, Op, OpKind, Program, RedisCmd, Timing};

/// One warning per group: its first command on an expiring key that the next step follows
/// with no time between, under `timing bounded`, unless a pause fault may strike there.
pub fn shut_windows(m: &Model, out: &mut Vec<Warning>) {
    if m.timing != Timing::Bounded {
        return;
    }
    let expiring = expiring_keys(m);
    if expiring.is_empty() {
        return;
    }
    for (g, group) in m.groups.iter().enumerate() {
        // A pause strikes between two steps, where the process stands: at the next visible
        // op, or (steps split at each reply) just after the reply.
        let paused = |j: usize| {
            m.faults.iter().any(|f| {
                f.group == g
                    && matches!(f.kind, FaultKind::Pause { .. })
                    && f.during.is_none_or(|(a, b)| (a..b).contains(&(j as u32)))
            })
        };
        let p = &group.program;
        let found = (0..p.ops.len()).find_map(|i| {
            let key = touched(&p.ops[i], &expiring)?;
            let j = next_step(p, i)?;
            if paused(if m.split_steps { i + 1 } else { j }) {
                return None;
            }
            Some((i, j, key))
        });
        let Some((i, j, key)) = found else {
            continue;
        };
        let (a, b) = (&p.ops[i], &p.ops[j]);
        let line = m.line_col_of(b.span).0;
        out.push(Warning {
            message: format!(
                "{}: under `timing bounded` no time passes between `{}` and `{}` (line {line}), \
                 so `{}` never expires between them",
                group.name,
                shown(m, a),
                shown(m, b),
                m.symbol(key)
            ),
            span: Some(a.span),
            hint: Some(
                "`timing async` lets any delay fall between two steps (a slow network, a \
                 scheduler); a `fault pause` on the group lets one fall there"
                    .into(),
            ),
        });
    }
}

/// An op as written; an `atomic` block by its first command.
fn shown(m: &Model, op: &Op) -> String {
    match &op.kind {
        OpKind::Atomic { body, .. } if !body.is_empty() => {
            format!("atomic {{ {} …", text(m, body[0].span))
        }
        _ => text(m, op.span),
    }
}

/// The keys some command or declaration gives a TTL (a watchdog's key too).
fn expiring_keys(m: &Model) -> Vec<Sym> {
    let mut keys: Vec<Sym> = m
        .keys
        .iter()
        .filter(|k| k.ttl.is_some())
        .map(|k| k.key)
        .collect();
    let mut visit = |op: &Op| match &op.kind {
        OpKind::Redis { cmd, .. } | OpKind::AwaitRedis { cmd, .. } => match cmd {
            RedisCmd::Set {
                key, px: Some(_), ..
            }
            | RedisCmd::Pexpire { key, .. } => {
                keys.push(*key);
            }
            _ => {}
        },
        OpKind::WatchdogStart { key, .. } => keys.push(*key),
        _ => {}
    };
    for group in &m.groups {
        for op in &group.program.ops {
            visit(op);
            if let OpKind::Atomic { body, .. } = &op.kind {
                body.iter().for_each(&mut visit);
            }
        }
    }
    keys.sort_unstable();
    keys.dedup();
    keys
}

/// The expiring key a visible op works on, if any and it does not delete it (after a `DEL`
/// nothing is left to expire).
fn touched(op: &Op, expiring: &[Sym]) -> Option<Sym> {
    let on = |cmd: &RedisCmd| Some(cmd.key()).filter(|k| expiring.binary_search(k).is_ok());
    let cmds: Vec<&RedisCmd> = match &op.kind {
        OpKind::Redis { cmd, .. } | OpKind::AwaitRedis { cmd, .. } => vec![cmd],
        OpKind::Atomic { body, .. } => body
            .iter()
            .filter_map(|op| match &op.kind {
                OpKind::Redis { cmd, .. } => Some(cmd),
                _ => None,
            })
            .collect(),
        _ => return None,
    };
    let key = cmds.iter().find_map(|c| on(c))?;
    let deletes = cmds
        .iter()
        .any(|c| matches!(c, RedisCmd::Del { key: k } if *k == key));
    (!deletes).then_some(key)
}

/// The first visible op (by place) that the process may reach from op `i` through local code
/// alone: no delay, no end between.
fn next_step(p: &Program, i: usize) -> Option<usize> {
    let mut seen = vec![false; p.ops.len()];
    let mut todo = vec![i + 1];
    let mut best: Option<usize> = None;
    while let Some(k) = todo.pop() {
        if k >= p.ops.len() || std::mem::replace(&mut seen[k], true) {
            continue;
        }
        let op = &p.ops[k];
        match &op.kind {
            OpKind::Work { .. } | OpKind::Sleep { .. } | OpKind::SleepFor { .. } => {}
            OpKind::Return { .. } | OpKind::Raise { .. } => {}
            OpKind::Jump(t) => todo.push(*t as usize),
            OpKind::JumpUnless { target, .. } => todo.extend([k + 1, *target as usize]),
            kind if kind.is_visible() || matches!(kind, OpKind::Pick { .. }) => {
                best = Some(best.map_or(k, |b| b.min(k)));
            }
            _ => todo.push(k + 1),
        }
    }
    best
}

//! Lowering of the workload: `latency` lines, delays' distributions, process arrivals and
//! `param` lines into [`crate::ir::workload::Workload`]. Lengths stay in milliseconds
//! until [`to_ticks`].

use super::ast::{ArrivalAst, Decl, DeclKind, DelayAst, DistAst, Name};
use super::diag::Diagnostic;
use super::scope::Cx;
use crate::ir::workload::{Arrival, Dist, Draw, Latency, Pool, Spent, Workload};

/// Records a delay's distribution as a draw (its lengths count toward the tick); returns
/// its id.
pub fn draw(cx: &mut Cx, delay: &DelayAst, spent: Spent) -> u16 {
    for ms in [delay.lo, delay.hi] {
        if ms > 0 {
            cx.durations.push(ms);
        }
    }
    let ms = |v: u64| v as u32;
    let dist = match delay.dist {
        DistAst::Range if delay.lo == delay.hi => Dist::Fixed(ms(delay.lo)),
        DistAst::Range => Dist::Uniform {
            lo: ms(delay.lo),
            hi: ms(delay.hi),
        },
        DistAst::Exponential { mean_us } => Dist::Exponential {
            mean: mean_us as f64 / 1000.0,
            max: ms(delay.hi),
        },
        DistAst::LogNormal { median_us, p99_us } => Dist::LogNormal {
            median: median_us as f64 / 1000.0,
            p99: p99_us as f64 / 1000.0,
            max: ms(delay.hi),
        },
    };
    cx.workload.draws.push(Draw { dist, spent });
    (cx.workload.draws.len() - 1) as u16
}

/// The `latency` and `param` lines; reports a kind priced twice.
pub fn declarations(cx: &mut Cx, decls: &[Decl]) {
    for decl in decls {
        match &decl.kind {
            DeclKind::Latency { kind, delay } => {
                if cx.workload.latency.iter().any(|(k, _)| k == kind) {
                    let msg = format!("`latency {}` is declared twice", kind.name());
                    let d = Diagnostic::new(msg, decl.span, "declared again")
                        .with_hint("keep one `latency` line for each kind of operation");
                    cx.report(d);
                    continue;
                }
                let id = draw(cx, delay, Spent::Latency(*kind));
                cx.workload.latency.push((*kind, id));
            }
            DeclKind::Pool { name, size } => {
                if cx.workload.pools.iter().any(|p| p.name == name.text) {
                    let msg = format!("pool `{}` is declared twice", name.text);
                    let d = Diagnostic::new(msg, name.span, "declared again")
                        .with_hint("give each pool one line");
                    cx.report(d);
                    continue;
                }
                cx.workload.pools.push(Pool {
                    name: name.text.clone(),
                    size: *size,
                });
            }
            DeclKind::RedisWorkers(n) => {
                if cx.workload.redis_workers.is_some() {
                    let d = Diagnostic::new(
                        "`redis workers` is declared twice",
                        decl.span,
                        "declared again",
                    )
                    .with_hint("every Redis server has the one capacity: keep one line");
                    cx.report(d);
                    continue;
                }
                cx.workload.redis_workers = Some(*n);
            }
            DeclKind::Workers(n) => {
                if cx.workload.db_workers.is_some() {
                    let d = Diagnostic::new("`db workers` is declared twice", decl.span, "declared again")
                        .with_hint("a database server has one capacity: keep one `db workers` line");
                    cx.report(d);
                    continue;
                }
                cx.workload.db_workers = Some(*n);
            }
            DeclKind::Param { name, value, .. } => {
                if cx.workload.params.iter().any(|(n, _)| *n == name.text) {
                    let msg = format!("param `{}` is declared twice", name.text);
                    let d = Diagnostic::new(msg, name.span, "declared again")
                        .with_hint("give each param one line (`--set` changes its value)");
                    cx.report(d);
                    continue;
                }
                cx.workload.params.push((name.text.clone(), value.clone()));
            }
            _ => {}
        }
    }
}

/// The draw a `latency` line gives operations of `kind`.
pub fn latency(cx: &Cx, kind: Latency) -> Option<u16> {
    cx.workload
        .latency
        .iter()
        .find(|(k, _)| *k == kind)
        .map(|&(_, d)| d)
}

/// The pool a group's header names (`process buyer[20] pool app`); an unknown one is reported.
pub fn pool(cx: &mut Cx, name: Option<&Name>) -> Option<u16> {
    let name = name?;
    if let Some(i) = cx.workload.pools.iter().position(|p| p.name == name.text) {
        return Some(i as u16);
    }
    let known: Vec<String> = cx.workload.pools.iter().map(|p| p.name.clone()).collect();
    let hint = super::suggest::hint(
        &name.text,
        known.iter().map(String::as_str),
        "pools are",
        "no pool is declared: add `pool NAME size N`",
    );
    let msg = format!("unknown pool \"{}\"", name.text);
    cx.report(Diagnostic::new(msg, name.span, "no such pool").with_hint(hint));
    None
}

/// How a group runs, from its header.
pub fn arrival(cx: &mut Cx, arrival: &ArrivalAst) -> Arrival {
    match arrival {
        ArrivalAst::Once => Arrival::Once,
        ArrivalAst::Closed(think) => Arrival::Closed {
            think: draw(cx, think, Spent::Sleep),
        },
        ArrivalAst::Open(gap) => Arrival::Open {
            gap: draw(cx, gap, Spent::Arrival),
        },
    }
}

/// Converts every draw from milliseconds to ticks of `tick` milliseconds.
pub fn to_ticks(w: &mut Workload, tick: u64) {
    let t = |ms: &mut u32| *ms = (u64::from(*ms) / tick) as u32;
    let f = tick as f64;
    for d in &mut w.draws {
        match &mut d.dist {
            Dist::Fixed(v) => t(v),
            Dist::Uniform { lo, hi } => {
                t(lo);
                t(hi);
            }
            Dist::Exponential { mean, max } => {
                *mean /= f;
                t(max);
            }
            Dist::LogNormal { median, p99, max } => {
                *median /= f;
                *p99 /= f;
                t(max);
            }
        }
    }
}

//! Unit tests of duration ranges (`work 100..300ms`), `fault drift` and `fault timeout`.

use super::*;
use crate::ir::{FaultKind, OpKind};

#[test]
fn a_range_lowers_to_both_ends_in_ticks() {
    let m = model(&source("", "work 100..300ms\nsleep 1s..2s\nwork 150ms", ""));
    // 100, 300, 1000, 2000 and 150: the gcd is 50.
    assert_eq!(m.tick_ms, 50);
    let ops = ops(&m);
    assert_eq!(ops[0], OpKind::Work { ticks: 2, upto: 6, draw: None });
    assert_eq!(
        ops[1],
        OpKind::Sleep {
            ticks: 20,
            upto: 40,
            draw: None
        }
    );
    assert_eq!(ops[2], OpKind::Work { ticks: 3, upto: 3, draw: None });
}

#[test]
fn both_ends_count_toward_the_tick() {
    // Alone, 200ms would make the tick 200ms; the upper end 250ms brings it to 50ms.
    let m = model(&source("", "work 200..250ms", ""));
    assert_eq!(m.tick_ms, 50);
    assert_eq!(ops(&m)[0], OpKind::Work { ticks: 4, upto: 5, draw: None });
    // The lower end counts too.
    let m = model(&source("", "sleep 30ms..1s", ""));
    assert_eq!(m.tick_ms, 10);
    assert_eq!(
        ops(&m)[0],
        OpKind::Sleep {
            ticks: 3,
            upto: 100,
            draw: None
        }
    );
}

#[test]
fn units_mix_and_the_lower_end_borrows_the_upper_ones() {
    let m = model(&source("", "work 1..2s\nsleep 500ms..1s", ""));
    assert_eq!(m.tick_ms, 500);
    let ops = ops(&m);
    assert_eq!(ops[0], OpKind::Work { ticks: 2, upto: 4, draw: None });
    assert_eq!(ops[1], OpKind::Sleep { ticks: 1, upto: 2, draw: None });
}

#[test]
fn an_empty_range_is_a_fixed_duration() {
    let m = model(&source("", "work 100..100ms", ""));
    assert_eq!(m.tick_ms, 100);
    assert_eq!(ops(&m)[0], OpKind::Work { ticks: 1, upto: 1, draw: None });
}

#[test]
fn a_reversed_range_is_an_error() {
    let got = errors(&source("", "work 300..100ms", ""));
    assert_eq!(
        got,
        vec!["reversed duration range / write the shorter time first, like `100..300ms`"]
    );
    let got = errors(&source("", "sleep 2s..1500ms", ""));
    assert_eq!(got.len(), 1, "{got:?}");
    assert!(got[0].starts_with("reversed duration range"), "{got:?}");
}

#[test]
fn range_ends_need_units_and_a_positive_length() {
    let got = errors(&source("", "work 100..300", ""));
    assert_eq!(
        got,
        vec!["duration without a unit / write `300ms` or `300s`"]
    );
    // A range may start at 0 (full jitter), but not end there.
    assert!(model(&source("", "sleep 0..300ms", "")).tick_ms == 300);
    let got = errors(&source("", "work 0..0ms", ""));
    assert_eq!(got.len(), 1, "{got:?}");
    assert!(got[0].starts_with("duration out of range"), "{got:?}");
    let got = errors(&source("", "work 1min..2s", ""));
    assert_eq!(got.len(), 1, "{got:?}");
    assert!(got[0].starts_with("bad duration unit \"min\""), "{got:?}");
}

#[test]
fn drift_is_a_fault_of_a_group_in_ticks() {
    let m = model(&source(
        "",
        "work 100ms",
        "fault drift p up to 2s at most 1",
    ));
    assert_eq!(m.tick_ms, 100);
    let f = &m.faults[0];
    assert_eq!(f.kind, FaultKind::Drift { max: 20 });
    assert_eq!((f.group, f.budget, f.during), (0, 1, None));
    // The offset counts toward the tick.
    let m = model(&source(
        "",
        "work 100ms",
        "fault drift p up to 30ms at most 2",
    ));
    assert_eq!(m.tick_ms, 10);
    assert_eq!(m.faults[0].kind, FaultKind::Drift { max: 3 });
}

#[test]
fn drift_takes_no_region() {
    let body = "region r { work 100ms }";
    let got = errors(&source(
        "",
        body,
        "fault drift p up to 1s at most 1 during r",
    ));
    assert_eq!(got.len(), 1, "{got:?}");
    assert!(
        got[0].starts_with("`during` does not apply to a clock drift / "),
        "{got:?}"
    );
    let got = errors(&source("", body, "fault drift p by 1s at most 1"));
    assert_eq!(got.len(), 1, "{got:?}");
    assert!(got[0].contains("`up to`"), "{got:?}");
}

#[test]
fn timeout_is_a_lost_reply() {
    let body = "region r { SET k 1 into $ok }";
    let m = model(&source(
        "",
        body,
        "fault timeout p at most 2\nfault timeout p at most 1 during r",
    ));
    assert_eq!(m.faults[0].kind, FaultKind::LostReply);
    assert_eq!((m.faults[0].budget, m.faults[0].during), (2, None));
    assert_eq!(m.faults[1].kind, FaultKind::LostReply);
    assert!(m.faults[1].during.is_some());
    // 'TIMEOUT' is an error code a retry can name.
    let body = "retry 2 on 'TIMEOUT' { SET k 1 into $ok }";
    model(&source("", body, "fault timeout p at most 1"));
}

#[test]
fn unknown_fault_lists_the_new_kinds() {
    let got = errors(&source("", "work 1s", "fault drfit p up to 1s at most 1"));
    assert_eq!(got, vec!["unknown fault \"drfit\" / did you mean `drift`?"]);
    let got = errors(&source("", "work 1s", "fault explode p at most 1"));
    assert_eq!(got.len(), 1, "{got:?}");
    assert!(
        got[0].contains("`drift`") && got[0].contains("`timeout`"),
        "{got:?}"
    );
}

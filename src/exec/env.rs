//! Environment steps: time passing and injected faults.

use super::observe::{Event, Observer};
use super::sql;
use crate::ir::{FaultKind, Model};
use crate::world::process::{Proc, Status};
use crate::ir::value::{Pid, Sym};
use crate::world::redis::Off;
use crate::world::State;

/// Lets time pass to the next deadline (work or sleep ends, a key expires, a timer or a
/// watchdog is due, a pause may end at the latest). Under `timing bounded` the caller offers
/// this only when no process can step: nothing observable happens between now and that
/// deadline, so jumping to it loses no behaviour. A paused process's work and watchdog stand
/// still; server-side timers run on.
pub fn tick<O: Observer>(m: &Model, s: &State, obs: &mut O) -> Option<State> {
    let timers = next_timer(s);
    if timers == Some(0) {
        return None; // a timer is due: its transition runs first
    }
    let keys = next_key_expiry(s);
    if keys == Some(0) {
        // A key at its deadline goes 1 ms later (RS-2): less than a tick, or exactly one.
        if m.tick_ms > 1 {
            return Some(pass_deadline(m, s, obs));
        }
        return Some(advance(m, s, 1, obs));
    }
    let dt = timers.into_iter().chain(keys).chain(next_reachable(s)).min()?;
    Some(advance(m, s, dt, obs))
}

/// Lets `dt` ticks pass, fewer than to the next deadline, when the caller is allowed to let
/// time pass at all (under `timing bounded`, only when no process can step). Nothing falls
/// due on the way. The search never takes this step (stopping short of a deadline reaches
/// nothing [`tick`] does not: no behaviour depends on the time between two deadlines, only
/// on their order); `simulate` takes it to end a drawn delay between deadlines, and its
/// counterexamples replay with it.
pub fn pass<O: Observer>(m: &Model, s: &State, dt: u32, obs: &mut O) -> Option<State> {
    let before = next_deadline(s).unwrap_or(u32::MAX);
    if dt == 0 || dt >= before {
        return None;
    }
    Some(advance(m, s, dt, obs))
}

/// Ticks until the next deadline: a delay ends, a key expires, a timer or a watchdog is
/// due, a pause may end at the latest. `None` when nothing is timed; `Some(0)` when a timer
/// is due or a key is at its deadline.
pub fn next_deadline(s: &State) -> Option<u32> {
    next_timer(s)
        .into_iter()
        .chain(next_key_expiry(s))
        .chain(next_reachable(s))
        .min()
}

/// Ticks until a partition heals or a restarted server is back (never 0: see `Off`).
fn next_reachable(s: &State) -> Option<u32> {
    s.redis.iter().filter_map(|r| r.off.left()).min()
}

/// Ticks until a key of any server reaches its deadline (0: one is at it now).
fn next_key_expiry(s: &State) -> Option<u32> {
    s.redis
        .iter()
        .filter_map(crate::world::redis::Redis::next_expiry)
        .min()
}

/// Ticks until the processes' next deadline: a delay ends, a timer or a watchdog is due, a
/// pause may end at the latest.
fn next_timer(s: &State) -> Option<u32> {
    let frozen = |p: &crate::world::process::Proc| p.paused.is_some();
    let local = s.procs.iter().filter(|p| !frozen(p)).flat_map(|p| {
        let busy = match p.status {
            Status::Busy(0) if p.slack > 0 => Some(p.slack),
            Status::Busy(t) => Some(t),
            _ => None,
        };
        [busy, p.watchdog.map(|w| w.next_in)]
    });
    let server = s
        .procs
        .iter()
        .flat_map(|p| [p.check_in, p.timeout_in, p.paused]);
    local.chain(server).flatten().min()
}

/// Time moves past the keys' deadlines that fall now, by less than a tick (the server's
/// 1 ms): those keys go, and no other timer moves.
fn pass_deadline<O: Observer>(m: &Model, s: &State, obs: &mut O) -> State {
    let mut st = s.clone();
    if O::EVENTS {
        obs.event(Event::TimePasses { ticks: 0 });
    }
    for n in 0..st.redis.len() {
        let expired = st.redis[n].pass_deadline();
        report_expiries(m, s, n, expired, obs);
    }
    st
}

/// Reports the keys that expired on node `n`: only the primary's expiries are news; replicas
/// follow it (RF-5).
fn report_expiries<O: Observer>(m: &Model, s: &State, n: usize, expired: Vec<Sym>, obs: &mut O) {
    if !O::EVENTS || s.redis[n].down || !m.redis.is_empty() && !is_primary(m, s, n) {
        return;
    }
    for key in expired {
        obs.event(Event::KeyExpired {
            server: m.server_of(n),
            key,
        });
    }
}

/// Moves every timer `dt` ticks on; `dt` is at most [`next_deadline`].
fn advance<O: Observer>(m: &Model, s: &State, dt: u32, obs: &mut O) -> State {
    let mut st = s.clone();
    if m.clock {
        // `clock()` stops at 2^32 - 1 ticks (49 days at 1 ms) rather than wrap.
        st.clock = st.clock.saturating_add(dt);
    }
    if O::EVENTS {
        obs.event(Event::TimePasses { ticks: dt });
    }
    for (i, p) in st.procs.iter_mut().enumerate() {
        let idle = p.check_in.is_none()
            && p.timeout_in.is_none()
            && p.paused.is_none()
            && p.watchdog.is_none()
            && !matches!(p.status, Status::Busy(_));
        if idle {
            // Nothing of it counts time: leave it shared with the parent state.
            continue;
        }
        let p: &mut Proc = p;
        for t in [&mut p.check_in, &mut p.timeout_in, &mut p.paused]
            .into_iter()
            .flatten()
        {
            *t -= dt;
        }
        if p.paused.is_some() {
            continue;
        }
        if let Some(w) = &mut p.watchdog {
            w.next_in -= dt;
        }
        if let Status::Busy(t) = &mut p.status {
            if *t == 0 {
                p.slack -= dt;
            } else {
                *t -= dt;
            }
            if *t == 0 && p.slack == 0 {
                p.status = Status::Ready;
                if O::EVENTS {
                    obs.event(Event::Woke { pid: Pid(i as u16) });
                }
            }
        }
    }
    for n in 0..st.redis.len() {
        let expired = st.redis[n].advance(dt);
        report_expiries(m, s, n, expired, obs);
        let off = st.redis[n].off;
        st.redis[n].off = off.pass(dt);
        if O::EVENTS && off != Off::On && st.redis[n].off == Off::On {
            obs.event(Event::Reachable {
                server: m.server_of(n),
            });
        }
    }
    st
}

/// A finished process of a group that runs again (`loop think`, `arrive`) starts its body
/// anew as the next request: its locals cleared, no transaction, no timers. The search
/// never takes this step (`check` runs each body once); `simulate` does.
pub fn restart<O: Observer>(m: &Model, s: &State, pid: Pid, obs: &mut O) -> Option<State> {
    let group = m.processes[pid.index()].group;
    let p = &s.procs[pid.index()];
    let again = m.workload.arrival(group) != crate::ir::workload::Arrival::Once;
    let ended = matches!(p.status, Status::Done(_) | Status::Errored(_));
    if !again || !ended || p.txn.is_some() || p.watchdog.is_some() {
        return None;
    }
    let mut st = s.clone();
    st.procs[pid.index()] = Proc::new(m.program(pid).locals.len()).into();
    if O::EVENTS {
        obs.event(Event::Restarted { pid });
    }
    st.normalise();
    Some(st)
}

/// Injects fault number `fault` into `pid`, if its budget, group and region allow.
pub fn fault<O: Observer>(
    m: &Model,
    s: &State,
    fault: usize,
    pid: Pid,
    obs: &mut O,
) -> Option<State> {
    let f = &m.faults[fault];
    let p = &s.procs[pid.index()];
    // A process working or sleeping is inside the delay op it started (its pc moved past it).
    let at = match p.status {
        Status::Busy(_) => p.pc.saturating_sub(1),
        _ => p.pc,
    };
    let inside = f.during.is_none_or(|(a, b)| (a..b).contains(&at));
    if s.faults_used[fault] >= f.budget
        || m.processes[pid.index()].group != f.group
        || p.status.finished()
        || p.paused.is_some()
        || !inside
    {
        return None;
    }
    let mut st = s.clone();
    st.faults_used[fault] += 1;
    match f.kind {
        FaultKind::Crash => crash(m, &mut st, pid, obs),
        FaultKind::Pause { max } => {
            st.procs[pid.index()].paused = Some(max);
            if O::EVENTS {
                obs.event(Event::Paused { pid, paused: true });
            }
        }
        FaultKind::Failover { .. }
        | FaultKind::ClockJump { .. }
        | FaultKind::Restart { .. }
        | FaultKind::Partition { .. }
        | FaultKind::Drift { .. } => return None,
        FaultKind::LostReply => st.procs[pid.index()].lose_reply = true,
        FaultKind::Hang => {
            st.procs[pid.index()].status = Status::Hung;
            if O::EVENTS {
                obs.event(Event::Hung { pid });
            }
        }
    }
    st.normalise();
    Some(st)
}

/// A paused process goes on where it stopped, unaware of the time that passed.
pub fn resume<O: Observer>(s: &State, pid: Pid, obs: &mut O) -> Option<State> {
    s.procs[pid.index()].paused?;
    let mut st = s.clone();
    st.procs[pid.index()].paused = None;
    if O::EVENTS {
        obs.event(Event::Paused { pid, paused: false });
    }
    Some(st)
}

/// A due watchdog renewal, one atomic script: if the key still holds the owner's id, reset
/// its TTL to the lease; otherwise stop renewing (WD-3). A hung owner's watchdog runs on; a
/// paused owner's does not.
pub fn renew<O: Observer>(m: &Model, s: &State, pid: Pid, obs: &mut O) -> Option<State> {
    let p = &s.procs[pid.index()];
    let w = p
        .watchdog
        .filter(|w| w.next_in == 0 && p.paused.is_none())?;
    let mut st = s.clone();
    let node = st.node(m, 0);
    if !st.redis[node].off.reaches() {
        // The renewal does not reach the server; the watchdog tries again a period later.
        st.procs[pid.index()].watchdog = Some(crate::world::process::Watchdog {
            next_in: w.lease / 3,
            ..w
        });
        if O::EVENTS {
            let refused = matches!(st.redis[node].off, Off::Down(_));
            obs.event(Event::Unreached {
                pid,
                server: 0,
                refused,
            });
        }
        return Some(st);
    }
    let owned = st.redis[node]
        .get(w.key)
        .is_some_and(|k| k.value == crate::ir::value::Value::Pid(pid));
    if owned {
        st.redis[node].expire(w.key, w.lease);
        let write = st.redis[node].state_of(w.key);
        st.send_to_replicas(m, 0, &write);
        st.procs[pid.index()].watchdog = Some(crate::world::process::Watchdog {
            next_in: w.lease / 3,
            ..w
        });
    } else {
        st.procs[pid.index()].watchdog = None;
    }
    if O::EVENTS {
        obs.event(Event::Renewal {
            pid,
            key: w.key,
            renewed: owned,
            lease: w.lease,
        });
    }
    Some(st)
}

/// Crashes the instance `pid` runs on: every live process there stops for good, its
/// transaction aborts and its row locks go (the connection closes), the instance's mutexes
/// and watchdogs vanish with its memory; Redis keys stay until their TTL.
fn crash<O: Observer>(m: &Model, st: &mut State, pid: Pid, obs: &mut O) {
    let inst = m.processes[pid.index()].instance;
    for q in 0..m.processes.len() {
        let qid = Pid(q as u16);
        let p = &st.procs[q];
        let hung = p.status == Status::Hung;
        if m.processes[q].instance != inst || (p.status.finished() && !hung) {
            continue;
        }
        if O::EVENTS {
            obs.event(Event::Crashed { pid: qid });
        }
        sql::end_txn(m, st, qid, false, obs);
        let p = &mut st.procs[q];
        p.status = Status::Crashed;
        (p.check_in, p.timeout_in, p.candidates, p.error) = (None, None, None, None);
        (p.paused, p.watchdog) = (None, None);
    }
    let n = m.mutexes.len();
    for l in &mut st.mutexes[inst * n..(inst + 1) * n] {
        *l = crate::world::lock::Lock::default();
    }
}

fn is_primary(m: &Model, s: &State, node: usize) -> bool {
    (0..m.redis.len() as u16).any(|sv| s.node(m, sv) == node)
}

/// A replica applies the oldest write of its replication stream.
pub fn replicate<O: Observer>(m: &Model, s: &State, node: usize, obs: &mut O) -> Option<State> {
    let r = &s.redis[node];
    if r.down || r.backlog.is_empty() || is_primary(m, s, node) {
        return None;
    }
    let mut st = s.clone();
    let w = st.redis[node].backlog.remove(0);
    st.redis[node].apply(&w);
    if O::EVENTS {
        obs.event(Event::Replicated {
            node: node as u16,
            key: w.key,
        });
    }
    Some(st)
}

/// A copy of `s` with one more use of fault number `fault`; `None` when its budget is spent.
fn spend(m: &Model, s: &State, fault: usize) -> Option<State> {
    if s.faults_used[fault] >= m.faults[fault].budget {
        return None;
    }
    let mut st = s.clone();
    st.faults_used[fault] += 1;
    Some(st)
}

/// `fault failover S`: the primary of server `S` fails and Sentinel promotes `replica`. The
/// promoted replica keeps what it had received, the writes still in its stream are lost
/// (RF-2), the other replicas resynchronise from it, and clients follow the new primary.
/// Sentinel prefers the replica with the largest replication offset, but the offsets it
/// compares may be stale (RF-4), so every live replica is a possible choice.
pub fn failover<O: Observer>(
    m: &Model,
    s: &State,
    fault: usize,
    replica: usize,
    obs: &mut O,
) -> Option<State> {
    let FaultKind::Failover { server } = m.faults[fault].kind else {
        return None;
    };
    if !s.replicas(m, server).contains(&replica) {
        return None;
    }
    if s.redis[s.node(m, server)].off != Off::On {
        return None;
    }
    let mut st = spend(m, s, fault)?;
    st.epochs[server as usize] += 1;
    let old = st.node(m, server);
    st.redis[old] = crate::world::redis::Redis {
        down: true,
        ..Default::default()
    };
    st.redis[replica].backlog.clear();
    st.primary[server as usize] = (replica - m.redis_base(server)) as u8;
    let promoted = st.redis[replica].clone();
    for r in st.replicas(m, server) {
        st.redis[r].resync(&promoted);
    }
    st.settle_clocks(m, server);
    if O::EVENTS {
        obs.event(Event::Failover {
            server,
            promoted: replica as u16,
        });
    }
    Some(st)
}

/// `fault jump S [replica K] by D`: a clock of server `S` steps by `by` ticks. Redis compares
/// key deadlines with its own wall clock (RS-3): forward, that node's keys (in transit to it
/// too) expire `by` earlier, at once if their TTL was shorter; back, they live that much
/// longer. Its offset from the server's other nodes changes what their writes' deadlines
/// mean to it (RF-5). Not enabled when there is no K-th live replica.
pub fn jump<O: Observer>(m: &Model, s: &State, fault: usize, obs: &mut O) -> Option<State> {
    let FaultKind::ClockJump {
        server,
        replica,
        by,
    } = m.faults[fault].kind
    else {
        return None;
    };
    let node = match replica {
        0 => s.node(m, server),
        k => *s.replicas(m, server).get(usize::from(k) - 1)?,
    };
    let mut st = spend(m, s, fault)?;
    let expired = if by >= 0 {
        st.redis[node].advance(by as u32)
    } else {
        st.redis[node].step_back(by.unsigned_abs());
        Vec::new()
    };
    st.redis[node].skew = st.redis[node].skew.saturating_add(by);
    st.settle_clocks(m, server);
    if O::EVENTS {
        obs.event(Event::ClockJump {
            server,
            replica,
            by,
        });
        if replica == 0 {
            for key in expired {
                obs.event(Event::KeyExpired { server, key });
            }
        }
    }
    Some(st)
}

/// `fault restart S`: the primary of server `S` restarts without persistence and comes back
/// at once with no keys; its replicas resynchronise from it and lose theirs (RF-6). Locks
/// vanish without a failover: Redlock's crash-recovery case (RL-6).
pub fn restart_server<O: Observer>(
    m: &Model,
    s: &State,
    fault: usize,
    obs: &mut O,
) -> Option<State> {
    let FaultKind::Restart { server, down } = m.faults[fault].kind else {
        return None;
    };
    if s.redis[s.node(m, server)].off != Off::On {
        return None;
    }
    let mut st = spend(m, s, fault)?;
    let node = st.node(m, server);
    let lost = st.redis[node].forget();
    if down > 0 {
        st.redis[node].off = Off::Down(down);
    }
    for r in st.replicas(m, server) {
        st.redis[r].forget();
    }
    if O::EVENTS {
        obs.event(Event::ServerRestarted { server, lost, down });
    }
    Some(st)
}

/// `fault partition S [for D]`: the clients lose their path to server `S`'s primary, for
/// `heal` ticks or for good (RL-2, RL-4). `in_flight`: it breaks while a request is on its way, so
/// the next command reaches the server and only its reply is lost; otherwise nothing sent
/// from now on reaches it. Not while the server is already unreachable.
pub fn partition<O: Observer>(
    m: &Model,
    s: &State,
    fault: usize,
    in_flight: bool,
    obs: &mut O,
) -> Option<State> {
    let FaultKind::Partition { server, heal } = m.faults[fault].kind else {
        return None;
    };
    let node = s.node(m, server);
    if s.redis[node].off != Off::On {
        return None;
    }
    let mut st = spend(m, s, fault)?;
    st.redis[node].off = if in_flight {
        Off::InFlight(heal)
    } else {
        Off::Cut(heal)
    };
    if O::EVENTS {
        obs.event(Event::Partitioned { server, in_flight });
    }
    Some(st)
}

/// `fault drift G up to D`: the process's clock runs `max` ticks ahead (or behind) from now on;
/// the extremes of the bound are what a safety argument must survive.
pub fn drift<O: Observer>(
    m: &Model,
    s: &State,
    fault: usize,
    pid: Pid,
    ahead: bool,
    obs: &mut O,
) -> Option<State> {
    let f = &m.faults[fault];
    let FaultKind::Drift { max } = f.kind else {
        return None;
    };
    let p = &s.procs[pid.index()];
    if s.faults_used[fault] >= f.budget
        || m.processes[pid.index()].group != f.group
        || p.status.finished()
    {
        return None;
    }
    let mut st = s.clone();
    st.faults_used[fault] += 1;
    let by = if ahead { max as i32 } else { -(max as i32) };
    st.procs[pid.index()].drift = by;
    if O::EVENTS {
        obs.event(Event::Drift { pid, by });
    }
    Some(st)
}

/// A `work A..B` (or `sleep`) past its minimum ends now: the environment chooses when.
pub fn finish<O: Observer>(s: &State, pid: Pid, obs: &mut O) -> Option<State> {
    let p = &s.procs[pid.index()];
    if p.status != Status::Busy(0) || p.slack == 0 || p.paused.is_some() {
        return None;
    }
    let mut st = s.clone();
    let p = &mut st.procs[pid.index()];
    p.status = Status::Ready;
    p.slack = 0;
    if O::EVENTS {
        obs.event(Event::EndedEarly { pid });
    }
    Some(st)
}

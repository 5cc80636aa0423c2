//! Environment steps: time passing and injected faults.

use super::observe::{Event, Observer, Resource};
use super::sql;
use crate::ir::Model;
use crate::world::process::Status;
use crate::world::value::Pid;
use crate::world::State;

/// Lets time pass to the next deadline (a process's work or sleep ends, a key expires).
/// Under `timing bounded` the caller offers this only when no process can step: nothing
/// observable happens between now and that deadline, so jumping to it loses no behaviour.
pub fn tick<O: Observer>(m: &Model, s: &State, obs: &mut O) -> Option<State> {
    let busy = s.procs.iter().filter_map(|p| match p.status {
        Status::Busy(t) => Some(t),
        _ => None,
    });
    let timers = s
        .procs
        .iter()
        .flat_map(|p| [p.check_in, p.timeout_in])
        .flatten();
    let dt = busy.chain(timers).chain(s.redis.next_expiry()).min()?;
    if dt == 0 {
        return None; // a timer is due: its transition runs first
    }
    let mut st = s.clone();
    if m.clock {
        st.clock += dt;
    }
    obs.write(Resource::Clock);
    if O::EVENTS {
        obs.event(Event::TimePasses { ticks: dt });
    }
    for (i, p) in st.procs.iter_mut().enumerate() {
        for t in [&mut p.check_in, &mut p.timeout_in].into_iter().flatten() {
            *t -= dt;
        }
        if let Status::Busy(t) = &mut p.status {
            *t -= dt;
            if *t == 0 {
                p.status = Status::Ready;
                if O::EVENTS {
                    obs.event(Event::Woke { pid: Pid(i as u16) });
                }
            }
        }
    }
    for key in st.redis.advance(dt) {
        obs.write(Resource::Key(key));
        if O::EVENTS {
            obs.event(Event::KeyExpired { key });
        }
    }
    Some(st)
}

/// Crashes the instance `pid` runs on: every live process there stops for good, its
/// transaction aborts and its row locks go (the connection closes), the instance's mutexes
/// vanish with its memory; Redis keys stay until their TTL.
pub fn crash<O: Observer>(
    m: &Model,
    s: &State,
    fault: usize,
    pid: Pid,
    obs: &mut O,
) -> Option<State> {
    let f = &m.faults[fault];
    let p = &m.processes[pid.index()];
    if s.faults_used[fault] >= f.budget
        || p.group != f.group
        || s.procs[pid.index()].status.finished()
    {
        return None;
    }
    let mut st = s.clone();
    st.faults_used[fault] += 1;
    let inst = p.instance;
    for q in 0..m.processes.len() {
        let qid = Pid(q as u16);
        if m.processes[q].instance != inst || st.procs[q].status.finished() {
            continue;
        }
        obs.write(Resource::Process(qid));
        if O::EVENTS {
            obs.event(Event::Crashed { pid: qid });
        }
        sql::end_txn(m, &mut st, qid, false, obs);
        let p = &mut st.procs[q];
        p.status = Status::Crashed;
        (p.check_in, p.timeout_in, p.candidates, p.error) = (None, None, None, None);
    }
    let n = m.mutexes.len();
    for l in &mut st.mutexes[inst * n..(inst + 1) * n] {
        *l = crate::world::lock::Lock::default();
    }
    st.normalise();
    Some(st)
}

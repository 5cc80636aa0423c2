//! The simulated components against small, obviously correct references.

use interlock::ir::value::{Pid, Sym, Value};
use interlock::ir::{Flavour, LockMode};
use interlock::world::db::{Db, View};
use interlock::world::lock::Lock;
use interlock::world::redis::Redis;
use proptest::prelude::*;
use std::collections::{BTreeMap, VecDeque};

#[derive(Clone, Debug)]
enum RedisOp {
    Set {
        key: u32,
        value: i64,
        nx: bool,
        ttl: Option<u32>,
    },
    Del {
        key: u32,
    },
    Advance {
        dt: u32,
    },
    /// Time moves past the deadlines that fall now, by less than a tick.
    PassDeadline,
}

fn redis_op() -> impl Strategy<Value = RedisOp> {
    prop_oneof![
        (
            0..3u32,
            0..5i64,
            any::<bool>(),
            proptest::option::of(1..6u32)
        )
            .prop_map(|(key, value, nx, ttl)| RedisOp::Set {
                key,
                value,
                nx,
                ttl
            }),
        (0..3u32).prop_map(|key| RedisOp::Del { key }),
        (1..4u32).prop_map(|dt| RedisOp::Advance { dt }),
        Just(RedisOp::PassDeadline),
    ]
}

/// The reference: absolute deadlines; a key is present at its deadline and absent once time
/// has moved past it (RS-2). `past`: time has moved past the present tick by less than a
/// tick; a key set then counts from the tick.
#[derive(Default)]
struct RefRedis {
    now: u64,
    past: bool,
    keys: BTreeMap<u32, (i64, Option<u64>)>,
}

impl RefRedis {
    fn live(&self, key: u32) -> Option<i64> {
        self.keys
            .get(&key)
            .filter(|(_, d)| d.is_none_or(|d| self.now < d || self.now == d && !self.past))
            .map(|(v, _)| *v)
    }
}

proptest! {
    #[test]
    fn redis_matches_the_reference(ops in proptest::collection::vec(redis_op(), 0..40)) {
        let mut r = Redis::default();
        let mut reference = RefRedis::default();
        for op in ops {
            match op {
                RedisOp::Set { key, value, nx, ttl } => {
                    let expect = !nx || reference.live(key).is_none();
                    if expect {
                        let deadline = ttl.map(|t| reference.now + u64::from(t));
                        reference.keys.insert(key, (value, deadline));
                    }
                    prop_assert_eq!(r.set(Sym(key), Value::Int(value), nx, ttl), expect);
                }
                RedisOp::Del { key } => {
                    let expect = i64::from(reference.live(key).is_some());
                    reference.keys.remove(&key);
                    prop_assert_eq!(r.del(Sym(key)), expect);
                }
                RedisOp::Advance { dt } => {
                    reference.now += u64::from(dt);
                    reference.past = false;
                    r.advance(dt);
                }
                RedisOp::PassDeadline => {
                    reference.past = true;
                    r.pass_deadline();
                }
            }
            for key in 0..3u32 {
                let got = r.get(Sym(key)).map(|k| k.value);
                prop_assert_eq!(got, reference.live(key).map(Value::Int));
            }
        }
    }

    #[test]
    fn lock_grants_in_fifo_order(ops in proptest::collection::vec((0..4u16, any::<bool>()), 0..40)) {
        let mut l = Lock::default();
        let mut holder: Option<u16> = None;
        let mut queue: VecDeque<u16> = VecDeque::new();
        for (p, take) in ops {
            if take {
                l.acquire(Pid(p));
                match holder {
                    None => holder = Some(p),
                    Some(h) if h == p => {}
                    Some(_) => if !queue.contains(&p) { queue.push_back(p) },
                }
            } else if holder == Some(p) {
                l.release();
                holder = queue.pop_front();
            }
            prop_assert_eq!(l.holder, holder.map(Pid));
            prop_assert_eq!(l.queue.iter().map(|q| q.0).collect::<Vec<_>>(), queue.iter().copied().collect::<Vec<_>>());
        }
    }

    /// Rows: a transaction's writes are seen only by itself until commit; abort discards them;
    /// a row has one writer at a time; a snapshot keeps seeing what was committed when it was
    /// taken, also after the history is pruned and renumbered.
    #[test]
    fn db_rows_match_the_reference(ops in proptest::collection::vec((0..3u16, 0..2usize, 0..4u8), 0..40)) {
        let pg = Flavour::Postgres;
        let mut db = Db::new(vec![(0, vec![vec![Value::Int(1), Value::Int(0)], vec![Value::Int(2), Value::Int(0)]])]);
        let mut committed = [0i64; 2];
        let mut pending: [Option<(u16, i64)>; 2] = [None; 2];
        // One snapshot, taken at the start, and what it must keep seeing.
        let mut snap = db.seq;
        let seen_at_start = [0i64; 2];
        for (p, r, action) in ops {
            let pid = Pid(p);
            match action {
                0 | 1 => {
                    if db.row(0, r).blocker(pg, pid, LockMode::Update).is_some() {
                        prop_assert!(pending[r].is_some_and(|(o, _)| o != p));
                        continue;
                    }
                    db.lock(0, r, pid, LockMode::Update);
                    let base = match db.read(0, r, pid, View::Latest).unwrap()[1] { Value::Int(i) => i, _ => unreachable!() };
                    let own = pending[r].filter(|(o, _)| *o == p).map(|(_, v)| v);
                    prop_assert_eq!(base, own.unwrap_or(committed[r]));
                    db.write(0, r, pid, Some(vec![Value::Int(r as i64 + 1), Value::Int(base + 1)].into_boxed_slice()));
                    pending[r] = Some((p, base + 1));
                }
                _ => {
                    let commit = action == 2;
                    db.end(pg, pid, commit);
                    for row in 0..2 {
                        if let Some((o, v)) = pending[row] {
                            if o == p {
                                if commit { committed[row] = v; }
                                pending[row] = None;
                            }
                        }
                    }
                }
            }
            db.normalise(&mut [&mut snap]);
            for row in 0..2 {
                let latest = match db.row(0, row).latest().unwrap()[1] { Value::Int(i) => i, _ => unreachable!() };
                prop_assert_eq!(latest, committed[row]);
                let old = match db.row(0, row).at(snap).unwrap()[1] { Value::Int(i) => i, _ => unreachable!() };
                prop_assert_eq!(old, seen_at_start[row]);
                // An uncommitted version exists only under the lock of its writer.
                if let Some((o, _)) = pending[row] {
                    prop_assert_eq!(db.row(0, row).held_by(Pid(o)), Some(LockMode::Update));
                }
            }
        }
    }
}

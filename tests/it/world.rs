//! The simulated components against small, obviously correct references.

use interlock::world::db::{Access, Db};
use interlock::world::lock::Lock;
use interlock::world::redis::Redis;
use interlock::world::value::{Pid, Sym, Value};
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
    ]
}

/// The reference: absolute deadlines, a key is absent at and after its deadline.
#[derive(Default)]
struct RefRedis {
    now: u64,
    keys: BTreeMap<u32, (i64, Option<u64>)>,
}

impl RefRedis {
    fn live(&self, key: u32) -> Option<i64> {
        self.keys
            .get(&key)
            .filter(|(_, d)| d.is_none_or(|d| self.now < d))
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
                    r.advance(dt);
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
    /// a row is locked by at most one transaction and waiters get it in order.
    #[test]
    fn db_rows_match_the_reference(ops in proptest::collection::vec((0..3u16, 0..2u16, 0..4u8), 0..40)) {
        let mut db = Db::new(vec![vec![vec![Value::Int(0)], vec![Value::Int(0)]]]);
        let mut committed = [0i64; 2];
        let mut pending: [Option<(u16, i64)>; 2] = [None; 2];
        let mut waiting: [Option<u16>; 3] = [None; 3];
        for (p, row, action) in ops {
            let pid = Pid(p);
            if waiting[p as usize].is_some() && action != 3 {
                continue; // a waiting transaction does nothing but give up
            }
            match action {
                // Lock the row and write committed/pending + 1.
                0 | 1 => {
                    let set = 1u64 << row;
                    match db.lock_rows(0, pid, set, None, &mut |_| Ok::<_, ()>(true)).unwrap() {
                        Access::Locked(rows) => {
                            prop_assert_eq!(rows, vec![row]);
                            let base = match db.visible(0, row, pid)[0] { Value::Int(i) => i, _ => unreachable!() };
                            db.write(0, row, pid, vec![Value::Int(base + 1)].into_boxed_slice());
                            let own = pending[row as usize].filter(|(o, _)| *o == p).map(|(_, v)| v);
                            prop_assert_eq!(base, own.unwrap_or(committed[row as usize]));
                            pending[row as usize] = Some((p, base + 1));
                        }
                        Access::Wait { holder, .. } => {
                            prop_assert!(pending[row as usize].is_some_and(|(o, _)| o == holder.0));
                            waiting[p as usize] = Some(row);
                        }
                    }
                }
                // Commit or abort.
                _ => {
                    let commit = action == 2;
                    let grants = db.end(pid, commit);
                    waiting[p as usize] = None;
                    for r in 0..2 {
                        if let Some((o, v)) = pending[r] {
                            if o == p {
                                if commit { committed[r] = v; }
                                pending[r] = None;
                            }
                        }
                    }
                    for (_, r, next) in grants {
                        // The next waiter holds the row now; it resumes by re-running its write.
                        prop_assert_eq!(waiting[next.0 as usize], Some(r));
                        waiting[next.0 as usize] = None;
                        let base = match db.visible(0, r, next)[0] { Value::Int(i) => i, _ => unreachable!() };
                        db.write(0, r, next, vec![Value::Int(base + 1)].into_boxed_slice());
                        pending[r as usize] = Some((next.0, committed[r as usize] + 1));
                    }
                }
            }
            for r in 0..2u16 {
                let c = match db.tables[0][r as usize].committed[0] { Value::Int(i) => i, _ => unreachable!() };
                prop_assert_eq!(c, committed[r as usize]);
                let holder = db.tables[0][r as usize].lock.holder.map(|h| h.0);
                // An uncommitted version exists only under the lock of its writer.
                if let Some((o, _)) = pending[r as usize] {
                    prop_assert_eq!(holder, Some(o));
                }
            }
        }
    }
}

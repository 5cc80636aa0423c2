//! One Redis node: keys with values and time-to-live, stored relative to now.

use crate::ir::value::{Sym, Value};

/// Invariant: keys are sorted by name and unique; a key at TTL 0 is at its deadline: present
/// now, gone as soon as time moves on (RS-2).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Redis {
    pub keys: Vec<Key>,
    /// A replica's replication stream: the primary's writes it has not applied yet, oldest
    /// first (RF-1: replication is asynchronous).
    pub backlog: Vec<Write>,
    /// A primary that failed over: it serves nothing any more.
    pub down: bool,
    /// How far this node's clock runs ahead of its server's other nodes (clock jumps), in
    /// ticks; kept only for a server with replicas (0 otherwise), its smallest made 0. A write
    /// carries its key's deadline as an absolute time (Redis 7 replicates `SET … PX` as
    /// `SET … PXAT`), so a replica whose clock differs sees it nearer or further (RF-5).
    pub skew: i32,
    /// Whether the clients reach this node (kept on a server's primary only): a partition
    /// or a restart's down time, and how long it lasts (RL-2, RL-4, RL-6).
    pub off: Off,
}

/// Whether the clients reach a server's primary, and for how many more ticks it stays so
/// (`None`: for good). A timer never stands at 0: time that reaches it ends it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Off {
    #[default]
    On,
    /// A partition struck while a request was on its way: the next command reaches the node
    /// and its reply is lost; then the node is cut off.
    InFlight(Option<u32>),
    /// A partition: no command reaches the node.
    Cut(Option<u32>),
    /// A restart's down time: the node refuses connections.
    Down(u32),
}

impl Off {
    /// Ticks until the node is reachable again, when that is timed.
    #[must_use]
    pub fn left(self) -> Option<u32> {
        match self {
            Off::On | Off::InFlight(None) | Off::Cut(None) => None,
            Off::InFlight(Some(t)) | Off::Cut(Some(t)) | Off::Down(t) => Some(t),
        }
    }

    /// The state after `dt` ticks, `dt` at most [`Off::left`]: reachable when it runs out.
    #[must_use]
    pub fn pass(self, dt: u32) -> Off {
        let Some(left) = self.left() else {
            return self; // reachable, or cut off for good
        };
        match (left.saturating_sub(dt), self) {
            (0, _) | (_, Off::On) => Off::On,
            (t, Off::InFlight(_)) => Off::InFlight(Some(t)),
            (t, Off::Cut(_)) => Off::Cut(Some(t)),
            (t, Off::Down(_)) => Off::Down(t),
        }
    }

    /// Whether a command sent now reaches the node.
    #[must_use]
    pub fn reaches(self) -> bool {
        matches!(self, Off::On | Off::InFlight(_))
    }
}

/// One replicated write: the key's state after it (`None`: the key is gone).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Write {
    pub key: Sym,
    pub state: Option<(Value, Option<u32>)>,
}

impl Write {
    /// The write as a node whose clock is `ahead` ticks ahead of the sender's sees it: its
    /// deadline is the same absolute time, that much nearer; a deadline already past on
    /// that clock makes it a deletion (a replica answers an expired key as absent, RF-5).
    #[must_use]
    pub fn seen_from(&self, ahead: i32) -> Write {
        let Some((value, Some(t))) = self.state else {
            return self.clone();
        };
        let left = u32::try_from(i64::from(t) - i64::from(ahead)).ok();
        Write {
            key: self.key,
            state: left.map(|t| (value, Some(t))),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Key {
    pub name: Sym,
    pub value: Value,
    /// Ticks until the key expires; `None` = no TTL.
    pub ttl: Option<u32>,
}

impl Redis {
    fn find(&self, name: Sym) -> Result<usize, usize> {
        self.keys.binary_search_by(|k| k.name.cmp(&name))
    }

    #[must_use]
    pub fn get(&self, name: Sym) -> Option<&Key> {
        self.find(name).ok().map(|i| &self.keys[i])
    }

    /// `SET name value [NX] [PX ttl]`: returns whether the key was set. A successful SET
    /// replaces the value and discards any previous TTL (redis.io, SET).
    pub fn set(&mut self, name: Sym, value: Value, nx: bool, ttl: Option<u32>) -> bool {
        let key = Key { name, value, ttl };
        match self.find(name) {
            Ok(_) if nx => false,
            Ok(i) => {
                self.keys[i] = key;
                true
            }
            Err(i) => {
                self.keys.insert(i, key);
                true
            }
        }
    }

    /// `DEL name`: the number of keys removed. It checks nothing about who set the key.
    pub fn del(&mut self, name: Sym) -> i64 {
        match self.find(name) {
            Ok(i) => {
                self.keys.remove(i);
                1
            }
            Err(_) => 0,
        }
    }

    /// `PEXPIRE`: sets the TTL of an existing key; false when there is no key (RS-4).
    pub fn expire(&mut self, name: Sym, ttl: u32) -> bool {
        match self.find(name) {
            Ok(i) => {
                self.keys[i].ttl = Some(ttl);
                true
            }
            Err(_) => false,
        }
    }

    /// `INCR` stores `value`, creating the key without a TTL or keeping the one it has.
    pub fn incr(&mut self, name: Sym, value: Value) {
        match self.find(name) {
            Ok(i) => self.keys[i].value = value,
            Err(i) => self.keys.insert(
                i,
                Key {
                    name,
                    value,
                    ttl: None,
                },
            ),
        }
    }

    /// The key's state, as a replicated write carries it.
    #[must_use]
    pub fn state_of(&self, name: Sym) -> Write {
        Write {
            key: name,
            state: self.get(name).map(|k| (k.value, k.ttl)),
        }
    }

    /// Resynchronises from `primary`: its keys, each deadline as this node's clock sees it;
    /// nothing left in transit (RF-2).
    pub fn resync(&mut self, primary: &Redis) {
        let ahead = self.skew.saturating_sub(primary.skew);
        self.backlog.clear();
        self.keys.clear();
        for k in &primary.keys {
            let w = primary.state_of(k.name).seen_from(ahead);
            self.apply(&w);
        }
    }

    /// Applies a replicated write.
    pub fn apply(&mut self, w: &Write) {
        match w.state {
            Some((value, ttl)) => {
                self.set(w.key, value, false, ttl);
            }
            None => {
                self.del(w.key);
            }
        }
    }

    /// The nearest expiry, in ticks from now; `Some(0)` when a key is at its deadline.
    #[must_use]
    pub fn next_expiry(&self) -> Option<u32> {
        self.keys.iter().filter_map(|k| k.ttl).min()
    }

    /// The node's clock steps back `dt` ticks: every deadline, in transit too, is that much
    /// further away (RS-3).
    pub fn step_back(&mut self, dt: u32) {
        let later = |t: &mut u32| *t = t.saturating_add(dt);
        for w in &mut self.backlog {
            if let Some((_, Some(t))) = &mut w.state {
                later(t);
            }
        }
        for k in &mut self.keys {
            if let Some(t) = &mut k.ttl {
                later(t);
            }
        }
    }

    /// Empties the node: a restart without persistence (RF-6); returns the keys it had.
    pub fn forget(&mut self) -> Vec<Sym> {
        self.backlog.clear();
        std::mem::take(&mut self.keys)
            .into_iter()
            .map(|k| k.name)
            .collect()
    }

    /// Lets `dt` ticks pass; returns the keys that expired. Redis treats a key as expired
    /// only once its clock is past the deadline (RS-2): a key whose deadline falls exactly
    /// `dt` from now is still present, at TTL 0; one at its deadline already goes.
    pub fn advance(&mut self, dt: u32) -> Vec<Sym> {
        self.age(|t| (*t >= dt).then(|| *t - dt))
    }

    /// Time moves past the deadlines that fall now by less than a tick (1 ms on the
    /// server): the keys at TTL 0 go, and nothing else ages.
    pub fn pass_deadline(&mut self) -> Vec<Sym> {
        self.age(|t| (*t > 0).then_some(*t))
    }

    /// Gives every TTL its new value, `None` for an expired one. A write still in the
    /// replication stream ages too; one that expired in transit arrives as a deletion.
    fn age(&mut self, next: impl Fn(&u32) -> Option<u32>) -> Vec<Sym> {
        for w in &mut self.backlog {
            if let Some((_, Some(t))) = &mut w.state {
                match next(t) {
                    Some(left) => *t = left,
                    None => w.state = None,
                }
            }
        }
        let mut expired = Vec::new();
        self.keys.retain_mut(|k| match &mut k.ttl {
            Some(t) => match next(t) {
                Some(left) => {
                    *t = left;
                    true
                }
                None => {
                    expired.push(k.name);
                    false
                }
            },
            None => true,
        });
        expired
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(ttl: Option<u32>) -> Write {
        Write {
            key: Sym(0),
            state: Some((Value::Int(1), ttl)),
        }
    }

    #[test]
    fn a_write_keeps_its_deadline_on_a_clock_that_differs() {
        assert_eq!(key(Some(10)).seen_from(3), key(Some(7)));
        assert_eq!(key(Some(10)).seen_from(-3), key(Some(13)));
        assert_eq!(key(Some(10)).seen_from(10), key(Some(0)));
        assert_eq!(key(Some(10)).seen_from(11).state, None);
        assert_eq!(key(None).seen_from(50), key(None));
    }

    #[test]
    fn a_clock_stepped_back_delays_every_deadline_and_a_restart_forgets() {
        let mut r = Redis::default();
        r.set(Sym(1), Value::Int(1), false, Some(5));
        r.set(Sym(2), Value::Int(2), false, None);
        r.backlog.push(key(Some(4)));
        r.step_back(10);
        assert_eq!(r.get(Sym(1)).and_then(|k| k.ttl), Some(15));
        assert_eq!(r.get(Sym(2)).and_then(|k| k.ttl), None);
        assert_eq!(r.backlog[0], key(Some(14)));
        assert_eq!(r.forget(), vec![Sym(1), Sym(2)]);
        assert!(r.keys.is_empty() && r.backlog.is_empty());
    }

    #[test]
    fn a_replica_resynchronises_by_its_own_clock() {
        let mut primary = Redis::default();
        primary.set(Sym(1), Value::Int(1), false, Some(5));
        primary.set(Sym(2), Value::Int(2), false, Some(20));
        let mut replica = Redis {
            skew: 6,
            ..Redis::default()
        };
        replica.resync(&primary);
        assert_eq!(replica.get(Sym(1)), None);
        assert_eq!(replica.get(Sym(2)).and_then(|k| k.ttl), Some(14));
    }
}

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
}

/// One replicated write: the key's state after it (`None`: the key is gone).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Write {
    pub key: Sym,
    pub state: Option<(Value, Option<u32>)>,
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

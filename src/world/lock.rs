//! An exclusive lock with a FIFO queue of waiters: an in-process mutex (row locks, with their
//! modes and queues, live in `db`).

use crate::ir::value::Pid;

/// Invariant: the holder is never in the queue, and no pid is queued twice.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Lock {
    pub holder: Option<Pid>,
    pub queue: Vec<Pid>,
}

/// What an attempt to take a lock did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Acquire {
    /// The caller holds the lock now (or already held it).
    Granted,
    /// Another process holds it; the caller is queued behind the earlier waiters.
    Queued { holder: Pid },
}

impl Lock {
    /// Takes the lock if it is free or already ours; otherwise joins the queue.
    pub fn acquire(&mut self, pid: Pid) -> Acquire {
        match self.holder {
            None => {
                self.holder = Some(pid);
                Acquire::Granted
            }
            Some(h) if h == pid => Acquire::Granted,
            Some(h) => {
                if !self.queue.contains(&pid) {
                    self.queue.push(pid);
                }
                Acquire::Queued { holder: h }
            }
        }
    }

    /// Releases the lock and hands it to the longest waiter, whom it returns.
    pub fn release(&mut self) -> Option<Pid> {
        self.holder = if self.queue.is_empty() {
            None
        } else {
            Some(self.queue.remove(0))
        };
        self.holder
    }

    /// Removes a process from the lock entirely (it died or gave up): frees the lock if it held
    /// it, leaves the queue if it waited. Returns the new holder if the lock changed hands.
    pub fn forget(&mut self, pid: Pid) -> Option<Pid> {
        self.queue.retain(|&q| q != pid);
        if self.holder == Some(pid) {
            self.release()
        } else {
            None
        }
    }

    #[must_use]
    pub fn held_by(&self, pid: Pid) -> bool {
        self.holder == Some(pid)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn release_grants_to_the_longest_waiter() {
        let mut l = Lock::default();
        assert_eq!(l.acquire(Pid(0)), Acquire::Granted);
        assert_eq!(l.acquire(Pid(2)), Acquire::Queued { holder: Pid(0) });
        assert_eq!(l.acquire(Pid(1)), Acquire::Queued { holder: Pid(0) });
        assert_eq!(l.release(), Some(Pid(2)));
        assert_eq!(l.forget(Pid(1)), None);
        assert_eq!(l.release(), None);
    }
}

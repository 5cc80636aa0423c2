//! Which statements waited for a lock, as the server tells it: a watcher thread asks the server
//! every few milliseconds which connections wait, and marks the statement each of them is
//! running. A sampled measure: a wait shorter than the interval may be missed.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::{self, JoinHandle};
use std::time::Duration;

use crate::servers::Watcher;

/// How often the watcher asks.
pub const EVERY: Duration = Duration::from_millis(2);

/// One client's connection and the statement it runs now.
#[derive(Debug, Default)]
pub struct Slot {
    /// The server's id of the client's connection (0 before it connects).
    pub conn: AtomicU64,
    /// The number of the statement it runs now (0: none).
    pub running: AtomicU64,
    /// The number of the last statement the server said was waiting.
    pub waited: AtomicU64,
}

impl Slot {
    /// Marks statement `n` as running.
    pub fn start(&self, n: u64) {
        self.running.store(n, Ordering::SeqCst);
    }

    /// Ends statement `n`; whether the server was seen making it wait.
    pub fn end(&self, n: u64) -> bool {
        self.running.store(0, Ordering::SeqCst);
        self.waited.load(Ordering::SeqCst) == n
    }
}

/// The watcher thread.
pub struct Watch {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<Result<(), String>>>,
}

impl Watch {
    /// Starts watching the connections of `slots`.
    pub fn start(mut watcher: Watcher, slots: Arc<Vec<Slot>>) -> Result<Watch, String> {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        let thread = thread::Builder::new()
            .name("interlock-load-watch".into())
            .spawn(move || {
                while !flag.load(Ordering::SeqCst) {
                    mark(&mut watcher, &slots)?;
                    thread::sleep(EVERY);
                }
                Ok(())
            })
            .map_err(|e| format!("starting the watcher: {e}"))?;
        Ok(Watch {
            stop,
            thread: Some(thread),
        })
    }

    /// Stops watching; the watcher's error, if its connection failed.
    pub fn finish(mut self) -> Result<(), String> {
        self.stop.store(true, Ordering::SeqCst);
        match self.thread.take().map(JoinHandle::join) {
            Some(Ok(r)) => r,
            Some(Err(_)) => Err("the watcher thread panicked".into()),
            None => Ok(()),
        }
    }
}

impl Drop for Watch {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// One look: each waiting connection's statement, if it ran the same statement before and
/// after the server was asked, waited.
fn mark(watcher: &mut Watcher, slots: &[Slot]) -> Result<(), String> {
    let before: Vec<u64> = slots
        .iter()
        .map(|s| s.running.load(Ordering::SeqCst))
        .collect();
    let waiting = watcher.waiting()?;
    for (slot, was) in slots.iter().zip(before) {
        let id = slot.conn.load(Ordering::SeqCst);
        if was != 0 && waiting.contains(&id) && slot.running.load(Ordering::SeqCst) == was {
            slot.waited.store(was, Ordering::SeqCst);
        }
    }
    Ok(())
}

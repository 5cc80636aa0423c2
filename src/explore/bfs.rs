//! The breadth-first search loop: layer by layer, each layer expanded in batches (on several
//! threads when asked) and merged into the visited set in order.

use super::chunked::{Links, Packs};
use super::coverage::Coverage;
use super::parallel::map_chunks_beside;
use super::probe::Watch;
use super::properties::{check, rank, Checker, Failure};
use super::queue::Queue;
use super::reduce::{Expansion, Reducer, Scratch};
use super::store::{pack, unpack, Store};
use super::{rules, switches, Bound, Options, Outcome, Progress, Stats, Stop};
use crate::exec::Choice;
use crate::ir::Model;
use crate::world::codec::{Packer, Unpacker};
use crate::world::State;

/// States expanded per batch at most: the unit of parallel work and of progress reports.
const BATCH: usize = 4096;
/// The packed successors a batch may hold, roughly: a batch of states with many large
/// successors (thousands of processes) is cut shorter, so that the caller's limits, checked
/// between batches, hold within this much memory.
const BATCH_BYTES: usize = 32 << 20;
/// States per chunk a thread claims at a time.
const CHUNK: usize = 64;

/// What expanding a run of states produced, computed off the search's thread: every
/// successor packed into one buffer (a new state is copied out of it; a known one costs nothing
/// more), with the hash the store looks it up by and the properties it breaks. One buffer per
/// run, not per state: a state's successors would otherwise cost an allocation or two each.
#[derive(Default)]
struct Expansions {
    states: Vec<Expanded>,
    succ: Vec<Succ>,
    packed: Vec<u8>,
    /// What expanding these states covered.
    cover: Coverage,
}

/// One state's part of [`Expansions`].
struct Expanded {
    exp: Expansion,
    finished: bool,
    /// Its successors, in `Expansions::succ`.
    succ: std::ops::Range<usize>,
    /// Where the successors themselves lie in the expanding worker's `kept`, if it kept
    /// them (one thread).
    kept: std::ops::Range<usize>,
}

struct Succ {
    choice: Choice,
    bytes: std::ops::Range<usize>,
    hash: u64,
    fails: Vec<Failure>,
}

impl Expansions {
    /// Adds the expansion `exp` of one state, whose successors are `succ` (taken from it).
    #[allow(clippy::too_many_arguments)]
    fn push(
        &mut self,
        m: &Model,
        exp: Expansion,
        finished: bool,
        succ: &mut Vec<(Choice, State)>,
        (checker, packer): (&mut Checker, &mut Packer),
        hash: Hash,
        keep: Option<&mut Vec<State>>,
    ) {
        let at = keep.as_deref().map_or(0, Vec::len);
        let first = self.succ.len();
        for (choice, n) in succ.iter() {
            let mut fails = Vec::new();
            checker.check(m, n, &mut fails);
            let start = self.packed.len();
            packer.pack_into(n, &mut self.packed);
            let bytes = start..self.packed.len();
            let hash = hash(&self.packed[bytes.clone()]);
            self.succ.push(Succ {
                choice: *choice,
                bytes,
                hash,
                fails,
            });
        }
        let kept = match keep {
            Some(kept) => {
                kept.extend(succ.drain(..).map(|(_, n)| n));
                at..kept.len()
            }
            None => {
                succ.clear();
                at..at
            }
        };
        self.states.push(Expanded {
            exp,
            finished,
            succ: first..self.succ.len(),
            kept,
        });
    }

    /// Empties it, keeping its buffers for the next batch.
    fn clear(&mut self) {
        self.states.clear();
        self.succ.clear();
        self.packed.clear();
        self.cover = Coverage::default();
    }

    /// How many states' expansions it holds.
    fn len(&self) -> usize {
        self.states.len()
    }

    /// The packed bytes of successor `n`.
    fn bytes(&self, n: &Succ) -> &[u8] {
        &self.packed[n.bytes.clone()]
    }
}

/// How the store hashes a packed state.
type Hash = fn(&[u8]) -> u64;

/// What a thread expanding states keeps from one state to the next: its buffers; its
/// unpacker, which shares the processes and databases of the states it unpacked before; its
/// property checker, which remembers the last verdicts; its packer, which remembers the
/// processes and database it packed last.
struct Worker {
    scratch: Scratch,
    succ: Vec<(Choice, State)>,
    unpacker: Unpacker,
    checker: Checker,
    packer: Packer,
    /// How many states the unpacker's caches were sized for.
    sized_for: usize,
    /// When asked to keep them: the successors of the states expanded, one after another.
    kept: Vec<State>,
}

impl Worker {
    fn new(m: &Model, states: usize) -> Self {
        Worker {
            scratch: Scratch::default(),
            succ: Vec::new(),
            unpacker: Unpacker::for_states(states),
            checker: Checker::new(m),
            packer: Packer::default(),
            sized_for: states,
            kept: Vec::new(),
        }
    }

    /// Whether its caches are as large as a batch of `states` wants.
    fn fits(&self, states: usize) -> bool {
        Unpacker::slots_for(states) <= Unpacker::slots_for(self.sized_for)
    }

    /// Expands one packed state into `out`.
    fn expand(&mut self, r: &Reducer, packed: &[u8], hash: Hash, out: &mut Expansions, stop: &Stop) {
        let s = self.unpacker.unpack(packed);
        self.expand_state(r, &s, (hash, stop), false, out);
    }

    /// Expands one state into `out`; with `keep`, its successors go to `kept` too. Nothing
    /// goes when a limit raised on `stop` cuts the expansion short: the merge then ends the
    /// search before it reads the batch.
    fn expand_state(
        &mut self,
        r: &Reducer,
        s: &State,
        (hash, stop): (Hash, &Stop),
        keep: bool,
        out: &mut Expansions,
    ) {
        let until = r.expand_until(s, true, &mut self.scratch, &mut self.succ, Some(stop));
        let Some(exp) = until else { return };
        let kept = keep.then_some(&mut self.kept);
        let tools = (&mut self.checker, &mut self.packer);
        out.push(r.m, exp, s.is_final(), &mut self.succ, tools, hash, kept);
    }
}

/// What the merge of a layer's batches gathers, and where the layer lies.
struct Layer {
    start: usize,
    end: usize,
    /// The layer is at `--max-depth`: its successors are counted, not visited.
    at_limit: bool,
    deadlocks: Vec<(Failure, u32)>,
    /// Some state at the depth limit had a successor.
    cut: bool,
}

struct Bfs<'m, 'f> {
    r: &'m Reducer<'m>,
    opts: Options,
    store: Store,
    /// Fingerprint mode: the states of the layer being expanded and of the next one.
    queue: Queue,
    /// Fingerprint mode, per state (by index): the state it was found from, and which of
    /// that state's transitions found it (`Expansion::ordinal`). The path to a failure is
    /// replayed from these. (The exact store finds paths from its own states:
    /// `switches::fewest`.)
    links: Links,
    /// Where each layer starts, by state index; the last entry is where the next one starts.
    bounds: Vec<usize>,
    found: Vec<(Failure, u32)>,
    /// With liveness properties: every edge, by source state.
    edges: Option<Vec<Vec<(Choice, u32)>>>,
    stats: Stats,
    monitor: &'f mut dyn FnMut(&Progress) -> Option<Bound>,
    /// A limit raised from outside: polled before each state is expanded and each batch
    /// merged.
    stop: &'f Stop,
    /// The search's own thread's worker, kept from batch to batch.
    mine: Option<Worker>,
    /// One thread, a small search: the states themselves, so that they need not be unpacked.
    /// `decoded` holds every state of the layer being expanded, if it was small enough;
    /// `decoding` the new states of the next layer while it stays under [`BATCH`];
    /// `kept` the successors of the batch being merged (`Expanded::kept` says whose).
    decoded: Option<Vec<State>>,
    decoding: Option<Vec<State>>,
    /// The values of the layer expanded last, kept for their buffer.
    spent: Option<Vec<State>>,
    kept: Vec<Option<State>>,
    /// One thread: the buffers of the batch merged last, emptied, for the next batch.
    spare: Option<Expansions>,
    /// What the batches merged so far covered.
    coverage: Coverage,
    /// The depth-first probe for deep failures (`probe.rs`).
    watch: Watch,
    /// States in the next batch: [`BATCH`], or fewer when the last batch's successors took
    /// many bytes a state ([`BATCH_BYTES`]). Batches are merged in state order, so where
    /// they end changes nothing but how often the limits are checked.
    batch: usize,
}

/// Explores every reachable state of `m` breadth-first (see [`explore_with`]).
#[must_use]
pub fn explore(m: &Model, opts: Options) -> (Outcome, Stats, Coverage) {
    explore_with(m, opts, &mut |_| None, &Stop::default())
}

/// Explores every reachable state of `m` breadth-first; `monitor` sees the progress after
/// every batch and may stop the search with a bound, and a bound raised on `stop` (by
/// another thread) stops it within a state's expansion.
///
/// Layer by layer: a failure found in a layer ends the search once that layer is complete, so
/// the counterexample is a shortest one and the choice among equally short ones does not
/// depend on the order of discovery within the layer, nor on the number of threads.
///
/// # Complexity
/// Time and memory linear in the number of reachable states (within the bounds), times the
/// cost of one step.
#[must_use]
pub fn explore_with(
    m: &Model,
    opts: Options,
    monitor: &mut dyn FnMut(&Progress) -> Option<Bound>,
    stop: &Stop,
) -> (Outcome, Stats, Coverage) {
    if opts.dfs && !m.properties.iter().any(|p| p.kind.is_liveness()) {
        return super::dfs::search(m, opts, monitor, stop);
    }
    let (outcome, stats, coverage) = search(m, opts, monitor, stop);
    // Partial-order reduction keeps some path to every failure, not every shortest one: when
    // it cut any expansion short, the counterexample comes from a search without it
    // (symmetry keeps shortest paths).
    // (The probe's path is not claimed to be the shortest.)
    if stats.ample > 0 && stats.probe.is_none() && matches!(outcome, Outcome::Failed { .. }) {
        let opts = Options { por: false, ..opts };
        return search(m, opts, monitor, stop);
    }
    (outcome, stats, coverage)
}

fn search(
    m: &Model,
    opts: Options,
    monitor: &mut dyn FnMut(&Progress) -> Option<Bound>,
    stop: &Stop,
) -> (Outcome, Stats, Coverage) {
    let live = m.properties.iter().any(|p| p.kind.is_liveness());
    let r = Reducer::new(m, &opts);
    let stats = Stats {
        fingerprints: opts.fingerprints && !live,
        ..r.active()
    };
    let mut b = Bfs {
        r: &r,
        opts,
        store: Store::new(opts.fingerprints && !live),
        queue: Queue::default(),
        links: Links::default(),
        bounds: vec![0, 1],
        found: Vec::new(),
        edges: live.then(Vec::new),
        stats,
        monitor,
        stop,
        mine: None,
        decoded: None,
        decoding: None,
        spent: None,
        kept: Vec::new(),
        spare: None,
        coverage: Coverage::default(),
        watch: Watch::default(),
        batch: 1,
    };
    let mut outcome = b.run();
    if matches!(outcome, Outcome::Incomplete { .. }) {
        // A limit stopped the search after the probe had found a failure.
        outcome = b.probed().unwrap_or(outcome);
    }
    b.stats.states = b.store.len();
    (outcome, b.stats, b.coverage)
}

impl Bfs<'_, '_> {
    fn run(&mut self) -> Outcome {
        let init = self.r.initial();
        let mut fails = Vec::new();
        check(self.r.m, &init, &mut fails);
        let packed = pack(&init);
        self.visit(&packed, self.store.hash(&packed), &fails, None);
        // The initial state is the first layer.
        self.queue.advance();
        self.decoded = Some(vec![init]);
        loop {
            let depth = self.bounds.len() - 2;
            self.stats.depth = depth;
            let (start, end) = (self.bounds[depth], self.bounds[depth + 1]);
            // Only a search still within one batch keeps values: past that, the unpacker's
            // sharing of equal processes and databases between states pays more (M3 with 256
            // clients, whose layers are all small, took 4.0 s unpacked and 4.9 s kept).
            let small = self.opts.threads <= 1 && self.store.len() <= BATCH;
            // The next layer's values go where the last layer's were (grown once, not per
            // layer).
            let mut buffer = self.spent.take().unwrap_or_default();
            buffer.clear();
            self.decoding = small.then_some(buffer);
            if !self.found.is_empty() {
                return self.failed(depth);
            }
            let (m, states) = (self.r.m, self.store.len());
            if self.edges.is_none() && self.watch.at_layer(m, &self.opts, states, self.stop) {
                return self.probed().expect("the probe found a failure");
            }
            let at_limit = rules::at_depth_limit(&self.opts, depth);
            let mut layer = Layer {
                start,
                end,
                at_limit,
                deadlocks: Vec::new(),
                cut: false,
            };
            // Each batch is merged while the other threads expand the next one.
            let (mut ready, ()) = self.expand_beside((start, end), start, |_| ());
            let mut lo = start;
            while lo < end {
                let batch = std::mem::take(&mut ready);
                let hi = lo + batch.iter().map(Expansions::len).sum::<usize>();
                let merge = |bfs: &mut Self| bfs.merge_batch(&mut layer, (lo, hi), batch);
                let (next, stop) = self.expand_beside((start, end), hi, merge);
                if let Some(outcome) = stop {
                    return outcome;
                }
                (ready, lo) = (next, hi);
            }
            if !layer.deadlocks.is_empty() {
                self.found = layer.deadlocks;
                self.bounds.truncate(depth + 2);
                return self.failed(depth);
            }
            if layer.cut {
                return Outcome::Incomplete {
                    bound: Bound::MaxDepth(depth),
                };
            }
            if self.store.len() == end {
                return self.complete();
            }
            self.bounds.push(self.store.len());
            self.queue.advance();
            let next = self.store.len() - end;
            let decoded = self.decoding.take().filter(|d| d.len() == next);
            self.spent = std::mem::replace(&mut self.decoded, decoded);
        }
    }

    /// Expands the batch that starts at state `lo` of the layer `start..end` (none when `lo`
    /// is its end), on the configured threads, results in order; meanwhile the search's own
    /// thread runs `first` (the merge of the batch before), then helps.
    fn expand_beside<R>(
        &mut self,
        (start, end): (usize, usize),
        lo: usize,
        first: impl FnOnce(&mut Self) -> R,
    ) -> (Vec<Expansions>, R) {
        let hi = (lo + self.batch).min(end);
        let (r, hash) = (self.r, self.store.hasher());
        // The search's own thread keeps its worker from batch to batch, unless this batch
        // wants larger caches than it has.
        let mut mine = match self.mine.take() {
            Some(w) if w.fits(hi - lo) => w,
            _ => Worker::new(r.m, hi - lo),
        };
        if self.opts.threads <= 1 {
            // One thread: merge, then expand the states where they lie (or as they are,
            // in a small layer), keeping the successors while the next layer is small.
            let before = first(self);
            if lo == hi {
                // The layer is done: nothing kept is left to merge.
                self.kept.clear();
                self.mine = Some(mine);
                return (Vec::new(), before);
            }
            let keep = self.decoding.is_some();
            let mut out = self.spare.take().unwrap_or_default();
            let mut buffer = Vec::new();
            for i in lo..hi {
                if self.stop.raised().is_some() {
                    break; // the merge ends the search before it reads this batch
                }
                match &self.decoded {
                    Some(states) => {
                        let s = &states[i - start];
                        mine.expand_state(r, s, (hash, self.stop), keep, &mut out);
                    }
                    None => {
                        let packed = self.packed(start, i, &mut buffer);
                        mine.expand(r, packed, hash, &mut out, self.stop);
                    }
                }
            }
            self.kept = mine.kept.drain(..).map(Some).collect();
            out.cover = std::mem::take(&mut mine.scratch.cover);
            self.mine = Some(mine);
            return (vec![out], before);
        }
        // Several: the merge writes the store while the others expand a copy of the batch.
        let inputs = self.inputs(start, lo, hi);
        let init = || Worker::new(r.m, hi - lo);
        let stop = self.stop;
        let expand = |w: &mut Worker, range: std::ops::Range<usize>| {
            let mut out = Expansions::default();
            for k in range {
                if stop.raised().is_some() {
                    break; // the merge ends the search before it reads this batch
                }
                w.expand(r, inputs.get(k), hash, &mut out, stop);
            }
            out.cover = std::mem::take(&mut w.scratch.cover);
            out
        };
        let (threads, n) = (self.opts.threads, hi - lo);
        let (results, before) =
            map_chunks_beside(threads, n, CHUNK, &mut mine, init, expand, || first(self));
        self.mine = Some(mine);
        (results, before)
    }

    /// Packed state `i` of the layer that starts at `start`, not yet expanded: where the
    /// exact store keeps it, or read from the queue into `buffer`.
    fn packed<'a>(&'a self, start: usize, i: usize, buffer: &'a mut Vec<u8>) -> &'a [u8] {
        match &self.store {
            Store::Exact(seen) => seen.packed(i),
            Store::Prints(_) => {
                buffer.clear();
                self.queue.get(i - start, buffer);
                buffer
            }
        }
    }

    /// A copy of the packed states `lo..hi` of the layer that starts at `start`, so that the
    /// merge can write the store while other threads expand them.
    fn inputs(&self, start: usize, lo: usize, hi: usize) -> Packs {
        let (mut inputs, mut buffer) = (Packs::growing(), Vec::new());
        for i in lo..hi {
            inputs.push(self.packed(start, i, &mut buffer));
        }
        inputs
    }

    /// Merges the expansions of the states `lo..hi` of `layer`, in order. Returns the
    /// outcome when the search must stop here (a bound).
    fn merge_batch(
        &mut self,
        layer: &mut Layer,
        (lo, hi): (usize, usize),
        batch: Vec<Expansions>,
    ) -> Option<Outcome> {
        // A batch expanded after a limit was raised may be cut short: never merged.
        if let Some(bound) = self.stop.raised() {
            return Some(Outcome::Incomplete { bound });
        }
        for b in &batch {
            self.coverage.add(&b.cover);
        }
        let bytes: usize = batch.iter().map(|b| b.packed.len()).sum();
        let per_state = bytes / (hi - lo).max(1);
        self.batch = (BATCH_BYTES / per_state.max(1)).clamp(1, BATCH);
        let hashes = batch.iter().flat_map(|b| b.succ.iter().map(|n| n.hash));
        self.store.preload(hashes);
        let states = batch
            .iter()
            .flat_map(|b| (0..b.states.len()).map(move |k| (b, k)));
        for (i, (b, k)) in (lo..).zip(states) {
            let e = &b.states[k];
            if rules::deadlocked(&e.exp, e.finished) {
                layer.deadlocks.push((Failure::Deadlock, i as u32));
            }
            if layer.at_limit {
                layer.cut |= !e.succ.is_empty();
                continue;
            }
            if let Some(bound) = self.merge(i, layer.start, b, k) {
                return Some(Outcome::Incomplete { bound });
            }
        }
        self.queue.release_before(hi - layer.start);
        if let Ok([mut b]) = <[Expansions; 1]>::try_from(batch) {
            b.clear();
            self.spare = Some(b);
        }
        let bound = self.report(layer.end - hi)?;
        Some(Outcome::Incomplete { bound })
    }

    /// Visits the successors of state `i` (of the layer starting at `start`), whose expansion
    /// is state `k` of `b`. Returns a bound when `--max-states` is reached without a failure.
    fn merge(&mut self, i: usize, start: usize, b: &Expansions, k: usize) -> Option<Bound> {
        let e = &b.states[k];
        // The cycle proviso: a reduced expansion must lead somewhere new.
        if rules::redo_in_full(&e.exp, || self.store.contains(b.bytes(&b.succ[e.succ.start]))) {
            let s = unpack(self.packed(start, i, &mut Vec::new()));
            let mut succ = Vec::new();
            let mut sc = Scratch::default();
            let exp = self.r.expand(&s, false, &mut sc, &mut succ);
            self.coverage.add(&sc.cover);
            let tools = (&mut Checker::new(self.r.m), &mut Packer::default());
            let mut again = Expansions::default();
            let hash = self.store.hasher();
            again.push(self.r.m, exp, e.finished, &mut succ, tools, hash, None);
            return self.visit_all(i, &again, 0);
        } else if e.exp.reduced() {
            self.stats.ample += 1;
        }
        self.visit_all(i, b, k)
    }

    /// Visits the successors of state `i` as state `k` of `b` holds them, with no proviso.
    fn visit_all(&mut self, i: usize, b: &Expansions, k: usize) -> Option<Bound> {
        let e = &b.states[k];
        self.stats.transitions += e.succ.len();
        if let Some(edges) = &mut self.edges {
            edges.push(Vec::with_capacity(e.succ.len()));
        }
        // The successors themselves, if the expansion kept them (the cycle proviso's
        // second expansion does not).
        let kept = (e.kept.len() == e.succ.len()).then_some(e.kept.start);
        for (k, n) in b.succ[e.succ.clone()].iter().enumerate() {
            let from = Some((i as u32, e.exp.ordinal(k)));
            let packed = b.bytes(n);
            let (j, new) = self.visit(packed, n.hash, &n.fails, from);
            if new {
                let kept = kept.and_then(|at| self.kept[at + k].take());
                debug_assert!(
                    kept.as_ref().is_none_or(|s| *pack(s) == *packed),
                    "the state kept is the state visited"
                );
                self.decode(kept);
            }
            if let Some(edges) = &mut self.edges {
                edges[i].push((n.choice, j as u32));
            }
            let full = rules::states_full(&self.opts, self.store.len());
            if new && full && self.found.is_empty() {
                return Some(Bound::MaxStates(self.store.len()));
            }
        }
        None
    }

    /// Keeps new state `s` of the next layer as it is, while that layer is small; a state
    /// not at hand (`None`), or one too many, and the next layer is unpacked instead.
    fn decode(&mut self, s: Option<State>) {
        match (&mut self.decoding, s) {
            (Some(states), Some(s)) if states.len() < BATCH => states.push(s),
            _ => self.decoding = None,
        }
    }

    /// Adds a packed state, which breaks `fails`, to the visited set: found from state
    /// `from.0` by the transition in place `from.1` (`None` for the initial state). Returns
    /// its index and whether it is new.
    fn visit(
        &mut self,
        n: &[u8],
        hash: u64,
        fails: &[Failure],
        from: Option<(u32, usize)>,
    ) -> (usize, bool) {
        let (j, new) = self.store.insert(n, hash);
        if !new {
            return (j, false);
        }
        if matches!(self.store, Store::Prints(_)) {
            let (parent, ordinal) = from.unwrap_or((u32::MAX, 0));
            self.links.push(parent, ordinal);
            self.queue.push(n);
        }
        self.found.extend(fails.iter().map(|&f| (f, j as u32)));
        (j, true)
    }

    fn report(&mut self, left: usize) -> Option<Bound> {
        self.stats.states = self.store.len();
        let p = Progress {
            states: self.store.len(),
            transitions: self.stats.transitions,
            depth: self.stats.depth,
            queue: left + (self.store.len() - self.bounds[self.bounds.len() - 1]),
            store_bytes: self.store.bytes() + self.queue.bytes() + self.links.bytes(),
        };
        (self.monitor)(&p)
    }

    /// Every state is known: now the runs can be judged.
    fn complete(&mut self) -> Outcome {
        let Store::Exact(seen) = &self.store else {
            return Outcome::Holds;
        };
        let Some(edges) = self.edges.take() else {
            return Outcome::Holds;
        };
        match super::liveness::check(self.r.m, seen, edges) {
            Some(l) => Outcome::Failed {
                failure: Failure::Property(l.property),
                path: l.path,
                loop_start: l.loop_start,
                also: Vec::new(),
            },
            None => Outcome::Holds,
        }
    }

    /// The counterexample for the failures found in layer `depth`: the most relevant
    /// failure, by a path with the fewest context switches (exact store) or by the parent
    /// links (fingerprints), renamed to the concrete processes.
    fn failed(&mut self, depth: usize) -> Outcome {
        let m = self.r.m;
        self.stats.depth = depth;
        let best = self
            .found
            .iter()
            .map(|&(f, _)| rank(m, f))
            .min()
            .expect("found")
            .1;
        let targets: Vec<u32> = self
            .found
            .iter()
            .filter(|&&(f, _)| f == best)
            .map(|&(_, j)| j)
            .collect();
        let path = match &self.store {
            Store::Exact(seen) => {
                match switches::fewest(self.r, seen, &self.bounds, &targets, self.stop) {
                    Some(path) => path,
                    None => {
                        let bound = self.stop.raised().expect("only a limit cuts it short");
                        return Outcome::Incomplete { bound };
                    }
                }
            }
            Store::Prints(_) => self.parent_path(targets[0]),
        };
        let mut outcome = self.r.failed(best, &path);
        if let Outcome::Failed { also, .. } = &mut outcome {
            *also = self.also_failed(best);
        }
        outcome
    }

    /// The probe's failure as the outcome, if it found one: no counterexample of fewer steps
    /// than the layer being expanded is deep exists, unless partial-order reduction cut an
    /// expansion short (its paths are not the shortest, so the depth bounds nothing).
    fn probed(&mut self) -> Option<Outcome> {
        let outcome = self.watch.take()?;
        let floor = if self.stats.ample == 0 { self.stats.depth } else { 0 };
        self.stats.probe = Some(floor);
        Some(outcome)
    }

    /// The failures of the layer other than `best`, by kind (a runtime error names no
    /// process: the same mistake in interchangeable processes is one), most relevant first.
    fn also_failed(&self, best: Failure) -> Vec<Failure> {
        let m = self.r.m;
        let kind = |f: Failure| match f {
            Failure::RuntimeError(_) => Failure::RuntimeError(crate::ir::value::Pid(0)),
            f => f,
        };
        let mut also: Vec<Failure> = self
            .found
            .iter()
            .map(|&(f, _)| kind(f))
            .filter(|&f| f != kind(best))
            .collect();
        also.sort_by_key(|&f| rank(m, f));
        also.dedup();
        also
    }

    /// The path to state `j` in fingerprint mode: the transitions' places, from the
    /// parent links, replayed from the initial state.
    fn parent_path(&self, mut j: u32) -> Vec<Choice> {
        let mut ordinals = Vec::new();
        while j != 0 {
            let (parent, ordinal) = self.links.get(j);
            ordinals.push(ordinal);
            j = parent;
        }
        ordinals.reverse();
        self.r.replay(&ordinals)
    }
}

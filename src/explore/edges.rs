//! Every transition out of a representative, mirrors included, as the fewest-switches pass
//! walks them: each with its target's representative and the renaming into it.
//!
//! With thousands of interchangeable processes a state has thousands of mirror transitions;
//! computing each one's successor (a copy of the whole state) and its renaming (a
//! permutation of every process) made one expansion quadratic in the processes. A mirror's
//! transition is its chain root's seen through a renaming, so only the roots' successors
//! are computed, and a mirror's renaming is kept as the cycle it composes to, applied to one
//! process at a time.

use crate::exec::Choice;
use crate::ir::value::Pid;
use crate::world::permute::Perm;
use crate::world::State;

/// How a transition's concrete processes are renamed into its target's representative.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Renaming {
    /// The canonical renaming of the root transition's target (an index into
    /// `Edges::perms`), `None` when it is the identity.
    perm: Option<u32>,
    /// A mirror's transition: its chain and its place in it (≥ 1); the root is place 0.
    mirror: Option<(u32, u32)>,
}

impl Renaming {
    /// The transition is a mirror's, derived from its chain root's.
    #[must_use]
    pub fn mirrored(self) -> bool {
        self.mirror.is_some()
    }
}

/// The transitions of one state (see the module's comment).
#[derive(Default)]
pub struct Edges {
    /// Each transition, the index of its target in `targets`, and its renaming.
    pub list: Vec<(Choice, usize, Renaming)>,
    /// The distinct targets' representatives.
    pub targets: Vec<State>,
    perms: Vec<Perm>,
    /// Runs of processes each mirroring the one before (root first).
    chains: Vec<Vec<u16>>,
    /// Per process: its chain and place in it.
    place: Vec<Option<(u32, u32)>>,
}

impl Edges {
    pub(super) fn clear(&mut self, processes: usize) {
        self.list.clear();
        self.targets.clear();
        self.perms.clear();
        self.chains.clear();
        self.place.clear();
        self.place.resize(processes, None);
    }

    /// Records a root transition with its target's representative and renaming.
    pub(super) fn push_root(&mut self, c: Choice, target: State, perm: Option<Perm>) {
        let perm = perm.map(|p| {
            self.perms.push(p);
            (self.perms.len() - 1) as u32
        });
        self.targets.push(target);
        let renaming = Renaming { perm, mirror: None };
        self.list.push((c, self.targets.len() - 1, renaming));
    }

    /// Reads `partners` (per process, the process it mirrors: see
    /// `Symmetry::mirror_partners`) into chains; returns each mirror with its chain root.
    pub(super) fn chain(&mut self, partners: &[Option<u16>]) -> Vec<(Pid, Pid)> {
        let mut mirrors = Vec::new();
        for (q, partner) in partners.iter().enumerate() {
            let Some(mut b) = partner.map(usize::from) else {
                continue;
            };
            if self.place[q].is_some() {
                continue;
            }
            // Walk back to a placed process (placing a root), then place the walk forward.
            let mut path = vec![q];
            while self.place[b].is_none() {
                match partners[b] {
                    Some(before) => {
                        path.push(b);
                        b = before.into();
                    }
                    None => {
                        self.chains.push(vec![b as u16]);
                        self.place[b] = Some(((self.chains.len() - 1) as u32, 0));
                    }
                }
            }
            for &p in path.iter().rev() {
                let before = partners[p].expect("a mirror has a partner");
                let (c, k) = self.place[usize::from(before)].expect("placed before");
                self.chains[c as usize].push(p as u16);
                self.place[p] = Some((c, k + 1));
                mirrors.push((Pid(p as u16), Pid(self.chains[c as usize][0])));
            }
        }
        mirrors
    }

    /// Adds mirror `q`'s transitions: its chain root's (`root_edges`, indices in `list`),
    /// taken by `q`, with their targets and the root's renamings composed with the chain's.
    pub(super) fn push_mirror(&mut self, q: Pid, root_edges: &[usize]) {
        let mirror = self.place[q.index()];
        for &e in root_edges {
            let (c, target, r) = self.list[e];
            let renaming = Renaming { mirror, ..r };
            self.list.push((c.by(q), target, renaming));
        }
    }

    /// Process `p` of the source state, named as in the target's representative.
    ///
    /// A mirror `c_k` of chain `c_0 … c_k` reaches its target through the swaps of each
    /// process with the one before it (`c_{k-1}` with `c_k` first, `c_0` with `c_1` last),
    /// then the root's renaming: the swaps compose to `c_k ↦ c_0`, `c_j ↦ c_{j+1}` (j < k).
    #[must_use]
    pub fn rename(&self, r: Renaming, p: Pid) -> Pid {
        let mut p = p;
        if let Some((chain, k)) = r.mirror {
            let members = &self.chains[chain as usize];
            match self.place[p.index()] {
                Some((c, j)) if c == chain && j == k => p = Pid(members[0]),
                Some((c, j)) if c == chain && j < k => p = Pid(members[j as usize + 1]),
                _ => {}
            }
        }
        r.perm.map_or(p, |i| self.perms[i as usize].apply(p))
    }
}

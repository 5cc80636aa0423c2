//! What lowering knows so far: symbols, tables, ghosts, mutexes, groups; name lookups with hints.

use indexmap::IndexSet;
use std::collections::HashMap;

use super::ast::Name;
use super::diag::Diagnostic;
use super::program::Region;
use super::suggest;
use crate::ir::{Flavour, Ghost, RedisServer, Span, Sym, Table};

/// A declared process group, before its program is lowered.
#[derive(Clone, Debug)]
pub struct GroupInfo {
    pub name: String,
    pub count: usize,
    pub first: usize,
    /// The regions of its program, once lowered.
    pub regions: Vec<Region>,
}

pub struct Cx<'d> {
    pub source: &'d str,
    /// The effective database flavour (the `db` line's, or the override); `None` without `db`.
    pub flavour: Option<Flavour>,
    pub diags: &'d mut Vec<Diagnostic>,
    pub symbols: IndexSet<String>,
    pub tables: Vec<Table>,
    pub ghosts: Vec<Ghost>,
    pub mutexes: Vec<String>,
    pub groups: Vec<GroupInfo>,
    /// The Redis servers: the declared ones, or else the implicit `redis` without replicas.
    pub redis: Vec<RedisServer>,
    /// Some `redis NAME` line declared the servers (else `redis` holds the implicit one).
    pub redis_declared: bool,
    /// Something uses Redis: a command, `atomic`, `watchdog` or `redis(key)`.
    pub redis_used: bool,
    /// Every duration written in the file, in milliseconds (for the tick).
    pub durations: Vec<u64>,
    /// Latencies, draws, arrivals and params, lengths in milliseconds until the tick is known.
    pub workload: crate::ir::workload::Workload,
    /// A SQL statement was met in a model without a `db` line (reported once).
    pub sql_without_db: bool,
    /// Where each line of the source starts (byte offsets), for [`Cx::line`].
    line_starts: Vec<u32>,
    /// Names to their index, for lookups that do not walk the lists: tables, ghosts,
    /// mutexes, groups (kept by [`Cx::add_table`] and its kin).
    index: NameIndex,
}

/// Each kind of declared name, by name.
#[derive(Default)]
struct NameIndex {
    tables: HashMap<String, usize>,
    ghosts: HashMap<String, usize>,
    mutexes: HashMap<String, usize>,
    groups: HashMap<String, usize>,
}

impl<'d> Cx<'d> {
    pub fn new(source: &'d str, diags: &'d mut Vec<Diagnostic>) -> Self {
        let symbols: IndexSet<String> = crate::ir::initial_symbols().into_iter().collect();
        Cx {
            source,
            flavour: None,
            diags,
            symbols,
            tables: Vec::new(),
            ghosts: Vec::new(),
            mutexes: Vec::new(),
            sql_without_db: false,
            groups: Vec::new(),
            redis: Vec::new(),
            redis_declared: false,
            redis_used: false,
            durations: Vec::new(),
            workload: crate::ir::workload::Workload::default(),
            line_starts: std::iter::once(0)
                .chain(
                    source
                        .bytes()
                        .enumerate()
                        .filter(|&(_, b)| b == b'\n')
                        .map(|(i, _)| i as u32 + 1),
                )
                .collect(),
            index: NameIndex::default(),
        }
    }

    pub fn add_table(&mut self, t: Table) {
        self.index.tables.insert(t.name.clone(), self.tables.len());
        self.tables.push(t);
    }

    pub fn add_ghost(&mut self, g: Ghost) {
        self.index.ghosts.insert(g.name.clone(), self.ghosts.len());
        self.ghosts.push(g);
    }

    pub fn add_mutex(&mut self, name: String) {
        self.index.mutexes.insert(name.clone(), self.mutexes.len());
        self.mutexes.push(name);
    }

    pub fn add_group(&mut self, g: GroupInfo) {
        self.index.groups.insert(g.name.clone(), self.groups.len());
        self.groups.push(g);
    }

    pub fn intern(&mut self, s: &str) -> Sym {
        let (index, _) = self.symbols.insert_full(s.to_string());
        Sym(index as u32)
    }

    pub fn report(&mut self, d: Diagnostic) {
        self.diags.push(d);
    }

    /// 1-based line of a span, for "first declared on line N".
    pub fn line(&self, span: Span) -> usize {
        self.line_starts.partition_point(|&s| s <= span.start)
    }

    /// `found`, the index of `name`; else reports it with a did-you-mean or the list of the
    /// `known` names (only then gathered). `what` is `[message, label, listing, none]`.
    fn find(
        &mut self,
        name: &Name,
        found: Option<usize>,
        known: impl FnOnce(&Self) -> Vec<String>,
        what: [&str; 4],
    ) -> Option<usize> {
        if found.is_some() {
            return found;
        }
        let known = known(self);
        let [message, label, listing, none] = what;
        let hint = suggest::hint(&name.text, known.iter().map(String::as_str), listing, none);
        let d = Diagnostic::new(message, name.span, label).with_hint(hint);
        self.report(d);
        None
    }

    pub fn table(&mut self, name: &Name) -> Option<u16> {
        let found = self.index.tables.get(&name.text).copied();
        let known = |cx: &Self| cx.tables.iter().map(|t| t.name.clone()).collect();
        let msg = format!("unknown table \"{}\"", name.text);
        let none = "no table is declared: add `table NAME (...)`";
        let what = [msg.as_str(), "no such table", "tables are", none];
        self.find(name, found, known, what).map(|i| i as u16)
    }

    pub fn column(&mut self, table: u16, name: &Name) -> Option<u16> {
        let t = &self.tables[table as usize];
        let found = t.columns.iter().position(|c| c.name == name.text);
        let known = |cx: &Self| {
            let t = &cx.tables[table as usize];
            t.columns.iter().map(|c| c.name.clone()).collect()
        };
        let msg = format!("unknown column \"{}\" in table \"{}\"", name.text, t.name);
        let listing = format!("the columns of `{}` are", t.name);
        let what = [msg.as_str(), "no such column", listing.as_str(), ""];
        self.find(name, found, known, what).map(|i| i as u16)
    }

    pub fn ghost(&mut self, name: &Name) -> Option<u16> {
        let found = self.index.ghosts.get(&name.text).copied();
        let known = |cx: &Self| cx.ghosts.iter().map(|g| g.name.clone()).collect();
        let msg = format!("unknown ghost \"{}\"", name.text);
        let none = "no ghost is declared: add `ghost NAME = 0`";
        let what = [msg.as_str(), "no such ghost", "ghosts are", none];
        self.find(name, found, known, what).map(|i| i as u16)
    }

    pub fn mutex(&mut self, name: &Name) -> Option<u16> {
        let found = self.index.mutexes.get(&name.text).copied();
        let known = |cx: &Self| cx.mutexes.clone();
        let msg = format!("unknown mutex \"{}\"", name.text);
        let none = "no mutex is declared: add `mutex NAME`";
        let what = [msg.as_str(), "no such mutex", "mutexes are", none];
        self.find(name, found, known, what).map(|i| i as u16)
    }

    pub fn group(&mut self, name: &Name) -> Option<usize> {
        let found = self.index.groups.get(&name.text).copied();
        let known = |cx: &Self| cx.groups.iter().map(|g| g.name.clone()).collect();
        let msg = format!("unknown process group \"{}\"", name.text);
        let what = [
            msg.as_str(),
            "no such group",
            "process groups are",
            "no process is declared",
        ];
        self.find(name, found, known, what)
    }

    /// The op range `start..end` of a region of group `g`'s program.
    pub fn region(&mut self, g: usize, name: &Name) -> Option<(u32, u32)> {
        let info = &self.groups[g];
        let found = info.regions.iter().position(|r| r.name == name.text);
        let known = |cx: &Self| {
            cx.groups[g]
                .regions
                .iter()
                .map(|r| r.name.clone())
                .collect()
        };
        let ranges: Vec<(u32, u32)> = info.regions.iter().map(|r| (r.start, r.end)).collect();
        let group = info.name.clone();
        let msg = format!("unknown region \"{}\" in group \"{group}\"", name.text);
        let listing = format!("the regions of `{group}` are");
        let none = format!(
            "`{group}` has no region: wrap the statements in `region {} {{ ... }}`",
            name.text
        );
        let what = [
            msg.as_str(),
            "no such region",
            listing.as_str(),
            none.as_str(),
        ];
        self.find(name, found, known, what).map(|i| ranges[i])
    }

    /// The index of the Redis server `on NAME` names.
    pub fn server(&mut self, name: &Name) -> Option<u16> {
        if let Some(i) = self.redis.iter().position(|r| r.name == name.text) {
            return Some(i as u16);
        }
        let msg = format!("unknown Redis server \"{}\"", name.text);
        let hint = if self.redis_declared {
            let known = self.redis.iter().map(|r| r.name.as_str());
            suggest::hint(&name.text, known, "Redis servers are", "")
        } else {
            format!(
                "no Redis server is declared: add `redis {}` (the implicit one is `redis`)",
                name.text
            )
        };
        let d = Diagnostic::new(msg, name.span, "no such server").with_hint(hint);
        self.report(d);
        None
    }

    /// The server of a command without `on NAME`: the only one, else an error at `span`.
    /// `example` shows how to name one, with `NAME` for the server.
    pub fn only_server(&mut self, span: Span, example: &str) -> Option<u16> {
        if self.redis.len() == 1 {
            return Some(0);
        }
        let names: Vec<String> = self.redis.iter().map(|r| format!("`{}`", r.name)).collect();
        let example = example.replace("NAME", &self.redis[0].name);
        let d = Diagnostic::new("which Redis server? add `on NAME`", span, "no `on NAME`")
            .with_hint(format!(
                "the model declares several Redis servers ({}); name one, like `{example}`",
                names.join(", ")
            ));
        self.report(d);
        None
    }
}

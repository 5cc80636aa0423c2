//! Grammar of the top level: `model`, `about`, `db`, `table`, `row`, … `expect`.

use std::collections::BTreeSet;

use super::ast::{
    ArrivalAst, ColumnDef, Decl, DeclKind, ExpectDecl, FaultAst, LivenessForm, Name, ProcessDecl, Setting,
};
use super::diag::Diagnostic;
use super::lexer::{Tok, Token};
use super::parser::{PResult, Parser};
use super::suggest;
use crate::ir::workload::Latency;
use crate::ir::{ColumnType, Fairness, Flavour, Isolation, PropertyKind, Span, Timing};

pub const DECLARATIONS: [&str; 31] = [
    "model",
    "param",
    "latency",
    "about",
    "tags",
    "db",
    "set",
    "table",
    "index",
    "unique",
    "row",
    "ghost",
    "mutex",
    "pool",
    "redis",
    "key",
    "timing",
    "fairness",
    "process",
    "fault",
    "invariant",
    "final",
    "eventually",
    "always_eventually",
    "leads_to",
    "reachable",
    "allow",
    "terminates",
    "no_starvation",
    "schedule",
    "expect",
];

/// The server settings `set` knows.
pub const SETTINGS: [&str; 5] = [
    "lock_timeout",
    "deadlock_timeout",
    "innodb_lock_wait_timeout",
    "innodb_snapshot_isolation",
    "sql_mode",
];

/// Parses every declaration it can, reporting the others and moving on to the next line.
pub fn parse_file(p: &mut Parser) -> Vec<Decl> {
    let mut decls = Vec::new();
    loop {
        let round = p.pos;
        p.skip_separators();
        match p.peek().tok {
            Tok::Eof => return decls,
            Tok::Punct("}") => {
                let span = p.bump().span;
                let d = Diagnostic::new("unmatched `}`", span, "nothing to close here")
                    .with_hint("remove it, or add the `{` it was meant to close");
                p.diags.push(d);
                continue;
            }
            _ => {}
        }
        let start = p.pos;
        match p.decl() {
            Ok(kind) => {
                let span = p.span_from(start);
                decls.push(Decl { kind, span });
                p.end_of_decl();
            }
            Err(()) => p.skip_statement(),
        }
        // Every round takes input: a round that takes none would never end.
        debug_assert!(p.pos > round, "a round of the file's loop took no token");
    }
}

impl Parser<'_> {
    fn end_of_decl(&mut self) {
        if !self.at_line_end() {
            let _ = self.unexpected::<()>("the end of the line");
            self.skip_statement();
        }
    }

    fn decl(&mut self) -> PResult<DeclKind> {
        let Tok::Word(word) = self.peek().tok.clone() else {
            return self.unexpected("a declaration");
        };
        let keyword = word.to_ascii_lowercase();
        if keyword == "always" && self.peek_at(1).tok != Tok::Punct(":") {
            // `always eventually NAME: expr`, the two-word spelling of `always_eventually`.
            self.bump();
            if !self.at_word("eventually") {
                let t = self.peek().clone();
                let found = self.describe(&t);
                let msg = format!("expected `eventually`, found {found}");
                let d = Diagnostic::new(msg, t.span, "expected `eventually`").with_hint(
                    "`always eventually NAME: expr` (or `always_eventually`) is the only \
                     property that starts with `always`; for a property of every state, \
                     write `invariant NAME: expr`",
                );
                return self.fail(d);
            }
            self.bump();
            return self.property(PropertyKind::AlwaysEventually);
        }
        if !DECLARATIONS.contains(&keyword.as_str()) {
            return self.unknown_declaration(&word);
        }
        self.bump();
        match keyword.as_str() {
            "model" => Ok(DeclKind::Model(self.string("the model's title")?.0)),
            "about" => self.about(),
            "tags" => self.tags(),
            "db" => self.db(),
            "set" => self.setting(),
            "latency" => self.latency(),
            "param" => self.param(),
            "table" => self.table(),
            "index" => self.index(false),
            "unique" => {
                self.expect_word("index")?;
                self.index(true)
            }
            "row" => self.row(),
            "ghost" => self.ghost(),
            "mutex" => Ok(DeclKind::Mutex(self.name("a mutex name")?)),
            "pool" => {
                let name = self.name("a connection pool's name")?;
                self.expect_word("size")?;
                let size = self.count("a pool's size", 1..=10_000)? as u16;
                Ok(DeclKind::Pool { name, size })
            }
            "redis" => self.redis_server(),
            "key" => self.initial_key(),
            "timing" => self.timing(),
            "fairness" => self.fairness(),
            "process" => self.process(),
            "fault" => self.fault(),
            "invariant" => self.property(PropertyKind::Invariant),
            "final" => self.property(PropertyKind::Final),
            "eventually" => self.property(PropertyKind::Eventually),
            "always_eventually" => self.property(PropertyKind::AlwaysEventually),
            "leads_to" => self.property(PropertyKind::LeadsTo),
            "reachable" => self.property(PropertyKind::Reachable),
            "allow" => self.allow(),
            "terminates" => self.liveness(LivenessForm::Terminates),
            "no_starvation" => self.liveness(LivenessForm::NoStarvation),
            "schedule" => self.schedule(),
            _ => self.expect_decl(),
        }
    }

    fn unknown_declaration<T>(&mut self, word: &str) -> PResult<T> {
        let span = self.peek().span;
        if matches!(word, "and" | "or") {
            let d = Diagnostic::new(
                format!("a line cannot begin with `{word}`"),
                span,
                "the line above ended the property",
            )
            .with_hint(format!(
                "a property goes on to the next line only when its line ends in an operator or \
                 inside parentheses: move `{word}` to the end of the line above"
            ));
            return self.fail(d);
        }
        let hint = suggest::hint(word, DECLARATIONS, "declarations are", "");
        self.fail(
            Diagnostic::new(
                format!("unknown declaration \"{word}\""),
                span,
                "not a declaration",
            )
            .with_hint(hint),
        )
    }

    /// `about "…" "…"`: adjacent strings, possibly on following lines, joined with a space.
    fn about(&mut self) -> PResult<DeclKind> {
        let mut text = self.string("the lesson, as a string")?.0;
        loop {
            self.skip_newlines_before(|p| matches!(p.peek().tok, Tok::Str(_)));
            let Tok::Str(more) = self.peek().tok.clone() else {
                return Ok(DeclKind::About(text));
            };
            self.bump();
            let glued =
                text.ends_with(char::is_whitespace) || more.starts_with(char::is_whitespace);
            if !glued && !text.is_empty() && !more.is_empty() {
                text.push(' ');
            }
            text.push_str(&more);
        }
    }

    /// `db postgres|mysql|mariadb [isolation LEVEL]`.
    fn db(&mut self) -> PResult<DeclKind> {
        if self.eat_word("workers") {
            let n = self.count("the number of workers", 1..=4096)?;
            return Ok(DeclKind::Workers(n as u16));
        }
        let word = self.name("a database flavour (`postgres`, `mysql` or `mariadb`)")?;
        let flavour = flavour(&word.text);
        if flavour.is_none() {
            self.unknown_flavour(&word);
        }
        let isolation = if self.eat_word("isolation") {
            self.isolation_level()?
        } else {
            None
        };
        Ok(DeclKind::Db { flavour, isolation })
    }

    /// `read_uncommitted`, `read_committed`, `repeatable_read`, `serializable`, or the SQL
    /// spellings `read uncommitted`, `read committed`, `repeatable read`; `None` when reported.
    fn isolation_level(&mut self) -> PResult<Option<Isolation>> {
        const LEVELS: [&str; 4] = [
            "read_uncommitted",
            "read_committed",
            "repeatable_read",
            "serializable",
        ];
        let start = self.pos;
        let first = self
            .name("an isolation level (`read_committed`, `repeatable_read`, `serializable` or `read_uncommitted`)")?;
        let mut level = first.text.to_ascii_lowercase();
        let two_words = matches!(level.as_str(), "read" | "repeatable");
        if let (true, Tok::Word(second)) = (two_words, self.peek().tok.clone()) {
            self.bump();
            level = format!("{level}_{}", second.to_ascii_lowercase());
        }
        let span = self.span_from(start);
        let written = self.text(span).to_string();
        Ok(match level.as_str() {
            "read_committed" => Some(Isolation::ReadCommitted),
            "repeatable_read" => Some(Isolation::RepeatableRead),
            "serializable" => Some(Isolation::Serializable),
            "read_uncommitted" => Some(Isolation::ReadUncommitted),
            _ => {
                let hint = suggest::hint(&level, LEVELS, "isolation levels are", "");
                let msg = format!("unknown isolation level \"{written}\"");
                let d = Diagnostic::new(msg, span, "unknown isolation level").with_hint(hint);
                self.diags.push(d);
                None
            }
        })
    }

    /// `set NAME = value`: the value is read as the setting wants it.
    fn setting(&mut self) -> PResult<DeclKind> {
        let name = self.name("a setting name")?;
        let lower = name.text.to_ascii_lowercase();
        if !SETTINGS.contains(&lower.as_str()) {
            let hint = suggest::hint(&name.text, SETTINGS, "settings are", "");
            let msg = format!("unknown setting \"{}\"", name.text);
            let d = Diagnostic::new(msg, name.span, "unknown setting").with_hint(hint);
            return self.fail(d);
        }
        if !self.eat_word("to") {
            self.expect_punct("=")?;
        }
        let value = match lower.as_str() {
            "lock_timeout" => Setting::LockTimeout(self.timeout()?),
            "deadlock_timeout" => Setting::DeadlockTimeout(self.duration()?.0),
            "innodb_lock_wait_timeout" => Setting::InnodbLockWaitTimeout(self.duration()?.0),
            "innodb_snapshot_isolation" => Setting::InnodbSnapshotIsolation(self.switch()?),
            _ => {
                let (mode, _) = self.string("the SQL mode, as a string like `''`")?;
                let upper = mode.to_ascii_uppercase();
                let strict = upper
                    .split(',')
                    .any(|m| matches!(m.trim(), "STRICT_TRANS_TABLES" | "STRICT_ALL_TABLES"));
                Setting::SqlMode { strict }
            }
        };
        Ok(DeclKind::Setting { name, value })
    }

    /// A duration, or `0` (off).
    fn timeout(&mut self) -> PResult<u64> {
        if let Tok::Num { value: 0, suffix } = &self.peek().tok {
            if matches!(suffix.as_deref(), None | Some("ms" | "s")) {
                self.bump();
                return Ok(0);
            }
        }
        Ok(self.duration()?.0)
    }

    /// `on` / `off` (also `true` / `false`, `1` / `0`).
    fn switch(&mut self) -> PResult<bool> {
        let value = match &self.peek().tok {
            Tok::Word(w) => match w.to_ascii_lowercase().as_str() {
                "on" | "true" => Some(true),
                "off" | "false" => Some(false),
                _ => None,
            },
            Tok::Num {
                value: v @ (0 | 1),
                suffix: None,
            } => Some(*v == 1),
            _ => None,
        };
        match value {
            Some(v) => {
                self.bump();
                Ok(v)
            }
            None => self.unexpected("`on` or `off`"),
        }
    }

    /// `index T (col, …)` / `unique index T (col, …)`.
    fn index(&mut self, unique: bool) -> PResult<DeclKind> {
        let table = self.name("a table name")?;
        let columns = self.paren_list(|p| p.name("a column name"))?;
        Ok(DeclKind::Index {
            unique,
            table,
            columns,
        })
    }

    /// `( item, item, … )`, items and commas possibly on several lines.
    fn paren_list<T>(&mut self, mut item: impl FnMut(&mut Self) -> PResult<T>) -> PResult<Vec<T>> {
        self.expect_punct("(")?;
        let mut items = Vec::new();
        loop {
            self.skip_newlines();
            items.push(item(self)?);
            self.skip_newlines();
            if !self.eat_punct(",") {
                break;
            }
        }
        self.expect_punct(")")?;
        Ok(items)
    }

    /// `timing bounded` / `timing async`, either with `split` (a step ends at each reply).
    fn timing(&mut self) -> PResult<DeclKind> {
        let options = [("bounded", Timing::Bounded), ("async", Timing::Async)];
        let timing = self.one_of("timing", "timings", &options)?;
        let split = self.eat_word("split");
        if !split && matches!(self.peek().tok, Tok::Word(_)) {
            // A misspelt option: named as one, with a suggestion.
            self.one_of("timing option", "timing options", &[("split", ())])?;
        }
        Ok(DeclKind::Timing(timing, split))
    }

    /// `allow failed`: processes ending on an uncaught SQL error are part of the story (a
    /// deadlock victim that is meant to fail), so a `holds` does not warn of them.
    fn allow(&mut self) -> PResult<DeclKind> {
        let options = [("failed", ())];
        Ok(DeclKind::AllowFailed(
            self.one_of("allow", "things to allow", &options)?.is_some(),
        ))
    }

    /// `fairness weak` / `fairness strong`.
    fn fairness(&mut self) -> PResult<DeclKind> {
        let options = [("weak", Fairness::Weak), ("strong", Fairness::Strong)];
        Ok(DeclKind::Fairness(self.one_of(
            "fairness",
            "fairnesses",
            &options,
        )?))
    }

    /// A word from a fixed list (case-insensitive); an unknown one is reported with the
    /// closest and `None` returned.
    fn one_of<T: Copy>(
        &mut self,
        what: &str,
        plural: &str,
        options: &[(&'static str, T)],
    ) -> PResult<Option<T>> {
        let words: Vec<&str> = options.iter().map(|(w, _)| *w).collect();
        let expected = format!(
            "a {what} ({})",
            words
                .iter()
                .map(|w| format!("`{w}`"))
                .collect::<Vec<_>>()
                .join(" or ")
        );
        let name = self.name(&expected)?;
        let lower = name.text.to_ascii_lowercase();
        if let Some((_, v)) = options.iter().find(|(w, _)| *w == lower) {
            return Ok(Some(*v));
        }
        let hint = suggest::hint(&name.text, words, &format!("{plural} are"), "");
        let msg = format!("unknown {what} \"{}\"", name.text);
        let d = Diagnostic::new(msg, name.span, format!("unknown {what}")).with_hint(hint);
        self.diags.push(d);
        Ok(None)
    }

    /// `redis NAME [with N replicas]` (`with 1 replica` also reads).
    fn redis_server(&mut self) -> PResult<DeclKind> {
        if self.at_word("workers") && matches!(self.peek_at(1).tok, Tok::Num { .. }) {
            self.bump();
            let n = self.count("the number of workers", 1..=4096)?;
            return Ok(DeclKind::RedisWorkers(n as u16));
        }
        let name = self.name("a Redis server name")?;
        let mut replicas = 0;
        if self.eat_word("with") {
            replicas = self.count("the number of replicas", 0..=4)? as u8;
            if !self.eat_word("replicas") && !self.eat_word("replica") {
                return self.unexpected("`replicas`");
            }
        }
        Ok(DeclKind::Redis { name, replicas })
    }

    /// `key K = V [ttl D] [on S]`: a Redis key that holds `V` (an integer or a string) when
    /// the model starts, expiring after `D` (RS-1, RS-2).
    fn initial_key(&mut self) -> PResult<DeclKind> {
        let key = self.redis_key()?;
        if !self.eat_punct("=") {
            return self.unexpected("`=` and the key's value, like `key lock = 'w0' ttl 5s`");
        }
        let value = self.literal()?;
        if matches!(value.kind, super::ast::LitKind::Null) {
            let d = Diagnostic::new("a key cannot start as null", value.span, "null")
                .with_hint("a key that is not there is not declared: leave the line out");
            return self.fail(d);
        }
        let ttl = if self.eat_word("ttl") {
            Some(self.duration()?)
        } else {
            None
        };
        let on = if self.eat_word("on") {
            Some(self.name("a Redis server name")?)
        } else {
            None
        };
        Ok(DeclKind::InitialKey {
            key,
            value,
            ttl,
            on,
        })
    }

    /// `table T (col type [primary key], …)`; the list may span lines.
    fn table(&mut self) -> PResult<DeclKind> {
        let name = self.name("a table name")?;
        let columns = self.paren_list(|p| p.column())?;
        Ok(DeclKind::Table { name, columns })
    }

    /// `name type [primary key] [unique]`.
    fn column(&mut self) -> PResult<ColumnDef> {
        let name = self.name("a column name")?;
        let ty = self.column_type()?;
        let (mut pk, mut unique): (Option<Span>, Option<Span>) = (None, None);
        loop {
            let start = self.pos;
            if self.eat_word("primary") {
                self.expect_word("key")?;
                pk = Some(self.span_from(start));
            } else if self.eat_word("unique") {
                unique = Some(self.span_from(start));
            } else {
                break;
            }
        }
        if !self.at_punct(",") && !self.at_punct(")") && self.peek().tok != Tok::Newline {
            return self.unexpected("`,`, `)`, `primary key` or `unique`");
        }
        Ok(ColumnDef {
            name,
            ty,
            pk,
            unique,
        })
    }

    fn column_type(&mut self) -> PResult<ColumnType> {
        const TYPES: [&str; 7] = [
            "int",
            "integer",
            "bigint",
            "text",
            "varchar",
            "timestamp",
            "datetime",
        ];
        let ty = self.name("a column type (`int`, `bigint` or `text`)")?;
        let ty = match ty.text.to_ascii_lowercase().as_str() {
            "int" | "integer" => ColumnType::Int,
            "bigint" => ColumnType::BigInt,
            "text" | "varchar" => ColumnType::Text,
            "timestamp" | "datetime" => ColumnType::Timestamp,
            _ => {
                let hint = suggest::hint(&ty.text, TYPES, "column types are", "");
                let msg = format!("unknown column type \"{}\"", ty.text);
                let d = Diagnostic::new(msg, ty.span, "unknown type").with_hint(hint);
                self.diags.push(d);
                ColumnType::Int
            }
        };
        if ty == ColumnType::Text && self.eat_punct("(") {
            self.count("the varchar length", 1..=i64::MAX)?;
            self.expect_punct(")")?;
        }
        Ok(ty)
    }

    /// `row T (v, …)`; one value may be a range `A..B` (`row sku (1..100, 50)`: a row a key).
    fn row(&mut self) -> PResult<DeclKind> {
        let table = self.name("a table name")?;
        let mut through = None;
        let mut at = 0;
        let values = self.paren_list(|p| {
            let lit = p.literal()?;
            if p.at_punct(".") && matches!(p.peek_at(1).tok, Tok::Punct(".")) {
                p.bump();
                p.bump();
                let upper = p.literal()?;
                if through.is_some() {
                    let d = Diagnostic::new("a row has one range of keys", upper.span, "a second range")
                        .with_hint("only the primary key may be a range: `row sku (1..100, 50)`");
                    return p.fail(d);
                }
                through = Some((at, upper));
            }
            at += 1;
            Ok(lit)
        })?;
        Ok(DeclKind::Row {
            table,
            values,
            through,
        })
    }

    /// `ghost g = 0` (the initial value defaults to 0).
    fn ghost(&mut self) -> PResult<DeclKind> {
        let name = self.name("a ghost name")?;
        let mut init = 0;
        if self.eat_punct("=") {
            let lit = self.literal()?;
            let super::ast::LitKind::Int(v) = lit.kind else {
                let d = Diagnostic::new("a ghost starts as an integer", lit.span, "not an integer");
                return self.fail(d);
            };
            init = v;
        }
        Ok(DeclKind::Ghost { name, init })
    }

    /// `process name[N] [on inst] { … }`.
    fn process(&mut self) -> PResult<DeclKind> {
        let start = self.pos - 1;
        let name = self.name("a process name")?;
        let mut count = 1;
        if self.eat_punct("[") {
            count = self.count("the number of processes", 1..=10_000)? as usize;
            self.expect_punct("]")?;
        }
        let on = if self.eat_word("on") {
            Some(self.name("an instance name")?)
        } else {
            None
        };
        let pool = if self.eat_word("pool") {
            Some(self.name("a connection pool's name")?)
        } else {
            None
        };
        let arrival = self.arrival()?;
        let header = self.span_from(start);
        self.skip_newlines_before(|p| p.at_punct("{"));
        let body_start = self.pos;
        let (body, end) = self.block()?;
        let defined = defined_locals(&self.toks[body_start..self.pos]);
        Ok(DeclKind::Process(ProcessDecl {
            name,
            count,
            on,
            pool,
            arrival,
            body,
            end,
            header,
            defined,
        }))
    }

    /// `loop think D`, `arrive poisson R/s`, `arrive every D`, or nothing (run once).
    fn arrival(&mut self) -> PResult<ArrivalAst> {
        if self.eat_word("loop") {
            self.expect_word("think")?;
            return Ok(ArrivalAst::Closed(self.delay_spec()?));
        }
        if !self.eat_word("arrive") {
            return Ok(ArrivalAst::Once);
        }
        if self.eat_word("every") {
            return Ok(ArrivalAst::Open(self.delay_spec()?));
        }
        if self.at_word("poisson") {
            return Ok(ArrivalAst::Open(self.poisson_rate()?));
        }
        self.unexpected("`every D` or `poisson R/s`")
    }

    /// `latency sql|commit|redis|lock D`
    fn latency(&mut self) -> PResult<DeclKind> {
        let word = self.name("an operation kind (`sql`, `commit`, `redis`, `lock` or `replication`)")?;
        let names = Latency::ALL.map(Latency::name);
        let Some(kind) = Latency::ALL
            .into_iter()
            .find(|k| k.name().eq_ignore_ascii_case(&word.text))
        else {
            let hint = suggest::hint(&word.text, names, "operation kinds are", "");
            let msg = format!("unknown operation kind \"{}\"", word.text);
            let d = Diagnostic::new(msg, word.span, "no such kind").with_hint(hint);
            return self.fail(d);
        };
        let delay = self.delay_spec()?;
        Ok(DeclKind::Latency { kind, delay })
    }

    /// `param NAME = V`: its uses were replaced by the value before parsing (`params.rs`).
    fn param(&mut self) -> PResult<DeclKind> {
        let name = self.name("a parameter name")?;
        self.expect_punct("=")?;
        let t = self.peek().clone();
        match &t.tok {
            Tok::Num { suffix: None, .. } => {}
            Tok::Num { suffix: Some(u), .. } if matches!(u.as_str(), "ms" | "s") => {}
            _ => {
                let d = Diagnostic::new("expected the parameter's value", t.span, "not a value")
                    .with_hint("a param is a whole number ≥ 0, maybe a duration: `10`, `50ms`");
                return self.fail(d);
            }
        }
        self.bump();
        // The token, not the text: `--set` may have changed it.
        let value = match &t.tok {
            Tok::Num { value, suffix } => format!("{value}{}", suffix.as_deref().unwrap_or("")),
            _ => self.text(t.span).to_string(),
        };
        Ok(DeclKind::Param { name, value })
    }

    /// After `fault jump SERVER`: `[replica K] by [-]D`, the clock's step in milliseconds,
    /// negative when the clock steps back.
    fn jump(&mut self) -> PResult<FaultAst> {
        let replica = if self.eat_word("replica") {
            self.count("the replica's number", 1..=255)? as u8
        } else {
            0
        };
        if !self.eat_word("by") {
            return self.unexpected(
                "`by` and the clock's step, like `by 2s` (forward) or `by -2s` (back)",
            );
        }
        let back = self.eat_punct("-");
        let (ms, span) = self.duration()?;
        if ms > i32::MAX as u64 {
            let d = Diagnostic::new("clock jump out of range", span, "too far")
                .with_hint("a clock jumps at most 24 days either way");
            return self.fail(d);
        }
        let ms = ms as i64;
        Ok(FaultAst::Jump {
            replica,
            by: if back { -ms } else { ms },
        })
    }

    /// `fault crash|hang|timeout GROUP at most N [during REGION]`,
    /// `fault pause GROUP up to D at most N [during REGION]`,
    /// `fault drift GROUP up to D at most N`, `fault failover SERVER at most N`,
    /// `fault jump SERVER [replica K] by [-]D at most N`,
    /// `fault restart SERVER [down D] at most N`, `fault partition SERVER [for D] at most N`.
    fn fault(&mut self) -> PResult<DeclKind> {
        const KINDS: [&str; 9] = [
            "crash",
            "pause",
            "hang",
            "drift",
            "timeout",
            "failover",
            "jump",
            "restart",
            "partition",
        ];
        let word = self.name(
            "a fault kind (`crash`, `pause`, `hang`, `drift`, `timeout`, `failover`, `jump`, \
             `restart` or `partition`)",
        )?;
        let lower = word.text.to_ascii_lowercase();
        if !KINDS.contains(&lower.as_str()) {
            let hint = suggest::hint(&word.text, KINDS, "the faults are", "");
            let msg = format!("unknown fault \"{}\"", word.text);
            let d = Diagnostic::new(msg, word.span, "unknown fault").with_hint(hint);
            return self.fail(d);
        }
        let on_server = matches!(
            lower.as_str(),
            "failover" | "jump" | "restart" | "partition"
        );
        let group = if on_server {
            self.name("a Redis server name")?
        } else {
            self.name("a process group")?
        };
        let (kind, what) = match lower.as_str() {
            "crash" => (FaultAst::Crash, "the number of crashes"),
            "hang" => (FaultAst::Hang, "the number of hangs"),
            "timeout" => (FaultAst::Timeout, "the number of timeouts"),
            "failover" => (FaultAst::Failover, "the number of failovers"),
            "restart" => {
                let down = if self.eat_word("down") {
                    self.duration()?.0
                } else {
                    0
                };
                (FaultAst::Restart { down }, "the number of restarts")
            }
            "partition" => {
                let heal = if self.eat_word("for") {
                    Some(self.duration()?.0)
                } else {
                    None
                };
                (FaultAst::Partition { heal }, "the number of partitions")
            }
            "jump" => (self.jump()?, "the number of jumps"),
            "drift" => {
                if !self.eat_word("up") {
                    return self
                        .unexpected("`up to` and the largest clock offset, like `up to 2s`");
                }
                self.expect_word("to")?;
                (FaultAst::Drift(self.duration()?.0), "the number of drifts")
            }
            _ => {
                if !self.eat_word("up") {
                    return self.unexpected("`up to` and the longest pause, like `up to 2s`");
                }
                self.expect_word("to")?;
                (FaultAst::Pause(self.duration()?.0), "the number of pauses")
            }
        };
        self.expect_word("at")?;
        self.expect_word("most")?;
        let budget = self.count(what, 1..=255)? as u8;
        let start = self.pos;
        let during = if self.eat_word("during") {
            Some(self.name("a region name")?)
        } else {
            None
        };
        let server_fault = match kind {
            FaultAst::Failover => Some("a failover"),
            FaultAst::Jump { .. } => Some("a clock jump"),
            FaultAst::Restart { .. } => Some("a restart"),
            FaultAst::Partition { .. } => Some("a partition"),
            _ => None,
        };
        if let (Some(what), Some(_)) = (server_fault, &during) {
            let span = self.span_from(start);
            let msg = format!("`during` does not apply to {what}");
            let d = Diagnostic::new(msg, span, "not here").with_hint(format!(
                "{what} happens to a Redis server, not inside a process's region; \
                 remove `during …`"
            ));
            return self.fail(d);
        }
        if let (FaultAst::Drift(_), Some(_)) = (kind, &during) {
            let span = self.span_from(start);
            let d = Diagnostic::new("`during` does not apply to a clock drift", span, "not here")
                .with_hint(
                    "a drifting clock stays off once it drifts, whatever the process runs; \
                     remove `during …`",
                );
            return self.fail(d);
        }
        Ok(DeclKind::Fault {
            kind,
            group,
            budget,
            during,
        })
    }

    /// `invariant name: expr`, `final …`, `eventually …`, `always_eventually …`, and
    /// `leads_to name: P => Q`.
    fn property(&mut self, kind: PropertyKind) -> PResult<DeclKind> {
        let name = self.name("a property name")?;
        self.expect_punct(":")?;
        let expr = self.expr()?;
        let then = if kind == PropertyKind::LeadsTo {
            if !self.eat_punct("=>") {
                let t = self.peek().clone();
                let found = self.describe(&t);
                let msg = format!("expected `=>`, found {found}");
                let d = Diagnostic::new(msg, t.span, "expected `=>`").with_hint(
                    "`leads_to NAME: P => Q`: every state where P holds is followed, \
                     at or after it, by one where Q holds",
                );
                return self.fail(d);
            }
            Some(self.expr()?)
        } else {
            None
        };
        Ok(DeclKind::Property {
            kind,
            name,
            expr,
            then,
        })
    }

    /// `terminates name: GROUP` and `no_starvation name: GROUP[i]` (or `GROUP` for a group
    /// of one).
    fn liveness(&mut self, form: LivenessForm) -> PResult<DeclKind> {
        let name = self.name("a property name")?;
        self.expect_punct(":")?;
        let group = match form {
            LivenessForm::Terminates => self.name("a process group")?,
            LivenessForm::NoStarvation => self.name("a process, like `buyer[0]`")?,
        };
        let index = if self.at_punct("[") {
            let open = self.pos;
            self.bump();
            let lit = self.literal()?;
            self.expect_punct("]")?;
            if form == LivenessForm::Terminates {
                let span = self.span_from(open);
                let d = Diagnostic::new("`terminates` takes a whole group", span, "an index")
                    .with_hint(format!(
                        "`terminates NAME: {0}` checks every process of `{0}`; remove the index",
                        group.text
                    ));
                return self.fail(d);
            }
            Some(lit)
        } else {
            None
        };
        Ok(DeclKind::Liveness {
            form,
            name,
            group,
            index,
        })
    }

    /// `expect [FLAVOUR, … :] holds` / `… violated name` / `… deadlock`.
    fn expect_decl(&mut self) -> PResult<DeclKind> {
        let flavours = self.expect_flavours()?;
        if self.eat_word("schedule") {
            let expect = self.schedule_claims()?;
            return Ok(DeclKind::Expect { flavours, expect });
        }
        let what = self.name("`holds`, `violated NAME`, `deadlock` or `schedule NAME: …`")?;
        let expect = match what.text.to_ascii_lowercase().as_str() {
            "holds" => ExpectDecl::Holds,
            "deadlock" => ExpectDecl::Deadlock,
            "violated" => ExpectDecl::Violated(self.name("the name of a property")?),
            _ => {
                let known = ["holds", "violated", "deadlock", "schedule"];
                let hint = suggest::hint(&what.text, known, "expectations are", "");
                let msg = format!("unknown expectation \"{}\"", what.text);
                let d = Diagnostic::new(msg, what.span, "unknown expectation").with_hint(hint);
                return self.fail(d);
            }
        };
        Ok(DeclKind::Expect { flavours, expect })
    }

    /// `postgres, mysql:` before an expectation, when the line starts with a word followed by
    /// `,` or `:`.
    fn expect_flavours(&mut self) -> PResult<Option<Vec<(Flavour, Span)>>> {
        let listed = matches!(self.peek().tok, Tok::Word(_))
            && matches!(self.peek_at(1).tok, Tok::Punct("," | ":"));
        if !listed {
            return Ok(None);
        }
        let mut flavours = Vec::new();
        loop {
            let word = self.name("a database flavour (`postgres`, `mysql` or `mariadb`)")?;
            match flavour(&word.text) {
                Some(f) => flavours.push((f, word.span)),
                None => self.unknown_flavour(&word),
            }
            if !self.eat_punct(",") {
                break;
            }
        }
        self.expect_punct(":")?;
        Ok(Some(flavours))
    }

    fn unknown_flavour(&mut self, word: &Name) {
        let hint = suggest::hint(&word.text, FLAVOURS, "the databases are", "");
        let msg = format!("unknown database \"{}\"", word.text);
        let d = Diagnostic::new(msg, word.span, "unknown database").with_hint(hint);
        self.diags.push(d);
    }
}

const FLAVOURS: [&str; 3] = ["postgres", "mysql", "mariadb"];

/// The flavour a word names, if any.
fn flavour(word: &str) -> Option<Flavour> {
    match word.to_ascii_lowercase().as_str() {
        "postgres" => Some(Flavour::Postgres),
        "mysql" => Some(Flavour::Mysql),
        "mariadb" => Some(Flavour::Mariadb),
        _ => None,
    }
}

/// Locals a body assigns (`$x = …` at the start of a statement) or binds (`into $a, $b`,
/// `catch $e`, `pick $x`).
fn defined_locals(toks: &[Token]) -> BTreeSet<String> {
    let mut defined = BTreeSet::new();
    for (i, t) in toks.iter().enumerate() {
        let next = toks.get(i + 1).map(|t| &t.tok);
        match &t.tok {
            Tok::Local(name) if next == Some(&Tok::Punct("=")) && starts_statement(toks, i) => {
                defined.insert(name.clone());
            }
            Tok::Word(w) if w.eq_ignore_ascii_case("catch") || w.eq_ignore_ascii_case("pick") => {
                if let Some(Tok::Local(name)) = next {
                    defined.insert(name.clone());
                }
            }
            Tok::Word(w) if w.eq_ignore_ascii_case("into") => {
                let mut j = i + 1;
                while let Some(Tok::Local(name)) = toks.get(j).map(|t| &t.tok) {
                    defined.insert(name.clone());
                    j += 1;
                    if toks.get(j).map(|t| &t.tok) != Some(&Tok::Punct(",")) {
                        break;
                    }
                    j += 1;
                }
            }
            _ => {}
        }
    }
    defined
}

fn starts_statement(toks: &[Token], i: usize) -> bool {
    i == 0
        || matches!(
            toks[i - 1].tok,
            Tok::Newline | Tok::Punct(";") | Tok::Punct("{") | Tok::Punct("}")
        )
}

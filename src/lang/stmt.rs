//! Grammar of process code: blocks, assignments, control flow, delays, locks, Redis commands.

use super::ast::{Block, GhostOp, Name, RedisAst, Stmt, StmtKind};
use super::decls::DECLARATIONS;
use super::diag::Diagnostic;
use super::lexer::Tok;
use super::parser::{PResult, Parser};
use super::suggest;
use crate::ir::Span;

const STATEMENTS: [&str; 34] = [
    "if", "else", "for", "repeat", "loop", "break", "return", "work", "sleep", "call", "pick", "raise", "lock", "unlock", "atomic",
    "await", "retry", "begin", "start", "commit", "rollback", "select", "update", "insert",
    "delete", "SET", "GET", "DEL", "PEXPIRE", "PTTL", "INCR", "WAIT", "watchdog", "region",
];

/// The Redis commands, lower-case.
const REDIS: [&str; 6] = ["set", "get", "del", "pexpire", "pttl", "incr"];

/// Words that start a SQL statement.
const SQL_STARTS: [&str; 8] = [
    "select", "update", "begin", "start", "commit", "rollback", "insert", "delete",
];

impl Parser<'_> {
    /// `{ stmt* }`: the statements and the closing brace's span.
    pub fn block(&mut self) -> PResult<(Block, Span)> {
        let open = self.expect_punct("{")?;
        self.nested(|p| Ok(p.block_rest(open)))
    }

    fn block_rest(&mut self, open: Span) -> (Block, Span) {
        let mut stmts = Vec::new();
        loop {
            let before = self.pos;
            self.skip_separators();
            if self.at_declaration() {
                self.pos = before;
                return (stmts, self.unclosed(open));
            }
            match self.peek().tok {
                Tok::Punct("}") => return (stmts, self.bump().span),
                Tok::Eof => return (stmts, self.unclosed(open)),
                _ => {}
            }
            let start = self.pos;
            match self.stmt() {
                Ok(kind) => {
                    let span = self.span_from(start);
                    stmts.push(Stmt { kind, span });
                    self.end_of_stmt();
                }
                Err(()) => self.skip_statement(),
            }
            // Every round takes input: a round that takes none would never end.
            debug_assert!(
                self.pos > before,
                "a round of the block's loop took no token"
            );
        }
    }

    /// Reports a block left open; the program ends where the text stopped.
    fn unclosed(&mut self, open: Span) -> Span {
        let d = Diagnostic::new("unclosed `{`", open, "this `{` is never closed")
            .with_hint("add the missing `}`");
        self.diags.push(d);
        let end = self.toks[self.pos.saturating_sub(1)].span.end;
        Span { start: end, end }
    }

    /// A top-level declaration keyword at the start of a line inside a block means the block
    /// was left open: stop there so the declaration is read as one.
    fn at_declaration(&self) -> bool {
        let Tok::Word(w) = &self.peek().tok else {
            return false;
        };
        let line_start = self.pos == 0 || self.toks[self.pos - 1].tok == Tok::Newline;
        let assigns = matches!(self.peek_at(1).tok, Tok::Punct("=" | "+=" | "-="));
        let lower = w.to_ascii_lowercase();
        // `set` at the start of a line in a block is the Redis command.
        line_start
            && !assigns
            && lower != "set"
            && (DECLARATIONS.contains(&lower.as_str()) || lower == "always")
    }

    fn end_of_stmt(&mut self) {
        if !self.at_stmt_end() {
            let _ = self.unexpected::<()>("the end of the statement");
            self.skip_statement();
        }
    }

    fn stmt(&mut self) -> PResult<StmtKind> {
        match self.peek().tok.clone() {
            Tok::Local(name) => self.set_local(name),
            Tok::Word(w) => {
                let assigns = matches!(self.peek_at(1).tok, Tok::Punct("=" | "+=" | "-="));
                if assigns {
                    return self.set_ghost();
                }
                self.keyword_stmt(&w)
            }
            _ => self.unexpected("a statement"),
        }
    }

    fn keyword_stmt(&mut self, word: &str) -> PResult<StmtKind> {
        let lower = word.to_ascii_lowercase();
        if SQL_STARTS.contains(&lower.as_str()) {
            return self.sql_stmt();
        }
        match lower.as_str() {
            "set" | "get" | "del" | "pexpire" | "pttl" | "incr" | "wait" => self.redis(false),
            "watchdog" => self.watchdog(),
            "region" => self.region(),
            "if" => self.if_stmt(),
            "repeat" => self.repeat(),
            "for" => self.for_stmt(),
            "loop" => self.loop_stmt(),
            "retry" => self.retry(),
            "return" => self.return_stmt(),
            "work" | "sleep" => self.delay(lower == "work"),
            "call" => self.call_stmt(),
            "raise" => {
                self.bump();
                Ok(StmtKind::Raise(self.error_code()?))
            }
            "pick" => self.pick_stmt(),
            "lock" | "unlock" => self.lock(lower == "lock"),
            "await" => self.await_stmt(),
            "atomic" => self.atomic(),
            "break" => {
                self.bump();
                Ok(StmtKind::Break)
            }
            "else" => {
                let d = Diagnostic::new("`else` without `if`", self.peek().span, "no `if` here")
                    .with_hint("`else` goes right after the `}` of an `if` block");
                self.fail(d)
            }
            _ => self.unknown_statement(word),
        }
    }

    fn unknown_statement<T>(&mut self, word: &str) -> PResult<T> {
        let span = self.peek().span;
        let hint = match suggest::closest(word, STATEMENTS) {
            Some(best) => format!("did you mean `{best}`?"),
            None => "a statement starts with a keyword, a SQL or Redis command, `$local =` \
                     or `ghost =`"
                .to_string(),
        };
        let msg = format!("unknown statement \"{word}\"");
        self.fail(Diagnostic::new(msg, span, "not a statement").with_hint(hint))
    }

    /// `$x = expr`
    fn set_local(&mut self, name: String) -> PResult<StmtKind> {
        let t = self.bump();
        if name == "me" {
            let d = Diagnostic::new("cannot assign to `$me`", t.span, "`$me` is read-only")
                .with_hint("`$me` is the running process; pick another name");
            return self.fail(d);
        }
        self.expect_punct("=")?;
        let expr = self.expr()?;
        let name = Name {
            text: name,
            span: t.span,
        };
        Ok(StmtKind::SetLocal { name, expr })
    }

    /// `g = e`, `g += e`, `g -= e`
    fn set_ghost(&mut self) -> PResult<StmtKind> {
        let name = self.name("a ghost name")?;
        let op = match self.bump().tok {
            Tok::Punct("+=") => GhostOp::Add,
            Tok::Punct("-=") => GhostOp::Sub,
            _ => GhostOp::Set,
        };
        let expr = self.expr()?;
        Ok(StmtKind::SetGhost { name, op, expr })
    }

    /// `if e { … } [else if e { … }]* [else { … }]`
    fn if_stmt(&mut self) -> PResult<StmtKind> {
        self.bump();
        let mut arms = vec![self.arm()?];
        let mut otherwise = None;
        loop {
            self.skip_newlines_before(|p| p.at_word("else"));
            if !self.eat_word("else") {
                break;
            }
            if self.eat_word("if") {
                arms.push(self.arm()?);
            } else {
                self.skip_newlines_before(|p| p.at_punct("{"));
                otherwise = Some(self.block()?.0);
                break;
            }
        }
        Ok(StmtKind::If { arms, otherwise })
    }

    fn arm(&mut self) -> PResult<(super::ast::Expr, Block)> {
        let cond = self.expr()?;
        self.skip_newlines_before(|p| p.at_punct("{"));
        Ok((cond, self.block()?.0))
    }

    /// `repeat N { … }`
    fn repeat(&mut self) -> PResult<StmtKind> {
        let start = self.pos;
        self.bump();
        let count = self.count("the repeat count", 1..=1_000_000)? as u32;
        let head = self.span_from(start);
        self.skip_newlines_before(|p| p.at_punct("{"));
        let body = self.block()?.0;
        Ok(StmtKind::Repeat { count, head, body })
    }

    /// `loop { … }`
    fn loop_stmt(&mut self) -> PResult<StmtKind> {
        let head = self.bump().span;
        self.skip_newlines_before(|p| p.at_punct("{"));
        let body = self.block()?.0;
        Ok(StmtKind::Loop { head, body })
    }

    /// `retry N on 'code', … [backoff D] { … }`
    fn retry(&mut self) -> PResult<StmtKind> {
        let start = self.pos;
        self.bump();
        let attempts = self.count("the number of attempts", 1..=1000)? as u32;
        self.expect_word("on")?;
        let mut codes = vec![self.error_code()?];
        while self.eat_punct(",") {
            codes.push(self.error_code()?);
        }
        let backoff = if self.eat_word("backoff") {
            Some(self.backoff_spec()?)
        } else {
            None
        };
        let head = self.span_from(start);
        self.skip_newlines_before(|p| p.at_punct("{"));
        let body = self.block()?.0;
        Ok(StmtKind::Retry {
            attempts,
            codes,
            backoff,
            head,
            body,
        })
    }

    /// An error code, written as a string: `'40001'`.
    fn error_code(&mut self) -> PResult<(String, Span)> {
        if let Tok::Num { .. } = self.peek().tok {
            let span = self.peek().span;
            let written = self.text(span).to_string();
            let d = Diagnostic::new("an error code is a string", span, "not quoted")
                .with_hint(format!("write it `'{written}'`"));
            return self.fail(d);
        }
        self.string("an error code, like `'40001'`")
    }

    /// `return ["outcome"]`
    fn return_stmt(&mut self) -> PResult<StmtKind> {
        self.bump();
        if self.at_stmt_end() {
            return Ok(StmtKind::Return(None));
        }
        let (outcome, _) = self.string("an outcome string or the end of the statement")?;
        Ok(StmtKind::Return(Some(outcome)))
    }

    /// `work 100ms` / `sleep 2s` / `work 100..300ms` / `sleep 1s..2s`
    fn delay(&mut self, work: bool) -> PResult<StmtKind> {
        self.bump();
        if !work && matches!(self.peek().tok, Tok::Local(_) | Tok::Punct("(")) {
            return self.computed_sleep();
        }
        let delay = self.delay_spec()?;
        Ok(if work {
            StmtKind::Work(delay)
        } else {
            StmtKind::Sleep(delay)
        })
    }

    /// `sleep EXPR ms|s`: a pause whose length the process computes.
    fn computed_sleep(&mut self) -> PResult<StmtKind> {
        let expr = self.expr()?;
        let unit = match &self.peek().tok {
            Tok::Word(w) if w.eq_ignore_ascii_case("ms") => 1,
            Tok::Word(w) if w.eq_ignore_ascii_case("s") => 1000,
            _ => {
                let t = self.peek().clone();
                let d = Diagnostic::new("a computed sleep needs its unit", t.span, "ms or s?")
                    .with_hint("write `sleep $delay ms` (the value counts milliseconds) or `sleep $delay s`");
                return self.fail(d);
            }
        };
        self.bump();
        Ok(StmtKind::SleepFor(expr, unit))
    }

    /// `call NAME D`: a call to another service.
    fn call_stmt(&mut self) -> PResult<StmtKind> {
        self.bump();
        let name = self.name("the name of the service called, like `payment`")?;
        Ok(StmtKind::Call(name, self.delay_spec()?))
    }

    /// A duration or a range of durations, `100..300ms` or `100ms..300ms`: the shortest and
    /// the longest in milliseconds (equal for a plain duration). Without its own unit, the
    /// lower end takes the upper end's.
    pub(super) fn duration_range(&mut self) -> PResult<(u64, u64)> {
        let t = self.peek().clone();
        let ranged = matches!(self.peek_at(1).tok, Tok::Punct("."))
            && matches!(self.peek_at(2).tok, Tok::Punct("."));
        let Tok::Num { value, suffix } = t.tok else {
            return self.unexpected("a duration like `100ms`, `2s` or `100..300ms`");
        };
        if !ranged {
            let (ms, _) = self.duration()?;
            return Ok((ms, ms));
        }
        self.bump();
        self.bump();
        self.bump();
        let upper = match &self.peek().tok {
            Tok::Num { suffix, .. } => suffix.clone(),
            _ => None,
        };
        let (hi, hi_span) = self.duration()?;
        let factor = match suffix.or(upper).map(|u| u.to_ascii_lowercase()).as_deref() {
            Some("ms") => 1,
            Some("s") => 1000,
            Some(unit) => {
                let unit = unit.to_string();
                return self.bad_unit(t.span, &unit);
            }
            // `duration` accepted the upper end, so it has a unit.
            None => 1,
        };
        // A range may start at nothing: `sleep 0..1s` (full jitter).
        let (lo, _) = if value == 0 {
            (0, t.span)
        } else {
            self.checked_ms(value, factor, t.span)?
        };
        if lo > hi {
            let span = Span {
                start: t.span.start,
                end: hi_span.end,
            };
            let d = Diagnostic::new(
                "reversed duration range",
                span,
                "the longer end comes first",
            )
            .with_hint(format!("write the shorter time first, like `{hi}..{lo}ms`"));
            return self.fail(d);
        }
        Ok((lo, hi))
    }

    /// `lock m` / `unlock m`
    fn lock(&mut self, lock: bool) -> PResult<StmtKind> {
        self.bump();
        let name = self.name("a mutex name")?;
        Ok(if lock {
            StmtKind::Lock(name)
        } else {
            StmtKind::Unlock(name)
        })
    }

    /// A positive duration with a unit, in milliseconds.
    pub fn duration(&mut self) -> PResult<(u64, Span)> {
        let t = self.peek().clone();
        let Tok::Num { value, suffix } = t.tok else {
            return self.unexpected("a duration like `100ms` or `2s`");
        };
        self.bump();
        let factor = match suffix.as_deref().map(str::to_ascii_lowercase).as_deref() {
            Some("ms") => 1,
            Some("s") => 1000,
            None => {
                let msg = "duration without a unit";
                let d = Diagnostic::new(msg, t.span, "milliseconds or seconds?")
                    .with_hint(format!("write `{value}ms` or `{value}s`"));
                return self.fail(d);
            }
            Some(_) => return self.bad_unit(t.span, suffix.as_deref().unwrap_or("")),
        };
        self.checked_ms(value, factor, t.span)
    }

    fn bad_unit<T>(&mut self, span: Span, unit: &str) -> PResult<T> {
        let d = Diagnostic::new(
            format!("bad duration unit \"{unit}\""),
            span,
            "unknown unit",
        )
        .with_hint("durations are written with `ms` or `s`, like `150ms` or `2s`");
        self.fail(d)
    }

    fn checked_ms(&mut self, value: i64, factor: u64, span: Span) -> PResult<(u64, Span)> {
        let ms = (value as u64).saturating_mul(factor);
        if ms == 0 || ms > u64::from(u32::MAX) {
            let d = Diagnostic::new("duration out of range", span, "not a usable duration")
                .with_hint("a duration is more than 0 and at most 49 days");
            return self.fail(d);
        }
        Ok((ms, span))
    }

    /// `await CMD …`: any Redis command but `WAIT`.
    fn await_stmt(&mut self) -> PResult<StmtKind> {
        self.bump();
        if self.at_word("wait") {
            let span = self.peek().span;
            let d = Diagnostic::new("`WAIT` cannot follow `await`", span, "blocks by itself")
                .with_hint(
                    "WAIT already blocks until the replicas have the writes or the timeout \
                     passes; test its reply instead: `WAIT 1 100 into $n`",
                );
            return self.fail(d);
        }
        let redis = REDIS.iter().any(|c| self.at_word(c));
        if !redis {
            return self
                .unexpected("a Redis command (`SET`, `GET`, `DEL`, `PEXPIRE`, `PTTL` or `INCR`)");
        }
        self.redis(true)
    }

    /// `atomic [on SERVER] { … }`
    fn atomic(&mut self) -> PResult<StmtKind> {
        let start = self.pos;
        self.bump();
        let on = if self.eat_word("on") {
            Some(self.server_name()?)
        } else {
            None
        };
        let head = self.span_from(start);
        self.skip_newlines_before(|p| p.at_punct("{"));
        let body = self.block()?.0;
        Ok(StmtKind::Atomic { body, on, head })
    }

    /// `SET key value [NX] [PX ms]`, `PEXPIRE key ms`, `WAIT numreplicas timeout` and
    /// `GET`/`DEL`/`PTTL`/`INCR key`, each followed by `[on SERVER] [into $x]`.
    fn redis(&mut self, wait: bool) -> PResult<StmtKind> {
        let command = self.name("a Redis command")?.text.to_ascii_uppercase();
        let cmd = if command == "WAIT" {
            let replicas = self.count("the number of replicas", 0..=255)? as u8;
            let timeout = self.ttl("WAIT")?;
            RedisAst::Wait { replicas, timeout }
        } else {
            let key = self.redis_key()?;
            match command.as_str() {
                "SET" => {
                    let value = self.expr()?;
                    let (nx, px, ex) = self.set_options()?;
                    RedisAst::Set {
                        key,
                        value,
                        nx,
                        px,
                        ex,
                    }
                }
                "PEXPIRE" => RedisAst::Pexpire {
                    key,
                    ttl: self.ttl("PEXPIRE")?,
                },
                "GET" => RedisAst::Get(key),
                "PTTL" => RedisAst::Pttl(key),
                "INCR" => RedisAst::Incr(key),
                _ => RedisAst::Del(key),
            }
        };
        let on = if self.eat_word("on") {
            Some(self.server_name()?)
        } else {
            None
        };
        if on.is_some() && (self.at_word("nx") || self.at_word("px")) {
            let span = self.peek().span;
            let d = Diagnostic::new("SET's options go before `on`", span, "after `on NAME`")
                .with_hint("write the options first: `SET key value NX PX 300 on NAME`");
            return self.fail(d);
        }
        let cmd = self.replica(cmd, wait, on.is_none())?;
        let into = self.redis_into(&command, on.is_none())?;
        if into.is_some() && self.at_word("on") {
            let span = self.peek().span;
            let d = Diagnostic::new("`on NAME` goes before `into`", span, "after `into`")
                .with_hint(format!(
                    "name the server, then bind the reply: `{command} … on NAME into $x`"
                ));
            return self.fail(d);
        }
        Ok(StmtKind::Redis {
            cmd,
            into,
            wait,
            on,
        })
    }

    /// `GET key [on S] replica K`: turns the GET into a replica read; any other command, or
    /// one after `await`, is refused. `on` must come before `replica`.
    fn replica(&mut self, cmd: RedisAst, wait: bool, no_on: bool) -> PResult<RedisAst> {
        if !self.at_word("replica") {
            return Ok(cmd);
        }
        let start = self.pos;
        let word = self.peek().span;
        let key = match cmd {
            RedisAst::Get(key) if !wait => key,
            RedisAst::Get(_) => {
                let d =
                    Diagnostic::new("`await` cannot read from a replica", word, "after `await`")
                        .with_hint(
                            "`await` repeats a command on the primary; read the replica with \
                     `GET key on S replica K into $v` and test `$v` yourself",
                        );
                return self.fail(d);
            }
            _ => {
                let d = Diagnostic::new("only `GET` reads from a replica", word, "not a GET")
                    .with_hint(
                        "commands go to the primary; read a replica with \
                         `GET key on S replica K`",
                    );
                return self.fail(d);
            }
        };
        self.bump();
        let replica = self.count("the replica number", 0..=255)? as u8;
        let span = self.span_from(start);
        if no_on && self.at_word("on") {
            let span = self.peek().span;
            let d = Diagnostic::new("`on NAME` goes before `replica`", span, "after `replica`")
                .with_hint("name the server, then the replica: `GET key on NAME replica 1`");
            return self.fail(d);
        }
        Ok(RedisAst::GetReplica { key, replica, span })
    }

    /// `watchdog KEY lease D` / `watchdog stop`.
    fn watchdog(&mut self) -> PResult<StmtKind> {
        self.bump();
        let stop = self.at_word("stop")
            && matches!(
                self.peek_at(1).tok,
                Tok::Newline | Tok::Eof | Tok::Punct(";" | "}")
            );
        if stop {
            self.bump();
            return Ok(StmtKind::WatchdogStop);
        }
        let key = self.redis_key()?;
        if !self.eat_word("lease") {
            return self.unexpected("`lease` and a duration, like `lease 30s`");
        }
        let (lease, span) = self.duration()?;
        if lease % 3 != 0 {
            let below = lease - lease % 3;
            let above = below + 3;
            let options = if below > 0 {
                format!("`{below}ms` or `{above}ms`")
            } else {
                format!("`{above}ms`")
            };
            let d = Diagnostic::new(
                "a watchdog lease must be a multiple of 3 ms",
                span,
                format!("{lease}ms is not"),
            )
            .with_hint(format!(
                "the watchdog renews the key every third of its lease; try {options}"
            ));
            return self.fail(d);
        }
        Ok(StmtKind::Watchdog { key, lease })
    }

    /// `region NAME { … }`
    fn region(&mut self) -> PResult<StmtKind> {
        self.bump();
        let name = self.name("a region name")?;
        self.skip_newlines_before(|p| p.at_punct("{"));
        let body = self.block()?.0;
        Ok(StmtKind::Region { name, body })
    }

    /// The server after `on`: a name, or a `for` variable (`on $n`), kept as `$n`.
    fn server_name(&mut self) -> PResult<Name> {
        let t = self.peek().clone();
        match t.tok {
            Tok::Local(name) if name != "me" => {
                self.bump();
                Ok(Name {
                    text: format!("${name}"),
                    span: t.span,
                })
            }
            _ => self.name("a Redis server name"),
        }
    }

    /// A Redis key: a string, or a name written as Redis users write keys — words, numbers,
    /// `$variables` and `:`, `-`, `.`, `/` with no space between them (`lock:order:42`,
    /// `job-7`, `lock:$n`). A `$variable` stays in the text; lowering replaces it.
    pub(super) fn redis_key(&mut self) -> PResult<Name> {
        let t = self.peek().clone();
        match t.tok {
            Tok::Str(text) => {
                self.bump();
                return Ok(Name { text, span: t.span });
            }
            Tok::Word(_) | Tok::Num { .. } | Tok::Local(_) => {}
            _ => return self.unexpected("a Redis key (a name like `lock:order:42`, or a string)"),
        }
        let start = t.span.start;
        let mut end = t.span.end;
        self.bump();
        loop {
            let next = self.peek();
            let glued = next.span.start == end
                && match &next.tok {
                    Tok::Word(_) | Tok::Num { .. } | Tok::Local(_) => true,
                    Tok::Punct(p) => matches!(*p, ":" | "-" | "." | "/"),
                    _ => false,
                };
            if !glued {
                break;
            }
            end = next.span.end;
            self.bump();
        }
        let span = Span { start, end };
        let text = self.text(span).to_string();
        if let Some(last) = text.chars().last().filter(|c| ":-./".contains(*c)) {
            let d = Diagnostic::new(
                format!("a Redis key written without quotes cannot end with `{last}`"),
                span,
                "this key",
            )
            .with_hint(format!("quote it: `'{text}'`"));
            return self.fail(d);
        }
        Ok(Name { text, span })
    }

    /// SET's `NX` and `PX ms` or `EX s`, in any order; stops at `on`, `into`, a local or the
    /// end. The TTL is in milliseconds whichever was written (RS-1).
    fn set_options(&mut self) -> PResult<(bool, Option<u64>, bool)> {
        let (mut nx, mut px, mut ex) = (false, None::<u64>, false);
        while !self.at_stmt_end() && !self.at_word("on") && !self.at_word("into") {
            let option = match &self.peek().tok {
                Tok::Word(w) => w.to_ascii_uppercase(),
                Tok::Local(_) => break,
                _ => {
                    return self.unexpected(
                        "`NX`, `PX ms`, `EX s`, `on NAME`, `into $x` or the end of the statement",
                    )
                }
            };
            match option.as_str() {
                "NX" => nx = self.once(nx, "NX")?,
                "PX" | "EX" => {
                    self.one_ttl(px.is_some(), &option)?;
                    ex = option == "EX";
                    px = Some(if option == "PX" {
                        self.ttl("PX")?
                    } else {
                        self.seconds("EX")?
                    });
                }
                _ => return self.unknown_option(),
            }
        }
        Ok((nx, px, ex))
    }

    /// Consumes an option word; fails if it was already given.
    fn once(&mut self, seen: bool, option: &str) -> PResult<bool> {
        let span = self.bump().span;
        if seen {
            let msg = format!("`{option}` given twice");
            return self.fail(Diagnostic::new(msg, span, "repeated option"));
        }
        Ok(true)
    }

    /// Consumes `PX` or `EX`; fails if a TTL was already given (Redis: a syntax error).
    fn one_ttl(&mut self, seen: bool, option: &str) -> PResult<()> {
        let span = self.bump().span;
        if seen {
            let msg = format!("`{option}` after another TTL");
            let d = Diagnostic::new(msg, span, "a second TTL")
                .with_hint("SET takes one TTL: `PX ms` or `EX s`");
            return self.fail(d);
        }
        Ok(())
    }

    /// `EX s`: a positive whole number of seconds, as Redis reads it; returned in ms.
    fn seconds(&mut self, command: &str) -> PResult<u64> {
        let start = self.pos;
        let negative = self.eat_punct("-");
        let t = self.peek().clone();
        let value = match &t.tok {
            Tok::Num {
                value,
                suffix: None,
            } if !negative && *value > 0 => *value,
            Tok::Num { suffix: Some(_), .. } if !negative => {
                let msg = format!("{command} takes whole seconds, without a unit");
                let d = Diagnostic::new(msg, t.span, "a unit")
                    .with_hint("write `EX 5` for five seconds, or `PX 1500` for milliseconds");
                return self.fail(d);
            }
            Tok::Num { .. } => {
                self.bump();
                let span = self.span_from(start);
                let msg = format!("{command} must be a positive integer");
                let d = Diagnostic::new(msg, span, "not a valid TTL")
                    .with_hint("EX is the key's time to live in seconds, e.g. `EX 10`");
                return self.fail(d);
            }
            _ => return self.unexpected("a TTL in seconds"),
        };
        self.bump();
        Ok(self.checked_ms(value, 1000, t.span)?.0)
    }

    fn unknown_option<T>(&mut self) -> PResult<T> {
        const REDIS_ONLY: [&str; 5] = ["XX", "EXAT", "PXAT", "KEEPTTL", "GET"];
        let t = self.peek().clone();
        let word = self.text(t.span).to_string();
        if REDIS_ONLY.contains(&word.to_ascii_uppercase().as_str()) {
            let msg = format!("SET option \"{word}\" is not supported yet");
            let d = Diagnostic::new(msg, t.span, "not supported yet")
                .with_hint("interlock models `NX`, `PX ms` and `EX s` (a TTL)");
            return self.fail(d);
        }
        let hint = match suggest::closest(&word, ["NX", "PX", "EX", "on", "into"]) {
            Some(best) => format!("did you mean `{best}`?"),
            None => "SET takes `NX`, `PX ms` or `EX s`, `on NAME` and `into $x`".to_string(),
        };
        let msg = format!("unknown SET option \"{word}\"");
        self.fail(Diagnostic::new(msg, t.span, "unknown option").with_hint(hint))
    }

    /// The TTL of `PX ms` or `PEXPIRE key ms`, or WAIT's timeout: a positive integer count
    /// of milliseconds (`2s` is also read).
    fn ttl(&mut self, command: &str) -> PResult<u64> {
        let start = self.pos;
        let negative = self.eat_punct("-");
        let t = self.peek().clone();
        let Tok::Num { value, suffix } = t.tok else {
            return self.unexpected(if command == "WAIT" {
                "a timeout in milliseconds"
            } else {
                "a TTL in milliseconds"
            });
        };
        self.bump();
        let factor = match suffix.as_deref().map(str::to_ascii_lowercase).as_deref() {
            None | Some("ms") => 1,
            Some("s") => 1000,
            Some(_) => return self.bad_unit(t.span, suffix.as_deref().unwrap_or("")),
        };
        // `WAIT n 0` blocks until the replicas have the writes, however long (RF-4).
        let forever = command == "WAIT" && value == 0;
        if negative || value == 0 && !forever {
            let span = self.span_from(start);
            let (msg, label, hint) = match command {
                "PX" => (
                    "PX must be a positive integer",
                    "not a valid TTL",
                    "PX is the key's time to live in milliseconds, e.g. `PX 3000`",
                ),
                "WAIT" => (
                    "WAIT's timeout cannot be negative",
                    "not a valid timeout",
                    "the timeout is in milliseconds, e.g. `WAIT 1 100`; `0` waits for ever",
                ),
                _ => (
                    "PEXPIRE must be a positive integer",
                    "not a valid TTL",
                    "PEXPIRE sets the key's time to live in milliseconds, e.g. \
                     `PEXPIRE lock 3000`; to remove the key, use `DEL`",
                ),
            };
            let d = Diagnostic::new(msg, span, label).with_hint(hint);
            return self.fail(d);
        }
        if forever {
            return Ok(0);
        }
        Ok(self.checked_ms(value, factor, t.span)?.0)
    }

    /// An optional `into $x`; anything else before the end of the statement is an error.
    /// `on` says whether `on NAME` may still come.
    fn redis_into(&mut self, command: &str, on: bool) -> PResult<Option<Name>> {
        if self.at_stmt_end() {
            return Ok(None);
        }
        if let Tok::Local(name) = &self.peek().tok {
            let msg = format!("`{command}` takes `into` before `${name}`");
            let d = Diagnostic::new(msg, self.peek().span, "missing `into`")
                .with_hint(format!("write `into ${name}` to bind the reply"));
            return self.fail(d);
        }
        if !self.eat_word("into") {
            let on = if on { "`on NAME`, " } else { "" };
            let what = format!("{on}`into $x` or the end of the {command} command");
            return self.unexpected(&what);
        }
        Ok(Some(self.bound_local()?))
    }

    /// A `$local` to bind a result to.
    pub fn bound_local(&mut self) -> PResult<Name> {
        match self.peek().tok.clone() {
            Tok::Local(name) if name != "me" => Ok(Name {
                text: name,
                span: self.bump().span,
            }),
            Tok::Local(_) => {
                let span = self.peek().span;
                let d = Diagnostic::new("cannot bind `$me`", span, "`$me` is read-only")
                    .with_hint("bind the result to a local of your own, like `$ok`");
                self.fail(d)
            }
            _ => self.unexpected("a `$local`"),
        }
    }
}

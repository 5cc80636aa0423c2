//! SQL in process code: finding the statement's extent, splitting off `into`, running sqlparser.

use sqlparser::dialect::PostgreSqlDialect;
use sqlparser::parser::{Parser as SqlParser, ParserError};
use sqlparser::tokenizer::Location;

use super::ast::{LockAst, Name, SqlText, StmtKind};
use super::diag::Diagnostic;
use super::lexer::Tok;
use super::parser::{PResult, Parser, MAX_OPERATORS};
use crate::ir::{LockMode, Span, WaitPolicy};

pub const SQL_SUBSET: &str = "the SQL subset is `SELECT cols FROM t [WHERE e] [ORDER BY c] [LIMIT n] \
                              [FOR UPDATE | FOR SHARE | ...]`, `UPDATE t SET c = e, ... [WHERE e]`, \
                              `INSERT INTO t (cols) VALUES (...)`, `DELETE FROM t [WHERE e]`, \
                              `BEGIN`, `COMMIT`, `ROLLBACK`";

impl Parser<'_> {
    /// A SQL statement: everything up to a newline, `;` or an unmatched `}`, then
    /// `[into $a, …] [catch $e]`.
    pub fn sql_stmt(&mut self) -> PResult<StmtKind> {
        let start = self.pos;
        let end = self.sql_end();
        let catch_at = self.find_bound("catch", start, end, true);
        let body_end = catch_at.unwrap_or(end);
        let into_at = self.find_bound("into", start, body_end, false);
        let text_end = into_at.unwrap_or(body_end);
        let base = self.toks[start].span.start as usize;
        let stop = self.toks[text_end - 1].span.end as usize;
        let text = self.src[base..stop].to_string();
        let words = self.toks[start..text_end]
            .iter()
            .filter_map(|t| match &t.tok {
                Tok::Word(w) => Some(Name {
                    text: w.clone(),
                    span: t.span,
                }),
                _ => None,
            })
            .collect();
        let mut into = Vec::new();
        if let Some(at) = into_at {
            self.pos = at + 1;
            into = self.bound_list(body_end)?;
        }
        let catch = match catch_at {
            Some(at) => Some(self.catch(at, end)?),
            None => None,
        };
        let select =
            matches!(&self.toks[start].tok, Tok::Word(w) if w.eq_ignore_ascii_case("select"));
        let lock_at = select.then(|| self.find_lock(start, text_end)).flatten();
        let lock = match lock_at {
            Some(at) => {
                self.pos = at;
                Some(self.lock_clause(text_end)?)
            }
            None => None,
        };
        self.pos = end;
        let parsed_end = lock_at.map_or(stop, |at| self.toks[at - 1].span.end as usize);
        let src = self.src;
        let stmt = if self.too_many_sql_operators(start, text_end) {
            None
        } else {
            self.run_sqlparser(&src[base..parsed_end], base)
        };
        let sql = SqlText {
            stmt,
            ascii: text.is_ascii(),
            text,
            base,
            into,
            catch,
            lock,
            words,
        };
        Ok(StmtKind::Sql(Box::new(sql)))
    }

    /// `catch $e` at token `at`, which must end the statement (at token `end`).
    fn catch(&mut self, at: usize, end: usize) -> PResult<Name> {
        self.pos = at + 1;
        let local = self.bound_local()?;
        if self.pos < end {
            let t = self.peek().clone();
            let found = self.describe(&t);
            let msg = format!("expected the end of the statement, found {found}");
            let d = Diagnostic::new(msg, t.span, "after `catch`")
                .with_hint("`catch $e` ends the statement: `select ... into $a catch $e`");
            return self.fail(d);
        }
        Ok(local)
    }

    /// Index of the first token after the statement.
    fn sql_end(&self) -> usize {
        let mut depth = 0usize;
        let mut i = self.pos;
        loop {
            match self.toks[i].tok {
                Tok::Newline | Tok::Punct(";") | Tok::Eof => return i,
                Tok::Punct("}") if depth == 0 => return i,
                Tok::Punct("}") => depth -= 1,
                Tok::Punct("{") => depth += 1,
                _ => {}
            }
            i += 1;
        }
    }

    /// The last `word` (`into`, `catch`) outside parentheses that is followed by a `$local`.
    fn find_bound(&self, word: &str, start: usize, end: usize, first: bool) -> Option<usize> {
        let mut depth = 0i32;
        let mut found = None;
        for i in start + 1..end {
            match &self.toks[i].tok {
                Tok::Punct("(") => depth += 1,
                Tok::Punct(")") => depth -= 1,
                Tok::Word(w) if depth == 0 && w.eq_ignore_ascii_case(word) => {
                    if matches!(self.toks[i + 1].tok, Tok::Local(_)) {
                        found = Some(i);
                        if first {
                            return found;
                        }
                    }
                }
                _ => {}
            }
        }
        found
    }

    /// Where a SELECT's locking clause starts: `FOR UPDATE|SHARE|NO|KEY` or `LOCK IN`.
    fn find_lock(&self, start: usize, end: usize) -> Option<usize> {
        let word = |i: usize| match &self.toks[i].tok {
            Tok::Word(w) => w.to_ascii_lowercase(),
            _ => String::new(),
        };
        let mut depth = 0i32;
        for i in start + 1..end.saturating_sub(1) {
            match &self.toks[i].tok {
                Tok::Punct("(") => depth += 1,
                Tok::Punct(")") => depth -= 1,
                Tok::Word(_) if depth == 0 => {
                    let next = word(i + 1);
                    let starts = match word(i).as_str() {
                        "for" => matches!(next.as_str(), "update" | "share" | "no" | "key"),
                        "lock" => next == "in",
                        _ => false,
                    };
                    if starts {
                        return Some(i);
                    }
                }
                _ => {}
            }
        }
        None
    }

    /// `FOR UPDATE | FOR NO KEY UPDATE | FOR SHARE | FOR KEY SHARE | LOCK IN SHARE MODE`,
    /// then `NOWAIT` or `SKIP LOCKED`; nothing may follow before token `end`.
    fn lock_clause(&mut self, end: usize) -> PResult<LockAst> {
        let start = self.pos;
        let mut in_share_mode = false;
        let mode = if self.eat_word("for") {
            if self.eat_word("update") {
                LockMode::Update
            } else if self.eat_word("no") {
                self.sql_word("key")?;
                self.sql_word("update")?;
                LockMode::NoKeyUpdate
            } else if self.eat_word("share") {
                LockMode::Share
            } else {
                self.sql_word("key")?;
                self.sql_word("share")?;
                LockMode::KeyShare
            }
        } else {
            self.bump();
            self.sql_word("in")?;
            self.sql_word("share")?;
            self.sql_word("mode")?;
            in_share_mode = true;
            LockMode::Share
        };
        let mode_span = self.span_from(start);
        if self.pos < end && self.at_word("of") {
            let of = self.pos;
            self.pos = end;
            let span = self.span_from(of);
            let d = Diagnostic::new(
                "a locking clause with OF is not supported yet",
                span,
                "not supported yet",
            )
            .with_hint("the statement reads one table, and the clause locks the rows it reads");
            return self.fail(d);
        }
        let wait_start = self.pos;
        let wait = if self.pos < end && self.eat_word("nowait") {
            WaitPolicy::NoWait
        } else if self.pos < end && self.eat_word("skip") {
            self.sql_word("locked")?;
            WaitPolicy::SkipLocked
        } else {
            WaitPolicy::Wait
        };
        let wait_span = (wait != WaitPolicy::Wait).then(|| self.span_from(wait_start));
        if self.pos < end {
            let t = self.peek().clone();
            let found = self.describe(&t);
            let msg = format!("SQL syntax error: expected the end of the statement, found {found}");
            let d = Diagnostic::new(msg, t.span, "after the locking clause")
                .with_hint("the locking clause comes last, after WHERE, ORDER BY and LIMIT; it may end with `NOWAIT` or `SKIP LOCKED`");
            return self.fail(d);
        }
        Ok(LockAst {
            mode,
            wait,
            in_share_mode,
            mode_span,
            wait_span,
        })
    }

    /// A keyword of a locking clause, or a SQL syntax error.
    fn sql_word(&mut self, word: &str) -> PResult<()> {
        if self.eat_word(word) {
            return Ok(());
        }
        let t = self.peek().clone();
        let found = self.describe(&t);
        let expected = word.to_ascii_uppercase();
        let msg = format!("SQL syntax error: expected {expected}, found {found}");
        let d = Diagnostic::new(msg, t.span, format!("expected {expected}")).with_hint(
            "locking clauses are `FOR UPDATE`, `FOR NO KEY UPDATE`, `FOR SHARE`, \
             `FOR KEY SHARE` and `LOCK IN SHARE MODE`",
        );
        self.fail(d)
    }

    /// `$a, $b` up to token `end`.
    fn bound_list(&mut self, end: usize) -> PResult<Vec<Name>> {
        let mut names = vec![self.bound_local()?];
        while self.pos < end {
            self.expect_punct(",")?;
            names.push(self.bound_local()?);
        }
        Ok(names)
    }

    /// Whether the statement's tokens `start..end` hold more than [`MAX_OPERATORS`]
    /// operators and list commas (reported): sqlparser and the lowering walk its tree
    /// recursively, one level per operator of a chain or item of an `IN` list.
    fn too_many_sql_operators(&mut self, start: usize, end: usize) -> bool {
        let is_operator = |t: &Tok| match t {
            Tok::Word(w) => ["and", "or", "not"]
                .iter()
                .any(|k| w.eq_ignore_ascii_case(k)),
            Tok::Punct(p) => matches!(
                *p,
                "+" | "-" | "*" | "/" | "%" | "=" | "==" | "<>" | "!=" | "<" | "<=" | ">" | ">=" | ","
            ),
            _ => false,
        };
        let Some(at) = self.toks[start..end]
            .iter()
            .filter(|t| is_operator(&t.tok))
            .nth(MAX_OPERATORS)
            .map(|t| t.span)
        else {
            return false;
        };
        let d = Diagnostic::new(
            format!("this SQL statement has more than {MAX_OPERATORS} operators and list items"),
            at,
            "one too many",
        )
        .with_hint("split the condition over several statements, or into a shorter one");
        self.diags.push(d);
        true
    }

    fn run_sqlparser(&mut self, text: &str, base: usize) -> Option<sqlparser::ast::Statement> {
        match SqlParser::parse_sql(&PostgreSqlDialect {}, text) {
            Ok(mut stmts) if stmts.len() == 1 => stmts.pop(),
            Ok(_) => {
                let span = Span::new(base, base + text.len());
                let d = Diagnostic::new("expected one SQL statement", span, "not one statement")
                    .with_hint(SQL_SUBSET);
                self.diags.push(d);
                None
            }
            Err(e) => {
                let d = sql_error(self.src, &e, text, base);
                self.diags.push(d);
                None
            }
        }
    }
}

/// Maps sqlparser's error (its location is relative to `text`) onto the model file.
fn sql_error(src: &str, err: &ParserError, text: &str, base: usize) -> Diagnostic {
    let raw = match err {
        ParserError::TokenizerError(s) | ParserError::ParserError(s) => s.clone(),
        ParserError::RecursionLimitExceeded => "nested too deeply".to_string(),
    };
    let (message, location) = match raw.rfind(" at Line: ") {
        Some(at) => (raw[..at].to_string(), parse_location(&raw[at + 10..])),
        None => (raw, None),
    };
    let message = message
        .replace("Expected: ", "expected ")
        .replace(", found: ", ", found ");
    let end = base + text.len();
    let (span, label) = match location.and_then(|l| offset_in(text, l)) {
        Some(offset) => (word_span(src, base + offset, end), "here"),
        None => (Span::new(end, end), "the statement ends here"),
    };
    Diagnostic::new(format!("SQL syntax error: {message}"), span, label).with_hint(SQL_SUBSET)
}

/// `1, Column: 15` → the location.
fn parse_location(s: &str) -> Option<Location> {
    let (line, column) = s.split_once(", Column: ")?;
    let column: String = column.chars().take_while(char::is_ascii_digit).collect();
    Some(Location::new(
        line.trim().parse().ok()?,
        column.parse().ok()?,
    ))
}

/// Byte offset in `text` of a sqlparser location (1-based line and character column).
pub fn offset_in(text: &str, loc: Location) -> Option<usize> {
    offset_in_text(text, loc, false)
}

/// [`offset_in`], told whether `text` is ASCII (then a column is a byte count).
fn offset_in_text(text: &str, loc: Location, ascii: bool) -> Option<usize> {
    if loc.line == 0 || loc.column == 0 {
        return None;
    }
    if ascii && loc.line == 1 {
        return Some(((loc.column - 1) as usize).min(text.len()));
    }
    let mut line_start = 0;
    for _ in 1..loc.line {
        line_start += text.get(line_start..)?.find('\n')? + 1;
    }
    let line = &text[line_start..];
    let column = (loc.column - 1) as usize;
    let offset = line
        .char_indices()
        .nth(column)
        .map_or(line.len(), |(i, _)| i);
    Some(line_start + offset)
}

/// The word starting at `offset` (at least one character), not past `end`.
fn word_span(src: &str, offset: usize, end: usize) -> Span {
    let rest = src.get(offset..end).unwrap_or("");
    let word = rest
        .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == '$'))
        .unwrap_or(rest.len());
    let len = if word == 0 {
        rest.chars().next().map_or(0, char::len_utf8)
    } else {
        word
    };
    Span::new(offset, offset + len)
}

impl SqlText {
    /// A sqlparser span as a span of the model file; the whole statement when it has none.
    pub fn map_span(&self, span: sqlparser::tokenizer::Span) -> Span {
        let start = offset_in_text(&self.text, span.start, self.ascii);
        let end = offset_in_text(&self.text, span.end, self.ascii);
        match (start, end) {
            (Some(s), Some(e)) if s <= e => Span::new(self.base + s, self.base + e),
            (Some(s), _) => Span::new(self.base + s, self.base + s),
            _ => self.span(),
        }
    }

    /// The first word of the statement spelled `word` (any case); the whole statement if none.
    pub fn word_span(&self, word: &str) -> Span {
        self.words
            .iter()
            .find(|w| w.text.eq_ignore_ascii_case(word))
            .map_or_else(|| self.span(), |w| w.span)
    }
}

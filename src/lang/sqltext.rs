//! SQL in process code: finding the statement's extent, splitting off `into`, running sqlparser.

use sqlparser::dialect::PostgreSqlDialect;
use sqlparser::parser::{Parser as SqlParser, ParserError};
use sqlparser::tokenizer::Location;

use super::ast::{Name, SqlText, StmtKind};
use super::diag::Diagnostic;
use super::lexer::Tok;
use super::parser::{PResult, Parser};
use crate::ir::Span;

pub const SQL_SUBSET: &str = "the SQL subset is `SELECT cols FROM t [WHERE e] [FOR UPDATE]`, \
                              `UPDATE t SET c = e, ... [WHERE e]`, `BEGIN`, `COMMIT`, `ROLLBACK`";

impl Parser<'_> {
    /// A SQL statement: everything up to a newline, `;` or an unmatched `}`.
    pub fn sql_stmt(&mut self) -> PResult<StmtKind> {
        let start = self.pos;
        let end = self.sql_end();
        let into_at = self.find_into(start, end);
        let text_end = into_at.unwrap_or(end);
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
            into = self.bound_list(end)?;
        }
        self.pos = end;
        let stmt = self.run_sqlparser(&text, base);
        let sql = SqlText {
            stmt,
            text,
            base,
            into,
            words,
        };
        Ok(StmtKind::Sql(Box::new(sql)))
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

    /// The last `into` outside parentheses that is followed by a `$local`.
    fn find_into(&self, start: usize, end: usize) -> Option<usize> {
        let mut depth = 0i32;
        let mut found = None;
        for i in start + 1..end {
            match &self.toks[i].tok {
                Tok::Punct("(") => depth += 1,
                Tok::Punct(")") => depth -= 1,
                Tok::Word(w) if depth == 0 && w.eq_ignore_ascii_case("into") => {
                    if matches!(self.toks[i + 1].tok, Tok::Local(_)) {
                        found = Some(i);
                    }
                }
                _ => {}
            }
        }
        found
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
    if loc.line == 0 || loc.column == 0 {
        return None;
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
        let start = offset_in(&self.text, span.start);
        let end = offset_in(&self.text, span.end);
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

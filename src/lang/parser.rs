//! Parser core: the token cursor, error reporting and recovery, shared by every grammar file.

use super::ast::{Lit, LitKind, Name};
use super::diag::Diagnostic;
use super::lexer::{Tok, Token};
use crate::ir::Span;

/// `Err(())` means the error has already been reported; the caller recovers.
pub type PResult<T> = Result<T, ()>;

/// How deep blocks and expressions may nest before the parser gives up on them.
const MAX_NESTING: usize = 64;
/// How many operators one expression (or one SQL statement) may have. A chain `a + b + …`
/// nests one level per operator in the tree every later pass walks recursively, so a bound
/// on its length is what keeps those passes from overflowing the stack.
pub const MAX_OPERATORS: usize = 1000;

pub struct Parser<'a> {
    pub src: &'a str,
    pub toks: Vec<Token>,
    pub pos: usize,
    pub diags: &'a mut Vec<Diagnostic>,
    depth: usize,
    /// Expressions being parsed, outermost first (parenthesised ones count too).
    in_expr: usize,
    /// Operators of the outermost expression being parsed, so far.
    operators: usize,
    /// Open parentheses of the expression being parsed: inside them a line goes on.
    pub parens: usize,
}

impl<'a> Parser<'a> {
    pub fn new(src: &'a str, toks: Vec<Token>, diags: &'a mut Vec<Diagnostic>) -> Self {
        Parser {
            src,
            toks,
            pos: 0,
            diags,
            depth: 0,
            in_expr: 0,
            operators: 0,
            parens: 0,
        }
    }

    pub fn peek(&self) -> &Token {
        self.peek_at(0)
    }

    /// The token `n` places ahead; `Eof` past the end.
    pub fn peek_at(&self, n: usize) -> &Token {
        let last = self.toks.len() - 1;
        &self.toks[(self.pos + n).min(last)]
    }

    pub fn bump(&mut self) -> Token {
        let t = self.peek().clone();
        if t.tok != Tok::Eof {
            self.pos += 1;
        }
        t
    }

    pub fn at_word(&self, kw: &str) -> bool {
        matches!(&self.peek().tok, Tok::Word(w) if w.eq_ignore_ascii_case(kw))
    }

    pub fn eat_word(&mut self, kw: &str) -> bool {
        let found = self.at_word(kw);
        if found {
            self.pos += 1;
        }
        found
    }

    pub fn at_punct(&self, p: &str) -> bool {
        matches!(&self.peek().tok, Tok::Punct(q) if *q == p)
    }

    pub fn eat_punct(&mut self, p: &str) -> bool {
        let found = self.at_punct(p);
        if found {
            self.pos += 1;
        }
        found
    }

    pub fn expect_punct(&mut self, p: &str) -> PResult<Span> {
        if self.at_punct(p) {
            return Ok(self.bump().span);
        }
        self.unexpected(&format!("`{p}`"))
    }

    pub fn expect_word(&mut self, kw: &str) -> PResult<Span> {
        if self.at_word(kw) {
            return Ok(self.bump().span);
        }
        self.unexpected(&format!("`{kw}`"))
    }

    /// A name (a word); `what` says which, for the error.
    pub fn name(&mut self, what: &str) -> PResult<Name> {
        match self.peek().tok.clone() {
            Tok::Word(text) => Ok(Name {
                text,
                span: self.bump().span,
            }),
            _ => self.unexpected(what),
        }
    }

    /// Reports `d` and fails.
    pub fn fail<T>(&mut self, d: Diagnostic) -> PResult<T> {
        self.diags.push(d);
        Err(())
    }

    /// Reports "expected …, found …" at the current token and fails.
    pub fn unexpected<T>(&mut self, expected: &str) -> PResult<T> {
        let t = self.peek().clone();
        let found = self.describe(&t);
        let label = format!("expected {expected}");
        let mut d = Diagnostic::new(format!("expected {expected}, found {found}"), t.span, label);
        if let Tok::Unknown(c) = t.tok {
            d = d.with_hint(format!("`{c}` has no meaning here"));
        }
        self.fail(d)
    }

    /// How a token is named in messages.
    pub fn describe(&self, t: &Token) -> String {
        match &t.tok {
            Tok::Newline => "the end of the line".into(),
            Tok::Eof => "the end of the file".into(),
            Tok::Str(_) => "a string".into(),
            _ => format!("`{}`", self.text(t.span)),
        }
    }

    pub fn text(&self, span: Span) -> &str {
        self.src
            .get(span.start as usize..span.end as usize)
            .unwrap_or("")
    }

    /// The span from token `start` to the last token consumed.
    pub fn span_from(&self, start: usize) -> Span {
        let first = self.toks[start.min(self.toks.len() - 1)].span;
        if self.pos <= start {
            return first;
        }
        Span {
            start: first.start,
            end: self.toks[self.pos - 1].span.end,
        }
    }

    pub fn at_line_end(&self) -> bool {
        matches!(self.peek().tok, Tok::Newline | Tok::Eof | Tok::Punct(";"))
    }

    /// The end of a statement: a newline, `;`, the block's `}` or the end of the file.
    pub fn at_stmt_end(&self) -> bool {
        self.at_line_end() || self.at_punct("}")
    }

    pub fn skip_newlines(&mut self) {
        while self.peek().tok == Tok::Newline {
            self.pos += 1;
        }
    }

    pub fn skip_separators(&mut self) {
        while matches!(self.peek().tok, Tok::Newline | Tok::Punct(";")) {
            self.pos += 1;
        }
    }

    /// Skips newlines only when `p` follows them (a `{` or `else` on the next line).
    pub fn skip_newlines_before(&mut self, pred: impl Fn(&Self) -> bool) {
        let save = self.pos;
        self.skip_newlines();
        if !pred(self) {
            self.pos = save;
        }
    }

    /// Recovery: skips to the end of the statement, over nested blocks; stops before a `}`
    /// that closes the enclosing block.
    pub fn skip_statement(&mut self) {
        let mut depth = 0usize;
        loop {
            match self.peek().tok {
                Tok::Eof => return,
                Tok::Newline | Tok::Punct(";") if depth == 0 => return,
                Tok::Punct("}") if depth == 0 => return,
                Tok::Punct("}") => depth -= 1,
                Tok::Punct("{") => depth += 1,
                _ => {}
            }
            self.pos += 1;
        }
    }

    /// Runs `f` one nesting level deeper, refusing absurd depths instead of overflowing.
    pub fn nested<T>(&mut self, f: impl FnOnce(&mut Self) -> PResult<T>) -> PResult<T> {
        if self.depth >= MAX_NESTING {
            let span = self.peek().span;
            return self.fail(
                Diagnostic::new("nested too deeply", span, "too deep").with_hint(format!(
                    "blocks and parentheses nest at most {MAX_NESTING} deep"
                )),
            );
        }
        self.depth += 1;
        let result = f(self);
        self.depth -= 1;
        result
    }

    /// Runs `f` as an expression: the outermost one starts a new count of operators.
    pub fn counting_operators<T>(&mut self, f: impl FnOnce(&mut Self) -> PResult<T>) -> PResult<T> {
        if self.in_expr == 0 {
            self.operators = 0;
        }
        self.in_expr += 1;
        let result = f(self);
        self.in_expr -= 1;
        result
    }

    /// One more operator in the expression being parsed (the token just taken); an error
    /// past [`MAX_OPERATORS`].
    pub fn operator(&mut self, at: Span) -> PResult<()> {
        self.operators += 1;
        if self.operators <= MAX_OPERATORS {
            return Ok(());
        }
        let d = Diagnostic::new(
            format!("this expression has more than {MAX_OPERATORS} operators"),
            at,
            "one too many",
        )
        .with_hint("split it: a property can be several invariants, a condition several `if`s");
        self.fail(d)
    }

    /// A string token.
    pub fn string(&mut self, what: &str) -> PResult<(String, Span)> {
        match self.peek().tok.clone() {
            Tok::Str(s) => Ok((s, self.bump().span)),
            _ => self.unexpected(what),
        }
    }

    /// A plain integer (no unit) within `range`; `what` names it for errors.
    pub fn count(&mut self, what: &str, range: std::ops::RangeInclusive<i64>) -> PResult<i64> {
        let t = self.peek().clone();
        let Tok::Num {
            value,
            suffix: None,
        } = t.tok
        else {
            return self.unexpected(what);
        };
        self.bump();
        if !range.contains(&value) {
            let (lo, hi) = (range.start(), range.end());
            let msg = format!("{what} must be between {lo} and {hi}");
            return self.fail(Diagnostic::new(msg, t.span, "out of range"));
        }
        Ok(value)
    }

    /// A literal: an integer (maybe negative), a string, or `null`/`nil`.
    pub fn literal(&mut self) -> PResult<Lit> {
        let start = self.pos;
        let negative = self.eat_punct("-");
        let kind = match self.peek().tok.clone() {
            Tok::Num {
                value,
                suffix: None,
            } => LitKind::Int(if negative { -value } else { value }),
            Tok::Str(s) if !negative => LitKind::Str(s),
            Tok::Word(w) if !negative && is_null(&w) => LitKind::Null,
            _ => return self.unexpected("a value (an integer, a string or `null`)"),
        };
        self.bump();
        Ok(Lit {
            kind,
            span: self.span_from(start),
        })
    }
}

pub fn is_null(word: &str) -> bool {
    word.eq_ignore_ascii_case("null") || word.eq_ignore_ascii_case("nil")
}

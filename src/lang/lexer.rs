//! Lexer: source text to tokens (words, `$locals`, numbers, strings, punctuation, newlines).

use super::diag::Diagnostic;
use crate::ir::Span;

#[derive(Clone, Debug, PartialEq)]
pub enum Tok {
    /// A keyword or a name: `[A-Za-z_][A-Za-z0-9_]*`.
    Word(String),
    /// `$name`, without the dollar.
    Local(String),
    /// A decimal integer, with the unit written right after it (`150ms`), if any.
    Num {
        value: i64,
        suffix: Option<String>,
    },
    Str(String),
    Punct(&'static str),
    Newline,
    /// A character the language has no use for (SQL may still want it).
    Unknown(char),
    Eof,
}

#[derive(Clone, Debug)]
pub struct Token {
    pub tok: Tok,
    pub span: Span,
}

/// Longest first, so `<=` wins over `<`.
const PUNCTS: [&str; 26] = [
    "==", "=>", "<>", "!=", "<=", ">=", "+=", "-=", "{", "}", "(", ")", "[", "]", ",", ";", ":",
    ".", "+", "-", "*", "/", "%", "=", "<", ">",
];

/// Splits `src` into tokens, ending with `Eof`; reports unterminated strings and huge numbers.
pub fn lex(src: &str, diags: &mut Vec<Diagnostic>) -> Vec<Token> {
    let mut lexer = Lexer {
        src,
        pos: 0,
        toks: Vec::new(),
        diags,
    };
    lexer.run();
    lexer.toks
}

struct Lexer<'a, 'd> {
    src: &'a str,
    pos: usize,
    toks: Vec<Token>,
    diags: &'d mut Vec<Diagnostic>,
}

/// Where a string that may span lines ends: its closing quote, if no blank line comes first.
fn prose_end(rest: &str, quote: char) -> Option<usize> {
    let len = rest.find(quote)?;
    let lines: Vec<&str> = rest[..len].split('\n').collect();
    let inner = &lines[1..lines.len().saturating_sub(1).max(1)];
    let blank = inner.iter().any(|line| line.trim().is_empty());
    (!blank).then_some(len)
}

/// Replaces each line break, with the spaces around it, by one space.
fn join_lines(text: &str) -> String {
    let last = text.split('\n').count() - 1;
    let parts: Vec<&str> = text
        .split('\n')
        .enumerate()
        .map(|(i, line)| match (i == 0, i == last) {
            (true, true) => line,
            (true, false) => line.trim_end(),
            (false, true) => line.trim_start(),
            (false, false) => line.trim(),
        })
        .filter(|part| !part.is_empty())
        .collect();
    parts.join(" ")
}

fn is_word_start(c: char) -> bool {
    c.is_ascii_alphabetic() || c == '_'
}

fn is_word_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

impl Lexer<'_, '_> {
    fn rest(&self) -> &str {
        &self.src[self.pos..]
    }

    fn push(&mut self, tok: Tok, start: usize) {
        let span = Span::new(start, self.pos);
        self.toks.push(Token { tok, span });
    }

    /// Advances over the characters satisfying `pred`; returns the text taken.
    fn take_while(&mut self, pred: impl Fn(char) -> bool) -> &str {
        let start = self.pos;
        let len = self.rest().find(|c| !pred(c)).unwrap_or(self.rest().len());
        self.pos += len;
        &self.src[start..self.pos]
    }

    fn run(&mut self) {
        while let Some(c) = self.rest().chars().next() {
            let start = self.pos;
            match c {
                '\n' => {
                    self.pos += 1;
                    self.push(Tok::Newline, start);
                }
                c if c.is_whitespace() => self.pos += c.len_utf8(),
                '-' | '/' if self.rest().starts_with("--") || self.rest().starts_with("//") => {
                    self.take_while(|c| c != '\n');
                }
                '"' | '\'' => self.string(c),
                '$' => self.local(),
                c if c.is_ascii_digit() => self.number(),
                c if is_word_start(c) => {
                    let word = self.take_while(is_word_char).to_string();
                    self.push(Tok::Word(word), start);
                }
                c => self.punct(c),
            }
            debug_assert!(self.pos > start, "the lexer took no character");
        }
        let end = self.src.len();
        self.toks.push(Token {
            tok: Tok::Eof,
            span: Span::new(end, end),
        });
    }

    /// A quoted string. Only a title or lesson (after `model` or `about`) may span lines; its
    /// line breaks and the indentation around them read as one space.
    fn string(&mut self, quote: char) {
        let before = self.toks.len();
        self.string_body(quote);
        self.refuse_control_characters(before);
    }

    /// A string is printed back (a title in every verdict, a value in a trace): one that
    /// holds a control character (which could move the cursor or retitle a terminal) is an
    /// error, at that character.
    fn refuse_control_characters(&mut self, token: usize) {
        let Some(Token { span, .. }) = self.toks.get(token) else {
            return;
        };
        let (start, end) = (span.start as usize, span.end as usize);
        let bad = self.src[start..end]
            .char_indices()
            .find(|&(_, c)| c.is_control() && c != '\n' && c != '\t' && c != '\r');
        if let Some((at, c)) = bad {
            let at = start + at;
            self.diags.push(
                Diagnostic::new(
                    format!("a control character (U+{:04X}) in a string", c as u32),
                    Span::new(at, at + c.len_utf8()),
                    "not printable",
                )
                .with_hint("strings are printed back in verdicts and traces: remove it"),
            );
        }
    }

    fn string_body(&mut self, quote: char) {
        let start = self.pos;
        let prose = matches!(self.toks.last(), Some(Token { tok: Tok::Word(w), .. })
            if w.eq_ignore_ascii_case("about") || w.eq_ignore_ascii_case("model"));
        let rest = &self.src[start + 1..];
        if let (true, Some(len)) = (prose, prose_end(rest, quote)) {
            let body = join_lines(&rest[..len]);
            self.pos = start + 1 + len + 1;
            self.push(Tok::Str(body), start);
            return;
        }
        self.pos += 1;
        let body = self.take_while(|c| c != quote && c != '\n').to_string();
        if self.rest().starts_with(quote) {
            self.pos += 1;
        } else {
            self.diags.push(
                Diagnostic::new(
                    "unterminated string",
                    Span::new(start, self.pos),
                    "this string is never closed",
                )
                .with_hint(format!("close it with `{quote}` on the same line")),
            );
        }
        self.push(Tok::Str(body), start);
    }

    fn local(&mut self) {
        let start = self.pos;
        self.pos += 1;
        let name = self.take_while(is_word_char).to_string();
        let tok = if name.is_empty() {
            Tok::Unknown('$')
        } else {
            Tok::Local(name)
        };
        self.push(tok, start);
    }

    fn number(&mut self) {
        let start = self.pos;
        let digits = self.take_while(|c| c.is_ascii_digit()).to_string();
        let value = digits.parse::<i64>().unwrap_or_else(|_| {
            let span = Span::new(start, self.pos);
            self.diags.push(
                Diagnostic::new("integer too large", span, "this does not fit in 64 bits")
                    .with_hint(format!("integers range up to {}", i64::MAX)),
            );
            0
        });
        let suffix = self.take_while(is_word_char).to_string();
        let suffix = (!suffix.is_empty()).then_some(suffix);
        self.push(Tok::Num { value, suffix }, start);
    }

    fn punct(&mut self, c: char) {
        let start = self.pos;
        let found = PUNCTS.iter().find(|p| self.rest().starts_with(**p));
        let tok = match found {
            Some(p) => {
                self.pos += p.len();
                Tok::Punct(p)
            }
            None => {
                self.pos += c.len_utf8();
                Tok::Unknown(c)
            }
        };
        self.push(tok, start);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn toks(src: &str) -> Vec<Tok> {
        let mut diags = Vec::new();
        lex(src, &mut diags).into_iter().map(|t| t.tok).collect()
    }

    #[test]
    fn lexes_a_statement() {
        let got = toks("if $stock <= 1 { rollback; return \"out\" } -- gone\nwork 150ms");
        assert_eq!(got[0], Tok::Word("if".into()));
        assert_eq!(got[1], Tok::Local("stock".into()));
        assert_eq!(got[2], Tok::Punct("<="));
        assert!(got.contains(&Tok::Str("out".into())));
        assert!(got.contains(&Tok::Newline));
        let dur = Tok::Num {
            value: 150,
            suffix: Some("ms".into()),
        };
        assert!(got.contains(&dur));
        assert_eq!(got.last(), Some(&Tok::Eof));
    }

    #[test]
    fn a_lesson_may_span_lines() {
        let got = toks("about \"one\n    two \n three\"\nghost");
        assert_eq!(got[1], Tok::Str("one two three".into()));
        assert_eq!(got[2], Tok::Newline);
        let got = toks("about \"one\n  \"");
        assert_eq!(got[1], Tok::Str("one".into()));
    }

    #[test]
    fn a_lesson_stops_at_a_blank_line() {
        let mut diags = Vec::new();
        let t = lex("about \"one\n\nghost g = \"x\"", &mut diags);
        assert_eq!(diags.len(), 1);
        assert_eq!(t[1].tok, Tok::Str("one".into()));
    }

    #[test]
    fn unterminated_string_is_reported() {
        let mut diags = Vec::new();
        let t = lex("about \"oops\nx", &mut diags);
        assert_eq!(diags.len(), 1);
        assert_eq!(diags[0].message, "unterminated string");
        assert_eq!(t[1].tok, Tok::Str("oops".into()));
    }
}

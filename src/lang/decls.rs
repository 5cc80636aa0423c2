//! Grammar of the top level: `model`, `about`, `db`, `table`, `row`, … `expect`.

use std::collections::BTreeSet;

use super::ast::{ColumnDef, Decl, DeclKind, ExpectDecl, Lit, ProcessDecl};
use super::diag::Diagnostic;
use super::lexer::{Tok, Token};
use super::parser::{PResult, Parser};
use super::suggest;
use crate::ir::{ColumnType, PropertyKind};

pub const DECLARATIONS: [&str; 13] = [
    "model",
    "about",
    "db",
    "table",
    "row",
    "ghost",
    "mutex",
    "timing",
    "process",
    "fault",
    "invariant",
    "final",
    "expect",
];

/// Parses every declaration it can, reporting the others and moving on to the next line.
pub fn parse_file(p: &mut Parser) -> Vec<Decl> {
    let mut decls = Vec::new();
    loop {
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
        if !DECLARATIONS.contains(&keyword.as_str()) {
            return self.unknown_declaration(&word);
        }
        self.bump();
        match keyword.as_str() {
            "model" => Ok(DeclKind::Model(self.string("the model's title")?.0)),
            "about" => self.about(),
            "db" => self.db(),
            "table" => self.table(),
            "row" => self.row(),
            "ghost" => self.ghost(),
            "mutex" => Ok(DeclKind::Mutex(self.name("a mutex name")?)),
            "timing" => self.timing(),
            "process" => self.process(),
            "fault" => self.fault(),
            "invariant" => self.property(PropertyKind::Invariant),
            "final" => self.property(PropertyKind::Final),
            _ => self.expect_decl(),
        }
    }

    fn unknown_declaration<T>(&mut self, word: &str) -> PResult<T> {
        let span = self.peek().span;
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

    /// `db postgres [isolation read_committed]`.
    fn db(&mut self) -> PResult<DeclKind> {
        let flavour = self.name("a database flavour (`postgres`)")?;
        if !flavour.text.eq_ignore_ascii_case("postgres") {
            let msg = format!("unknown database \"{}\"", flavour.text);
            let d = Diagnostic::new(msg, flavour.span, "unknown database")
                .with_hint("only `postgres` is supported for now");
            self.diags.push(d);
        }
        if self.eat_word("isolation") {
            let level = self.name("an isolation level (`read_committed`)")?;
            if !level.text.eq_ignore_ascii_case("read_committed") {
                let msg = format!("unknown isolation level \"{}\"", level.text);
                let d = Diagnostic::new(msg, level.span, "unknown isolation level")
                    .with_hint("only `read_committed` is supported for now");
                self.diags.push(d);
            }
        }
        Ok(DeclKind::Db)
    }

    fn timing(&mut self) -> PResult<DeclKind> {
        let name = self.name("a timing (`bounded`)")?;
        if !name.text.eq_ignore_ascii_case("bounded") {
            let msg = format!("unknown timing \"{}\"", name.text);
            let d = Diagnostic::new(msg, name.span, "unknown timing")
                .with_hint("only `timing bounded` exists for now");
            self.diags.push(d);
        }
        Ok(DeclKind::Timing)
    }

    /// `table T (col type [primary key], …)`; the list may span lines.
    fn table(&mut self) -> PResult<DeclKind> {
        let name = self.name("a table name")?;
        self.expect_punct("(")?;
        let mut columns = Vec::new();
        loop {
            self.skip_newlines();
            columns.push(self.column()?);
            self.skip_newlines();
            if !self.eat_punct(",") {
                break;
            }
        }
        self.expect_punct(")")?;
        Ok(DeclKind::Table { name, columns })
    }

    fn column(&mut self) -> PResult<ColumnDef> {
        let name = self.name("a column name")?;
        let ty = self.column_type()?;
        let start = self.pos;
        let pk = if self.eat_word("primary") {
            self.expect_word("key")?;
            Some(self.span_from(start))
        } else {
            None
        };
        if !self.at_punct(",") && !self.at_punct(")") && self.peek().tok != Tok::Newline {
            return self.unexpected("`,`, `)` or `primary key`");
        }
        Ok(ColumnDef { name, ty, pk })
    }

    fn column_type(&mut self) -> PResult<ColumnType> {
        const TYPES: [&str; 5] = ["int", "integer", "bigint", "text", "varchar"];
        let ty = self.name("a column type (`int` or `text`)")?;
        let ty = match ty.text.to_ascii_lowercase().as_str() {
            "int" | "integer" | "bigint" => ColumnType::Int,
            "text" | "varchar" => ColumnType::Text,
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

    /// `row T (v, …)`.
    fn row(&mut self) -> PResult<DeclKind> {
        let table = self.name("a table name")?;
        self.expect_punct("(")?;
        let mut values: Vec<Lit> = Vec::new();
        loop {
            self.skip_newlines();
            values.push(self.literal()?);
            self.skip_newlines();
            if !self.eat_punct(",") {
                break;
            }
        }
        self.expect_punct(")")?;
        Ok(DeclKind::Row { table, values })
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
            count = self.count("the number of processes", 1..=1000)? as usize;
            self.expect_punct("]")?;
        }
        let on = if self.eat_word("on") {
            Some(self.name("an instance name")?)
        } else {
            None
        };
        let header = self.span_from(start);
        self.skip_newlines_before(|p| p.at_punct("{"));
        let body_start = self.pos;
        let (body, end) = self.block()?;
        let defined = defined_locals(&self.toks[body_start..self.pos]);
        Ok(DeclKind::Process(ProcessDecl {
            name,
            count,
            on,
            body,
            end,
            header,
            defined,
        }))
    }

    /// `fault crash group at most N`.
    fn fault(&mut self) -> PResult<DeclKind> {
        let kind = self.name("a fault kind (`crash`)")?;
        if !kind.text.eq_ignore_ascii_case("crash") {
            let msg = format!("unknown fault \"{}\"", kind.text);
            let d = Diagnostic::new(msg, kind.span, "unknown fault")
                .with_hint("the only fault is `crash`: `fault crash GROUP at most N`");
            return self.fail(d);
        }
        let group = self.name("a process group")?;
        self.expect_word("at")?;
        self.expect_word("most")?;
        let budget = self.count("the number of crashes", 1..=255)? as u8;
        Ok(DeclKind::Fault { group, budget })
    }

    /// `invariant name: expr` / `final name: expr`.
    fn property(&mut self, kind: PropertyKind) -> PResult<DeclKind> {
        let name = self.name("a property name")?;
        self.expect_punct(":")?;
        let expr = self.expr()?;
        Ok(DeclKind::Property { kind, name, expr })
    }

    /// `expect holds` / `expect violated name` / `expect deadlock`.
    fn expect_decl(&mut self) -> PResult<DeclKind> {
        let what = self.name("`holds`, `violated NAME` or `deadlock`")?;
        let expect = match what.text.to_ascii_lowercase().as_str() {
            "holds" => ExpectDecl::Holds,
            "deadlock" => ExpectDecl::Deadlock,
            "violated" => ExpectDecl::Violated(self.name("the name of a property")?),
            _ => {
                let known = ["holds", "violated", "deadlock"];
                let hint = suggest::hint(&what.text, known, "expectations are", "");
                let msg = format!("unknown expectation \"{}\"", what.text);
                let d = Diagnostic::new(msg, what.span, "unknown expectation").with_hint(hint);
                return self.fail(d);
            }
        };
        Ok(DeclKind::Expect(expect))
    }
}

/// Locals a body assigns (`$x = …` at the start of a statement) or binds (`into $a, $b`).
fn defined_locals(toks: &[Token]) -> BTreeSet<String> {
    let mut defined = BTreeSet::new();
    for (i, t) in toks.iter().enumerate() {
        let next = toks.get(i + 1).map(|t| &t.tok);
        match &t.tok {
            Tok::Local(name) if next == Some(&Tok::Punct("=")) && starts_statement(toks, i) => {
                defined.insert(name.clone());
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

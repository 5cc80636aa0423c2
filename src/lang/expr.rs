//! Grammar of expressions: or < and < not < comparison < + - < * / < unary minus < primary.

use super::ast::{Expr, ExprKind, LitKind, Name};
use super::diag::Diagnostic;
use super::lexer::Tok;
use super::parser::{is_null, PResult, Parser};
use super::suggest;
use crate::ir::{BinOp, Span, UnOp};

fn binary(op: BinOp, left: Expr, right: Expr) -> Expr {
    let span = Span {
        start: left.span.start,
        end: right.span.end,
    };
    Expr {
        kind: ExprKind::Binary(op, Box::new(left), Box::new(right)),
        span,
    }
}

fn comparison(tok: &Tok) -> Option<BinOp> {
    Some(match tok {
        Tok::Punct("=" | "==") => BinOp::Eq,
        Tok::Punct("<>" | "!=") => BinOp::Ne,
        Tok::Punct("<") => BinOp::Lt,
        Tok::Punct("<=") => BinOp::Le,
        Tok::Punct(">") => BinOp::Gt,
        Tok::Punct(">=") => BinOp::Ge,
        _ => return None,
    })
}

impl Parser<'_> {
    pub fn expr(&mut self) -> PResult<Expr> {
        self.counting_operators(|p| p.nested(Self::or_expr))
    }

    /// Takes the operator token at the cursor, counting it. A line that ends in an operator
    /// goes on on the next.
    fn take_operator(&mut self) -> PResult<()> {
        let at = self.bump().span;
        self.skip_newlines();
        self.operator(at)
    }

    /// Inside parentheses a newline does not end the expression: skips it.
    fn continue_in_parens(&mut self) {
        if self.parens > 0 {
            self.skip_newlines();
        }
    }

    /// Runs `f` inside a pair of parentheses (already opened): lines go on until they close.
    fn in_parens<T>(&mut self, f: impl FnOnce(&mut Self) -> PResult<T>) -> PResult<T> {
        self.parens += 1;
        self.skip_newlines();
        let result = f(self);
        if result.is_ok() {
            self.skip_newlines();
        }
        self.parens -= 1;
        result
    }

    fn or_expr(&mut self) -> PResult<Expr> {
        let mut left = self.and_expr()?;
        self.continue_in_parens();
        while self.at_word("or") {
            self.take_operator()?;
            left = binary(BinOp::Or, left, self.and_expr()?);
            self.continue_in_parens();
        }
        Ok(left)
    }

    fn and_expr(&mut self) -> PResult<Expr> {
        let mut left = self.not_expr()?;
        self.continue_in_parens();
        while self.at_word("and") {
            self.take_operator()?;
            left = binary(BinOp::And, left, self.not_expr()?);
            self.continue_in_parens();
        }
        Ok(left)
    }

    fn not_expr(&mut self) -> PResult<Expr> {
        if !self.at_word("not") {
            return self.cmp_expr();
        }
        let start = self.bump().span;
        let inner = self.nested(Self::not_expr)?;
        let span = Span {
            start: start.start,
            end: inner.span.end,
        };
        let kind = ExprKind::Unary(UnOp::Not, Box::new(inner));
        Ok(Expr { kind, span })
    }

    fn cmp_expr(&mut self) -> PResult<Expr> {
        let mut left = self.sum()?;
        self.continue_in_parens();
        while let Some(op) = comparison(&self.peek().tok) {
            self.take_operator()?;
            left = binary(op, left, self.sum()?);
            self.continue_in_parens();
        }
        Ok(left)
    }

    fn sum(&mut self) -> PResult<Expr> {
        let mut left = self.product()?;
        loop {
            self.continue_in_parens();
            let op = match self.peek().tok {
                Tok::Punct("+") => BinOp::Add,
                Tok::Punct("-") => BinOp::Sub,
                _ => return Ok(left),
            };
            self.take_operator()?;
            left = binary(op, left, self.product()?);
        }
    }

    fn product(&mut self) -> PResult<Expr> {
        let mut left = self.unary()?;
        loop {
            self.continue_in_parens();
            let op = match self.peek().tok {
                Tok::Punct("*") => BinOp::Mul,
                Tok::Punct("/") => BinOp::Div,
                Tok::Punct("%") => BinOp::Rem,
                _ => return Ok(left),
            };
            self.take_operator()?;
            left = binary(op, left, self.unary()?);
        }
    }

    /// `-e`; a negated integer literal folds into the literal.
    fn unary(&mut self) -> PResult<Expr> {
        if !self.at_punct("-") {
            return self.primary();
        }
        let start = self.bump().span;
        let inner = self.nested(Self::unary)?;
        let span = Span {
            start: start.start,
            end: inner.span.end,
        };
        let kind = match inner.kind {
            ExprKind::Lit(LitKind::Int(v)) => ExprKind::Lit(LitKind::Int(v.wrapping_neg())),
            other => ExprKind::Unary(
                UnOp::Neg,
                Box::new(Expr {
                    kind: other,
                    ..inner
                }),
            ),
        };
        Ok(Expr { kind, span })
    }

    fn primary(&mut self) -> PResult<Expr> {
        let t = self.peek().clone();
        let kind = match t.tok {
            Tok::Num {
                suffix: Some(_), ..
            } => {
                let d = Diagnostic::new("unexpected unit", t.span, "a plain number is needed here")
                    .with_hint("durations only follow `work`, `sleep` and `PX`");
                return self.fail(d);
            }
            Tok::Num { value, .. } => ExprKind::Lit(LitKind::Int(value)),
            Tok::Str(s) => ExprKind::Lit(LitKind::Str(s)),
            Tok::Local(name) if name == "me" => ExprKind::Me,
            Tok::Local(name) => ExprKind::Local(name),
            Tok::Punct("(") => return self.parenthesised(),
            Tok::Word(w) => return self.word_expr(w),
            _ => return self.unexpected("an expression"),
        };
        self.bump();
        Ok(Expr { kind, span: t.span })
    }

    fn parenthesised(&mut self) -> PResult<Expr> {
        let start = self.bump().span;
        let inner = self.in_parens(Self::expr)?;
        let end = self.expect_punct(")")?;
        let span = Span {
            start: start.start,
            end: end.end,
        };
        Ok(Expr { span, ..inner })
    }

    /// A word: a literal keyword, a ghost, `t[pk].col`, or `redis(…)`/`count(…)`/`status(…)`/
    /// `clock()`.
    fn word_expr(&mut self, word: String) -> PResult<Expr> {
        let lower = word.to_ascii_lowercase();
        if matches!(lower.as_str(), "and" | "or" | "not") {
            return self.unexpected("an expression");
        }
        let start = self.pos;
        let name = self.name("a name")?;
        let kind = if is_null(&word) {
            ExprKind::Lit(LitKind::Null)
        } else if lower == "true" || lower == "false" {
            ExprKind::Bool(lower == "true")
        } else if self.at_punct("(") {
            self.call(&lower, &name)?
        } else if self.at_punct("[") {
            self.cell(name)?
        } else {
            ExprKind::Name(word)
        };
        Ok(Expr {
            kind,
            span: self.span_from(start),
        })
    }

    fn call(&mut self, function: &str, name: &Name) -> PResult<ExprKind> {
        const FUNCTIONS: [&str; 5] = ["redis", "count", "status", "clock", "sum"];
        if !FUNCTIONS.contains(&function) {
            let hint = if function == "now" {
                "`now()` is for SQL; process code reads the client's clock with `clock()`"
                    .to_string()
            } else {
                suggest::hint(&name.text, FUNCTIONS, "functions are", "")
            };
            let msg = format!("unknown function \"{}\"", name.text);
            let d = Diagnostic::new(msg, name.span, "unknown function").with_hint(hint);
            return self.fail(d);
        }
        self.bump();
        let kind = self.in_parens(|p| p.arguments(function))?;
        self.expect_punct(")")?;
        Ok(kind)
    }

    /// What a function's parentheses hold.
    fn arguments(&mut self, function: &str) -> PResult<ExprKind> {
        Ok(match function {
            "clock" => ExprKind::Clock,
            "redis" => {
                let key = self.redis_key()?;
                self.continue_in_parens();
                let on = if self.eat_word("on") {
                    self.continue_in_parens();
                    Some(self.name("a Redis server name")?)
                } else {
                    None
                };
                ExprKind::Key { key, on }
            }
            "sum" => {
                let table = self.name("a table")?;
                self.expect_punct(".")?;
                let column = self.name("a column name")?;
                ExprKind::Sum { table, column }
            }
            "count" => self.count_call()?,
            _ => self.status_call()?,
        })
    }

    /// The inside of `count(group, status)`, `count(table)` or `count(table where cond)`.
    fn count_call(&mut self) -> PResult<ExprKind> {
        let name = self.name("a process group or a table")?;
        self.continue_in_parens();
        if self.eat_word("where") {
            self.continue_in_parens();
            let filter = self.expr()?;
            return Ok(ExprKind::Rows {
                table: name,
                filter: Some(Box::new(filter)),
            });
        }
        if self.at_punct(")") {
            return Ok(ExprKind::Rows {
                table: name,
                filter: None,
            });
        }
        if !self.at_punct(",") {
            return self.unexpected(
                "`)` (`count(sku)`), `where` and a condition (`count(sku where stock < 0)`) \
                 or `,` and a status (`count(buyer, done)`)",
            );
        }
        self.bump();
        self.continue_in_parens();
        let status = self.name("a status (running, waiting, done, crashed or failed)")?;
        Ok(ExprKind::Count {
            group: name,
            status,
        })
    }

    /// The inside of `status(group[i], status)`.
    fn status_call(&mut self) -> PResult<ExprKind> {
        let group = self.name("a process, like `buyer[0]`")?;
        let index = if self.eat_punct("[") {
            let lit = self.literal()?;
            self.expect_punct("]")?;
            Some(lit)
        } else {
            None
        };
        self.expect_punct(",")?;
        let status = self.name("a status (running, waiting, done, crashed or failed)")?;
        Ok(ExprKind::Status {
            group,
            index,
            status,
        })
    }

    /// `t[pk].col`, or `group[i]`: a process.
    fn cell(&mut self, table: Name) -> PResult<ExprKind> {
        self.bump();
        let pk = self.literal()?;
        self.expect_punct("]")?;
        if !self.eat_punct(".") {
            return Ok(ExprKind::Process {
                group: table,
                index: pk,
            });
        }
        let column = self.name("a column name")?;
        Ok(ExprKind::Cell { table, pk, column })
    }
}

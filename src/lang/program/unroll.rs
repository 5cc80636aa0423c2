//! Lowering of `for` loops: the body once per item, with the loop variable bound to the item
//! as a constant (in values and SQL), a server name (`on $n`) or a piece of a key (`lock:$n`).

use super::Builder;
use crate::ir::{Op, Span, Sym};
use crate::lang::ast::{Block, Lit, LitKind, Name, StmtKind};
use crate::lang::diag::Diagnostic;
use crate::lang::lower_expr::ForConst;

/// The most statements the `for` loops of one program may unroll to: the lowered program
/// stays proportionate to what was written.
pub const MAX_UNROLLED: usize = 10_000;

impl Builder<'_, '_> {
    /// `for $v in items { body }`: the body lowered once per item, in order.
    pub(super) fn for_stmt(
        &mut self,
        var: &Name,
        items: &[Lit],
        head: Span,
        body: &Block,
        ops: &mut Vec<Op>,
    ) {
        let size = statements(body);
        // `break` in the body leaves the loop: it jumps past the last copy.
        self.loops.push(Some(Vec::new()));
        for item in items {
            self.unrolled += size;
            if self.unrolled > MAX_UNROLLED {
                self.too_much_unrolled(head);
                break;
            }
            let (int, text) = match &item.kind {
                LitKind::Int(v) => (Some(*v), v.to_string()),
                LitKind::Str(s) => (None, s.clone()),
                LitKind::Null => (None, "null".to_string()),
            };
            let name = var.text.clone();
            let span = item.span;
            self.locals.push_const(ForConst {
                name,
                int,
                text,
                span,
            });
            self.block(body, ops);
            self.locals.pop_const();
        }
        let end = ops.len();
        for at in self.loops.pop().flatten().unwrap_or_default() {
            super::patch(ops, at, end);
        }
    }

    fn too_much_unrolled(&mut self, head: Span) {
        if std::mem::replace(&mut self.unroll_reported, true) {
            return;
        }
        let msg = format!("the `for` loops of this process unroll to more than {MAX_UNROLLED} statements");
        let d = Diagnostic::new(msg, head, "too many copies of the body")
            .with_hint("a `for` copies its body once per item; loop at run time with `repeat N`");
        self.cx.report(d);
    }

    /// The index of a local being written; a `for` variable cannot be.
    pub(super) fn bind(&mut self, name: &Name) -> u16 {
        if let Some(c) = self.locals.constant(&name.text) {
            let line = self.cx.line(c.span);
            let msg = format!("`${}` is a `for` variable: it cannot be assigned", name.text);
            let d = Diagnostic::new(msg, name.span, "assigned here")
                .with_hint(format!("it stands for each item on line {line} in turn; use another local"));
            self.cx.report(d);
        }
        self.locals.bind(&name.text)
    }

    /// A Redis key, its `$variables` replaced by the items they stand for.
    pub(super) fn key(&mut self, key: &Name) -> Option<Sym> {
        if !key.text.contains('$') {
            return Some(self.cx.intern(&key.text));
        }
        let mut out = String::new();
        let mut rest = key.text.as_str();
        while let Some(at) = rest.find('$') {
            out.push_str(&rest[..at]);
            let tail = &rest[at + 1..];
            let len = tail.find(|c: char| !is_word_char(c)).unwrap_or(tail.len());
            let var = &tail[..len];
            match self.locals.constant(var) {
                Some(c) => out.push_str(&c.text),
                None => return self.not_a_for_variable(key, var),
            }
            rest = &tail[len..];
        }
        out.push_str(rest);
        Some(self.cx.intern(&out))
    }

    fn not_a_for_variable<T>(&mut self, key: &Name, var: &str) -> Option<T> {
        let (msg, hint) = if var == "me" {
            (
                format!("a key cannot hold `$me`: `{}`", key.text),
                "each process would have a key of its own; keep the key fixed and store \
                 `$me` as its value"
                    .to_string(),
            )
        } else {
            (
                format!("`${var}` in the key `{}` is not a `for` variable", key.text),
                format!(
                    "a key is fixed when the model is read: it may use the variable of an \
                     enclosing `for` (`for ${var} in 1..3 {{ GET lock:${var} }}`)"
                ),
            )
        };
        let d = Diagnostic::new(msg, key.span, "this key").with_hint(hint);
        self.cx.report(d);
        None
    }

    /// The server `on NAME` names: `on $n` is the item of the `for` variable `$n`.
    pub(super) fn server_named(&mut self, name: &Name) -> Option<Name> {
        let Some(var) = name.text.strip_prefix('$') else {
            return Some(name.clone());
        };
        if let Some(c) = self.locals.constant(var) {
            return Some(Name {
                text: c.text.clone(),
                span: c.span,
            });
        }
        let msg = format!("`{}` names no server: it is not a `for` variable", name.text);
        let d = Diagnostic::new(msg, name.span, "not a server").with_hint(format!(
            "name the server, or loop over servers: `for {0} in n1, n2, n3 {{ GET k on {0} }}`",
            name.text
        ));
        self.cx.report(d);
        None
    }
}

/// How many statements `block` holds, those of nested blocks included.
fn statements(block: &Block) -> usize {
    block
        .iter()
        .map(|s| {
            1 + match &s.kind {
                StmtKind::If { arms, otherwise } => {
                    arms.iter().map(|(_, b)| statements(b)).sum::<usize>()
                        + otherwise.as_ref().map_or(0, statements)
                }
                StmtKind::Repeat { body, .. }
                | StmtKind::For { body, .. }
                | StmtKind::Loop { body, .. }
                | StmtKind::Retry { body, .. }
                | StmtKind::Atomic { body, .. }
                | StmtKind::Region { body, .. } => statements(body),
                _ => 0,
            }
        })
        .sum()
}

fn is_word_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

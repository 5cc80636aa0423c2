//! Diagnostics: what went wrong, where, and how to fix it; rendered as plain ASCII by ariadne.

use std::fmt;

use ariadne::{CharSet, Config, IndexType, Label, Report, ReportKind, Source};

use crate::ir::Span;

/// One error in a model file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    /// The headline: `unknown table "skus"`.
    pub message: String,
    /// The culprit, as a byte range of the source.
    pub span: Span,
    /// The text written under the caret.
    pub label: String,
    /// How to fix it, when something useful can be said.
    pub hint: Option<String>,
}

impl Diagnostic {
    #[must_use]
    pub fn new(message: impl Into<String>, span: Span, label: impl Into<String>) -> Self {
        Diagnostic {
            message: message.into(),
            span,
            label: label.into(),
            hint: None,
        }
    }

    #[must_use]
    pub fn with_hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }
}

/// Every error found in one file, with the text needed to show them.
#[derive(Clone, Debug)]
pub struct Diagnostics {
    pub origin: String,
    pub source: String,
    /// In source order.
    pub items: Vec<Diagnostic>,
}

impl Diagnostics {
    /// Sorts the diagnostics by position and drops exact duplicates.
    #[must_use]
    pub fn new(origin: &str, source: &str, mut items: Vec<Diagnostic>) -> Self {
        items.sort_by_key(|d| (d.span.start, d.span.end));
        items.dedup();
        Diagnostics {
            origin: origin.to_string(),
            source: source.to_string(),
            items,
        }
    }

    /// Every diagnostic, one after the other: plain ASCII, no colour, no trailing spaces.
    #[must_use]
    pub fn render(&self) -> String {
        let rendered: Vec<String> = self.items.iter().map(|d| self.render_one(d)).collect();
        rendered.join("\n")
    }

    fn render_one(&self, d: &Diagnostic) -> String {
        let range = self.char_range(d.span);
        let origin = self.origin.clone();
        let config = Config::default()
            .with_color(false)
            .with_char_set(CharSet::Ascii)
            .with_index_type(IndexType::Char);
        let mut report = Report::build(ReportKind::Error, (origin.clone(), range.clone()))
            .with_config(config)
            .with_message(&d.message)
            .with_label(Label::new((origin.clone(), range)).with_message(&d.label));
        if let Some(hint) = &d.hint {
            report = report.with_help(hint);
        }
        let mut out = Vec::new();
        let written = report
            .finish()
            .write((origin, Source::from(self.source.as_str())), &mut out);
        if written.is_err() {
            return format!("error: {}\n", d.message);
        }
        tidy(&String::from_utf8_lossy(&out))
    }

    /// A byte span as a range of characters, clamped to the source.
    fn char_range(&self, span: Span) -> std::ops::Range<usize> {
        let start = self.char_index(span.start as usize);
        let end = self.char_index(span.end as usize).max(start);
        start..end
    }

    fn char_index(&self, byte: usize) -> usize {
        let mut byte = byte.min(self.source.len());
        while !self.source.is_char_boundary(byte) {
            byte -= 1;
        }
        self.source[..byte].chars().count()
    }
}

/// Lower-cases ariadne's `Error:` and strips trailing spaces so snapshots are stable.
fn tidy(text: &str) -> String {
    let text = text
        .strip_prefix("Error:")
        .map_or_else(|| text.to_string(), |rest| format!("error:{rest}"));
    let mut out = String::with_capacity(text.len());
    for line in text.lines() {
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

impl fmt::Display for Diagnostics {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.render())
    }
}

impl std::error::Error for Diagnostics {}

#[cfg(test)]
mod tests {
    use super::*;

    fn render(source: &str, start: usize, end: usize) -> String {
        let d = Diagnostic::new("boom", Span::new(start, end), "here").with_hint("fix it");
        Diagnostics::new("f.model", source, vec![d]).render()
    }

    #[test]
    fn header_has_origin_line_and_column() {
        let text = render("model \"x\"\nabout \"y\"\n", 16, 19);
        assert!(text.starts_with("error: boom\n"), "{text}");
        assert!(text.contains("f.model:2:7"), "{text}");
        assert!(text.contains("^|^"), "{text}");
        assert!(text.contains("Help: fix it"), "{text}");
        assert!(text.is_ascii());
    }

    #[test]
    fn odd_spans_do_not_panic() {
        for (src, s, e) in [
            ("", 0, 0),
            ("é\n", 1, 2),
            ("abc\n", 10, 20),
            ("a\r\nb", 2, 4),
        ] {
            let _ = render(src, s, e);
        }
    }
}

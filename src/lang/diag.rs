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
    /// A diagnostic at `span`, with the headline `message` and the `label` under the caret.
    #[must_use]
    pub fn new(message: impl Into<String>, span: Span, label: impl Into<String>) -> Self {
        Diagnostic {
            message: message.into(),
            span,
            label: label.into(),
            hint: None,
        }
    }

    /// The same, with how to fix it.
    #[must_use]
    pub fn with_hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }
}

/// Every error found in one file, with the text needed to show them.
#[derive(Clone, Debug)]
pub struct Diagnostics {
    /// Where the text came from: a path, or `<string>`.
    pub origin: String,
    /// The text itself.
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

    /// Every diagnostic, one after the other: plain ASCII (but for what a hostile file makes
    /// visible), no colour, no trailing spaces. A message is shown at most three times
    /// and at most 50 diagnostics in all; a last line counts the rest.
    #[must_use]
    pub fn render(&self) -> String {
        let mut counts: Vec<(&str, usize)> = Vec::new();
        let mut shown = Vec::new();
        let mut left = Vec::new();
        for d in &self.items {
            let seen = match counts.iter_mut().find(|(m, _)| *m == d.message) {
                Some((_, n)) => {
                    *n += 1;
                    *n
                }
                None => {
                    counts.push((&d.message, 1));
                    1
                }
            };
            if seen <= REPEATS && shown.len() < SHOWN {
                shown.push(self.render_one(d));
            } else {
                left.push(d.message.as_str());
            }
        }
        if !left.is_empty() {
            let mut by_message: Vec<(&str, usize)> = Vec::new();
            for m in &left {
                match by_message.iter_mut().find(|(x, _)| x == m) {
                    Some((_, n)) => *n += 1,
                    None => by_message.push((m, 1)),
                }
            }
            let most: Vec<String> = by_message
                .iter()
                .take(3)
                .map(|(m, n)| format!("{n} \"{}\"", visible(m, MESSAGE_CHARS)))
                .collect();
            let more = if by_message.len() > 3 { ", ..." } else { "" };
            shown.push(format!(
                "... and {} more errors not shown: {}{more}\n",
                left.len(),
                most.join(", ")
            ));
        }
        shown.join("\n")
    }

    fn render_one(&self, d: &Diagnostic) -> String {
        let view = View::around(&self.source, d.span);
        let range = view.range.clone();
        let origin = visible(&self.origin, MESSAGE_CHARS);
        let config = Config::default()
            .with_color(false)
            .with_char_set(CharSet::Ascii)
            .with_index_type(IndexType::Char);
        let mut report = Report::build(ReportKind::Error, (origin.clone(), range.clone()))
            .with_config(config)
            .with_message(visible(&d.message, MESSAGE_CHARS))
            .with_label(
                Label::new((origin.clone(), range)).with_message(visible(&d.label, MESSAGE_CHARS)),
            );
        if let Some(hint) = &d.hint {
            report = report.with_help(visible(hint, 4 * MESSAGE_CHARS));
        }
        let mut out = Vec::new();
        let written = report
            .finish()
            .write((origin.clone(), Source::from(view.text.as_str())), &mut out);
        if written.is_err() {
            return format!("error: {}\n", visible(&d.message, MESSAGE_CHARS));
        }
        let text = tidy(&String::from_utf8_lossy(&out));
        // The window's column, in the header, is put back to the file's.
        match view.columns {
            Some((shown, real)) => text.replacen(
                &format!("{origin}:{}:{shown} ]", view.line),
                &format!("{origin}:{}:{real} ]", view.line),
                1,
            ),
            None => text,
        }
    }
}

/// Diagnostics shown at most; the rest are counted.
const SHOWN: usize = 50;
/// Diagnostics with the same message shown at most (each at its place).
const REPEATS: usize = 3;
/// A message, label or file name is cut to about this many characters.
const MESSAGE_CHARS: usize = 160;
/// A source line longer than this many characters is shown as a window of it…
const LONG_LINE: usize = 120;
/// …of this many characters…
const WINDOW: usize = 80;
/// …that starts this many before the culprit.
const BEFORE: usize = 30;

/// What ariadne is given to show one diagnostic: the source with its control characters
/// made visible, or, for a line too long to print, just a window of that line (at its own
/// line number: the lines before it are left empty).
struct View {
    text: String,
    /// The culprit, in characters of `text`.
    range: std::ops::Range<usize>,
    /// The culprit's 1-based line.
    line: usize,
    /// For a window: the column ariadne will print, and the real one.
    columns: Option<(usize, usize)>,
}

impl View {
    fn around(source: &str, span: Span) -> View {
        let start = floor(source, span.start as usize);
        let end = floor(source, span.end as usize).max(start);
        let line_start = source[..start].rfind('\n').map_or(0, |i| i + 1);
        let line_end = source[start..]
            .find('\n')
            .map_or(source.len(), |i| start + i);
        let line = source[..line_start].matches('\n').count() + 1;
        let chars = |a: usize, b: usize| source[a..b].chars().count();
        if chars(line_start, line_end) <= LONG_LINE {
            let from = chars(0, start);
            return View {
                text: source.chars().map(shown).collect(),
                range: from..from + chars(start, end),
                line,
                columns: None,
            };
        }
        // A window of the line around the culprit, with `...` where it is cut.
        let skip = chars(line_start, start).saturating_sub(BEFORE);
        let lo = nth_char(source, line_start, skip);
        let hi = nth_char(source, lo, WINDOW).min(line_end);
        let mut text = "\n".repeat(line - 1);
        let cut_left = lo > line_start;
        if cut_left {
            text.push_str("...");
        }
        let at = line - 1 + if cut_left { 3 } else { 0 };
        text.extend(source[lo..hi].chars().map(shown));
        if hi < line_end {
            text.push_str("...");
        }
        text.push('\n');
        let from = at + chars(lo, start);
        let to = at + chars(lo, end.min(hi)).max(chars(lo, start));
        View {
            text,
            range: from..to,
            line,
            columns: Some((from - (line - 1) + 1, chars(line_start, start) + 1)),
        }
    }
}

/// The largest char boundary of `s` at or before `i`.
fn floor(s: &str, i: usize) -> usize {
    let mut i = i.min(s.len());
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// The byte offset `n` characters after `from` (or the end).
fn nth_char(s: &str, from: usize, n: usize) -> usize {
    s[from..]
        .char_indices()
        .nth(n)
        .map_or(s.len(), |(i, _)| from + i)
}

/// A character as a terminal may safely show it: control characters (which could move the
/// cursor or retitle the terminal) and bidirectional overrides (which could reorder what is
/// read) become visible stand-ins, one character each so that columns stay true.
fn shown(c: char) -> char {
    match c {
        '\n' | '\t' => c,
        '\r' => ' ',
        '\u{0}'..='\u{1f}' => char::from_u32(0x2400 + c as u32).unwrap_or('?'),
        '\u{7f}' => '\u{2421}',
        '\u{80}'..='\u{9f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' => '\u{fffd}',
        _ => c,
    }
}

/// `text` with control characters made visible (newlines too, as `\n`) and cut to about
/// `max` characters.
fn visible(text: &str, max: usize) -> String {
    let mut out: String = text
        .chars()
        .take(max)
        .map(|c| if c == '\n' { ' ' } else { shown(c) })
        .collect();
    if text.chars().nth(max).is_some() {
        out.push_str("...");
    }
    out
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

//! `check --format html` and `check --html-dir`: one self-contained page (no network, no
//! external file) that embeds the verdict document (docs/json.md) and, per result, the
//! model's source and its counterexample as Mermaid and Graphviz text; the page's script
//! draws the summary, a lane per process, the world at the chosen step, beliefs, a lasso's
//! loop and a deadlock's wait-for cycle (docs/html.md). Pure: returns text.

use crate::Verdict;
use serde_json::{json, Value as Json};

const CSS: &str = include_str!("html/page.css");
const JS: &str = include_str!("html/page.js");

/// What a page shows beside a result's document: the model's source (to quote the line of
/// a step) and the diagrams of its counterexample. `Null` for a model that could not be
/// read.
#[must_use]
pub fn extra(v: &Verdict) -> Json {
    let m = &v.model;
    let t = v.trace.as_ref();
    json!({
        "source": m.ir().source,
        "mermaid": t.map(|t| t.mermaid(m)),
        "dot": t.map(|t| t.dot(m)),
    })
}

/// The page for a document (`json::document`) and its results' [`extra`]s, in order.
#[must_use]
pub fn page(title: &str, doc: &Json, extras: &[Json]) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>{}</title>\n<style>\n{CSS}</style>\n</head>\n<body>\n\
         <header><h1>interlock</h1><span class=\"counts\" id=\"counts\"></span></header>\n\
         <nav id=\"results\"></nav>\n<main id=\"main\"></main>\n\
         <script type=\"application/json\" id=\"data\">{}</script>\n\
         <script type=\"application/json\" id=\"extras\">{}</script>\n\
         <script>\n{JS}</script>\n</body>\n</html>\n",
        escape(title),
        embed(doc),
        embed(&Json::Array(extras.to_vec()))
    )
}

/// JSON inside a `<script>` element: `<` written `\u003c`, so that no text of a model can
/// end the element or open a comment (`</script>`, `<!--`); the JSON reads the same.
fn embed(v: &Json) -> String {
    serde_json::to_string(v)
        .expect("JSON values serialise")
        .replace('<', "\\u003c")
}

/// Text in HTML: `&`, `<`, `>` and `"` as entities.
#[must_use]
pub fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// The `index.html` of `check --html-dir`: each page with its verdict, `(label, page name,
/// summary, met)`.
#[must_use]
pub fn index(pages: &[(String, String, String, bool)]) -> String {
    let mut out = String::from(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <title>interlock: the models</title>\n<style>\nbody{font-family:sans-serif;margin:1.5em}\
         td,th{padding:.2em .6em;text-align:left}.met{color:#0a6b2d}.unmet{color:#b00020}\n\
         </style>\n</head>\n<body>\n<h1>The models</h1>\n<table>\n\
         <tr><th>model</th><th>verdict</th><th>as expected</th></tr>\n",
    );
    for (label, page, summary, met) in pages {
        let (class, word) = if *met {
            ("met", "yes")
        } else {
            ("unmet", "no")
        };
        out.push_str(&format!(
            "<tr><td><a href=\"{}\">{}</a></td><td>{}</td><td class=\"{class}\">{word}</td></tr>\n",
            escape(page),
            escape(label),
            escape(summary)
        ));
    }
    out.push_str("</table>\n</body>\n</html>\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_model_text_can_end_the_data_element() {
        let doc = json!({"results": [{"file": "</script><script>alert(1)</script><!--"}]});
        let page = page("t", &doc, &[]);
        assert_eq!(
            page.matches("</script>").count(),
            3,
            "only the page's own three"
        );
        assert!(!page.contains("<!--"));
        let start = page.find("id=\"data\">").unwrap() + 10;
        let end = start + page[start..].find("</script>").unwrap();
        let back: Json = serde_json::from_str(&page[start..end]).unwrap();
        assert_eq!(back, doc);
    }
}

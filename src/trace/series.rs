//! Phrases that differ only in one varying word merged into one phrase: `SET lock on n1`,
//! `… on n2`, `… on n3` become `SET lock on n1…n3`; identical neighbours are counted (`×3`).
//! Renderers use it to fold a run of steps into one row, and the summary to say once what
//! happened on several servers.

/// Splits a phrase into words and the characters between them, so that joining the pieces
/// gives the phrase back. A word is a run of letters, digits, `_`, `[`, `]` and `#`
/// (`client[0]`, `sku#1` are one word each; `n1:lock` is three pieces).
fn pieces(s: &str) -> Vec<&str> {
    let word = |c: char| c.is_alphanumeric() || matches!(c, '_' | '[' | ']' | '#');
    let mut out = Vec::new();
    let mut start = 0;
    let mut in_word = false;
    for (i, c) in s.char_indices() {
        let w = word(c);
        if i > start && !(w && in_word) {
            out.push(&s[start..i]);
            start = i;
        }
        in_word = w;
    }
    if start < s.len() {
        out.push(&s[start..]);
    }
    out
}

/// Where `a` and `b` differ, when they differ in one varying word: the same pieces
/// everywhere else, and at every differing place the same word of `a` against the same word
/// of `b` (`lock@n1 expired; n1 …` against `lock@n2 expired; n2 …`).
fn varying(a: &[&str], b: &[&str]) -> Option<Vec<usize>> {
    if a.len() != b.len() {
        return None;
    }
    let at: Vec<usize> = (0..a.len()).filter(|&i| a[i] != b[i]).collect();
    let first = *at.first()?;
    let same = at.iter().all(|&i| a[i] == a[first] && b[i] == b[first]);
    let word = |p: &str| p.chars().all(|c| c.is_alphanumeric() || "_[]#".contains(c));
    // Something besides the varying word must be shared: `COMMIT` and `done` are no series.
    let shared = (0..a.len()).any(|i| !at.contains(&i) && word(a[i]));
    (same && word(a[first]) && shared).then_some(at)
}

/// Whether two phrases merge into one (they differ in one varying word).
#[must_use]
pub fn mergeable(a: &str, b: &str) -> bool {
    varying(&pieces(a), &pieces(b)).is_some()
}

/// The words a series took, as one word: `n1…n5` when they count up by one from a common
/// stem, else `n1,n3`.
fn span_of(words: &[&str]) -> String {
    let split = |w: &str| {
        let digits = w.len() - w.trim_end_matches(|c: char| c.is_ascii_digit()).len();
        let (stem, n) = w.split_at(w.len() - digits);
        (stem.to_string(), n.parse::<u64>().ok())
    };
    let parts: Vec<(String, Option<u64>)> = words.iter().map(|w| split(w)).collect();
    let counts_up = words.len() >= 3
        && parts.windows(2).all(|p| {
            p[0].0 == p[1].0 && matches!((p[0].1, p[1].1), (Some(x), Some(y)) if y == x + 1)
        });
    if counts_up {
        format!("{}…{}", words[0], words[words.len() - 1])
    } else {
        words.join(",")
    }
}

/// Merges runs of neighbouring phrases: identical ones into `phrase ×n`, ones that differ in
/// one varying word (the same places for the whole run) into one phrase naming the words.
#[must_use]
pub fn merge(phrases: &[String]) -> Vec<String> {
    merge_with(phrases, false)
}

/// As [`merge`], but phrases whose first word (their subject: `buyer[0] takes sku#1`) varies
/// stay apart: two processes that each did something did not do it together.
#[must_use]
pub fn merge_keeping_subjects(phrases: &[String]) -> Vec<String> {
    merge_with(phrases, true)
}

fn merge_with(phrases: &[String], keep_subject: bool) -> Vec<String> {
    let varying = |a: &[&str], b: &[&str]| {
        varying(a, b).filter(|at| !(keep_subject && at.first() == Some(&0)))
    };
    let split: Vec<Vec<&str>> = phrases.iter().map(|p| pieces(p)).collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < phrases.len() {
        let same = (i + 1..phrases.len())
            .take_while(|&j| phrases[j] == phrases[i])
            .count();
        if same > 0 {
            out.push(format!("{} ×{}", phrases[i], same + 1));
            i += same + 1;
            continue;
        }
        let Some(at) = split.get(i + 1).and_then(|b| varying(&split[i], b)) else {
            out.push(phrases[i].clone());
            i += 1;
            continue;
        };
        let end = (i + 1..phrases.len())
            .take_while(|&j| varying(&split[i], &split[j]).as_ref() == Some(&at))
            .last()
            .map_or(i + 1, |j| j + 1);
        let words: Vec<&str> = (i..end).map(|j| split[j][at[0]]).collect();
        let word = span_of(&words);
        let mut merged = String::new();
        for (k, piece) in split[i].iter().enumerate() {
            merged.push_str(if at.contains(&k) { &word } else { piece });
        }
        out.push(merged);
        i = end;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::{merge, mergeable, pieces};

    fn strings(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| (*s).to_string()).collect()
    }

    #[test]
    fn pieces_join_back_to_the_phrase() {
        for s in ["n1:lock = client[0] (expires in 1s)", "", "a", "  x  y", "sku#1 stock=4"] {
            assert_eq!(pieces(s).concat(), s);
        }
        assert_eq!(pieces("n1:lock"), ["n1", ":", "lock"]);
    }

    #[test]
    fn servers_in_order_become_a_range() {
        let p: Vec<String> = (1..=5)
            .map(|i| format!("SET lock client[1] NX PX 1000 on n{i} → nil"))
            .collect();
        assert_eq!(merge(&p), ["SET lock client[1] NX PX 1000 on n1…n5 → nil"]);
        let notes: Vec<String> = (1..=3)
            .map(|i| format!("client[0] believes it holds lock@n{i}; lock@n{i} expired at 1s"))
            .collect();
        assert_eq!(
            merge(&notes),
            ["client[0] believes it holds lock@n1…n3; lock@n1…n3 expired at 1s"]
        );
    }

    #[test]
    fn words_out_of_order_are_listed_and_repeats_counted() {
        let p = strings(&["GET k on n1", "GET k on n3", "sleep 1s", "sleep 1s", "done"]);
        assert_eq!(merge(&p), ["GET k on n1,n3", "sleep 1s ×2", "done"]);
    }

    #[test]
    fn subjects_can_be_kept_apart() {
        let p = strings(&["buyer[1] takes sku#1", "buyer[0] takes sku#1"]);
        assert_eq!(merge(&p), ["buyer[1],buyer[0] takes sku#1"]);
        assert_eq!(super::merge_keeping_subjects(&p), p);
    }

    #[test]
    fn phrases_that_differ_in_two_words_stay_apart() {
        let p = strings(&["time passes 200ms (now 200ms)", "time passes 400ms (now 600ms)"]);
        assert!(!mergeable(&p[0], &p[1]));
        assert_eq!(merge(&p), p);
        assert!(!mergeable("SET k 1 → 'OK'", "SET k 1 → nil"));
        assert!(!mergeable("COMMIT", "done"));
    }
}

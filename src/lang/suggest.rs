//! "Did you mean …?" hints: the closest known name by edit distance, else the list of names.

/// Optimal-string-alignment distance (Levenshtein plus adjacent transpositions).
fn distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let mut rows = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in rows.iter_mut().enumerate() {
        row[0] = i;
    }
    for (j, cell) in rows[0].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut best = (rows[i - 1][j] + 1)
                .min(rows[i][j - 1] + 1)
                .min(rows[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                best = best.min(rows[i - 2][j - 2] + 1);
            }
            rows[i][j] = best;
        }
    }
    rows[a.len()][b.len()]
}

/// The known name closest to `wrong`, if it is close enough to be a typo.
pub fn closest<'a>(wrong: &str, known: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let limit = (wrong.chars().count() / 3).max(1);
    let lower = wrong.to_ascii_lowercase();
    known
        .into_iter()
        .map(|k| (distance(&lower, &k.to_ascii_lowercase()), k))
        .filter(|&(d, _)| d <= limit)
        .min_by_key(|&(d, _)| d)
        .map(|(_, k)| k)
}

/// `did you mean `x`?`, else `what: `a`, `b``, else `none` (e.g. "no ghost is declared").
pub fn hint<'a>(
    wrong: &str,
    known: impl IntoIterator<Item = &'a str> + Clone,
    what: &str,
    none: &str,
) -> String {
    if let Some(best) = closest(wrong, known.clone()) {
        return format!("did you mean `{best}`?");
    }
    let list: Vec<String> = known.into_iter().map(|k| format!("`{k}`")).collect();
    if list.is_empty() {
        none.to_string()
    } else {
        format!("{what}: {}", list.join(", "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn typos_are_found() {
        assert_eq!(
            closest("invarient", ["invariant", "final"]),
            Some("invariant")
        );
        assert_eq!(closest("skus", ["sku", "orders"]), Some("sku"));
        assert_eq!(closest("slect", ["select", "update"]), Some("select"));
        assert_eq!(closest("zzz", ["sku"]), None);
    }

    #[test]
    fn hint_lists_names_when_nothing_is_close() {
        let h = hint("zzz", ["a1", "b1"], "ghosts are", "none");
        assert_eq!(h, "ghosts are: `a1`, `b1`");
        assert_eq!(hint("zzz", [], "x", "none"), "none");
    }
}

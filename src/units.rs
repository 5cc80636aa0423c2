//! The command line's quantities with units: `--time-limit 90s` or `10m`, `--max-memory 2GiB`.
//! A bare number keeps its old meaning (seconds, MiB), so existing scripts still work.

/// A duration in whole seconds: `90`, `90s`, `10m`, `2h`.
pub fn seconds(text: &str) -> Result<u64, String> {
    let units = [("s", 1), ("m", 60), ("h", 3600)];
    scaled(text, &units, "seconds", "`90`, `90s`, `10m` or `2h`")
}

/// A memory size in MiB: `512`, `512MiB`, `512M`, `2GiB`, `2G` (binary units, as `-Xmx2g`).
pub fn mebibytes(text: &str) -> Result<u64, String> {
    let units = [("MiB", 1), ("M", 1), ("GiB", 1024), ("G", 1024)];
    let hint = "`512` (MiB), `512MiB`, `512M`, `2GiB` or `2G`";
    scaled(text, &units, "MiB", hint)
}

/// A memory limit: a size, or `none`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Limit {
    None,
    Mib(u64),
}

/// `--max-memory`: a size as [`mebibytes`] reads it, or `none` for no limit.
pub fn memory_limit(text: &str) -> Result<Limit, String> {
    if text.trim().eq_ignore_ascii_case("none") {
        return Ok(Limit::None);
    }
    mebibytes(text)
        .map(Limit::Mib)
        .map_err(|e| format!("{e}, or `none` for no limit"))
}

/// `text` as a whole number followed by one of `units` (or none: the base unit), times the
/// unit's factor.
fn scaled(text: &str, units: &[(&str, u64)], base: &str, hint: &str) -> Result<u64, String> {
    let t = text.trim();
    let digits = t.len() - t.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    let (number, unit) = t.split_at(digits);
    let bad = |why: &str| format!("{why}; write it as {hint}");
    if number.is_empty() || unit.starts_with(['.', ',']) {
        return Err(bad("expected a whole number, at least 0"));
    }
    let factor = match unit.trim() {
        "" => 1,
        u => match units.iter().find(|(name, _)| *name == u) {
            Some(&(_, f)) => f,
            None => return Err(bad(&format!("unknown unit `{u}`"))),
        },
    };
    let n: u64 = number
        .parse()
        .map_err(|_| bad(&format!("`{number}` {base} is too large")))?;
    n.checked_mul(factor)
        .ok_or_else(|| bad(&format!("`{t}` is too large")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        let good = [
            ("90", 90),
            ("90s", 90),
            ("10m", 600),
            ("2h", 7200),
            ("0", 0),
        ];
        for (text, secs) in good {
            assert_eq!(seconds(text), Ok(secs), "{text}");
        }
        for bad in ["", "s", "-5", "1.5", "10 minutes", "5ms", "1d"] {
            let e = seconds(bad).unwrap_err();
            assert!(e.contains("`90s`"), "{bad}: {e}");
        }
        assert!(seconds("99999999999999999999").is_err());
        assert!(seconds("9999999999999999999h").is_err());
        assert!(seconds("1.5m")
            .unwrap_err()
            .starts_with("expected a whole number"));
    }

    #[test]
    fn sizes() {
        let good = [
            ("512", 512),
            ("512MiB", 512),
            ("512M", 512),
            ("2GiB", 2048),
            ("2G", 2048),
        ];
        for (text, mib) in good {
            assert_eq!(mebibytes(text), Ok(mib), "{text}");
        }
        let e = mebibytes("2GB").unwrap_err();
        assert!(e.contains("unknown unit `GB`") && e.contains("2GiB"), "{e}");
        assert!(mebibytes("-1").is_err());
    }
}

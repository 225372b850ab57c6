//! Version ranges as manifests write them, read far enough to answer one question: does the
//! range admit a version at or above a given major (2.0.0: the first SDK major that speaks
//! 2026-07-28)? Two grammars: npm's (`^1.30.0`, `~1.31.2`, `1.32.x`, `>=1.0 <1.33`, `1.2 -
//! 1.4`, `||`), which also reads Poetry's constraints (`^1.2`, `>=1.2,<2`), and PEP 440's
//! (`==1.9`, `>=1.2,<2`, `~=1.5`, `==1.*`, `!=`). Pre-release and build tags are ignored (a
//! `2.0.0rc1` counts as 2.0.0); a tag such as `latest`, a URL or a path is not a range
//! (`None`).

use std::sync::LazyLock;

use regex::Regex;

/// A version, `major.minor.patch`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Version(pub u64, pub u64, pub u64);

/// A contiguous set of versions: from `low` (inclusive) to `high` (`None`: unbounded; the flag
/// says whether `high` itself is in).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Interval {
    low: Version,
    high: Option<(Version, bool)>,
}

impl Interval {
    const ANY: Interval = Interval { low: Version(0, 0, 0), high: None };

    fn below(high: Version) -> Interval {
        Interval { high: Some((high, false)), ..Interval::ANY }
    }

    fn from(low: Version) -> Interval {
        Interval { low, high: None }
    }

    fn between(low: Version, high: Option<Version>) -> Interval {
        Interval { low, high: high.map(|high| (high, false)) }
    }

    fn exactly(version: Version) -> Interval {
        Interval { low: version, high: Some((version, true)) }
    }

    fn intersect(self, other: Interval) -> Interval {
        let high = match (self.high, other.high) {
            (None, high) | (high, None) => high,
            (Some(a), Some(b)) => Some(if a.0 < b.0 || (a.0 == b.0 && !a.1) { a } else { b }),
        };
        Interval { low: self.low.max(other.low), high }
    }

    /// True when some version at or above `floor` is in the set.
    fn reaches(self, floor: Version) -> bool {
        let low = self.low.max(floor);
        match self.high {
            None => true,
            Some((high, inclusive)) => low < high || (inclusive && low == high),
        }
    }

    fn is_empty(self) -> bool {
        !self.reaches(Version(0, 0, 0))
    }
}

/// The grammar of a range.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Flavor {
    /// npm's (and Poetry's).
    Npm,
    /// PEP 440's (pip, `pyproject.toml` `dependencies`, core metadata).
    Pep440,
}

/// `Some(true)` when `range` admits versions but none at or above `major.0.0`, `Some(false)`
/// when it admits one, `None` when it is not a range this reads (or admits nothing).
pub(crate) fn only_below(range: &str, flavor: Flavor, major: u64) -> Option<bool> {
    let intervals = match flavor {
        Flavor::Npm => npm(range)?,
        Flavor::Pep440 => pep440(range)?,
    };
    let admitted: Vec<Interval> = intervals.into_iter().filter(|interval| !interval.is_empty()).collect();
    if admitted.is_empty() {
        return None;
    }
    Some(!admitted.iter().any(|interval| interval.reaches(Version(major, 0, 0))))
}

/// The given numbers of a version, up to three (`1.x` is `[1]`, `*` is `[]`).
type Partial = Vec<u64>;

fn floor(partial: &[u64]) -> Version {
    let part = |index: usize| partial.get(index).copied().unwrap_or(0);
    Version(part(0), part(1), part(2))
}

/// The first version past every version `partial` stands for (`1.2` → 1.3.0; `[]` → none).
fn past(partial: &[u64]) -> Option<Version> {
    match partial.len() {
        0 => None,
        1 => Some(Version(partial[0] + 1, 0, 0)),
        2 => Some(Version(partial[0], partial[1] + 1, 0)),
        _ => Some(Version(partial[0], partial[1], partial[2] + 1)),
    }
}

/// An npm version: `1`, `1.2`, `1.2.3`, `1.x`, `*`, with an optional `v`, pre-release or build.
fn npm_version(text: &str) -> Option<Partial> {
    let text = text.trim().trim_start_matches('=').trim_start_matches(['v', 'V']);
    let core = text.split(['-', '+']).next().unwrap_or_default();
    let mut parts = Vec::new();
    for part in core.split('.') {
        match part {
            "x" | "X" | "*" => break,
            _ if !part.is_empty() && part.bytes().all(|byte| byte.is_ascii_digit()) => {
                parts.push(part.parse().ok()?);
            }
            _ => return None,
        }
        if parts.len() == 3 {
            break;
        }
    }
    Some(parts)
}

static COMPARATOR: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(~>|~=|===|==|!=|>=|<=|>|<|=|\^|~)?\s*(v?[0-9xX*][0-9A-Za-z.*+-]*)").expect("a valid regex")
});
static HYPHEN: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"^\s*(\S+)\s+-\s+(\S+)\s*$").expect("a valid regex"));

/// An npm (or Poetry) range as intervals, one per `||` alternative.
fn npm(range: &str) -> Option<Vec<Interval>> {
    let range = range.trim().strip_prefix("workspace:").unwrap_or(range.trim());
    if range.contains(':') || range.contains('/') {
        return None;
    }
    range.split("||").flat_map(|alternative| alternative.split('|')).map(npm_set).collect()
}

/// One alternative: a hyphen range, or comparators that all hold.
fn npm_set(text: &str) -> Option<Interval> {
    if let Some(captures) = HYPHEN.captures(text) {
        let low = npm_version(&captures[1])?;
        let high = npm_version(&captures[2])?;
        let high = if high.len() == 3 { Some((floor(&high), true)) } else { past(&high).map(|high| (high, false)) };
        return Some(Interval { low: floor(&low), high });
    }
    let mut interval = Interval::ANY;
    let mut end = 0;
    for captures in COMPARATOR.captures_iter(text) {
        let whole = captures.get(0)?;
        if !text[end..whole.start()].chars().all(|c| c.is_whitespace() || c == ',') {
            return None;
        }
        end = whole.end();
        let operator = captures.get(1).map_or("", |operator| operator.as_str());
        let version = npm_version(&captures[2])?;
        interval = interval.intersect(npm_comparator(operator, &version)?);
    }
    if !text[end..].chars().all(|c| c.is_whitespace() || c == ',') {
        return None;
    }
    Some(interval)
}

fn npm_comparator(operator: &str, version: &[u64]) -> Option<Interval> {
    let exact = version.len() == 3;
    Some(match operator {
        "" | "=" | "==" | "===" => {
            if exact {
                Interval::exactly(floor(version))
            } else {
                Interval::between(floor(version), past(version))
            }
        }
        ">=" => Interval::from(floor(version)),
        ">" => match past(version) {
            Some(low) => Interval::from(low),
            None => Interval::below(Version(0, 0, 0)),
        },
        "<" => Interval::below(floor(version)),
        "<=" if exact => Interval { high: Some((floor(version), true)), ..Interval::ANY },
        "<=" => past(version).map_or(Interval::ANY, Interval::below),
        "!=" => Interval::ANY,
        "^" => {
            let first_nonzero = version.iter().position(|part| *part != 0);
            let high = match first_nonzero {
                None if version.is_empty() => None,
                // `^0`, `^0.0`, `^0.0.0`: the next number after the zeros given.
                None => past(version),
                Some(index) => past(&version[..=index]),
            };
            Interval::between(floor(version), high)
        }
        "~" | "~>" => {
            let kept = &version[..version.len().min(2)];
            Interval::between(floor(version), past(kept))
        }
        "~=" => compatible(version)?,
        _ => return None,
    })
}

/// PEP 440's `~=V`: at least V, within the prefix of V less its last number (`~=1.5` is
/// `>=1.5, ==1.*`).
fn compatible(version: &[u64]) -> Option<Interval> {
    if version.len() < 2 {
        return None;
    }
    Some(Interval::between(floor(version), past(&version[..version.len() - 1])))
}

/// A PEP 440 version's release numbers (`1.9.0rc1` → `[1, 9, 0]`, `1.9.post1` → `[1, 9]`), and
/// whether it ends in `.*`.
fn pep440_version(text: &str) -> Option<(Partial, bool)> {
    let text = text.trim().trim_start_matches(['v', 'V']);
    if text.contains('!') {
        return None;
    }
    let (text, wildcard) = match text.strip_suffix(".*") {
        Some(prefix) => (prefix, true),
        None => (text, false),
    };
    let mut parts = Vec::new();
    for part in text.split('.') {
        let digits: String = part.chars().take_while(char::is_ascii_digit).collect();
        if digits.is_empty() {
            break;
        }
        parts.push(digits.parse().ok()?);
        if digits.len() != part.len() || parts.len() == 3 {
            break;
        }
    }
    (!parts.is_empty()).then_some((parts, wildcard))
}

static PEP440_CLAUSE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^\s*(~=|===|==|!=|<=|>=|<|>)\s*(\S+?)\s*$").expect("a valid regex"));

/// A PEP 440 specifier set (comma-separated clauses that all hold) as one interval.
fn pep440(specifiers: &str) -> Option<Vec<Interval>> {
    let mut interval = Interval::ANY;
    for clause in specifiers.split(',').filter(|clause| !clause.trim().is_empty()) {
        let captures = PEP440_CLAUSE.captures(clause)?;
        let (version, wildcard) = pep440_version(&captures[2])?;
        let bound = match (&captures[1], wildcard) {
            ("==" | "===", true) => Interval::between(floor(&version), past(&version)),
            ("==" | "===", false) => Interval::exactly(floor(&version)),
            ("!=", _) => Interval::ANY,
            ("~=", _) => compatible(&version)?,
            (">=", _) => Interval::from(floor(&version)),
            (">", _) => {
                let low = floor(&version);
                Interval::from(Version(low.0, low.1, low.2 + 1))
            }
            ("<", _) => Interval::below(floor(&version)),
            ("<=", _) => Interval { high: Some((floor(&version), true)), ..Interval::ANY },
            _ => return None,
        };
        interval = interval.intersect(bound);
    }
    Some(vec![interval])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn npm_ranges_that_stay_below_2() {
        for range in [
            "^1.30.0",
            "~1.31.2",
            "1.32.0",
            ">=1.0 <1.33",
            "1.x",
            "1",
            "^1",
            "~1",
            "<2.0.0",
            "<=1.32",
            ">=1.0.0 <2",
            "1.2 - 1.32",
            "1.2.0 - 1.32.2",
            "^0.6.0",
            "^1.2.3 || ~1.31",
            "=1.32.2",
            "v1.32.2",
            "1.32.2-beta.1",
            "workspace:^1.2",
            ">=1.2,<2",
        ] {
            assert_eq!(only_below(range, Flavor::Npm, 2), Some(true), "{range}");
        }
    }

    #[test]
    fn npm_ranges_that_admit_2_or_are_not_ranges() {
        for range in
            ["^2.0.0", ">=1.0", "*", "", "x", "^1.30.0 || ^2.0.0", ">1", ">=1 <=2", "1.0.0 - 2", "2.x", "<=2.0.0"]
        {
            assert_eq!(only_below(range, Flavor::Npm, 2), Some(false), "{range}");
        }
        for range in
            ["latest", "next", "file:../sdk", "github:org/sdk", "git+https://x.test/sdk.git", "^1.2 junk", ">2 <1"]
        {
            assert_eq!(only_below(range, Flavor::Npm, 2), None, "{range}");
        }
    }

    #[test]
    fn poetry_constraints_read_as_npm_ranges() {
        for range in ["^1.2", "~1.5", "1.9.*", ">=1.2,<2", "==1.9.0", "~=1.5", ">=1.2, <2.0"] {
            assert_eq!(only_below(range, Flavor::Npm, 2), Some(true), "{range}");
        }
        assert_eq!(only_below("^2.3", Flavor::Npm, 2), Some(false));
    }

    #[test]
    fn pep440_specifiers() {
        for spec in [
            "==1.9",
            "==1.9.0",
            ">=1.2,<2",
            "~=1.5",
            "~=1.5.2",
            "==1.*",
            "<2",
            "<=1.99",
            "===1.9.4",
            ">=1.2, <2.0",
            "<2,!=1.3",
        ] {
            assert_eq!(only_below(spec, Flavor::Pep440, 2), Some(true), "{spec}");
        }
        for spec in ["", ">=1.2", "!=1.0", ">=2.3,<3", "~=2.0", "==2.0.0rc1", "<=2.0", ">=1.9, !=1.9.5 , <3"] {
            assert_eq!(only_below(spec, Flavor::Pep440, 2), Some(false), "{spec}");
        }
        for spec in ["~=1", "1.9", ">=x", "==1!2.0"] {
            assert_eq!(only_below(spec, Flavor::Pep440, 2), None, "{spec}");
        }
    }
}

//! The argument matchers of a golden case (`expect_args`, a step's `args`), applied to the
//! arguments of one tool call. Pure: each matcher gives a verdict and, when it fails, a sentence
//! that says what was expected, what came and how they were compared.
//!
//! Matching is typed, as in BFCL: `42` and `"42"` differ (a number sent as a string fails, with a
//! reason that says so), `1` and `1.0` are equal. `auto` is `exact` for every value but a string
//! and `normalized` for a string (no tool schema is read here). `normalized` is BFCL's
//! standardisation (spaces and `, . / - _ * ^` removed, lower case, `'` as `"`) extended to
//! Unicode: every Unicode space, Unicode lower case, full-width ASCII folded to ASCII and curly
//! quotes to straight ones, after Unicode canonical composition (NFC), so `é` written as one
//! character and as `e` plus a combining accent are one; accents themselves stay (`Zürich` is not
//! `Zurich`). `fuzzy` composes the same way. `regex` is anchored at both ends. `number` takes an absolute `tolerance` or a
//! `rel_tolerance` (× |value|), inclusive, else equality. `datetime` resolves relative days
//! against the run's start date (in the set's `defaults.timezone`) and compares dates (the default for a date) or times to the
//! second. `set` is an array in any order with the same items as many times; `subset` an object
//! with at least the listed keys. `fuzzy` is one minus the normalised edit distance of the two
//! texts (lower case, punctuation as spaces, spaces collapsed), against `threshold` (0.85).
//! `present` accepts any value, `null` included. `embedding` and `judge` read what a model said
//! of the pair (resolved before scoring, see [`super::semantic`]): `embedding` passes when the
//! cosine of the two texts' embeddings reaches `threshold` (0.85), `judge` when the judge model
//! says the value satisfies the description (`unknown` fails); a model that could not answer
//! makes the check `error`, never a pass.

use super::semantic::{JudgeVerdict, Resolved, SemanticKey, SemanticMode, SemanticVerdicts};
use crate::text::json_kind;
use chrono::{DateTime, Days, FixedOffset, NaiveDate, NaiveDateTime};
use serde_json::{Map, Value};

use crate::golden::{Args, Matcher};

/// What one check concluded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// It holds.
    Pass,
    /// It does not hold.
    Fail,
    /// It was not graded (the reason says why).
    Skipped,
    /// It could not be graded because a model failed (an `embedding` or `judge` matcher): the
    /// trial is `error`, neither a pass nor a fail.
    Error,
}

/// The verdict on one argument (or on an unexpected one, mode `extra_args`).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ArgCheck {
    /// The argument's name.
    pub name: String,
    /// The matcher's mode (`exact`, `normalized`, …) or `extra_args`.
    pub mode: String,
    /// Pass, fail or skipped.
    pub verdict: Verdict,
    /// Why, in words a user can act on.
    pub reason: String,
}

/// The default `threshold` of an `embedding` matcher (a cosine).
pub(crate) const EMBEDDING_THRESHOLD: f64 = 0.85;

/// Checks the arguments of one call against `expected` (arg name → resolved matcher); with
/// `forbid_extra`, every argument `expected` does not name fails too. `semantic` holds what the
/// models said of the trial's `embedding` and `judge` checks.
pub(crate) fn check_args(
    expected: &Args,
    actual: &Value,
    forbid_extra: bool,
    today: NaiveDate,
    semantic: &SemanticVerdicts,
) -> Vec<ArgCheck> {
    // No arguments at all (`null`) is an empty object.
    let none = Map::new();
    let actual_map = if actual.is_null() { Some(&none) } else { actual.as_object() };
    let Some(actual_map) = actual_map else {
        return vec![ArgCheck {
            name: String::new(),
            mode: "arguments".into(),
            verdict: Verdict::Fail,
            reason: format!("the arguments are not a JSON object: {}", short(actual)),
        }];
    };
    let mut checks: Vec<ArgCheck> = expected
        .iter()
        .map(|(name, matcher)| check_arg(name, matcher, actual_map.get(name), today, semantic))
        .collect();
    if forbid_extra {
        for name in actual_map.keys().filter(|name| !expected.contains(name)) {
            checks.push(ArgCheck {
                name: name.clone(),
                mode: "extra_args".into(),
                verdict: Verdict::Fail,
                reason: format!(
                    "unexpected argument `{name}` (the case sets `extra_args: forbid`; list it in the expected \
                     arguments, or allow extra arguments)"
                ),
            });
        }
    }
    checks
}

/// Checks one argument (`actual` is `None` when the call does not have it).
pub(crate) fn check_arg(
    name: &str,
    matcher: &Matcher,
    actual: Option<&Value>,
    today: NaiveDate,
    semantic: &SemanticVerdicts,
) -> ArgCheck {
    let mode = matcher.mode.clone();
    let outcome = match (SemanticMode::of(matcher), actual) {
        (Some(semantic_mode), Some(actual)) => {
            let key = SemanticKey::new(semantic_mode, name, matcher, actual);
            if semantic_mode == SemanticMode::Embedding && key.actual.trim().is_empty() {
                Conclusion::Fail(format!("the value is empty: nothing to compare with {}", quoted(&key.expected)))
            } else {
                model_graded(&key, matcher, semantic.get(&key))
            }
        }
        _ => evaluate(&mode, matcher, actual, today),
    };
    let (verdict, reason) = match outcome {
        Conclusion::Pass(why) => (Verdict::Pass, why),
        Conclusion::Fail(why) => (Verdict::Fail, format!("`{name}`: {why}")),
        Conclusion::Error(why) => (Verdict::Error, format!("`{name}`: {why}")),
    };
    ArgCheck { name: name.to_owned(), mode, verdict, reason }
}

/// What a matcher concluded, with its explanation.
enum Conclusion {
    Pass(String),
    Fail(String),
    Error(String),
}

/// An `embedding` or `judge` check from what the model said of it (`None`: nothing was
/// resolved for it, an error).
fn model_graded(key: &SemanticKey, matcher: &Matcher, resolved: Option<&Resolved>) -> Conclusion {
    let (expected, actual) = (quoted(&key.expected), quoted(&key.actual));
    match resolved {
        None => Conclusion::Error(format!(
            "`{}` could not be graded: no model answer was resolved for {actual}",
            key.mode.name()
        )),
        Some(Resolved::Error(why) | Resolved::Missed(why)) => {
            Conclusion::Error(format!("`{}` could not be graded: {why}", key.mode.name()))
        }
        Some(Resolved::Cosine(cosine)) => {
            let threshold = matcher.threshold.unwrap_or(EMBEDDING_THRESHOLD);
            if *cosine >= threshold {
                Conclusion::Pass(format!("embedding: cosine {cosine:.3} ≥ {threshold} between {actual} and {expected}"))
            } else {
                Conclusion::Fail(format!(
                    "{actual} is not close enough in meaning to {expected}: cosine {cosine:.3}, below the threshold {threshold}"
                ))
            }
        }
        Some(Resolved::Judged(JudgeVerdict::Pass, why)) => {
            Conclusion::Pass(format!("judge: {actual} satisfies {expected} ({why})"))
        }
        Some(Resolved::Judged(JudgeVerdict::Fail, why)) => {
            Conclusion::Fail(format!("the judge says {actual} does not satisfy {expected}: {why}"))
        }
        Some(Resolved::Judged(JudgeVerdict::Unknown, why)) => Conclusion::Fail(format!(
            "the judge could not tell whether {actual} satisfies {expected} (graded as a failure): {why}"
        )),
    }
}

/// A text in quotes, cut to 80 characters.
fn quoted(text: &str) -> String {
    short(&Value::String(text.to_owned()))
}

fn evaluate(mode: &str, matcher: &Matcher, actual: Option<&Value>, today: NaiveDate) -> Conclusion {
    match mode {
        "present" => {
            return match actual {
                Some(_) => Conclusion::Pass("present".into()),
                None => Conclusion::Fail("missing (the case expects it to be present)".into()),
            };
        }
        "absent" => {
            return match actual {
                None => Conclusion::Pass("absent".into()),
                Some(value) => Conclusion::Fail(format!("expected no such argument, got {}", short(value))),
            };
        }
        _ => {}
    }
    let value = matcher.value.as_ref().unwrap_or(&Value::Null);
    let Some(actual) = actual else {
        // What was expected, so the reason says what the call should have had.
        let expected = match (mode, matcher.pattern.as_deref().or(value.as_str())) {
            ("regex", Some(pattern)) => format!(" (expected to match /{pattern}/)"),
            _ => match matcher.value.as_ref().or(matcher.values.as_ref()).or(matcher.one_of.as_ref()) {
                Some(expected) => format!(" (expected {})", short(expected)),
                None => String::new(),
            },
        };
        return Conclusion::Fail(format!("missing{expected}"));
    };
    // A bare value under `defaults.arg_match: regex | one_of | set` is the pattern or the list.
    let values = matcher.values.as_ref().unwrap_or(value);
    let result = match mode {
        "auto" => auto(value, actual),
        "exact" => exact(value, actual),
        "normalized" => match matcher.one_of.as_ref().and_then(Value::as_array) {
            Some(list) => any_of(list, actual, normalized),
            None => normalized(value, actual),
        },
        "one_of" => match values.as_array() {
            Some(list) => any_of(list, actual, auto),
            None => auto(values, actual),
        },
        "regex" => regex(matcher.pattern.as_deref().or(value.as_str()).unwrap_or(""), actual),
        "number" => number(matcher, actual),
        "datetime" => datetime(matcher, actual, today),
        "set" => set(values, actual),
        "subset" => subset(value, actual),
        "fuzzy" => fuzzy(value, matcher.threshold.unwrap_or(0.85), actual),
        other => Err(Mismatch(format!("unknown matcher `{other}`"))),
    };
    match result {
        Ok(()) => Conclusion::Pass(format!("{mode}: {}", short(actual))),
        Err(why) => Conclusion::Fail(why.0),
    }
}

/// A check's result: `Err` says why it failed.
type Checked = Result<(), Mismatch>;

/// Why a value does not satisfy a matcher (or why the matcher cannot be applied).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
struct Mismatch(String);

/// A value as a short JSON text for a message.
pub(crate) fn short(value: &Value) -> String {
    let text = value.to_string();
    if text.chars().count() <= 80 { text } else { crate::text::clip(&text, 79) }
}

/// `exact` for every value but a string, `normalized` for a string.
fn auto(expected: &Value, actual: &Value) -> Checked {
    if expected.is_string() { normalized(expected, actual) } else { exact(expected, actual) }
}

/// Typed JSON equality: numbers by value (`1` = `1.0`), objects by keys, arrays in order.
pub(crate) fn json_equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => match (x.as_i64(), y.as_i64(), x.as_u64(), y.as_u64()) {
            (Some(x), Some(y), _, _) => x == y,
            (_, _, Some(x), Some(y)) => x == y,
            _ => x.as_f64() == y.as_f64(),
        },
        (Value::Array(x), Value::Array(y)) => x.len() == y.len() && x.iter().zip(y).all(|(x, y)| json_equal(x, y)),
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(key, value)| y.get(key).is_some_and(|other| json_equal(value, other)))
        }
        _ => a == b,
    }
}

fn exact(expected: &Value, actual: &Value) -> Checked {
    if json_equal(expected, actual) {
        return Ok(());
    }
    let mut why = format!("expected exactly {}, got {}", short(expected), short(actual));
    if std::mem::discriminant(expected) != std::mem::discriminant(actual) {
        why.push_str(&format!(" ({}, not {})", json_kind(actual), json_kind(expected)));
    }
    Err(Mismatch(why))
}

/// BFCL's standardisation, extended to Unicode (see the module docs).
pub(crate) fn standardize(text: &str) -> String {
    use unicode_normalization::UnicodeNormalization;
    let mut out = String::with_capacity(text.len());
    for c in text.nfc() {
        let c = match c {
            '\u{FF01}'..='\u{FF5E}' => char::from_u32(c as u32 - 0xFEE0).unwrap_or(c),
            '\u{3000}' => ' ',
            '\u{2018}' | '\u{2019}' | '\u{201C}' | '\u{201D}' | '\'' => '"',
            _ => c,
        };
        if c.is_whitespace() || matches!(c, ',' | '.' | '/' | '-' | '_' | '*' | '^') {
            continue;
        }
        out.extend(c.to_lowercase());
    }
    out
}

fn normalized(expected: &Value, actual: &Value) -> Checked {
    let (Some(want), Some(got)) = (expected.as_str(), actual.as_str()) else {
        return exact(expected, actual);
    };
    let (want_n, got_n) = (standardize(want), standardize(got));
    if want_n == got_n {
        Ok(())
    } else {
        Err(Mismatch(format!(
            "expected {} (normalized), got {}: they differ after case, space and punctuation are removed \
             (`{want_n}` vs `{got_n}`)",
            short(expected),
            short(actual)
        )))
    }
}

fn any_of(list: &[Value], actual: &Value, each: fn(&Value, &Value) -> Checked) -> Checked {
    if list.iter().any(|expected| each(expected, actual).is_ok()) {
        return Ok(());
    }
    let listed: Vec<String> = list.iter().map(short).collect();
    Err(Mismatch(format!("got {}, which is none of {}", short(actual), listed.join(", "))))
}

fn regex(pattern: &str, actual: &Value) -> Checked {
    let Some(text) = actual.as_str() else {
        return Err(Mismatch(format!(
            "expected a string matching /{pattern}/, got {} ({})",
            short(actual),
            json_kind(actual)
        )));
    };
    let anchored = match regex::Regex::new(&format!("^(?:{pattern})$")) {
        Ok(anchored) => anchored,
        Err(_) => return Err(Mismatch(format!("the pattern /{pattern}/ is not a valid regular expression"))),
    };
    if anchored.is_match(text) {
        Ok(())
    } else {
        Err(Mismatch(format!("{} does not match /{pattern}/ (the whole value must match)", short(actual))))
    }
}

fn number(matcher: &Matcher, actual: &Value) -> Checked {
    let expected = matcher.value.as_ref().and_then(Value::as_f64).unwrap_or(f64::NAN);
    let Some(got) = actual.as_f64().filter(|_| actual.is_number()) else {
        let hint = match actual.as_str().map(|text| text.trim().parse::<f64>()) {
            Some(Ok(_)) => " (a number sent as a string)",
            _ => "",
        };
        return Err(Mismatch(format!(
            "expected the number {expected}, got {} ({}){hint}",
            short(actual),
            json_kind(actual)
        )));
    };
    let (allowed, label) = match (matcher.tolerance, matcher.rel_tolerance) {
        (Some(tolerance), _) => (tolerance, format!("± {tolerance}")),
        (None, Some(relative)) => (relative * expected.abs(), format!("± {relative} × |{expected}|")),
        (None, None) => (0.0, "exactly".into()),
    };
    // A hair of slack for binary floating point (38.58 + 0.05 is not 38.63 exactly).
    if (got - expected).abs() <= allowed + 1e-9 * expected.abs().max(1.0) {
        Ok(())
    } else {
        Err(Mismatch(format!("expected {expected} {label}, got {got} (off by {})", (got - expected).abs())))
    }
}

/// A parsed date or time: with an offset, or local (naive), or a date alone.
#[derive(Debug, Clone, Copy)]
enum When {
    Instant(DateTime<FixedOffset>),
    Local(NaiveDateTime),
    Date(NaiveDate),
}

impl When {
    fn date(self) -> NaiveDate {
        match self {
            Self::Instant(instant) => instant.date_naive(),
            Self::Local(local) => local.date(),
            Self::Date(date) => date,
        }
    }
}

/// Parses RFC 3339, an ISO 8601 date-time without offset, a date, or (with `today`) a relative day.
fn parse_when(text: &str, today: Option<NaiveDate>) -> Option<When> {
    if let Some(today) = today {
        let relative = match text {
            "today" => Some(0),
            "tomorrow" => Some(1),
            "yesterday" => Some(-1),
            _ => text
                .strip_suffix('d')
                .filter(|rest| rest.starts_with(['+', '-']))
                .and_then(|rest| rest.parse::<i64>().ok()),
        };
        if let Some(days) = relative {
            let shifted = if days >= 0 {
                today.checked_add_days(Days::new(days.unsigned_abs()))
            } else {
                today.checked_sub_days(Days::new(days.unsigned_abs()))
            };
            return shifted.map(When::Date);
        }
    }
    if let Ok(instant) = DateTime::parse_from_rfc3339(text) {
        return Some(When::Instant(instant));
    }
    for format in ["%Y-%m-%dT%H:%M:%S%.f", "%Y-%m-%dT%H:%M", "%Y-%m-%d %H:%M:%S", "%Y-%m-%d %H:%M"] {
        if let Ok(local) = NaiveDateTime::parse_from_str(text, format) {
            return Some(When::Local(local));
        }
    }
    NaiveDate::parse_from_str(text, "%Y-%m-%d").ok().map(When::Date)
}

/// `datetime`: the dates (granularity `date`, the default when the expected value is a date) or
/// the times to the second. A time with an offset and one without are compared as written (the
/// local time), as are dates: the date of `2026-05-01T23:30:00-05:00` is 2026-05-01.
fn datetime(matcher: &Matcher, actual: &Value, today: NaiveDate) -> Checked {
    let text = matcher.value.as_ref().and_then(Value::as_str).unwrap_or("");
    let Some(expected) = parse_when(text, Some(today)) else {
        return Err(Mismatch(format!("the expected value `{text}` is not a date or time")));
    };
    let Some(got_text) = actual.as_str() else {
        return Err(Mismatch(format!("expected a date or time string, got {} ({})", short(actual), json_kind(actual))));
    };
    let Some(got) = parse_when(got_text, None) else {
        return Err(Mismatch(format!("{} is not a date or time (use RFC 3339 or YYYY-MM-DD)", short(actual))));
    };
    let granularity =
        matcher.granularity.as_deref().unwrap_or(if matches!(expected, When::Date(_)) { "date" } else { "second" });
    let resolved = if text == expected.date().to_string() || !matches!(expected, When::Date(_)) {
        format!("`{text}`")
    } else {
        format!("`{text}` ({})", expected.date())
    };
    if granularity == "date" {
        return if expected.date() == got.date() {
            Ok(())
        } else {
            Err(Mismatch(format!("expected the date {resolved}, got {} (date {})", short(actual), got.date())))
        };
    }
    let same = match (expected, got) {
        (When::Instant(want), When::Instant(have)) => want.timestamp() == have.timestamp(),
        (When::Instant(want), When::Local(have)) | (When::Local(have), When::Instant(want)) => {
            want.naive_local().and_utc().timestamp() == have.and_utc().timestamp()
        }
        (When::Local(want), When::Local(have)) => want.and_utc().timestamp() == have.and_utc().timestamp(),
        (When::Date(_), _) | (_, When::Date(_)) => false,
    };
    if same {
        Ok(())
    } else {
        Err(Mismatch(format!("expected the time {resolved} (to the second), got {}", short(actual))))
    }
}

/// `set`: an array with the same items in any order (each compared by `auto`, as many times).
fn set(expected: &Value, actual: &Value) -> Checked {
    let want = expected.as_array().map(Vec::as_slice).unwrap_or_default();
    let Some(have) = actual.as_array() else {
        return Err(Mismatch(format!(
            "expected an array (any order) of {}, got {} ({})",
            short(expected),
            short(actual),
            json_kind(actual)
        )));
    };
    let mut used = vec![false; have.len()];
    let mut missing = Vec::new();
    for item in want {
        match (0..have.len()).find(|&index| !used[index] && auto(item, &have[index]).is_ok()) {
            Some(index) => used[index] = true,
            None => missing.push(short(item)),
        }
    }
    let extra: Vec<String> = have.iter().zip(&used).filter(|(_, used)| !**used).map(|(item, _)| short(item)).collect();
    if missing.is_empty() && extra.is_empty() {
        return Ok(());
    }
    let mut parts = Vec::new();
    if !missing.is_empty() {
        parts.push(format!("missing {}", missing.join(", ")));
    }
    if !extra.is_empty() {
        parts.push(format!("unexpected {}", extra.join(", ")));
    }
    Err(Mismatch(format!("expected the items {} in any order: {}", short(expected), parts.join("; "))))
}

/// `subset`: an object with at least the listed keys, each matching (objects recursively, other
/// values by `auto`).
fn subset(expected: &Value, actual: &Value) -> Checked {
    let want = expected.as_object().cloned().unwrap_or_default();
    let Some(have) = actual.as_object() else {
        return Err(Mismatch(format!(
            "expected an object containing {}, got {} ({})",
            short(expected),
            short(actual),
            json_kind(actual)
        )));
    };
    for (key, value) in &want {
        let Some(got) = have.get(key) else {
            return Err(Mismatch(format!("the object has no key `{key}` (expected {})", short(value))));
        };
        let result = if value.is_object() { subset(value, got) } else { auto(value, got) };
        if let Err(why) = result {
            return Err(Mismatch(format!("at key `{key}`: {why}")));
        }
    }
    Ok(())
}

/// Lower case, spaces collapsed, BFCL's punctuation removed: the text `fuzzy` compares.
fn fuzzy_text(text: &str) -> String {
    use unicode_normalization::UnicodeNormalization;
    let cleaned: String = text
        .nfc()
        .map(|c| if matches!(c, ',' | '.' | '/' | '-' | '_' | '*' | '^' | '\'' | '"') { ' ' } else { c })
        .flat_map(char::to_lowercase)
        .collect();
    cleaned.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Similarity in [0, 1]: one minus the edit distance over the longer length.
pub(crate) fn similarity(a: &str, b: &str) -> f64 {
    let (a, b) = (fuzzy_text(a), fuzzy_text(b));
    let longest = a.chars().count().max(b.chars().count());
    if longest == 0 {
        return 1.0;
    }
    let distance = crate::suggest::edit_distance(&a, &b);
    1.0 - distance as f64 / longest as f64
}

fn fuzzy(expected: &Value, threshold: f64, actual: &Value) -> Checked {
    let want = expected.as_str().unwrap_or("");
    let Some(got) = actual.as_str() else {
        return Err(Mismatch(format!(
            "expected a string close to {}, got {} ({})",
            short(expected),
            short(actual),
            json_kind(actual)
        )));
    };
    let score = similarity(want, got);
    if score >= threshold {
        Ok(())
    } else {
        Err(Mismatch(format!(
            "{} is not close enough to {}: similarity {score:.2}, below {threshold}",
            short(actual),
            short(expected)
        )))
    }
}

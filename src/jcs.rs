//! RFC 8785 (JSON Canonicalization Scheme) text of a JSON value, and its SHA-256, for the
//! golden-set and per-case hashes.
//!
//! The crate builds `serde_json` with `preserve_order`, so `Value::to_string` keeps file order;
//! this writer sorts object keys by their UTF-16 code units, writes numbers as ECMAScript does
//! (`1.0` → `1`, `1e21` → `1e+21`, `0.000001` → `0.000001`, `1e-7` → `1e-7`) and escapes
//! strings as JCS prescribes (only `"`, `\` and control characters).

use serde_json::{Number, Value};
use sha2::{Digest, Sha256};

/// The canonical text of `value`.
pub(crate) fn canonical(value: &Value) -> String {
    let mut out = String::new();
    write(value, &mut out);
    out
}

/// `sha256:` and the lowercase hex SHA-256 of the canonical text of `value`.
pub(crate) fn hash(value: &Value) -> String {
    let digest = Sha256::digest(canonical(value).as_bytes());
    let hex: String = digest.iter().map(|byte| format!("{byte:02x}")).collect();
    format!("sha256:{hex}")
}

fn write(value: &Value, out: &mut String) {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(flag) => out.push_str(if *flag { "true" } else { "false" }),
        Value::Number(number) => out.push_str(&number_text(number)),
        Value::String(text) => write_string(text, out),
        Value::Array(items) => {
            out.push('[');
            for (index, item) in items.iter().enumerate() {
                if index > 0 {
                    out.push(',');
                }
                write(item, out);
            }
            out.push(']');
        }
        Value::Object(map) => {
            let mut entries: Vec<(&String, &Value)> = map.iter().collect();
            entries.sort_by(|(a, _), (b, _)| a.encode_utf16().cmp(b.encode_utf16()));
            out.push('{');
            for (index, (key, item)) in entries.into_iter().enumerate() {
                if index > 0 {
                    out.push(',');
                }
                write_string(key, out);
                out.push(':');
                write(item, out);
            }
            out.push('}');
        }
    }
}

/// A JSON string as JCS writes it: `\"`, `\\`, `\b`, `\f`, `\n`, `\r`, `\t`, `\u00xx` for the
/// other control characters, everything else as is.
fn write_string(text: &str, out: &mut String) {
    out.push('"');
    for character in text.chars() {
        match character {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            control if u32::from(control) < 0x20 => out.push_str(&format!("\\u{:04x}", u32::from(control))),
            other => out.push(other),
        }
    }
    out.push('"');
}

/// A number as ECMAScript's `Number.prototype.toString` writes it (integers stay exact).
fn number_text(number: &Number) -> String {
    if let Some(integer) = number.as_i64() {
        return integer.to_string();
    }
    if let Some(integer) = number.as_u64() {
        return integer.to_string();
    }
    es6(number.as_f64().unwrap_or(0.0))
}

/// ECMAScript number serialisation of a finite float (RFC 8785 §3.2.2.3).
fn es6(value: f64) -> String {
    if value == 0.0 {
        return "0".into();
    }
    if value < 0.0 {
        return format!("-{}", es6(-value));
    }
    // Rust's `{:e}` gives the shortest round-trip digits: `d.ddde±x`.
    let scientific = format!("{value:e}");
    let (mantissa, exponent) = scientific.split_once('e').unwrap_or((&scientific, "0"));
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    let exponent: i32 = exponent.parse().unwrap_or(0);
    let k = i32::try_from(digits.len()).unwrap_or(i32::MAX);
    let n = exponent + 1;
    if k <= n && n <= 21 {
        format!("{digits}{}", "0".repeat(usize::try_from(n - k).unwrap_or(0)))
    } else if 0 < n && n <= 21 {
        let (whole, fraction) = digits.split_at(usize::try_from(n).unwrap_or(0));
        format!("{whole}.{fraction}")
    } else if -6 < n && n <= 0 {
        format!("0.{}{digits}", "0".repeat(usize::try_from(-n).unwrap_or(0)))
    } else {
        let sign = if n - 1 < 0 { '-' } else { '+' };
        let (first, rest) = digits.split_at(1);
        let fraction = if rest.is_empty() { String::new() } else { format!(".{rest}") };
        format!("{first}{fraction}e{sign}{}", (n - 1).abs())
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn numbers_are_written_as_ecmascript_does() {
        let cases = [
            (0.0, "0"),
            (-0.0, "0"),
            (1.0, "1"),
            (-1.5, "-1.5"),
            (0.1, "0.1"),
            (1e21, "1e+21"),
            (1e20, "100000000000000000000"),
            (123456789012345680000.0, "123456789012345680000"),
            (0.000001, "0.000001"),
            (1e-7, "1e-7"),
            (4.5e-7, "4.5e-7"),
            (1.7976931348623157e308, "1.7976931348623157e+308"),
            (5e-324, "5e-324"),
            (333333333.3333333, "333333333.3333333"),
            (9007199254740994.0, "9007199254740994"),
        ];
        for (value, text) in cases {
            assert_eq!(es6(value), text, "{value:?}");
        }
        assert_eq!(canonical(&json!([1, 1.0, -3, 18446744073709551615_u64])), "[1,1,-3,18446744073709551615]");
    }

    #[test]
    fn keys_are_sorted_by_utf16_code_units_and_strings_escaped() {
        // The RFC 8785 §3.2.3 example: U+1F600 (surrogate 0xD83D) sorts after U+20AC in UTF-16.
        let value = json!({"\u{20ac}": 1, "\r": 2, "\u{1f600}": 3, "1": 4, "\u{80}": 5, "\u{f6}": 6});
        assert_eq!(canonical(&value), "{\"\\r\":2,\"1\":4,\"\u{80}\":5,\"\u{f6}\":6,\"\u{20ac}\":1,\"\u{1f600}\":3}");
        assert_eq!(canonical(&json!("a\"b\\c\u{1f}\u{7f}é")), "\"a\\\"b\\\\c\\u001f\u{7f}é\"");
        assert_eq!(canonical(&json!({"b": [true, null], "a": {}})), "{\"a\":{},\"b\":[true,null]}");
        assert!(hash(&json!({})).starts_with("sha256:") && hash(&json!({})).len() == 71);
    }
}

//! The entries of list results (`tools/list` → `result.tools[]`, `prompts/list`,
//! `resources/list`, `resources/templates/list`) kept as JSON text and parsed one at a time.
//!
//! A parsed [`Value`] costs about ten times its JSON text (an 18 MB list of 80,000 tools
//! takes some 120 MB as `Value`s), so a list answer is read lean: the message is parsed except
//! for the entries array, whose items stay as byte ranges of the text they came in
//! ([`read_message`]); whoever needs an entry parses it then and drops it after.

use std::ops::Range;
use std::sync::Arc;

use serde::de::{Deserialize, Deserializer, MapAccess, Visitor};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

/// The key of the entries array in the result of the list method `method`, if it is one.
pub(crate) fn list_key(method: &str) -> Option<&'static str> {
    match method {
        "tools/list" => Some("tools"),
        "prompts/list" => Some("prompts"),
        "resources/list" => Some("resources"),
        "resources/templates/list" => Some("resourceTemplates"),
        _ => None,
    }
}

/// One JSON text and the byte ranges of the entries in it.
#[derive(Debug, Clone)]
struct Page {
    text: Arc<String>,
    spans: Vec<Range<usize>>,
}

/// Listed entries, in order, over one or more pages. Each entry is valid JSON (checked when
/// read), so parsing one again cannot fail. Cloning shares the text.
#[derive(Debug, Clone, Default)]
pub(crate) struct Entries {
    pages: Vec<Page>,
}

impl Entries {
    /// Entries serialised from `values` (compact JSON, one text).
    pub(crate) fn from_values<'a>(values: impl IntoIterator<Item = &'a Value>) -> Self {
        let mut text = String::from("[");
        let mut spans = Vec::new();
        for value in values {
            if !spans.is_empty() {
                text.push(',');
            }
            let start = text.len();
            text.push_str(&value.to_string());
            spans.push(start..text.len());
        }
        text.push(']');
        if spans.is_empty() {
            return Self::default();
        }
        Self { pages: vec![Page { text: Arc::new(text), spans }] }
    }

    /// How many entries.
    pub(crate) fn len(&self) -> usize {
        self.pages.iter().map(|page| page.spans.len()).sum()
    }

    /// True when there are none.
    pub(crate) fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The JSON text of each entry, in order.
    pub(crate) fn texts(&self) -> impl Iterator<Item = &str> + '_ {
        self.pages.iter().flat_map(|page| page.spans.iter().map(|span| &page.text[span.clone()]))
    }

    /// Each entry parsed, in order (one at a time: only the current one is held).
    pub(crate) fn iter(&self) -> impl Iterator<Item = Value> + '_ {
        self.texts().map(parse)
    }

    /// The first entry, parsed.
    pub(crate) fn first(&self) -> Option<Value> {
        self.iter().next()
    }

    /// Appends the entries of `other` (the next page).
    pub(crate) fn append(&mut self, other: Entries) {
        self.pages.extend(other.pages);
    }

    /// Keeps only the entries `keep` accepts; the text of those is copied out, so the pages
    /// they came from are freed once nothing else holds them.
    pub(crate) fn retain(&mut self, mut keep: impl FnMut(&Value) -> bool) {
        let kept: Vec<Value> = self.iter().filter(|value| keep(value)).collect();
        *self = Self::from_values(&kept);
    }

    /// All entries as one JSON array.
    pub(crate) fn to_value(&self) -> Value {
        Value::Array(self.iter().collect())
    }
}

/// Parses an entry's text, valid JSON by construction.
fn parse(text: &str) -> Value {
    // Every span was checked to parse when it was read; Null is unreachable.
    serde_json::from_str(text).unwrap_or(Value::Null)
}

/// An object's members, each left unparsed, in order.
struct Members<'a>(Vec<(String, &'a RawValue)>);

impl<'de: 'a, 'a> Deserialize<'de> for Members<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct MembersVisitor<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for MembersVisitor<'a> {
            type Value = Members<'a>;
            fn expecting(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                formatter.write_str("a JSON object")
            }
            fn visit_map<M: MapAccess<'de>>(self, mut map: M) -> Result<Self::Value, M::Error> {
                let mut members = Vec::new();
                while let Some((key, value)) = map.next_entry::<String, &'de RawValue>()? {
                    members.push((key, value));
                }
                Ok(Members(members))
            }
        }
        deserializer.deserialize_map(MembersVisitor(std::marker::PhantomData))
    }
}

/// Reads one JSON message from `text`. With `key` (see [`list_key`]), when the message is an
/// object whose `result` is an object holding an array under `key`, that array is taken out of
/// the message (the result has no `key` then) and returned as [`Entries`] over `text`. Anything
/// else — another shape, no `key` — is read whole, as `serde_json::from_str` would. The error
/// is the one a whole read gives.
///
/// A message (read whole), or one entry or other member (read lean), beyond a bound of
/// [`super::limits`] is not parsed: the error is then [`Unread::exceeds`].
pub(crate) fn read_message(text: String, key: Option<&str>) -> Result<(Value, Option<Entries>), Unread> {
    let whole = |text: String| {
        if let Err(why) = super::limits::check(text.as_bytes()) {
            let error = <serde_json::Error as serde::de::Error>::custom(why);
            return Err(Unread { error, text, exceeds: Some(why.to_string()) });
        }
        match serde_json::from_str(&text) {
            Ok(value) => Ok((value, None)),
            Err(error) => Err(Unread { error, text, exceeds: None }),
        }
    };
    let Some(key) = key else { return whole(text) };
    let lean = lean(&text, key);
    match lean {
        Some((message, spans)) => {
            let entries = spans.map(|spans| match spans.is_empty() {
                true => Entries::default(),
                false => Entries { pages: vec![Page { text: Arc::new(text), spans }] },
            });
            Ok((message, entries))
        }
        // Not an object with such a result, or not JSON at all: a whole read says which.
        None => whole(text),
    }
}

/// Text that is not one JSON value: why, and the text (handed back for the record).
#[derive(Debug)]
pub(crate) struct Unread {
    /// The parse error of a whole read.
    pub error: serde_json::Error,
    /// The text as it came.
    pub text: String,
    /// The bound of [`super::limits`] the text exceeds, in words, when that is why it was not
    /// parsed (`error` then says the same).
    pub exceeds: Option<String>,
}

/// Takes `result[key]` out of a message read whole, when it is an array, as [`Entries`] (what
/// [`read_message`] gives for text).
pub(crate) fn split(message: &mut Value, key: &str) -> Option<Entries> {
    let result = message.get_mut("result")?.as_object_mut()?;
    if !result.get(key).is_some_and(Value::is_array) {
        return None;
    }
    let Some(Value::Array(items)) = result.shift_remove(key) else { return None };
    Some(Entries::from_values(&items))
}

/// Puts `entries` back into `message` as `result[key]` (for a message that turned out not to be
/// the answer that keeps them apart).
pub(crate) fn restore(message: &mut Value, key: &str, entries: Entries) {
    if let Some(result) = message.get_mut("result").and_then(Value::as_object_mut) {
        result.insert(key.to_owned(), entries.to_value());
    }
}

type Lean = (Value, Option<Vec<Range<usize>>>);

/// The message with `result[key]` taken out and the spans of its items; `None` when the text
/// is not an object whose members all parse (the caller reads it whole then). The spans are
/// `None` when there is no `result` object with an array under `key`.
fn lean(text: &str, key: &str) -> Option<Lean> {
    let Members(members) = serde_json::from_str::<Members<'_>>(text).ok()?;
    let mut message = Map::new();
    let mut spans = None;
    for (name, raw) in members {
        if name == "result" && raw.get().starts_with('{') {
            let Members(fields) = serde_json::from_str::<Members<'_>>(raw.get()).ok()?;
            let mut result = Map::new();
            // A later `result` replaces an earlier one, as in a whole read.
            spans = None;
            for (field, raw) in fields {
                if field == key && raw.get().starts_with('[') {
                    let items: Vec<&RawValue> = serde_json::from_str(raw.get()).ok()?;
                    let mut ranges = Vec::with_capacity(items.len());
                    for item in items {
                        // Each entry must read as a whole value later (escapes included),
                        // within the bounds; else the whole read says what is wrong.
                        super::limits::check(item.get().as_bytes()).ok()?;
                        serde_json::from_str::<Value>(item.get()).ok()?;
                        let start = item.get().as_ptr() as usize - text.as_ptr() as usize;
                        ranges.push(start..start + item.get().len());
                    }
                    result.shift_remove(&field);
                    spans = Some(ranges);
                } else {
                    if field == key {
                        spans = None;
                    }
                    super::limits::check(raw.get().as_bytes()).ok()?;
                    result.insert(field, serde_json::from_str(raw.get()).ok()?);
                }
            }
            message.insert(name, Value::Object(result));
        } else {
            if name == "result" {
                spans = None;
            }
            super::limits::check(raw.get().as_bytes()).ok()?;
            message.insert(name, serde_json::from_str(raw.get()).ok()?);
        }
    }
    Some((Value::Object(message), spans))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn read(text: &str) -> (Value, Option<Entries>) {
        read_message(text.to_owned(), Some("tools")).expect("valid JSON")
    }

    #[test]
    fn a_list_result_keeps_its_entries_as_text_and_the_rest_parsed() {
        let (message, entries) = read(
            r#"{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"a"}, {"name":"b","x":[1,2]}],"nextCursor":"c"}}"#,
        );
        assert_eq!(message, json!({"jsonrpc": "2.0", "id": 1, "result": {"nextCursor": "c"}}));
        let entries = entries.expect("entries");
        assert_eq!(entries.texts().collect::<Vec<_>>(), [r#"{"name":"a"}"#, r#"{"name":"b","x":[1,2]}"#]);
        assert_eq!(entries.to_value(), json!([{"name": "a"}, {"name": "b", "x": [1, 2]}]));
    }

    #[test]
    fn member_order_is_kept() {
        let (message, _) = read(r#"{"result":{"z":1,"tools":[],"a":2},"id":3,"jsonrpc":"2.0"}"#);
        assert_eq!(message.to_string(), r#"{"result":{"z":1,"a":2},"id":3,"jsonrpc":"2.0"}"#);
    }

    #[test]
    fn an_empty_array_is_entries_none_of_them() {
        let (_, entries) = read(r#"{"id":1,"result":{"tools":[]}}"#);
        assert!(entries.expect("an empty list is still a list").is_empty());
    }

    #[test]
    fn anything_else_is_read_whole() {
        for text in [
            r#"{"id":1,"result":{"tools":{"not":"an array"}}}"#,
            r#"{"id":1,"error":{"code":-32601,"message":"no"}}"#,
            r#"{"id":1,"result":"text"}"#,
            r#"[{"id":1,"result":{"tools":[]}}]"#,
            r#"7"#,
        ] {
            let (message, entries) = read(text);
            assert_eq!(message, serde_json::from_str::<Value>(text).expect("valid"), "{text}");
            assert!(entries.is_none(), "{text}");
        }
    }

    #[test]
    fn invalid_json_gives_the_error_of_a_whole_read() {
        for text in [r#"{"id":1,"result":{"tools":[{"name":"a"}"#, "{'jsonrpc': '2.0'}", r#"{"a":"\ud800"}"#] {
            let lean = read_message(text.to_owned(), Some("tools")).expect_err("invalid").error.to_string();
            let whole = serde_json::from_str::<Value>(text).expect_err("invalid").to_string();
            assert_eq!(lean, whole, "{text}");
        }
    }

    #[test]
    fn an_entry_that_would_not_parse_makes_the_message_read_whole() {
        // A lone surrogate passes a syntax skim but not a full read: the whole read decides.
        let text = r#"{"id":1,"result":{"tools":[{"name":"\ud800"}]}}"#;
        assert_eq!(
            read_message(text.to_owned(), Some("tools")).map_err(|unread| unread.error.to_string()).err(),
            serde_json::from_str::<Value>(text).map_err(|error| error.to_string()).err()
        );
    }

    #[test]
    fn a_list_of_many_small_entries_is_read_but_one_entry_over_the_bounds_is_not() {
        let entry = r#"{"name":"t","inputSchema":{"type":"object","properties":{"q":{"type":"string"}}}}"#;
        let many = vec![entry; crate::mcp::limits::MAX_JSON_VALUES / 2].join(",");
        let (_, entries) = read(&format!(r#"{{"id":1,"result":{{"tools":[{many}]}}}}"#));
        assert_eq!(entries.expect("entries").len(), crate::mcp::limits::MAX_JSON_VALUES / 2, "the bound is per entry");
        let deep = format!("{}{}", "[".repeat(200), "]".repeat(200));
        let text = format!(r#"{{"id":1,"result":{{"tools":[{{"name":"deep","inputSchema":{deep}}}]}}}}"#);
        let unread = read_message(text, Some("tools")).expect_err("too deep");
        assert!(unread.exceeds.expect("a bound").contains("204 levels deep, deeper than the 127 levels"));
    }

    #[test]
    fn a_later_result_replaces_an_earlier_one_as_in_a_whole_read() {
        let (message, entries) = read(r#"{"id":1,"result":{"tools":[{"name":"a"}]},"result":{"x":1}}"#);
        assert_eq!(message, json!({"id": 1, "result": {"x": 1}}));
        assert!(entries.is_none());
    }

    #[test]
    fn retain_copies_out_what_it_keeps() {
        let (_, entries) = read(r#"{"result":{"tools":[{"name":"a"},{"name":"b"},{"name":"c"}]}}"#);
        let mut entries = entries.expect("entries");
        entries.retain(|tool| tool["name"] != "b");
        assert_eq!(entries.to_value(), json!([{"name": "a"}, {"name": "c"}]));
        assert_eq!(entries.first(), Some(json!({"name": "a"})));
        entries.retain(|_| false);
        assert!(entries.is_empty());
    }

    #[test]
    fn pages_append_in_order() {
        let mut all = Entries::from_values(&[json!(1), json!(2)]);
        all.append(Entries::from_values(&[json!(3)]));
        assert_eq!(all.len(), 3);
        assert_eq!(all.to_value(), json!([1, 2, 3]));
    }
}

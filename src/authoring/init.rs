//! `mcp-eval golden init`: a starter golden set written from a server's `tools/list`.
//!
//! Every tool gets one positive case (an id derived from its name, a prompt built from its
//! title, description and required arguments, `expect_tool`, and `expect_args` holding
//! schema-valid example values of the required arguments), and a few negative cases of small
//! talk that must not call any tool. Every case is marked as a draft to edit. An argument that
//! names a thing on the server (`id`, `todo_id`, `noteId`, …) gets a made-up value per tool that
//! likely names nothing there ([`made_up_ids`]), never the same `1` for every tool: a call that
//! `golden check --execute` repeats must not act on a real record, nor on what another case's
//! call just changed; its case says to put a real one. The pure parts
//! ([`example_value`], [`case_id`], [`yaml_string`], [`render`]) are separate from the command
//! ([`init`]), which lists the tools, writes the file and loads it back to print its hash.
//!
//! With `--model`, [`super::init_model`] asks a model for each tool's prompt and arguments, and
//! [`render_with`] writes its drafts where they passed the checks and the template's elsewhere;
//! each case's comment then says which wrote it.

use std::collections::HashSet;
use std::io::Write as _;
use std::path::Path;

use serde_json::{Map, Value, json};

use crate::error::{Kind, UserError};
use crate::mcp::tools::{ToolSurface, ToolView};
use crate::providers::schema::{ArgumentValidator, Validation};
use crate::verdict::{ExitStatus, Met};

use super::init_model::{Authored, Authoring, Drafted, ModelPlan, draft, one_line};

/// The default path of the written set.
pub(crate) const DEFAULT_OUT: &str = "golden/tasks.yaml";

/// The comment above every generated case.
const DRAFT: &str = "# draft: edit the prompt and expectations";

/// How deep [`example_value`] follows subschemas (and `$ref`s) before giving up on a value.
const MAX_DEPTH: usize = 16;

/// The longest case id.
const MAX_ID: usize = 64;

/// The negative cases: (id, prompt).
const NEGATIVES: &[(&str, &str)] = &[
    ("small-talk-greeting", "Hi! How are you today?"),
    ("small-talk-thanks", "Thanks, that's all for now."),
    ("small-talk-poem", "Write a two-line poem about the sea."),
];

/// The first made-up integer id ([`made_up_ids`]): the first tool's is this, the next tool's one
/// more, and so on, far above the ids a test deployment's first records get.
const MADE_UP_ID: i64 = 990_001;
/// The prefix of a made-up string id (`draft-id-990001`).
const MADE_UP_TEXT: &str = "draft-id-";
/// The prefix of a made-up UUID (`00000000-0000-4000-8000-000000990001`).
const MADE_UP_UUID: &str = "00000000-0000-4000-8000-";

/// Words in a tool name that suggest it deletes something.
const DELETION_WORDS: &[&str] = &["delete", "remove", "drop", "destroy", "purge", "erase", "wipe", "truncate", "kill"];

/// What [`render`] wrote, for the command's messages.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Rendered {
    /// The YAML text of the set.
    pub text: String,
    /// Tools whose example arguments did not validate against their schema (their case has
    /// `expect_tool` but no `expect_args`), with the reason.
    pub dropped_args: Vec<(String, String)>,
    /// Tools whose case carries the destructive-tool warning.
    pub destructive: Vec<String>,
    /// Tools annotated neither `readOnlyHint: true` nor `destructiveHint: false` (nor
    /// `destructiveHint: true`): `golden check --execute` presumes them destructive, as MCP's
    /// defaults say, and skips their calls.
    pub presumed_destructive: Vec<String>,
    /// Tools whose case has made-up ids to edit, with the arguments that hold them.
    pub made_up: Vec<(String, Vec<String>)>,
    /// Tools left out because their name is empty.
    pub skipped: usize,
    /// With a model: the cases it wrote.
    pub by_model: usize,
    /// With a model: the tools whose case the template wrote instead, with the reason.
    pub by_template: Vec<(String, String)>,
}

/// A schema-valid example value for `schema` (best effort: the caller validates it). `enum` →
/// its first value, then `const`, `default`, `examples[0]`; otherwise by `type` (honouring string
/// `format` and `minLength`/`maxLength`, number bounds, `minItems`, and an object's required
/// properties); a local `$ref` is followed; `anyOf`/`oneOf` take their first branch. Depth-bounded.
pub(crate) fn example_value(schema: &Value) -> Value {
    example(schema, schema, None, 0)
}

/// [`example_value`] inside the document `root` (for `$ref`s), for a property called `name`.
fn example(schema: &Value, root: &Value, name: Option<&str>, depth: usize) -> Value {
    if depth > MAX_DEPTH {
        return Value::Null;
    }
    let object = match schema {
        Value::Object(object) => object,
        Value::Bool(false) => return Value::Null,
        _ => return string_example(&Map::new(), name),
    };
    if let Some(values) = object.get("enum").and_then(Value::as_array)
        && let Some(first) = values.first()
    {
        return first.clone();
    }
    for key in ["const", "default"] {
        if let Some(value) = object.get(key) {
            return value.clone();
        }
    }
    if let Some(first) = object.get("examples").and_then(Value::as_array).and_then(|examples| examples.first()) {
        return first.clone();
    }
    if let Some(reference) = object.get("$ref").and_then(Value::as_str) {
        let target = reference
            .strip_prefix('#')
            .and_then(|pointer| if pointer.is_empty() { Some(root) } else { root.pointer(&percent_decode(pointer)) });
        if let Some(target) = target {
            return example(target, root, name, depth + 1);
        }
    }
    for key in ["anyOf", "oneOf", "allOf"] {
        if object.get("type").is_none()
            && let Some(first) = object.get(key).and_then(Value::as_array).and_then(|branches| branches.first())
        {
            return example(first, root, name, depth + 1);
        }
    }
    let kind = match object.get("type") {
        Some(Value::String(kind)) => kind.as_str(),
        Some(Value::Array(kinds)) => {
            kinds.iter().filter_map(Value::as_str).find(|kind| *kind != "null").unwrap_or("null")
        }
        _ if object.contains_key("properties") || object.contains_key("required") => "object",
        _ if object.contains_key("items") || object.contains_key("prefixItems") => "array",
        _ if ["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"].iter().any(|k| object.contains_key(*k)) => {
            "number"
        }
        _ => "string",
    };
    match kind {
        "null" => Value::Null,
        "boolean" => Value::Bool(true),
        "integer" => integer_example(object),
        "number" => number_example(object),
        "array" => array_example(object, root, name, depth),
        "object" => object_example(object, root, depth),
        _ => string_example(object, name),
    }
}

/// `%XX` escapes of a JSON pointer in a URI fragment, decoded.
fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut index = 0;
    while index < bytes.len() {
        if bytes[index] == b'%'
            && let Some(hex) = text.get(index + 1..index + 3)
            && let Ok(byte) = u8::from_str_radix(hex, 16)
        {
            out.push(byte);
            index += 3;
            continue;
        }
        out.push(bytes[index]);
        index += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn string_example(object: &Map<String, Value>, name: Option<&str>) -> Value {
    let format = object.get("format").and_then(Value::as_str).unwrap_or_default();
    let mut text = match format {
        "date" => "2026-01-15".to_owned(),
        "date-time" => "2026-01-15T09:00:00Z".to_owned(),
        "time" => "09:00:00Z".to_owned(),
        "uri" | "url" | "iri" | "uri-reference" | "iri-reference" => "https://example.com/".to_owned(),
        "email" | "idn-email" => "user@example.com".to_owned(),
        "uuid" => "123e4567-e89b-12d3-a456-426614174000".to_owned(),
        "hostname" | "idn-hostname" => "example.com".to_owned(),
        "ipv4" => "192.0.2.1".to_owned(),
        "ipv6" => "2001:db8::1".to_owned(),
        _ => name_example(name).to_owned(),
    };
    let count = |text: &str| text.chars().count();
    if let Some(min) = object.get("minLength").and_then(Value::as_u64) {
        let min = usize::try_from(min).unwrap_or(usize::MAX).min(4096);
        while count(&text) < min {
            text.push('x');
        }
    }
    if let Some(max) = object.get("maxLength").and_then(Value::as_u64) {
        let max = usize::try_from(max).unwrap_or(usize::MAX);
        if count(&text) > max {
            text = text.chars().take(max).collect();
        }
    }
    Value::String(text)
}

/// A plausible string for a property by its name (else `example`).
fn name_example(name: Option<&str>) -> &'static str {
    let name = name.unwrap_or_default().to_ascii_lowercase();
    let table: &[(&[&str], &str)] = &[
        (&["timezone", "time_zone", "tz", "source_timezone", "from_timezone"], "Europe/Paris"),
        (&["target_timezone", "to_timezone"], "America/New_York"),
        (&["city", "location", "place"], "Paris"),
        (&["country"], "France"),
        (&["language", "lang", "locale"], "en"),
        (&["message", "text", "content", "prompt", "input"], "hello"),
        (&["query", "q", "search", "keyword", "keywords"], "example"),
        (&["name", "username", "user"], "alice"),
        (&["url", "uri", "link"], "https://example.com/"),
        (&["email"], "user@example.com"),
        (&["time"], "09:00"),
    ];
    table.iter().find(|(names, _)| names.contains(&name.as_str())).map_or("example", |(_, value)| value)
}

/// The inclusive bounds of a number schema (an exclusive bound moved in by `step`).
fn bounds(object: &Map<String, Value>, step: f64) -> (Option<f64>, Option<f64>) {
    let get = |key: &str| object.get(key).and_then(Value::as_f64);
    let exclusive = |key: &str| match object.get(key) {
        Some(Value::Bool(true)) => None, // draft-04 form: applies to minimum/maximum below
        _ => get(key),
    };
    let draft4 = |key: &str| object.get(key) == Some(&Value::Bool(true));
    let mut low = get("minimum").map(|min| if draft4("exclusiveMinimum") { min + step } else { min });
    if let Some(min) = exclusive("exclusiveMinimum") {
        low = Some(low.map_or(min + step, |low: f64| low.max(min + step)));
    }
    let mut high = get("maximum").map(|max| if draft4("exclusiveMaximum") { max - step } else { max });
    if let Some(max) = exclusive("exclusiveMaximum") {
        high = Some(high.map_or(max - step, |high: f64| high.min(max - step)));
    }
    (low, high)
}

fn integer_example(object: &Map<String, Value>) -> Value {
    let (low, high) = bounds(object, 1.0);
    let mut value = 1.0_f64;
    if let Some(low) = low
        && value < low.ceil()
    {
        value = low.ceil();
    }
    if let Some(high) = high
        && value > high.floor()
    {
        value = high.floor();
    }
    if let Some(step) = object.get("multipleOf").and_then(Value::as_f64)
        && step > 0.0
        && step.fract() == 0.0
    {
        let up = (value / step).ceil() * step;
        value = if high.is_some_and(|high| up > high) { (value / step).floor() * step } else { up };
    }
    // Clamped to the range an i64 holds exactly (the cast saturates anyway).
    #[allow(clippy::cast_possible_truncation, reason = "an integral value within the i64 range")]
    let integer = value.clamp(-9.0e15, 9.0e15) as i64;
    json!(integer)
}

fn number_example(object: &Map<String, Value>) -> Value {
    // Exclusive bounds are kept as they are here, and stepped inside below.
    let (low, high) = bounds(object, 0.0);
    let exclusive_low = object.get("exclusiveMinimum").and_then(Value::as_f64);
    let exclusive_high = object.get("exclusiveMaximum").and_then(Value::as_f64);
    let mut value = 1.0_f64;
    if let Some(low) = low
        && value < low
    {
        value = low;
    }
    if let Some(high) = high
        && value > high
    {
        value = high;
    }
    if exclusive_low == Some(value) || exclusive_high == Some(value) {
        value = match (low, high) {
            (Some(low), Some(high)) => (low + high) / 2.0,
            (Some(low), None) => low + 1.0,
            (None, Some(high)) => high - 1.0,
            (None, None) => value,
        };
    }
    if value.fract() == 0.0 && value.abs() < 9.0e15 {
        #[allow(clippy::cast_possible_truncation, reason = "an integral value within the i64 range")]
        return json!(value as i64);
    }
    serde_json::Number::from_f64(value).map_or(json!(1), Value::Number)
}

fn array_example(object: &Map<String, Value>, root: &Value, name: Option<&str>, depth: usize) -> Value {
    let min = object.get("minItems").and_then(Value::as_u64).unwrap_or(0);
    let max = object.get("maxItems").and_then(Value::as_u64).unwrap_or(u64::MAX);
    let count = usize::try_from(min.max(1).min(max).min(16)).unwrap_or(1);
    let prefix = object.get("prefixItems").and_then(Value::as_array);
    let items = object.get("items").filter(|items| items.is_object() || items.is_boolean());
    let mut out = Vec::new();
    for index in 0..count {
        let schema = prefix.and_then(|prefix| prefix.get(index)).or(items);
        let value = match schema {
            Some(schema) => example(schema, root, name, depth + 1),
            None => Value::String(name_example(name).to_owned()),
        };
        out.push(value);
    }
    if object.get("uniqueItems") == Some(&Value::Bool(true)) {
        let mut seen = Vec::new();
        out.retain(|value| {
            let fresh = !seen.contains(value);
            seen.push(value.clone());
            fresh
        });
    }
    Value::Array(out)
}

fn object_example(object: &Map<String, Value>, root: &Value, depth: usize) -> Value {
    let properties = object.get("properties").and_then(Value::as_object);
    let mut out = Map::new();
    for name in object.get("required").and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_str) {
        let value = match properties.and_then(|properties| properties.get(name)) {
            Some(schema) => example(schema, root, Some(name), depth + 1),
            None => Value::String(name_example(Some(name)).to_owned()),
        };
        out.insert(name.to_owned(), value);
    }
    Value::Object(out)
}

/// A case id for `name` (lowercase letters, digits, `_`, `.`, `-`; starting with a letter or
/// digit; at most 64), not yet in `used`; it is added to `used`.
pub(crate) fn case_id(name: &str, used: &mut HashSet<String>) -> String {
    let mut base = String::new();
    let mut previous_lower = false;
    for c in name.chars() {
        if c.is_ascii_uppercase() {
            if previous_lower {
                base.push('-');
            }
            base.push(c.to_ascii_lowercase());
            previous_lower = false;
        } else if c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '.' {
            base.push(c);
            previous_lower = c.is_ascii_lowercase() || c.is_ascii_digit();
        } else {
            if !base.ends_with('-') {
                base.push('-');
            }
            previous_lower = false;
        }
    }
    let base = base.trim_start_matches(['-', '_', '.']).trim_end_matches('-');
    let base = if base.is_empty() { "tool" } else { base };
    let mut counter = 1;
    loop {
        let suffix = if counter == 1 { String::new() } else { format!("-{counter}") };
        let room = MAX_ID - suffix.len();
        let stem: String = base.chars().take(room).collect();
        let id = format!("{stem}{suffix}");
        if used.insert(id.clone()) {
            return id;
        }
        counter += 1;
    }
}

/// `text` as a YAML double-quoted scalar: `"` and `\` escaped, line breaks and every character
/// YAML does not allow printed (controls, DEL, C1, U+FEFF, U+FFFE/U+FFFF, U+2028/U+2029) as
/// escapes.
pub(crate) fn yaml_string(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20
                || (0x7f..=0x9f).contains(&(c as u32))
                || matches!(c, '\u{feff}' | '\u{fffe}' | '\u{ffff}' | '\u{2028}' | '\u{2029}') =>
            {
                out.push_str(&format!("\\u{:04x}", c as u32));
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// `value` as YAML flow text (JSON shape, strings through [`yaml_string`]).
fn yaml_flow(value: &Value) -> String {
    match value {
        Value::Null => "null".into(),
        Value::Bool(flag) => flag.to_string(),
        Value::Number(number) => number.to_string(),
        Value::String(text) => yaml_string(text),
        Value::Array(items) => format!("[{}]", items.iter().map(yaml_flow).collect::<Vec<_>>().join(", ")),
        Value::Object(entries) => format!(
            "{{{}}}",
            entries
                .iter()
                .map(|(key, value)| format!("{}: {}", yaml_string(key), yaml_flow(value)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// An argument value as a prompt shows it (strings bare, the rest as JSON).
fn prompt_value(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

/// True when the tool may change or delete things for real: annotated `destructiveHint: true`,
/// or not annotated read-only and named like a deletion.
fn destructive(tool: &ToolView) -> bool {
    let annotation = |key: &str| tool.annotations.as_ref().and_then(|annotations| annotations.get(key));
    if annotation("destructiveHint") == Some(&Value::Bool(true)) {
        return true;
    }
    if tool.read_only() {
        return false;
    }
    let name = tool.name.to_ascii_lowercase();
    DELETION_WORDS.iter().any(|word| name.contains(word))
}

/// The first sentence of a description, on one line, at most 200 characters.
fn first_sentence(description: &str) -> String {
    let flat = description.split_whitespace().collect::<Vec<_>>().join(" ");
    let end = flat.find(". ").map_or(flat.len(), |index| index + 1);
    let sentence = flat[..end].trim_end_matches('.');
    crate::text::clip(sentence, 200)
}

/// The prompt of a tool's positive case: "Use the TITLE tool (what it does) with ARG VALUE and …".
fn prompt(tool: &ToolView, args: Option<&Map<String, Value>>) -> String {
    let label = tool.title.as_deref().map(str::trim).filter(|title| !title.is_empty()).unwrap_or(&tool.name);
    // "Echo Tool" is not made "the Echo Tool tool".
    let noun = if label.to_lowercase().ends_with(" tool") { "" } else { " tool" };
    let mut text = format!("Use the {label}{noun}");
    if let Some(description) = tool.description.as_deref().map(first_sentence).filter(|text| !text.is_empty()) {
        // "Returns a short text" → "returns a short text" (an acronym keeps its case).
        let mut chars = description.chars();
        let lowered = match (chars.next(), chars.next()) {
            (Some(first), Some(second)) if first.is_uppercase() && !second.is_uppercase() => {
                first.to_lowercase().chain(description.chars().skip(1)).collect()
            }
            _ => description,
        };
        text.push_str(&format!(" ({lowered})"));
    }
    if let Some(args) = args.filter(|args| !args.is_empty()) {
        let parts: Vec<String> = args.iter().map(|(name, value)| format!("{name} {}", prompt_value(value))).collect();
        text.push_str(" with ");
        text.push_str(&parts.join(" and "));
    }
    text.push('.');
    text
}

/// The YAML text of a starter set for these tools (pure; see the module documentation).
#[cfg(test)]
pub(crate) fn render(surface: &ToolSurface) -> Rendered {
    render_with(surface, None)
}

/// [`render`], with the model's drafts where `authoring` has them: a tool the model wrote gets
/// its prompt and its arguments as `expect_args` (already checked against the schema); any
/// other tool gets the template's prompt and arguments. With `authoring`, every case's comment
/// also says who wrote it (and why the template did), and the model's negative prompts follow
/// the small-talk ones.
pub(crate) fn render_with(surface: &ToolSurface, authoring: Option<&Authoring>) -> Rendered {
    let mut rendered = Rendered::default();
    let mut used = HashSet::new();
    let mut out = String::from(
        "# A starter golden set written by `mcp-eval golden init` from the server's tools/list.\n\
         # Every case is a draft: edit the prompts and expectations before trusting a score.\n\
         # Layer 1 calls the server's tools for real: point it at a test deployment.\n",
    );
    if let Some(authoring) = authoring {
        out.push_str(&format!(
            "# Prompts and arguments marked as such were written by the model {}; the rest by the template.\n",
            one_line(&authoring.model, 200)
        ));
    }
    out.push_str("version: 1\n\ncases:\n");
    // Negative ids are reserved after the tools' ids, so a tool keeps its own name.
    let mut cases = Vec::new();
    for (index, tool) in surface.tools.iter().enumerate() {
        if tool.name.trim().is_empty() {
            rendered.skipped += 1;
            continue;
        }
        let id = case_id(&tool.name, &mut used);
        let by_model = authoring.and_then(|authoring| authoring.tools.get(index));
        let mut author = String::new();
        let made_up_before = rendered.made_up.len();
        let (prompt_text, args) = match (authoring, by_model) {
            (Some(authoring), Some(Authored::Model { prompt, args })) => {
                rendered.by_model += 1;
                let what = if args.is_empty() {
                    "the prompt (no arguments)"
                } else {
                    "the prompt and the arguments (they satisfy the tool's inputSchema)"
                };
                author = format!("  # written by the model {}: {what}\n", one_line(&authoring.model, 200));
                (prompt.clone(), Some(args.clone()))
            }
            (authoring, by_model) => {
                if authoring.is_some() {
                    let reason = match by_model {
                        Some(Authored::Template { reason }) => reason.as_str(),
                        _ => "the model was not asked",
                    };
                    rendered.by_template.push((tool.name.clone(), reason.to_owned()));
                    author = format!("  # written by the template: {}\n", one_line(reason, 300));
                }
                let args = template_args(tool, index, &mut rendered);
                (prompt(tool, args.as_ref()), args)
            }
        };
        let mut case = String::new();
        if super::execute::destructive(tool).is_some()
            && tool.annotations.as_ref().and_then(|annotations| annotations.get("destructiveHint"))
                != Some(&Value::Bool(true))
        {
            rendered.presumed_destructive.push(tool.name.clone());
        }
        if destructive(tool) {
            rendered.destructive.push(tool.name.clone());
            case.push_str(
                "  # warning: this tool may change or delete data. Layer 1 calls tools for real:\n  \
                 # point mcp-eval at a test deployment, never at production.\n",
            );
        }
        case.push_str(&format!("  {DRAFT}\n{author}"));
        for (_, names) in &rendered.made_up[made_up_before..] {
            for name in names {
                let value = args.as_ref().and_then(|args| args.get(name)).map(yaml_flow).unwrap_or_default();
                case.push_str(&format!(
                    "  # edit: `{}` is a made-up value ({}) that likely names nothing on your server: put one your test deployment has\n",
                    one_line(name, 100),
                    one_line(&value, 100)
                ));
            }
        }
        case.push_str(&format!("  - id: {}\n", yaml_string(&id)));
        case.push_str(&format!("    prompt: {}\n", yaml_string(&prompt_text)));
        case.push_str(&format!("    expect_tool: {}\n", yaml_string(&tool.name)));
        if let Some(args) = args.filter(|args| !args.is_empty()) {
            case.push_str("    expect_args:\n");
            for (name, value) in &args {
                // A mapping with a `match` key would be read as a matcher: say it is a value.
                let flow = match value {
                    Value::Object(entries) if entries.contains_key("match") => {
                        format!("{{match: exact, value: {}}}", yaml_flow(value))
                    }
                    _ => yaml_flow(value),
                };
                case.push_str(&format!("      {}: {flow}\n", yaml_string(name)));
            }
        }
        cases.push(case);
    }
    let template_author = if authoring.is_some() { "  # written by the template: small talk\n" } else { "" };
    for (id, text) in NEGATIVES {
        let id = case_id(id, &mut used);
        cases.push(format!(
            "  {DRAFT}\n{template_author}  - id: {}\n    prompt: {}\n    negative: true\n",
            yaml_string(&id),
            yaml_string(text)
        ));
    }
    for (number, text) in authoring.iter().flat_map(|authoring| authoring.negatives.iter()).enumerate() {
        let id = case_id(&format!("model-negative-{}", number + 1), &mut used);
        let model = authoring.map(|authoring| one_line(&authoring.model, 200)).unwrap_or_default();
        cases.push(format!(
            "  {DRAFT}\n  # written by the model {model}: a request that needs none of the tools\n  - id: {}\n    prompt: {}\n    negative: true\n",
            yaml_string(&id),
            yaml_string(text)
        ));
    }
    out.push_str(&cases.join("\n"));
    rendered.text = out;
    rendered
}

/// True when an argument called `name` names a record on the server: `id`, `uuid`, or a name
/// ending in `_id`, `-id`, `Id` or `ID` (`todo_id`, `noteId`).
fn names_a_record(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    matches!(lower.as_str(), "id" | "uuid")
        || lower.ends_with("_id")
        || lower.ends_with("-id")
        || lower.ends_with("_uuid")
        || (name.len() > 2 && (name.ends_with("Id") || name.ends_with("ID")))
}

/// Replaces, in the template's `arguments` for `tool`, each top-level argument that names a
/// record (and whose schema gives no value of its own: `enum`, `const`, `default`, `examples`)
/// by a made-up value distinct per tool (`ordinal`) that likely names nothing: an integer from
/// [`MADE_UP_ID`], a nil-like UUID, or `draft-id-N`. Returns the names replaced.
pub(crate) fn made_up_ids(tool: &ToolView, ordinal: usize, arguments: &mut Value) -> Vec<String> {
    let Some(object) = arguments.as_object_mut() else { return Vec::new() };
    let properties = tool.input_schema.get("properties").and_then(Value::as_object);
    let mut replaced = Vec::new();
    for (name, value) in object.iter_mut() {
        let schema = properties.and_then(|properties| properties.get(name));
        let given = ["enum", "const", "default", "examples"]
            .iter()
            .any(|key| schema.and_then(|schema| schema.get(*key)).is_some());
        if given || !names_a_record(name) {
            continue;
        }
        let number = i64::try_from(ordinal).unwrap_or(0).saturating_add(MADE_UP_ID);
        let format = schema.and_then(|schema| schema.get("format")).and_then(Value::as_str);
        *value = match value {
            Value::Number(_) => json!(number),
            Value::String(_) if format == Some("uuid") => json!(format!("{MADE_UP_UUID}{number:012}")),
            Value::String(_) => json!(format!("{MADE_UP_TEXT}{number}")),
            _ => continue,
        };
        replaced.push(name.clone());
    }
    replaced
}

/// The top-level arguments of `arguments` that hold a value [`made_up_ids`] drafts (an integer
/// from [`MADE_UP_ID`], `draft-id-N`, the nil-like UUID): a record the server likely has not.
pub(crate) fn made_up_names(arguments: &Value) -> Vec<String> {
    let Some(object) = arguments.as_object() else { return Vec::new() };
    let drafted = |n: i64| (MADE_UP_ID..MADE_UP_ID + 10_000).contains(&n);
    let made_up = |value: &Value| match value {
        Value::Number(number) => number.as_i64().is_some_and(drafted),
        Value::String(text) => {
            let number = text.strip_prefix(MADE_UP_TEXT).or_else(|| text.strip_prefix(MADE_UP_UUID));
            number.and_then(|rest| rest.parse::<i64>().ok()).is_some_and(drafted)
        }
        _ => false,
    };
    object.iter().filter(|(_, value)| made_up(value)).map(|(name, _)| name.clone()).collect()
}

/// The template's arguments for `tool` (its required ones, from [`example_value`], ids made up
/// by [`made_up_ids`] and noted in `rendered.made_up`) when they satisfy its schema; else
/// `None`, noted in `rendered.dropped_args`.
fn template_args(tool: &ToolView, ordinal: usize, rendered: &mut Rendered) -> Option<Map<String, Value>> {
    let mut arguments = example_value(&tool.input_schema);
    let made_up = made_up_ids(tool, ordinal, &mut arguments);
    if !made_up.is_empty()
        && !matches!(ArgumentValidator::new(&tool.input_schema).validate(&arguments), Validation::Invalid(_))
    {
        rendered.made_up.push((tool.name.clone(), made_up));
    } else if !made_up.is_empty() {
        // A made-up id the schema refuses (bounds, a pattern): the plain example instead.
        arguments = example_value(&tool.input_schema);
    }
    match ArgumentValidator::new(&tool.input_schema).validate(&arguments) {
        Validation::Valid => arguments.as_object().cloned(),
        Validation::Invalid(errors) => {
            rendered.dropped_args.push((tool.name.clone(), errors.join("; ")));
            None
        }
        Validation::SchemaUnusable(reason) => {
            rendered.dropped_args.push((tool.name.clone(), reason));
            None
        }
    }
}

/// The one line that tells, before `golden check --execute` does, that it will skip the calls of
/// `tools` (annotated neither read-only nor non-destructive) and how to have them sent; `None`
/// when there are none. Names the first few tools.
fn presumed_destructive_note(tools: &[String]) -> Option<String> {
    const NAMED: usize = 5;
    if tools.is_empty() {
        return None;
    }
    let mut names: Vec<String> = tools.iter().take(NAMED).map(|tool| format!("`{}`", one_line(tool, 100))).collect();
    if tools.len() > NAMED {
        names.push(format!("{} more", tools.len() - NAMED));
    }
    Some(format!(
        "note: {} tool(s) ({}) have no `readOnlyHint: true` or `destructiveHint: false` annotation, so `golden check --execute` presumes them destructive and skips their calls; annotate the read-only ones `readOnlyHint: true` on the server, or pass --execute-destructive against a test deployment",
        tools.len(),
        names.join(", ")
    ))
}

/// `mcp-eval golden init`: refuses an existing `out` without `force` (exit 2), lists the
/// server's tools (exit 3 when it cannot), asks `model` for the drafts when one is given (exit 5,
/// nothing written, when its provider refuses the first calls), writes the set, loads it back
/// and prints its path and hash; saves the recorded cassettes (exit 4 when they cannot be
/// written).
pub(crate) async fn init(server: super::CheckServer, out: &Path, force: bool, model: Option<ModelPlan>) -> ExitStatus {
    let mut stderr = std::io::stderr();
    if !force && out.exists() {
        let error = UserError::new(Kind::InvalidInput, format!("{} exists already", out.display()))
            .with_hint("pass --force to replace it, or --out another path");
        return super::refuse(&error);
    }
    let surface = match super::list_tools(&server).await {
        Ok(surface) => surface,
        Err(error) => return super::refuse(&error),
    };
    let authoring = match &model {
        None => None,
        Some(plan) => match draft(&plan.caller, &surface, plan.family).await {
            Drafted::Written(authoring) => Some(authoring),
            Drafted::Refused(error) => {
                let error = UserError::new(
                    Kind::Provider,
                    format!(
                        "the model {} refused the first call before answering any: {error}; nothing was written",
                        plan.caller.label()
                    ),
                )
                .with_hint(plan.refused_hint.clone());
                return super::refuse(&error);
            }
        },
    };
    let rendered = render_with(&surface, authoring.as_ref());
    if let Some(parent) = out.parent().filter(|parent| !parent.as_os_str().is_empty())
        && let Err(error) = fs_err::create_dir_all(parent)
    {
        return super::refuse(&UserError::new(Kind::Environment, "cannot create the directory").caused_by(error));
    }
    if let Err(error) = crate::atomic::write_atomic(out, &rendered.text) {
        let error = UserError::new(Kind::Environment, format!("cannot write {}", out.display())).caused_by(error);
        return super::refuse(&error);
    }
    let set = match crate::golden::load::load(out) {
        Ok(set) => set,
        Err(problems) => return super::report(problems),
    };
    for (tool, reason) in &rendered.by_template {
        let _ = writeln!(stderr, "note: tool `{tool}`: the template wrote its case: {reason}");
    }
    for (tool, reason) in &rendered.dropped_args {
        let _ = writeln!(
            stderr,
            "note: tool `{tool}`: no example arguments satisfy its inputSchema ({reason}); its case has no expect_args"
        );
    }
    for tool in &rendered.destructive {
        let _ = writeln!(
            stderr,
            "warning: tool `{tool}` may change or delete data; layer 1 calls tools for real: use a test deployment"
        );
    }
    for (tool, names) in &rendered.made_up {
        let names: Vec<String> = names.iter().map(|name| format!("`{name}`")).collect();
        let _ = writeln!(
            stderr,
            "note: tool `{tool}`: {} made up (a value that likely names nothing on the server, distinct per tool): edit its case to name one your test deployment has",
            names.join(", ")
        );
    }
    if let Some(line) = presumed_destructive_note(&rendered.presumed_destructive) {
        let _ = writeln!(stderr, "{line}");
    }
    if rendered.skipped > 0 {
        let _ = writeln!(stderr, "note: {} tool(s) without a name left out", rendered.skipped);
    }
    let mut met = Met::nothing();
    let mut authors = String::new();
    if let (Some(plan), Some(authoring)) = (&model, &authoring) {
        if let Some(note) = &authoring.negatives_note {
            let _ = writeln!(stderr, "note: the model wrote no negative case: {note}");
        }
        for note in plan.caller.notes() {
            let _ = writeln!(stderr, "note: {note}");
        }
        authors = format!(
            " ({} by the model {}, {} by the template)",
            rendered.by_model + authoring.negatives.len(),
            authoring.model,
            rendered.by_template.len() + NEGATIVES.len()
        );
        if let Some(cassettes) = plan.cassettes.as_ref().filter(|_| plan.record) {
            match cassettes.save() {
                Ok(paths) => {
                    for path in paths {
                        let _ = writeln!(stderr, "recorded {}", path.display());
                    }
                }
                Err(error) => {
                    let error =
                        UserError::new(Kind::Environment, "the cassettes could not be written").caused_by(error);
                    let _ = writeln!(stderr, "{error}");
                    met.add(error.kind);
                }
            }
        }
    }
    let text = format!(
        "wrote {}: {} case(s) from {} tool(s){authors}, all drafts to edit\nset {}\n",
        out.display(),
        set.cases.len(),
        surface.tools.len() - rendered.skipped,
        set.hash
    );
    let _ = std::io::stdout().write_all(text.as_bytes());
    met.exit_status()
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    /// The `value` of the matcher of `name` in the case's `expect_args` (`null` when none).
    pub(crate) fn arg_value(case: &crate::golden::Case, name: &str) -> Value {
        expected_arg(case, name).and_then(|matcher| matcher.value.clone()).unwrap_or(Value::Null)
    }

    /// The matcher of `name` in the case's `expect_args`.
    pub(crate) fn expected_arg<'a>(case: &'a crate::golden::Case, name: &str) -> Option<&'a crate::golden::Matcher> {
        case.expect.tool.as_ref()?.args.as_ref()?.get(name)
    }

    /// True when the case has `expect_args`.
    pub(crate) fn has_expected_args(case: &crate::golden::Case) -> bool {
        case.expect.tool.as_ref().is_some_and(|tool| tool.args.is_some())
    }

    /// The case's `expect_tool`.
    pub(crate) fn expected_tool(case: &crate::golden::Case) -> Option<&str> {
        case.expect.tool.as_ref().map(|tool| tool.name.as_str())
    }

    #[test]
    fn enum_const_default_and_examples_come_first() {
        assert_eq!(example_value(&json!({"type": "string", "enum": ["celsius", "fahrenheit"]})), json!("celsius"));
        assert_eq!(example_value(&json!({"const": 42})), json!(42));
        assert_eq!(example_value(&json!({"type": "integer", "default": 7})), json!(7));
        assert_eq!(example_value(&json!({"type": "string", "examples": ["Lyon", "Nice"]})), json!("Lyon"));
    }

    #[test]
    fn strings_honour_format_and_length() {
        assert_eq!(example_value(&json!({"type": "string", "format": "date"})), json!("2026-01-15"));
        assert_eq!(example_value(&json!({"type": "string", "format": "date-time"})), json!("2026-01-15T09:00:00Z"));
        assert_eq!(example_value(&json!({"type": "string", "format": "uri"})), json!("https://example.com/"));
        assert_eq!(example_value(&json!({"type": "string", "format": "email"})), json!("user@example.com"));
        assert_eq!(example_value(&json!({"type": "string"})), json!("example"));
        assert_eq!(example_value(&json!({"type": "string", "minLength": 10})), json!("examplexxx"));
        assert_eq!(example_value(&json!({"type": "string", "maxLength": 3})), json!("exa"));
        let schema = json!({"type": "object", "required": ["city"], "properties": {"city": {"type": "string"}}});
        assert_eq!(example_value(&schema), json!({"city": "Paris"}));
    }

    #[test]
    fn numbers_honour_their_bounds() {
        assert_eq!(example_value(&json!({"type": "integer"})), json!(1));
        assert_eq!(example_value(&json!({"type": "integer", "minimum": 5, "maximum": 9})), json!(5));
        assert_eq!(example_value(&json!({"type": "integer", "maximum": -3})), json!(-3));
        assert_eq!(example_value(&json!({"type": "integer", "exclusiveMinimum": 1})), json!(2));
        assert_eq!(example_value(&json!({"type": "integer", "minimum": 3, "multipleOf": 5})), json!(5));
        assert_eq!(example_value(&json!({"type": "number", "minimum": 0.5, "maximum": 0.75})), json!(0.75));
        assert_eq!(example_value(&json!({"type": "number", "minimum": 2.5})), json!(2.5));
        assert_eq!(example_value(&json!({"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1})), json!(0.5));
        assert_eq!(example_value(&json!({"type": "boolean"})), json!(true));
        assert_eq!(example_value(&json!({"type": ["null", "integer"]})), json!(1));
    }

    #[test]
    fn arrays_objects_refs_and_branches() {
        let schema = json!({"type": "array", "minItems": 2, "items": {"type": "integer", "minimum": 3}});
        assert_eq!(example_value(&schema), json!([3, 3]));
        assert_eq!(example_value(&json!({"type": "array", "items": {"type": "boolean"}})), json!([true]));
        let schema = json!({
            "type": "object",
            "required": ["where", "when"],
            "properties": {
                "where": {"$ref": "#/$defs/place"},
                "when": {"anyOf": [{"type": "string", "format": "date"}, {"type": "null"}]},
                "optional": {"type": "string"}
            },
            "$defs": {"place": {"type": "object", "required": ["city", "zip"], "properties": {
                "city": {"type": "string"}, "zip": {"oneOf": [{"type": "integer", "minimum": 10000}, {"type": "string"}]}
            }}}
        });
        assert_eq!(example_value(&schema), json!({"where": {"city": "Paris", "zip": 10000}, "when": "2026-01-15"}));
        let recursive = json!({"$defs": {"node": {"type": "object", "required": ["next"], "properties": {"next": {"$ref": "#/$defs/node"}}}}, "$ref": "#/$defs/node"});
        // Bounded: the innermost level gives up with null, and nothing overflows.
        let value = example_value(&recursive);
        assert!(value.pointer("/next/next/next").is_some(), "{value}");
    }

    #[test]
    fn ids_are_valid_and_unique() {
        let mut used = HashSet::new();
        assert_eq!(case_id("get_current_time", &mut used), "get_current_time");
        assert_eq!(case_id("get_current_time", &mut used), "get_current_time-2");
        assert_eq!(case_id("getWeather", &mut used), "get-weather");
        assert_eq!(case_id("Search Files!", &mut used), "search-files");
        assert_eq!(case_id("__private", &mut used), "private");
        assert_eq!(case_id("", &mut used), "tool");
        assert_eq!(case_id("日本", &mut used), "tool-2");
        let long = "a".repeat(100);
        let first = case_id(&long, &mut used);
        let second = case_id(&long, &mut used);
        assert_eq!(first.len(), 64);
        assert_eq!(second.len(), 64);
        assert!(second.ends_with("-2"));
        assert_ne!(first, second);
    }

    #[test]
    fn awkward_strings_round_trip_through_the_loader() {
        let awkward =
            "quote \" backslash \\ newline\n tab\t colon: # hash {brace} [x] 'single' \u{7f}\u{85}\u{2028} é 🌊 *star";
        let mut weird = ToolView::for_tests(
            awkward,
            json!({"type": "object", "required": [awkward], "properties": {awkward: {"type": "string", "const": awkward}}}),
        );
        weird.title = Some(format!("Title: {awkward}"));
        weird.description = Some("- starts like a list item".into());
        let surface = ToolSurface { tools: vec![weird, ToolView::for_tests("plain", json!({}))], skipped: 0 };
        let rendered = render(&surface);
        let set = crate::golden::load::parse(Path::new("tasks.yaml"), &rendered.text)
            .unwrap_or_else(|problems| panic!("{problems:?}\n{}", rendered.text));
        assert_eq!(set.cases.len(), 5, "{}", rendered.text);
        let first = &set.cases[0];
        assert_eq!(expected_tool(first), Some(awkward));
        assert_eq!(arg_value(first, awkward), json!(awkward));
        assert!(first.run.prompt[0].contains(awkward), "{:?}", first.run.prompt);
        assert_eq!(rendered.text.matches(DRAFT).count(), 5);
        assert!(set.cases[2..].iter().all(|case| case.expect.negative));
    }

    #[test]
    fn arguments_that_do_not_validate_are_dropped_but_the_tool_kept() {
        let schema = json!({"type": "object", "required": ["code"], "properties": {"code": {"type": "string", "pattern": "^[0-9]{4}$"}}});
        let mut delete = ToolView::for_tests(
            "delete_file",
            json!({"type": "object", "required": ["path"], "properties": {"path": {"type": "string"}}}),
        );
        delete.annotations = Some(Map::new());
        let surface = ToolSurface { tools: vec![ToolView::for_tests("lookup", schema), delete], skipped: 0 };
        let rendered = render(&surface);
        assert_eq!(rendered.dropped_args.len(), 1);
        assert_eq!(rendered.dropped_args[0].0, "lookup");
        assert_eq!(rendered.destructive, vec!["delete_file".to_owned()]);
        assert!(rendered.text.contains("point mcp-eval at a test deployment"));
        let set = crate::golden::load::parse(Path::new("tasks.yaml"), &rendered.text).expect("loads");
        assert_eq!(expected_tool(&set.cases[0]), Some("lookup"));
        assert!(!has_expected_args(&set.cases[0]));
        assert_eq!(arg_value(&set.cases[1], "path"), json!("example"));
        assert_eq!(set.cases[1].run.prompt[0], "Use the delete_file tool with path example.");
        let mut described = ToolView::for_tests(
            "get_weather",
            json!({"type": "object", "required": ["city"], "properties": {"city": {"type": "string"}}}),
        );
        described.title = Some("Weather Tool".into());
        described.description = Some("Returns the weather of a city.  Uses   a paid API.".into());
        assert_eq!(
            prompt(&described, Some(&json!({"city": "Paris"}).as_object().cloned().unwrap_or_default())),
            "Use the Weather Tool (returns the weather of a city) with city Paris."
        );
    }

    #[test]
    fn tools_that_execute_would_presume_destructive_are_counted_and_the_note_says_how_to_mark_them() {
        let annotated = |name: &str, annotations: Value| {
            let mut view = ToolView::for_tests(name, json!({"type": "object"}));
            view.annotations = annotations.as_object().cloned();
            view
        };
        let surface = ToolSurface {
            tools: vec![
                ToolView::for_tests("get_note", json!({"type": "object"})),
                annotated("list_notes", json!({"readOnlyHint": true})),
                annotated("add_note", json!({"destructiveHint": false})),
                annotated("delete_note", json!({"destructiveHint": true})),
                annotated("touch_note", json!({"readOnlyHint": false, "title": "Touch"})),
            ],
            skipped: 0,
        };
        let rendered = render(&surface);
        // The tools `golden check --execute` skips for want of an annotation, not the one
        // annotated destructive on purpose (its case carries the warning already).
        assert_eq!(rendered.presumed_destructive, ["get_note", "touch_note"]);
        for name in &rendered.presumed_destructive {
            let listed = surface.tools.iter().find(|view| &view.name == name).expect("listed");
            assert!(super::super::execute::destructive(listed).is_some(), "{name}: --execute would send it");
        }
        let note = presumed_destructive_note(&rendered.presumed_destructive).expect("a note");
        assert!(note.starts_with("note: 2 tool(s) (`get_note`, `touch_note`) have no `readOnlyHint: true`"), "{note}");
        assert!(note.contains("`golden check --execute` presumes them destructive and skips their calls"), "{note}");
        assert!(note.contains("annotate the read-only ones `readOnlyHint: true`"), "{note}");
        assert!(!note.contains('\n'), "one line: {note}");
        let many: Vec<String> = (1..=7).map(|n| format!("tool_{n}")).collect();
        let note = presumed_destructive_note(&many).expect("a note");
        assert!(note.starts_with("note: 7 tool(s) (`tool_1`, "), "{note}");
        assert!(note.contains("`tool_5`, 2 more)"), "{note}");
        assert_eq!(presumed_destructive_note(&[]), None);
    }

    #[test]
    fn a_value_with_a_match_key_stays_a_value() {
        let schema = json!({"type": "object", "required": ["filter"], "properties": {"filter": {"type": "object", "required": ["match"], "properties": {"match": {"type": "string"}}}}});
        let rendered = render(&ToolSurface { tools: vec![ToolView::for_tests("find", schema)], skipped: 0 });
        let set = crate::golden::load::parse(Path::new("tasks.yaml"), &rendered.text).expect("loads");
        assert_eq!(
            expected_arg(&set.cases[0], "filter"),
            Some(&crate::golden::Matcher::of_resolved(&json!({"match": "exact", "value": {"match": "example"}})))
        );
    }

    #[test]
    fn ids_are_drafted_distinct_per_tool_unlikely_to_exist_and_marked_to_edit() {
        let by_number = json!({"type": "object", "required": ["id"], "properties": {"id": {"type": "integer"}}});
        let by_text = json!({"type": "object", "required": ["noteId"], "properties": {"noteId": {"type": "string", "format": "uuid"}}});
        let given = json!({"type": "object", "required": ["todo_id"], "properties": {"todo_id": {"type": "integer", "enum": [3]}}});
        let surface = ToolSurface {
            tools: vec![
                ToolView::for_tests("complete_todo", by_number.clone()),
                ToolView::for_tests("delete_todo", by_number),
                ToolView::for_tests("get_note", by_text),
                ToolView::for_tests("pick", given),
            ],
            skipped: 0,
        };
        let rendered = render(&surface);
        let set = crate::golden::load::parse(Path::new("tasks.yaml"), &rendered.text)
            .unwrap_or_else(|problems| panic!("{problems:?}\n{}", rendered.text));
        let value = |case: usize, name: &str| arg_value(&set.cases[case], name);
        let (complete, delete) = (value(0, "id"), value(1, "id"));
        assert_ne!(complete, delete, "one id per tool: a second run must not find the first one's state");
        for id in [&complete, &delete] {
            assert!(id.as_i64().is_some_and(|id| id >= 900_000), "an id unlikely to exist, not 1: {id}");
        }
        let note = value(2, "noteId");
        assert!(note.as_str().is_some_and(|id| id.starts_with("00000000-0000-4000-8000-")), "{note}");
        assert_eq!(value(3, "todo_id"), json!(3), "a value the schema gives is kept");
        assert_eq!(
            rendered.made_up,
            vec![
                ("complete_todo".to_owned(), vec!["id".to_owned()]),
                ("delete_todo".to_owned(), vec!["id".to_owned()]),
                ("get_note".to_owned(), vec!["noteId".to_owned()]),
            ]
        );
        assert_eq!(rendered.text.matches("# edit: `id` is a made-up value").count(), 2, "{}", rendered.text);
        assert!(rendered.text.contains("# edit: `noteId` is a made-up value"), "{}", rendered.text);
    }
}

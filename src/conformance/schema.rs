//! Static checks of the tool definitions a server lists in `tools/list` (checklist rows T-1,
//! T-2, T-3, T-4, T-8, T-9 and H-12; spec-notes §6.2, §12.1, §12.2 and §20 (5)), plus
//! compiling an `outputSchema` and validating `structuredContent` against it (for T-5).
//!
//! Everything here is pure: no IO, and the only clock read is the time bound passed in through
//! [`Limits::max_time`].
//!
//! **No network, ever.** Schemas are compiled with `jsonschema` built without its
//! `resolve-http`/`resolve-file` features *and* with a retriever ([`RefusingRetriever`]) that
//! refuses every URI it is asked for. A `$ref` that cannot be resolved inside the document
//! therefore fails compilation immediately; the retriever records what was asked for, which is
//! how a remote reference (T-3, Warn: "SHOULD reject") is told apart from a broken local one
//! (T-3, Fail: the schema is invalid).
//!
//! **Bounded work** (T-4): before a schema is meta-validated or compiled, an iterative walk
//! counts its subschemas and their nesting depth; the raw JSON nesting of the whole document is
//! bounded by `4 × max_depth` (a property level takes two JSON levels). A schema beyond a limit
//! is reported and not handed to `jsonschema` at all, so a 10,000-level schema can neither hang
//! nor overflow the stack.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::text::clip;
use jsonschema::error::ValidationErrorKind;
use jsonschema::{Draft, ReferencingError, Retrieve, Uri, Validator};
use serde_json::{Map, Value};

pub(crate) use super::problem::{Problem, Severity};

/// Work bounds for schema checks (T-4; spec-notes §12.2 "Resource bounds").
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Limits {
    /// Deepest allowed subschema nesting (the root is level 0). The raw JSON nesting of a schema
    /// document is bounded by four times this value.
    pub max_depth: usize,
    /// Most subschemas allowed in one schema document (the root included).
    pub max_subschemas: usize,
    /// Time budget for one [`check_tools`] call. Schemas reached after it ran out are not
    /// meta-validated or compiled (reported once as T-4).
    pub max_time: Duration,
}

impl Default for Limits {
    /// Depth 32, 10,000 subschemas, 2 seconds.
    ///
    /// The depth must stay well below 64: serde_json parses at most 128 nesting levels and each
    /// subschema level takes two (`properties` + name, `allOf` + index), so a schema that
    /// arrived in a response can never be deeper than about 60 levels.
    fn default() -> Self {
        Limits { max_depth: 32, max_subschemas: 10_000, max_time: Duration::from_secs(2) }
    }
}

/// Checks every tool definition of a complete (all pages) `tools/list` walk.
///
/// Returns `(label, problem)` pairs, where the label is the tool's name, or `tools[i]` when the
/// tool has no usable name. Rules (spec-notes §6.2, §12.1, §12.2, §20 (5)):
/// - **T-1** (Fail): `inputSchema` is present, a non-null object, with root `"type": "object"`.
/// - **T-2**: `inputSchema`/`outputSchema` are objects, meta-validate against their dialect
///   (`$schema`; 2020-12 when absent; draft-04/06/07 and 2019-09 also accepted) and compile
///   (Fail). An unknown `$schema` is a Warn "unsupported dialect": the spec asks implementations
///   to handle that gracefully, and the schema may well be valid in it.
/// - **T-3**: a schema that depends on a `$ref` not resolvable inside the document is rejected
///   without fetching (Warn, SHOULD reject); an unresolvable local ref (`#/$defs/missing`,
///   unknown `$anchor`) makes the schema invalid (Fail).
/// - **T-4** (Warn): depth, subschema-count and time bounds ([`Limits`]) were exceeded.
/// - **T-8**: a name is required (Fail); names SHOULD be 1–128 characters of `[A-Za-z0-9_.-]`
///   and unique in the list (Warn).
/// - **T-9** (Fail): `annotations` is an object whose `readOnlyHint`, `destructiveHint`,
///   `idempotentHint` and `openWorldHint` are booleans when present.
/// - **H-12** (Fail): `x-mcp-header` annotations in `inputSchema` are non-empty RFC 9110
///   tokens, case-insensitively unique, only on `integer`/`string`/`boolean` properties, and
///   only on properties reached from the root through `properties` alone.
pub(crate) fn check_tools(tools: impl IntoIterator<Item = Value>, limits: &Limits) -> Vec<(String, Problem)> {
    let mut budget = Budget { deadline: Instant::now().checked_add(limits.max_time), reported: false };
    let mut out = Vec::new();
    let mut first_seen: HashMap<String, usize> = HashMap::new();
    for (index, tool) in tools.into_iter().enumerate() {
        let name = tool.get("name").and_then(Value::as_str).filter(|n| !n.is_empty());
        let label = name.map_or_else(|| format!("tools[{index}]"), str::to_owned);
        let mut problems = Vec::new();
        check_tool(&tool, limits, &mut budget, &mut problems);
        if let Some(name) = name {
            if let Some(first) = first_seen.get(name) {
                problems.push(warn("T-8", format!("duplicate tool name `{name}` (first used by tools[{first}])")));
            } else {
                first_seen.insert(name.to_owned(), index);
            }
        }
        out.extend(problems.into_iter().map(|p| (label.clone(), p)));
    }
    out
}

/// Why a tool's schema cannot be used to validate (each sentence names the schema).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum UnusableSchema {
    /// Beyond the bounds of [`Limits::default`] (too deep, too many subschemas).
    #[error("{0}")]
    TooLarge(String),
    /// Its `$schema` is not a string, or names a dialect not supported.
    #[error("{0}")]
    Dialect(String),
    /// It does not compile: an external `$ref` (never fetched), an unresolvable local one, or
    /// an invalid schema.
    #[error("{0}")]
    Compile(String),
}

/// Compiles an `outputSchema` for validating `structuredContent` (T-5; spec-notes §12.2,
/// §12.3), under the same dialect, bounds ([`Limits::default`]) and no-fetch policy as
/// [`check_tools`]. The error says why the schema cannot be used (unsupported dialect, external
/// `$ref` not fetched, unresolvable local `$ref`, invalid schema, too large).
pub(crate) fn compile_output_schema(schema: &Value) -> Result<Validator, UnusableSchema> {
    compile_checked(schema, "outputSchema")
}

/// Compiles any schema of a tool (`which` names it in the error, e.g. `inputSchema`) the way
/// [`compile_output_schema`] does: the dialect from `$schema` (2020-12 when absent), the bounds
/// of [`Limits::default`] checked first, and external `$ref`s refused, never fetched.
pub(crate) fn compile_checked(schema: &Value, which: &str) -> Result<Validator, UnusableSchema> {
    let limits = Limits::default();
    if let Some(exceeded) = walk(schema, &limits, which).exceeded {
        return Err(UnusableSchema::TooLarge(exceeded));
    }
    let draft = match schema {
        Value::Object(map) => match dialect_of(map) {
            Ok(d) => d.draft,
            Err(e) => return Err(UnusableSchema::Dialect(e.message(which))),
        },
        _ => Draft::Draft202012,
    };
    compile(draft, schema).map_err(|f| UnusableSchema::Compile(f.message(which)))
}

/// Validates an instance (e.g. `structuredContent`) against a compiled schema (T-5). Each error
/// message starts with the instance path as a JSON pointer (`(root)` for the whole instance).
pub(crate) fn validate_instance(validator: &Validator, instance: &Value) -> Result<(), Vec<String>> {
    let errors: Vec<String> = validator
        .iter_errors(instance)
        .map(|e| {
            let path = e.instance_path().as_str();
            let path = if path.is_empty() { "(root)" } else { path };
            format!("`{path}`: {}", clip(&e.to_string(), 200))
        })
        .collect();
    if errors.is_empty() { Ok(()) } else { Err(errors) }
}

/// A retriever that refuses every URI and remembers which ones were asked for (T-3: network
/// `$ref`s MUST NOT be dereferenced automatically; spec-notes §12.2).
#[derive(Debug, Clone, Default)]
struct RefusingRetriever {
    asked: Arc<Mutex<Vec<String>>>,
}

impl RefusingRetriever {
    fn asked(&self) -> Vec<String> {
        crate::mcp::sync::lock(&self.asked).clone()
    }
}

impl Retrieve for RefusingRetriever {
    fn retrieve(&self, uri: &Uri<String>) -> Result<Value, Box<dyn std::error::Error + Send + Sync>> {
        {
            let mut asked = crate::mcp::sync::lock(&self.asked);
            asked.push(uri.to_string());
        }
        Err(format!("`{uri}` not fetched: mcp-eval never dereferences external references").into())
    }
}

/// The shared time budget of one [`check_tools`] call.
struct Budget {
    /// `None` when `now + max_time` overflows, i.e. no practical limit.
    deadline: Option<Instant>,
    reported: bool,
}

impl Budget {
    /// True when there is time left; otherwise reports the exhaustion once (T-4).
    fn allows(&mut self, what: &str, limits: &Limits, out: &mut Vec<Problem>) -> bool {
        if self.deadline.is_none_or(|d| Instant::now() < d) {
            return true;
        }
        if !self.reported {
            self.reported = true;
            out.push(warn(
                "T-4",
                format!(
                    "time limit of {:?} for schema checks exceeded; `{what}` and the schemas \
                     after it were not meta-validated or compiled",
                    limits.max_time
                ),
            ));
        }
        false
    }
}

fn fail(id: &'static str, message: String) -> Problem {
    Problem::fail(id, message)
}

fn warn(id: &'static str, message: String) -> Problem {
    Problem::warn(id, message)
}

fn check_tool(tool: &Value, limits: &Limits, budget: &mut Budget, out: &mut Vec<Problem>) {
    let Some(tool) = tool.as_object() else {
        out.push(fail("T-1", format!("tool definition: expected an object, found {}", kind_of(tool))));
        return;
    };
    check_name(tool, out);
    check_annotations(tool, out);

    match tool.get("inputSchema") {
        None => out.push(fail("T-1", "missing required `inputSchema`".to_owned())),
        Some(input @ Value::Object(schema)) => {
            match schema.get("type") {
                Some(Value::String(t)) if t == "object" => {}
                None => {
                    out.push(fail("T-1", "`inputSchema`: root `type` is missing; it must be \"object\"".to_owned()))
                }
                Some(other) => out.push(fail(
                    "T-1",
                    format!("`inputSchema`: root `type` must be \"object\", found {}", describe(other)),
                )),
            }
            check_schema("inputSchema", input, limits, budget, true, out);
        }
        Some(other) => out.push(fail("T-1", format!("`inputSchema`: expected an object, found {}", kind_of(other)))),
    }

    match tool.get("outputSchema") {
        None => {}
        Some(schema @ Value::Object(_)) => {
            check_schema("outputSchema", schema, limits, budget, false, out);
        }
        Some(other) => out.push(fail(
            "T-2",
            format!("`outputSchema`: expected an object (schema `Tool.outputSchema`), found {}", kind_of(other)),
        )),
    }
}

/// T-8: names (spec-notes §12.1).
fn check_name(tool: &Map<String, Value>, out: &mut Vec<Problem>) {
    match tool.get("name") {
        None => out.push(fail("T-8", "missing required `name` (schema `Tool`)".to_owned())),
        Some(Value::String(name)) => {
            let len = name.chars().count();
            if !(1..=128).contains(&len) {
                out.push(warn("T-8", format!("tool name is {len} characters long; SHOULD be 1 to 128")));
            }
            let bad: String =
                name.chars().filter(|c| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'))).take(8).collect();
            if !bad.is_empty() {
                out.push(warn(
                    "T-8",
                    format!("tool name `{}` has characters outside [A-Za-z0-9_.-] (SHOULD): {bad:?}", clip(name, 200)),
                ));
            }
        }
        Some(other) => out.push(fail("T-8", format!("`name`: expected a string, found {}", kind_of(other)))),
    }
}

/// T-9: annotation hint types (schema `ToolAnnotations`).
fn check_annotations(tool: &Map<String, Value>, out: &mut Vec<Problem>) {
    let Some(annotations) = tool.get("annotations") else {
        return;
    };
    let Some(annotations) = annotations.as_object() else {
        out.push(fail("T-9", format!("`annotations`: expected an object, found {}", kind_of(annotations))));
        return;
    };
    for hint in ["readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"] {
        if let Some(v) = annotations.get(hint).filter(|v| !v.is_boolean()) {
            out.push(fail("T-9", format!("`annotations.{hint}`: expected a boolean, found {}", kind_of(v))));
        }
    }
}

/// T-2, T-3, T-4 and (for `inputSchema`) H-12 on one schema document.
fn check_schema(
    which: &str,
    schema: &Value,
    limits: &Limits,
    budget: &mut Budget,
    headers: bool,
    out: &mut Vec<Problem>,
) {
    let walked = walk(schema, limits, which);
    if headers {
        check_headers(which, &walked.headers, out);
    }
    if let Some(exceeded) = walked.exceeded {
        out.push(warn("T-4", exceeded));
        return;
    }
    let Value::Object(map) = schema else {
        return;
    };
    let dialect = match dialect_of(map) {
        Ok(d) => d,
        Err(e) => {
            out.push(e.problem(which));
            return;
        }
    };
    if !budget.allows(which, limits, out) {
        return;
    }
    let meta = meta_errors(dialect.draft, schema);
    if !meta.is_empty() {
        out.push(fail("T-2", format!("`{which}` is not a valid {} schema: {}", dialect.label, meta.join("; "))));
        return;
    }
    if !budget.allows(which, limits, out) {
        return;
    }
    if let Err(failure) = compile(dialect.draft, schema) {
        out.push(failure.problem(which));
    }
}

/// A recognized `$schema` dialect.
struct Dialect {
    draft: Draft,
    label: &'static str,
}

/// Why the dialect could not be determined.
enum DialectError {
    NotAString(&'static str),
    Unsupported(String),
}

impl DialectError {
    fn message(&self, which: &str) -> String {
        match self {
            DialectError::NotAString(found) => {
                format!("`{which}.$schema`: expected a string, found {found}")
            }
            DialectError::Unsupported(uri) => format!(
                "`{which}`: unsupported dialect `{}`: not validated (supported: draft 2020-12, \
                 2019-09, draft-07, draft-06, draft-04; the spec asks implementations to report \
                 an unsupported dialect gracefully, so this is not graded as a failure)",
                clip(uri, 200)
            ),
        }
    }

    fn problem(&self, which: &str) -> Problem {
        match self {
            DialectError::NotAString(_) => fail("T-2", self.message(which)),
            DialectError::Unsupported(_) => warn("T-2", self.message(which)),
        }
    }
}

/// The dialect named by `$schema`, 2020-12 when absent (spec-notes §12.2 "Dialect").
fn dialect_of(schema: &Map<String, Value>) -> Result<Dialect, DialectError> {
    let uri = match schema.get("$schema") {
        None => {
            return Ok(Dialect { draft: Draft::Draft202012, label: "draft 2020-12" });
        }
        Some(Value::String(uri)) => uri,
        Some(other) => return Err(DialectError::NotAString(kind_of(other))),
    };
    let bare = uri.strip_suffix('#').unwrap_or(uri);
    let bare = bare.strip_prefix("https://").or_else(|| bare.strip_prefix("http://")).unwrap_or("");
    let (draft, label) = match bare {
        "json-schema.org/draft/2020-12/schema" => (Draft::Draft202012, "draft 2020-12"),
        "json-schema.org/draft/2019-09/schema" => (Draft::Draft201909, "draft 2019-09"),
        "json-schema.org/draft-07/schema" => (Draft::Draft7, "draft-07"),
        "json-schema.org/draft-06/schema" => (Draft::Draft6, "draft-06"),
        "json-schema.org/draft-04/schema" => (Draft::Draft4, "draft-04"),
        _ => return Err(DialectError::Unsupported(uri.clone())),
    };
    Ok(Dialect { draft, label })
}

/// Meta-validation against the bundled meta-schema of `draft` (never fetched). At most five
/// errors, each with the schema location it concerns.
fn meta_errors(draft: Draft, schema: &Value) -> Vec<String> {
    let validator = match draft {
        Draft::Draft4 => jsonschema::draft4::meta::validator(),
        Draft::Draft6 => jsonschema::draft6::meta::validator(),
        Draft::Draft7 => jsonschema::draft7::meta::validator(),
        Draft::Draft201909 => jsonschema::draft201909::meta::validator(),
        _ => jsonschema::draft202012::meta::validator(),
    };
    validator
        .iter_errors(schema)
        .take(5)
        .map(|e| {
            let path = e.instance_path().as_str();
            let path = if path.is_empty() { "(root)" } else { path };
            format!("at `{path}`: {}", clip(&e.to_string(), 200))
        })
        .collect()
}

/// Why compiling failed.
enum CompileFailure {
    /// The schema depends on references outside the document (not fetched).
    External(Vec<String>),
    /// A reference inside the document does not resolve.
    LocalRef(String),
    /// Any other compilation error.
    Invalid(String),
}

impl CompileFailure {
    fn message(&self, which: &str) -> String {
        match self {
            CompileFailure::External(uris) => format!(
                "`{which}` rejected: external $ref {} not fetched (a schema that depends on an \
                 unresolved external $ref SHOULD be rejected; network refs MUST NOT be \
                 dereferenced automatically)",
                uris.iter().map(|u| format!("`{}`", clip(u, 200))).collect::<Vec<_>>().join(", ")
            ),
            CompileFailure::LocalRef(e) => {
                format!("`{which}` is invalid: unresolvable local $ref: {e}")
            }
            CompileFailure::Invalid(e) => format!("`{which}` does not compile: {e}"),
        }
    }

    fn problem(&self, which: &str) -> Problem {
        match self {
            CompileFailure::External(_) => warn("T-3", self.message(which)),
            CompileFailure::LocalRef(_) => fail("T-3", self.message(which)),
            CompileFailure::Invalid(_) => fail("T-2", self.message(which)),
        }
    }
}

/// Compiles with the given draft and a [`RefusingRetriever`]; callers bound the size first.
fn compile(draft: Draft, schema: &Value) -> Result<Validator, CompileFailure> {
    let retriever = RefusingRetriever::default();
    let result = jsonschema::options().with_draft(draft).with_retriever(retriever.clone()).build(schema);
    let error = match result {
        Ok(validator) => return Ok(validator),
        Err(error) => error,
    };
    let asked = retriever.asked();
    if !asked.is_empty() {
        return Err(CompileFailure::External(asked));
    }
    let text = clip(&error.to_string(), 200);
    Err(match error.kind() {
        ValidationErrorKind::Referencing(
            ReferencingError::PointerToNowhere { .. }
            | ReferencingError::NoSuchAnchor { .. }
            | ReferencingError::InvalidAnchor { .. }
            | ReferencingError::InvalidPercentEncoding { .. }
            | ReferencingError::InvalidArrayIndex { .. }
            | ReferencingError::Unretrievable { .. },
        ) => CompileFailure::LocalRef(text),
        _ => CompileFailure::Invalid(text),
    })
}

/// An `x-mcp-header` keyword found while walking an `inputSchema`.
struct HeaderSite<'a> {
    /// JSON pointer of the schema carrying the keyword, e.g. `/properties/region`.
    pointer: String,
    /// The keyword's value.
    value: &'a Value,
    /// The schema carrying the keyword.
    schema: &'a Map<String, Value>,
    /// Reached from the root through `properties` keys alone (and not the root itself).
    placement_ok: bool,
}

/// What the bounded walk of one schema document found.
struct Walked<'a> {
    /// Set when a limit was exceeded (the walk stopped there).
    exceeded: Option<String>,
    headers: Vec<HeaderSite<'a>>,
}

/// Keywords whose value is one subschema (or, for `items`/`additionalItems` in older drafts,
/// possibly an array of subschemas).
const SINGLE: &[&str] = &[
    "additionalProperties",
    "additionalItems",
    "items",
    "contains",
    "propertyNames",
    "not",
    "if",
    "then",
    "else",
    "unevaluatedItems",
    "unevaluatedProperties",
    "contentSchema",
];
/// Keywords whose value is an array of subschemas.
const ARRAYS: &[&str] = &["allOf", "anyOf", "oneOf", "prefixItems"];
/// Keywords whose value maps names to subschemas.
const MAPS: &[&str] = &["properties", "patternProperties", "$defs", "definitions", "dependentSchemas", "dependencies"];

/// Iterative walk over the subschemas of a document, bounded by `limits` (T-4), collecting
/// `x-mcp-header` sites (H-12). Never recurses, so any depth is safe.
fn walk<'a>(schema: &'a Value, limits: &Limits, which: &str) -> Walked<'a> {
    let mut walked = Walked { exceeded: None, headers: Vec::new() };
    let json_limit = limits.max_depth.saturating_mul(4);
    if json_depth_exceeds(schema, json_limit) {
        walked.exceeded = Some(format!(
            "`{which}` nests deeper than {json_limit} JSON levels (4 × the depth limit of {}); \
             not compiled or validated",
            limits.max_depth
        ));
        return walked;
    }
    // (schema, subschema depth, JSON pointer, reached through `properties` only, is a property)
    let mut stack: Vec<(&Value, usize, String, bool, bool)> = vec![(schema, 0, String::new(), true, false)];
    let mut count = 0usize;
    while let Some((node, depth, pointer, chain, is_property)) = stack.pop() {
        count += 1;
        if count > limits.max_subschemas {
            walked.exceeded = Some(format!(
                "`{which}` has more than {} subschemas (limit); not compiled or validated",
                limits.max_subschemas
            ));
            return walked;
        }
        if depth > limits.max_depth {
            walked.exceeded = Some(format!(
                "`{which}` nests subschemas deeper than {} levels (limit; at `{}`); not \
                 compiled or validated",
                limits.max_depth,
                clip(&pointer, 200)
            ));
            return walked;
        }
        let Value::Object(map) = node else {
            continue;
        };
        if let Some(value) = map.get("x-mcp-header") {
            walked.headers.push(HeaderSite {
                pointer: pointer.clone(),
                value,
                schema: map,
                placement_ok: chain && is_property,
            });
        }
        for (key, value) in map {
            let key = key.as_str();
            let base = format!("{pointer}/{}", escape_pointer(key));
            if MAPS.contains(&key) {
                if let Value::Object(children) = value {
                    for (name, child) in children {
                        if child.is_object() || child.is_boolean() {
                            let via_properties = key == "properties";
                            stack.push((
                                child,
                                depth + 1,
                                format!("{base}/{}", escape_pointer(name)),
                                chain && via_properties,
                                via_properties,
                            ));
                        }
                    }
                }
            } else if SINGLE.contains(&key) || ARRAYS.contains(&key) {
                match value {
                    Value::Array(items) => {
                        for (i, child) in items.iter().enumerate() {
                            stack.push((child, depth + 1, format!("{base}/{i}"), false, false));
                        }
                    }
                    Value::Object(_) | Value::Bool(_) if SINGLE.contains(&key) => {
                        stack.push((value, depth + 1, base, false, false));
                    }
                    _ => {}
                }
            }
        }
    }
    walked
}

/// True when `value` nests objects/arrays deeper than `limit` levels (iterative).
fn json_depth_exceeds(value: &Value, limit: usize) -> bool {
    let mut stack = vec![(value, 0usize)];
    while let Some((node, depth)) = stack.pop() {
        if depth > limit {
            return true;
        }
        match node {
            Value::Object(map) => stack.extend(map.values().map(|v| (v, depth + 1))),
            Value::Array(items) => stack.extend(items.iter().map(|v| (v, depth + 1))),
            _ => {}
        }
    }
    false
}

/// H-12: `x-mcp-header` validity (spec-notes §6.2).
fn check_headers(which: &str, sites: &[HeaderSite<'_>], out: &mut Vec<Problem>) {
    let mut seen: HashMap<String, &str> = HashMap::new();
    for site in sites {
        let at = if site.pointer.is_empty() {
            format!("`{which}` (root)")
        } else {
            format!("`{which}{}`", clip(&site.pointer, 200))
        };
        match site.value {
            Value::String(name) if name.is_empty() => {
                out.push(fail("H-12", format!("`x-mcp-header` at {at} is empty")));
            }
            Value::String(name) => {
                if let Some(bad) = name.chars().find(|c| !is_tchar(*c)) {
                    out.push(fail(
                        "H-12",
                        format!(
                            "`x-mcp-header` {:?} at {at} is not an RFC 9110 token (character \
                             {bad:?})",
                            clip(name, 200)
                        ),
                    ));
                }
                let folded = name.to_ascii_lowercase();
                if let Some(first) = seen.get(&folded) {
                    out.push(fail(
                        "H-12",
                        format!(
                            "`x-mcp-header` {:?} at {at} duplicates the one at `{which}{first}` \
                             (case-insensitively)",
                            clip(name, 200)
                        ),
                    ));
                } else {
                    seen.insert(folded, &site.pointer);
                }
            }
            other => {
                out.push(fail("H-12", format!("`x-mcp-header` at {at}: expected a string, found {}", kind_of(other))))
            }
        }
        if !site.placement_ok {
            out.push(fail(
                "H-12",
                format!(
                    "`x-mcp-header` at {at} is not on a property reached from the root through \
                     `properties` alone (not allowed under items, *Of, not, if/then/else, \
                     $defs or behind $ref)"
                ),
            ));
        }
        if let Some(problem) = header_type_problem(site.schema) {
            out.push(fail("H-12", format!("`x-mcp-header` at {at}: {problem}")));
        }
    }
}

/// Why the property type does not allow `x-mcp-header`, if it does not. A type list is
/// accepted when it names only `integer`/`string`/`boolean` plus, optionally, `null` (a null
/// value simply sends no header).
fn header_type_problem(schema: &Map<String, Value>) -> Option<String> {
    const ALLOWED: &[&str] = &["integer", "string", "boolean"];
    match schema.get("type") {
        None => Some("the property declares no `type`; it must be integer, string or boolean".into()),
        Some(Value::String(t)) if ALLOWED.contains(&t.as_str()) => None,
        Some(Value::Array(types)) => {
            let names: Vec<&str> = types.iter().filter_map(Value::as_str).collect();
            let ok = names.len() == types.len()
                && names.iter().any(|t| ALLOWED.contains(t))
                && names.iter().all(|t| ALLOWED.contains(t) || *t == "null");
            (!ok).then(|| {
                let listed: Vec<String> = types.iter().map(describe).collect();
                format!("property type [{}] is not integer, string or boolean", listed.join(", "))
            })
        }
        Some(other) => Some(format!("property type {} is not integer, string or boolean", describe(other))),
    }
}

/// RFC 9110 `tchar`.
fn is_tchar(c: char) -> bool {
    c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c)
}

/// JSON pointer escaping of one reference token (RFC 6901).
fn escape_pointer(token: &str) -> String {
    token.replace('~', "~0").replace('/', "~1")
}

/// "null", "a boolean", "an integer", "a number", "a string", "an array" or "an object".
fn kind_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "an integer",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// A value for a message without serializing containers (which could be arbitrarily deep):
/// scalars as JSON text (shortened), containers by kind.
fn describe(value: &Value) -> String {
    match value {
        Value::Array(_) | Value::Object(_) => kind_of(value).to_owned(),
        scalar => clip(&scalar.to_string(), 200),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Checks one tool and compares the sorted, de-duplicated problem ids.
    #[track_caller]
    fn check(tool: Value, expected: &[&str]) -> Vec<Problem> {
        let found = check_tools([tool], &Limits::default());
        let mut ids: Vec<&str> = found.iter().map(|(_, p)| p.id).collect();
        ids.sort_unstable();
        ids.dedup();
        let mut want = expected.to_vec();
        want.sort_unstable();
        assert_eq!(ids, want, "problems: {found:#?}");
        found.into_iter().map(|(_, p)| p).collect()
    }

    fn tool(input: Value) -> Value {
        let mut tool = Map::new();
        tool.insert("name".to_owned(), json!("t"));
        tool.insert("inputSchema".to_owned(), input);
        Value::Object(tool)
    }

    fn severities(problems: &[Problem], id: &str) -> Vec<Severity> {
        problems.iter().filter(|p| p.id == id).map(|p| p.severity).collect()
    }

    // ---- T-1 ----

    #[test]
    fn t1_minimal_tool_passes() {
        check(tool(json!({"type": "object"})), &[]);
        check(tool(json!({"type": "object", "additionalProperties": false})), &[]);
    }

    #[test]
    fn t1_missing_null_or_wrong_root_type_fails() {
        check(json!({"name": "t"}), &["T-1"]);
        check(tool(Value::Null), &["T-1"]);
        check(tool(json!([])), &["T-1"]);
        check(tool(json!({})), &["T-1"]);
        check(tool(json!({"type": "string"})), &["T-1"]);
        check(tool(json!({"type": ["object"]})), &["T-1"]);
        check(json!("not a tool"), &["T-1"]);
    }

    // ---- T-2 ----

    #[test]
    fn t2_invalid_in_default_dialect_fails() {
        let p = check(tool(json!({"type": "object", "minProperties": -1})), &["T-2"]);
        assert!(p[0].message.contains("draft 2020-12"), "{}", p[0].message);
        check(tool(json!({"type": "object", "properties": {"a": {"type": "strin"}}})), &["T-2"]);
    }

    #[test]
    fn t2_declared_dialects_are_used() {
        // draft-07 allows array-form `items`; in 2020-12 `items` must be a single schema.
        let d7 = json!({
            "$schema": "http://json-schema.org/draft-07/schema#",
            "type": "object",
            "properties": {"a": {"type": "array", "items": [{"type": "string"}]}}
        });
        check(tool(d7), &[]);
        let d2020 = json!({
            "type": "object",
            "properties": {"a": {"type": "array", "items": [{"type": "string"}]}}
        });
        check(tool(d2020), &["T-2"]);
        for uri in [
            "https://json-schema.org/draft/2020-12/schema",
            "https://json-schema.org/draft/2019-09/schema",
            "http://json-schema.org/draft-06/schema#",
            "http://json-schema.org/draft-04/schema#",
        ] {
            check(tool(json!({"$schema": uri, "type": "object"})), &[]);
        }
        // draft-04 exclusiveMinimum is a boolean; a number is invalid there.
        check(
            tool(json!({
                "$schema": "http://json-schema.org/draft-04/schema#",
                "type": "object",
                "properties": {"n": {"type": "number", "minimum": 1, "exclusiveMinimum": 1}}
            })),
            &["T-2"],
        );
    }

    #[test]
    fn t2_unknown_dialect_is_a_clear_warning() {
        let p = check(tool(json!({"$schema": "https://example.com/my-dialect", "type": "object"})), &["T-2"]);
        assert_eq!(p[0].severity, Severity::Warn);
        assert!(p[0].message.contains("unsupported dialect `https://example.com/my-dialect`"));
        let p = check(tool(json!({"$schema": 7, "type": "object"})), &["T-2"]);
        assert_eq!(p[0].severity, Severity::Fail);
    }

    #[test]
    fn t2_output_schema_kept_and_broken() {
        check(
            json!({"name": "t", "inputSchema": {"type": "object"},
                   "outputSchema": {"type": "array", "items": {"type": "integer"}}}),
            &[],
        );
        check(json!({"name": "t", "inputSchema": {"type": "object"}, "outputSchema": null}), &["T-2"]);
        check(
            json!({"name": "t", "inputSchema": {"type": "object"},
                   "outputSchema": {"type": 12}}),
            &["T-2"],
        );
    }

    // ---- T-3 ----

    #[test]
    fn t3_local_refs_anchors_and_ids_resolve() {
        check(
            tool(json!({
                "type": "object",
                "properties": {"a": {"$ref": "#/$defs/a"}, "b": {"$ref": "#b"}},
                "$defs": {"a": {"type": "string"}, "b": {"$anchor": "b", "type": "integer"}}
            })),
            &[],
        );
        check(
            tool(json!({
                "$id": "https://example.com/root.json",
                "type": "object",
                "properties": {"c": {"$ref": "child.json"}},
                "$defs": {"c": {"$id": "child.json", "type": "boolean"}}
            })),
            &[],
        );
        check(
            tool(json!({
                "$schema": "http://json-schema.org/draft-07/schema#",
                "type": "object",
                "properties": {"a": {"$ref": "#/definitions/a"}},
                "definitions": {"a": {"type": "string"}}
            })),
            &[],
        );
    }

    #[test]
    fn t3_unresolvable_local_ref_fails() {
        let p = check(tool(json!({"type": "object", "properties": {"a": {"$ref": "#/$defs/missing"}}})), &["T-3"]);
        assert_eq!(severities(&p, "T-3"), vec![Severity::Fail]);
        let p = check(tool(json!({"type": "object", "properties": {"a": {"$ref": "#nowhere"}}})), &["T-3"]);
        assert_eq!(severities(&p, "T-3"), vec![Severity::Fail]);
    }

    #[test]
    fn t3_remote_ref_is_rejected_quickly_without_fetching() {
        let started = Instant::now();
        // A routable address that would hang a connect attempt: any fetch would show in time.
        let p = check(
            tool(json!({
                "type": "object",
                "properties": {"a": {"$ref": "http://10.255.255.1/schema.json"}}
            })),
            &["T-3"],
        );
        assert!(started.elapsed() < Duration::from_secs(1));
        assert_eq!(severities(&p, "T-3"), vec![Severity::Warn]);
        assert!(p[0].message.contains("http://10.255.255.1/schema.json"));
        assert!(p[0].message.contains("not fetched"));
        // Relative refs with no base are external too.
        let p = check(tool(json!({"type": "object", "properties": {"a": {"$ref": "other.json"}}})), &["T-3"]);
        assert_eq!(severities(&p, "T-3"), vec![Severity::Warn]);
    }

    #[test]
    fn t3_retriever_refuses_and_records() {
        let retriever = RefusingRetriever::default();
        let result = jsonschema::options()
            .with_retriever(retriever.clone())
            .build(&json!({"$ref": "https://example.com/s.json"}));
        assert!(result.is_err());
        assert_eq!(retriever.asked(), vec!["https://example.com/s.json".to_owned()]);
    }

    // ---- T-4 ----

    /// `levels` nested object properties. Built by moving values (the `json!` macro would
    /// copy the inner value at every level: quadratic).
    fn nested(levels: usize) -> Value {
        let mut v = json!({"type": "string"});
        for _ in 0..levels {
            let mut properties = Map::new();
            properties.insert("a".to_owned(), v);
            let mut schema = Map::new();
            schema.insert("type".to_owned(), json!("object"));
            schema.insert("properties".to_owned(), Value::Object(properties));
            v = Value::Object(schema);
        }
        v
    }

    #[test]
    fn t4_depth_within_limit_passes() {
        check(tool(nested(30)), &[]);
    }

    #[test]
    fn t4_depth_over_limit_warns() {
        let p = check(tool(nested(50)), &["T-4"]);
        assert_eq!(p[0].severity, Severity::Warn);
        assert!(p[0].message.contains("32"), "{}", p[0].message);
    }

    #[test]
    fn t4_ten_thousand_levels_neither_hang_nor_overflow() {
        // Building and dropping such a `Value` recurses inside serde_json, so do that on a
        // thread with a large stack; the check itself is iterative.
        std::thread::Builder::new()
            .stack_size(256 << 20)
            .spawn(|| {
                let deep = tool(nested(10_000));
                let started = Instant::now();
                let found = check_tools([deep.clone()], &Limits::default());
                assert!(started.elapsed() < Duration::from_secs(1));
                let ids: Vec<&str> = found.iter().map(|(_, p)| p.id).collect();
                assert_eq!(ids, vec!["T-4"]);
                // Deep values in places that end up in messages are never serialized.
                let mut deep_value = json!("x");
                for _ in 0..10_000 {
                    deep_value = Value::Array(vec![deep_value]);
                }
                let mut schema = Map::new();
                schema.insert("type".to_owned(), deep_value);
                let found = check_tools([tool(Value::Object(schema))], &Limits::default());
                let ids: Vec<&str> = found.iter().map(|(_, p)| p.id).collect();
                assert_eq!(ids, vec!["T-1", "T-4"]);
                assert!(found[0].1.message.contains("found an array"));
            })
            .unwrap()
            .join()
            .unwrap();
    }

    #[test]
    fn t4_subschema_count_over_limit_warns() {
        let mut props = Map::new();
        for i in 0..50 {
            props.insert(format!("p{i}"), json!({"type": "string"}));
        }
        let schema = json!({"type": "object", "properties": props});
        let limits = Limits { max_subschemas: 20, ..Limits::default() };
        let found = check_tools([tool(schema.clone())], &limits);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].1.id, "T-4");
        assert!(found[0].1.message.contains("20 subschemas"));
        check(tool(schema), &[]);
    }

    #[test]
    fn t4_time_budget_is_reported_once() {
        let limits = Limits { max_time: Duration::ZERO, ..Limits::default() };
        let tools = vec![tool(json!({"type": "object"})), json!({"name": "u", "inputSchema": {"type": "object"}})];
        let found = check_tools(tools.clone(), &limits);
        let ids: Vec<&str> = found.iter().map(|(_, p)| p.id).collect();
        assert_eq!(ids, vec!["T-4"]);
    }

    #[test]
    fn t4_deep_non_schema_json_is_bounded() {
        let mut v = json!(1);
        for _ in 0..300 {
            v = Value::Array(vec![v]);
        }
        check(tool(json!({"type": "object", "default": {"x": v}})), &["T-4"]);
    }

    // ---- T-8 ----

    #[test]
    fn t8_names() {
        check(json!({"name": "a.b-c_D9", "inputSchema": {"type": "object"}}), &[]);
        check(json!({"inputSchema": {"type": "object"}}), &["T-8"]);
        let p = check(json!({"name": 3, "inputSchema": {"type": "object"}}), &["T-8"]);
        assert_eq!(p[0].severity, Severity::Fail);
        let p = check(json!({"name": "", "inputSchema": {"type": "object"}}), &["T-8"]);
        assert_eq!(p[0].severity, Severity::Warn);
        check(json!({"name": "has space", "inputSchema": {"type": "object"}}), &["T-8"]);
        check(json!({"name": "a/b", "inputSchema": {"type": "object"}}), &["T-8"]);
        check(json!({"name": "x".repeat(128), "inputSchema": {"type": "object"}}), &[]);
        check(json!({"name": "x".repeat(129), "inputSchema": {"type": "object"}}), &["T-8"]);
    }

    #[test]
    fn t8_duplicates_warn_and_labels_fall_back_to_index() {
        let tools = vec![
            tool(json!({"type": "object"})),
            json!({"name": "u", "inputSchema": {"type": "object"}}),
            tool(json!({"type": "object"})),
            json!({"inputSchema": {"type": "object"}}),
        ];
        let found = check_tools(tools.clone(), &Limits::default());
        assert_eq!(found.len(), 2, "{found:#?}");
        assert_eq!(found[0].0, "t");
        assert_eq!(found[0].1.id, "T-8");
        assert_eq!(found[0].1.severity, Severity::Warn);
        assert!(found[0].1.message.contains("tools[0]"));
        assert_eq!(found[1].0, "tools[3]");
        // Case-sensitive: `T` and `t` are different tools.
        let tools = vec![tool(json!({"type": "object"})), json!({"name": "T", "inputSchema": {"type": "object"}})];
        assert!(check_tools(tools.clone(), &Limits::default()).is_empty());
    }

    // ---- T-9 ----

    #[test]
    fn t9_annotation_types() {
        check(
            json!({"name": "t", "inputSchema": {"type": "object"},
                   "annotations": {"readOnlyHint": true, "destructiveHint": false,
                                   "idempotentHint": true, "openWorldHint": false, "title": "T"}}),
            &[],
        );
        check(
            json!({"name": "t", "inputSchema": {"type": "object"},
                   "annotations": {"readOnlyHint": "yes"}}),
            &["T-9"],
        );
        check(json!({"name": "t", "inputSchema": {"type": "object"}, "annotations": []}), &["T-9"]);
    }

    // ---- H-12 ----

    fn with_header(prop: Value) -> Value {
        tool(json!({"type": "object", "properties": {"region": prop}}))
    }

    #[test]
    fn h12_valid_headers_pass() {
        check(with_header(json!({"type": "string", "x-mcp-header": "Region"})), &[]);
        check(with_header(json!({"type": "integer", "x-mcp-header": "X!#$%&'*+-.^_`|~9"})), &[]);
        check(with_header(json!({"type": ["boolean", "null"], "x-mcp-header": "Flag"})), &[]);
        check(
            tool(json!({"type": "object", "properties": {"outer": {"type": "object",
                "properties": {"inner": {"type": "string", "x-mcp-header": "Inner"}}}}})),
            &[],
        );
    }

    #[test]
    fn h12_bad_values_fail() {
        check(with_header(json!({"type": "string", "x-mcp-header": ""})), &["H-12"]);
        check(with_header(json!({"type": "string", "x-mcp-header": "Bad Name"})), &["H-12"]);
        check(with_header(json!({"type": "string", "x-mcp-header": "Ré"})), &["H-12"]);
        check(with_header(json!({"type": "string", "x-mcp-header": "a\u{1}"})), &["H-12"]);
        check(with_header(json!({"type": "string", "x-mcp-header": 5})), &["H-12"]);
    }

    #[test]
    fn h12_duplicates_are_case_insensitive() {
        check(
            tool(json!({"type": "object", "properties": {
                "a": {"type": "string", "x-mcp-header": "Region"},
                "b": {"type": "string", "x-mcp-header": "REGION"}}})),
            &["H-12"],
        );
    }

    #[test]
    fn h12_only_primitive_types() {
        check(with_header(json!({"type": "number", "x-mcp-header": "N"})), &["H-12"]);
        check(with_header(json!({"type": "object", "x-mcp-header": "O"})), &["H-12"]);
        check(with_header(json!({"x-mcp-header": "Untyped"})), &["H-12"]);
        check(with_header(json!({"type": ["string", "number"], "x-mcp-header": "M"})), &["H-12"]);
    }

    #[test]
    fn h12_placement_only_through_properties() {
        for schema in [
            json!({"type": "object", "x-mcp-header": "Root"}),
            json!({"type": "object", "properties": {"l": {"type": "array",
                "items": {"type": "string", "x-mcp-header": "Item"}}}}),
            json!({"type": "object", "anyOf": [{"properties": {"a":
                {"type": "string", "x-mcp-header": "A"}}}]}),
            json!({"type": "object", "not": {"type": "string", "x-mcp-header": "N"}}),
            json!({"type": "object", "if": {"properties": {"a":
                {"type": "string", "x-mcp-header": "A"}}}}),
            json!({"type": "object", "properties": {"a": {"$ref": "#/$defs/a"}},
                "$defs": {"a": {"type": "string", "x-mcp-header": "A"}}}),
        ] {
            check(tool(schema), &["H-12"]);
        }
    }

    #[test]
    fn h12_property_named_like_the_keyword_is_not_an_annotation() {
        check(tool(json!({"type": "object", "properties": {"x-mcp-header": {"type": "number"}}})), &[]);
    }

    #[test]
    fn h12_ignores_output_schema() {
        check(
            json!({"name": "t", "inputSchema": {"type": "object"},
                   "outputSchema": {"type": "object", "x-mcp-header": "Root"}}),
            &[],
        );
    }

    // ---- compile_output_schema / validate_instance ----

    #[test]
    fn output_schema_compiles_and_validates_with_paths() {
        let v = compile_output_schema(&json!({
            "type": "object",
            "properties": {"n": {"type": "integer"}, "l": {"type": "array", "items": {"type": "string"}}},
            "required": ["n"]
        }))
        .unwrap();
        assert!(validate_instance(&v, &json!({"n": 1, "l": ["a"]})).is_ok());
        let errors = validate_instance(&v, &json!({"n": "x", "l": [1]})).unwrap_err();
        assert_eq!(errors.len(), 2, "{errors:?}");
        assert!(errors.iter().any(|e| e.starts_with("`/n`")), "{errors:?}");
        assert!(errors.iter().any(|e| e.starts_with("`/l/0`")), "{errors:?}");
        let errors = validate_instance(&v, &json!(3)).unwrap_err();
        assert!(errors[0].starts_with("`(root)`"), "{errors:?}");
        // Non-object output schemas (arrays, primitives) are fine: any JSON Schema.
        let v = compile_output_schema(&json!({"type": "array"})).unwrap();
        assert!(validate_instance(&v, &json!([])).is_ok());
    }

    #[test]
    fn output_schema_refusals() {
        let e = compile_output_schema(&json!({"$ref": "https://example.com/x.json"})).unwrap_err().to_string();
        assert!(e.contains("not fetched"), "{e}");
        let e = compile_output_schema(&json!({"$schema": "urn:custom", "type": "object"})).unwrap_err().to_string();
        assert!(e.contains("unsupported dialect"), "{e}");
        let e = compile_output_schema(&json!({"$ref": "#/$defs/nope"})).unwrap_err().to_string();
        assert!(e.contains("unresolvable local $ref"), "{e}");
        assert!(compile_output_schema(&json!({"type": "nope"})).is_err());
        assert!(compile_output_schema(&nested(100)).is_err());
    }
}

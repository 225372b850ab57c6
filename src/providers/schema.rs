//! A tool's `inputSchema` as a model provider accepts it, and the model's arguments checked
//! against the schema the server actually listed.
//!
//! **Two schemas, one rule.** What the model sees may be a *lowered* schema ([`lower`]): model
//! APIs reject some valid JSON Schema (a root that is not an object schema, `anyOf` at the root,
//! `properties: []`, arrays without `items`, unknown keywords) and cannot follow references
//! outside the document. What the model's arguments are validated against is always the
//! server's *original* schema ([`ArgumentValidator`]): a lowered schema is a hint to the model,
//! never the contract.
//!
//! [`lower`] is pure and deterministic (the same input gives the same bytes), bounded (subschema
//! nesting, `$ref` depth and the size added by inlining are capped) and never panics, whatever
//! JSON it is given. Every change it makes is listed in [`Lowered::notes`] for the report. The
//! steps, in order:
//!
//! 1. every subschema: non-portable keywords removed (`$schema`, `$id`, `$anchor`, `$comment`,
//!    `$dynamicRef`, `$dynamicAnchor`, 2019-09 `$recursiveRef`/`$recursiveAnchor`, `x-*`,
//!    `readOnly`, `writeOnly`, `contentMediaType`, `contentEncoding`, `deprecated`, `examples`,
//!    `strict`), keys inside `properties` being property names, not keywords;
//! 2. older dialects normalised to 2020-12: `definitions` → `$defs`, tuple `items: [..]` →
//!    `prefixItems` (and `additionalItems` → `items`), `dependencies` → `dependentRequired` /
//!    `dependentSchemas`, draft-04 boolean `exclusiveMinimum`/`exclusiveMaximum` → numbers;
//! 3. local `$ref`s (`#`, `#/json/pointer` with `~0`/`~1` and percent escapes, `#anchor`)
//!    inlined, at most [`MAX_REF_DEPTH`] deep and [`MAX_INLINED_BYTES`] in all; a recursive
//!    reference is kept as `$defs` + `$ref` for [`Family::OpenAi`] (it supports recursion) and
//!    unrolled [`ANTHROPIC_UNROLL`] levels then cut for [`Family::Anthropic`]; a reference to
//!    another document is never fetched and becomes `{}`;
//! 4. known rejections fixed: `properties` that is not an object → `{}`, `type: array` without
//!    `items` → `items: {}`, boolean subschemas → `{}` / `{"not": {}}` (kept where idiomatic:
//!    `additionalProperties`, `unevaluatedProperties`);
//! 5. the root: `allOf` merged into its `properties`/`required`; `anyOf`/`oneOf` of object
//!    branches merged into the union of their properties, `required` keeping what every branch
//!    requires, the choice told in `description`; finally `type: object` and `properties`
//!    present (a root that is no object schema at all becomes one with no properties).
//!
//! Nothing adds `strict`: schemas are sent non-strict.

use std::collections::{HashSet, VecDeque};

use crate::text::{clip, json_kind};
use serde_json::{Map, Value, json};

use crate::conformance::schema::{UnusableSchema, compile_checked, validate_instance};
use crate::jcs;

/// The most `$ref`s inlined inside one another.
pub(crate) const MAX_REF_DEPTH: usize = 32;

/// The most canonical-JSON bytes (estimated) that inlining `$ref`s may add to a schema.
pub(crate) const MAX_INLINED_BYTES: usize = 256 * 1024;

/// The most nested subschema levels kept; deeper ones become `{}`.
pub(crate) const MAX_SCHEMA_DEPTH: usize = 64;

/// How many times a recursive definition is expanded for [`Family::Anthropic`] before the rest
/// is cut (each level repeats the whole shape: deeper unrolling only costs the model tokens).
pub(crate) const ANTHROPIC_UNROLL: usize = 3;

/// The most JSON levels of a data value (`enum`, `const`, `default`, unknown keywords) kept.
const MAX_DATA_DEPTH: usize = 64;

/// The most nodes visited when looking for a `#name` anchor.
const MAX_ANCHOR_SCAN: usize = 100_000;

/// The most notes kept in [`Lowered::notes`] (a last one says how many were left out).
const MAX_NOTES: usize = 40;

/// The most argument errors [`ArgumentValidator::validate`] keeps.
const MAX_ARGUMENT_ERRORS: usize = 5;

/// Keywords no provider needs and some reject; removed wherever they are keywords.
const DROPPED: &[&str] = &[
    "$schema",
    "$id",
    "$anchor",
    "$comment",
    "$dynamicRef",
    "$dynamicAnchor",
    "$recursiveRef",
    "$recursiveAnchor",
    "$vocabulary",
    "readOnly",
    "writeOnly",
    "contentMediaType",
    "contentEncoding",
    "contentSchema",
    "deprecated",
    "examples",
    "strict",
];

/// Keywords whose value is one subschema.
const SINGLE: &[&str] = &["items", "contains", "not", "if", "then", "else", "propertyNames", "unevaluatedItems"];

/// Keywords whose value is one subschema, where `true`/`false` is kept as is.
const SINGLE_OR_BOOL: &[&str] = &["additionalProperties", "unevaluatedProperties"];

/// Keywords whose value is an array of subschemas.
const ARRAYS: &[&str] = &["prefixItems", "allOf", "anyOf", "oneOf"];

/// Keywords whose value maps names to subschemas.
const MAPS: &[&str] = &["properties", "patternProperties", "dependentSchemas"];

/// Annotations a `$ref`'s sibling may override in the inlined target.
const ANNOTATIONS: &[&str] = &["title", "description", "default"];

/// The description of a recursive branch cut for [`Family::Anthropic`].
const CUT_DESCRIPTION: &str = "Recursive structure: deeper levels have the same shape as the enclosing one.";

/// Which provider's schema rules to lower for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Family {
    /// OpenAI Chat Completions (`tools[].function.parameters`) and compatible servers.
    OpenAi,
    /// Anthropic Messages (`tools[].input_schema`).
    Anthropic,
}

/// A schema as a model is shown it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Lowered {
    /// The lowered schema (always an object schema with `type: object` and `properties`).
    pub schema: Value,
    /// What was changed, in order, for the report (empty when the schema was sent as is).
    pub notes: Vec<String>,
    /// `sha256:` and the hex SHA-256 of the canonical JSON (RFC 8785) of `schema`.
    pub sha256: String,
}

/// Lowers a tool's `inputSchema` for `family` (see the module documentation for the steps).
/// Pure, deterministic and total: any JSON value gives an object schema.
pub(crate) fn lower(schema: &Value, family: Family) -> Lowered {
    let mut lowering = Lowering::new(schema, family);
    let mut root = match schema {
        Value::Object(map) => {
            lowering.stack.push(String::new());
            let lowered = lowering.object(map, "", 0);
            lowering.stack.clear();
            match lowered {
                Value::Object(map) => map,
                _ => Map::new(),
            }
        }
        other => {
            lowering.notes.note(format!(
                "the root is {}, not an object schema: replaced by an object schema with no properties",
                describe_root(other)
            ));
            empty_object_schema()
        }
    };
    if schema.is_object() {
        lowering.root_combinators(&mut root);
        lowering.root_type(&mut root);
    }
    if family == Family::OpenAi {
        let defs = lowering.recursive_definitions();
        if !defs.is_empty() {
            root.insert("$defs".to_owned(), Value::Object(defs));
        }
    }
    let schema = Value::Object(root);
    let sha256 = jcs::hash(&schema);
    Lowered { schema, notes: lowering.notes.finish(), sha256 }
}

/// The outcome of checking a model's arguments against a tool's original schema.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Validation {
    /// The arguments satisfy the schema.
    Valid,
    /// The arguments violate the schema: at most five messages, each starting with the
    /// instance path as a JSON pointer (`(root)` for the whole arguments object), plus a last
    /// `… and N more` when there were more.
    Invalid(Vec<String>),
    /// The schema cannot be compiled (unsupported dialect, an external `$ref` that is never
    /// fetched, a broken local `$ref`, an invalid or oversized schema): there is no evidence
    /// either way. The text says why.
    SchemaUnusable(String),
}

/// A tool's original `inputSchema`, compiled once, to validate every call of that tool.
pub(crate) struct ArgumentValidator {
    compiled: Result<jsonschema::Validator, UnusableSchema>,
}

impl std::fmt::Debug for ArgumentValidator {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("ArgumentValidator")
            .field("unusable", &self.compiled.as_ref().err())
            .finish_non_exhaustive()
    }
}

impl ArgumentValidator {
    /// Compiles `original_schema` (the server's schema, never a lowered one) under the dialect
    /// its `$schema` names (2020-12 when absent), bounded, with external `$ref`s refused and
    /// never fetched. A schema that does not compile is kept as the reason: every
    /// [`validate`](Self::validate) then answers [`Validation::SchemaUnusable`].
    pub(crate) fn new(original_schema: &Value) -> Self {
        Self { compiled: compile_checked(original_schema, "inputSchema") }
    }

    /// Why the schema cannot be used, when it cannot.
    #[cfg(test)]
    pub(crate) fn unusable(&self) -> Option<String> {
        self.compiled.as_ref().err().map(ToString::to_string)
    }

    /// Checks one call's arguments.
    pub(crate) fn validate(&self, arguments: &Value) -> Validation {
        let validator = match &self.compiled {
            Ok(validator) => validator,
            Err(reason) => return Validation::SchemaUnusable(reason.to_string()),
        };
        match validate_instance(validator, arguments) {
            Ok(()) => Validation::Valid,
            Err(mut errors) => {
                if errors.len() > MAX_ARGUMENT_ERRORS {
                    let more = errors.len() - MAX_ARGUMENT_ERRORS;
                    errors.truncate(MAX_ARGUMENT_ERRORS);
                    errors.push(format!("… and {more} more"));
                }
                Validation::Invalid(errors)
            }
        }
    }
}

/// Checks `arguments` against `original_schema` once (compiles it each time: a runner that
/// validates many calls of one tool keeps an [`ArgumentValidator`] instead).
#[cfg(test)]
pub(crate) fn validate_arguments(original_schema: &Value, arguments: &Value) -> Validation {
    ArgumentValidator::new(original_schema).validate(arguments)
}

/// The notes of one lowering: free lines in order, then one line per removed keyword.
#[derive(Default)]
struct Notes {
    lines: Vec<String>,
    seen: HashSet<String>,
    /// (keyword, places, first place)
    removed: Vec<(String, usize, String)>,
}

impl Notes {
    fn note(&mut self, line: String) {
        if self.seen.insert(line.clone()) {
            self.lines.push(line);
        }
    }

    fn removed(&mut self, keyword: &str, path: &str) {
        match self.removed.iter_mut().find(|(known, _, _)| known == keyword) {
            Some((_, places, _)) => *places += 1,
            None => self.removed.push((keyword.to_owned(), 1, path.to_owned())),
        }
    }

    fn finish(self) -> Vec<String> {
        let mut all = self.lines;
        for (keyword, places, first) in self.removed {
            let keyword = clip(&keyword, 120);
            all.push(if places == 1 {
                format!("removed `{keyword}` at {}", at(&first))
            } else {
                format!("removed `{keyword}` in {places} places, the first at {}", at(&first))
            });
        }
        if all.len() > MAX_NOTES {
            let more = all.len() - (MAX_NOTES - 1);
            all.truncate(MAX_NOTES - 1);
            all.push(format!("… and {more} more changes"));
        }
        all
    }
}

/// The state of one [`lower`] call.
struct Lowering<'a> {
    root: &'a Value,
    family: Family,
    notes: Notes,
    /// The pointers (into `root`) of the schemas being expanded, outermost first; the root
    /// itself is `""`.
    stack: Vec<String>,
    /// Estimated canonical bytes produced inside inlined references so far.
    inlined_bytes: usize,
    /// [`Family::OpenAi`]: recursive definitions kept, as (pointer, name under `$defs`).
    recursive: Vec<(String, String)>,
}

impl<'a> Lowering<'a> {
    fn new(root: &'a Value, family: Family) -> Self {
        Self { root, family, notes: Notes::default(), stack: Vec::new(), inlined_bytes: 0, recursive: Vec::new() }
    }

    /// Counts bytes produced while inside an inlined reference.
    fn count(&mut self, bytes: usize) {
        if self.stack.len() > 1 {
            self.inlined_bytes = self.inlined_bytes.saturating_add(bytes);
        }
    }

    /// Any subschema: objects lowered, `true` → `{}`, `false` → `{"not": {}}`.
    fn schema(&mut self, node: &Value, path: &str, depth: usize) -> Value {
        match node {
            Value::Object(map) => self.object(map, path, depth),
            Value::Bool(true) => Value::Object(Map::new()),
            Value::Bool(false) => json!({"not": {}}),
            other => {
                self.notes.note(format!(
                    "{}: a schema must be an object or a boolean, found {}; replaced by `{{}}`",
                    at(path),
                    json_kind(other)
                ));
                Value::Object(Map::new())
            }
        }
    }

    /// A subschema where a boolean is kept as is.
    fn schema_or_bool(&mut self, node: &Value, path: &str, depth: usize) -> Value {
        match node {
            Value::Bool(flag) => Value::Bool(*flag),
            other => self.schema(other, path, depth),
        }
    }

    fn object(&mut self, map: &Map<String, Value>, path: &str, depth: usize) -> Value {
        if depth > MAX_SCHEMA_DEPTH {
            self.notes.note(format!(
                "{}: subschemas nested deeper than {MAX_SCHEMA_DEPTH} levels replaced by `{{}}`",
                at(path)
            ));
            return Value::Object(Map::new());
        }
        let siblings = self.keywords(map, path, depth);
        let mut lowered = match map.get("$ref") {
            None => Value::Object(siblings),
            Some(Value::String(reference)) => {
                let target = self.reference(reference, path, depth);
                combine(target, siblings)
            }
            Some(other) => {
                self.notes.note(format!("{}: `$ref` is {}, not a string; removed", at(path), json_kind(other)));
                Value::Object(siblings)
            }
        };
        if let Value::Object(map) = &mut lowered {
            if declares_array(map) && !map.contains_key("items") {
                map.insert("items".to_owned(), Value::Object(Map::new()));
                self.notes.note(format!("{}: `type: array` without `items`: added `items: {{}}`", at(path)));
            }
        }
        lowered
    }

    /// The keywords of one schema object, lowered, `$ref` left out.
    fn keywords(&mut self, map: &Map<String, Value>, path: &str, depth: usize) -> Map<String, Value> {
        let mut out = Map::new();
        for (key, value) in map {
            let here = child(path, key);
            let keyword = key.as_str();
            let lowered = if keyword == "$ref" {
                continue;
            } else if DROPPED.contains(&keyword) || keyword.starts_with("x-") {
                self.notes.removed(keyword, path);
                continue;
            } else if keyword == "$defs" || keyword == "definitions" {
                // References are resolved against the original document and inlined.
                if !value.as_object().is_some_and(Map::is_empty) {
                    self.notes.removed(keyword, path);
                }
                continue;
            } else if MAPS.contains(&keyword) {
                self.schema_map(keyword, value, path, depth)
            } else if keyword == "items" {
                if let Value::Array(items) = value {
                    let prefix = self.schema_list(items, &here, depth);
                    self.notes.note(format!("{}: tuple `items: [..]` became `prefixItems`", at(path)));
                    out.insert("prefixItems".to_owned(), prefix);
                    if let Some(additional) = map.get("additionalItems") {
                        let rest = self.schema(additional, &child(path, "additionalItems"), depth + 1);
                        out.insert("items".to_owned(), rest);
                    }
                    self.count(32);
                    continue;
                }
                self.schema(value, &here, depth + 1)
            } else if keyword == "additionalItems" {
                if !matches!(map.get("items"), Some(Value::Array(_))) {
                    self.notes.removed(keyword, path);
                }
                continue;
            } else if SINGLE.contains(&keyword) {
                self.schema(value, &here, depth + 1)
            } else if SINGLE_OR_BOOL.contains(&keyword) {
                self.schema_or_bool(value, &here, depth + 1)
            } else if ARRAYS.contains(&keyword) {
                match value {
                    Value::Array(items) => self.schema_list(items, &here, depth),
                    other => {
                        self.notes.note(format!(
                            "{}: `{keyword}` is {}, not an array; removed",
                            at(path),
                            json_kind(other)
                        ));
                        continue;
                    }
                }
            } else if keyword == "dependencies" {
                self.dependencies(value, path, depth, &mut out);
                continue;
            } else if keyword == "required" {
                match self.required(value, path) {
                    Some(required) => required,
                    None => continue,
                }
            } else if keyword == "type" {
                if is_type(value) {
                    value.clone()
                } else {
                    self.notes.note(format!("{}: `type` is not a type name or a list of them; removed", at(path)));
                    continue;
                }
            } else if (keyword == "exclusiveMinimum" || keyword == "exclusiveMaximum") && value.is_boolean() {
                continue; // draft-04 form: handled below
            } else {
                match bounded_clone(value, MAX_DATA_DEPTH) {
                    Some(copy) => {
                        self.count(jcs::canonical(&copy).len());
                        copy
                    }
                    None => {
                        self.notes.note(format!(
                            "{}: the value of `{}` nests deeper than {MAX_DATA_DEPTH} levels; removed",
                            at(path),
                            clip(keyword, 120)
                        ));
                        continue;
                    }
                }
            };
            self.count(key.len() + 4);
            out.insert(key.clone(), lowered);
        }
        self.draft4_exclusive(map, path, &mut out);
        out
    }

    /// Draft-04 `exclusiveMinimum: true` (with `minimum`) → 2020-12 `exclusiveMinimum: n`.
    fn draft4_exclusive(&mut self, map: &Map<String, Value>, path: &str, out: &mut Map<String, Value>) {
        for (exclusive, bound) in [("exclusiveMinimum", "minimum"), ("exclusiveMaximum", "maximum")] {
            let Some(Value::Bool(flag)) = map.get(exclusive) else { continue };
            if *flag {
                if let Some(limit) = out.shift_remove(bound).filter(Value::is_number) {
                    out.insert(exclusive.to_owned(), limit);
                }
            }
            self.notes.note(format!("{}: draft-04 boolean `{exclusive}` became the 2020-12 form", at(path)));
        }
    }

    fn schema_list(&mut self, items: &[Value], path: &str, depth: usize) -> Value {
        Value::Array(
            items
                .iter()
                .enumerate()
                .map(|(index, item)| self.schema(item, &child(path, &index.to_string()), depth + 1))
                .collect(),
        )
    }

    /// `properties`, `patternProperties`, `dependentSchemas`: names are kept as given.
    fn schema_map(&mut self, keyword: &str, value: &Value, path: &str, depth: usize) -> Value {
        let here = child(path, keyword);
        match value {
            Value::Object(map) => Value::Object(
                map.iter()
                    .map(|(name, schema)| {
                        self.count(name.len() + 4);
                        (name.clone(), self.schema(schema, &child(&here, name), depth + 1))
                    })
                    .collect(),
            ),
            Value::Array(items) if items.is_empty() => {
                self.notes.note(format!("{}: `{keyword}: []` became `{{}}`", at(path)));
                Value::Object(Map::new())
            }
            other => {
                self.notes.note(format!(
                    "{}: `{keyword}` is {}, not an object; became `{{}}`",
                    at(path),
                    json_kind(other)
                ));
                Value::Object(Map::new())
            }
        }
    }

    /// Draft-07 `dependencies` → `dependentRequired` (name lists) and `dependentSchemas`.
    fn dependencies(&mut self, value: &Value, path: &str, depth: usize, out: &mut Map<String, Value>) {
        let Value::Object(map) = value else {
            self.notes.removed("dependencies", path);
            return;
        };
        let mut required = Map::new();
        let mut schemas = Map::new();
        for (name, dependency) in map {
            match dependency {
                Value::Array(names) => {
                    let names: Vec<Value> = names.iter().filter(|n| n.is_string()).cloned().collect();
                    required.insert(name.clone(), Value::Array(names));
                }
                schema => {
                    let here = child(&child(path, "dependentSchemas"), name);
                    schemas.insert(name.clone(), self.schema(schema, &here, depth + 1));
                }
            }
        }
        if !required.is_empty() {
            out.insert("dependentRequired".to_owned(), Value::Object(required));
        }
        if !schemas.is_empty() {
            out.insert("dependentSchemas".to_owned(), Value::Object(schemas));
        }
        self.notes.note(format!("{}: draft-07 `dependencies` became `dependentRequired`/`dependentSchemas`", at(path)));
    }

    /// `required` as a list of distinct names; `None` (removed) when it is not a list.
    fn required(&mut self, value: &Value, path: &str) -> Option<Value> {
        let Value::Array(items) = value else {
            self.notes.note(format!("{}: `required` is {}, not a list of names; removed", at(path), json_kind(value)));
            return None;
        };
        let mut names: Vec<Value> = Vec::new();
        for item in items {
            if item.is_string() && !names.contains(item) {
                names.push(item.clone());
            }
        }
        if names.len() != items.len() {
            self.notes.note(format!("{}: `required` had entries that are not distinct names; removed them", at(path)));
        }
        self.count(names.iter().filter_map(Value::as_str).map(|name| name.len() + 3).sum());
        Some(Value::Array(names))
    }

    /// The lowered target of a `$ref` (without the referring object's other keywords).
    fn reference(&mut self, reference: &str, path: &str, depth: usize) -> Value {
        let shown = clip(reference, 120);
        let Some(fragment) = reference.strip_prefix('#') else {
            self.notes.note(format!(
                "{}: `$ref` `{shown}` points outside the document; never fetched, replaced by `{{}}`",
                at(path)
            ));
            return Value::Object(Map::new());
        };
        let Some((pointer, target)) = resolve(self.root, fragment) else {
            self.notes.note(format!("{}: `$ref` `{shown}` does not resolve; replaced by `{{}}`", at(path)));
            return Value::Object(Map::new());
        };
        let open = self.stack.iter().filter(|known| **known == pointer).count();
        if open > 0 {
            match self.family {
                Family::OpenAi => return self.recursive_reference(&pointer),
                Family::Anthropic if open >= ANTHROPIC_UNROLL => {
                    self.notes.note(format!(
                        "recursive `$ref` `#{}`: unrolled {ANTHROPIC_UNROLL} levels, deeper levels replaced by `{{}}` \
                         with a description",
                        clip(&pointer, 120)
                    ));
                    return json!({"description": CUT_DESCRIPTION});
                }
                Family::Anthropic => {}
            }
        }
        if self.stack.len() > MAX_REF_DEPTH {
            self.notes.note(format!(
                "{}: `$ref`s nested deeper than {MAX_REF_DEPTH} levels; the rest replaced by `{{}}`",
                at(path)
            ));
            return Value::Object(Map::new());
        }
        if self.inlined_bytes > MAX_INLINED_BYTES {
            self.notes.note(format!(
                "inlining `$ref`s reached the size cap of {} KiB; the remaining ones replaced by `{{}}`",
                MAX_INLINED_BYTES / 1024
            ));
            return Value::Object(Map::new());
        }
        self.stack.push(pointer);
        let lowered = self.schema(target, path, depth);
        self.stack.pop();
        lowered
    }

    /// [`Family::OpenAi`]: a reference back into a definition being expanded stays a `$ref`
    /// to `#/$defs/<name>` (or `#` for the root), the definition emitted once.
    fn recursive_reference(&mut self, pointer: &str) -> Value {
        if pointer.is_empty() {
            self.notes.note("recursive `$ref` `#` to the root kept (OpenAI supports recursive schemas)".to_owned());
            return json!({"$ref": "#"});
        }
        let name = match self.recursive.iter().find(|(known, _)| known == pointer) {
            Some((_, name)) => name.clone(),
            None => {
                let name = definition_name(pointer, &self.recursive);
                self.notes.note(format!(
                    "recursive `$ref` `#{}` kept as `#/$defs/{name}` (OpenAI supports recursive schemas)",
                    clip(pointer, 120)
                ));
                self.recursive.push((pointer.to_owned(), name.clone()));
                name
            }
        };
        json!({ "$ref": format!("#/$defs/{name}") })
    }

    /// [`Family::OpenAi`]: the recursive definitions, lowered, in the order they were found
    /// (lowering one may find more).
    fn recursive_definitions(&mut self) -> Map<String, Value> {
        let mut defs = Map::new();
        let mut index = 0;
        while let Some((pointer, name)) = self.recursive.get(index).cloned() {
            index += 1;
            let lowered = match resolve_pointer(self.root, &pointer) {
                Some(target) => {
                    self.stack = vec![String::new(), pointer.clone()];
                    let lowered = self.schema(target, &format!("/$defs/{name}"), 1);
                    self.stack.clear();
                    lowered
                }
                None => Value::Object(Map::new()),
            };
            defs.insert(name, lowered);
        }
        defs
    }

    /// Step 5, combinators: the root's `allOf` merged, then its `anyOf`/`oneOf` (and those
    /// found in `allOf` branches) merged into a union of properties.
    fn root_combinators(&mut self, root: &mut Map<String, Value>) {
        let mut choices: Vec<(&'static str, Value)> = Vec::new();
        for keyword in ["anyOf", "oneOf"] {
            if let Some(branches) = root.shift_remove(keyword) {
                choices.push((keyword, branches));
            }
        }
        if let Some(all) = root.shift_remove("allOf") {
            let mut queue: VecDeque<Value> = match all {
                Value::Array(branches) => branches.into(),
                _ => VecDeque::new(),
            };
            let mut merged = 0usize;
            while let Some(branch) = queue.pop_front() {
                let Some(mut branch) = object_branch(branch) else {
                    self.notes
                        .note("the root `allOf` had a branch that is not an object schema; ignored it".to_owned());
                    continue;
                };
                merged += 1;
                if let Some(Value::Array(nested)) = branch.shift_remove("allOf") {
                    queue.extend(nested);
                }
                for keyword in ["anyOf", "oneOf"] {
                    if let Some(branches) = branch.shift_remove(keyword) {
                        choices.push((keyword, branches));
                    }
                }
                if let Some(Value::Object(properties)) = branch.shift_remove("properties") {
                    with_properties(root, |target| {
                        for (name, schema) in properties {
                            merge_property(target, name, schema, "allOf");
                        }
                    });
                }
                if let Some(required) = branch.shift_remove("required") {
                    let names = required_names(&required);
                    add_required(root, &names);
                }
                self.note_left_out(&branch, "allOf");
            }
            self.notes.note(format!(
                "the root `allOf` ({merged} object branch{}) merged into `properties`/`required`",
                if merged == 1 { "" } else { "es" }
            ));
        }
        for (keyword, branches) in choices {
            self.root_choice(root, keyword, branches);
        }
    }

    /// One root `anyOf`/`oneOf`: the union of the branches' properties, `required` keeping
    /// what every branch requires, the forms told in `description`.
    fn root_choice(&mut self, root: &mut Map<String, Value>, keyword: &'static str, branches: Value) {
        let branches = match branches {
            Value::Array(branches) => branches,
            _ => Vec::new(),
        };
        let total = branches.len();
        let objects: Vec<Map<String, Value>> = branches.into_iter().filter_map(object_branch).collect();
        if objects.len() < total {
            self.notes.note(format!("the root `{keyword}` had branches that are not object schemas; ignored them"));
        }
        if objects.is_empty() {
            self.notes.note(format!("the root `{keyword}` had no object branch; removed it"));
            return;
        }
        let requireds: Vec<Vec<String>> =
            objects.iter().map(|branch| branch.get("required").map(required_names).unwrap_or_default()).collect();
        let common: Vec<String> =
            requireds[0].iter().filter(|name| requireds.iter().all(|other| other.contains(name))).cloned().collect();
        // Per property, the distinct variants across branches, in order.
        let mut variants: Vec<(String, Vec<Value>)> = Vec::new();
        let mut forms: Vec<String> = Vec::new();
        for (branch, required) in objects.iter().zip(&requireds) {
            let mut names: Vec<&str> = Vec::new();
            if let Some(Value::Object(properties)) = branch.get("properties") {
                for (name, schema) in properties {
                    names.push(name);
                    match variants.iter_mut().find(|(known, _)| known == name) {
                        Some((_, list)) if !list.contains(schema) => list.push(schema.clone()),
                        Some(_) => {}
                        None => variants.push((name.clone(), vec![schema.clone()])),
                    }
                }
            }
            let own: Vec<&String> = required.iter().filter(|name| !common.contains(name)).collect();
            forms.push(if !own.is_empty() {
                own.iter().map(|name| format!("`{}`", clip(name, 120))).collect::<Vec<_>>().join(" + ")
            } else if !names.is_empty() {
                format!(
                    "(optional {})",
                    names.iter().map(|name| format!("`{}`", clip(name, 120))).collect::<Vec<_>>().join(", ")
                )
            } else {
                "(no arguments)".to_owned()
            });
            let mut rest = branch.clone();
            rest.shift_remove("properties");
            rest.shift_remove("required");
            self.note_left_out(&rest, keyword);
        }
        with_properties(root, |target| {
            for (name, mut list) in variants {
                let schema = if list.len() == 1 { list.remove(0) } else { json!({ "anyOf": list }) };
                merge_property(target, name, schema, "allOf");
            }
        });
        add_required(root, &common);
        let distinct: HashSet<&String> = forms.iter().collect();
        if distinct.len() > 1 {
            let sentence = match keyword {
                "oneOf" => format!("Provide exactly one of: {}.", forms.join(", ")),
                _ => format!("Provide at least one of: {}.", forms.join(", ")),
            };
            let description = match root.get("description") {
                Some(Value::String(text)) if !text.trim().is_empty() => format!("{} {sentence}", text.trim_end()),
                _ => sentence,
            };
            root.insert("description".to_owned(), Value::String(description));
        }
        self.notes.note(format!(
            "the root `{keyword}` ({} object branches) merged into the union of their properties; `required` keeps \
             what every branch requires; the choice is told in `description`",
            objects.len()
        ));
    }

    /// Notes the keywords of a root combinator branch that merging leaves out.
    fn note_left_out(&mut self, branch: &Map<String, Value>, keyword: &str) {
        let left: Vec<String> = branch
            .keys()
            .filter(|key| !matches!(key.as_str(), "type" | "title" | "description"))
            .map(|key| format!("`{}`", clip(key, 120)))
            .collect();
        if !left.is_empty() {
            self.notes.note(format!("a root `{keyword}` branch's {} left out when merging", left.join(", ")));
        }
    }

    /// Step 5, the root's type: `type: object` and `properties` always present.
    fn root_type(&mut self, root: &mut Map<String, Value>) {
        let mut noted = false;
        match root.get("type") {
            Some(Value::String(name)) if name == "object" => {}
            None => {
                noted = true;
                if root.contains_key("properties") {
                    self.notes.note("the root had `properties` but no `type`: added `type: object`".to_owned());
                } else {
                    self.notes.note(
                        "the root declared no `type` and no `properties`: made an object schema with no properties"
                            .to_owned(),
                    );
                }
                let mut typed = Map::new();
                typed.insert("type".to_owned(), json!("object"));
                typed.extend(std::mem::take(root));
                *root = typed;
            }
            Some(Value::Array(names)) if names.iter().any(|name| name == "object") => {
                self.notes.note("the root `type` list includes `object`: narrowed to `type: object`".to_owned());
                root.insert("type".to_owned(), json!("object"));
            }
            Some(other) => {
                self.notes.note(format!(
                    "the root `type` is {}, not `object`: replaced by an object schema with no properties",
                    describe_root(other)
                ));
                *root = empty_object_schema();
                return;
            }
        }
        if !root.contains_key("properties") {
            root.insert("properties".to_owned(), Value::Object(Map::new()));
            if !noted {
                self.notes.note("the root had no `properties`: added `properties: {}`".to_owned());
            }
        }
    }
}

/// `{"type": "object", "properties": {}}`.
fn empty_object_schema() -> Map<String, Value> {
    let mut map = Map::new();
    map.insert("type".to_owned(), json!("object"));
    map.insert("properties".to_owned(), Value::Object(Map::new()));
    map
}

/// The inlined target of a `$ref` and the referring object's other keywords: merged when they
/// do not clash (a sibling annotation overrides the target's), both under `allOf` when they do.
fn combine(target: Value, siblings: Map<String, Value>) -> Value {
    if siblings.is_empty() {
        return target;
    }
    let Value::Object(mut merged) = target else {
        return Value::Object(siblings);
    };
    let clashes = siblings.iter().any(|(key, value)| {
        merged.get(key).is_some_and(|known| known != value && !ANNOTATIONS.contains(&key.as_str()))
    });
    if clashes {
        return json!({ "allOf": [Value::Object(merged), Value::Object(siblings)] });
    }
    for (key, value) in siblings {
        merged.insert(key, value);
    }
    Value::Object(merged)
}

/// Whether a schema object declares `type: array` (alone or in a list).
fn declares_array(map: &Map<String, Value>) -> bool {
    match map.get("type") {
        Some(Value::String(name)) => name == "array",
        Some(Value::Array(names)) => names.iter().any(|name| name == "array"),
        _ => false,
    }
}

/// A `type` value: a name or a list of names.
fn is_type(value: &Value) -> bool {
    match value {
        Value::String(_) => true,
        Value::Array(names) => names.iter().all(Value::is_string),
        _ => false,
    }
}

/// A root combinator branch usable as arguments: an object schema whose `type`, when present,
/// allows `object`.
fn object_branch(branch: Value) -> Option<Map<String, Value>> {
    let Value::Object(map) = branch else { return None };
    let allows_object = match map.get("type") {
        None => true,
        Some(Value::String(name)) => name == "object",
        Some(Value::Array(names)) => names.iter().any(|name| name == "object"),
        Some(_) => false,
    };
    allows_object.then_some(map)
}

/// Runs `change` on the root's `properties` object (created, or replaced when it is not an
/// object).
fn with_properties(root: &mut Map<String, Value>, change: impl FnOnce(&mut Map<String, Value>)) {
    let entry = root.entry("properties").or_insert_with(|| Value::Object(Map::new()));
    if let Value::Object(map) = entry {
        change(map);
    } else {
        let mut map = Map::new();
        change(&mut map);
        *entry = Value::Object(map);
    }
}

/// Adds a property; one already there with another schema gets both under `combinator`.
fn merge_property(properties: &mut Map<String, Value>, name: String, schema: Value, combinator: &str) {
    match properties.get_mut(&name) {
        None => {
            properties.insert(name, schema);
        }
        Some(known) if *known == schema => {}
        Some(known) => {
            let previous = std::mem::take(known);
            let mut both = Map::new();
            both.insert(combinator.to_owned(), Value::Array(vec![previous, schema]));
            *known = Value::Object(both);
        }
    }
}

/// The names of a `required` list.
fn required_names(required: &Value) -> Vec<String> {
    match required {
        Value::Array(items) => items.iter().filter_map(Value::as_str).map(str::to_owned).collect(),
        _ => Vec::new(),
    }
}

/// Appends names missing from the root's `required`.
fn add_required(root: &mut Map<String, Value>, names: &[String]) {
    if names.is_empty() {
        return;
    }
    let entry = root.entry("required").or_insert_with(|| Value::Array(Vec::new()));
    if !entry.is_array() {
        *entry = Value::Array(Vec::new());
    }
    if let Value::Array(list) = entry {
        for name in names {
            let name = Value::String(name.clone());
            if !list.contains(&name) {
                list.push(name);
            }
        }
    }
}

/// A unique name under `$defs` for a recursive definition: the pointer's last token with
/// characters outside `[A-Za-z0-9_.-]` as `_`, suffixed `_2`, `_3`… when taken.
fn definition_name(pointer: &str, taken: &[(String, String)]) -> String {
    let last = pointer.rsplit('/').next().unwrap_or_default().replace("~1", "/").replace("~0", "~");
    let mut base: String = last
        .chars()
        .take(64)
        .map(|c| if c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.') { c } else { '_' })
        .collect();
    if base.is_empty() {
        base = "def".to_owned();
    }
    let mut name = base.clone();
    let mut suffix = 2;
    while taken.iter().any(|(_, known)| *known == name) {
        name = format!("{base}_{suffix}");
        suffix += 1;
    }
    name
}

/// Resolves a local reference's fragment (after `#`) in `root`: the canonical JSON pointer of
/// the target and the target.
fn resolve<'v>(root: &'v Value, fragment: &str) -> Option<(String, &'v Value)> {
    let decoded = percent_decode(fragment)?;
    if decoded.is_empty() {
        return Some((String::new(), root));
    }
    if decoded.starts_with('/') {
        let target = resolve_pointer(root, &decoded)?;
        return Some((decoded, target));
    }
    find_anchor(root, &decoded)
}

/// A JSON pointer (RFC 6901: `~1` is `/`, `~0` is `~`) in `root`.
fn resolve_pointer<'v>(root: &'v Value, pointer: &str) -> Option<&'v Value> {
    if pointer.is_empty() {
        return Some(root);
    }
    let mut node = root;
    for token in pointer.strip_prefix('/')?.split('/') {
        let token = token.replace("~1", "/").replace("~0", "~");
        node = match node {
            Value::Object(map) => map.get(&token)?,
            Value::Array(items) => items.get(token.parse::<usize>().ok()?)?,
            _ => return None,
        };
    }
    Some(node)
}

/// The subschema declaring `$anchor: name` (or draft-07 `$id: "#name"`), first in document
/// order, with its pointer; the search is bounded.
fn find_anchor<'v>(root: &'v Value, name: &str) -> Option<(String, &'v Value)> {
    let legacy = format!("#{name}");
    let mut stack: Vec<(&Value, String)> = vec![(root, String::new())];
    let mut visited = 0usize;
    while let Some((node, pointer)) = stack.pop() {
        visited += 1;
        if visited > MAX_ANCHOR_SCAN {
            return None;
        }
        match node {
            Value::Object(map) => {
                let anchored = map.get("$anchor").and_then(Value::as_str) == Some(name)
                    || map.get("$id").and_then(Value::as_str) == Some(legacy.as_str());
                if anchored {
                    return Some((pointer, node));
                }
                for (key, value) in map.iter().rev() {
                    stack.push((value, child(&pointer, key)));
                }
            }
            Value::Array(items) => {
                for (index, value) in items.iter().enumerate().rev() {
                    stack.push((value, child(&pointer, &index.to_string())));
                }
            }
            _ => {}
        }
    }
    None
}

/// Percent-decoding of a URI fragment; `None` when the result is not UTF-8.
fn percent_decode(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut index = 0;
    while index < bytes.len() {
        let byte = bytes[index];
        if byte == b'%' && index + 2 < bytes.len() {
            let hex = std::str::from_utf8(&bytes[index + 1..index + 3]).ok();
            if let Some(value) = hex.and_then(|hex| u8::from_str_radix(hex, 16).ok()) {
                out.push(value);
                index += 3;
                continue;
            }
        }
        out.push(byte);
        index += 1;
    }
    String::from_utf8(out).ok()
}

/// A copy of `value` when it nests at most `levels` deep.
fn bounded_clone(value: &Value, levels: usize) -> Option<Value> {
    match value {
        Value::Array(items) => {
            let below = levels.checked_sub(1)?;
            items.iter().map(|item| bounded_clone(item, below)).collect::<Option<Vec<_>>>().map(Value::Array)
        }
        Value::Object(map) => {
            let below = levels.checked_sub(1)?;
            let mut copy = Map::new();
            for (key, item) in map {
                copy.insert(key.clone(), bounded_clone(item, below)?);
            }
            Some(Value::Object(copy))
        }
        scalar => Some(scalar.clone()),
    }
}

/// A JSON pointer one token further (RFC 6901 escaping).
fn child(path: &str, token: &str) -> String {
    format!("{path}/{}", token.replace('~', "~0").replace('/', "~1"))
}

/// Where, for a note: `` `/properties/a` `` or `the root`.
fn at(path: &str) -> String {
    if path.is_empty() { "the root".to_owned() } else { format!("`{}`", clip(path, 120)) }
}

/// The root as a note names it: a scalar as its JSON text, a container by kind.
fn describe_root(value: &Value) -> String {
    match value {
        Value::Array(_) | Value::Object(_) => json_kind(value).to_owned(),
        scalar => format!("`{}`", clip(&scalar.to_string(), 120)),
    }
}

#[cfg(test)]
#[path = "schema_tests.rs"]
mod tests;

//! The `--config` YAML file (`mcp-eval.yaml`): typed sections with the line and column of every
//! value, so a bad value is reported as `file:line:col: field: message`.
//!
//! The keys and their shapes come from the rows of [`super::table`]: a new setting's key is a
//! field of its row, without new parsing code here. Sections:
//! - `server: {url, command, env}`, `layers`, `timeout_seconds`, `report_dir`, `junit_path`, `events_path`,
//!   `require_era`, `golden_set`: the same settings as the flags and Action inputs, at the
//!   lowest precedence (flags > inputs/environment > this file > defaults); `server.env` is a
//!   list of `NAME=VALUE` or `NAME` strings (a stdio server's environment, `--server-env`);
//! - `safe_tools: [{name, arguments}]`: tools that are safe to call (layer 0);
//! - `waivers: [{rule, element, probe, path, reason, expires, transport}]`: findings of any row the user
//!   has reviewed, each with its reason (applied by [`crate::conformance::waiver`]);
//!   `suppress: [{rule, element, path, reason}]`, the older spelling for the static scan's SEC
//!   rows, is read as waivers too;
//! - `gate: {fail_on, fail_on_evals, max_drop}`: when the run fails;
//! - layer 1: `models` (a list of `PROVIDER:MODEL` strings), `providers: [{id, api, base_url,
//!   api_key_env}]` (endpoints beyond the built-in `openai`, `anthropic` and `replay`), `runs`,
//!   `concurrency`, `max_model_calls`, `trace_results`, `judge_calibration` (the file
//!   `mcp-eval judge calibrate` wrote), `embedding_model` (the `PROVIDER:MODEL` whose
//!   embeddings grade `embedding` matchers), `judge_model`, `judge_samples`, `allow_self_judge`,
//!   `confirm`, `cassettes`, and the cache: `cache_dir`, `cache_key`, `cache_mode`, `baseline`.
//!
//! The table says where each flag of `run` lives here, or why it does not (`table::flag_keys`).
//!
//! Header values (secrets) have no place in the file: they come from flags or inputs only. A
//! secret for a stdio server is best passed through by name (`server.env: [API_KEY]`) rather
//! than written here as a value.

use std::path::Path;

use serde::Deserialize;
use serde_json::Value;
use serde_saphyr::Spanned;

use super::table::{self, Setting};

/// A value of the file with its position (1-based line and column).
pub(crate) type Located<T> = Spanned<T>;

/// The whole file. Every key is optional; unknown keys are reported by the structural pass of
/// [`parse`] (and ignored here, so the known values are still checked). The keys are the rows of
/// [`table`] that have one: a scalar's value is kept with its position under its key (dotted
/// below a section), a list of strings as its entries with theirs, and the lists of entries
/// (`safe_tools`, `suppress`, `waivers`, `providers`) typed.
#[derive(Debug, Default)]
pub(crate) struct ConfigFile {
    /// The scalar values, by key (`timeout_seconds`, `gate.fail_on`), in file order.
    values: Vec<(&'static str, Located<Value>)>,
    /// The lists of strings, by key (`models`, `server.env`).
    lists: Vec<(&'static str, Vec<Located<String>>)>,
    /// Tools that are safe to call, with their arguments.
    pub safe_tools: Vec<Located<SafeToolEntry>>,
    /// Reviewed findings of the static scan, not to be reported again: waivers of SEC rows (the
    /// older spelling of `waivers`).
    pub suppress: Vec<Located<SuppressEntry>>,
    /// Reviewed findings of any row that do not fail the run, each with its reason.
    pub waivers: Vec<Located<WaiverEntry>>,
    /// Model provider endpoints (layer 1), beyond the built-in ones.
    pub providers: Vec<Located<ProviderEntry>>,
    /// The sections read (`server`, `gate`), for tests.
    #[cfg(test)]
    sections: Vec<&'static str>,
}

impl ConfigFile {
    /// The value of `setting`'s key, with its position, when the file gives one.
    pub(crate) fn value(&self, setting: &Setting) -> Option<&Located<Value>> {
        let key = setting.key()?;
        self.values.iter().find(|(name, _)| *name == key).map(|(_, value)| value)
    }

    /// The entries of `setting`'s list of strings, with their positions, when the file gives it.
    pub(crate) fn strings(&self, setting: &Setting) -> Option<&[Located<String>]> {
        let key = setting.key()?;
        self.lists.iter().find(|(name, _)| *name == key).map(|(_, list)| list.as_slice())
    }

    /// Whether the section `name` (`server`, `gate`) was read.
    #[cfg(test)]
    pub(crate) fn has_section(&self, name: &str) -> bool {
        self.sections.contains(&name)
    }

    /// Reads the value of `key` (a row's key, dotted below a section) as its shape says.
    fn read_value<'de, A: serde::de::MapAccess<'de>>(
        &mut self,
        key: &'static str,
        shape: Shape,
        map: &mut A,
    ) -> Result<(), A::Error> {
        match shape {
            Shape::Scalar | Shape::Scalars | Shape::Flag => {
                if let Some(value) = map.next_value::<Option<Located<Value>>>()? {
                    self.values.push((key, value));
                }
            }
            Shape::Strings => {
                if let Some(list) = map.next_value::<Option<Vec<Located<String>>>>()? {
                    self.lists.push((key, list));
                }
            }
            Shape::ListOf(_) if Some(key) == table::SAFE_TOOLS.key() => self.safe_tools = map.next_value()?,
            Shape::ListOf(_) if Some(key) == table::SUPPRESS.key() => self.suppress = map.next_value()?,
            Shape::ListOf(_) if Some(key) == table::WAIVERS.key() => self.waivers = map.next_value()?,
            Shape::ListOf(_) if Some(key) == table::PROVIDERS.key() => self.providers = map.next_value()?,
            Shape::ListOf(_) => {
                map.next_value::<serde::de::IgnoredAny>()?;
            }
        }
        Ok(())
    }
}

impl<'de> Deserialize<'de> for ConfigFile {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(FileVisitor)
    }
}

/// Reads the file's mapping: each key of a row as its shape says, a section's keys through
/// [`SectionSeed`], an unknown key skipped.
struct FileVisitor;

impl<'de> serde::de::Visitor<'de> for FileVisitor {
    type Value = ConfigFile;

    fn expecting(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str("struct ConfigFile")
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<ConfigFile, A::Error> {
        let mut file = ConfigFile::default();
        let mut seen: Vec<&'static str> = Vec::new();
        while let Some(key) = map.next_key::<String>()? {
            let Some((name, entry)) = schema().iter().find(|(name, _)| *name == key) else {
                map.next_value::<serde::de::IgnoredAny>()?;
                continue;
            };
            if seen.contains(name) {
                return Err(serde::de::Error::duplicate_field(name));
            }
            seen.push(name);
            match entry {
                KeyShape::Value(shape) => file.read_value(name, *shape, &mut map)?,
                KeyShape::Section(children) => {
                    let section = map.next_value_seed(SectionSeed { children })?;
                    if let Some(section) = section {
                        file.values.extend(section.values);
                        file.lists.extend(section.lists);
                        #[cfg(test)]
                        file.sections.push(name);
                    }
                }
            }
        }
        Ok(file)
    }
}

/// A section's keys as read: [`ConfigFile`]'s scalars and lists, under their dotted keys.
#[derive(Default)]
struct Section {
    /// The scalars.
    values: Vec<(&'static str, Located<Value>)>,
    /// The lists of strings.
    lists: Vec<(&'static str, Vec<Located<String>>)>,
}

/// Reads a section (`server:`, `gate:`): nothing, or a mapping of its rows' keys (or, as a
/// struct would be, a list of their values in the rows' order).
struct SectionSeed<'a> {
    /// The section's keys: the child's name and its row.
    children: &'a [(&'static str, &'static Setting)],
}

impl<'de> serde::de::DeserializeSeed<'de> for SectionSeed<'_> {
    type Value = Option<Section>;

    fn deserialize<D: serde::Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_option(self)
    }
}

impl<'de> serde::de::Visitor<'de> for SectionSeed<'_> {
    type Value = Option<Section>;

    fn expecting(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str("option")
    }

    fn visit_none<E: serde::de::Error>(self) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_unit<E: serde::de::Error>(self) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_some<D: serde::Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_struct("Section", &[], SectionVisitor { children: self.children }).map(Some)
    }
}

/// Reads a section's mapping (see [`SectionSeed`]).
struct SectionVisitor<'a> {
    /// The section's keys.
    children: &'a [(&'static str, &'static Setting)],
}

impl SectionVisitor<'_> {
    /// Reads one key's value into `section`.
    fn read<'de, A: serde::de::MapAccess<'de>>(
        row: &Setting,
        section: &mut Section,
        map: &mut A,
    ) -> Result<(), A::Error> {
        let (Some(key), table::FileKey::Key(_, shape)) = (row.key(), row.file) else {
            return map.next_value::<serde::de::IgnoredAny>().map(drop);
        };
        if shape == Shape::Strings {
            if let Some(list) = map.next_value::<Option<Vec<Located<String>>>>()? {
                section.lists.push((key, list));
            }
        } else if let Some(value) = map.next_value::<Option<Located<Value>>>()? {
            section.values.push((key, value));
        }
        Ok(())
    }
}

impl<'de> serde::de::Visitor<'de> for SectionVisitor<'_> {
    type Value = Section;

    fn expecting(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str("struct Section")
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Section, A::Error> {
        let mut section = Section::default();
        let mut seen: Vec<&'static str> = Vec::new();
        while let Some(child) = map.next_key::<String>()? {
            let Some((name, row)) = self.children.iter().find(|(name, _)| *name == child) else {
                map.next_value::<serde::de::IgnoredAny>()?;
                continue;
            };
            if seen.contains(name) {
                return Err(serde::de::Error::duplicate_field(name));
            }
            seen.push(name);
            Self::read(row, &mut section, &mut map)?;
        }
        Ok(section)
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Section, A::Error> {
        let mut section = Section::default();
        for (_, row) in self.children {
            let (Some(key), table::FileKey::Key(_, shape)) = (row.key(), row.file) else { continue };
            if shape == Shape::Strings {
                if let Some(list) = seq.next_element::<Option<Vec<Located<String>>>>()?.flatten() {
                    section.lists.push((key, list));
                }
            } else if let Some(value) = seq.next_element::<Option<Located<Value>>>()?.flatten() {
                section.values.push((key, value));
            }
        }
        Ok(section)
    }
}

/// One entry of `providers:`. Every field is optional here; [`super::resolve`] reports a missing
/// one with the entry's position. A field that is not a string stands in as its text (the
/// structural pass of [`parse`] reports it), so the entry's other fields are still checked.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct ProviderEntry {
    /// The name before the `:` of a model (`myvllm` in `myvllm:qwen3-8b`).
    #[serde(default, deserialize_with = "string_or_text")]
    pub id: Option<Located<String>>,
    /// `openai` (Chat Completions) or `anthropic` (Messages).
    #[serde(default, deserialize_with = "string_or_text")]
    pub api: Option<Located<String>>,
    /// The API root, http(s).
    #[serde(default, deserialize_with = "string_or_text")]
    pub base_url: Option<Located<String>>,
    /// The variable the key is read from; none for an endpoint that needs no key.
    #[serde(default, deserialize_with = "string_or_text")]
    pub api_key_env: Option<Located<String>>,
}

/// One entry of `safe_tools:`.
#[derive(Debug, Deserialize)]
pub(crate) struct SafeToolEntry {
    /// The tool name as the server lists it.
    pub name: String,
    /// The arguments object to call it with (default `{}`).
    #[serde(default)]
    pub arguments: Option<serde_json::Map<String, Value>>,
}

/// One entry of `suppress:`.
#[derive(Debug, Deserialize)]
pub(crate) struct SuppressEntry {
    /// The row, `SEC-1`…`SEC-8`.
    pub rule: String,
    /// The element as the report names it, e.g. `tools[connect]`.
    pub element: String,
    /// A field path under the element, e.g. `.inputSchema.properties.password`.
    #[serde(default)]
    pub path: Option<String>,
    /// Why the finding is not a problem here.
    pub reason: String,
}

/// One entry of `waivers:`. Every field is optional here; [`super::resolve`] reports a missing
/// one with the entry's position. A field that is not a string stands in as its text (the
/// structural pass of [`parse`] reports it), so the entry's other fields are still checked.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct WaiverEntry {
    /// The requirement id (`M-10`, `SEC-7`).
    #[serde(default, deserialize_with = "string_or_text")]
    pub rule: Option<Located<String>>,
    /// The element the finding is about (`get_weather`, or `tools[connect]` for a SEC row).
    #[serde(default, deserialize_with = "string_or_text")]
    pub element: Option<Located<String>>,
    /// The probe or evidence the finding names, for a row with several (`X-5`).
    #[serde(default, deserialize_with = "string_or_text")]
    pub probe: Option<Located<String>>,
    /// SEC rows: a field path under the element.
    #[serde(default, deserialize_with = "string_or_text")]
    pub path: Option<Located<String>>,
    /// Why the finding is accepted here.
    #[serde(default, deserialize_with = "string_or_text")]
    pub reason: Option<Located<String>>,
    /// The last day the waiver holds, `YYYY-MM-DD`.
    #[serde(default)]
    pub expires: Option<Located<Value>>,
    /// `http` or `stdio`: the transport whose runs it waives (a config shared by both).
    #[serde(default, deserialize_with = "string_or_text")]
    pub transport: Option<Located<String>>,
}

/// What is wrong with a config file, where (the field is the key: `gate.fail_on`,
/// `safe_tools[0].name`), and how to fix it: the input problem every reader of a user's file
/// reports.
pub(crate) type FileProblem = crate::error::InputProblem;

/// The message of an unknown key (it does not stop the typed parse).
const UNKNOWN_KEY: &str = "unknown key";

/// The file as far as it could be read (also when it has problems: the keys that could be read),
/// and every problem found in it.
pub(crate) type Loaded = (Option<ConfigFile>, Vec<FileProblem>);

/// The shape of a setting's value in the file (a row of [`table`] says it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Shape {
    /// A string, number or boolean.
    Scalar,
    /// A string, number or boolean, or a list of them (`layers: [0, 1]`).
    Scalars,
    /// A list of mappings with these keys.
    ListOf(&'static [&'static str]),
    /// A list of strings.
    Strings,
    /// `true` or `false` (the resolvers read the value; the structural pass names YAML 1.1's
    /// `yes`, `no`, `on`, `off`, `y`, `n`, which YAML 1.2 reads as strings).
    Flag,
}

/// The shape of a top-level key: a setting's value, or a section of settings.
#[derive(Debug)]
enum KeyShape {
    /// A setting's value.
    Value(Shape),
    /// A mapping of these keys (each child's name and its row).
    Section(Vec<(&'static str, &'static Setting)>),
}

/// Every top-level key of the file and the shape of its value, derived from [`table`]'s rows in
/// their order (a section where its first key is); the structural pass checks the file against
/// it and reports every unknown key and wrong shape at once.
fn schema() -> &'static [(&'static str, KeyShape)] {
    static SCHEMA: std::sync::LazyLock<Vec<(&'static str, KeyShape)>> = std::sync::LazyLock::new(|| {
        let mut schema: Vec<(&'static str, KeyShape)> = Vec::new();
        for row in table::SETTINGS {
            let table::FileKey::Key(key, shape) = row.file else { continue };
            match key.split_once('.') {
                None => schema.push((key, KeyShape::Value(shape))),
                Some((section, child)) => match schema.iter_mut().find(|(name, _)| *name == section) {
                    Some((_, KeyShape::Section(children))) => children.push((child, row)),
                    _ => schema.push((section, KeyShape::Section(vec![(child, row)]))),
                },
            }
        }
        schema
    });
    &SCHEMA
}

/// True when the file accepts `key` (a top-level key, or `section.key` below a mapping).
#[cfg(test)]
pub(crate) fn has_key(key: &str) -> bool {
    let (top, below) = match key.split_once('.') {
        Some((top, below)) => (top, Some(below)),
        None => (key, None),
    };
    schema().iter().any(|(name, shape)| {
        *name == top
            && match (below, shape) {
                (None, _) => true,
                (Some(below), KeyShape::Section(children)) => children.iter().any(|(child, _)| *child == below),
                _ => false,
            }
    })
}

/// Keys of list entries whose value must be a string: `(list, key)`. The structural pass names
/// a wrong one with its position, like a section's list of strings.
const STRING_FIELDS: &[(&str, &str)] = &[
    (table::PROVIDERS.key_name(), "id"),
    (table::PROVIDERS.key_name(), "api"),
    (table::PROVIDERS.key_name(), "base_url"),
    (table::PROVIDERS.key_name(), "api_key_env"),
    (table::WAIVERS.key_name(), "rule"),
    (table::WAIVERS.key_name(), "element"),
    (table::WAIVERS.key_name(), "probe"),
    (table::WAIVERS.key_name(), "path"),
    (table::WAIVERS.key_name(), "reason"),
    (table::WAIVERS.key_name(), "transport"),
];

/// Reads and parses the file.
///
/// Returns the typed file when it could be read (also when it has unknown keys, which are
/// reported), and every problem: the file cannot be read, is not YAML, has unknown keys or values
/// of the wrong shape.
pub(crate) fn load(path: &Path) -> Loaded {
    let text = match fs_err::read_to_string(path) {
        Ok(text) => text,
        Err(error) => {
            return (
                None,
                vec![FileProblem::located(
                    path.to_owned(),
                    None,
                    None,
                    format!("cannot read the config file: {}", crate::text::io_reason(&error)),
                    format!(
                        "check the path given to {} (input `{}`; relative to the workspace in the Action)",
                        table::CONFIG.flag_name(),
                        table::CONFIG.input_name()
                    ),
                )],
            );
        }
    };
    parse(path, &text)
}

/// Parses the text of a config file (`path` is used in messages only): first a structural pass
/// that reports every unknown key and every value of the wrong shape, then the typed parse that
/// keeps positions for the value checks of [`super::resolve`]. The typed parse reads what it
/// can despite the structural problems (a top-level key it cannot read is left out), so the value
/// checks still run and every problem of the file is reported at once.
///
/// Returns what [`load`] returns, less the reading.
pub(crate) fn parse(path: &Path, text: &str) -> Loaded {
    let problem = |position: Option<(u64, u64)>, field: Option<String>, message: String, hint: String| {
        FileProblem::located(path.to_owned(), position, field, message, hint)
    };
    let tree: Value = match serde_saphyr::from_str_with_options::<Option<Value>>(text, yaml_1_2()) {
        Ok(tree) => tree.unwrap_or(Value::Null),
        Err(error) => {
            let position = error.location().map(|location| (location.line(), location.column()));
            return (
                None,
                vec![problem(
                    position,
                    None,
                    crate::text::saphyr_message(&error.to_string()),
                    "the file is not valid YAML there; check indentation (spaces, not tabs) and quoting".into(),
                )],
            );
        }
    };
    let mut problems = Vec::new();
    match &tree {
        Value::Null => return (Some(ConfigFile::default()), Vec::new()),
        Value::Object(map) => {
            for (key, value) in map {
                let Some((_, shape)) = schema().iter().find(|(name, _)| name == key) else {
                    let names: Vec<&str> = schema().iter().map(|(name, _)| *name).collect();
                    problems.push(problem(
                        locate(text, &[key]),
                        Some(key.clone()),
                        UNKNOWN_KEY.into(),
                        crate::suggest::unknown_key_hint(key, &names),
                    ));
                    continue;
                };
                check_shape(text, key, shape, value, &mut |position, field, message, hint| {
                    problems.push(problem(position, Some(field), message, hint));
                });
            }
        }
        other => problems.push(problem(
            Some((1, 1)),
            None,
            format!("the file holds {}, not a mapping of keys", kind(other)),
            "start with keys such as `server:`, `safe_tools:` or `gate:` (see docs/config-file.md)".into(),
        )),
    }
    if !tree.is_object() {
        return (None, problems);
    }
    // Every problem is reported at once: the typed parse reads what it can. A value of the wrong
    // type in a string field of a list entry stands in as its text (the entry's other fields and
    // the other entries are still checked); a top-level key the typed parse cannot read is
    // left out whole, and named here unless the structural pass named it already.
    let mut left_out: Vec<String> = Vec::new();
    loop {
        match typed(text, &left_out) {
            Ok(config) => return (Some(config), problems),
            Err(error) => {
                let position = error.location().map(|location| (location.line(), location.column()));
                let key = position.and_then(|(line, _)| field_at(text, line));
                let named = |key: &str| {
                    problems.iter().filter_map(|problem| problem.field.as_deref()).any(|field| {
                        field.strip_prefix(key).is_some_and(|rest| rest.is_empty() || rest.starts_with(['.', '[']))
                    })
                };
                if key.as_deref().is_none_or(|key| !named(key)) {
                    problems.push(problem(
                        position,
                        key.clone(),
                        crate::text::saphyr_message(&error.to_string()),
                        "see docs/config-file.md for the shape of each key".into(),
                    ));
                }
                match key {
                    Some(key) if !left_out.contains(&key) => left_out.push(key),
                    _ => return (None, problems),
                }
            }
        }
    }
}

/// How the file's scalars are read: YAML 1.2's core schema, as golden sets are read
/// ([`crate::golden`]): only `true` and `false` are booleans; `yes`, `no`, `on`, `y` are strings.
fn yaml_1_2() -> serde_saphyr::Options {
    serde_saphyr::options! { strict_booleans: true }
}

thread_local! {
    /// The top-level keys the typed parse running on this thread leaves out (see [`typed`]).
    static LEFT_OUT: std::cell::RefCell<Vec<String>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// The typed parse of the text, without the top-level keys in `left_out` (serde-saphyr takes
/// no seed, so they reach [`Partial`] through a thread-local).
fn typed(text: &str, left_out: &[String]) -> Result<ConfigFile, serde_saphyr::Error> {
    LEFT_OUT.with(|keys| *keys.borrow_mut() = left_out.to_vec());
    let parsed = serde_saphyr::from_str_with_options::<Option<Partial>>(text, yaml_1_2());
    LEFT_OUT.with(|keys| keys.borrow_mut().clear());
    parsed.map(|partial| partial.map(|Partial(config)| config).unwrap_or_default())
}

/// A [`ConfigFile`] read without the top-level keys in [`LEFT_OUT`].
struct Partial(ConfigFile);

impl<'de> Deserialize<'de> for Partial {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(PartialVisitor)
    }
}

/// Feeds the file's mapping, less the left-out keys, to [`ConfigFile`]'s own deserializer.
struct PartialVisitor;

impl<'de> serde::de::Visitor<'de> for PartialVisitor {
    type Value = Partial;

    fn expecting(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str("a mapping of keys")
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, map: A) -> Result<Partial, A::Error> {
        let left_out = LEFT_OUT.with(|keys| keys.borrow().clone());
        ConfigFile::deserialize(serde::de::value::MapAccessDeserializer::new(Without { map, left_out })).map(Partial)
    }
}

/// A mapping that skips the keys in `left_out` (their values are read and dropped).
struct Without<A> {
    map: A,
    left_out: Vec<String>,
}

impl<'de, A: serde::de::MapAccess<'de>> serde::de::MapAccess<'de> for Without<A> {
    type Error = A::Error;

    fn next_key_seed<K: serde::de::DeserializeSeed<'de>>(&mut self, seed: K) -> Result<Option<K::Value>, A::Error> {
        while let Some(key) = self.map.next_key::<String>()? {
            if self.left_out.contains(&key) {
                self.map.next_value::<serde::de::IgnoredAny>()?;
                continue;
            }
            return seed.deserialize(serde::de::value::StringDeserializer::<A::Error>::new(key)).map(Some);
        }
        Ok(None)
    }

    fn next_value_seed<V: serde::de::DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, A::Error> {
        self.map.next_value_seed(seed)
    }
}

/// A string field whose value of another type stands in as its text (`5`, `true`, `["a"]`): the
/// structural pass of [`parse`] reports the type, the typed parse goes on, and a resolver's
/// problem about the same field is dropped ([`super::resolve`]), not reported as missing.
fn string_or_text<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<Option<Located<String>>, D::Error> {
    Ok(Option::<Spanned<Value>>::deserialize(deserializer)?.and_then(|spanned| {
        let text = match &spanned.value {
            Value::Null => return None,
            Value::String(text) => text.clone(),
            other => scalar_text(other).unwrap_or_else(|| other.to_string()),
        };
        Some(Spanned::new(text, spanned.referenced, spanned.defined))
    }))
}

/// The hint for a value of the wrong type where a string was expected: quote a number or a
/// boolean (`reason: "true"`); write text for a list or a mapping.
fn string_hint(child: &str, value: &Value) -> String {
    match value {
        Value::Number(number) => format!("quote it: `{child}: \"{number}\"` (unquoted, it is read as a number)"),
        Value::Bool(flag) => format!("quote it: `{child}: \"{flag}\"` (unquoted, it is read as a boolean)"),
        _ => format!("write it as `{child}: TEXT` (one line of text, not {})", kind(value)),
    }
}

/// YAML 1.1's spellings of a boolean, which YAML 1.2 (and so this file) reads as strings: what
/// the user meant, for the hint.
fn yaml_1_1_boolean(text: &str) -> Option<bool> {
    match text.to_ascii_lowercase().as_str() {
        "yes" | "on" | "y" => Some(true),
        "no" | "off" | "n" => Some(false),
        _ => None,
    }
}

/// Checks one top-level value against its shape.
fn check_shape(
    text: &str,
    key: &str,
    shape: &KeyShape,
    value: &Value,
    report: &mut dyn FnMut(Option<(u64, u64)>, String, String, String),
) {
    match (shape, value) {
        (_, Value::Null) => {}
        (KeyShape::Value(Shape::Scalar | Shape::Scalars), Value::String(_) | Value::Number(_) | Value::Bool(_)) => {}
        (KeyShape::Value(Shape::Scalars), Value::Array(items))
            if items.iter().all(|item| !item.is_object() && !item.is_array()) => {}
        (KeyShape::Value(Shape::Flag), Value::String(given)) if yaml_1_1_boolean(given).is_some() => report(
            locate(text, &[key]),
            key.to_owned(),
            format!("expected true or false, found the string `{given}`"),
            format!(
                "write `{key}: {}` (YAML 1.2 reads `yes`, `no`, `on` and `off` as strings)",
                yaml_1_1_boolean(given).unwrap_or_default()
            ),
        ),
        (KeyShape::Value(Shape::Flag), Value::String(_) | Value::Number(_) | Value::Bool(_)) => {}
        (KeyShape::Value(Shape::Scalar | Shape::Scalars | Shape::Flag), other) => report(
            locate(text, &[key]),
            key.to_owned(),
            format!("expected a single value, found {}", kind(other)),
            format!("write it as `{key}: VALUE` (see docs/config-file.md)"),
        ),
        (KeyShape::Section(children), Value::Object(map)) => {
            let keys: Vec<&str> = children.iter().map(|(child, _)| *child).collect();
            for child in map.keys().filter(|child| !keys.contains(&child.as_str())) {
                report(
                    locate(text, &[key, child]),
                    format!("{key}.{child}"),
                    UNKNOWN_KEY.into(),
                    crate::suggest::unknown_key_hint(child, &keys),
                );
            }
            let lists = children.iter().filter(|(_, row)| matches!(row.file, table::FileKey::Key(_, Shape::Strings)));
            for (child, _) in lists {
                let hint = || format!("write `{child}:` then one `  - NAME=VALUE` or `  - NAME` per line");
                match map.get(*child) {
                    None | Some(Value::Null) => {}
                    Some(Value::Array(items)) => {
                        for (index, item) in items.iter().enumerate().filter(|(_, item)| !item.is_string()) {
                            report(
                                locate(text, &[key, child]),
                                format!("{key}.{child}[{index}]"),
                                format!("expected a string, found {}", kind(item)),
                                format!("quote it: `- \"NAME=VALUE\"`; {}", hint()),
                            );
                        }
                    }
                    Some(other) => report(
                        locate(text, &[key, child]),
                        format!("{key}.{child}"),
                        format!("expected a list of strings, found {}", kind(other)),
                        hint(),
                    ),
                }
            }
        }
        (KeyShape::Section(children), other) => report(
            locate(text, &[key]),
            key.to_owned(),
            format!("expected a mapping, found {}", kind(other)),
            format!(
                "`{key}` holds the keys {}, e.g. `{key}:` then `  {}: …` on the next line",
                children.iter().map(|(child, _)| *child).collect::<Vec<_>>().join(", "),
                children[0].0
            ),
        ),
        (KeyShape::Value(Shape::ListOf(keys)), Value::Array(items)) => {
            for (index, item) in items.iter().enumerate() {
                match item {
                    Value::Object(map) => {
                        for child in map.keys().filter(|child| !keys.contains(&child.as_str())) {
                            report(
                                locate_entry(text, key, index, Some(child)),
                                format!("{key}[{index}].{child}"),
                                UNKNOWN_KEY.into(),
                                crate::suggest::unknown_key_hint(child, keys),
                            );
                        }
                        let strings = STRING_FIELDS.iter().filter(|(list, _)| *list == key);
                        for (_, child) in strings {
                            match map.get(*child) {
                                None | Some(Value::Null | Value::String(_)) => {}
                                Some(other) => report(
                                    locate_entry(text, key, index, Some(child)),
                                    format!("{key}[{index}].{child}"),
                                    format!("expected a string, found {}", kind(other)),
                                    string_hint(child, other),
                                ),
                            }
                        }
                    }
                    other => report(
                        locate_entry(text, key, index, None),
                        format!("{key}[{index}]"),
                        format!("expected a mapping, found {}", kind(other)),
                        format!(
                            "each entry of `{key}` is `- {{{}}}`",
                            keys.iter().map(|k| format!("{k}: …")).collect::<Vec<_>>().join(", ")
                        ),
                    ),
                }
            }
        }
        (KeyShape::Value(Shape::Strings), Value::Array(items)) => {
            for (index, item) in items.iter().enumerate().filter(|(_, item)| !item.is_string()) {
                report(
                    locate_entry(text, key, index, None),
                    format!("{key}[{index}]"),
                    format!("expected a string, found {}", kind(item)),
                    format!("write each entry of `{key}` as a string, e.g. `- openai:gpt-4.1-mini`"),
                );
            }
        }
        (KeyShape::Value(Shape::Strings), other) => report(
            locate(text, &[key]),
            key.to_owned(),
            format!("expected a list of strings, found {}", kind(other)),
            format!("write `{key}:` then one `  - TEXT` per line, e.g. `  - openai:gpt-4.1-mini`"),
        ),
        (KeyShape::Value(Shape::ListOf(keys)), other) => report(
            locate(text, &[key]),
            key.to_owned(),
            format!("expected a list, found {}", kind(other)),
            format!(
                "`{key}` is a list of entries `- {{{}}}`, e.g. `{key}:` then `  - {}: …`",
                keys.iter().map(|k| format!("{k}: …")).collect::<Vec<_>>().join(", "),
                keys[0]
            ),
        ),
    }
}

/// What kind of YAML value this is, for messages.
fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "nothing",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "a mapping",
    }
}

/// The line and column of the key at `path` (a top-level key, then a key nested below it), found
/// in the block-style text; the top-level key's position when the nested one is not found.
fn locate(text: &str, path: &[&str]) -> Option<(u64, u64)> {
    let is_key = |line: &str, key: &str| {
        let trimmed = line.trim_start().trim_start_matches("- ").trim_start();
        trimmed.strip_prefix(key).is_some_and(|rest| rest.trim_start().starts_with(':'))
    };
    let lines: Vec<&str> = text.lines().collect();
    let top = lines.iter().position(|line| !line.starts_with([' ', '\t', '#', '-']) && is_key(line, path[0]))?;
    let column = |line: &str, key: &str| line.find(key).map_or(1, |index| index as u64 + 1);
    let mut found = (top as u64 + 1, column(lines[top], path[0]));
    if let Some(child) = path.get(1) {
        for (index, line) in lines.iter().enumerate().skip(top + 1) {
            if !line.trim().is_empty() && !line.starts_with([' ', '\t', '-', '#']) {
                break;
            }
            if is_key(line, child) {
                found = (index as u64 + 1, column(line, child));
                break;
            }
        }
    }
    Some(found)
}

/// The line and column of entry `index` of the block-style list under the top-level `key`, or of
/// the key `child` inside that entry; the nearest known position when it is not found (the
/// entry's dash, or the top-level key).
fn locate_entry(text: &str, key: &str, index: usize, child: Option<&str>) -> Option<(u64, u64)> {
    let top_position = locate(text, &[key])?;
    let lines: Vec<&str> = text.lines().collect();
    let top = usize::try_from(top_position.0).ok()?.checked_sub(1)?;
    let indent = |line: &str| line.len() - line.trim_start().len();
    // The entries start at the dashes of the first dash's indentation.
    let mut dash_indent = None;
    let mut entry: Option<(usize, usize)> = None;
    let mut seen = 0;
    for (number, line) in lines.iter().enumerate().skip(top + 1) {
        if line.trim().is_empty() || line.trim_start().starts_with('#') {
            continue;
        }
        if !line.starts_with([' ', '\t', '-']) {
            break;
        }
        let is_dash = line.trim_start().starts_with('-');
        if is_dash && dash_indent.is_none_or(|dash| dash == indent(line)) {
            dash_indent = Some(indent(line));
            if entry.is_some() {
                break;
            }
            if seen == index {
                entry = Some((number, indent(line)));
            }
            seen += 1;
        } else if dash_indent.is_some_and(|dash| indent(line) <= dash) && entry.is_some() {
            break;
        }
        let Some((start, dash)) = entry else { continue };
        let Some(child) = child else { return Some((start as u64 + 1, dash as u64 + 1)) };
        let body = if number == start { &line[dash + 1..] } else { line };
        let trimmed = body.trim_start();
        if trimmed.strip_prefix(child).is_some_and(|rest| rest.trim_start().starts_with(':')) {
            let column = line.len() - trimmed.len() + 1;
            return Some((number as u64 + 1, column as u64));
        }
    }
    match entry {
        Some((start, dash)) => Some((start as u64 + 1, dash as u64 + 1)),
        None => Some(top_position),
    }
}

/// The top-level key whose block holds `line` (for parser errors that give only a position).
fn field_at(text: &str, line: u64) -> Option<String> {
    let lines: Vec<&str> = text.lines().collect();
    let index = usize::try_from(line).ok()?.checked_sub(1)?;
    lines.get(..=index.min(lines.len().saturating_sub(1)))?.iter().rev().find_map(|line| {
        (!line.starts_with([' ', '\t', '#', '-']))
            .then(|| line.split_once(':').map(|(key, _)| key.trim().to_owned()))
            .flatten()
            .filter(|key| !key.is_empty())
    })
}

/// The text of a scalar (or a list of scalars joined with `,`), as a flag would carry it.
pub(crate) fn scalar_text(value: &Value) -> Option<String> {
    match value {
        Value::String(text) => Some(text.clone()),
        Value::Number(number) => Some(number.to_string()),
        Value::Bool(flag) => Some(flag.to_string()),
        Value::Array(items) => items.iter().map(scalar_text).collect::<Option<Vec<_>>>().map(|parts| parts.join(",")),
        Value::Null | Value::Object(_) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok((config, problems): Loaded) -> ConfigFile {
        assert!(problems.is_empty(), "{problems:#?}");
        config.expect("a typed config")
    }

    #[test]
    fn unknown_keys_do_not_hide_the_values_of_known_keys() {
        let (config, problems) = parse(Path::new("c.yaml"), "timeout_seconds: 0\ncolour: blue\n");
        assert_eq!(problems.len(), 1);
        assert!(config.expect("typed").value(&table::TIMEOUT_SECONDS).is_some(), "the value is still there to check");
    }

    #[test]
    fn every_section_is_read_with_positions() {
        let file = ok(parse(
            Path::new("c.yaml"),
            "server:\n  url: http://127.0.0.1:1/mcp\nlayers: [0, 1]\ntimeout_seconds: 5\nsafe_tools:\n  - name: get_time\n    arguments: {timezone: UTC}\ngate:\n  fail_on: should\n",
        ));
        let url = file.value(&table::SERVER_URL).expect("url");
        assert_eq!((url.referenced.line(), url.referenced.column()), (2, 8));
        assert_eq!(scalar_text(&file.value(&table::LAYERS).expect("layers").value).as_deref(), Some("0,1"));
        assert_eq!(scalar_text(&file.value(&table::TIMEOUT_SECONDS).expect("timeout").value).as_deref(), Some("5"));
        assert_eq!(file.safe_tools[0].value.name, "get_time");
        assert_eq!(file.safe_tools[0].referenced.line(), 6);
        assert!(file.has_section("gate"));
    }

    #[test]
    fn an_unknown_key_is_named_with_its_line_and_the_nearest_key() {
        let problems = parse(Path::new("c.yaml"), "safe_tools:\n  - name: a\n    argumnets: {}\n").1;
        assert_eq!(problems.len(), 1);
        let problem = &problems[0];
        assert_eq!(problem.position(), Some((3, 5)), "{problem:?}");
        assert_eq!(problem.field.as_deref(), Some("safe_tools[0].argumnets"));
        assert!(problem.hint_text().starts_with("did you mean `arguments`?"), "{problem:?}");
    }

    #[test]
    fn every_unknown_key_and_wrong_shape_is_reported_at_once() {
        let text =
            "server: http://h/mcp\ncolour: blue\nsafe_tools: get_time\ngate:\n  fail_onn: never\nlayers: {a: 1}\n";
        let (config, problems) = parse(Path::new("c.yaml"), text);
        let config = config.expect("the keys it can read are read, so their values are checked too");
        assert!(!config.has_section("server") && config.safe_tools.is_empty(), "keys of the wrong shape are left out");
        assert!(config.has_section("gate"), "the other keys are kept");
        let fields: Vec<(&str, u64)> = problems
            .iter()
            .map(|problem| (problem.field.as_deref().unwrap_or(""), problem.position().map_or(0, |(line, _)| line)))
            .collect();
        assert_eq!(
            fields,
            [("server", 1), ("colour", 2), ("safe_tools", 3), ("gate.fail_onn", 5), ("layers", 6)],
            "{problems:#?}"
        );
        assert!(problems[0].message.contains("expected a mapping, found a string"));
        assert!(problems[3].hint_text().contains("did you mean `fail_on`"));
    }

    #[test]
    fn yaml_syntax_errors_give_the_position_once() {
        let problems = parse(Path::new("c.yaml"), "server:\n  url: [unclosed\n").1;
        assert!(problems[0].position().is_some());
        assert!(
            !problems[0].message.starts_with("error:") && !problems[0].message.contains("line 2 column"),
            "{problems:?}"
        );
    }

    #[test]
    fn server_env_is_a_list_of_strings_with_positions() {
        let file = ok(parse(Path::new("c.yaml"), "server:\n  command: srv\n  env:\n    - FOO=bar\n    - KEEP\n"));
        let env = file.strings(&table::SERVER_ENV).expect("env");
        let entries: Vec<(&str, u64)> =
            env.iter().map(|entry| (entry.value.as_str(), entry.referenced.line())).collect();
        assert_eq!(entries, [("FOO=bar", 4), ("KEEP", 5)]);

        let problems = parse(Path::new("c.yaml"), "server:\n  command: srv\n  env: FOO=bar\n").1;
        assert_eq!(problems.len(), 1, "{problems:#?}");
        assert_eq!((problems[0].field.as_deref(), problems[0].position()), (Some("server.env"), Some((3, 3))));
        assert!(problems[0].message.contains("expected a list of strings, found a string"), "{problems:?}");

        let problems = parse(Path::new("c.yaml"), "server:\n  command: srv\n  env: [FOO=bar, 5, {a: b}]\n").1;
        let fields: Vec<&str> = problems.iter().filter_map(|problem| problem.field.as_deref()).collect();
        assert_eq!(fields, ["server.env[1]", "server.env[2]"], "{problems:#?}");
    }

    #[test]
    fn layer1_keys_are_typed_with_positions() {
        let file = ok(parse(
            Path::new("c.yaml"),
            "models:\n  - openai:gpt-4.1-mini\n  - myvllm:qwen3-8b\nproviders:\n  - id: myvllm\n    api: openai\n    base_url: http://127.0.0.1:8000/v1\n  - {id: proxy, api: anthropic, base_url: 'http://h', api_key_env: PROXY_KEY}\nruns: 3\nconcurrency: 2\nmax_model_calls: 100\ntrace_results: full\n",
        ));
        let models: Vec<(&str, u64)> = file
            .strings(&table::MODELS)
            .into_iter()
            .flatten()
            .map(|model| (model.value.as_str(), model.referenced.line()))
            .collect();
        assert_eq!(models, [("openai:gpt-4.1-mini", 2), ("myvllm:qwen3-8b", 3)]);
        assert_eq!(file.providers.len(), 2);
        let first = &file.providers[0].value;
        let id = first.id.as_ref().expect("id");
        assert_eq!((id.value.as_str(), id.referenced.line(), id.referenced.column()), ("myvllm", 5, 9));
        assert_eq!(first.base_url.as_ref().map(|url| url.referenced.line()), Some(7));
        assert!(first.api_key_env.is_none());
        let second = &file.providers[1].value;
        assert_eq!(second.api_key_env.as_ref().map(|var| var.value.as_str()), Some("PROXY_KEY"));
        for (row, text) in [(&table::RUNS, "3"), (&table::CONCURRENCY, "2"), (&table::MAX_MODEL_CALLS, "100")] {
            assert_eq!(file.value(row).and_then(|value| scalar_text(&value.value)).as_deref(), Some(text));
        }
        assert_eq!(
            file.value(&table::TRACE_RESULTS).and_then(|value| scalar_text(&value.value)).as_deref(),
            Some("full")
        );
    }

    #[test]
    fn layer1_keys_of_the_wrong_shape_or_unknown_are_all_reported_with_positions() {
        let text = "models: openai:gpt-4o\nproviders:\n  - id: a\n    api: openai\n    base_url: http://h\n  - id: 5\n    api: [openai]\n    base_url: http://h\n    api_key: KEY\nrun: 3\ntrace_results: [full]\n";
        let (config, problems) = parse(Path::new("c.yaml"), text);
        let config = config.expect("the keys it can read are read, so their values are checked too");
        assert!(config.strings(&table::MODELS).is_none(), "a key of the wrong shape is left out");
        assert_eq!(config.providers.len(), 2, "an entry with a value of the wrong type is kept: {config:?}");
        type Found<'a> = (&'a str, Option<(u64, u64)>, &'a str);
        let found: Vec<Found<'_>> = problems
            .iter()
            .map(|problem| (problem.field.as_deref().unwrap_or(""), problem.position(), problem.message.as_str()))
            .collect();
        assert_eq!(
            found,
            [
                ("models", Some((1, 1)), "expected a list of strings, found a string"),
                ("providers[1].api_key", Some((9, 5)), "unknown key"),
                ("providers[1].id", Some((6, 5)), "expected a string, found a number"),
                ("providers[1].api", Some((7, 5)), "expected a string, found a list"),
                ("run", Some((10, 1)), "unknown key"),
                ("trace_results", Some((11, 1)), "expected a single value, found a list"),
            ],
            "{problems:#?}"
        );
        assert!(problems[1].hint_text().starts_with("did you mean `api_key_env`?"), "{problems:?}");
        assert!(problems[4].hint_text().starts_with("did you mean `runs`?"), "{problems:?}");
        assert!(problems[0].hint_text().contains("- openai:gpt-4.1-mini"), "{problems:?}");

        let problems = parse(Path::new("c.yaml"), "models:\n  - openai:a\n  - {b: c}\nproviders: x\n").1;
        let fields: Vec<(&str, Option<(u64, u64)>)> =
            problems.iter().map(|problem| (problem.field.as_deref().unwrap_or(""), problem.position())).collect();
        assert_eq!(fields, [("models[1]", Some((3, 3))), ("providers", Some((4, 1)))], "{problems:#?}");
    }

    #[test]
    fn yes_y_on_and_no_are_text_in_a_string_field_as_in_golden_sets() {
        let text = "waivers:\n  - {rule: M-10, reason: y}\n  - {rule: M-10, reason: yes}\n  - {rule: M-10, reason: on}\n  - {rule: M-10, reason: no}\n";
        let file = ok(parse(Path::new("c.yaml"), text));
        let reasons: Vec<&str> =
            file.waivers.iter().filter_map(|entry| entry.value.reason.as_ref()).map(|r| r.value.as_str()).collect();
        assert_eq!(reasons, ["y", "yes", "on", "no"]);
    }

    #[test]
    fn yes_in_a_boolean_key_is_one_problem_naming_true() {
        for (text, meant) in
            [("confirm: yes\n", "true"), ("allow_unpriced: off\n", "false"), ("allow_self_judge: y\n", "true")]
        {
            let problems = parse(Path::new("c.yaml"), text).1;
            assert_eq!(problems.len(), 1, "{problems:#?}");
            let given = text.split(": ").nth(1).unwrap_or_default().trim();
            let key = text.split(':').next().unwrap_or_default();
            assert_eq!(problems[0].message, format!("expected true or false, found the string `{given}`"));
            assert!(problems[0].hint_text().starts_with(&format!("write `{key}: {meant}`")), "{problems:?}");
            assert_eq!(problems[0].position(), Some((1, 1)));
        }
        assert!(
            ok(parse(Path::new("c.yaml"), "confirm: true\nallow_unpriced: false\n")).value(&table::CONFIRM).is_some()
        );
    }

    #[test]
    fn a_wrong_type_in_a_string_field_gets_the_fix_for_its_type() {
        let text = "waivers:\n  - rule: M-10\n    reason: 2027\n  - rule: true\n    reason: [a, b]\n";
        let problems = parse(Path::new("c.yaml"), text).1;
        let found: Vec<(&str, &str)> =
            problems.iter().map(|problem| (problem.field.as_deref().unwrap_or(""), problem.hint_text())).collect();
        assert_eq!(
            found,
            [
                ("waivers[0].reason", "quote it: `reason: \"2027\"` (unquoted, it is read as a number)"),
                ("waivers[1].rule", "quote it: `rule: \"true\"` (unquoted, it is read as a boolean)"),
                ("waivers[1].reason", "write it as `reason: TEXT` (one line of text, not a list)"),
            ],
            "{problems:#?}"
        );
    }

    #[test]
    fn a_key_the_typed_parse_cannot_read_is_left_out_and_named_once() {
        let text = "safe_tools:\n  - name: [a]\ntimeout_seconds: 5\n";
        let (config, problems) = parse(Path::new("c.yaml"), text);
        let config = config.expect("the other keys are read");
        assert!(config.safe_tools.is_empty() && config.value(&table::TIMEOUT_SECONDS).is_some(), "{config:?}");
        assert_eq!(problems.len(), 1, "{problems:#?}");
        assert_eq!(problems[0].field.as_deref(), Some("safe_tools"), "{problems:#?}");
    }

    #[test]
    fn an_empty_file_is_an_empty_config() {
        assert!(ok(parse(Path::new("c.yaml"), "\n# nothing\n")).safe_tools.is_empty());
        assert!(ok(parse(Path::new("c.yaml"), "")).safe_tools.is_empty());
    }
}

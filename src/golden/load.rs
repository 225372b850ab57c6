//! Reading a golden-set file: the structural pass over the positioned YAML tree (unknown keys
//! with a did-you-mean hint, wrong types, broken rules), all problems of a file at once, and the
//! resolution of each case (defaults applied, rubric files inlined) into the JSON the hashes
//! cover.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};

use super::tree::{self, Node, NodeValue};
use super::{Case, GoldenSet, NamedTool, Problem, ToolRef};
use crate::suggest;

/// The only format version.
const VERSION: i64 = 1;

const TOP_KEYS: &[&str] = &["version", "defaults", "rubrics", "cases"];

/// Case fields that `defaults` may set too.
const DEFAULTABLE: &[&str] = &[
    "system",
    "kind",
    "runs",
    "pass_threshold",
    "max_turns",
    "timeout_ms",
    "tools",
    "tool_choice",
    "extra_args",
    "on_unmatched_input_request",
    "max_input_rounds",
    "sampling",
    "sequential_runs",
    "faults",
    "adversarial",
];

/// Keys only `defaults` has.
const DEFAULTS_ONLY: &[&str] = &["arg_match", "timezone"];

/// Keys only a case has.
const CASE_ONLY: &[&str] = &[
    "id",
    "prompt",
    "expect_tool",
    "expect_tool_position",
    "expect_args",
    "expect_sequence",
    "negative",
    "forbid_tools",
    "rubric",
    "input_responses",
    "tags",
];

const SAMPLING_KEYS: &[&str] = &["temperature", "top_p", "max_output_tokens"];
const RUBRIC_KEYS: &[&str] = &["criteria", "file", "min_should"];
const CRITERION_KEYS: &[&str] = &["id", "text", "must"];
const SEQUENCE_KEYS: &[&str] = &["order", "steps"];
const STEP_KEYS: &[&str] = &["tool", "args"];
const FAULT_KEYS: &[&str] = &["tool", "fault", "on_call"];
const PAYLOAD_KEYS: &[&str] = &["payload", "where", "action"];
const ACTION_KEYS: &[&str] = &["call", "argument", "answer"];
const INPUT_RESPONSE_KEYS: &[&str] = &["key", "match", "respond", "times"];
const INPUT_MATCH_KEYS: &[&str] = &["method", "message", "schema_has"];

/// Every matcher and the keys it takes besides `match` (the first list is required, the second
/// optional).
const MATCHERS: &[(&str, &[&str], &[&str])] = &[
    ("auto", &["value"], &[]),
    ("exact", &["value"], &[]),
    ("normalized", &[], &["value", "one_of"]),
    ("one_of", &["values"], &[]),
    ("regex", &["pattern"], &[]),
    ("number", &["value"], &["tolerance", "rel_tolerance"]),
    ("datetime", &["value"], &["granularity"]),
    ("set", &["values"], &[]),
    ("subset", &["value"], &[]),
    ("fuzzy", &["value"], &["threshold"]),
    ("embedding", &["value"], &["threshold"]),
    ("judge", &["value"], &[]),
    ("present", &[], &[]),
    ("absent", &[], &[]),
];

const INPUT_METHODS: &[&str] = &["elicitation/create", "sampling/createMessage", "roots/list"];

/// Reads and checks the golden set at `path`: the set, or every problem found in it.
pub(crate) fn load(path: &Path) -> Result<GoldenSet, Vec<Problem>> {
    match fs_err::read_to_string(path) {
        Ok(text) => parse(path, &text),
        Err(error) => Err(vec![Problem::located(
            path.to_owned(),
            None,
            None,
            format!("cannot read the golden set: {}", crate::text::io_reason(&error)),
            "check the path of the golden-set file",
        )]),
    }
}

/// The most bytes of a rubric file read (1 MiB): a rubric is a short list, and a path such as
/// a device or a log file must not be read without end.
const MAX_RUBRIC_BYTES: u64 = 1024 * 1024;

/// The text of the file at `path`, or `None` when it is longer than `limit` bytes (never more
/// than `limit + 1` bytes are read). Invalid UTF-8 is an `InvalidData` error.
fn read_bounded(path: &Path, limit: u64) -> std::io::Result<Option<String>> {
    use std::io::Read;
    let mut bytes = Vec::new();
    fs_err::File::open(path)?.take(limit + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > limit {
        return Ok(None);
    }
    String::from_utf8(bytes).map(Some).map_err(|error| std::io::Error::new(std::io::ErrorKind::InvalidData, error))
}

const PLAN_KEYS: &[&str] = &["cases", "tool", "fault", "on_call"];

/// Reads and checks the fault plan at `path` (`--fault-plan`): a YAML list of `{cases: GLOB,
/// tool: NAME|"*", fault, on_call}` (`cases` `*` and `on_call` 1 when left out), or every
/// problem found in it, each with its line and column.
pub(crate) fn load_fault_plan(path: &Path) -> Result<Vec<super::PlanEntry>, Vec<Problem>> {
    let text = fs_err::read_to_string(path).map_err(|error| {
        vec![Problem::located(
            path.to_owned(),
            None,
            None,
            format!("cannot read the fault plan: {}", crate::text::io_reason(&error)),
            "check the path given to --fault-plan",
        )]
    })?;
    parse_fault_plan(path, &text)
}

/// Checks the text of a fault plan (`path` names it in messages); what [`load_fault_plan`]
/// returns, less the reading.
pub(crate) fn parse_fault_plan(path: &Path, text: &str) -> Result<Vec<super::PlanEntry>, Vec<Problem>> {
    let mut reader = Reader::new(path);
    let example = "a fault plan is a list: `- {cases: \"*\", tool: \"*\", fault: http-500, on_call: 1}`";
    let root = match tree::parse(text) {
        Ok(Some(root)) => root,
        Ok(None) => {
            reader.problems.push(reader.problem(Some((1, 1)), None, "the file is empty".into(), example.into()));
            return Err(reader.problems);
        }
        Err((position, message)) => {
            reader.problems.push(reader.problem(position, None, message, "the file is not valid YAML there".into()));
            return Err(reader.problems);
        }
    };
    let NodeValue::List(items) = &root.value else {
        reader.report(&root, "", format!("expected a list, found {}", root.kind()), example);
        return Err(reader.problems);
    };
    let mut entries = Vec::new();
    for (index, item) in items.iter().enumerate() {
        let here = format!("[{index}]");
        let Some(fields) = reader.fields(item, &here, PLAN_KEYS, example) else { continue };
        let cases = match fields.get("cases") {
            Some((_, node)) => reader.string(node, &format!("{here}.cases")),
            None => Some("*".to_owned()),
        };
        let tool = match fields.get("tool") {
            Some((_, node)) => reader.string(node, &format!("{here}.tool")),
            None => {
                reader.report(item, &format!("{here}.tool"), "missing", "name the tool whose call fails, or `\"*\"`");
                None
            }
        };
        let fault = match fields.get("fault") {
            Some((_, node)) => reader
                .choice(node, &format!("{here}.fault"), &super::FaultKind::names())
                .and_then(|name| super::FaultKind::parse(&name)),
            None => {
                let names = super::FaultKind::names().join(", ");
                reader.report(item, &format!("{here}.fault"), "missing", format!("name the fault: one of {names}"));
                None
            }
        };
        let on_call = match fields.get("on_call") {
            Some((_, node)) => reader.integer(node, &format!("{here}.on_call"), 1, 50),
            None => Some(1),
        };
        if let (Some(cases), Some(tool), Some(fault), Some(on_call)) = (cases, tool, fault, on_call) {
            entries.push(super::PlanEntry {
                cases,
                tool,
                fault,
                on_call: usize::try_from(on_call).unwrap_or(1),
                position: (item.line, item.column),
            });
        }
    }
    if reader.problems.is_empty() { Ok(entries) } else { Err(reader.problems) }
}

/// Checks the text of a golden set (`path` names it in messages and locates rubric files).
pub(crate) fn parse(path: &Path, text: &str) -> Result<GoldenSet, Vec<Problem>> {
    parse_naming(path, text).map_err(|(problems, _)| problems)
}

/// [`load`], and on failure every tool name the pass met besides the problems, so the names a
/// server does not list are reported in the same pass ([`super::unknown_names`]).
pub(crate) fn load_naming(path: &Path) -> Result<GoldenSet, (Vec<Problem>, Vec<NamedTool>)> {
    match fs_err::read_to_string(path) {
        Ok(text) => parse_naming(path, &text),
        Err(_) => load(path).map_err(|problems| (problems, Vec::new())),
    }
}

/// [`parse`], and on failure every tool name the pass met (in the cases it could read).
pub(crate) fn parse_naming(path: &Path, text: &str) -> Result<GoldenSet, (Vec<Problem>, Vec<NamedTool>)> {
    let mut reader = Reader::new(path);
    let root = match tree::parse(text) {
        Ok(Some(root)) => root,
        Ok(None) => {
            reader.problems.push(reader.problem(
                Some((1, 1)),
                None,
                "the file is empty".into(),
                "start with `version: 1` and `cases:` (see docs/golden-sets.md#the-format)".into(),
            ));
            return Err((reader.problems, Vec::new()));
        }
        Err((position, message)) => {
            let (message, hint) = match message.strip_prefix("duplicate mapping key: ") {
                Some(rest) => (
                    format!("duplicate key `{}`", rest.split(", set DuplicateKeyPolicy").next().unwrap_or(rest)),
                    "a key appears once in its mapping; remove or merge the second one".to_owned(),
                ),
                None => (
                    message,
                    "the file is not valid YAML there; check indentation (spaces, not tabs) and quoting".to_owned(),
                ),
            };
            reader.problems.push(reader.problem(position, None, message, hint));
            return Err((reader.problems, Vec::new()));
        }
    };
    let set = reader.set(&root);
    if reader.problems.is_empty() {
        return Ok(set);
    }
    // In file order (the pass checks some rules after the keys they depend on), once each (a
    // bad default is met again by every case that uses it).
    reader.problems.sort_by(|a, b| {
        let place = |problem: &Problem| problem.position().unwrap_or((u64::MAX, u64::MAX));
        (place(a), &a.field, &a.message).cmp(&(place(b), &b.field, &b.message))
    });
    reader.problems.dedup();
    Err((reader.problems, reader.named))
}

/// The structural pass: collects problems and builds the resolved cases.
/// Checks the values of a YAML tree against their expected shapes, gathering every problem
/// with its position (shared by the golden set, the fault plan and the price table).
pub(crate) struct Reader {
    path: PathBuf,
    /// What is wrong so far.
    pub(crate) problems: Vec<Problem>,
    /// The `embedding` and `judge` matchers of the case being read.
    semantic: Vec<super::MatcherRef>,
    /// Every tool name of the cases read so far, their problems or not.
    named: Vec<NamedTool>,
}

/// The keys of a mapping, checked against the known ones.
pub(crate) type Fields<'a> = BTreeMap<&'a str, (&'a Node, &'a Node)>;

impl Reader {
    /// A reader of the file at `path` (named in messages).
    pub(crate) fn new(path: &Path) -> Self {
        Self { path: path.to_owned(), problems: Vec::new(), semantic: Vec::new(), named: Vec::new() }
    }

    pub(crate) fn problem(
        &self,
        position: Option<(u64, u64)>,
        field: Option<String>,
        message: String,
        hint: String,
    ) -> Problem {
        Problem::located(self.path.clone(), position, field, message, hint)
    }

    pub(crate) fn report(&mut self, node: &Node, field: &str, message: impl Into<String>, hint: impl Into<String>) {
        let problem = self.problem(Some((node.line, node.column)), Some(field.to_owned()), message.into(), hint.into());
        self.problems.push(problem);
    }

    /// The entries of a mapping; every unknown key is reported (with the nearest known key).
    pub(crate) fn fields<'a>(
        &mut self,
        node: &'a Node,
        field: &str,
        known: &[&str],
        example: &str,
    ) -> Option<Fields<'a>> {
        let NodeValue::Map(entries) = &node.value else {
            self.report(node, field, format!("expected a mapping, found {}", node.kind()), example.to_owned());
            return None;
        };
        let mut fields = Fields::new();
        for (key, value) in entries {
            let child = join(field, key.as_str().unwrap_or("?"));
            match key.as_str() {
                Some(name) if known.contains(&name) => {
                    fields.insert(name, (key, value));
                }
                Some(name) => self.report(key, &child, "unknown key", suggest::unknown_key_hint(name, known)),
                None => self.report(key, &child, format!("a key must be a string, found {}", key.kind()), ""),
            }
        }
        Some(fields)
    }

    pub(crate) fn integer(&mut self, node: &Node, field: &str, min: i64, max: i64) -> Option<i64> {
        let value = match &node.value {
            NodeValue::Number(number) => number.as_i64(),
            _ => None,
        };
        match value {
            Some(value) if (min..=max).contains(&value) => Some(value),
            Some(value) => {
                self.report(
                    node,
                    field,
                    format!("{value} is out of range"),
                    format!("use an integer from {min} to {max}"),
                );
                None
            }
            None => {
                self.report(
                    node,
                    field,
                    format!("expected an integer, found {}", node.kind()),
                    format!("use an integer from {min} to {max}"),
                );
                None
            }
        }
    }

    pub(crate) fn number(&mut self, node: &Node, field: &str, min: f64, max: f64) -> Option<f64> {
        match &node.value {
            NodeValue::Number(number) => {
                let value = number.as_f64().unwrap_or(f64::NAN);
                if (min..=max).contains(&value) {
                    Some(value)
                } else {
                    self.report(
                        node,
                        field,
                        format!("{number} is out of range"),
                        format!("use a number from {min} to {max}"),
                    );
                    None
                }
            }
            _ => {
                self.report(
                    node,
                    field,
                    format!("expected a number, found {}", node.kind()),
                    format!("use a number from {min} to {max}"),
                );
                None
            }
        }
    }

    pub(crate) fn boolean(&mut self, node: &Node, field: &str) -> Option<bool> {
        match &node.value {
            NodeValue::Bool(flag) => Some(*flag),
            // YAML 1.1's booleans, which YAML 1.2 (and so this reader) keeps as strings.
            NodeValue::String(text)
                if matches!(text.to_ascii_lowercase().as_str(), "yes" | "no" | "on" | "off" | "y" | "n") =>
            {
                let meant = matches!(text.to_ascii_lowercase().as_str(), "yes" | "on" | "y");
                let key = field.rsplit('.').next().unwrap_or(field);
                self.report(
                    node,
                    field,
                    format!("expected true or false, found the string `{text}`"),
                    format!("write `{key}: {meant}` (YAML 1.2 reads `yes`, `no`, `on` and `off` as strings)"),
                );
                None
            }
            _ => {
                self.report(
                    node,
                    field,
                    format!("expected true or false, found {}", node.kind()),
                    "write `true` or `false`",
                );
                None
            }
        }
    }

    pub(crate) fn string(&mut self, node: &Node, field: &str) -> Option<String> {
        match &node.value {
            NodeValue::String(text) if !text.trim().is_empty() => Some(text.clone()),
            NodeValue::String(_) => {
                self.report(node, field, "must not be empty", "write some text, or leave the key out");
                None
            }
            _ => {
                self.report(node, field, format!("expected a string, found {}", node.kind()), "quote it: `\"…\"`");
                None
            }
        }
    }

    pub(crate) fn choice(&mut self, node: &Node, field: &str, allowed: &[&str]) -> Option<String> {
        let text = self.string(node, field)?;
        if allowed.contains(&text.as_str()) {
            return Some(text);
        }
        let hint = match suggest::nearest(&text, allowed.iter().copied()) {
            Some(near) => format!("did you mean `{near}`? (one of {})", allowed.join(", ")),
            None => format!("one of {}", allowed.join(", ")),
        };
        self.report(node, field, format!("`{text}` is not a valid value"), hint);
        None
    }

    /// A list of non-empty strings (with each item's node).
    fn strings<'a>(&mut self, node: &'a Node, field: &str) -> Option<Vec<(String, &'a Node)>> {
        let NodeValue::List(items) = &node.value else {
            self.report(node, field, format!("expected a list of strings, found {}", node.kind()), "write `[a, b]`");
            return None;
        };
        let mut out = Vec::new();
        for (index, item) in items.iter().enumerate() {
            if let Some(text) = self.string(item, &format!("{field}[{index}]")) {
                out.push((text, item));
            }
        }
        (out.len() == items.len()).then_some(out)
    }

    fn set(&mut self, root: &Node) -> GoldenSet {
        let mut set = GoldenSet { path: self.path.clone(), hash: String::new(), cases: Vec::new(), fault_plan: None };
        let example = "a golden set is a mapping: `version: 1`, then `cases:` (see docs/golden-sets.md#the-format)";
        let Some(top) = self.fields(root, "", TOP_KEYS, example) else { return set };
        match top.get("version") {
            None => self.report(root, "version", "missing", "add `version: 1` at the top"),
            Some((_, node)) => {
                if let Some(version) = self.integer(node, "version", 0, i64::MAX)
                    && version != VERSION
                {
                    self.report(
                        node,
                        "version",
                        format!("version {version} is not supported"),
                        "this mcp-eval reads `version: 1`",
                    );
                }
            }
        }
        let defaults = match top.get("defaults") {
            Some((_, node)) => {
                let known: Vec<&str> = DEFAULTABLE.iter().chain(DEFAULTS_ONLY).copied().collect();
                self.fields(node, "defaults", &known, "`defaults:` holds case fields such as `runs: 5`")
                    .unwrap_or_default()
            }
            None => Fields::new(),
        };
        let arg_match = match defaults.get("arg_match") {
            Some((_, node)) => {
                let names: Vec<&str> = MATCHERS.iter().map(|(name, _, _)| *name).collect();
                self.choice(node, "defaults.arg_match", &names).unwrap_or_else(|| "auto".into())
            }
            None => "auto".into(),
        };
        let timezone = match defaults.get("timezone") {
            Some((_, node)) => self.timezone(node).unwrap_or_else(|| "UTC".into()),
            None => "UTC".into(),
        };
        let rubrics = match top.get("rubrics") {
            Some((_, node)) => self.rubrics(node),
            None => BTreeMap::new(),
        };
        let Some((_, cases)) = top.get("cases") else {
            self.report(root, "cases", "missing", "add `cases:` with at least one case");
            return set;
        };
        let NodeValue::List(items) = &cases.value else {
            self.report(
                cases,
                "cases",
                format!("expected a list, found {}", cases.kind()),
                "write `cases:` then `  - id: …`",
            );
            return set;
        };
        if items.is_empty() {
            self.report(cases, "cases", "the set has no case", "add at least one case");
        }
        let context = CaseContext { defaults: &defaults, arg_match, timezone, rubrics };
        let mut seen: HashMap<String, u64> = HashMap::new();
        for (index, item) in items.iter().enumerate() {
            if let Some(id_node) = case_id_node(item)
                && let Some(id) = id_node.as_str()
            {
                match seen.get(id) {
                    Some(first) => self.report(
                        id_node,
                        &format!("cases[{index}].id"),
                        format!("duplicate case id `{id}`"),
                        format!("ids must be unique; the first `{id}` is at line {first}"),
                    ),
                    None => {
                        seen.insert(id.to_owned(), id_node.line);
                    }
                }
            }
            if let Some(case) = self.case(item, index, &context) {
                set.cases.push(case);
            }
        }
        let hashes: Vec<Value> = set.cases.iter().map(|case| Value::String(case.hash.clone())).collect();
        set.hash = crate::jcs::hash(&Value::Array(hashes));
        set
    }

    fn timezone(&mut self, node: &Node) -> Option<String> {
        let name = self.string(node, "defaults.timezone")?;
        if name.parse::<chrono_tz::Tz>().is_ok() {
            return Some(name);
        }
        let nearest = crate::suggest::nearest(&name, chrono_tz::TZ_VARIANTS.iter().map(|zone| zone.name()));
        let hint = match nearest {
            Some(zone) => format!("did you mean `{zone}`? (an IANA time zone name, e.g. `UTC` or `Europe/Paris`)"),
            None => "give an IANA time zone name, e.g. `UTC` or `Europe/Paris`".to_owned(),
        };
        self.report(node, "defaults.timezone", format!("`{name}` is not an IANA time zone name"), &hint);
        None
    }

    /// `rubrics:`: id → the resolved rubric (criteria, or the file's text with LF line ends).
    fn rubrics(&mut self, node: &Node) -> BTreeMap<String, Value> {
        let mut rubrics = BTreeMap::new();
        let NodeValue::Map(entries) = &node.value else {
            self.report(
                node,
                "rubrics",
                format!("expected a mapping, found {}", node.kind()),
                "write `rubrics:` then `  NAME:` and its `criteria:`",
            );
            return rubrics;
        };
        for (key, value) in entries {
            let Some(id) = key.as_str() else {
                self.report(key, "rubrics", format!("a rubric id must be a string, found {}", key.kind()), "");
                continue;
            };
            let field = format!("rubrics.{id}");
            if !valid_id(id, false) {
                self.report(
                    key,
                    &field,
                    format!("`{id}` is not a valid rubric id"),
                    "use lowercase letters, digits, `_` and `-` (at most 64, starting with a letter or digit)",
                );
            }
            // A rubric with problems is still known by name (null), so its cases do not
            // report it as unknown too.
            let rubric = self.rubric(value, &field).unwrap_or(Value::Null);
            rubrics.insert(id.to_owned(), rubric);
        }
        rubrics
    }

    /// One rubric; a bad `criteria` or `file` does not stop the check of `min_should` (only its
    /// comparison with the should-criteria, which are unknown then).
    fn rubric(&mut self, node: &Node, field: &str) -> Option<Value> {
        let fields =
            self.fields(node, field, RUBRIC_KEYS, "a rubric holds `criteria:` (or `file:`) and `min_should:`")?;
        let before = self.problems.len();
        let mut resolved = Map::new();
        let should = match (fields.get("criteria"), fields.get("file")) {
            (Some((_, criteria)), None) => self.criteria(criteria, &format!("{field}.criteria")).map(|list| {
                let should = list.iter().filter(|criterion| criterion["must"] == false).count();
                resolved.insert("criteria".into(), Value::Array(list));
                should
            }),
            (None, Some((_, file))) => self.rubric_file(file, &format!("{field}.file")).map(|(text, count)| {
                resolved.insert("file_text".into(), Value::String(text));
                count
            }),
            (Some(_), Some((key, _))) => {
                self.report(
                    key,
                    &format!("{field}.file"),
                    "a rubric has `criteria` or `file`, not both",
                    "keep the criteria inline, or in the Markdown file",
                );
                None
            }
            (None, None) => {
                self.report(
                    node,
                    &format!("{field}.criteria"),
                    "missing",
                    "write the criteria inline (`criteria:`), or name a Markdown file with `file:`",
                );
                None
            }
        };
        let min_should = match fields.get("min_should") {
            Some((_, node)) => {
                let value = self.integer(node, &format!("{field}.min_should"), 0, 1000);
                if let (Some(value), Some(should)) = (value, should)
                    && usize::try_from(value).unwrap_or(usize::MAX) > should
                {
                    self.report(
                        node,
                        &format!("{field}.min_should"),
                        format!("{value} is more than the {should} should-criteria"),
                        "lower it, or add criteria with `must: false`",
                    );
                }
                value
            }
            None => Some(0),
        };
        resolved.insert("min_should".into(), json!(min_should?));
        should?;
        (self.problems.len() == before).then_some(Value::Object(resolved))
    }

    fn criteria(&mut self, node: &Node, field: &str) -> Option<Vec<Value>> {
        let NodeValue::List(items) = &node.value else {
            self.report(
                node,
                field,
                format!("expected a list, found {}", node.kind()),
                "write `- {id: …, text: …, must: true}` per criterion",
            );
            return None;
        };
        if items.is_empty() {
            self.report(node, field, "a rubric needs at least one criterion", "add `- {id: …, text: …, must: true}`");
        }
        let mut out = Vec::new();
        let mut ids: HashMap<String, u64> = HashMap::new();
        for (index, item) in items.iter().enumerate() {
            let here = format!("{field}[{index}]");
            let Some(fields) =
                self.fields(item, &here, CRITERION_KEYS, "a criterion is `{id: …, text: …, must: true}`")
            else {
                continue;
            };
            let take = |reader: &mut Reader, key: &str| {
                let found = fields.get(key).map(|(_, node)| *node);
                if found.is_none() {
                    reader.report(item, &format!("{here}.{key}"), "missing", "a criterion has `id`, `text` and `must`");
                }
                found
            };
            let id = take(self, "id").and_then(|node| {
                let id = self.string(node, &format!("{here}.id"))?;
                if let Some(first) = ids.get(&id) {
                    self.report(
                        node,
                        &format!("{here}.id"),
                        format!("duplicate criterion id `{id}`"),
                        format!("ids are unique within a rubric; the first is at line {first}"),
                    );
                    return None;
                }
                ids.insert(id.clone(), node.line);
                Some(id)
            });
            let text = take(self, "text").and_then(|node| self.string(node, &format!("{here}.text")));
            let must = take(self, "must").and_then(|node| self.boolean(node, &format!("{here}.must")));
            if let (Some(id), Some(text), Some(must)) = (id, text, must) {
                out.push(json!({"id": id, "text": text, "must": must}));
            }
        }
        Some(out)
    }

    /// A rubric file: its text with LF line ends, and how many should-criteria it has.
    fn rubric_file(&mut self, node: &Node, field: &str) -> Option<(String, usize)> {
        let name = self.string(node, field)?;
        let path = self.path.parent().unwrap_or(Path::new(".")).join(&name);
        let text = match read_bounded(&path, MAX_RUBRIC_BYTES) {
            Ok(Some(text)) => text.replace("\r\n", "\n"),
            Ok(None) => {
                self.report(
                    node,
                    field,
                    format!("`{}` is larger than {MAX_RUBRIC_BYTES} bytes", path.display()),
                    "a rubric file is a short Markdown list of `- [must] …` and `- [should] …` criteria",
                );
                return None;
            }
            Err(error) => {
                self.report(
                    node,
                    field,
                    format!("cannot read `{}`: {}", path.display(), crate::text::io_reason(&error)),
                    "the path is relative to the golden-set file",
                );
                return None;
            }
        };
        let (mut must, mut should) = (0, 0);
        for line in text.lines() {
            let line = line.trim_start();
            if line.starts_with("- [must] ") {
                must += 1;
            } else if line.starts_with("- [should] ") {
                should += 1;
            }
        }
        if must + should == 0 {
            self.report(
                node,
                field,
                format!("`{name}` has no criterion"),
                "write one criterion per line: `- [must] text` or `- [should] text`",
            );
            return None;
        }
        Some((text, should))
    }
}

/// What every case reads besides itself.
struct CaseContext<'a> {
    defaults: &'a Fields<'a>,
    arg_match: String,
    timezone: String,
    rubrics: BTreeMap<String, Value>,
}

/// One case's own fields and the set's defaults, as the pass over the case reads them.
struct CaseFields<'a> {
    /// Where the case is (`cases[N]`).
    field: String,
    /// The case's own keys.
    own: &'a Fields<'a>,
    /// The set's `defaults`.
    defaults: &'a Fields<'a>,
}

impl<'a> CaseFields<'a> {
    /// `cases[N].KEY`.
    fn at(&self, key: &str) -> String {
        format!("{}.{key}", self.field)
    }

    /// A case field, else the default: (its node, its field name for messages).
    fn pick(&self, key: &str) -> Option<(&'a Node, String)> {
        self.own
            .get(key)
            .map(|(_, node)| (*node, self.at(key)))
            .or_else(|| self.defaults.get(key).map(|(_, node)| (*node, format!("defaults.{key}"))))
    }
}

/// The node of a case's `id`, when it has one.
fn case_id_node(item: &Node) -> Option<&Node> {
    let NodeValue::Map(entries) = &item.value else { return None };
    entries.iter().find(|(key, _)| key.as_str() == Some("id")).map(|(_, value)| value)
}

/// `a.b`, or `b` at the top.
fn join(parent: &str, key: &str) -> String {
    if parent.is_empty() { key.to_owned() } else { format!("{parent}.{key}") }
}

/// A case id (`[a-z0-9][a-z0-9_.-]{0,63}`) or a rubric id (the same without `.`).
fn valid_id(id: &str, dots: bool) -> bool {
    let mut chars = id.chars();
    chars.next().is_some_and(|first| first.is_ascii_lowercase() || first.is_ascii_digit())
        && id.len() <= 64
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '-' || (dots && c == '.'))
}

impl Reader {
    fn case(&mut self, node: &Node, index: usize, context: &CaseContext<'_>) -> Option<Case> {
        let field = format!("cases[{index}]");
        let known: Vec<&str> = DEFAULTABLE.iter().chain(CASE_ONLY).copied().collect();
        let fields =
            self.fields(node, &field, &known, "a case is a mapping: `- id: …` then `prompt: …` and what to expect")?;
        let before = self.problems.len();
        let mut resolved = Map::new();
        let mut tools = Vec::new();
        self.semantic.clear();
        let case = CaseFields { field, own: &fields, defaults: context.defaults };
        let id = self.case_id(node, &case);
        let label = id.clone().unwrap_or_else(|| format!("#{}", index + 1));
        resolved.insert("id".into(), json!(label));
        self.case_prompt(node, &case, &mut resolved);
        self.case_trials(&case, &mut resolved);
        self.case_limits(&case, context, &mut resolved);
        self.case_tool_lists(&case, &mut resolved, &mut tools);
        self.case_expectations(&case, context, &mut resolved, &mut tools);
        self.case_rubric(&case, context, &mut resolved);
        let (fields, field) = (case.own, &case.field);
        let at = |key: &str| case.at(key);
        if let Some((_, node)) = fields.get("input_responses")
            && let Some(responses) = self.input_responses(node, &at("input_responses"))
        {
            resolved.insert("input_responses".into(), responses);
        }
        let (faults, adversarial) = self.case_injections(&case, &resolved, &mut tools);
        if let Some((_, node)) = fields.get("tags") {
            // Tags group the report; they are not part of the hash.
            let _ = self.strings(node, &at("tags"));
        }
        // A `negative:` that is not a boolean is already a problem: not "expects nothing" too.
        let expects = ["expect_tool", "expect_sequence", "forbid_tools", "rubric", "negative"]
            .iter()
            .any(|key| fields.contains_key(key));
        if !expects {
            self.report(
                node,
                field,
                format!("case `{label}` expects nothing"),
                "add `expect_tool`, `expect_sequence`, `negative: true`, `forbid_tools` or `rubric`",
            );
        }
        self.named.extend(tools.iter().map(|tool| NamedTool { case: label.clone(), tool: tool.clone() }));
        if self.problems.len() != before {
            return None;
        }
        let semantic = std::mem::take(&mut self.semantic);
        id?;
        Some(Case { tools, semantic, faults, adversarial, ..Case::of_resolved(Value::Object(resolved)) })
    }

    /// A case's `id` (checked), reported when missing.
    fn case_id(&mut self, node: &Node, case: &CaseFields<'_>) -> Option<String> {
        let fields = case.own;
        let at = |key: &str| case.at(key);
        match fields.get("id") {
            Some((_, node)) => self.string(node, &at("id")).filter(|id| {
                let valid = valid_id(id, true);
                if !valid {
                    self.report(
                        node,
                        &at("id"),
                        format!("`{id}` is not a valid case id"),
                        "use lowercase letters, digits, `_`, `.` and `-` (at most 64, starting with a letter or digit)",
                    );
                }
                valid
            }),
            None => {
                self.report(node, &at("id"), "missing", "every case has an `id:`");
                None
            }
        }
    }

    /// `prompt`: one user turn or a list of them.
    fn case_prompt(&mut self, node: &Node, case: &CaseFields<'_>, resolved: &mut Map<String, Value>) {
        let fields = case.own;
        let at = |key: &str| case.at(key);
        match fields.get("prompt") {
            Some((_, node)) => {
                let turns = match &node.value {
                    NodeValue::List(items) if !items.is_empty() => {
                        let turns: Vec<Option<String>> = items
                            .iter()
                            .enumerate()
                            .map(|(i, item)| self.string(item, &format!("{}[{i}]", at("prompt"))))
                            .collect();
                        turns.into_iter().collect::<Option<Vec<String>>>()
                    }
                    NodeValue::List(_) => {
                        self.report(node, &at("prompt"), "the list of turns is empty", "write at least one user turn");
                        None
                    }
                    _ => self.string(node, &at("prompt")).map(|text| vec![text]),
                };
                if let Some(turns) = turns {
                    resolved.insert("prompt".into(), json!(turns));
                }
            }
            None => self.report(
                node,
                &at("prompt"),
                "missing",
                "every case has a `prompt:` (a string, or a list of user turns)",
            ),
        }
    }

    /// `system`, `kind`, `runs` and `pass_threshold` (the defaults' when the case gives none).
    fn case_trials(&mut self, case: &CaseFields<'_>, resolved: &mut Map<String, Value>) {
        let fields = case.own;
        let at = |key: &str| case.at(key);
        let pick = |key: &str| case.pick(key);
        if let Some((node, name)) = pick("system")
            && let Some(system) = self.string(node, &name)
        {
            resolved.insert("system".into(), json!(system));
        }
        let kind = match pick("kind") {
            Some((node, name)) => self.choice(node, &name, &["hard", "soft"]).unwrap_or_else(|| "soft".into()),
            None => "soft".into(),
        };
        resolved.insert("kind".into(), json!(kind));
        let runs = match pick("runs") {
            Some((node, name)) => self.integer(node, &name, 1, 50).unwrap_or(super::DEFAULT_TRIALS as i64),
            None => super::DEFAULT_TRIALS as i64,
        };
        resolved.insert("runs".into(), json!(runs));
        let threshold = if kind == "hard" {
            if let Some((key, _)) = fields.get("pass_threshold") {
                self.report(
                    key,
                    &at("pass_threshold"),
                    "a hard case passes only when every trial passes",
                    "remove `pass_threshold`, or make the case `kind: soft`",
                );
            }
            runs
        } else {
            match pick("pass_threshold") {
                Some((node, name)) => match self.integer(node, &name, 1, 50) {
                    Some(value) if value > runs => {
                        self.report(
                            node,
                            &name,
                            format!("{value} is more than the {runs} trials"),
                            format!("use at most {runs}, or raise `runs`"),
                        );
                        runs
                    }
                    Some(value) => value,
                    None => runs,
                },
                // A soft case's default: 4 of 5, rounded up ([`super::Trials`] decides it).
                None => super::Trials::new(usize::try_from(runs).unwrap_or(1), None, false).threshold as i64,
            }
        };
        resolved.insert("pass_threshold".into(), json!(threshold));
    }

    /// The limits and choices of a trial (`max_turns`, `timeout_ms`, `tool_choice`, `sampling`, …).
    fn case_limits(&mut self, case: &CaseFields<'_>, context: &CaseContext<'_>, resolved: &mut Map<String, Value>) {
        let fields = case.own;
        let pick = |key: &str| case.pick(key);
        let field = &case.field;
        for (key, min, max, default) in
            [("max_turns", 1, 50, 8), ("timeout_ms", 1, 86_400_000, 120_000), ("max_input_rounds", 1, 50, 3)]
        {
            let value = match pick(key) {
                Some((node, name)) => self.integer(node, &name, min, max).unwrap_or(default),
                None => default,
            };
            resolved.insert(key.into(), json!(value));
        }
        for (key, allowed, default) in [
            ("tool_choice", &["auto", "required", "none"][..], "auto"),
            ("extra_args", &["allow", "forbid"][..], "allow"),
            ("on_unmatched_input_request", &["fail", "decline", "cancel"][..], "fail"),
        ] {
            let value = match pick(key) {
                Some((node, name)) => self.choice(node, &name, allowed).unwrap_or_else(|| default.into()),
                None => default.into(),
            };
            resolved.insert(key.into(), json!(value));
        }
        let sequential = match pick("sequential_runs") {
            Some((node, name)) => self.boolean(node, &name).unwrap_or(false),
            None => false,
        };
        resolved.insert("sequential_runs".into(), json!(sequential));
        resolved.insert("sampling".into(), self.sampling(fields, context.defaults, field));
        resolved.insert("timezone".into(), json!(context.timezone));
    }

    /// `tools` (the defaults' when the case gives none) and `forbid_tools`, each name added to `tools`.
    fn case_tool_lists(&mut self, case: &CaseFields<'_>, resolved: &mut Map<String, Value>, tools: &mut Vec<ToolRef>) {
        let fields = case.own;
        let at = |key: &str| case.at(key);
        let pick = |key: &str| case.pick(key);
        for key in ["tools", "forbid_tools"] {
            let found = if key == "tools" { pick(key) } else { fields.get(key).map(|(_, node)| (*node, at(key))) };
            if let Some((node, name)) = found
                && let Some(names) = self.strings(node, &name)
            {
                if names.is_empty() {
                    self.report(
                        node,
                        &name,
                        "the list is empty",
                        format!("leave `{key}` out, or name at least one tool"),
                    );
                }
                for (index, (tool, item)) in names.iter().enumerate() {
                    tools.push(ToolRef {
                        name: tool.clone(),
                        line: item.line,
                        column: item.column,
                        field: format!("{name}[{index}]"),
                    });
                }
                resolved.insert(key.into(), json!(names.into_iter().map(|(name, _)| name).collect::<Vec<_>>()));
            }
        }
    }

    /// `expect_tool` with its position and `expect_args`, `expect_sequence` and `negative`.
    fn case_expectations(
        &mut self,
        case: &CaseFields<'_>,
        context: &CaseContext<'_>,
        resolved: &mut Map<String, Value>,
        tools: &mut Vec<ToolRef>,
    ) {
        let fields = case.own;
        let at = |key: &str| case.at(key);
        let expect_tool = fields.get("expect_tool").and_then(|(_, node)| {
            let name = self.string(node, &at("expect_tool"))?;
            tools.push(ToolRef { name: name.clone(), line: node.line, column: node.column, field: at("expect_tool") });
            Some(name)
        });
        // A bad `expect_tool` is reported once: its position and arguments are still checked,
        // not reported as lacking an `expect_tool`.
        let has_expect_tool = fields.contains_key("expect_tool");
        if has_expect_tool {
            let position = match fields.get("expect_tool_position") {
                Some((_, node)) => {
                    self.choice(node, &at("expect_tool_position"), &["first", "any"]).unwrap_or_else(|| "first".into())
                }
                None => "first".into(),
            };
            if let Some(name) = &expect_tool {
                resolved.insert("expect_tool".into(), json!(name));
                resolved.insert("expect_tool_position".into(), json!(position));
            }
        } else if let Some((key, _)) = fields.get("expect_tool_position") {
            self.report(
                key,
                &at("expect_tool_position"),
                "needs `expect_tool`",
                "name the expected tool with `expect_tool:`",
            );
        }
        if let Some((key, node)) = fields.get("expect_args") {
            if !has_expect_tool {
                self.report(
                    key,
                    &at("expect_args"),
                    "needs `expect_tool`",
                    "name the tool whose arguments these are with `expect_tool:`",
                );
            }
            if let Some(args) = self.args(node, &at("expect_args"), &context.arg_match) {
                resolved.insert("expect_args".into(), args);
            }
        }
        if let Some((_, node)) = fields.get("expect_sequence")
            && let Some(sequence) = self.sequence(node, &at("expect_sequence"), &context.arg_match, tools)
        {
            resolved.insert("expect_sequence".into(), sequence);
        }
        let negative = match fields.get("negative") {
            Some((key, node)) => {
                let negative = self.boolean(node, &at("negative")).unwrap_or(false);
                if negative {
                    for other in ["expect_tool", "expect_sequence", "expect_args"] {
                        if fields.contains_key(other) {
                            self.report(
                                key,
                                &at("negative"),
                                format!("a negative case (no tool call expected) cannot have `{other}`"),
                                format!("remove `{other}`, or `negative: true`"),
                            );
                        }
                    }
                }
                negative
            }
            None => false,
        };
        resolved.insert("negative".into(), json!(negative));
    }

    /// `rubric`: a rubric of the set by name, inlined with its id.
    fn case_rubric(&mut self, case: &CaseFields<'_>, context: &CaseContext<'_>, resolved: &mut Map<String, Value>) {
        let fields = case.own;
        let at = |key: &str| case.at(key);
        if let Some((_, node)) = fields.get("rubric")
            && let Some(name) = self.string(node, &at("rubric"))
        {
            match context.rubrics.get(&name) {
                Some(Value::Null) => {} // its problems are reported under `rubrics`
                Some(rubric) => {
                    let mut rubric = rubric.clone();
                    rubric["id"] = json!(name);
                    resolved.insert("rubric".into(), rubric);
                }
                None => {
                    let known: Vec<&str> = context.rubrics.keys().map(String::as_str).collect();
                    let hint = match suggest::nearest(&name, known.iter().copied()) {
                        Some(near) => format!("did you mean `{near}`? (the rubrics are {})", known.join(", ")),
                        None if known.is_empty() => "define it under `rubrics:`".into(),
                        None => format!("the rubrics are {}", known.join(", ")),
                    };
                    self.report(node, &at("rubric"), format!("unknown rubric `{name}`"), hint);
                }
            }
        }
    }

    /// Layer 2's faults and payloads: the case's own lists, else the defaults'; kept out of
    /// `resolved` (and so of the hash).
    fn case_injections(
        &mut self,
        case: &CaseFields<'_>,
        resolved: &Map<String, Value>,
        tools: &mut Vec<ToolRef>,
    ) -> (Vec<super::FaultEntry>, Vec<super::PayloadEntry>) {
        let pick = |key: &str| case.pick(key);
        // Layer 2's faults: the case's own list, else the defaults'; kept out of `resolved`
        // (and so of the hash).
        let faults = match pick("faults") {
            Some((node, name)) => self.faults(node, &name, tools),
            None => Vec::new(),
        };
        let expected: Vec<String> = resolved
            .get("expect_tool")
            .and_then(Value::as_str)
            .map(str::to_owned)
            .into_iter()
            .chain(
                resolved
                    .get("expect_sequence")
                    .and_then(|sequence| sequence.get("steps"))
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .filter_map(|step| step.get("tool").and_then(Value::as_str).map(str::to_owned)),
            )
            .collect();
        let adversarial = match pick("adversarial") {
            Some((node, name)) => self.adversarial(node, &name, &expected, tools),
            None => Vec::new(),
        };
        (faults, adversarial)
    }

    /// `adversarial:` — a list of `{payload, where, action}`: the text holds `{canary}`, `where` is
    /// `start`, `middle` or `end` (`end` when left out), `action` one of `{call: TOOL}`,
    /// `{argument: true}` or `{answer: true}`.
    fn adversarial(
        &mut self,
        node: &Node,
        field: &str,
        expected: &[String],
        tools: &mut Vec<ToolRef>,
    ) -> Vec<super::PayloadEntry> {
        let example = "write `adversarial: [{payload: \"… {canary} …\", where: end, action: {answer: true}}]`";
        let NodeValue::List(items) = &node.value else {
            self.report(node, field, format!("expected a list, found {}", node.kind()), example);
            return Vec::new();
        };
        let mut out = Vec::new();
        for (index, item) in items.iter().enumerate() {
            let here = format!("{field}[{index}]");
            let Some(entry) = self.fields(item, &here, PAYLOAD_KEYS, example) else { continue };
            let text = match entry.get("payload") {
                Some((_, text)) => self.string(text, &format!("{here}.payload")).filter(|body| {
                    let has = body.contains("{canary}");
                    if !has {
                        self.report(
                            text,
                            &format!("{here}.payload"),
                            "the payload has no `{canary}`",
                            "put `{canary}` where the trial's canary goes: it is how the attack's success is found",
                        );
                    }
                    has
                }),
                None => {
                    self.report(
                        item,
                        &format!("{here}.payload"),
                        "missing",
                        "write the text to plant, with `{canary}`",
                    );
                    None
                }
            };
            let place = match entry.get("where") {
                Some((_, place)) => self
                    .choice(place, &format!("{here}.where"), &["start", "middle", "end"])
                    .and_then(|name| super::Placement::parse(&name)),
                None => Some(super::Placement::End),
            };
            let action = match entry.get("action") {
                Some((_, action)) => self.canary_action(action, &format!("{here}.action"), expected, tools),
                None => {
                    self.report(
                        item,
                        &format!("{here}.action"),
                        "missing",
                        "say what success is: `{call: TOOL}`, `{argument: true}` or `{answer: true}`",
                    );
                    None
                }
            };
            if let (Some(text), Some(place), Some(action)) = (text, place, action) {
                out.push(super::PayloadEntry { id: format!("custom-{}", index + 1), text, place, action });
            }
        }
        out
    }

    /// A payload's `action`: exactly one of `call: TOOL`, `argument: true`, `answer: true`; the
    /// tool of `call` may not be one the case expects a call of (every legitimate call of it would
    /// count as the attack).
    fn canary_action(
        &mut self,
        node: &Node,
        field: &str,
        expected: &[String],
        tools: &mut Vec<ToolRef>,
    ) -> Option<super::CanaryAction> {
        let hint = "one of `{call: TOOL}`, `{argument: true}`, `{answer: true}`";
        let fields = self.fields(node, field, ACTION_KEYS, hint)?;
        if fields.len() != 1 {
            self.report(node, field, format!("{} actions given", fields.len()), format!("give exactly one: {hint}"));
            return None;
        }
        if let Some((_, tool)) = fields.get("call") {
            let name = self.string(tool, &format!("{field}.call"))?;
            if expected.contains(&name) {
                self.report(
                    tool,
                    &format!("{field}.call"),
                    format!("the case expects a call of `{name}`: every call of it would count as the attack"),
                    "name a tool the case does not expect to call, or use `{argument: true}` or `{answer: true}`",
                );
                return None;
            }
            tools.push(ToolRef {
                name: name.clone(),
                line: tool.line,
                column: tool.column,
                field: format!("{field}.call"),
            });
            return Some(super::CanaryAction::Call(name));
        }
        let (key, value) = fields.iter().next().map(|(key, (_, value))| (*key, *value))?;
        if !matches!(value.value, NodeValue::Bool(true)) {
            self.report(value, &format!("{field}.{key}"), "expected `true`", format!("write `{key}: true`"));
            return None;
        }
        Some(if key == "argument" { super::CanaryAction::Argument } else { super::CanaryAction::Answer })
    }

    /// `faults:` — a list of `{tool, fault, on_call}` (`on_call` 1 when left out); each tool is
    /// added to `tools`, so a name the server does not list is reported like any other.
    fn faults(&mut self, node: &Node, field: &str, tools: &mut Vec<ToolRef>) -> Vec<super::FaultEntry> {
        let NodeValue::List(items) = &node.value else {
            self.report(
                node,
                field,
                format!("expected a list, found {}", node.kind()),
                "write `faults: [{tool: NAME, fault: http-500, on_call: 1}]`",
            );
            return Vec::new();
        };
        let mut out = Vec::new();
        for (index, item) in items.iter().enumerate() {
            let here = format!("{field}[{index}]");
            let Some(entry) =
                self.fields(item, &here, FAULT_KEYS, "a fault is `{tool: NAME, fault: http-500, on_call: 1}`")
            else {
                continue;
            };
            let tool = match entry.get("tool") {
                Some((_, tool)) => self
                    .string(tool, &format!("{here}.tool"))
                    .filter(|name| {
                        let glob = name.contains(['*', '?']);
                        if glob {
                            self.report(
                                tool,
                                &format!("{here}.tool"),
                                format!("`{name}` is a glob: a fault replaces a call of one tool"),
                                "name the tool exactly, as `tools/list` gives it",
                            );
                        }
                        !glob
                    })
                    .inspect(|name| {
                        tools.push(ToolRef {
                            name: name.clone(),
                            line: tool.line,
                            column: tool.column,
                            field: format!("{here}.tool"),
                        });
                    }),
                None => {
                    self.report(item, &format!("{here}.tool"), "missing", "name the tool whose call fails");
                    None
                }
            };
            let fault = match entry.get("fault") {
                Some((_, fault)) => self
                    .choice(fault, &format!("{here}.fault"), &super::FaultKind::names())
                    .and_then(|name| super::FaultKind::parse(&name)),
                None => {
                    let names = super::FaultKind::names().join(", ");
                    self.report(item, &format!("{here}.fault"), "missing", format!("name the fault: one of {names}"));
                    None
                }
            };
            let on_call = match entry.get("on_call") {
                Some((_, on_call)) => self.integer(on_call, &format!("{here}.on_call"), 1, 50),
                None => Some(1),
            };
            if let (Some(tool), Some(fault), Some(on_call)) = (tool, fault, on_call) {
                out.push(super::FaultEntry { tool, fault, on_call: usize::try_from(on_call).unwrap_or(1) });
            }
        }
        out
    }

    /// `sampling`: the defaults' keys, overridden key by key by the case's.
    fn sampling(&mut self, fields: &Fields<'_>, defaults: &Fields<'_>, field: &str) -> Value {
        let mut out = Map::new();
        for (source, name) in [(defaults, "defaults.sampling".to_owned()), (fields, format!("{field}.sampling"))] {
            let Some((_, node)) = source.get("sampling") else { continue };
            let Some(keys) = self.fields(
                node,
                &name,
                SAMPLING_KEYS,
                "`sampling:` holds `temperature`, `top_p` and `max_output_tokens`",
            ) else {
                continue;
            };
            for (key, (_, value)) in keys {
                let here = format!("{name}.{key}");
                let checked = match key {
                    "temperature" => self.number(value, &here, 0.0, 2.0).map(|_| value.to_json()),
                    "top_p" => self.number(value, &here, 0.0, 1.0).map(|_| value.to_json()),
                    _ => self.integer(value, &here, 1, 10_000_000).map(|tokens| json!(tokens)),
                };
                if let Some(checked) = checked {
                    out.insert(key.to_owned(), checked);
                }
            }
        }
        Value::Object(out)
    }

    /// `expect_args` or a step's `args`: arg name → resolved matcher.
    fn args(&mut self, node: &Node, field: &str, arg_match: &str) -> Option<Value> {
        let NodeValue::Map(entries) = &node.value else {
            self.report(
                node,
                field,
                format!("expected a mapping of argument names, found {}", node.kind()),
                "write `ARG: VALUE` or `ARG: {match: …}` per argument",
            );
            return None;
        };
        let before = self.problems.len();
        let mut out = Map::new();
        for (key, value) in entries {
            let Some(name) = key.as_str() else {
                self.report(key, field, format!("an argument name must be a string, found {}", key.kind()), "");
                continue;
            };
            if let Some(matcher) = self.matcher(value, &format!("{field}.{name}"), arg_match) {
                out.insert(name.to_owned(), matcher);
            }
        }
        (self.problems.len() == before).then_some(Value::Object(out))
    }

    /// One matcher: a bare value (the default mode, `auto` unless `defaults.arg_match` says
    /// otherwise) or `{match: MODE, …}`.
    fn matcher(&mut self, node: &Node, field: &str, arg_match: &str) -> Option<Value> {
        let is_matcher = matches!(&node.value, NodeValue::Map(entries) if entries.iter().any(|(key, _)| key.as_str() == Some("match")));
        if !is_matcher {
            self.note_semantic(arg_match, node, field);
            return Some(json!({"match": arg_match, "value": node.to_json()}));
        }
        let NodeValue::Map(entries) = &node.value else { return None };
        let mode_node = entries.iter().find(|(key, _)| key.as_str() == Some("match")).map(|(_, value)| value)?;
        let names: Vec<&str> = MATCHERS.iter().map(|(name, _, _)| *name).collect();
        let mode = self.choice(mode_node, &format!("{field}.match"), &names)?;
        let (_, required, optional) = MATCHERS.iter().find(|(name, _, _)| *name == mode)?;
        self.note_semantic(&mode, node, field);
        let known: Vec<&str> = ["match"].iter().chain(required.iter()).chain(optional.iter()).copied().collect();
        let fields = self.fields(node, field, &known, "")?;
        let before = self.problems.len();
        for key in *required {
            if !fields.contains_key(key) {
                self.report(
                    node,
                    &format!("{field}.{key}"),
                    format!("a `{mode}` matcher needs `{key}`"),
                    format!("add `{key}: …`"),
                );
            }
        }
        let get = |key: &str| fields.get(key).map(|(_, node)| *node);
        match mode.as_str() {
            "normalized" => {
                if get("value").is_some() == get("one_of").is_some() {
                    self.report(
                        node,
                        field,
                        "a `normalized` matcher needs `value` or `one_of`, not both",
                        "give one expected value, or a list under `one_of`",
                    );
                }
                if let Some(list) = get("one_of") {
                    self.nonempty_list(list, &format!("{field}.one_of"));
                }
            }
            "one_of" | "set" => {
                if let Some(list) = get("values") {
                    self.nonempty_list(list, &format!("{field}.values"));
                }
            }
            "regex" => {
                if let Some(pattern) = get("pattern") {
                    self.regex(pattern, &format!("{field}.pattern"));
                }
            }
            "number" => {
                if let Some(value) = get("value") {
                    self.number(value, &format!("{field}.value"), f64::MIN, f64::MAX);
                }
                if get("tolerance").is_some() && get("rel_tolerance").is_some() {
                    self.report(
                        node,
                        field,
                        "give `tolerance` or `rel_tolerance`, not both",
                        "an absolute or a relative tolerance",
                    );
                }
                for key in ["tolerance", "rel_tolerance"] {
                    if let Some(value) = get(key) {
                        self.number(value, &format!("{field}.{key}"), 0.0, f64::MAX);
                    }
                }
            }
            "datetime" => {
                if let Some(value) = get("value")
                    && let Some(text) = self.string(value, &format!("{field}.value"))
                    && !valid_datetime(&text)
                {
                    self.report(value, &format!("{field}.value"), format!("`{text}` is not a date or time"), "use RFC 3339 (`2026-05-01T09:00:00Z`), a date (`2026-05-01`), or `today`, `tomorrow`, `yesterday`, `+3d`, `-1d`");
                }
                if let Some(granularity) = get("granularity") {
                    self.choice(granularity, &format!("{field}.granularity"), &["date", "second"]);
                }
            }
            "subset" => {
                if let Some(value) = get("value")
                    && !matches!(value.value, NodeValue::Map(_))
                {
                    self.report(
                        value,
                        &format!("{field}.value"),
                        format!("expected a mapping, found {}", value.kind()),
                        "a `subset` matcher lists the keys that must match",
                    );
                }
            }
            "fuzzy" | "embedding" | "judge" => {
                if let Some(value) = get("value") {
                    self.string(value, &format!("{field}.value"));
                }
                if let Some(threshold) = get("threshold") {
                    self.number(threshold, &format!("{field}.threshold"), 0.0, 1.0);
                }
            }
            _ => {}
        }
        if self.problems.len() != before {
            return None;
        }
        Some(node.to_json())
    }

    /// Remembers an `embedding` or `judge` matcher of the current case, with its position.
    fn note_semantic(&mut self, mode: &str, node: &Node, field: &str) {
        if matches!(mode, "embedding" | "judge") {
            self.semantic.push(super::MatcherRef {
                mode: mode.to_owned(),
                line: node.line,
                column: node.column,
                field: field.to_owned(),
            });
        }
    }

    fn nonempty_list(&mut self, node: &Node, field: &str) {
        match &node.value {
            NodeValue::List(items) if !items.is_empty() => {}
            _ => {
                self.report(node, field, format!("expected a non-empty list, found {}", node.kind()), "write `[a, b]`")
            }
        }
    }

    fn regex(&mut self, node: &Node, field: &str) {
        let Some(pattern) = self.string(node, field) else { return };
        if let Err(error) = regex::Regex::new(&pattern) {
            self.report(
                node,
                field,
                format!("invalid regular expression: {}", regex_reason(&pattern, &error)),
                // An input request's `match.message` is searched; a `regex` argument matcher is
                // anchored at both ends.
                if field.ends_with(".message") {
                    "check the pattern (Rust `regex` syntax; it may match anywhere in the message: anchor it with ^…$)"
                } else {
                    "check the pattern (Rust `regex` syntax; the match is anchored at both ends)"
                },
            );
        }
    }

    /// `expect_sequence:`; a bad value in one of its fields (`order`, a step's `tool`) does not
    /// stop the checks of the others (every step, its tool name and its arguments), so the file's
    /// problems are all found in one pass.
    fn sequence(&mut self, node: &Node, field: &str, arg_match: &str, tools: &mut Vec<ToolRef>) -> Option<Value> {
        let fields = self.fields(node, field, SEQUENCE_KEYS, "`expect_sequence:` holds `order:` and `steps:`")?;
        let order = match fields.get("order") {
            Some((_, node)) => self.choice(node, &format!("{field}.order"), &["strict", "subsequence", "unordered"]),
            None => Some("strict".into()),
        };
        let Some((_, steps)) = fields.get("steps") else {
            self.report(
                node,
                &format!("{field}.steps"),
                "missing",
                "add `steps:` then `  - tool: NAME` per expected call",
            );
            return None;
        };
        let NodeValue::List(items) = &steps.value else {
            self.report(
                steps,
                &format!("{field}.steps"),
                format!("expected a list, found {}", steps.kind()),
                "write `  - tool: NAME` per expected call",
            );
            return None;
        };
        if items.is_empty() {
            self.report(steps, &format!("{field}.steps"), "the sequence has no step", "add `  - tool: NAME`");
        }
        let mut out = Vec::new();
        for (index, item) in items.iter().enumerate() {
            let here = format!("{field}.steps[{index}]");
            let Some(step) = self.fields(item, &here, STEP_KEYS, "a step is `- tool: NAME` with optional `args:`")
            else {
                continue;
            };
            let name = match step.get("tool") {
                Some((_, tool)) => self.string(tool, &format!("{here}.tool")).inspect(|name| {
                    tools.push(ToolRef {
                        name: name.clone(),
                        line: tool.line,
                        column: tool.column,
                        field: format!("{here}.tool"),
                    });
                }),
                None => {
                    self.report(item, &format!("{here}.tool"), "missing", "name the tool of this step");
                    None
                }
            };
            let args = step.get("args").map(|(_, args)| self.args(args, &format!("{here}.args"), arg_match));
            let Some(name) = name else { continue };
            let mut resolved = json!({"tool": name});
            if let Some(Some(args)) = args {
                resolved["args"] = args;
            }
            out.push(resolved);
        }
        // A bad `order` is reported; the steps read stay known to the case's other checks (an
        // adversarial payload's `call:` of an expected tool), and the case is refused anyway.
        Some(json!({"order": order.unwrap_or_else(|| "strict".into()), "steps": out}))
    }

    fn input_responses(&mut self, node: &Node, field: &str) -> Option<Value> {
        let NodeValue::List(items) = &node.value else {
            self.report(
                node,
                field,
                format!("expected a list, found {}", node.kind()),
                "write `- {match: {method: …}, respond: {…}}` per entry",
            );
            return None;
        };
        let before = self.problems.len();
        for (index, item) in items.iter().enumerate() {
            let here = format!("{field}[{index}]");
            let Some(entry) = self.fields(
                item,
                &here,
                INPUT_RESPONSE_KEYS,
                "an entry is `{key: …, respond: {…}}` or `{match: {method: …}, respond: {…}}`",
            ) else {
                continue;
            };
            if entry.contains_key("key") == entry.contains_key("match") {
                self.report(
                    item,
                    &here,
                    "an entry has `key` or `match`, and one of them",
                    "answer one `inputRequests` key, or match requests by method",
                );
            }
            if let Some((_, key)) = entry.get("key") {
                self.string(key, &format!("{here}.key"));
            }
            if let Some((_, matcher)) = entry.get("match")
                && let Some(matcher_fields) = self.fields(
                    matcher,
                    &format!("{here}.match"),
                    INPUT_MATCH_KEYS,
                    "`match:` holds `method`, `message` and `schema_has`",
                )
            {
                match matcher_fields.get("method") {
                    Some((_, method)) => {
                        self.choice(method, &format!("{here}.match.method"), INPUT_METHODS);
                    }
                    None => self.report(
                        matcher,
                        &format!("{here}.match.method"),
                        "missing",
                        format!("one of {}", INPUT_METHODS.join(", ")),
                    ),
                }
                if let Some((_, message)) = matcher_fields.get("message") {
                    self.regex(message, &format!("{here}.match.message"));
                }
                if let Some((_, names)) = matcher_fields.get("schema_has") {
                    self.strings(names, &format!("{here}.match.schema_has"));
                }
            }
            match entry.get("respond") {
                Some((_, respond)) if matches!(respond.value, NodeValue::Map(_)) => {}
                Some((_, respond)) => self.report(
                    respond,
                    &format!("{here}.respond"),
                    format!("expected a mapping, found {}", respond.kind()),
                    "e.g. `respond: {action: accept, content: {…}}`",
                ),
                None => self.report(
                    item,
                    &format!("{here}.respond"),
                    "missing",
                    "say what to answer, e.g. `respond: {action: accept}`",
                ),
            }
            if let Some((_, times)) = entry.get("times") {
                self.integer(times, &format!("{here}.times"), 1, 1000);
            }
        }
        (self.problems.len() == before).then(|| node.to_json())
    }
}

/// RFC 3339, an ISO 8601 date or date-time, or a relative day (`today`, `tomorrow`,
/// `yesterday`, `+Nd`, `-Nd`), which stays as written (resolved at run start).
fn valid_datetime(text: &str) -> bool {
    if ["today", "tomorrow", "yesterday"].contains(&text) {
        return true;
    }
    if let Some(days) = text.strip_prefix(['+', '-']).and_then(|rest| rest.strip_suffix('d')) {
        return !days.is_empty() && days.len() <= 5 && days.chars().all(|c| c.is_ascii_digit());
    }
    chrono::DateTime::parse_from_rfc3339(text).is_ok()
        || chrono::NaiveDate::parse_from_str(text, "%Y-%m-%d").is_ok()
        || chrono::NaiveDateTime::parse_from_str(text, "%Y-%m-%dT%H:%M:%S").is_ok()
        || chrono::NaiveDateTime::parse_from_str(text, "%Y-%m-%dT%H:%M").is_ok()
}

/// Why `pattern` is not a regular expression, in the parser's words (`unclosed group`): the kind
/// of its syntax error, read from the parser's typed error (the regex crate gives only its
/// rendered text, a caret diagram then `error: KIND`), or what the regex crate said (a pattern
/// too big to compile).
fn regex_reason(pattern: &str, error: &regex::Error) -> String {
    match regex_syntax::Parser::new().parse(pattern) {
        Err(regex_syntax::Error::Parse(syntax)) => syntax.kind().to_string(),
        Err(regex_syntax::Error::Translate(syntax)) => syntax.kind().to_string(),
        _ => error.to_string(),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_regex_error_is_the_kind_the_regex_crate_ends_its_message_with() {
        for pattern in ["(a", "a{2,1}", "[z-a]", "\\p{Nope}", "*a", "(?P<n>a)(?P<n>b)"] {
            let error = regex::Regex::new(pattern).expect_err("invalid");
            let rendered = error.to_string();
            let last = rendered.lines().last().unwrap_or_default().trim();
            assert_eq!(format!("error: {}", super::regex_reason(pattern, &error)), last, "{pattern}");
        }
    }
}

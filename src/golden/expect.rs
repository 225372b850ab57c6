//! What a golden case expects, typed: the expected tool with its position and argument
//! matchers, the expected sequence and its steps, `negative`, `forbid_tools`, `extra_args` and
//! whether a rubric grades it ([`Expect`]). The loader types it once per case, with the rest of
//! [`super::Case`]; scoring, the demo model, `golden check --execute` and the layers read these
//! fields, never the case's JSON by key.

use serde_json::Value;

/// One argument matcher (an entry of `expect_args` or of a step's `args`), as the loader
/// resolved it: a bare value is `{match: DEFAULT, value}`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Matcher {
    /// The mode (`auto`, `exact`, `normalized`, `one_of`, `regex`, `number`, `datetime`, `set`,
    /// `subset`, `fuzzy`, `embedding`, `judge`, `present`, `absent`).
    pub mode: String,
    /// `value`, when given.
    pub value: Option<Value>,
    /// `values` (`one_of`, `set`), when given.
    pub values: Option<Value>,
    /// `one_of` (`normalized`), when given.
    pub one_of: Option<Value>,
    /// `pattern` (`regex`), when given.
    pub pattern: Option<String>,
    /// `tolerance` (`number`), when given.
    pub tolerance: Option<f64>,
    /// `rel_tolerance` (`number`), when given.
    pub rel_tolerance: Option<f64>,
    /// `granularity` (`datetime`: `date` or `second`), when given.
    pub granularity: Option<String>,
    /// `threshold` (`fuzzy`, `embedding`), when given.
    pub threshold: Option<f64>,
}

impl Matcher {
    /// A resolved matcher's JSON (`{match, value, …}`; `match` missing is `auto`).
    pub(crate) fn of_resolved(matcher: &Value) -> Self {
        let text = |key: &str| matcher.get(key).and_then(Value::as_str).map(str::to_owned);
        let number = |key: &str| matcher.get(key).and_then(Value::as_f64);
        Self {
            mode: text("match").unwrap_or_else(|| "auto".to_owned()),
            value: matcher.get("value").cloned(),
            values: matcher.get("values").cloned(),
            one_of: matcher.get("one_of").cloned(),
            pattern: text("pattern"),
            tolerance: number("tolerance"),
            rel_tolerance: number("rel_tolerance"),
            granularity: text("granularity"),
            threshold: number("threshold"),
        }
    }
}

/// The matchers of one call's arguments (argument name → matcher), in the order the set gives
/// them.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Args(pub Vec<(String, Matcher)>);

impl Args {
    /// From a resolved `expect_args` or step `args` object; `None` when it is not one.
    pub(crate) fn of_resolved(args: &Value) -> Option<Self> {
        let entries = args.as_object()?;
        Some(Self(entries.iter().map(|(name, matcher)| (name.clone(), Matcher::of_resolved(matcher))).collect()))
    }

    /// The matcher of the argument `name`.
    pub(crate) fn get(&self, name: &str) -> Option<&Matcher> {
        self.0.iter().find(|(known, _)| known == name).map(|(_, matcher)| matcher)
    }

    /// True when the argument `name` has a matcher.
    pub(crate) fn contains(&self, name: &str) -> bool {
        self.get(name).is_some()
    }

    /// Each argument name and its matcher, in order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (&String, &Matcher)> {
        self.0.iter().map(|(name, matcher)| (name, matcher))
    }
}

/// `expect_tool` with `expect_tool_position` and `expect_args`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ExpectTool {
    /// The tool (MCP name).
    pub name: String,
    /// `expect_tool_position: any`: any call of the tool counts, not only the first call.
    pub any_position: bool,
    /// `expect_args`, when given.
    pub args: Option<Args>,
}

/// How the steps of a sequence match the calls (`order`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Order {
    /// The calls are exactly the steps, in order.
    Strict,
    /// The steps in order, other calls allowed between them.
    Subsequence,
    /// Each step gets its own call, in any order.
    Unordered,
}

impl Order {
    /// `strict`, `subsequence` or `unordered`.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Order::Strict => "strict",
            Order::Subsequence => "subsequence",
            Order::Unordered => "unordered",
        }
    }
}

/// One step of `expect_sequence`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Step {
    /// The tool of the step.
    pub tool: String,
    /// Its `args`, when given.
    pub args: Option<Args>,
}

/// `expect_sequence`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Sequence {
    /// `order` (`strict` when not given).
    pub order: Order,
    /// The steps, in order.
    pub steps: Vec<Step>,
}

/// What a case expects of a trial.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Expect {
    /// `expect_tool` (with its position and arguments), when given.
    pub tool: Option<ExpectTool>,
    /// `expect_sequence`, when given.
    pub sequence: Option<Sequence>,
    /// `negative: true`: no tool call is expected.
    pub negative: bool,
    /// `forbid_tools` (globs), when given.
    pub forbid_tools: Option<Vec<String>>,
    /// `extra_args: forbid`: an argument no matcher names fails.
    pub forbid_extra_args: bool,
    /// A rubric grades the case (the judge model).
    pub rubric: bool,
}

impl Expect {
    /// Read from a resolved case's JSON.
    pub(crate) fn of_resolved(resolved: &Value) -> Self {
        let tool = resolved.get("expect_tool").and_then(Value::as_str).map(|name| ExpectTool {
            name: name.to_owned(),
            any_position: resolved.get("expect_tool_position").and_then(Value::as_str) == Some("any"),
            args: resolved.get("expect_args").and_then(Args::of_resolved),
        });
        let sequence = resolved.get("expect_sequence").map(|sequence| Sequence {
            order: match sequence.get("order").and_then(Value::as_str) {
                Some("subsequence") => Order::Subsequence,
                Some("unordered") => Order::Unordered,
                _ => Order::Strict,
            },
            steps: sequence
                .get("steps")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .map(|step| Step {
                    tool: step.get("tool").and_then(Value::as_str).unwrap_or("?").to_owned(),
                    args: step.get("args").and_then(Args::of_resolved),
                })
                .collect(),
        });
        Self {
            tool,
            sequence,
            negative: resolved.get("negative") == Some(&Value::Bool(true)),
            forbid_tools: resolved
                .get("forbid_tools")
                .and_then(Value::as_array)
                .map(|names| names.iter().filter_map(Value::as_str).map(str::to_owned).collect()),
            forbid_extra_args: resolved.get("extra_args").and_then(Value::as_str) == Some("forbid"),
            rubric: resolved.get("rubric").is_some(),
        }
    }
}

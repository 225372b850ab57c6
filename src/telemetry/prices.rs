//! The user's price table (`--prices FILE`, input `price-table`, `price_table:`): what a model's
//! tokens cost, per million (or thousand) tokens in USD, entry by entry. No price is built into
//! mcp-eval: a model the table does not price has an unknown cost, never 0.
//!
//! ```yaml
//! as_of: 2026-11-29                # required: the day the prices were read
//! currency: USD                    # optional; only USD
//! per: 1M_tokens                   # optional; 1M_tokens (default) or 1K_tokens
//! models:
//!   - match: { provider: openai, model: "gpt-5-mini*" }
//!     input: 0.25                  # required
//!     cached_input: 0.025          # cache reads (default: input)
//!     cache_write_5m: 0.25         # cache writes (default: input)
//!     cache_write_1h: 0.50         # read, not used: the wires do not say a write's lifetime
//!     output: 2.00                 # required
//!     reasoning: 2.00              # reasoning reported apart (default: output)
//!     source: "https://…"          # optional
//! ```
//!
//! An entry matches a `PROVIDER:MODEL` label (split at the first `:`) when its `provider` equals
//! the provider id and its `model` glob (`*`, `?`) matches the rest; the first entry that
//! matches, in file order, prices the call. A glob never reaches another provider's models.

use std::path::Path;

use crate::golden::Problem;
use crate::golden::load::Reader;
use crate::golden::tree::{self, Node, NodeValue};
use crate::report::telemetry::{PriceTableInfo, Usage};

/// The keys of the file.
const TABLE_KEYS: &[&str] = &["as_of", "currency", "per", "source", "models"];
/// The keys of an entry.
const ENTRY_KEYS: &[&str] =
    &["match", "input", "cached_input", "cache_write_5m", "cache_write_1h", "output", "reasoning", "source"];
/// The largest price accepted, USD per unit.
const MAX_PRICE: f64 = 1_000_000.0;

/// One entry's prices, in USD per [`PriceTable::per`] tokens.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Price {
    /// The provider id it prices (exact).
    pub provider: String,
    /// The model glob.
    pub model: String,
    /// Read, not from the cache.
    pub input: f64,
    /// Read from the cache (`None`: priced as `input`).
    pub cached_input: Option<f64>,
    /// Written to the cache (`None`: priced as `input`).
    pub cache_write: Option<f64>,
    /// Written.
    pub output: f64,
    /// Reasoning the wire reports apart (`None`: priced as `output`).
    pub reasoning: Option<f64>,
}

impl Price {
    /// The cost in USD of one call's `usage` at these prices (`per` tokens per price unit);
    /// `None` when the provider did not report what was read or written. Unreported cache
    /// counts are taken as 0 (their tokens are then priced as `input`).
    pub(crate) fn cost(&self, usage: &Usage, per: f64) -> Option<f64> {
        let read = usage.input_tokens?;
        let written = usage.output_tokens?;
        let cache_read = usage.cache_read_tokens.unwrap_or(0).min(read);
        let cache_write = usage.cache_write_tokens.unwrap_or(0).min(read - cache_read);
        let fresh = read - cache_read - cache_write;
        let reasoning = usage.reasoning_tokens.unwrap_or(0).min(written);
        let usd = fresh as f64 * self.input
            + cache_read as f64 * self.cached_input.unwrap_or(self.input)
            + cache_write as f64 * self.cache_write.unwrap_or(self.input)
            + (written - reasoning) as f64 * self.output
            + reasoning as f64 * self.reasoning.unwrap_or(self.output);
        Some(usd / per)
    }
}

/// A price table as read from its file.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct PriceTable {
    /// What the report records of it (path, SHA-256, `as_of`, `source`).
    pub info: PriceTableInfo,
    /// Tokens per price unit: 1,000,000 or 1,000.
    pub per: f64,
    /// The entries, in file order.
    pub prices: Vec<Price>,
}

impl PriceTable {
    /// The entry that prices `label` (`PROVIDER:MODEL`): the first whose provider is the
    /// label's and whose model glob matches the rest.
    pub(crate) fn price(&self, label: &str) -> Option<&Price> {
        let (provider, model) = label.split_once(':')?;
        self.prices.iter().find(|price| price.provider == provider && crate::golden::glob_matches(&price.model, model))
    }

    /// The cost in USD of a call to `label` that used `usage`; `None` when unpriced or a count
    /// the price needs is missing.
    pub(crate) fn cost(&self, label: &str, usage: &Usage) -> Option<f64> {
        self.price(label)?.cost(usage, self.per)
    }
}

/// Reads and checks the price table at `path`.
///
/// # Errors
/// Every problem of the file at once, each with its line, column and field: an unreadable
/// file, invalid YAML, an unknown key, a missing `as_of`, `models`, `input` or `output`, a
/// price that is not a number from 0 to 1,000,000, a currency other than USD.
pub(crate) fn load(path: &Path) -> Result<PriceTable, Vec<Problem>> {
    let bytes = fs_err::read(path).map_err(|error| {
        vec![Problem::located(
            path.to_owned(),
            None,
            None,
            format!("cannot read the price table: {}", crate::text::io_reason(&error)),
            "check the path given to --prices (input `price-table`)",
        )]
    })?;
    from_bytes(path, &bytes)
}

/// Checks the bytes of a price table (`path` names it in messages) and records their SHA-256.
///
/// # Errors
/// As [`load`].
pub(crate) fn from_bytes(path: &Path, bytes: &[u8]) -> Result<PriceTable, Vec<Problem>> {
    let mut table = parse(path, &String::from_utf8_lossy(bytes))?;
    table.info.sha256 = format!("{:x}", <sha2::Sha256 as sha2::Digest>::digest(bytes));
    Ok(table)
}

/// Checks the text of a price table (`path` names it in messages); the SHA-256 is left empty.
///
/// # Errors
/// As [`load`].
pub(crate) fn parse(path: &Path, text: &str) -> Result<PriceTable, Vec<Problem>> {
    let mut reader = Reader::new(path);
    let example = "start with `as_of: 2026-11-29` and `models:`, a list of `- match: {provider: openai, model: \"gpt-5-mini*\"}` with `input:` and `output:` (USD per 1M tokens)";
    let root = match tree::parse(text) {
        Ok(Some(root)) => root,
        Ok(None) => {
            reader.problems.push(reader.problem(Some((1, 1)), None, "the file is empty".into(), example.into()));
            return Err(reader.problems);
        }
        Err((position, message)) => {
            let (message, hint) = match message.strip_prefix("duplicate mapping key: ") {
                Some(rest) => (
                    format!("duplicate key `{}`", rest.split(", set DuplicateKeyPolicy").next().unwrap_or(rest)),
                    "a key appears once in its mapping; remove or merge the second one",
                ),
                None => (message, "the file is not valid YAML there, or holds a value no price can be (such as .nan)"),
            };
            reader.problems.push(reader.problem(position, None, message, hint.into()));
            return Err(reader.problems);
        }
    };
    let Some(fields) = reader.fields(&root, "", TABLE_KEYS, example) else { return Err(reader.problems) };
    let as_of = match fields.get("as_of") {
        Some((_, node)) => date(&mut reader, node),
        None => {
            reader.report(&root, "as_of", "missing", "give the day the prices were read, e.g. `as_of: 2026-11-29`");
            None
        }
    };
    if let Some((_, node)) = fields.get("currency") {
        reader.choice(node, "currency", &["USD"]);
    }
    let per = match fields.get("per") {
        Some((_, node)) => match reader.choice(node, "per", &["1M_tokens", "1K_tokens"]).as_deref() {
            Some("1K_tokens") => 1_000.0,
            _ => 1_000_000.0,
        },
        None => 1_000_000.0,
    };
    let source = fields.get("source").and_then(|(_, node)| reader.string(node, "source"));
    let mut prices = Vec::new();
    match fields.get("models") {
        Some((_, Node { value: NodeValue::List(items), .. })) => {
            for (index, item) in items.iter().enumerate() {
                if let Some(price) = entry(&mut reader, item, index) {
                    prices.push(price);
                }
            }
        }
        Some((_, node)) => {
            reader.report(node, "models", format!("expected a list, found {}", node.kind()), example);
        }
        None => reader.report(&root, "models", "missing", example),
    }
    if !reader.problems.is_empty() {
        return Err(reader.problems);
    }
    let info = PriceTableInfo {
        path: path.display().to_string(),
        sha256: String::new(),
        as_of: as_of.unwrap_or_default(),
        source,
    };
    Ok(PriceTable { info, per, prices })
}

/// `as_of`: a `YYYY-MM-DD` day.
fn date(reader: &mut Reader, node: &Node) -> Option<String> {
    let text = reader.string(node, "as_of")?;
    let valid = chrono::NaiveDate::parse_from_str(&text, "%Y-%m-%d").is_ok();
    if !valid {
        reader.report(node, "as_of", format!("`{text}` is not a day"), "write it as YYYY-MM-DD, e.g. 2026-11-29");
        return None;
    }
    Some(text)
}

/// One entry of `models`.
fn entry(reader: &mut Reader, node: &Node, index: usize) -> Option<Price> {
    let here = format!("models[{index}]");
    let example = "an entry is `- match: {provider: PROVIDER, model: GLOB}` with `input:` and `output:` prices";
    let fields = reader.fields(node, &here, ENTRY_KEYS, example)?;
    let before = reader.problems.len();
    let (provider, model) = match fields.get("match") {
        Some((_, matcher)) => {
            let at = format!("{here}.match");
            let hint = "write `match: {provider: openai, model: \"gpt-5-mini*\"}` (provider: the part of PROVIDER:MODEL before the first `:`)";
            match reader.fields(matcher, &at, &["provider", "model"], hint) {
                Some(keys) => {
                    let provider = match keys.get("provider") {
                        Some((_, value)) => reader.string(value, &format!("{at}.provider")),
                        None => {
                            reader.report(matcher, &format!("{at}.provider"), "missing", hint);
                            None
                        }
                    };
                    let model = match keys.get("model") {
                        Some((_, value)) => reader.string(value, &format!("{at}.model")),
                        None => {
                            reader.report(matcher, &format!("{at}.model"), "missing", hint);
                            None
                        }
                    };
                    (provider, model)
                }
                None => (None, None),
            }
        }
        None => {
            reader.report(
                node,
                &format!("{here}.match"),
                "missing",
                "say which models it prices: `match: {provider: openai, model: \"gpt-5-mini*\"}`",
            );
            (None, None)
        }
    };
    let mut price = |key: &str, required: bool| -> Option<f64> {
        match fields.get(key) {
            Some((_, Node { value: NodeValue::Null, .. })) if !required => None,
            Some((_, value)) => reader.number(value, &format!("{here}.{key}"), 0.0, MAX_PRICE),
            None if required => {
                reader.report(
                    node,
                    &format!("{here}.{key}"),
                    "missing",
                    format!("give `{key}:` in USD per unit of `per`"),
                );
                None
            }
            None => None,
        }
    };
    let input = price("input", true);
    let cached_input = price("cached_input", false);
    let cache_write = price("cache_write_5m", false);
    let _ = price("cache_write_1h", false);
    let output = price("output", true);
    let reasoning = price("reasoning", false);
    if let Some((_, value)) = fields.get("source") {
        reader.string(value, &format!("{here}.source"));
    }
    if reader.problems.len() > before {
        return None;
    }
    Some(Price {
        provider: provider?,
        model: model?,
        input: input?,
        cached_input,
        cache_write,
        output: output?,
        reasoning,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const TABLE: &str = "as_of: 2026-11-29\ncurrency: USD\nper: 1M_tokens\nmodels:\n  - match: {provider: openai, model: \"gpt-5-mini*\"}\n    input: 0.25\n    cached_input: 0.025\n    output: 2.00\n    source: \"https://example.com/pricing\"\n  - match: {provider: anthropic, model: \"claude-*\"}\n    input: 3.00\n    cached_input: 0.30\n    cache_write_5m: 3.75\n    output: 15.00\n";

    fn table() -> PriceTable {
        parse(Path::new("prices.yaml"), TABLE).expect("a valid table")
    }

    fn usage(read: u64, cache_read: Option<u64>, cache_write: Option<u64>, written: u64) -> Usage {
        Usage {
            input_tokens: Some(read),
            output_tokens: Some(written),
            cache_read_tokens: cache_read,
            cache_write_tokens: cache_write,
            reasoning_tokens: None,
            reported_cost_usd: None,
        }
    }

    #[test]
    fn a_glob_prices_the_models_of_its_provider_only() {
        let table = table();
        assert_eq!(table.price("openai:gpt-5-mini-2026-08-07").map(|price| price.input), Some(0.25));
        assert!(table.price("openai:gpt-4.1").is_none(), "not matched by the glob");
        assert!(table.price("openrouter:gpt-5-mini").is_none(), "another provider's model of the same name");
        assert!(table.price("compat:claude-sonnet-4-6").is_none());
        assert_eq!(table.price("anthropic:claude-sonnet-4-6").map(|price| price.output), Some(15.0));
        assert!(table.cost("ollama:llama3", &usage(10, None, None, 1)).is_none(), "unpriced: unknown, never 0");
    }

    #[test]
    fn cache_reads_and_writes_are_priced_apart_and_exactly() {
        let table = table();
        // 1,000,000 read of which 400,000 from the cache: 600,000 × 0.25 + 400,000 × 0.025, plus
        // 100,000 written × 2.00, per 1M.
        let cost = table.cost("openai:gpt-5-mini", &usage(1_000_000, Some(400_000), Some(0), 100_000));
        assert!((cost.unwrap() - (0.15 + 0.01 + 0.2)).abs() < 1e-12, "{cost:?}");
        // Anthropic: 1,000 fresh, 2,000 cache writes, 7,000 cache reads, 500 written.
        let cost = table.cost("anthropic:claude-sonnet-4-6", &usage(10_000, Some(7_000), Some(2_000), 500));
        let expected = (1_000.0 * 3.0 + 2_000.0 * 3.75 + 7_000.0 * 0.30 + 500.0 * 15.0) / 1e6;
        assert!((cost.unwrap() - expected).abs() < 1e-12, "{cost:?} vs {expected}");
        // Unreported cache counts: everything read at the input price.
        let cost = table.cost("openai:gpt-5-mini", &usage(1_000_000, None, None, 0));
        assert!((cost.unwrap() - 0.25).abs() < 1e-12);
        // A count missing: unknown.
        let missing = Usage { output_tokens: None, ..usage(10, None, None, 0) };
        assert_eq!(table.cost("openai:gpt-5-mini", &missing), None);
    }

    #[test]
    fn reasoning_reported_apart_is_priced_as_output_unless_the_entry_says_otherwise() {
        let text = "as_of: 2026-11-29\nper: 1K_tokens\nmodels:\n  - match: {provider: openai, model: \"o*\"}\n    input: 1\n    output: 2\n    reasoning: 4\n  - match: {provider: openai, model: \"*\"}\n    input: 1\n    output: 2\n";
        let table = parse(Path::new("p.yaml"), text).expect("valid");
        let with_reasoning = Usage { reasoning_tokens: Some(300), ..usage(1_000, None, None, 1_000) };
        assert_eq!(table.cost("openai:o4-mini", &with_reasoning), Some((1_000.0 + 700.0 * 2.0 + 300.0 * 4.0) / 1e3));
        assert_eq!(
            table.cost("openai:gpt-4.1", &with_reasoning),
            Some((1_000.0 + 1_000.0 * 2.0) / 1e3),
            "first match wins"
        );
    }

    #[test]
    fn every_problem_of_a_table_is_named_with_its_line_and_field() {
        let text =
            "as_of: yesterday\ncurrency: EUR\nmodels:\n  - match: {provider: openai}\n    input: -1\n    outptu: 2\n";
        let problems = parse(Path::new("p.yaml"), text).expect_err("invalid");
        let seen: Vec<(u64, String)> = problems
            .iter()
            .map(|problem| (problem.position().map_or(0, |(line, _)| line), problem.field.clone().unwrap_or_default()))
            .collect();
        for (line, field) in [
            (1, "as_of"),
            (2, "currency"),
            (4, "models[0].match.model"),
            (5, "models[0].input"),
            (6, "models[0].outptu"),
            (4, "models[0].output"),
        ] {
            assert!(seen.contains(&(line, field.to_owned())), "{field} at line {line}: {problems:#?}");
        }
        let unknown = problems.iter().find(|problem| problem.field.as_deref() == Some("models[0].outptu")).unwrap();
        assert!(unknown.hint_text().contains("output"), "{unknown:?}");
        let empty = parse(Path::new("p.yaml"), "").expect_err("empty");
        assert_eq!(empty[0].message, "the file is empty");
    }
}

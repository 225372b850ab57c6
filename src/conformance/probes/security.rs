//! SEC-1…SEC-8: the static scan of everything the server lists
//! ([`crate::conformance::security`]), graded like every layer-0 row, with the config file's
//! suppressions applied (each named in the row's message).

use std::collections::BTreeMap;

use crate::conformance::context::Context;
use crate::conformance::finding::Finding;
use crate::conformance::security::{Hit, Kind, ROWS, Scanner};

/// One suppression of the config file: a rule on an element (and, when given, a field path
/// under it), with the reason the user gave.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Suppression {
    /// `SEC-1`…`SEC-8`.
    pub rule: String,
    /// The element as the report names it, e.g. `tools[connect]`.
    pub element: String,
    /// A field path under the element (`.inputSchema.properties.password`), or none for the
    /// whole element.
    pub path: Option<String>,
    /// Why it is not a problem here.
    pub reason: String,
}

impl Suppression {
    fn covers(&self, hit: &Hit) -> bool {
        self.rule.eq_ignore_ascii_case(hit.id)
            && self.element == hit.element
            && self.path.as_deref().is_none_or(|path| hit.path == path || hit.path.starts_with(&format!("{path}.")))
    }
}

/// What each row found nothing of, for a passing row's message.
fn kept_text(id: &str) -> &'static str {
    match id {
        "SEC-1" => "no Unicode tag characters",
        "SEC-2" => "no hidden bidirectional, zero-width or control characters",
        "SEC-3" => "no instruction that hides something from the user or overrides other instructions",
        "SEC-4" => "no direction to read local secrets or to send data elsewhere",
        "SEC-5" => "no direction for a tool the server does not list, or for every other tool",
        "SEC-6" => "no look-alike or mixed-script names",
        "SEC-7" => "no parameter that asks for a secret or for the conversation",
        _ => "no text longer than 10,000 characters",
    }
}

/// The eight rows over every listed element, and the digest of each element's texts
/// ([`Scanner::digests`]) for the report.
pub(crate) fn scan(ctx: &Context, suppressions: &[Suppression]) -> (Vec<Finding>, BTreeMap<String, String>) {
    let mut scanner = Scanner::default();
    for (kind, walk) in [
        (Kind::Tool, &ctx.tools),
        (Kind::Prompt, &ctx.prompts),
        (Kind::Resource, &ctx.resources),
        (Kind::Template, &ctx.templates),
    ] {
        for (index, item) in walk.items.iter().enumerate() {
            scanner.element(kind, index, &item);
        }
    }
    let (elements, texts) = scanner.read_counts();
    if elements == 0 {
        let reason = if ctx.tools.ok() {
            "the server lists no tools, prompts, resources or resource templates: there is nothing to scan"
        } else {
            "tools/list could not be read, and nothing else was listed: there is nothing to scan"
        };
        return (ROWS.iter().map(|id| Finding::not_applicable(id, reason)).collect(), BTreeMap::new());
    }
    let digests = scanner.digests().clone();
    let scan = scanner.finish();
    let hits = scan.hits;
    let findings = ROWS
        .iter()
        .map(|&id| {
            let (suppressed, mine): (Vec<&Hit>, Vec<&Hit>) =
                hits.iter().filter(|hit| hit.id == id).partition(|hit| suppressions.iter().any(|s| s.covers(hit)));
            let note = if suppressed.is_empty() {
                String::new()
            } else {
                let reasons: Vec<String> = suppressed
                    .iter()
                    .take(5)
                    .map(|hit| {
                        let reason = suppressions.iter().find(|s| s.covers(hit)).map_or("", |s| s.reason.as_str());
                        format!("`{}{}` ({reason})", hit.element, hit.path)
                    })
                    .collect();
                let more =
                    if suppressed.len() > 5 { format!(" and {} more", suppressed.len() - 5) } else { String::new() };
                format!("; suppressed by the config file: {}{more}", reasons.join(", "))
            };
            if mine.is_empty() {
                return Finding::kept(
                    id,
                    format!("{} in {texts} texts of {elements} listed elements{note}", kept_text(id)),
                );
            }
            let shown: Vec<String> =
                mine.iter().take(5).map(|hit| format!("`{}{}`: {}", hit.element, hit.path, hit.evidence)).collect();
            // Every hit of the row counts, the ones past the kept bound included.
            let found = scan.counts.get(id).copied().unwrap_or(mine.len()).max(mine.len() + suppressed.len());
            let unsuppressed = found - suppressed.len();
            let more = if unsuppressed > 5 { format!(" (and {} more)", unsuppressed - 5) } else { String::new() };
            let all: Vec<String> =
                mine.iter().take(50).map(|hit| format!("{}{}: {}", hit.element, hit.path, hit.evidence)).collect();
            Finding::broken(id, format!("{}{more}{note}", shown.join("; "))).with_text("found", all.join("\n"))
        })
        .collect();
    (findings, digests)
}

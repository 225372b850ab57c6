//! SEC-1…SEC-8: the static scan of everything the server lists
//! ([`crate::conformance::security`]), graded like every layer-0 row. The config file's
//! waivers of them (and `suppress`, their older spelling) are applied to the graded rows by
//! [`crate::conformance::waiver`], finding by finding, from the `found` evidence written here.

use std::collections::BTreeMap;

use crate::conformance::context::Context;
use crate::conformance::finding::Finding;
use crate::conformance::security::{Kind, ROWS, Scanner};
use crate::conformance::waiver::{FOUND_LABEL, FOUND_LINES};

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
pub(crate) fn scan(ctx: &Context) -> (Vec<Finding>, BTreeMap<String, String>) {
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
            let mine: Vec<_> = hits.iter().filter(|hit| hit.id == id).collect();
            if mine.is_empty() {
                return Finding::kept(id, format!("{} in {texts} texts of {elements} listed elements", kept_text(id)));
            }
            let shown: Vec<String> =
                mine.iter().take(5).map(|hit| format!("`{}{}`: {}", hit.element, hit.path, hit.evidence)).collect();
            // Every hit of the row counts, the ones past the kept bound included.
            let found = scan.counts.get(id).copied().unwrap_or(mine.len()).max(mine.len());
            let more = if found > 5 { format!(" (and {} more)", found - 5) } else { String::new() };
            // One line per hit, `ELEMENTPATH: evidence`: what a waiver of one element matches.
            let mut all: Vec<String> = mine
                .iter()
                .take(FOUND_LINES)
                .map(|hit| format!("{}{}: {}", hit.element, hit.path, hit.evidence))
                .collect();
            if found > all.len() {
                // No waiver covers this line: a row with findings not listed is never waived whole.
                all.push(format!("(and {} more not listed)", found - all.len()));
            }
            Finding::broken(id, format!("{}{more}", shown.join("; "))).with_text(FOUND_LABEL, all.join("\n"))
        })
        .collect();
    (findings, digests)
}

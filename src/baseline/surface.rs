//! The tool-surface diff: which tools were added, removed or changed (description, input or
//! output schema, annotations, title) since the baseline, and which golden cases can see each —
//! so a drop in a pass rate is attributed to the change that caused it.

use std::collections::BTreeMap;

use serde_json::Value;

/// How one tool changed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Change {
    /// New since the baseline.
    Added,
    /// Gone since the baseline.
    Removed,
    /// Listed in both, with these fields different (`description`, `inputSchema`, …).
    Changed(Vec<String>),
}

/// One changed tool.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ToolChange {
    /// The tool's name.
    pub name: String,
    /// How it changed.
    pub change: Change,
}

/// The tools of a canonical surface text (`ToolSurface::canonical_text`), by name.
fn by_name(canonical: &str) -> BTreeMap<String, serde_json::Map<String, Value>> {
    let tools: Vec<Value> = serde_json::from_str(canonical).unwrap_or_default();
    tools
        .into_iter()
        .filter_map(|tool| match tool {
            Value::Object(map) => Some((map.get("name")?.as_str()?.to_owned(), map)),
            _ => None,
        })
        .collect()
}

/// The changes from `before` to `now` (both canonical surface texts), in name order.
pub(crate) fn diff(before: &str, now: &str) -> Vec<ToolChange> {
    let (before, now) = (by_name(before), by_name(now));
    let mut changes = Vec::new();
    for (name, tool) in &now {
        match before.get(name) {
            None => changes.push(ToolChange { name: name.clone(), change: Change::Added }),
            Some(old) => {
                let mut fields: Vec<String> =
                    tool.keys().chain(old.keys()).filter(|key| tool.get(*key) != old.get(*key)).cloned().collect();
                fields.sort();
                fields.dedup();
                if !fields.is_empty() {
                    changes.push(ToolChange { name: name.clone(), change: Change::Changed(fields) });
                }
            }
        }
    }
    for name in before.keys().filter(|name| !now.contains_key(*name)) {
        changes.push(ToolChange { name: name.clone(), change: Change::Removed });
    }
    changes.sort_by(|a, b| a.name.cmp(&b.name));
    changes
}

/// Whether a case (by id) can see a tool (by MCP name).
pub(crate) type Sees<'a> = &'a dyn Fn(&str, &str) -> bool;

/// One line per change, with the cases that can see the tool (`sees(case, tool)`), for the
/// summary and the pull-request comment.
pub(crate) fn lines(changes: &[ToolChange], cases: &[String], sees: Option<Sees<'_>>) -> Vec<String> {
    changes
        .iter()
        .map(|change| {
            let what = match &change.change {
                Change::Added => "added".to_owned(),
                Change::Removed => "removed".to_owned(),
                Change::Changed(fields) => format!("changed ({})", fields.join(", ")),
            };
            let Some(sees) = sees else {
                return format!(
                    "`{}` {what}; the cases that see it are not known (no golden set at hand)",
                    change.name
                );
            };
            let seen: Vec<&str> = cases.iter().filter(|case| sees(case, &change.name)).map(String::as_str).collect();
            let seen = match seen.len() {
                0 => "no case sees it".to_owned(),
                n if n <= 5 => format!("seen by {}", seen.join(", ")),
                n => format!("seen by {} and {} more", seen[..5].join(", "), n - 5),
            };
            format!("`{}` {what}; {seen}", change.name)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn added_removed_and_changed_tools_are_told_apart_with_the_fields_that_changed() {
        let before = r#"[{"name":"a","description":"old","inputSchema":{}},{"name":"b","inputSchema":{}}]"#;
        let now = r#"[{"name":"a","description":"new","inputSchema":{"type":"object"}},{"name":"c","inputSchema":{}}]"#;
        let changes = diff(before, now);
        assert_eq!(
            changes,
            vec![
                ToolChange {
                    name: "a".into(),
                    change: Change::Changed(vec!["description".into(), "inputSchema".into()])
                },
                ToolChange { name: "b".into(), change: Change::Removed },
                ToolChange { name: "c".into(), change: Change::Added },
            ]
        );
        assert!(diff(now, now).is_empty());
        let cases = vec!["lookup".to_owned(), "other".to_owned()];
        let lines = lines(&changes, &cases, Some(&|case, tool| case == "lookup" && tool == "a"));
        assert_eq!(lines[0], "`a` changed (description, inputSchema); seen by lookup");
        assert_eq!(lines[1], "`b` removed; no case sees it");
        let unknown = super::lines(&changes, &cases, None);
        assert_eq!(unknown[2], "`c` added; the cases that see it are not known (no golden set at hand)");
    }
}

//! Tool names as a provider accepts them: MCP allows `[A-Za-z0-9_.-]` up to 128 characters,
//! OpenAI only `^[a-zA-Z0-9_-]{1,64}$`, Anthropic `^[a-zA-Z0-9_-]{1,128}$`. [`ToolNames::new`]
//! maps every MCP name to a wire name deterministically (the same tools always give the same
//! names) and keeps the map back, so a model's call is resolved to the MCP name it meant.
//!
//! The rule, per tool in listed order: a name the provider accepts is kept; otherwise every
//! character it does not allow becomes `_`, and that is kept when it fits and equals neither
//! another tool's name nor another tool's replacement; otherwise the replacement is cut to leave
//! room for `_` and the first 8 hex digits of the SHA-256 of the MCP name. Every rewritten name is
//! listed in [`ToolNames::renamed`] (renaming can change what a model picks, so a report says so).

use std::collections::{HashMap, HashSet};

use sha2::{Digest, Sha256};

/// What a provider accepts as a tool name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct NameRule {
    /// The longest name accepted, in characters.
    pub max_len: usize,
    /// Whether `.` is accepted (besides `[A-Za-z0-9_-]`, which every provider accepts).
    pub allow_dot: bool,
}

impl NameRule {
    /// OpenAI Chat Completions and most compatible servers: `^[a-zA-Z0-9_-]{1,64}$`.
    pub(crate) const OPENAI: NameRule = NameRule { max_len: 64, allow_dot: false };

    /// Anthropic Messages: `^[a-zA-Z0-9_-]{1,128}$` (its API errors allow 128; older docs said 64).
    pub(crate) const ANTHROPIC: NameRule = NameRule { max_len: 128, allow_dot: false };

    fn allows(self, character: char) -> bool {
        character.is_ascii_alphanumeric()
            || character == '_'
            || character == '-'
            || (self.allow_dot && character == '.')
    }

    fn accepts(self, name: &str) -> bool {
        !name.is_empty() && name.len() <= self.max_len && name.chars().all(|character| self.allows(character))
    }
}

/// Why a tool was given another name on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RenameReason {
    /// Characters the provider does not accept became `_`.
    Characters,
    /// The name was too long (or empty) and was cut and suffixed with a hash.
    Length,
    /// The replacement equalled another tool's name or replacement and was suffixed with a hash.
    Collision,
}

/// One rewritten name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Rename {
    /// The name the server lists.
    pub mcp: String,
    /// The name the model sees.
    pub wire: String,
    /// Why.
    pub reason: RenameReason,
}

/// Names that cannot be told apart on the wire.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum NameError {
    /// The server lists the same name twice.
    #[error("the tool name `{0}` is listed twice")]
    Duplicate(String),
    /// Two different names ended with the same wire name (a hash collision: not expected).
    #[error("the tools `{first}` and `{second}` would both be called `{wire}`")]
    Collision {
        /// The earlier tool.
        first: String,
        /// The later tool.
        second: String,
        /// The wire name both received.
        wire: String,
    },
}

/// The mapping between MCP names and wire names for one set of tools.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct ToolNames {
    to_wire: HashMap<String, String>,
    to_mcp: HashMap<String, String>,
    renamed: Vec<Rename>,
}

impl ToolNames {
    /// Maps `names` (in listed order) under `rule`.
    pub(crate) fn new<'a>(names: impl IntoIterator<Item = &'a str>, rule: NameRule) -> Result<Self, NameError> {
        let names: Vec<&str> = names.into_iter().collect();
        let mut seen = HashSet::new();
        for name in &names {
            if !seen.insert(*name) {
                return Err(NameError::Duplicate((*name).to_owned()));
            }
        }
        let replaced: Vec<String> = names
            .iter()
            .map(|name| name.chars().map(|character| if rule.allows(character) { character } else { '_' }).collect())
            .collect();
        let mut mapping = Self::default();
        for (index, name) in names.iter().enumerate() {
            let (wire, reason) = if rule.accepts(name) {
                ((*name).to_owned(), None)
            } else {
                let candidate = &replaced[index];
                let clashes = names.iter().enumerate().any(|(other, other_name)| {
                    other != index && (*other_name == candidate.as_str() || replaced[other] == *candidate)
                });
                if clashes {
                    (hashed(candidate, name, rule), Some(RenameReason::Collision))
                } else if rule.accepts(candidate) {
                    (candidate.clone(), Some(RenameReason::Characters))
                } else {
                    (hashed(candidate, name, rule), Some(RenameReason::Length))
                }
            };
            if let Some(first) = mapping.to_mcp.get(&wire) {
                return Err(NameError::Collision { first: first.clone(), second: (*name).to_owned(), wire });
            }
            if let Some(reason) = reason {
                mapping.renamed.push(Rename { mcp: (*name).to_owned(), wire: wire.clone(), reason });
            }
            mapping.to_wire.insert((*name).to_owned(), wire.clone());
            mapping.to_mcp.insert(wire, (*name).to_owned());
        }
        Ok(mapping)
    }

    /// The wire name of an MCP tool name, when it is one of the mapped tools.
    pub(crate) fn wire(&self, mcp: &str) -> Option<&str> {
        self.to_wire.get(mcp).map(String::as_str)
    }

    /// The MCP name a wire name stands for; `None` for a name the model made up.
    pub(crate) fn mcp(&self, wire: &str) -> Option<&str> {
        self.to_mcp.get(wire).map(String::as_str)
    }

    /// The rewritten names, in listed order.
    pub(crate) fn renamed(&self) -> &[Rename] {
        &self.renamed
    }
}

/// `candidate` cut to leave room for `_` and 8 hex digits of the SHA-256 of `original`.
fn hashed(candidate: &str, original: &str, rule: NameRule) -> String {
    let digest = Sha256::digest(original.as_bytes());
    let hex: String = digest.iter().take(4).map(|byte| format!("{byte:02x}")).collect();
    // `candidate` holds only allowed ASCII characters, so any byte index is a character boundary.
    let keep = candidate.len().min(rule.max_len.saturating_sub(9));
    format!("{}_{hex}", &candidate[..keep])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(names: &[&str]) -> ToolNames {
        ToolNames::new(names.iter().copied(), NameRule::OPENAI).expect("mappable")
    }

    #[test]
    fn accepted_names_are_kept_and_dots_become_underscores() {
        let names = map(&["get_time", "files.read", "a-b"]);
        assert_eq!(names.wire("get_time"), Some("get_time"));
        assert_eq!(names.wire("a-b"), Some("a-b"));
        assert_eq!(names.wire("files.read"), Some("files_read"));
        assert_eq!(names.mcp("files_read"), Some("files.read"));
        assert_eq!(
            names.renamed(),
            [Rename { mcp: "files.read".into(), wire: "files_read".into(), reason: RenameReason::Characters }]
        );
    }

    #[test]
    fn every_name_round_trips_and_every_wire_name_is_accepted() {
        let long = "x".repeat(128);
        let originals = ["plain", "admin.tools.list", "émoji✓", "", long.as_str(), "with space", "a.b", "a_b"];
        let names = map(&originals);
        let mut wires = HashSet::new();
        for original in originals {
            let wire = names.wire(original).expect("mapped");
            assert!(NameRule::OPENAI.accepts(wire), "{wire:?} is not an OpenAI name");
            assert_eq!(names.mcp(wire), Some(original));
            assert!(wires.insert(wire.to_owned()), "{wire} given twice");
        }
        assert_eq!(names.mcp("never_listed"), None);
    }

    #[test]
    fn collisions_get_a_hash_and_an_accepted_name_keeps_its_own() {
        // `a.b` would become `a_b`, which another tool already is.
        let names = map(&["a.b", "a_b"]);
        assert_eq!(names.wire("a_b"), Some("a_b"));
        let wire = names.wire("a.b").expect("mapped");
        assert!(wire.starts_with("a_b_") && wire.len() == "a_b_".len() + 8, "{wire}");
        assert_eq!(names.renamed()[0].reason, RenameReason::Collision);
        // Two names whose replacements are equal are both hashed, differently.
        let names = map(&["a.b", "a/b"]);
        assert_ne!(names.wire("a.b"), names.wire("a/b"));
        assert_eq!(names.renamed().len(), 2);
    }

    #[test]
    fn long_names_are_cut_to_the_limit_with_a_hash() {
        let first = format!("{}1", "x".repeat(70));
        let second = format!("{}2", "x".repeat(70));
        let names = map(&[&first, &second]);
        let (a, b) = (names.wire(&first).expect("mapped"), names.wire(&second).expect("mapped"));
        assert_eq!((a.len(), b.len()), (64, 64));
        assert_ne!(a, b);
        assert!(a.starts_with(&"x".repeat(55)));
        assert_eq!(names.renamed()[0].reason, RenameReason::Length);
        // A name of exactly 64 accepted characters is kept.
        let exact = "y".repeat(64);
        assert_eq!(map(&[&exact]).wire(&exact), Some(exact.as_str()));
    }

    #[test]
    fn the_mapping_is_deterministic_and_duplicates_are_refused() {
        assert_eq!(map(&["a.b", "c.d", "a/b"]), map(&["a.b", "c.d", "a/b"]));
        assert_eq!(ToolNames::new(["x", "x"], NameRule::OPENAI), Err(NameError::Duplicate("x".into())));
    }

    #[test]
    fn a_dot_rule_keeps_dots() {
        let names = ToolNames::new(["files.read"], NameRule { max_len: 128, allow_dot: true }).expect("mappable");
        assert_eq!(names.wire("files.read"), Some("files.read"));
        assert!(names.renamed().is_empty());
    }
}

//! The golden-set file as a tree of YAML nodes, each with its line and column, so the
//! structural pass of [`super::load`] can name the position of every value it rejects.
//!
//! Built on serde-saphyr's `Spanned`: every node is deserialized as a `Spanned` value whose
//! children are nodes again, so positions survive to the leaves.

use std::fmt;

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Number, Value};
use serde_saphyr::Spanned;

/// One YAML value and where it is (1-based line and column).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Node {
    /// The value.
    pub value: NodeValue,
    /// 1-based line.
    pub line: u64,
    /// 1-based column.
    pub column: u64,
}

/// The value of a [`Node`].
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum NodeValue {
    /// `~`, `null` or nothing.
    Null,
    /// `true` / `false`.
    Bool(bool),
    /// An integer or a finite float.
    Number(Number),
    /// A string.
    String(String),
    /// A sequence.
    List(Vec<Node>),
    /// A mapping, in file order (keys are string nodes, for their positions).
    Map(Vec<(Node, Node)>),
}

impl Node {
    /// The plain JSON value (positions dropped; non-string keys written as their JSON text).
    pub(crate) fn to_json(&self) -> Value {
        match &self.value {
            NodeValue::Null => Value::Null,
            NodeValue::Bool(flag) => Value::Bool(*flag),
            NodeValue::Number(number) => Value::Number(number.clone()),
            NodeValue::String(text) => Value::String(text.clone()),
            NodeValue::List(items) => Value::Array(items.iter().map(Node::to_json).collect()),
            NodeValue::Map(entries) => Value::Object(
                entries
                    .iter()
                    .map(|(key, value)| {
                        let key = match &key.value {
                            NodeValue::String(text) => text.clone(),
                            _ => key.to_json().to_string(),
                        };
                        (key, value.to_json())
                    })
                    .collect(),
            ),
        }
    }

    /// What kind of value this is, for messages.
    pub(crate) fn kind(&self) -> &'static str {
        match &self.value {
            NodeValue::Null => "nothing",
            NodeValue::Bool(_) => "a boolean",
            NodeValue::Number(_) => "a number",
            NodeValue::String(_) => "a string",
            NodeValue::List(_) => "a list",
            NodeValue::Map(_) => "a mapping",
        }
    }

    /// The string, when this is one.
    pub(crate) fn as_str(&self) -> Option<&str> {
        match &self.value {
            NodeValue::String(text) => Some(text),
            _ => None,
        }
    }
}

impl<'de> Deserialize<'de> for Node {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let spanned = Spanned::<NodeValue>::deserialize(deserializer)?;
        Ok(Node { value: spanned.value, line: spanned.referenced.line(), column: spanned.referenced.column() })
    }
}

impl<'de> Deserialize<'de> for NodeValue {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(NodeVisitor)
    }
}

/// Builds a [`NodeValue`] from whatever the YAML parser found.
struct NodeVisitor;

impl<'de> Visitor<'de> for NodeVisitor {
    type Value = NodeValue;

    fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str("a YAML value")
    }

    fn visit_unit<E: de::Error>(self) -> Result<NodeValue, E> {
        Ok(NodeValue::Null)
    }

    fn visit_none<E: de::Error>(self) -> Result<NodeValue, E> {
        Ok(NodeValue::Null)
    }

    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<NodeValue, D::Error> {
        NodeValue::deserialize(deserializer)
    }

    fn visit_bool<E: de::Error>(self, value: bool) -> Result<NodeValue, E> {
        Ok(NodeValue::Bool(value))
    }

    fn visit_i64<E: de::Error>(self, value: i64) -> Result<NodeValue, E> {
        Ok(NodeValue::Number(value.into()))
    }

    fn visit_u64<E: de::Error>(self, value: u64) -> Result<NodeValue, E> {
        Ok(NodeValue::Number(value.into()))
    }

    fn visit_f64<E: de::Error>(self, value: f64) -> Result<NodeValue, E> {
        Number::from_f64(value)
            .map(NodeValue::Number)
            .ok_or_else(|| E::custom("a number must be finite (no .nan or .inf)"))
    }

    fn visit_str<E: de::Error>(self, value: &str) -> Result<NodeValue, E> {
        Ok(NodeValue::String(value.to_owned()))
    }

    fn visit_string<E: de::Error>(self, value: String) -> Result<NodeValue, E> {
        Ok(NodeValue::String(value))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<NodeValue, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element::<Node>()? {
            items.push(item);
        }
        Ok(NodeValue::List(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<NodeValue, A::Error> {
        let mut entries = Vec::new();
        // Keys are read as text, so `y:`, `on:` or `1:` stay the key written, not a boolean
        // or a number.
        while let Some(key) = map.next_key::<Spanned<String>>()? {
            let key = Node {
                value: NodeValue::String(key.value),
                line: key.referenced.line(),
                column: key.referenced.column(),
            };
            let value = map.next_value::<Node>()?;
            entries.push((key, value));
        }
        Ok(NodeValue::Map(entries))
    }
}

/// Why the text is not YAML: the position (1-based line and column), when known, and the
/// parser's message.
pub(crate) type YamlError = (Option<(u64, u64)>, String);

/// Parses YAML text into a tree; the parser's error with its position otherwise. Booleans are
/// YAML 1.2's only (`true`, `false`): `yes`, `no`, `y`, `on` stay strings.
pub(crate) fn parse(text: &str) -> Result<Option<Node>, YamlError> {
    let options = serde_saphyr::options! { strict_booleans: true };
    serde_saphyr::from_str_with_options::<Option<Node>>(text, options).map_err(|error| {
        let position = error.location().map(|location| (location.line(), location.column()));
        (position, crate::text::saphyr_message(&error.to_string()))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_node_keeps_its_position() {
        let tree =
            parse("a: 1\nb:\n  - x\n  - {c: 2.5, y: 1, 3: z, d: [yes, on, true]}\n").expect("yaml").expect("a tree");
        let NodeValue::Map(entries) = &tree.value else { panic!("a map: {tree:?}") };
        assert_eq!((entries[0].0.line, entries[0].0.column), (1, 1));
        assert_eq!((entries[0].1.line, entries[0].1.column), (1, 4));
        let NodeValue::List(items) = &entries[1].1.value else { panic!("a list") };
        assert_eq!((items[0].line, items[0].column), (3, 5));
        let NodeValue::Map(inner) = &items[1].value else { panic!("a map") };
        assert_eq!((inner[0].1.line, inner[0].1.column), (4, 9));
        assert_eq!(
            tree.to_json(),
            serde_json::json!({"a": 1, "b": ["x", {"c": 2.5, "y": 1, "3": "z", "d": ["yes", "on", true]}]})
        );
    }
}

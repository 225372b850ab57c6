//! A typed view of the tools a server lists (`tools/list` → `result.tools[]`), for the layers
//! that hand tools to a model (providers) and key cached verdicts on them (the tool-surface
//! fingerprint). Read leniently: an entry without a string `name` is skipped and counted, never
//! an error (layer 0 grades malformed definitions; this view only serves the later layers).

use serde_json::{Map, Value};

/// One tool as listed: the fields a model sees and a cache key covers.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ToolView {
    /// `name`: what a model calls.
    pub name: String,
    /// `title`, when present.
    pub title: Option<String>,
    /// `description`, when present.
    pub description: Option<String>,
    /// `inputSchema` (a JSON Schema 2020-12 object; `{}` when absent).
    pub input_schema: Value,
    /// `outputSchema`, when present.
    pub output_schema: Option<Value>,
    /// `annotations` (`readOnlyHint`, `destructiveHint`, …), when present.
    pub annotations: Option<Map<String, Value>>,
}

/// The tools of one or more `tools/list` pages, and how many entries could not be read.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct ToolSurface {
    /// The tools, in listed order.
    pub tools: Vec<ToolView>,
    /// Entries skipped because they had no string `name`.
    pub skipped: usize,
}

impl ToolSurface {
    /// Adds the `tools` array of one `tools/list` result (the `result` object).
    pub(crate) fn add_page(&mut self, result: &Value) {
        let Some(entries) = result.get("tools").and_then(Value::as_array) else { return };
        for entry in entries {
            match ToolView::from_entry(entry) {
                Some(tool) => self.tools.push(tool),
                None => self.skipped += 1,
            }
        }
    }

    /// The tool called `name`.
    #[cfg(test)]
    pub(crate) fn get(&self, name: &str) -> Option<&ToolView> {
        self.tools.iter().find(|tool| tool.name == name)
    }

    /// The canonical JSON text of the surface (tools sorted by name, object keys sorted, no
    /// whitespace): two servers that list the same tools give the same text, whatever their
    /// order or key order. A cache key hashes this text.
    pub(crate) fn canonical_text(&self) -> String {
        let mut tools: Vec<&ToolView> = self.tools.iter().collect();
        tools.sort_by(|a, b| a.name.cmp(&b.name));
        // One tool at a time: the compact text of an array is its items' texts between brackets,
        // joined by commas, so the surface is never held twice more as values (two copies of
        // every schema of a server of thousands of tools, at the peak of layer 1's planning).
        let mut text = String::from("[");
        for (index, tool) in tools.iter().enumerate() {
            if index > 0 {
                text.push(',');
            }
            text.push_str(&canonical(&tool.to_value()));
        }
        text.push(']');
        text
    }
}

impl ToolView {
    /// A tool called `name` taking `input_schema`, with no title, description, output schema or
    /// annotations, for tests.
    #[cfg(test)]
    pub(crate) fn for_tests(name: &str, input_schema: Value) -> Self {
        ToolView {
            name: name.into(),
            title: None,
            description: None,
            input_schema,
            output_schema: None,
            annotations: None,
        }
    }

    /// Reads one entry of `tools[]`; `None` without a string `name`.
    pub(crate) fn from_entry(entry: &Value) -> Option<Self> {
        let text = |key: &str| entry.get(key).and_then(Value::as_str).map(str::to_owned);
        Some(ToolView {
            name: text("name")?,
            title: text("title"),
            description: text("description"),
            input_schema: entry.get("inputSchema").cloned().unwrap_or_else(|| Value::Object(Map::new())),
            output_schema: entry.get("outputSchema").cloned(),
            annotations: entry.get("annotations").and_then(Value::as_object).cloned(),
        })
    }

    /// Back to the wire shape (only the fields this view keeps).
    pub(crate) fn to_value(&self) -> Value {
        let mut object = Map::new();
        object.insert("name".into(), Value::String(self.name.clone()));
        if let Some(title) = &self.title {
            object.insert("title".into(), Value::String(title.clone()));
        }
        if let Some(description) = &self.description {
            object.insert("description".into(), Value::String(description.clone()));
        }
        object.insert("inputSchema".into(), self.input_schema.clone());
        if let Some(output) = &self.output_schema {
            object.insert("outputSchema".into(), output.clone());
        }
        if let Some(annotations) = &self.annotations {
            object.insert("annotations".into(), Value::Object(annotations.clone()));
        }
        Value::Object(object)
    }

    /// True when annotated `readOnlyHint: true`.
    pub(crate) fn read_only(&self) -> bool {
        self.annotations.as_ref().and_then(|annotations| annotations.get("readOnlyHint")) == Some(&Value::Bool(true))
    }
}

/// JSON text with object keys sorted at every depth and no whitespace.
pub(crate) fn canonical(value: &Value) -> String {
    fn sorted(value: &Value) -> Value {
        match value {
            Value::Object(map) => {
                let mut keys: Vec<&String> = map.keys().collect();
                keys.sort();
                Value::Object(keys.into_iter().map(|key| (key.clone(), sorted(&map[key]))).collect())
            }
            Value::Array(items) => Value::Array(items.iter().map(sorted).collect()),
            other => other.clone(),
        }
    }
    sorted(value).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn entries_without_a_name_are_skipped_and_counted() {
        let mut surface = ToolSurface::default();
        surface.add_page(&json!({"tools": [
            {"name": "get_time", "inputSchema": {"type": "object"}, "annotations": {"readOnlyHint": true}},
            {"description": "no name"},
            {"name": 7},
        ]}));
        assert_eq!(surface.tools.len(), 1);
        assert_eq!(surface.skipped, 2);
        assert!(surface.get("get_time").expect("listed").read_only());
    }

    #[test]
    fn the_canonical_text_ignores_listing_and_key_order() {
        let mut a = ToolSurface::default();
        a.add_page(&json!({"tools": [
            {"name": "b", "inputSchema": {"type": "object", "properties": {"x": {"type": "string"}}}},
            {"name": "a", "description": "first", "inputSchema": {}},
        ]}));
        let mut b = ToolSurface::default();
        b.add_page(&json!({"tools": [{"inputSchema": {}, "description": "first", "name": "a"}]}));
        b.add_page(&json!({"tools": [
            {"inputSchema": {"properties": {"x": {"type": "string"}}, "type": "object"}, "name": "b"},
        ]}));
        assert_eq!(a.canonical_text(), b.canonical_text());
        let mut c = ToolSurface::default();
        c.add_page(&json!({"tools": [{"name": "a", "description": "changed", "inputSchema": {}}]}));
        assert_ne!(a.canonical_text(), c.canonical_text());
    }

    #[test]
    fn the_canonical_text_is_the_text_of_the_sorted_array_of_tools_written_one_tool_at_a_time() {
        let mut surface = ToolSurface::default();
        surface.add_page(&json!({"tools": [
            {"name": "b", "inputSchema": {"type": "object", "properties": {"z": {"type": "string"}, "a": {}}}},
            {"name": "a", "description": "x", "inputSchema": {"type": "object"}, "annotations": {"readOnlyHint": true}},
        ]}));
        let mut tools: Vec<&ToolView> = surface.tools.iter().collect();
        tools.sort_by(|a, b| a.name.cmp(&b.name));
        let whole = canonical(&Value::Array(tools.iter().map(|tool| tool.to_value()).collect()));
        assert_eq!(surface.canonical_text(), whole, "cache keys and baselines stay the same");
        assert_eq!(ToolSurface::default().canonical_text(), "[]");
    }
}

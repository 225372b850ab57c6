//! The static scan of the tool surface: rows SEC-1…SEC-8 (docs/security-scan.md), run with
//! layer 0 on every era. Pure: it reads what the server listed — tools, prompts, resources and
//! resource templates: names, titles, descriptions, prompt arguments, and every property name,
//! title, description and string `enum`/`const`/`default`/`examples` value inside `inputSchema`
//! and `outputSchema`, recursively — and returns [`Hit`]s, each naming the element and the field
//! path (`tools[read_file].inputSchema.properties.path.description`) with its evidence.
//!
//! - **SEC-1** (fails): Unicode tag characters (U+E0000…U+E007F) outside an emoji tag sequence.
//! - **SEC-2** (warns): other hidden characters — bidirectional embeddings, overrides and
//!   isolates; zero-width characters inside a word (a ZWNJ or ZWJ where the script or an emoji
//!   sequence needs it is not one); a run of variation selectors (one after a character is
//!   ordinary); terminal escapes and other control characters but tab, line feed and carriage
//!   return.
//! - **SEC-3** (fails): instructions aimed at the model that conceal something from the user or
//!   override other instructions ("do not tell the user", "without informing the user", "ignore
//!   previous instructions", `<IMPORTANT>` blocks that demand actions, an HTML comment with a
//!   directive), in English, French, Spanish, German and Chinese.
//! - **SEC-4** (warns): directions to read local secrets (SSH keys, cloud credentials, MCP client
//!   configuration) or to send data elsewhere (a URL, an address, "an external server").
//! - **SEC-5** (warns): shadowing — directions for a tool this server does not list, or for
//!   every other tool. A name that is data is no tool: a step of a dotted path, a name followed
//!   by field/property/parameter/value/…, one read "from the response" or defined "per RFC …".
//! - **SEC-6** (warns): look-alike names: two tool (or prompt) names whose UTS #39 confusable
//!   skeletons are equal, or a name that mixes scripts. Plain edit distance is no part of it.
//! - **SEC-7** (warns): a parameter that asks for a secret (password, API key, access token,
//!   private key, credentials, seed phrase) or for the conversation history or system prompt,
//!   by its name or by its description ("paste each earlier message here"); a switch (a
//!   boolean or number, "whether to …") asks for nothing.
//! - **SEC-8** (warns): a text longer than 10,000 characters.
//!
//! Phrases are matched after hidden characters are dropped and curly quotes straightened;
//! identifiers are matched too, split into words at `_`, `-` and camelCase. A mention in a
//! negated clause ("do not include API keys") is not a request. Work is bounded: at most
//! [`MAX_DEPTH`] schema levels and [`MAX_TEXTS`] texts per element are read.

use std::collections::{BTreeMap, HashSet};
use std::sync::LazyLock;

use regex::Regex;
use serde_json::Value;
use unicode_script::{Script, UnicodeScript};
use unicode_security::MixedScript;

/// The deepest schema nesting read (the root is 0).
pub(crate) const MAX_DEPTH: usize = 32;
/// The most texts read from one element (a tool and its schemas).
pub(crate) const MAX_TEXTS: usize = 5_000;
/// A text longer than this many characters is SEC-8.
pub(crate) const LONG_TEXT_CHARS: usize = 10_000;
/// The most elements whose texts are digested for the report ([`Scanner::digests`]).
pub(crate) const MAX_DIGESTS: usize = 1_000;
/// The most hits kept per row; the rest are counted ([`Scanner::finish`]), so a server of
/// 80,000 poisoned tools costs bounded memory.
pub(crate) const MAX_HITS_PER_ROW: usize = 200;
/// The most tool mentions kept for SEC-5's check against the server's names.
const MAX_MENTIONS: usize = 5_000;

/// Every row of the scan, in report order.
pub(crate) const ROWS: [&str; 8] = ["SEC-1", "SEC-2", "SEC-3", "SEC-4", "SEC-5", "SEC-6", "SEC-7", "SEC-8"];

/// What kind of element a text belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// An entry of `tools/list`.
    Tool,
    /// An entry of `prompts/list`.
    Prompt,
    /// An entry of `resources/list`.
    Resource,
    /// An entry of `resources/templates/list`.
    Template,
}

impl Kind {
    fn list(self) -> &'static str {
        match self {
            Kind::Tool => "tools",
            Kind::Prompt => "prompts",
            Kind::Resource => "resources",
            Kind::Template => "resourceTemplates",
        }
    }
}

/// One finding of the scan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Hit {
    /// The row, `SEC-1`…`SEC-8`.
    pub id: &'static str,
    /// The element, e.g. `tools[read_file]`.
    pub element: String,
    /// The field path inside it, e.g. `.inputSchema.properties.path.description`.
    pub path: String,
    /// What was found, in words, with the evidence (code points, or an excerpt with the phrase
    /// marked `«…»`).
    pub evidence: String,
}

/// What the scan found: the hits kept, and how many each row found in all.
#[derive(Debug, Clone, Default)]
pub(crate) struct Scan {
    /// At most [`MAX_HITS_PER_ROW`] per row, in row order.
    pub hits: Vec<Hit>,
    /// Row → every hit it found, the ones not kept included.
    pub counts: BTreeMap<&'static str, usize>,
}

/// How a text is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Role {
    /// A name or a URI: hidden characters only (names also go to SEC-6).
    Name,
    /// A property or argument name: hidden characters, and its words for SEC-3/4/7.
    Identifier,
    /// A title or description: every rule.
    Prose,
    /// An `enum`, `const`, `default` or `examples` value: hidden characters and instructions,
    /// never a request for a secret (a choice named `password` asks for none).
    Value,
}

/// A text of an element, with its path.
struct Text<'a> {
    path: String,
    text: &'a str,
    role: Role,
    /// For an identifier: the description beside it (its context for SEC-7).
    context: Option<&'a str>,
    /// For a description: its schema holds a boolean or a number, never text a model could
    /// paste (SEC-7 reads it as a switch).
    flag: bool,
}

/// A tool named in prose, resolved against the server's names at the end (SEC-5).
struct Mention {
    element: String,
    path: String,
    name: String,
    excerpt: String,
}

/// The scan of one server's listings: feed every element, then [`Scanner::finish`].
#[derive(Default)]
pub(crate) struct Scanner {
    hits: Vec<Hit>,
    mentions: Vec<Mention>,
    /// Every property and argument name, and every one-word value a schema lists, seen (a
    /// mention of one is not a tool).
    identifiers: HashSet<String>,
    tool_names: Vec<String>,
    prompt_names: Vec<String>,
    elements: usize,
    texts: usize,
    /// Element → a digest of every text of it the scan read (at most [`MAX_DIGESTS`]).
    digests: BTreeMap<String, String>,
    /// Hits per row, kept or not.
    counts: BTreeMap<&'static str, usize>,
}

impl Scanner {
    /// Reads one listed element (`index` is its position, for an element without a name).
    pub(crate) fn element(&mut self, kind: Kind, index: usize, value: &Value) {
        self.elements += 1;
        let key = match kind {
            Kind::Tool | Kind::Prompt => "name",
            Kind::Resource => "uri",
            Kind::Template => "uriTemplate",
        };
        let own = value.get("name").and_then(Value::as_str).map(str::to_owned);
        let label = value.get(key).and_then(Value::as_str).or(own.as_deref()).map(str::to_owned);
        let element = match &label {
            Some(label) => format!("{}[{}]", kind.list(), visible(label)),
            None => format!("{}[{index}]", kind.list()),
        };
        match (kind, &own) {
            (Kind::Tool, Some(name)) => self.tool_names.push(name.clone()),
            (Kind::Prompt, Some(name)) => self.prompt_names.push(name.clone()),
            _ => {}
        }
        let mut texts = Vec::new();
        for field in ["name", "uri", "uriTemplate"] {
            if let Some(text) = value.get(field).and_then(Value::as_str) {
                texts.push(Text { path: format!(".{field}"), text, role: Role::Name, context: None, flag: false });
            }
        }
        for field in ["title", "description"] {
            if let Some(text) = value.get(field).and_then(Value::as_str) {
                texts.push(Text { path: format!(".{field}"), text, role: Role::Prose, context: None, flag: false });
            }
        }
        if let Some(text) = value.pointer("/annotations/title").and_then(Value::as_str) {
            texts.push(Text { path: ".annotations.title".into(), text, role: Role::Prose, context: None, flag: false });
        }
        if kind == Kind::Prompt {
            for (i, argument) in value.get("arguments").and_then(Value::as_array).into_iter().flatten().enumerate() {
                let description = argument.get("description").and_then(Value::as_str);
                if let Some(name) = argument.get("name").and_then(Value::as_str) {
                    texts.push(Text {
                        path: format!(".arguments[{i}].name"),
                        text: name,
                        role: Role::Identifier,
                        context: description,
                        flag: false,
                    });
                }
                for field in ["title", "description"] {
                    if let Some(text) = argument.get(field).and_then(Value::as_str) {
                        texts.push(Text {
                            path: format!(".arguments[{i}].{field}"),
                            text,
                            role: Role::Prose,
                            context: None,
                            flag: false,
                        });
                    }
                }
            }
        }
        if kind == Kind::Tool {
            for field in ["inputSchema", "outputSchema"] {
                if let Some(schema) = value.get(field) {
                    schema_texts(schema, format!(".{field}"), 0, &mut texts);
                }
            }
        }
        // A parameter with no description of its own is often described in the tool's (an
        // `Args:` line, `token: …`): that line is its context for SEC-7.
        if let Some(description) = value.get("description").and_then(Value::as_str) {
            for text in texts.iter_mut() {
                if text.role == Role::Identifier && text.context.is_none() {
                    text.context = documented_in(description, text.text);
                }
            }
        }
        texts.truncate(MAX_TEXTS);
        self.texts += texts.len();
        if self.digests.len() < MAX_DIGESTS {
            use sha2::Digest as _;
            let mut hasher = sha2::Sha256::new();
            for text in &texts {
                hasher.update(text.path.as_bytes());
                hasher.update([0]);
                hasher.update(text.text.as_bytes());
                hasher.update([0]);
            }
            let digest: String = hasher.finalize().iter().take(8).map(|byte| format!("{byte:02x}")).collect();
            self.digests.insert(element.clone(), digest);
        }
        let own_names: Vec<&str> = own.iter().map(String::as_str).collect();
        for text in &texts {
            // A property or argument name, or a value a schema lists (`enum`, `const`, …), named
            // in prose is data, not a tool (SEC-5).
            let value_name =
                text.role == Role::Value && text.text.len() <= 100 && !text.text.contains(char::is_whitespace);
            if text.role == Role::Identifier || value_name {
                self.identifiers.insert(text.text.to_owned());
            }
            self.read(&element, text, &own_names);
        }
    }

    /// Element (`tools[read_file]`) → the first 16 hex digits of the SHA-256 of every text of it
    /// the scan read, with its path: a description that changes between runs changes its digest.
    pub(crate) fn digests(&self) -> &BTreeMap<String, String> {
        &self.digests
    }

    /// How many elements and texts were read (the evidence of a row that found nothing).
    pub(crate) fn read_counts(&self) -> (usize, usize) {
        (self.elements, self.texts)
    }

    /// The hits of every row, after the rules that need every name (SEC-5, SEC-6): at most
    /// [`MAX_HITS_PER_ROW`] per row, and how many each row found in all.
    pub(crate) fn finish(mut self) -> Scan {
        let unknown: Vec<Mention> = {
            let known: HashSet<&str> = self
                .tool_names
                .iter()
                .chain(&self.prompt_names)
                .map(String::as_str)
                .chain(self.identifiers.iter().map(String::as_str))
                .collect();
            std::mem::take(&mut self.mentions)
                .into_iter()
                .filter(|mention| !known.contains(mention.name.as_str()))
                .collect()
        };
        for mention in unknown {
            let evidence = format!(
                "gives directions for a tool `{}` that this server does not list: {}",
                visible(&mention.name),
                mention.excerpt
            );
            self.hit("SEC-5", &mention.element, &mention.path, evidence);
        }
        let names = [
            (Kind::Tool, std::mem::take(&mut self.tool_names)),
            (Kind::Prompt, std::mem::take(&mut self.prompt_names)),
        ];
        for (kind, names) in names {
            for hit in look_alikes(kind, &names) {
                self.hit(hit.id, &hit.element, &hit.path, hit.evidence);
            }
        }
        self.hits.sort_by_key(|hit| ROWS.iter().position(|row| *row == hit.id));
        Scan { hits: self.hits, counts: self.counts }
    }

    fn hit(&mut self, id: &'static str, element: &str, path: &str, evidence: String) {
        let count = self.counts.entry(id).or_insert(0);
        *count += 1;
        if *count <= MAX_HITS_PER_ROW {
            self.hits.push(Hit { id, element: element.to_owned(), path: path.to_owned(), evidence });
        }
    }

    fn read(&mut self, element: &str, text: &Text<'_>, own_names: &[&str]) {
        for (id, evidence) in hidden(text.text) {
            self.hit(id, element, &text.path, evidence);
        }
        let chars = text.text.chars().count();
        if text.role == Role::Prose && chars > LONG_TEXT_CHARS {
            self.hit(
                "SEC-8",
                element,
                &text.path,
                format!("{chars} characters (more than {LONG_TEXT_CHARS}): room to bury instructions a reviewer will not read"),
            );
        }
        let normal = normalize(text.text);
        let phrase_text = match text.role {
            Role::Name => return,
            Role::Identifier => crate::suggest::words(&normal).join(" "),
            Role::Prose | Role::Value => normal,
        };
        if let Some(evidence) = concealment(&phrase_text) {
            self.hit("SEC-3", element, &text.path, evidence);
        }
        if let Some(evidence) = exfiltration(&phrase_text) {
            self.hit("SEC-4", element, &text.path, evidence);
        }
        if text.role == Role::Prose {
            if let Some(evidence) = every_other_tool(&phrase_text) {
                self.hit("SEC-5", element, &text.path, evidence);
            }
            for (name, excerpt) in tool_mentions(&phrase_text) {
                if own_names.contains(&name.as_str()) {
                    continue;
                }
                if self.mentions.len() < MAX_MENTIONS {
                    self.mentions.push(Mention { element: element.to_owned(), path: text.path.clone(), name, excerpt });
                }
            }
        }
        let secret = match text.role {
            Role::Identifier => secret_name(text.text, text.context, own_names),
            Role::Prose if is_parameter_description(&text.path) && !text.flag => {
                secret_request(&phrase_text).or_else(|| conversation_request(&phrase_text))
            }
            _ => None,
        };
        if let Some(evidence) = secret {
            self.hit("SEC-7", element, parameter_path(&text.path), evidence);
        }
    }
}

/// The texts of a schema, recursively (bounded by [`MAX_DEPTH`]).
fn schema_texts<'a>(schema: &'a Value, path: String, depth: usize, out: &mut Vec<Text<'a>>) {
    let Some(map) = schema.as_object() else { return };
    if depth > MAX_DEPTH || out.len() >= MAX_TEXTS {
        return;
    }
    let flag = match map.get("type") {
        Some(Value::String(kind)) => ["boolean", "integer", "number"].contains(&kind.as_str()),
        _ => false,
    };
    for field in ["title", "description"] {
        if let Some(text) = map.get(field).and_then(Value::as_str) {
            out.push(Text { path: format!("{path}.{field}"), text, role: Role::Prose, context: None, flag });
        }
    }
    for field in ["enum", "examples"] {
        for (i, value) in map.get(field).and_then(Value::as_array).into_iter().flatten().enumerate() {
            if let Some(text) = value.as_str() {
                out.push(Text {
                    path: format!("{path}.{field}[{i}]"),
                    text,
                    role: Role::Value,
                    context: None,
                    flag: false,
                });
            }
        }
    }
    for field in ["const", "default"] {
        if let Some(text) = map.get(field).and_then(Value::as_str) {
            out.push(Text { path: format!("{path}.{field}"), text, role: Role::Value, context: None, flag: false });
        }
    }
    for field in ["properties", "patternProperties", "$defs", "definitions", "dependentSchemas"] {
        for (key, sub) in map.get(field).and_then(Value::as_object).into_iter().flatten() {
            let sub_path = format!("{path}.{field}.{key}");
            if field == "properties" {
                out.push(Text {
                    path: sub_path.clone(),
                    text: key,
                    role: Role::Identifier,
                    context: sub.get("description").and_then(Value::as_str),
                    flag: false,
                });
            }
            schema_texts(sub, sub_path, depth + 1, out);
        }
    }
    for field in ["items", "additionalProperties", "not", "if", "then", "else", "contains", "propertyNames"] {
        if let Some(sub) = map.get(field) {
            schema_texts(sub, format!("{path}.{field}"), depth + 1, out);
        }
    }
    for field in ["anyOf", "oneOf", "allOf", "prefixItems", "items"] {
        for (i, sub) in map.get(field).and_then(Value::as_array).into_iter().flatten().enumerate() {
            schema_texts(sub, format!("{path}.{field}[{i}]"), depth + 1, out);
        }
    }
}

/// True for the description of a schema property or a prompt argument.
fn is_parameter_description(path: &str) -> bool {
    path.ends_with(".description") && (path.contains(".properties.") || path.contains(".arguments["))
}

/// The parameter a description belongs to: `….properties.key.description` → `….properties.key`.
fn parameter_path(path: &str) -> &str {
    path.strip_suffix(".description").unwrap_or(path)
}

// ---------------------------------------------------------------------------------------------
// SEC-1, SEC-2: hidden characters.

fn is_tag(c: char) -> bool {
    ('\u{E0000}'..='\u{E007F}').contains(&c)
}

fn is_variation_selector(c: char) -> bool {
    ('\u{FE00}'..='\u{FE0F}').contains(&c) || ('\u{E0100}'..='\u{E01EF}').contains(&c)
}

fn is_bidi_control(c: char) -> bool {
    ('\u{202A}'..='\u{202E}').contains(&c) || ('\u{2066}'..='\u{2069}').contains(&c)
}

fn is_zero_width(c: char) -> bool {
    matches!(c, '\u{200B}' | '\u{200C}' | '\u{200D}' | '\u{2060}' | '\u{FEFF}' | '\u{180E}')
}

fn is_control(c: char) -> bool {
    (c.is_control() && !matches!(c, '\t' | '\n' | '\r')) || c == '\u{7F}'
}

/// A character that is part of an emoji sequence (close enough for a ZWJ's neighbours).
fn is_emoji(c: char) -> bool {
    matches!(c as u32, 0x1F000..=0x1FAFF | 0x2600..=0x27BF | 0x2300..=0x23FF | 0x2B00..=0x2BFF)
        || c == '\u{FE0F}'
        || c == '\u{20E3}'
        || c == '\u{3030}'
        || c == '\u{00A9}'
        || c == '\u{00AE}'
}

/// Scripts whose spelling uses ZWNJ or ZWJ between letters.
fn joins_in_script(c: char) -> bool {
    matches!(
        c.script(),
        Script::Arabic
            | Script::Syriac
            | Script::Devanagari
            | Script::Bengali
            | Script::Gurmukhi
            | Script::Gujarati
            | Script::Oriya
            | Script::Tamil
            | Script::Telugu
            | Script::Kannada
            | Script::Malayalam
            | Script::Sinhala
            | Script::Myanmar
            | Script::Khmer
            | Script::Mongolian
            | Script::Tibetan
            | Script::Nko
            | Script::Thaana
    )
}

fn is_word_char(c: char) -> bool {
    c.is_alphanumeric() || is_mark(c)
}

/// A combining mark (script Inherited), but not the hidden characters that share that script.
fn is_mark(c: char) -> bool {
    matches!(c.script(), Script::Inherited) && !is_variation_selector(c) && !is_zero_width(c)
}

fn code_points(chars: &[char]) -> String {
    let shown: Vec<String> = chars.iter().take(8).map(|c| format!("U+{:04X}", *c as u32)).collect();
    let more = if chars.len() > 8 { format!(" … ({} in all)", chars.len()) } else { String::new() };
    format!("{}{more}", shown.join(" "))
}

/// SEC-1 and SEC-2 evidence of one text: at most one entry per row and kind of character.
fn hidden(text: &str) -> Vec<(&'static str, String)> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    // SEC-1: tag characters, except an emoji tag sequence (U+1F3F4, tag letters, U+E007F).
    let mut tags: Vec<char> = Vec::new();
    let mut first = None;
    let mut i = 0;
    while i < chars.len() {
        if chars[i] == '\u{1F3F4}' {
            let mut j = i + 1;
            while j < chars.len() && ('\u{E0020}'..='\u{E007E}').contains(&chars[j]) {
                j += 1;
            }
            if j > i + 1 && j < chars.len() && chars[j] == '\u{E007F}' {
                i = j + 1;
                continue;
            }
        }
        if is_tag(chars[i]) {
            first.get_or_insert(i);
            tags.push(chars[i]);
        }
        i += 1;
    }
    if !tags.is_empty() {
        let decoded: String = tags
            .iter()
            .filter_map(|c| char::from_u32(*c as u32 - 0xE0000))
            .filter(|c| c.is_ascii_graphic() || *c == ' ')
            .collect();
        let decoded = if decoded.is_empty() {
            String::new()
        } else {
            format!(", which spell «{}»", crate::text::clip(&decoded, 120))
        };
        out.push((
            "SEC-1",
            format!(
                "{} Unicode tag character(s), invisible to a reader, from character {}{decoded} ({})",
                tags.len(),
                first.unwrap_or(0) + 1,
                code_points(&tags)
            ),
        ));
    }
    // SEC-2: the other hidden characters, grouped by kind.
    let mut groups: BTreeMap<&'static str, (usize, Vec<char>)> = BTreeMap::new();
    let mut note = |kind: &'static str, at: usize, c: char| {
        let entry = groups.entry(kind).or_insert((at, Vec::new()));
        entry.1.push(c);
    };
    for (i, &c) in chars.iter().enumerate() {
        let before = i.checked_sub(1).map(|j| chars[j]);
        let after = chars.get(i + 1).copied();
        if is_bidi_control(c) {
            note("bidirectional control character(s), which reorder what a reader sees", i, c);
        } else if is_zero_width(c) {
            let inside = before.is_some_and(is_word_char) && after.is_some_and(is_word_char);
            let needed = match c {
                '\u{200C}' => before.is_some_and(joins_in_script) || after.is_some_and(joins_in_script),
                '\u{200D}' => {
                    before.is_some_and(is_emoji)
                        || after.is_some_and(is_emoji)
                        || before.is_some_and(joins_in_script)
                        || after.is_some_and(joins_in_script)
                }
                _ => false,
            };
            if (inside || c == '\u{180E}') && !needed {
                note("zero-width character(s) inside a word, which split it where no one sees", i, c);
            }
        } else if is_variation_selector(c) && before.is_some_and(is_variation_selector) {
            note(
                "variation selectors in a run, which can carry hidden bytes (one after a character is ordinary)",
                i,
                c,
            );
        } else if is_control(c) {
            let kind = if c == '\u{1B}' || c == '\u{9B}' {
                "terminal escape sequence(s), which can hide or rewrite text on a terminal"
            } else {
                "control character(s) other than tab and line ends"
            };
            note(kind, i, c);
        }
    }
    for (kind, (at, found)) in groups {
        out.push(("SEC-2", format!("{} {kind}, from character {} ({})", found.len(), at + 1, code_points(&found))));
    }
    out
}

/// A character that [`normalize`] drops and [`visible`] escapes: tag, bidirectional control,
/// zero-width, variation selector or control character.
fn is_hidden(c: char) -> bool {
    is_tag(c) || is_bidi_control(c) || is_zero_width(c) || is_variation_selector(c) || is_control(c)
}

/// The text with hidden characters dropped (so they cannot split a phrase) and curly quotes
/// straightened.
fn normalize(text: &str) -> String {
    text.chars()
        .filter(|c| !is_hidden(*c))
        .map(|c| match c {
            '\u{2018}' | '\u{2019}' | '\u{02BC}' => '\'',
            '\u{201C}' | '\u{201D}' => '"',
            '\u{00A0}' => ' ',
            other => other,
        })
        .collect()
}

/// An excerpt of `text` around `range`, the match marked `«…»`, at most about 80 characters
/// each side, cut at whole words.
fn excerpt(text: &str, range: std::ops::Range<usize>) -> String {
    let before = &text[..range.start];
    let after = &text[range.end..];
    let mut head: String = before.chars().rev().take(80).collect::<Vec<_>>().into_iter().rev().collect();
    if head.len() < before.len() {
        head = match head.find(' ') {
            Some(space) => format!("…{}", &head[space + 1..]),
            None => format!("…{head}"),
        };
    }
    let mut tail: String = after.chars().take(80).collect();
    if tail.len() < after.len() {
        tail = match tail.rfind(' ') {
            Some(space) => format!("{}…", &tail[..space]),
            None => format!("{tail}…"),
        };
    }
    let one_line = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
    let lead = if head.ends_with(char::is_whitespace) { " " } else { "" };
    let trail = if tail.starts_with(char::is_whitespace) { " " } else { "" };
    format!("\"{}{lead}«{}»{trail}{}\"", one_line(&head), one_line(&text[range.clone()]), one_line(&tail))
}

// ---------------------------------------------------------------------------------------------
// SEC-3, SEC-4, SEC-5, SEC-7: phrases.

fn regex(pattern: &str) -> Regex {
    Regex::new(pattern).expect("the scan's patterns compile")
}

/// Concealment and override phrases (SEC-3), by language. Phrases that as often describe what
/// a tool itself does ("suspends the account without notifying the user", "lets you override
/// the system prompt") are left out, or need an imperative ([`WITHOUT_TELLING`]).
static CONCEAL: LazyLock<Vec<Regex>> = LazyLock::new(|| {
    let never = r"(?:do\s+not|don't|dont|never|must\s+not|mustn't|should\s+not|shouldn't|you\s+must\s+not)";
    let user = r"(?:the\s+)?(?:user|human|requester|operator)s?";
    vec![
        // English: concealment from the user.
        regex(&format!(
            r"(?i)\b{never}\s+(?:ever\s+)?(?:tell|inform|notify|alert|warn)\s+{user}\b\s*(?:$|[.,;:!)]|about\b|of\b|that\b|what\b|which\b|anything\b|you\b|this\b|it\b)"
        )),
        regex(&format!(
            r"(?i)\b{never}\s+(?:mention|reveal|disclose|show|say|explain|report)\s+(?:this|that|it|these|them|anything|any\s+of\s+this)\b[^.!?\n]{{0,40}}?\bto\s+{user}\b"
        )),
        regex(&format!(r"(?i)\b{never}\s+let\s+{user}\s+(?:know|see|notice|find\s+out)\b")),
        regex(&format!(r"(?i)\b(?:keep|hide)\s+(?:this|it|that|these|them)\s+(?:secret\s+|hidden\s+)?from\s+{user}\b")),
        regex(&format!(
            r"(?i)\b{user}\s+(?:must|should|need|needs|is|are)\s+(?:not|never)\s+(?:to\s+)?(?:know|see|notice|be\s+told|be\s+informed|find\s+out)\b"
        )),
        regex(
            r"(?i)(?:^|[.!?:]\s+|\b(?:you|assistant|model|agent|ai)\s+(?:must|should|will|need\s+to|have\s+to|are\s+to)?\s*)(?:silently|secretly|covertly|surreptitiously|quietly)\s+(?:send|include|add|append|forward|upload|pass|copy|post|share|email|collect|gather|attach|insert|transmit|exfiltrate)\b",
        ),
        regex(
            r"(?i)\b(?:do|perform|send|include|pass|add|forward|upload|append|copy)\s+(?:this|it|that|them|these)\s+(?:silently|secretly|covertly|surreptitiously)\b",
        ),
        regex(r"(?i)\bbehind\s+the\s+user'?s\s+back\b"),
        // English: override.
        regex(
            r"(?i)\b(?:ignore|disregard|forget|override|bypass)\s+(?:all\s+|any\s+|every\s+)?(?:of\s+)?(?:the\s+|your\s+)?(?:previous|prior|above|earlier|preceding|other|any\s+other|all\s+other)\s+(?:instructions?|prompts?|rules|directions|directives|guidelines|guardrails|tools?)\b",
        ),
        regex(
            r"(?i)\b(?:ignore|disregard|forget|bypass)\s+(?:all\s+)?(?:of\s+)?(?:your|the)\s+(?:system\s+(?:prompt|instructions)|safety\s+(?:guidelines|rules|instructions)|guardrails)\b",
        ),
        regex(
            r"(?i)\b(?:takes?|has|have)\s+precedence\s+over\s+(?:all\s+|any\s+)?(?:other|previous|prior|system|the\s+system|user)\s+(?:instructions|tools|rules|prompts?|messages)\b",
        ),
        regex(
            r"(?i)\b(?:this|these)\s+(?:instructions?|rules?|tool|description)\s+(?:override|overrides|supersede|supersedes)\s+(?:all\s+|any\s+)?(?:other|previous|prior|system)\b",
        ),
        // French.
        regex(
            r"(?i)(?:\bne\s+|\bn')(?:le\s+|lui\s+|leur\s+|rien\s+|en\s+)?(?:dites|dis|dire|mentionnez|mentionne|révélez|révèle|signalez|informez|informe|prévenez|avertissez)\s+(?:pas|jamais|rien)(?:\s+rien)?\s+(?:(?:à|a)\s+)?l'utilisat(?:eur|rice)",
        ),
        regex(
            r"(?i)\bignore[rz]?\s+(?:toutes\s+)?les\s+(?:instructions|consignes|règles)\s+(?:précédentes|antérieures)",
        ),
        // Spanish.
        regex(
            r"(?i)\bno\s+(?:le\s+)?(?:digas|diga|informes|informe|menciones|mencione|reveles|revele)\s+(?:nada\s+)?al\s+usuario",
        ),
        regex(r"(?i)\bignora\s+(?:todas\s+)?las\s+instrucciones\s+(?:anteriores|previas)"),
        // German.
        regex(
            r"(?i)\b(?:sag|sage|sagen\s+sie|erzähl|erzähle|erzählen\s+sie|informiere|informieren\s+sie)\s+(?:dem|den)\s+(?:benutzer|nutzer|anwender)\s+(?:nichts|nicht)\b",
        ),
        regex(
            r"(?i)\bignorier(?:e|en\s+sie)\s+(?:alle\s+)?(?:vorherigen|bisherigen|früheren|anderen)\s+(?:anweisungen|instruktionen|regeln)",
        ),
        // Chinese.
        regex(r"(?:不要|别|不得|切勿|请勿|禁止)(?:告诉|告知|透露给)用户"),
        regex(r"(?:不要|别|不得|切勿|请勿|禁止)向用户(?:透露|提及|说明|告知|提起)"),
        regex(r"(?:不要|别|不得|切勿|请勿)让用户(?:知道|发现|看到)"),
        regex(r"忽略(?:之前|以前|先前|上面|上述|其他|所有)的?(?:所有)?(?:指令|指示|说明|规则|工具)"),
    ]
});

/// "Without telling the user": concealment only when the sentence tells the model to act.
static WITHOUT_TELLING: LazyLock<Regex> =
    LazyLock::new(|| regex(r"(?i)\bwithout\s+(?:telling|informing|letting)\s+(?:the\s+)?users?\b"));

/// A sentence addressed to the model: it opens with an imperative, or names the model with a
/// modal verb.
static IMPERATIVE: LazyLock<Regex> = LazyLock::new(|| {
    regex(
        r"(?i)^\s*(?:please\s+|always\s+|then\s+|also\s+|now\s+|first,?\s+)?(?:send|call|read|include|add|append|pass|forward|upload|use|run|execute|fetch|get|write|copy|post|share|collect|gather|attach|insert|transmit|delete|do|make|perform|return|respond|answer|reply|save|store|change|update|remove|proceed|continue)\b|\b(?:you|assistant|model|agent)\s+(?:must|should|will|need\s+to|have\s+to|are\s+to|can)\b",
    )
});

/// Blocks a renderer hides or a model obeys: `<IMPORTANT>`-style tags and HTML comments.
static BLOCK: LazyLock<Regex> = LazyLock::new(|| {
    regex(
        r"(?is)<\s*(?:important|system|instructions?|critical|admin|secret|hidden|override|note\s+to\s+(?:the\s+)?(?:ai|assistant|model))\s*>(.{0,600})|<!--(.{0,600}?)-->|\[\s*(?:hidden|system|important)\s*\](.{0,600})",
    )
});

/// A directive inside such a block.
static DIRECTIVE: LazyLock<Regex> = LazyLock::new(|| {
    regex(
        r"(?i)\b(?:must|always|before\s+(?:using|calling|you)|first|read|send|include|pass|call|do\s+not|don't|never|ignore|append|add|upload|forward)\b",
    )
});

/// SEC-3: the first concealment or override phrase of a text, as evidence.
fn concealment(text: &str) -> Option<String> {
    for found in WITHOUT_TELLING.find_iter(text) {
        let sentence_start = text[..found.start()].rfind(['.', '!', '?', '\n']).map_or(0, |i| i + 1);
        if IMPERATIVE.is_match(&text[sentence_start..found.start()]) {
            return Some(format!(
                "an instruction that hides something from the user or overrides other instructions: {}",
                excerpt(text, found.range())
            ));
        }
    }
    for pattern in CONCEAL.iter() {
        if let Some(found) = pattern.find(text) {
            let start = text[found.start()..]
                .find(|c: char| !c.is_whitespace() && !".!?:".contains(c))
                .map_or(found.start(), |i| found.start() + i);
            return Some(format!(
                "an instruction that hides something from the user or overrides other instructions: {}",
                excerpt(text, start..found.end())
            ));
        }
    }
    for captures in BLOCK.captures_iter(text) {
        let whole = captures.get(0).expect("a match");
        let inner = captures.get(1).or(captures.get(2)).or(captures.get(3)).map_or("", |m| m.as_str());
        if DIRECTIVE.is_match(inner) {
            let end = (whole.start() + 60).min(whole.end());
            let end = (end..=whole.end()).find(|i| text.is_char_boundary(*i)).unwrap_or(whole.end());
            return Some(format!(
                "a block aimed at the model (hidden from a rendered view, or tagged as more important than the user) that demands actions: {}",
                excerpt(text, whole.start()..end)
            ));
        }
    }
    None
}

/// Local secrets a tool's text has no business pointing the model at.
static SECRET_PATH: LazyLock<Regex> = LazyLock::new(|| {
    regex(
        r"(?i)(?:~/\.ssh\b|\.ssh/(?:id_[a-z0-9]+|authorized_keys|config)\b|\bid_(?:rsa|dsa|ecdsa|ed25519)\b|\.aws/credentials\b|~/\.(?:npmrc|netrc|pgpass|git-credentials|docker/config\.json|kube/config|gnupg)\b|/etc/(?:passwd|shadow)\b|\bmcp\.json\b|\bclaude_desktop_config\.json\b|~/\.cursor/|~/\.config/(?:gh|gcloud)\b|\.git-credentials\b)",
    )
});

/// Reading an `.env` file, or secrets, for the model to pass on.
static READ_SECRETS: LazyLock<Regex> = LazyLock::new(|| {
    regex(
        r"(?i)\b(?:read|open|cat|load|get|fetch|collect|gather|include|append|attach|pass|add|send|copy|extract)\s+(?:\w+\s+){0,3}?(?:the\s+|your\s+|all\s+|any\s+|the\s+user's\s+)?(?:contents?\s+of\s+(?:the\s+)?)?(?:\.env\b(?:\s+file)?|ssh\s+keys?|private\s+keys?|credentials|secrets|api\s+keys|access\s+tokens|environment\s+variables|env\s+vars|system\s+prompt|conversation\s+history|chat\s+history|previous\s+messages)\b[^.!?\n]{0,60}?\b(?:and|then|to|into|in|as)\s+(?:send|pass|include|append|add|put|post|upload|forward|the\s+\S+\s+(?:parameter|argument|field)|(?:an?\s+)?(?:parameter|argument|field)|https?://|\S+@\S+)",
    )
});

/// Sending data somewhere else.
static SEND_ELSEWHERE: LazyLock<Regex> = LazyLock::new(|| {
    regex(
        r"(?i)\b(?:send|post|forward|upload|transmit|exfiltrate|email|e-mail|leak)\s+(?:\w+\s+){0,5}?(?:to|at)\s+(?:https?://[^\s)]+|[\w.+-]+@[\w-]+\.[\w.]+|(?:an?\s+|the\s+|this\s+|our\s+)?(?:external|third[- ]party|following|attacker'?s?)\s+(?:server|url|endpoint|address|e-?mail|webhook|host|domain|site))",
    )
});

/// A negation just before a match, in the same clause.
static NEGATION: LazyLock<Regex> = LazyLock::new(|| {
    regex(
        r"(?i)\b(?:do\s+not|don't|dont|never|must\s+not|should\s+not|no\s+need\s+to|without|not|avoid|refuse\s+to|nor)\b",
    )
});

fn negated(text: &str, start: usize) -> bool {
    let clause_start = text[..start].rfind(['.', '!', '?', ';', ',', '\n', ':']).map_or(0, |i| i + 1);
    NEGATION.is_match(&text[clause_start..start])
}

/// SEC-4: directions to read local secrets or to send data elsewhere.
fn exfiltration(text: &str) -> Option<String> {
    for (pattern, what) in [
        (&*SECRET_PATH, "points the model at a local secret"),
        (&*READ_SECRETS, "tells the model to read secrets and pass them on"),
        (&*SEND_ELSEWHERE, "tells the model to send data elsewhere"),
    ] {
        for found in pattern.find_iter(text) {
            if !negated(text, found.start()) {
                return Some(format!("{what}: {}", excerpt(text, found.range())));
            }
        }
    }
    None
}

/// Directions for every other tool (SEC-5).
static OTHER_TOOLS: LazyLock<Regex> = LazyLock::new(|| {
    regex(
        r"(?i)\b(?:(?:when|whenever|before|after|each\s+time|every\s+time|if)\s+(?:you\s+)?(?:use|using|call|calling|invoke|invoking|run|running)\s+(?:any|all|every|each)\s+(?:other\s+)?tools?\b|(?:all|any|every|each)\s+other\s+tools?\s+(?:must|should|will|shall|are\s+to|need\s+to)\b|(?:all|every|any)\s+tools?\s+(?:must|should|shall)\s+(?:first|always|also)\b|instead\s+of\s+(?:using\s+|calling\s+)?(?:any\s+)?other\s+tools?\b)",
    )
});

fn every_other_tool(text: &str) -> Option<String> {
    OTHER_TOOLS
        .find(text)
        .map(|found| format!("gives directions for the other tools: {}", excerpt(text, found.range())))
}

/// A tool named beside "tool" or after a verb of use: `send_email`, the `sendEmail` tool.
static MENTION: LazyLock<Regex> = LazyLock::new(|| {
    regex(
        r"(?i:\b(?:call|calling|calls|use|using|uses|invoke|invoking|run|running|instead\s+of|before|after)\s+(?:the\s+)?)`?([A-Za-z][A-Za-z0-9_-]*[A-Za-z0-9])`?|`([A-Za-z][A-Za-z0-9_-]*[A-Za-z0-9])`\s+(?i:tool|function)\b|\b([A-Za-z][A-Za-z0-9]*_[A-Za-z0-9_]*[A-Za-z0-9])\s+(?i:tool|function)\b",
    )
});

/// An identifier that reads as a tool name: snake_case or lowerCamelCase.
fn tool_like(token: &str) -> bool {
    let snake = token.contains('_') && token.chars().any(|c| c.is_ascii_lowercase());
    let camel = token.starts_with(|c: char| c.is_ascii_lowercase())
        && token.chars().any(|c| c.is_ascii_uppercase())
        && token.chars().all(|c| c.is_ascii_alphanumeric());
    snake || camel
}

/// A kebab-case name of two words or more, each of two letters or more (`send-email`, not
/// `e-mail`).
fn kebab(token: &str) -> bool {
    let parts: Vec<&str> = token.split('-').collect();
    parts.len() >= 2
        && parts
            .iter()
            .all(|part| part.len() >= 2 && part.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit()))
}

/// After a name: a word that makes it a piece of data ("the `has_more` field", "the
/// `nextPageToken` value"), or a syntax or format it qualifies ("uses jsonPath syntax").
static DATA_WORD: LazyLock<Regex> = LazyLock::new(|| {
    regex(
        r"(?i)^`?\s+(?:\w+\s+)?(?:syntax|formats?|notation|naming|casing|conventions?|grammar|dialect|style)\b|^`?\s+(?:fields?|propert(?:y|ies)|parameters?|params?|arguments?|args?|values?|keys?|attributes?|columns?|headers?|variables?|options?|flags?|settings?|entry|entries|members?|elements?|claims?|cursors?)\b",
    )
});

/// After a name: where the data comes from ("from the response", "of the last answer's"),
/// or the standard that defines it ("per RFC 8414", "as defined in the OAuth specification").
static DATA_SOURCE: LazyLock<Regex> = LazyLock::new(|| {
    regex(
        r"(?i)^`?\s*(?:(?:from|of|in)\s+(?:the\s+|this\s+|each\s+|every\s+|a\s+|an\s+)?(?:(?:last|previous|prior|earlier|first|current|next|same)\s+)?(?:response|responses|answer|answers|result|results|reply|replies|output|payload|page|listing|json|body|record)\b|(?:per|according\s+to|as\s+(?:defined|described|specified|documented|required)\s+(?:in|by))\s+(?:the\s+|an?\s+)?(?:[\w.-]+\s+){0,3}?(?:rfcs?|specs?|specifications?|standards?|docs|documentation|draft)\b)",
    )
});

/// After a name used (not called): the structure it is read from ("from `pageInfo`").
static FROM_STRUCTURE: LazyLock<Regex> = LazyLock::new(|| regex(r"^`?\s*(?:from|of|in)\s+(?:the\s+)?`[A-Za-z]"));

/// True when the name at `start` (its match ending at `end`) is data, not a tool: a step of a
/// dotted path (`pageInfo.endCursor`), a field, property, parameter or value, a value read
/// from a response, or a name a standard defines. `used` is true after use/using/uses, where a
/// name read from another structure is data too.
fn names_data(text: &str, start: usize, end: usize, used: bool) -> bool {
    let before = text[..start].trim_end_matches('`');
    let after = &text[end..];
    let dotted = |rest: &str| {
        let mut chars = rest.trim_start_matches('`').chars();
        chars.next() == Some('.') && chars.next().is_some_and(|c| c.is_ascii_alphabetic())
    };
    before.ends_with('.')
        || dotted(after)
        || DATA_WORD.is_match(after)
        || DATA_SOURCE.is_match(after)
        || used && FROM_STRUCTURE.is_match(after)
}

/// Tool-like names a text gives directions for, with an excerpt each (resolved in
/// [`Scanner::finish`]).
fn tool_mentions(text: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for captures in MENTION.captures_iter(text) {
        let Some(name) = captures.get(1).or(captures.get(2)).or(captures.get(3)) else { continue };
        let backticked = captures.get(2).is_some();
        let whole = captures.get(0).expect("a match");
        let lead = whole.as_str().to_ascii_lowercase();
        let called = lead.starts_with("call") || lead.starts_with("invok");
        if !(tool_like(name.as_str())
            || backticked && name.as_str().contains(['_', '-'])
            || called && kebab(name.as_str()))
        {
            continue;
        }
        if names_data(text, name.start(), whole.end(), lead.starts_with("us")) {
            continue;
        }
        out.push((name.as_str().to_owned(), excerpt(text, whole.range())));
        if out.len() >= 20 {
            break;
        }
    }
    out
}

/// The line of a tool's description that documents the parameter `name` (`name: …`,
/// `name (str): …`, `- name: …`), as docstrings do.
fn documented_in<'a>(description: &'a str, name: &str) -> Option<&'a str> {
    description.lines().find(|line| {
        let line = line.trim_start().trim_start_matches(['-', '*', ' ']).trim_start_matches('`');
        line.strip_prefix(name).is_some_and(|rest| rest.trim_start_matches('`').trim_start().starts_with([':', '(']))
    })
}

/// The context of a token that is a handle the server gave out: a page or cursor, or a value
/// taken from earlier results ("a token from the search results", "as the listing returned
/// it").
static HANDLE: LazyLock<Regex> = LazyLock::new(|| {
    regex(
        r"(?i)\b(?:page|pages|paging|pagination|cursor|continu\w*|next)\b|\b(?:from|in)\s+(?:the\s+|a\s+|an\s+|earlier\s+|previous\s+)?(?:\w+\s+)?(?:results?|response|responses|listing|output)\b|\b(?:returned|given\s+out|issued)\s+(?:it\s+|by\b)|\bas\s+(?:it\s+)?(?:appeared|returned|was\s+returned)\b|\b(?:the\s+)?\w+\s+returned\s+it\b",
    )
});

/// The context of a password the tool sets on what it protects (a sheet, a document, an
/// archive): it asks for a new value, not for a credential the model holds.
static PROTECTION: LazyLock<Regex> = LazyLock::new(|| {
    regex(
        r"(?i)\b(?:un)?protect(?:s|ion|ing)?\b|\bto\s+set\b|\bnew\s+password\b|\b(?:applied|apply|applies|set)\s+as\s+(?:the\s+)?\S+\s+(?:open\s+)?password\b",
    )
});

/// SEC-7 by name: the words of a parameter's name ask for a secret or for the conversation
/// (`context`: its description; `tools`: the name of the tool it belongs to).
fn secret_name(name: &str, context: Option<&str>, tools: &[&str]) -> Option<String> {
    let words = crate::suggest::words(name);
    let has = |word: &str| words.iter().any(|w| w == word);
    let pagination = context.is_some_and(|text| HANDLE.is_match(text));
    // A password set on what the tool protects: so its description says, or the tool's name
    // (`protect_document`, `unprotect_file`).
    let protection = context.is_some_and(|text| PROTECTION.is_match(text))
        || tools.iter().any(|tool| PROTECTION.is_match(&crate::suggest::words(tool).join(" ")));
    let named_only = ["id", "name", "arn", "path", "ref", "identifier", "type", "count", "names", "ids", "length"];
    let what = if (has("password")
        || has("passwd")
        || has("passphrase")
        || words.iter().any(|w| w == "pass") && has("phrase"))
        && !protection
    {
        Some("a password")
    } else if (has("api") && has("key"))
        || has("apikey")
        || (has("access") && has("key"))
        || (has("private") && has("key"))
        || (has("secret") && has("key"))
        || (has("signing") && has("key"))
    {
        Some("a key")
    } else if has("secret") && !named_only.iter().any(|word| has(word)) {
        Some("a secret")
    } else if has("token")
        && !pagination
        && !["page", "next", "cursor", "continuation", "max", "count", "limit", "num", "sync", "tokens", "budget"]
            .iter()
            .any(|word| has(word))
    {
        Some("a token")
    } else if has("credential")
        || has("credentials")
        || (has("seed") && has("phrase"))
        || has("mnemonic")
        || (has("session") && has("cookie"))
    {
        Some("credentials")
    } else if (has("conversation") && (has("history") || has("context") || has("log") || has("transcript")))
        || (has("chat") && has("history"))
        || (has("system") && has("prompt"))
        || (has("message") && has("history"))
        || (has("previous") && has("messages"))
    {
        Some("the conversation or the system prompt")
    } else {
        None
    };
    what.map(|what| {
        format!(
            "the parameter `{}` asks for {what}: a model would fill it from what it holds, and the value then sits in the tool call's arguments and logs",
            visible(name)
        )
    })
}

/// SEC-7 by description: a parameter's description asks for a secret or for the conversation.
static ASK_SECRET: LazyLock<Regex> = LazyLock::new(|| {
    regex(
        r"(?i)\b(?:your|the\s+user'?s|user|the\s+full|the\s+entire|the\s+complete|paste|provide|enter|supply)\s+(?:\w+\s+){0,2}?(?:password|passphrase|api\s+key|secret\s+key|private\s+key|access\s+token|auth(?:entication)?\s+token|bearer\s+token|credentials|seed\s+phrase|conversation\s+history|chat\s+history|system\s+prompt)\b",
    )
});

fn secret_request(text: &str) -> Option<String> {
    ASK_SECRET.find_iter(text).find(|found| !negated(text, found.start())).map(|found| {
        format!(
            "the parameter's description asks for a secret or for the conversation: {}",
            excerpt(text, found.range())
        )
    })
}

/// What the model holds of the conversation: its history, transcript or earlier messages
/// ("the whole conversation up to this point", "each earlier message", "everything the user has
/// said"). A conversation named by its id, one message, or another history (a commit history)
/// is none of it.
const CONVERSATION: &str = r"(?:(?:conversation|chat|dialog(?:ue)?|message|session)\s+(?:history|histories|transcripts?|logs?)\b|(?:whole|full|entire|complete|current|ongoing)\s+(?:conversation|chat|dialog(?:ue)?|transcript|exchange)\b|(?:conversation|chat|dialog(?:ue)?)\s+(?:so\s+far|until\s+now|up\s+to\s+(?:now|here|this\s+point))\b|transcripts?\s+of\s+(?:the|this|our|your)\s+(?:conversation|chat|dialog(?:ue)?|session)\b|(?:(?:all|every|each|any)\s+(?:of\s+)?(?:the\s+)?|the\s+)?(?:earlier|previous|prior|preceding|past|former)\s+(?:user\s+|chat\s+|conversation\s+)?(?:messages?|turns?|prompts?|exchanges?)\b|everything\s+(?:the\s+user|you|we|i)\s+(?:has\s+|have\s+)?(?:said|written|typed|asked|discussed)\b)";

/// A request to put [`CONVERSATION`] into the parameter: a verb of putting before it in the
/// same clause ("paste each earlier message"), the description opening with it ("All previous
/// turns, verbatim."), or it "goes in this field".
static ASK_CONVERSATION: LazyLock<Regex> = LazyLock::new(|| {
    regex(&format!(
        r"(?i)\b(?:include|paste|put|provide|pass|passes|copy|insert|add|give|fill|enter|supply|attach|dump|append|submit|forward|send)\b[^.!?;\n]{{0,40}}?\b{CONVERSATION}|^\s*(?:the\s+|a\s+|an\s+)?(?:(?:verbatim|full|raw|exact)\s+)?{CONVERSATION}|{CONVERSATION}[^.!?;\n]{{0,40}}?\b(?:goes|go|belongs?|is\s+(?:put|placed|pasted|passed|given|entered)|are\s+(?:put|placed|pasted|passed|given|entered)|should\s+(?:go|be\s+(?:put|placed|pasted|passed|given|entered)))\s+(?:in|into|here)\b"
    ))
});

/// A description of a switch ("whether to …", "if true, …"): it names what the switch does,
/// it asks for no text.
static SWITCH: LazyLock<Regex> = LazyLock::new(|| {
    regex(
        r"(?i)^\s*(?:whether\b|if\s+(?:true|false|set|enabled)\b|when\s+(?:true|false|set|enabled)\b|set\s+(?:to\s+)?(?:true|false)\b|true\s+to\b|toggles?\b)",
    )
});

/// A conversation named by what identifies it ("the current conversation's id"): no content.
static NAMED_BY: LazyLock<Regex> = LazyLock::new(|| {
    regex(r"(?i)^(?:'s|\s+)(?:\s*(?:id|ids|identifier|name|title|key|number|uuid|url|link|handle)\b)")
});

/// SEC-7 by description: the parameter's description asks for the conversation.
fn conversation_request(text: &str) -> Option<String> {
    if SWITCH.is_match(text) {
        return None;
    }
    ASK_CONVERSATION.find_iter(text).find(|found| !negated(text, found.start()) && !NAMED_BY.is_match(&text[found.end()..])).map(|found| {
        format!(
            "the parameter's description asks for the conversation (its history or earlier messages): a model would paste what the user said into the tool call's arguments: {}",
            excerpt(text, found.range())
        )
    })
}

// ---------------------------------------------------------------------------------------------
// SEC-6: look-alike names.

fn look_alikes(kind: Kind, names: &[String]) -> Vec<Hit> {
    let mut out = Vec::new();
    let mut by_skeleton: BTreeMap<String, Vec<&str>> = BTreeMap::new();
    for name in names {
        by_skeleton.entry(unicode_security::skeleton(name).collect()).or_default().push(name);
        if !name.as_str().is_single_script() {
            out.push(Hit {
                id: "SEC-6",
                element: format!("{}[{}]", kind.list(), visible(name)),
                path: ".name".into(),
                evidence: format!("the name mixes scripts ({}): it can pass for another name", scripts_of(name)),
            });
        }
    }
    for group in by_skeleton.values() {
        let mut distinct: Vec<&str> = group.clone();
        distinct.sort_unstable();
        distinct.dedup();
        if distinct.len() < 2 {
            continue;
        }
        for name in &distinct[1..] {
            out.push(Hit {
                id: "SEC-6",
                element: format!("{}[{}]", kind.list(), visible(name)),
                path: ".name".into(),
                evidence: format!(
                    "`{}` looks like `{}` (the same UTS #39 confusable skeleton): a model or a reviewer can take one for the other",
                    visible(name),
                    visible(distinct[0])
                ),
            });
        }
    }
    out
}

fn scripts_of(name: &str) -> String {
    let mut seen: Vec<String> = Vec::new();
    for c in name.chars() {
        let script = c.script();
        if matches!(script, Script::Common | Script::Inherited) {
            continue;
        }
        let label = script.full_name().to_owned();
        if !seen.contains(&label) {
            seen.push(label);
        }
    }
    seen.join(" + ")
}

/// A name as a report can show it: hidden characters as `\u{…}` escapes, at most 80 characters.
pub(crate) fn visible(text: &str) -> String {
    let mut out = String::new();
    for c in text.chars().take(80) {
        if is_hidden(c) {
            out.push_str(&format!("\\u{{{:X}}}", c as u32));
        } else {
            out.push(c);
        }
    }
    if text.chars().count() > 80 {
        out.push('…');
    }
    out
}

#[cfg(test)]
mod tests;

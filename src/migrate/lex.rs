//! A small lexer for the migration scan: it finds the string literals and the comments of a
//! source file, so that a rule can tell a protocol name in code or a string (a finding) from
//! the same name in a comment (a note), and match a string literal whole (`"initialize"`).
//!
//! It knows a few families of syntax ([`Syntax::for_path`]), not any language's grammar:
//! `//` and `/* */` comments, `#` comments, quotes that end at the line's end unless they are
//! backticks or triple quotes, char literals (`'x'`, never a Rust lifetime), Rust raw strings,
//! and a Python docstring (a triple-quoted string that is a statement of its own) counted as
//! a comment. A construct it does not know (a JavaScript regular expression literal holding a
//! quote, a heredoc) at worst mislabels the rest of its line.

/// What a span of a file is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// A string literal (its quotes included in the span).
    Str,
    /// A comment or a docstring.
    Comment,
}

/// A string literal or a comment: byte offsets into the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Span {
    /// Its kind.
    pub kind: Kind,
    /// The first byte.
    pub start: usize,
    /// One past the last byte.
    pub end: usize,
    /// For a string, the bytes between its quotes.
    pub content: (usize, usize),
}

/// How `#` starts a comment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Hash {
    /// It does not (C-like languages).
    No,
    /// Anywhere outside a string (Python, Ruby, PHP, Elixir).
    Anywhere,
    /// At the start of a word (shells: `$#` and `a#b` are not comments).
    WordStart,
}

/// What the single quote is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Single {
    /// A string quote.
    Quote,
    /// A char literal's quote (`'x'`, `'\n'`); otherwise code (a Rust lifetime, a label).
    Char,
}

/// The syntax family of a source file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Syntax {
    slash: bool,
    hash: Hash,
    single: Single,
    backtick: bool,
    triple: bool,
    docstrings: bool,
    raw_strings: bool,
}

impl Syntax {
    const JS: Syntax = Syntax {
        slash: true,
        hash: Hash::No,
        single: Single::Quote,
        backtick: true,
        triple: false,
        docstrings: false,
        raw_strings: false,
    };
    const C: Syntax = Syntax { single: Single::Char, backtick: false, triple: true, ..Syntax::JS };

    /// The syntax of a source or test file, from its extension; `None` for a file the scan does
    /// not read as code (prose, data, anything else).
    pub(crate) fn for_path(path: &std::path::Path) -> Option<Syntax> {
        let extension = path.extension()?.to_str()?.to_ascii_lowercase();
        Some(match extension.as_str() {
            "ts" | "tsx" | "mts" | "cts" | "js" | "jsx" | "mjs" | "cjs" => Syntax::JS,
            "go" => Syntax { triple: false, backtick: true, ..Syntax::C },
            "rs" => Syntax { triple: false, raw_strings: true, ..Syntax::C },
            "java" | "kt" | "kts" | "scala" | "cs" | "swift" | "c" | "h" | "cc" | "cpp" | "cxx" | "hpp" => Syntax::C,
            "dart" => Syntax { single: Single::Quote, ..Syntax::C },
            "php" => Syntax { hash: Hash::Anywhere, backtick: false, ..Syntax::JS },
            "py" | "pyi" => Syntax {
                slash: false,
                hash: Hash::Anywhere,
                backtick: false,
                triple: true,
                docstrings: true,
                ..Syntax::JS
            },
            "rb" => Syntax { slash: false, hash: Hash::Anywhere, backtick: false, ..Syntax::JS },
            "ex" | "exs" => Syntax { slash: false, hash: Hash::Anywhere, backtick: false, triple: true, ..Syntax::JS },
            "sh" | "bash" | "zsh" => Syntax { slash: false, hash: Hash::WordStart, backtick: false, ..Syntax::JS },
            _ => return None,
        })
    }
}

/// The string literals and comments of `text`, in order, never overlapping.
pub(crate) fn spans(text: &str, syntax: Syntax) -> Vec<Span> {
    let bytes = text.as_bytes();
    let mut spans = Vec::new();
    let mut at = 0;
    while at < bytes.len() {
        let byte = bytes[at];
        let next = bytes.get(at + 1).copied();
        if syntax.slash && byte == b'/' && next == Some(b'/') {
            let end = line_end(bytes, at);
            spans.push(Span { kind: Kind::Comment, start: at, end, content: (at, end) });
            at = end;
        } else if syntax.slash && byte == b'/' && next == Some(b'*') {
            let end = find(bytes, at + 2, b"*/").map_or(bytes.len(), |close| close + 2);
            spans.push(Span { kind: Kind::Comment, start: at, end, content: (at, end) });
            at = end;
        } else if byte == b'#' && hash_comment(syntax.hash, bytes, at) {
            let end = line_end(bytes, at);
            spans.push(Span { kind: Kind::Comment, start: at, end, content: (at, end) });
            at = end;
        } else if syntax.raw_strings && byte == b'r' && !ident_byte(before(bytes, at)) && raw_open(bytes, at).is_some()
        {
            let (hashes, content_start) = raw_open(bytes, at).unwrap_or((0, at + 2));
            let mut close = Vec::with_capacity(hashes + 1);
            close.push(b'"');
            close.extend(std::iter::repeat_n(b'#', hashes));
            let (content_end, end) = find(bytes, content_start, &close)
                .map_or((bytes.len(), bytes.len()), |found| (found, found + close.len()));
            spans.push(Span { kind: Kind::Str, start: at, end, content: (content_start, content_end) });
            at = end;
        } else if syntax.triple && (byte == b'"' || byte == b'\'') && bytes[at..].starts_with(&[byte; 3]) {
            let close = [byte; 3];
            let (content_end, end) =
                find_unescaped(bytes, at + 3, &close).map_or((bytes.len(), bytes.len()), |found| (found, found + 3));
            let kind = if syntax.docstrings && statement_start(bytes, at) { Kind::Comment } else { Kind::Str };
            spans.push(Span { kind, start: at, end, content: (at + 3, content_end) });
            at = end;
        } else if byte == b'"' || (byte == b'`' && syntax.backtick) || (byte == b'\'' && syntax.single == Single::Quote)
        {
            let multiline = byte == b'`';
            let (content_end, end) = string_end(bytes, at + 1, byte, multiline);
            spans.push(Span { kind: Kind::Str, start: at, end, content: (at + 1, content_end) });
            at = end;
        } else if byte == b'\'' && syntax.single == Single::Char {
            match char_literal_end(text, at) {
                Some(end) => {
                    spans.push(Span { kind: Kind::Str, start: at, end, content: (at + 1, end - 1) });
                    at = end;
                }
                None => at += 1,
            }
        } else {
            at += 1;
        }
    }
    spans
}

fn before(bytes: &[u8], at: usize) -> u8 {
    if at == 0 { b' ' } else { bytes[at - 1] }
}

fn ident_byte(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || byte == b'_' || byte >= 0x80
}

fn hash_comment(hash: Hash, bytes: &[u8], at: usize) -> bool {
    match hash {
        Hash::No => false,
        Hash::Anywhere => true,
        Hash::WordStart => matches!(before(bytes, at), b' ' | b'\t' | b'\n' | b'\r' | b';'),
    }
}

/// `r"`, `r#"`, `r##"`… at `at`: the number of `#` and where the content starts.
fn raw_open(bytes: &[u8], at: usize) -> Option<(usize, usize)> {
    let hashes = bytes[at + 1..].iter().take_while(|byte| **byte == b'#').count();
    (bytes.get(at + 1 + hashes) == Some(&b'"')).then_some((hashes, at + 2 + hashes))
}

/// True when only whitespace (and a string prefix such as `r` or `f`) comes before `at` on its
/// line: a triple-quoted string there is a statement of its own, a docstring.
fn statement_start(bytes: &[u8], at: usize) -> bool {
    let start = bytes[..at].iter().rposition(|byte| *byte == b'\n').map_or(0, |newline| newline + 1);
    let head = &bytes[start..at];
    let trimmed: Vec<u8> = head.iter().copied().skip_while(u8::is_ascii_whitespace).collect();
    trimmed.len() <= 2 && trimmed.iter().all(|byte| matches!(byte.to_ascii_lowercase(), b'r' | b'u' | b'b' | b'f'))
}

fn line_end(bytes: &[u8], at: usize) -> usize {
    bytes[at..].iter().position(|byte| *byte == b'\n').map_or(bytes.len(), |offset| at + offset)
}

fn find(bytes: &[u8], from: usize, needle: &[u8]) -> Option<usize> {
    if from > bytes.len() {
        return None;
    }
    bytes[from..].windows(needle.len()).position(|window| window == needle).map(|offset| from + offset)
}

/// The first `needle` from `from` that no backslash escapes.
fn find_unescaped(bytes: &[u8], from: usize, needle: &[u8]) -> Option<usize> {
    let mut at = from;
    while at + needle.len() <= bytes.len() {
        if bytes[at] == b'\\' {
            at += 2;
        } else if bytes[at..].starts_with(needle) {
            return Some(at);
        } else {
            at += 1;
        }
    }
    None
}

/// The end of a string opened by `quote` whose content starts at `from`: (content end, span
/// end). A backslash escapes the next byte; an ordinary string also ends, unterminated, at the
/// line's end.
fn string_end(bytes: &[u8], from: usize, quote: u8, multiline: bool) -> (usize, usize) {
    let mut at = from;
    while at < bytes.len() {
        match bytes[at] {
            b'\\' => at += 2,
            byte if byte == quote => return (at, at + 1),
            b'\n' if !multiline => return (at, at),
            _ => at += 1,
        }
    }
    (bytes.len(), bytes.len())
}

/// The end of a char literal opening at `at` (`'x'`, `'\n'`, `'\u{1F600}'`), or `None` when the
/// quote opens none (a lifetime `'a`, a label).
fn char_literal_end(text: &str, at: usize) -> Option<usize> {
    let rest = &text[at + 1..];
    let mut chars = rest.char_indices();
    let (_, first) = chars.next()?;
    if first == '\\' {
        // The escaped character (a quote too), then up to a `\u{…}`'s worth before the close.
        let (_, escaped) = chars.next()?;
        let from = 1 + escaped.len_utf8();
        let close = rest[from..].char_indices().take(12).find(|(_, c)| *c == '\'' || *c == '\n')?;
        return (close.1 == '\'').then_some(at + 1 + from + close.0 + 1);
    }
    if first == '\'' || first == '\n' {
        return None;
    }
    let (offset, second) = chars.next()?;
    (second == '\'').then_some(at + 1 + offset + 1)
}

/// The kind of the byte at `offset`, given the file's spans: `None` for code.
pub(crate) fn kind_at(spans: &[Span], offset: usize) -> Option<Kind> {
    let index = spans.partition_point(|span| span.end <= offset);
    spans.get(index).filter(|span| span.start <= offset).map(|span| span.kind)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(text: &str, extension: &str) -> Vec<(Kind, String)> {
        let syntax = Syntax::for_path(std::path::Path::new(&format!("x.{extension}"))).expect("a source extension");
        spans(text, syntax).iter().map(|span| (span.kind, text[span.start..span.end].to_owned())).collect()
    }

    #[test]
    fn strings_and_comments_of_javascript() {
        let found = kinds("const a = \"x//y\"; // note 'q'\nconst b = `multi\nline`; /* c\n */ let c = 'd\\'e';", "ts");
        assert_eq!(
            found,
            vec![
                (Kind::Str, "\"x//y\"".into()),
                (Kind::Comment, "// note 'q'".into()),
                (Kind::Str, "`multi\nline`".into()),
                (Kind::Comment, "/* c\n */".into()),
                (Kind::Str, "'d\\'e'".into()),
            ]
        );
    }

    #[test]
    fn python_docstrings_are_comments_and_other_triple_quotes_are_strings() {
        let found =
            kinds("def f():\n    \"\"\"Says \"initialize\".\"\"\"\n    body = '''{\"a\": 1}'''  # done\n", "py");
        assert_eq!(
            found,
            vec![
                (Kind::Comment, "\"\"\"Says \"initialize\".\"\"\"".into()),
                (Kind::Str, "'''{\"a\": 1}'''".into()),
                (Kind::Comment, "# done".into()),
            ]
        );
    }

    #[test]
    fn rust_lifetimes_are_code_and_char_and_raw_strings_are_strings() {
        let found = kinds("fn f<'a>(x: &'a str) -> char { let r = r#\"a \"q\" b\"#; '\\n'; '\\'' } // end", "rs");
        assert_eq!(
            found,
            vec![
                (Kind::Str, "r#\"a \"q\" b\"#".into()),
                (Kind::Str, "'\\n'".into()),
                (Kind::Str, "'\\''".into()),
                (Kind::Comment, "// end".into()),
            ]
        );
    }

    #[test]
    fn an_unterminated_string_ends_at_its_line_and_shell_hashes_start_words() {
        assert_eq!(
            kinds("a = \"open\nb = 1 # c", "py"),
            vec![(Kind::Str, "\"open".into()), (Kind::Comment, "# c".into())]
        );
        assert_eq!(kinds("echo $# x#y # z", "sh"), vec![(Kind::Comment, "# z".into())]);
    }

    #[test]
    fn kind_at_finds_the_span_of_an_offset() {
        let text = "a \"b\" // c";
        let syntax = Syntax::for_path(std::path::Path::new("x.js")).expect("js");
        let spans = spans(text, syntax);
        assert_eq!(kind_at(&spans, 0), None);
        assert_eq!(kind_at(&spans, 3), Some(Kind::Str));
        assert_eq!(kind_at(&spans, 5), None);
        assert_eq!(kind_at(&spans, 8), Some(Kind::Comment));
        assert_eq!(Syntax::for_path(std::path::Path::new("README.md")), None);
    }
}

//! Did-you-mean hints shared by the file readers (the config file, golden sets): the edit
//! distance between two short names and the nearest of a list of known names.

/// Levenshtein distance between two short names.
pub(crate) fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut previous = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let current = row[j + 1];
            row[j + 1] = if ca == *cb { previous } else { 1 + previous.min(row[j]).min(row[j + 1]) };
            previous = current;
        }
    }
    row[b.len()]
}

/// The known name nearest to `name` when it is close enough to be a likely typo (at most two
/// edits, or one is a prefix of the other). Of two as near, one that `name` begins is preferred
/// (`api_key` is nearer `api_key_env` than `api`).
pub(crate) fn nearest<'a>(name: &str, known: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let (distance, _, found) = known
        .into_iter()
        .map(|candidate| (edit_distance(name, candidate), !candidate.starts_with(name), candidate))
        .min()?;
    (distance <= 2 || found.starts_with(name) || name.starts_with(found)).then_some(found)
}

/// The hint for an unknown key: the nearest known key, and the list of them.
pub(crate) fn unknown_key_hint(key: &str, known: &[&str]) -> String {
    match nearest(key, known.iter().copied()) {
        Some(name) => format!("did you mean `{name}`? (the keys here are {})", known.join(", ")),
        None => format!("the keys here are {}", known.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_nearest_name_is_a_close_one() {
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(nearest("expect_tol", ["expect_tool", "tags"]), Some("expect_tool"));
        assert_eq!(nearest("colour", ["server", "gate"]), None);
        assert!(unknown_key_hint("runz", &["runs", "kind"]).starts_with("did you mean `runs`?"));
        assert_eq!(nearest("api_key", ["api", "api_key_env"]), Some("api_key_env"), "a tie goes to the longer name");
    }
}

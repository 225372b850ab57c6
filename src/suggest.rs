//! Did-you-mean hints shared by the file readers (the config file, golden sets): the edit
//! distance between two short names and the nearest of a list of known names.

/// Levenshtein distance between two short names, in characters (strsim's).
pub(crate) fn edit_distance(a: &str, b: &str) -> usize {
    strsim::levenshtein(a, b)
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

/// The known name most like `name`, for a hint that always names one (`None` only when `known`
/// is empty): a likely typo ([`nearest`]) first; else the one sharing the most words with it
/// (`get_time` → `get_current_time`, not the fewer edits of `convert_time`), then the longest
/// common substring, then the fewest edits. Words are split at `_`, `-`, `.`, `/`, spaces and
/// lower-to-upper case changes, compared case-insensitively.
pub(crate) fn closest<'a>(name: &str, known: impl IntoIterator<Item = &'a str> + Clone) -> Option<&'a str> {
    if let Some(near) = nearest(name, known.clone()) {
        return Some(near);
    }
    let mine = words(name);
    known.into_iter().max_by_key(|candidate| {
        let theirs = words(candidate);
        let shared = mine.iter().filter(|word| theirs.contains(word)).count();
        (
            shared,
            common_substring(&name.to_lowercase(), &candidate.to_lowercase()),
            std::cmp::Reverse(edit_distance(name, candidate)),
        )
    })
}

/// The lowercased words of a name (see [`closest`]).
pub(crate) fn words(name: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut current = String::new();
    let mut previous_lower = false;
    for character in name.chars() {
        let boundary = matches!(character, '_' | '-' | '.' | '/' | ' ') || (previous_lower && character.is_uppercase());
        if boundary && !current.is_empty() {
            words.push(std::mem::take(&mut current));
        }
        if !matches!(character, '_' | '-' | '.' | '/' | ' ') {
            current.extend(character.to_lowercase());
        }
        previous_lower = character.is_lowercase() || character.is_ascii_digit();
    }
    if !current.is_empty() {
        words.push(current);
    }
    words
}

/// The length in characters of the longest substring `a` and `b` share.
fn common_substring(a: &str, b: &str) -> usize {
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    let mut best = 0;
    let mut row = vec![0usize; b.len() + 1];
    for ca in &a {
        let mut previous = 0;
        for (j, cb) in b.iter().enumerate() {
            let current = row[j + 1];
            row[j + 1] = if ca == cb { previous + 1 } else { 0 };
            best = best.max(row[j + 1]);
            previous = current;
        }
    }
    best
}

/// The requirement id nearest to `id` ([`nearest`]), preferring ids with the same letter prefix
/// (the part before the last `-`): `V-100` is a typo of `V-1`, not of `H-10`, though both are
/// two edits away. Falls back to every id when none of the prefix is near.
pub(crate) fn nearest_id<'a>(id: &str, known: impl IntoIterator<Item = &'a str> + Clone) -> Option<&'a str> {
    let prefix = |name: &str| name.rsplit_once('-').map(|(letters, _)| letters.to_ascii_uppercase());
    let mine = prefix(id);
    let same = known.clone().into_iter().filter(|candidate| mine.is_some() && prefix(candidate) == mine);
    nearest(id, same).or_else(|| nearest(id, known))
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

    #[test]
    fn a_rule_id_is_matched_to_one_with_the_same_letter_prefix_first() {
        let ids = ["H-10", "V-1", "V-2", "SEC-7", "M-10"];
        assert_eq!(nearest("V-100", ["H-10", "V-1"]), Some("H-10"), "plain edits tie and pick another prefix");
        assert_eq!(nearest_id("V-100", ids), Some("V-1"));
        assert_eq!(nearest_id("SEC-77", ids), Some("SEC-7"));
        assert_eq!(nearest_id("Q-10", ids), Some("H-10"), "no id of the prefix: every id is a candidate");
        assert_eq!(nearest_id("colour", ids), None);
    }

    #[test]
    fn the_closest_name_shares_the_most_words_not_the_fewest_edits() {
        let tools = ["convert_time", "get_current_time", "list_zones"];
        assert_eq!(closest("get_time", tools), Some("get_current_time"));
        assert_eq!(closest("getTime", tools), Some("get_current_time"), "camelCase words count too");
        assert_eq!(closest("get_current_tme", tools), Some("get_current_time"), "a typo stays a typo");
        assert_eq!(closest("zones", tools), Some("list_zones"));
        assert_eq!(closest("weather", ["forecast", "alerts"]).map(|_| ()), Some(()), "always one when any is known");
        assert_eq!(closest("x", std::iter::empty::<&str>()), None);
    }
}

//! Tests of the verdict cache: keys, hits, misses, corrupt entries, concurrent writers, eviction
//! (which leaves the files beside the entries alone), and the workspace manifest of `--cache-key
//! auto`.

use super::*;

/// The server key of `--cache-key auto` alone.
fn workspace_key(root: &Path, skip: &[PathBuf]) -> std::io::Result<String> {
    workspace_manifest(root, skip).map(|manifest| manifest.key)
}

/// Writes `text` at `relative` below `root`, creating its directories.
fn put_file(root: &Path, relative: &str, text: &str) {
    let path = root.join(relative);
    std::fs::create_dir_all(path.parent().expect("a parent")).expect("dirs");
    std::fs::write(path, text).expect("write");
}

fn eval(case: &str) -> EvalResult {
    EvalResult { reason: Some("4 of 5".into()), ..EvalResult::for_tests(case, "openai:m", false, 4, 5, 4) }
}

fn parts<'a>(case: &'a str, server_key: Option<&'a str>) -> KeyParts<'a> {
    KeyParts {
        case_sha256: case,
        tools: r#"[{"name":"a"}]"#,
        model: "openai:m",
        wire: "openai",
        base_url: "https://api.example/v1",
        runs: 5,
        server_key,
        judge: None,
        matchers: None,
    }
}

#[test]
fn every_part_of_the_key_changes_it() {
    let base = CacheKey::new(&parts("sha256:1", Some("k")));
    assert_eq!(base, CacheKey::new(&parts("sha256:1", Some("k"))), "deterministic");
    let mut changed = vec![
        CacheKey::new(&parts("sha256:2", Some("k"))),
        CacheKey::new(&parts("sha256:1", Some("other"))),
        CacheKey::new(&parts("sha256:1", None)),
    ];
    let mut tools = parts("sha256:1", Some("k"));
    tools.tools = r#"[{"name":"b"}]"#;
    changed.push(CacheKey::new(&tools));
    let mut runs = parts("sha256:1", Some("k"));
    runs.runs = 10;
    changed.push(CacheKey::new(&runs));
    let mut url = parts("sha256:1", Some("k"));
    url.base_url = "http://127.0.0.1:8080/v1";
    changed.push(CacheKey::new(&url));
    let mut judged = parts("sha256:1", Some("k"));
    judged.judge = Some("openai:judge|samples 1|prompt v1".into());
    changed.push(CacheKey::new(&judged));
    let mut embedded = parts("sha256:1", Some("k"));
    embedded.matchers = Some("embedding openai:text-embedding-3-small@https://api.example/v1".into());
    changed.push(CacheKey::new(&embedded));
    embedded.matchers = Some("embedding openai:text-embedding-3-large@https://api.example/v1".into());
    changed.push(CacheKey::new(&embedded));
    for (index, key) in changed.iter().enumerate() {
        assert_ne!(*key, base);
        assert!(!changed[..index].contains(key), "part {index} collides with an earlier one");
    }
}

#[test]
fn a_case_without_model_graded_matchers_keeps_the_key_it_had() {
    // The key recipe before `matchers` existed: cached verdicts of such cases stay valid.
    let before = json!({
        "v": 1, "case": "sha256:1",
        "tools": crate::jcs::hash(&serde_json::from_str::<Value>(r#"[{"name":"a"}]"#).expect("json")),
        "model": "openai:m", "wire": "openai", "base_url": "https://api.example/v1", "runs": 5,
        "server_key": "k", "judge": null, "mcp_eval": env!("CARGO_PKG_VERSION"), "graders": GRADER_VERSION,
    });
    assert_eq!(CacheKey::new(&parts("sha256:1", Some("k"))).0, crate::jcs::hash(&before));
}

#[test]
fn a_stored_verdict_is_found_again_with_where_it_came_from() {
    let dir = tempfile::tempdir().expect("temp dir");
    let cache = VerdictCache::new(dir.path().to_path_buf(), Mode::ReadWrite);
    let key = CacheKey::new(&parts("sha256:1", Some("sha256:ws")));
    assert_eq!(cache.get(&key).ok(), Some(None));
    cache.put(&key, &eval("a"), "2026-11-30T10:00:00Z", Some("sha256:ws")).expect("stored");
    let (found, from) = cache.get(&key).expect("readable").expect("a hit");
    assert_eq!(found, eval("a"));
    assert_eq!((from.measured_at.as_str(), from.server_key.as_str()), ("2026-11-30T10:00:00Z", "sha256:ws"));
    assert_eq!(from.key, key.0);
    // Write-only stores but never reuses; off does neither.
    assert_eq!(VerdictCache::new(dir.path().to_path_buf(), Mode::WriteOnly).get(&key).ok(), Some(None));
    let other = CacheKey::new(&parts("sha256:2", None));
    VerdictCache::new(dir.path().to_path_buf(), Mode::Off).put(&other, &eval("b"), "t", None).expect("nothing");
    assert_eq!(cache.get(&other).ok(), Some(None));
}

#[test]
fn a_corrupt_entry_is_skipped_with_a_warning() {
    let dir = tempfile::tempdir().expect("temp dir");
    let cache = VerdictCache::new(dir.path().to_path_buf(), Mode::ReadWrite);
    let key = CacheKey::new(&parts("sha256:1", None));
    cache.put(&key, &eval("a"), "t", None).expect("stored");
    std::fs::write(cache.path(&key), "{not json").expect("corrupt it");
    let warning = cache.get(&key).expect_err("a warning, not a verdict").to_string();
    assert!(warning.contains("not readable") && warning.contains("ignored"), "{warning}");
}

#[test]
fn concurrent_writers_leave_a_readable_cache() {
    let dir = tempfile::tempdir().expect("temp dir");
    let key = CacheKey::new(&parts("sha256:1", None));
    std::thread::scope(|scope| {
        for writer in 0..8 {
            let dir = dir.path().to_path_buf();
            let key = key.clone();
            scope.spawn(move || {
                let cache = VerdictCache::new(dir, Mode::ReadWrite);
                for _ in 0..20 {
                    cache.put(&key, &eval(&format!("w{writer}")), "t", None).expect("stored");
                }
            });
        }
    });
    let (found, _) =
        VerdictCache::new(dir.path().to_path_buf(), Mode::ReadWrite).get(&key).expect("readable").expect("hit");
    assert!(found.case.starts_with('w'), "one writer's whole entry: {}", found.case);
}

#[test]
fn the_oldest_entries_are_evicted_first_to_stay_under_the_bound() {
    let dir = tempfile::tempdir().expect("temp dir");
    let cache = VerdictCache::new(dir.path().to_path_buf(), Mode::ReadWrite).with_max_bytes(1500);
    let keys: Vec<CacheKey> = (0..6).map(|n| CacheKey::new(&parts(&format!("sha256:{n}"), None))).collect();
    for (n, key) in keys.iter().enumerate() {
        cache.put(key, &eval(&format!("c{n}")), "t", None).expect("stored");
        std::thread::sleep(std::time::Duration::from_millis(15));
    }
    assert_eq!(cache.get(&keys[0]).ok(), Some(None), "the oldest went first");
    assert!(cache.get(&keys[5]).expect("readable").is_some(), "the newest stays");
}

#[test]
fn the_files_beside_the_entries_are_neither_evicted_nor_counted() {
    let dir = tempfile::tempdir().expect("temp dir");
    // The baseline and the trends of layer 3, each larger than the bound by itself.
    let big = "x".repeat(5_000);
    for name in ["baselines.json", "trends.json", MANIFEST_FILE] {
        std::fs::write(dir.path().join(name), &big).expect("write");
    }
    let cache = VerdictCache::new(dir.path().to_path_buf(), Mode::ReadWrite).with_max_bytes(1500);
    let keys: Vec<CacheKey> = (0..3).map(|n| CacheKey::new(&parts(&format!("sha256:{n}"), None))).collect();
    for (n, key) in keys.iter().enumerate() {
        cache.put(key, &eval(&format!("c{n}")), "t", None).expect("stored");
    }
    assert!(cache.get(&keys[2]).expect("readable").is_some(), "not counted: the newest entry stays");
    for name in ["baselines.json", "trends.json", MANIFEST_FILE] {
        assert_eq!(std::fs::read_to_string(dir.path().join(name)).expect(name), big, "{name} is never evicted");
    }
}

#[test]
fn the_workspace_key_changes_with_the_servers_code_but_not_with_skipped_directories() {
    let dir = tempfile::tempdir().expect("temp dir");
    let root = dir.path();
    std::fs::create_dir_all(root.join("src")).expect("dirs");
    std::fs::create_dir_all(root.join("golden")).expect("dirs");
    std::fs::create_dir_all(root.join(".git")).expect("dirs");
    std::fs::write(root.join("src/server.py"), "print(1)").expect("write");
    let skip = [root.join("golden")];
    let before = workspace_key(root, &skip).expect("hashed");
    std::fs::write(root.join("golden/tasks.yaml"), "version: 1").expect("write");
    std::fs::write(root.join(".git/HEAD"), "ref").expect("write");
    assert_eq!(workspace_key(root, &skip).expect("hashed"), before, "golden set and .git are left out");
    std::fs::write(root.join("src/server.py"), "print(2)").expect("write");
    assert_ne!(workspace_key(root, &skip).expect("hashed"), before, "the server's code is in");
}

#[test]
fn the_workspace_key_leaves_out_what_git_ignores_and_earlier_reports() {
    let dir = tempfile::tempdir().expect("temp dir");
    let root = dir.path();
    for sub in ["src", "build", "old-report", "deep/nested"] {
        std::fs::create_dir_all(root.join(sub)).expect("dirs");
    }
    std::fs::write(root.join(".gitignore"), "build/\n*.log\n").expect("write");
    std::fs::write(root.join("src/server.py"), "print(1)").expect("write");
    std::fs::write(root.join(".env.example"), "A=1").expect("write");
    let before = workspace_key(root, &[]).expect("hashed");

    std::fs::write(root.join("build/server.bin"), "compiled").expect("write");
    std::fs::write(root.join("run.log"), "noise").expect("write");
    for file in ["report.json", "summary.md", "junit.xml"] {
        std::fs::write(root.join("old-report").join(file), "{}").expect("write");
    }
    assert_eq!(workspace_key(root, &[]).expect("hashed"), before, "ignored files and an old report are left out");

    std::fs::write(root.join(".env.example"), "A=2").expect("write");
    let hidden = workspace_key(root, &[]).expect("hashed");
    assert_ne!(hidden, before, "a hidden file that git would track is in");
    std::fs::write(root.join("deep/nested/tool.py"), "x").expect("write");
    assert_ne!(workspace_key(root, &[]).expect("hashed"), hidden, "nested files are in");
    std::fs::write(root.join(".gitignore"), "build/\n").expect("write");
    assert_ne!(workspace_key(root, &[]).expect("hashed"), hidden, "the ignore file itself is in, and run.log now too");
}

#[test]
fn a_golden_set_at_the_top_of_the_workspace_is_left_out_by_its_own_path() {
    let dir = tempfile::tempdir().expect("temp dir");
    let root = dir.path();
    std::fs::write(root.join("server.py"), "print(1)").expect("write");
    std::fs::write(root.join("tasks.yaml"), "version: 1").expect("write");
    let skip = [root.join("tasks.yaml")];
    let before = workspace_key(root, &skip).expect("hashed");
    std::fs::write(root.join("tasks.yaml"), "version: 1\n# an edited case").expect("write");
    assert_eq!(workspace_key(root, &skip).expect("hashed"), before, "editing the set is not a server change");
    std::fs::write(root.join("server.py"), "print(2)").expect("write");
    assert_ne!(workspace_key(root, &skip).expect("hashed"), before);
}

#[test]
fn the_workspace_key_is_the_recipe_cached_verdicts_were_keyed_on() {
    use sha2::{Digest, Sha256};
    let dir = tempfile::tempdir().expect("temp dir");
    put_file(dir.path(), "a.txt", "x");
    put_file(dir.path(), "src/b.py", "y");
    let mut hasher = Sha256::new();
    for (path, text) in [("a.txt", "x"), ("src/b.py", "y")] {
        hasher.update(path.as_bytes());
        hasher.update([0]);
        hasher.update(Sha256::digest(text));
    }
    let manifest = workspace_manifest(dir.path(), &[]).expect("hashed");
    assert_eq!(manifest.key, format!("sha256:{:x}", hasher.finalize()), "keys of stored verdicts stay valid");
    assert_eq!(manifest.files, 2);
    let paths = manifest.paths.expect("named");
    assert_eq!(paths.keys().collect::<Vec<_>>(), ["a.txt", "src/b.py"], "workspace-relative, `/` separators");
    assert_eq!(paths["a.txt"], format!("{:x}", Sha256::digest("x"))[..16], "a digest, never the contents");
}

#[test]
fn a_changed_workspace_key_names_the_paths_added_changed_and_removed() {
    let dir = tempfile::tempdir().expect("temp dir");
    let root = dir.path();
    put_file(root, "src/server.py", "print(1)");
    put_file(root, "old.txt", "old");
    let before = workspace_manifest(root, &[]).expect("hashed");
    assert_eq!(workspace_manifest(root, &[]).expect("hashed").moved_since(&before), None, "unchanged: nothing said");

    put_file(root, "logs/run.log", "noise");
    put_file(root, "src/server.py", "print(2)");
    std::fs::remove_file(root.join("old.txt")).expect("remove");
    let now = workspace_manifest(root, &[]).expect("hashed");
    assert_eq!(
        now.moved_since(&before).as_deref(),
        Some(
            "the cache key (auto) changed since the last stored run: `logs/run.log` added, `src/server.py` changed, `old.txt` removed; cached verdicts keyed on the old workspace are not reused"
        )
    );
}

#[test]
fn more_than_five_moved_paths_name_five_and_count_the_rest() {
    let dir = tempfile::tempdir().expect("temp dir");
    let root = dir.path();
    put_file(root, "server.py", "print(1)");
    let before = workspace_manifest(root, &[]).expect("hashed");
    for index in 0..8 {
        put_file(root, &format!("out/file-{index}.txt"), "x");
    }
    let text = workspace_manifest(root, &[]).expect("hashed").moved_since(&before).expect("changed");
    assert!(
        text.starts_with(
            "the cache key (auto) changed since the last stored run: `out/file-0.txt` added, `out/file-1.txt` added, `out/file-2.txt` added, `out/file-3.txt` added, `out/file-4.txt` added (+3 more);"
        ),
        "{text}"
    );
    assert!(!text.contains("file-5"), "{text}");
}

#[test]
fn past_the_bound_a_manifest_keeps_only_the_key_and_the_count() {
    let dir = tempfile::tempdir().expect("temp dir");
    let root = dir.path();
    put_file(root, "a.txt", "1");
    put_file(root, "b.txt", "2");
    let before = manifest_capped(root, &[], 2).expect("hashed");
    assert!(before.paths.is_some(), "two files fit a bound of two");
    put_file(root, "c.txt", "3");
    let now = manifest_capped(root, &[], 2).expect("hashed");
    assert_eq!((now.files, now.paths.is_none()), (3, true));
    assert_eq!(now.key, workspace_key(root, &[]).expect("hashed"), "the bound changes the manifest, not the key");
    let text = now.moved_since(&before).expect("changed");
    assert!(text.contains("the workspace has 3 files (2 then)") && text.contains("are not named"), "{text}");
}

#[test]
fn a_path_with_a_line_break_stays_on_one_line_in_the_notice() {
    let mut paths = std::collections::BTreeMap::new();
    let before = Manifest { format: MANIFEST_FORMAT, key: "sha256:1".into(), files: 0, paths: Some(paths.clone()) };
    paths.insert("evil\n::error::x".to_owned(), "0123456789abcdef".to_owned());
    let now = Manifest { format: MANIFEST_FORMAT, key: "sha256:2".into(), files: 1, paths: Some(paths) };
    let text = now.moved_since(&before).expect("changed");
    assert!(!text.contains('\n') && text.contains("`evil\\n::error::x` added"), "{text}");
}

#[test]
fn the_manifest_reads_back_and_a_missing_or_corrupt_one_is_no_failure() {
    let dir = tempfile::tempdir().expect("temp dir");
    let cache = VerdictCache::new(dir.path().join("cache"), Mode::ReadWrite);
    assert_eq!(cache.last_manifest().ok(), Some(None), "none yet");
    put_file(dir.path(), "ws/a.txt", "x");
    let manifest = workspace_manifest(&dir.path().join("ws"), &[]).expect("hashed");
    cache.put_manifest(&manifest).expect("written");
    assert_eq!(cache.last_manifest().expect("readable"), Some(manifest));
    std::fs::write(dir.path().join("cache").join(MANIFEST_FILE), "{not json").expect("corrupt");
    let warning = cache.last_manifest().expect_err("unreadable").to_string();
    assert!(warning.contains("workspace-manifest.json is not readable"), "{warning}");
    std::fs::write(dir.path().join("cache").join(MANIFEST_FILE), r#"{"format":9,"key":"k","files":0,"paths":null}"#)
        .expect("write");
    assert!(cache.last_manifest().expect_err("another format").to_string().contains("of another format"));
}

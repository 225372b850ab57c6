//! Tests of [`super::resolve`]: precedence, every problem at once with its source, the same
//! syntax in every front end, secrets kept out of messages.

use std::collections::HashMap;
use std::path::Path;

use super::*;

fn env(vars: &[(&str, &str)]) -> HashMap<String, String> {
    vars.iter().map(|(key, value)| ((*key).to_owned(), (*value).to_owned())).collect()
}

fn action(vars: &[(&str, &str)], request: Request) -> Result<Settings, Vec<Problem>> {
    let vars = env(vars);
    resolve(&request, FrontEnd::Action, &|name| vars.get(name).cloned())
}

fn cli(flags: SettingsArgs) -> Result<Settings, Vec<Problem>> {
    resolve(&Request { flags, ..Request::default() }, FrontEnd::Cli, &|_| None)
}

fn rendered(problems: &[Problem]) -> String {
    problems.iter().map(ToString::to_string).collect::<Vec<_>>().join("\n")
}

#[test]
fn inputs_arrive_with_hyphens_or_underscores_and_empty_means_unset() {
    let settings = action(
        &[
            ("INPUT_SERVER-URL", "http://127.0.0.1:1/mcp"),
            ("INPUT_SERVER-COMMAND", ""),
            ("INPUT_FAIL_ON", "should"),
            ("INPUT_LAYERS", ""),
            ("INPUT_COMMENT", ""),
            ("INPUT_SERVER-HEADERS", "Authorization: Bearer abc\n\nX-Key: k2\n"),
            ("GITHUB_API_URL", "http://127.0.0.1:2"),
            ("GITHUB_REPOSITORY", "octo/repo"),
        ],
        Request::default(),
    )
    .expect("valid");
    let action = settings.action.as_ref().expect("action settings");
    assert_eq!(settings.server, Server::Url("http://127.0.0.1:1/mcp".into()));
    assert_eq!(settings.fail_on, FailOn::Should);
    assert_eq!(settings.layers, LayersInput::Auto);
    assert!(action.comment);
    assert_eq!(settings.headers.len(), 2);
    assert_eq!(settings.secrets(), ["Bearer abc", "k2"]);
    assert_eq!(action.github.api_url, "http://127.0.0.1:2");
    assert_eq!(settings.junit_path.as_ref().map(|(_, label)| label.as_str()), Some(DEFAULT_JUNIT_PATH));
    assert_eq!(action.eval_label, DEFAULT_EVAL_LABEL);
}

#[test]
fn flags_win_over_inputs_and_inputs_over_the_file() {
    let dir = tempfile::tempdir().expect("temp dir");
    let config = dir.path().join("mcp-eval.yaml");
    std::fs::write(&config, "timeout_seconds: 3\nlayers: 0-3\ngate:\n  fail_on: should\nrequire_era: 2026-07-28\n")
        .expect("write");
    let request = Request {
        flags: SettingsArgs {
            server_url: Some("http://127.0.0.1:9/mcp".into()),
            fail_on: Some("never".into()),
            config: Some(config.display().to_string()),
            ..SettingsArgs::default()
        },
        action: ActionFlags { github_api_url: Some("http://127.0.0.1:3".into()), ..ActionFlags::default() },
        demo: false,
    };
    let settings = action(
        &[
            ("INPUT_SERVER-URL", "http://127.0.0.1:1/mcp"),
            ("INPUT_FAIL-ON", "must"),
            ("INPUT_TIMEOUT-SECONDS", "7"),
            ("GITHUB_API_URL", "http://x"),
        ],
        request,
    )
    .expect("valid");
    assert_eq!(settings.server, Server::Url("http://127.0.0.1:9/mcp".into()));
    assert_eq!(settings.fail_on, FailOn::Never, "flag over input and file");
    assert_eq!(settings.timeout, Duration::from_secs(7), "input over file");
    assert_eq!(settings.layers, LayersInput::Explicit(vec![0, 1, 2, 3]), "file over default");
    assert!(settings.require_modern);
    assert_eq!(settings.action.expect("action").github.api_url, "http://127.0.0.1:3");
}

#[test]
fn every_problem_is_reported_naming_the_input() {
    let problems = action(
        &[
            ("INPUT_FAIL-ON", "sometimes"),
            ("INPUT_LAYERS", "9"),
            ("INPUT_TIMEOUT-SECONDS", "-1"),
            ("INPUT_COMMENT", "maybe"),
        ],
        Request::default(),
    )
    .expect_err("invalid");
    let all = rendered(&problems);
    for part in ["no server", "`fail-on`", "`layers`", "`timeout-seconds`", "`comment`", "INPUT_FAIL-ON"] {
        assert!(all.contains(part), "{part} missing in {all}");
    }
    assert_eq!(problems.len(), 5);
}

#[test]
fn the_cli_and_the_action_accept_the_same_layers_syntax() {
    for text in ["0", "0,1", "0-3", "all", "auto", " 1 , 0 "] {
        let flags = SettingsArgs { layers: Some(text.into()), ..SettingsArgs::default() };
        let from_cli =
            resolve(&Request { flags: flags.clone(), demo: true, ..Request::default() }, FrontEnd::Cli, &|_| None)
                .map(|settings| settings.layers);
        let from_action = action(&[("INPUT_LAYERS", text), ("INPUT_SERVER-URL", "http://h/mcp")], Request::default())
            .map(|settings| settings.layers);
        assert_eq!(from_cli.expect("cli accepts"), from_action.expect("action accepts"), "{text}");
    }
    let problems = cli(SettingsArgs {
        layers: Some("7".into()),
        server_url: Some("http://h/mcp".into()),
        ..SettingsArgs::default()
    })
    .expect_err("invalid");
    assert!(rendered(&problems).starts_with("--layers: `7`"), "{}", rendered(&problems));
}

#[test]
fn the_cli_names_its_flags_and_the_file_names_file_line_and_column() {
    let problems =
        cli(SettingsArgs { timeout_seconds: Some("-1".into()), ..SettingsArgs::default() }).expect_err("invalid");
    let all = rendered(&problems);
    assert!(all.contains("--timeout-seconds: `-1`"), "{all}");
    assert!(all.contains("--server-url"), "the no-server hint names the flags: {all}");

    let dir = tempfile::tempdir().expect("temp dir");
    let config = dir.path().join("mcp-eval.yaml");
    std::fs::write(&config, "server:\n  url: http://h/mcp\ntimeout_seconds: fast\ngate:\n  fail_on: sometimes\n")
        .expect("write");
    let problems = cli(SettingsArgs { config: Some(config.display().to_string()), ..SettingsArgs::default() })
        .expect_err("invalid");
    let all = rendered(&problems);
    assert!(all.contains("mcp-eval.yaml:3:18: timeout_seconds: `fast`"), "{all}");
    assert!(all.contains("mcp-eval.yaml:5:12: gate.fail_on: `sometimes`"), "{all}");
    assert_eq!(problems.len(), 2);
}

#[test]
fn a_config_file_with_an_unknown_key_names_the_line() {
    let dir = tempfile::tempdir().expect("temp dir");
    let config = dir.path().join("mcp-eval.yaml");
    std::fs::write(&config, "safe_tools:\n  - name: x\n    argumnets: {}\n").expect("write");
    let problems = cli(SettingsArgs {
        server_url: Some("http://h/mcp".into()),
        config: Some(config.display().to_string()),
        ..SettingsArgs::default()
    })
    .expect_err("invalid");
    let all = rendered(&problems);
    assert!(all.contains("mcp-eval.yaml:3:"), "{all}");
    assert!(all.contains("argumnets"), "{all}");
}

#[test]
fn safe_tools_come_from_the_file_and_later_sections_are_noticed() {
    let dir = tempfile::tempdir().expect("temp dir");
    let config = dir.path().join("c.yaml");
    std::fs::write(
        &config,
        "safe_tools:\n  - name: get_time\n    arguments: {timezone: UTC}\n  - name: ping\nmodels: [gpt-x]\n",
    )
    .expect("write");
    let settings = cli(SettingsArgs {
        server_url: Some("http://h/mcp".into()),
        config: Some(config.display().to_string()),
        ..SettingsArgs::default()
    })
    .expect("valid");
    assert_eq!(settings.safe_tools.len(), 2);
    assert_eq!(settings.safe_tools[0].arguments["timezone"], "UTC");
    assert_eq!(settings.safe_tools[1].arguments, serde_json::json!({}));
    assert!(settings.notices[0].contains("`models`"), "{:?}", settings.notices);
}

#[test]
fn header_secrets_stay_out_of_errors() {
    let problems = action(
        &[("INPUT_SERVER-URL", "http://h/mcp"), ("INPUT_SERVER-HEADERS", "Bad Name: s3cret")],
        Request::default(),
    )
    .expect_err("invalid");
    assert!(!rendered(&problems).contains("s3cret"));
    let problems =
        cli(SettingsArgs { server_url: Some("http://u:pw-s3cret@h:99999/mcp".into()), ..SettingsArgs::default() })
            .expect_err("invalid port");
    assert!(!rendered(&problems).contains("pw-s3cret"), "{}", rendered(&problems));
}

#[test]
fn two_servers_or_headers_for_a_command_are_refused() {
    let problems = cli(SettingsArgs {
        server_url: Some("http://h/mcp".into()),
        server_command: Some("srv".into()),
        ..SettingsArgs::default()
    })
    .expect_err("two servers");
    assert!(rendered(&problems).contains("both --server-url and --server-cmd"), "{}", rendered(&problems));
    let problems = cli(SettingsArgs {
        server_command: Some("srv".into()),
        headers: vec!["Authorization: Bearer x".into()],
        ..SettingsArgs::default()
    })
    .expect_err("headers for stdio");
    assert!(rendered(&problems).contains("--header: headers apply to a server URL only"), "{}", rendered(&problems));
}

#[test]
fn action_paths_are_resolved_against_the_workspace() {
    let settings = action(
        &[("INPUT_SERVER-URL", "http://h/mcp"), ("GITHUB_WORKSPACE", "/ws"), ("INPUT_REPORT-PATH", "out")],
        Request::default(),
    )
    .expect("valid");
    assert_eq!(settings.out_dir, Path::new("/ws/out"));
    assert_eq!(settings.out_dir_label, "out");
    assert_eq!(settings.junit_path.expect("junit").0, Path::new("/ws/mcp-eval-report/junit.xml"));
}

#[test]
fn raw_secrets_include_malformed_header_lines_and_the_token() {
    let vars = env(&[
        ("INPUT_SERVER-HEADERS", "no colon secret-value\nX-Key: k2"),
        ("INPUT_GITHUB-TOKEN", "ghs_token"),
        ("INPUT_SERVER-URL", "http://u:pw@h/mcp?key=q"),
    ]);
    let secrets = raw_secrets(&Request::default(), &|name| vars.get(name).cloned());
    for secret in ["no colon secret-value", "k2", "ghs_token", "pw", "q"] {
        assert!(secrets.contains(&secret.to_owned()), "{secret} missing in {secrets:?}");
    }
}

/// Every kind of input error, rendered as the user sees it (`error:` … `hint:`).
#[test]
fn input_error_messages() {
    let dir = tempfile::tempdir().expect("temp dir");
    let config = dir.path().join("mcp-eval.yaml");
    std::fs::write(&config, "timeout_seconds: fast\ngate:\n  fail_on: sometimes\nlayers: [0, 9]\n").expect("write");
    let problems = cli(SettingsArgs {
        server_url: Some("ftp://u:pw-hidden@h/mcp".into()),
        headers: vec!["Bad Name: s3cret".into()],
        require_era: Some("2025-11-25".into()),
        config: Some(config.display().to_string()),
        ..SettingsArgs::default()
    })
    .expect_err("invalid");
    let text: Vec<String> = problems.into_iter().map(|problem| problem.into_error().to_string()).collect();
    let text = text.join("\n").replace(&dir.path().display().to_string(), "[dir]");
    insta::assert_snapshot!(text);
}

#[test]
fn an_empty_layers_list_in_the_file_is_an_error_and_a_golden_set_is_noticed() {
    let dir = tempfile::tempdir().expect("temp dir");
    let config = dir.path().join("c.yaml");
    std::fs::write(&config, "server:\n  url: http://h/mcp\nlayers: []\n").expect("write");
    let problems =
        cli(SettingsArgs { config: Some(config.display().to_string()), ..SettingsArgs::default() }).expect_err("empty");
    assert!(rendered(&problems).contains("layers: no layer given"), "{}", rendered(&problems));
    let settings = cli(SettingsArgs {
        server_url: Some("http://h/mcp".into()),
        golden_set: Some("golden/tasks.yaml".into()),
        ..SettingsArgs::default()
    })
    .expect("valid");
    assert!(settings.notices.iter().any(|notice| notice.contains("golden set")), "{:?}", settings.notices);
}

#[test]
fn a_broken_config_file_is_not_also_reported_as_no_server() {
    let dir = tempfile::tempdir().expect("temp dir");
    let config = dir.path().join("c.yaml");
    std::fs::write(&config, "server: http://h/mcp\n").expect("write");
    let problems =
        cli(SettingsArgs { config: Some(config.display().to_string()), ..SettingsArgs::default() }).expect_err("shape");
    assert_eq!(problems.len(), 1, "{}", rendered(&problems));
    assert!(rendered(&problems).contains("c.yaml:1:1: server: expected a mapping, found a string"));
}

fn cli_with_env(flags: SettingsArgs, vars: &[(&str, &str)]) -> Result<Settings, Vec<Problem>> {
    let vars = env(vars);
    resolve(&Request { flags, ..Request::default() }, FrontEnd::Cli, &|name| vars.get(name).cloned())
}

#[test]
fn server_env_sets_passes_through_and_follows_the_precedence() {
    let dir = tempfile::tempdir().expect("temp dir");
    let config = dir.path().join("c.yaml");
    std::fs::write(&config, "server:\n  command: srv\n  env: [FROM_FILE=f1le-value, KEEP]\n").expect("write");
    let config = config.display().to_string();
    let ours = [("KEEP", "kept-value"), ("INPUT_SERVER-ENV", "FROM_INPUT=input-value\n\n  KEEP  \nUNSET_HERE\n")];

    // The file alone (the CLI reads no input, but passes `KEEP` through from its environment).
    let settings =
        cli_with_env(SettingsArgs { config: Some(config.clone()), ..SettingsArgs::default() }, &ours).expect("valid");
    assert_eq!(
        settings.server_env,
        [("FROM_FILE".to_owned(), "f1le-value".to_owned()), ("KEEP".to_owned(), "kept-value".to_owned())]
    );

    // The input wins over the file; an unset pass-through is a notice, not an error.
    let request = Request {
        flags: SettingsArgs { config: Some(config.clone()), ..SettingsArgs::default() },
        ..Request::default()
    };
    let settings = action(&ours, request).expect("valid");
    assert_eq!(
        settings.server_env,
        [("FROM_INPUT".to_owned(), "input-value".to_owned()), ("KEEP".to_owned(), "kept-value".to_owned())]
    );
    assert!(
        settings.notices.iter().any(|notice| notice
            == "input `server-env` (INPUT_SERVER-ENV): `UNSET_HERE` is not set in mcp-eval's environment, so the server does not get it"),
        "{:?}",
        settings.notices
    );

    // Flags win over the input (and the file).
    let request = Request {
        flags: SettingsArgs {
            config: Some(config),
            server_env: vec!["FROM_FLAG=flag-value".into(), "EMPTY=".into()],
            ..SettingsArgs::default()
        },
        ..Request::default()
    };
    let settings = action(&ours, request).expect("valid");
    assert_eq!(
        settings.server_env,
        [("FROM_FLAG".to_owned(), "flag-value".to_owned()), ("EMPTY".to_owned(), String::new())]
    );
}

#[test]
fn server_env_values_are_secrets_and_masked_before_validation() {
    let settings = cli_with_env(
        SettingsArgs {
            server_command: Some("srv".into()),
            server_env: vec!["API_KEY=canary-set-1".into(), "PASSED".into()],
            ..SettingsArgs::default()
        },
        &[("PASSED", "canary-passed-2")],
    )
    .expect("valid");
    assert_eq!(settings.secrets(), ["canary-set-1", "canary-passed-2"]);

    let vars = env(&[
        ("INPUT_SERVER-ENV", "API_KEY=canary-set-1\nPASSED\nBAD-NAME=canary-bad-3\nnot a name canary-4"),
        ("PASSED", "canary-passed-2"),
    ]);
    let secrets = raw_secrets(&Request::default(), &|name| vars.get(name).cloned());
    for secret in ["canary-set-1", "canary-passed-2", "canary-bad-3", "not a name canary-4"] {
        assert!(secrets.contains(&secret.to_owned()), "{secret} missing in {secrets:?}");
    }
    assert!(!secrets.contains(&"PASSED".to_owned()), "a name is not a secret: {secrets:?}");
}

#[test]
fn bad_server_env_entries_are_all_reported_with_their_source_and_no_value() {
    let dir = tempfile::tempdir().expect("temp dir");
    let config = dir.path().join("c.yaml");
    std::fs::write(&config, "server:\n  command: srv\n  env:\n    - OK=1\n    - 9LIVES=s3cret-file\n").expect("write");
    let problems = cli(SettingsArgs { config: Some(config.display().to_string()), ..SettingsArgs::default() })
        .expect_err("invalid");
    let all = rendered(&problems);
    assert!(all.contains("c.yaml:5:7: server.env[1]: `9LIVES=***`: `9LIVES` is not a variable name"), "{all}");
    assert!(all.contains("hint: write NAME=VALUE"), "{all}");

    let problems = action(
        &[
            ("INPUT_SERVER-COMMAND", "srv"),
            ("INPUT_SERVER-ENV", "MY-VAR=s3cret-in\n=s3cret-in\nmy token s3cret-in\nGOOD=x"),
            ("INPUT_TIMEOUT-SECONDS", "-1"),
        ],
        Request::default(),
    )
    .expect_err("invalid");
    let all = rendered(&problems);
    assert_eq!(problems.len(), 4, "three entries and the timeout, at once: {all}");
    assert!(all.contains("input `server-env` (INPUT_SERVER-ENV): `MY-VAR=***`"), "{all}");
    assert!(all.contains("`=***`: no variable name"), "{all}");
    assert!(all.contains("`***`: not a variable name"), "{all}");
    assert!(!all.contains("s3cret"), "{all}");
}

#[test]
fn server_env_for_an_http_server_is_refused_like_headers_for_a_command() {
    let problems = cli(SettingsArgs {
        server_url: Some("http://h/mcp".into()),
        server_env: vec!["FOO=bar".into()],
        ..SettingsArgs::default()
    })
    .expect_err("env for http");
    assert!(
        rendered(&problems).contains("--server-env: environment variables apply to a stdio server (a command) only"),
        "{}",
        rendered(&problems)
    );
    let problems = resolve(
        &Request {
            flags: SettingsArgs { server_env: vec!["KEEP".into()], ..SettingsArgs::default() },
            demo: true,
            ..Request::default()
        },
        FrontEnd::Cli,
        &|_| None,
    )
    .expect_err("env for the demo");
    assert!(rendered(&problems).contains("apply to a stdio server"), "{}", rendered(&problems));
    let problems = action(&[("INPUT_SERVER-URL", "http://h/mcp"), ("INPUT_SERVER-ENV", "FOO=bar")], Request::default())
        .expect_err("env for http");
    assert!(rendered(&problems).contains("input `server-env`"), "{}", rendered(&problems));
}

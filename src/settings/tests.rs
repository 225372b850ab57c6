//! Tests of [`super::resolve`]: precedence, every problem at once with its source, the same
//! syntax in every front end, secrets kept out of messages.

use std::collections::HashMap;
use std::path::Path;

use super::layer1::{Api, CassetteSource, ModelRef, TraceResults};
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
        merging: false,
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
fn safe_tools_and_models_come_from_the_file_without_notices() {
    let dir = tempfile::tempdir().expect("temp dir");
    let config = dir.path().join("c.yaml");
    std::fs::write(
        &config,
        "safe_tools:\n  - name: get_time\n    arguments: {timezone: UTC}\n  - name: ping\nmodels: [openai:gpt-x]\n",
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
    assert_eq!(settings.layer1.models, [ModelRef { provider: "openai".into(), model: "gpt-x".into() }]);
    assert!(settings.notices.is_empty(), "layer 1 reads `models`: {:?}", settings.notices);
}

#[test]
fn a_waiver_may_name_the_transport_whose_runs_it_waives() {
    let dir = tempfile::tempdir().expect("temp dir");
    let config = dir.path().join("c.yaml");
    let args = || SettingsArgs {
        server_url: Some("http://h/mcp".into()),
        config: Some(config.display().to_string()),
        ..SettingsArgs::default()
    };
    std::fs::write(&config, "waivers:\n  - {rule: M-10, transport: STDIO, reason: the SDK's error}\n").expect("write");
    let settings = cli(args()).expect("valid");
    assert_eq!(settings.waivers[0].transport.as_deref(), Some("stdio"));
    std::fs::write(&config, "waivers:\n  - {rule: M-10, transport: sse, reason: r}\n").expect("write");
    let all = rendered(&cli(args()).expect_err("invalid"));
    assert!(all.contains("waivers[0].transport") && all.contains("`sse` is not a transport"), "{all}");
    assert!(all.contains("`transport: http` or `transport: stdio`"), "{all}");
}

#[test]
fn waivers_come_from_the_file_with_their_line_and_expiry() {
    let dir = tempfile::tempdir().expect("temp dir");
    let config = dir.path().join("c.yaml");
    std::fs::write(
        &config,
        "waivers:\n  - rule: m-10\n    probe: X-5\n    reason: the SDK's error, reported upstream\n    expires: 2027-03-31\n  - {rule: T-5, element: get_time, reason: known}\n",
    )
    .expect("write");
    let settings = cli(SettingsArgs {
        server_url: Some("http://h/mcp".into()),
        config: Some(config.display().to_string()),
        ..SettingsArgs::default()
    })
    .expect("valid");
    type Read<'a> = (&'a str, Option<&'a str>, Option<&'a str>, Option<String>, &'a str);
    let found: Vec<Read<'_>> = settings
        .waivers
        .iter()
        .map(|waiver| {
            (
                waiver.rule.as_str(),
                waiver.element.as_deref(),
                waiver.probe.as_deref(),
                waiver.expires.map(|day| day.to_string()),
                waiver.source.rsplit(':').next().unwrap_or_default(),
            )
        })
        .collect();
    assert_eq!(
        found,
        [("M-10", None, Some("X-5"), Some("2027-03-31".into()), "2"), ("T-5", Some("get_time"), None, None, "6"),]
    );
}

#[test]
fn a_bad_waiver_names_its_file_line_field_and_fix() {
    let dir = tempfile::tempdir().expect("temp dir");
    let config = dir.path().join("c.yaml");
    std::fs::write(
        &config,
        "waivers:\n  - rule: M-100\n    reason: r\n  - rule: M-10\n  - rule: M-10\n    reason: r\n    expires: 31/03/2027\n  - reason: r\n  - rule: SEC-7\n    element: connect\n    reason: r\n",
    )
    .expect("write");
    let error = cli(SettingsArgs {
        server_url: Some("http://h/mcp".into()),
        config: Some(config.display().to_string()),
        ..SettingsArgs::default()
    })
    .expect_err("invalid");
    assert!(
        error.iter().all(|problem| problem.clone().into_error().kind == crate::error::Kind::InvalidInput),
        "exit status 2"
    );
    let all = rendered(&error);
    let file = config.display().to_string();
    for want in [
        format!("{file}:2:11: waivers[0].rule: `M-100` is not a requirement id"),
        "did you mean `M-10`?".to_owned(),
        format!("{file}:4:5: waivers[1].reason: is missing"),
        "say why this finding is accepted here".to_owned(),
        format!("{file}:7:14: waivers[2].expires: `31/03/2027` is not a date"),
        "write the last day the waiver holds as YYYY-MM-DD".to_owned(),
        format!("{file}:8:5: waivers[3].rule: is missing"),
        format!("{file}:10:14: waivers[4].element: `connect` is not an element as the report names it"),
    ] {
        assert!(all.contains(&want), "{want}\n---\n{all}");
    }
}

#[test]
fn scan_suppressions_come_from_the_file_and_bad_ones_name_their_field() {
    let dir = tempfile::tempdir().expect("temp dir");
    let config = dir.path().join("c.yaml");
    std::fs::write(
        &config,
        "suppress:\n  - rule: sec-7\n    element: tools[connect]\n    path: .inputSchema.properties.password\n    reason: the login is the tool's purpose\n",
    )
    .expect("write");
    let flags = || SettingsArgs {
        server_url: Some("http://h/mcp".into()),
        config: Some(config.display().to_string()),
        ..SettingsArgs::default()
    };
    let settings = cli(flags()).expect("valid");
    assert_eq!(
        settings.waivers,
        [crate::conformance::waiver::Waiver {
            rule: "SEC-7".into(),
            element: Some("tools[connect]".into()),
            probe: None,
            path: Some(".inputSchema.properties.password".into()),
            reason: "the login is the tool's purpose".into(),
            expires: None,
            transport: None,
            source: format!("{}:2", config.display()),
            key: "suppress",
        }]
    );
    std::fs::write(
        &config,
        "suppress:\n  - rule: SEC-9\n    element: tools[a]\n    reason: r\n  - rule: SEC-1\n    element: connect\n    reason: r\n  - rule: SEC-2\n    element: tools[b]\n    reason: ' '\n",
    )
    .expect("write");
    let all = rendered(&cli(flags()).expect_err("invalid"));
    for want in [
        "suppress[0].rule: `SEC-9` is not a rule of the static scan",
        "suppress[1].element",
        "suppress[2].reason: is empty",
    ] {
        assert!(all.contains(want), "{want}: {all}");
    }
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
fn in_the_container_handler_every_path_input_outside_the_workspace_is_refused() {
    // actions/runner's container handler shares only /github/workspace: a report written to
    // /tmp would be deleted with the container while the run exits 0.
    let inputs = [
        ("INPUT_REPORT-PATH", "/tmp/report"),
        ("INPUT_JUNIT-PATH", "/tmp/junit.xml"),
        ("INPUT_CACHE-DIR", "../cache"),
        ("INPUT_GOLDEN-SET", "/elsewhere/tasks.yaml"),
        ("INPUT_BASELINE", "/tmp/report.json"),
        ("INPUT_JUDGE-CALIBRATION", "/tmp/calibration.json"),
        ("INPUT_CONFIG", "/tmp/mcp-eval.yaml"),
        ("INPUT_MERGE-REPORTS", "/home/runner/work/_temp/reports/*"),
    ];
    for (input, path) in inputs {
        let problems = action(
            &[("INPUT_SERVER-URL", "http://h/mcp"), ("GITHUB_WORKSPACE", "/github/workspace"), (input, path)],
            Request::default(),
        )
        .expect_err(input);
        let text = rendered(&problems);
        assert_eq!(problems.len(), 1, "{text}");
        assert!(text.contains(input) && text.contains("shares only the workspace"), "{text}");
    }
}

#[test]
fn on_the_runner_itself_a_path_outside_the_workspace_is_used() {
    let settings = action(
        &[("INPUT_SERVER-URL", "http://h/mcp"), ("GITHUB_WORKSPACE", "/ws"), ("INPUT_REPORT-PATH", "/tmp/report")],
        Request::default(),
    )
    .expect("valid");
    assert_eq!(settings.out_dir, Path::new("/tmp/report"));
    assert_eq!(settings.out_dir_label, "/tmp/report");
}

#[test]
fn action_outputs_name_absolute_paths_inside_the_workspace_relative_to_it() {
    let settings = action(
        &[
            ("INPUT_SERVER-URL", "http://h/mcp"),
            ("GITHUB_WORKSPACE", "/github/workspace"),
            ("INPUT_REPORT-PATH", "/github/workspace/out"),
            ("INPUT_JUNIT-PATH", "/github/workspace/out/../junit.xml"),
        ],
        Request::default(),
    )
    .expect("valid");
    assert_eq!(settings.out_dir, Path::new("/github/workspace/out"));
    assert_eq!(settings.out_dir_label, "out");
    assert_eq!(settings.junit_path.expect("junit").1, "junit.xml");
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
        models: vec!["openi:gpt-4.1-mini".into(), "gpt-4.1-mini".into()],
        runs: Some("0".into()),
        record: true,
        ..SettingsArgs::default()
    })
    .expect_err("invalid");
    let text: Vec<String> = problems.into_iter().map(|problem| problem.into_error().to_string()).collect();
    let text = text.join("\n").replace(&dir.path().display().to_string(), "[dir]");
    insta::assert_snapshot!(text);
}

#[test]
fn an_empty_layers_list_in_the_file_is_an_error_and_a_golden_set_is_kept_without_a_notice() {
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
    assert_eq!(
        settings.golden_set.as_ref().map(crate::settings::InputFile::path),
        Some(Path::new("golden/tasks.yaml"))
    );
    assert!(settings.notices.is_empty(), "layer 1 reads the golden set: {:?}", settings.notices);
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

/// The file of a user's first trial: four independent mistakes, each of which once hid the
/// others until the next run.
const FOUR_MISTAKES: &str = "timeout_secnds: 5\ngate:\n  fail_on: sometimes\nwaivers:\n  - rule: M-10\n    reason: upstream\n  - rule: M-100\n    reason: a typo\n  - rule: M-10\n    reason: 2027\n";

#[test]
fn every_mistake_of_a_config_file_is_reported_in_one_pass() {
    let dir = tempfile::tempdir().expect("temp dir");
    let config = write_config(&dir, FOUR_MISTAKES);
    let problems =
        cli(SettingsArgs { server_url: Some("http://h/mcp".into()), config: Some(config), ..SettingsArgs::default() })
            .expect_err("invalid");
    let all = rendered(&problems).replace(&dir.path().display().to_string(), "[dir]");
    for part in [
        "[dir]/mcp-eval.yaml:1:1: timeout_secnds: unknown key\n  hint: did you mean `timeout_seconds`?",
        "[dir]/mcp-eval.yaml:3:12: gate.fail_on: `sometimes` is not a policy\n  hint: use must, should or never",
        "[dir]/mcp-eval.yaml:7:11: waivers[1].rule: `M-100` is not a requirement id",
        "[dir]/mcp-eval.yaml:10:5: waivers[2].reason: expected a string, found a number\n  hint: quote it: `reason: \"2027\"`",
    ] {
        assert!(all.contains(part), "{part:?} missing in\n{all}");
    }
    assert_eq!(problems.len(), 4, "one problem per mistake, none twice: {all}");
}

fn write_config(dir: &tempfile::TempDir, text: &str) -> String {
    let config = dir.path().join("mcp-eval.yaml");
    std::fs::write(&config, text).expect("write");
    config.display().to_string()
}

fn model(provider: &str, name: &str) -> ModelRef {
    ModelRef { provider: provider.into(), model: name.into() }
}

#[test]
fn layer1_flags_are_parsed() {
    let settings = cli(SettingsArgs {
        server_url: Some("http://h/mcp".into()),
        models: vec!["openai:gpt-4.1-mini".into(), " anthropic : claude-sonnet-4-5 ".into(), "replay:a:b".into()],
        runs: Some("5".into()),
        concurrency: Some("8".into()),
        max_model_calls: Some("50".into()),
        cassettes: Some("tapes".into()),
        record: true,
        trace_results: Some("FULL".into()),
        ..SettingsArgs::default()
    })
    .expect("valid");
    let layer1 = &settings.layer1;
    assert_eq!(
        layer1.models,
        [model("openai", "gpt-4.1-mini"), model("anthropic", "claude-sonnet-4-5"), model("replay", "a:b")],
        "split at the first `:`"
    );
    assert_eq!(layer1.runs, Some(5));
    assert_eq!(layer1.concurrency, 8);
    assert_eq!(layer1.max_model_calls, 50);
    assert_eq!(layer1.cassettes, Some(CassetteSource::Dir(PathBuf::from("tapes"))));
    assert!(layer1.record);
    assert_eq!(layer1.trace_results, TraceResults::Full);
}

#[test]
fn layer1_defaults_and_the_built_in_providers() {
    let settings = cli(SettingsArgs {
        server_url: Some("http://h/mcp".into()),
        models: vec!["openai:gpt-4.1-mini".into()],
        ..SettingsArgs::default()
    })
    .expect("a model without a key is not an error");
    let layer1 = &settings.layer1;
    assert_eq!((layer1.runs, layer1.concurrency, layer1.max_model_calls), (None, 4, 2000));
    assert_eq!((layer1.cassettes.as_ref(), layer1.record), (None, false));
    assert_eq!(layer1.trace_results, TraceResults::Truncated);
    let built_ins: Vec<(&str, Api, &str, Option<&str>)> = layer1
        .providers
        .iter()
        .map(|provider| {
            (provider.id.as_str(), provider.api, provider.base_url.as_str(), provider.api_key_env.as_deref())
        })
        .collect();
    assert_eq!(
        built_ins,
        [
            ("openai", Api::OpenAi, "https://api.openai.com/v1", Some("OPENAI_API_KEY")),
            ("anthropic", Api::Anthropic, "https://api.anthropic.com", Some("ANTHROPIC_API_KEY")),
            ("replay", Api::Replay, "", None),
        ]
    );
    assert!(layer1.providers.iter().all(|provider| provider.api_key.is_none()));
    assert!(settings.notices.is_empty(), "{:?}", settings.notices);
}

#[test]
fn layer1_inputs_are_parsed_and_win_over_the_file_and_flags_over_inputs() {
    let dir = tempfile::tempdir().expect("temp dir");
    let config = write_config(
        &dir,
        "models: [anthropic:from-file]\nruns: 2\nconcurrency: 2\nmax_model_calls: 20\ntrace_results: full\n",
    );
    let inputs = [
        ("INPUT_SERVER-URL", "http://h/mcp"),
        ("INPUT_CONFIG", config.as_str()),
        (
            "INPUT_MODELS",
            "# the models of this job\nopenai:gpt-4.1-mini\n\n  anthropic:claude-sonnet-4-5  # the second\n",
        ),
        ("INPUT_RUNS", "3"),
        ("INPUT_CONCURRENCY", "16"),
        ("INPUT_MAX-MODEL-CALLS", "300"),
        ("INPUT_TRACE_RESULTS", "none"),
    ];
    let settings = action(&inputs, Request::default()).expect("valid");
    let layer1 = &settings.layer1;
    assert_eq!(layer1.models, [model("openai", "gpt-4.1-mini"), model("anthropic", "claude-sonnet-4-5")]);
    assert_eq!((layer1.runs, layer1.concurrency, layer1.max_model_calls), (Some(3), 16, 300));
    assert_eq!(layer1.trace_results, TraceResults::None);

    let request = Request {
        flags: SettingsArgs {
            models: vec!["replay:demo".into()],
            runs: Some("1".into()),
            trace_results: Some("truncated".into()),
            ..SettingsArgs::default()
        },
        ..Request::default()
    };
    let settings = action(&inputs, request).expect("valid");
    assert_eq!(settings.layer1.models, [model("replay", "demo")]);
    assert_eq!(settings.layer1.runs, Some(1));
    assert_eq!(settings.layer1.trace_results, TraceResults::Truncated);
}

#[test]
fn layer1_config_keys_are_parsed_with_providers_after_the_built_ins() {
    let dir = tempfile::tempdir().expect("temp dir");
    let config = write_config(
        &dir,
        "server:\n  url: http://h/mcp\nmodels:\n  - myvllm:qwen3-8b\n  - local-claude:claude-x\nproviders:\n  - id: myvllm\n    api: openai\n    base_url: http://127.0.0.1:8000/v1\n  - id: local-claude\n    api: Anthropic\n    base_url: https://proxy.example/anthropic\n    api_key_env: PROXY_KEY\nruns: 7\nconcurrency: 1\nmax_model_calls: 9\ntrace_results: none\n",
    );
    let settings =
        cli_with_env(SettingsArgs { config: Some(config), ..SettingsArgs::default() }, &[("PROXY_KEY", "k")])
            .expect("valid");
    let layer1 = &settings.layer1;
    assert_eq!(layer1.models, [model("myvllm", "qwen3-8b"), model("local-claude", "claude-x")]);
    let ids: Vec<&str> = layer1.providers.iter().map(|provider| provider.id.as_str()).collect();
    assert_eq!(ids, ["openai", "anthropic", "replay", "myvllm", "local-claude"]);
    let myvllm = layer1.provider(&layer1.models[0]).expect("myvllm");
    assert_eq!((myvllm.api, myvllm.base_url.as_str()), (Api::OpenAi, "http://127.0.0.1:8000/v1"));
    assert_eq!((myvllm.api_key_env.as_ref(), myvllm.api_key.as_ref()), (None, None), "no key needed");
    let proxy = layer1.provider(&layer1.models[1]).expect("local-claude");
    assert_eq!(proxy.api, Api::Anthropic);
    assert_eq!((proxy.api_key_env.as_deref(), proxy.api_key.as_deref()), (Some("PROXY_KEY"), Some("k")));
    assert_eq!((layer1.runs, layer1.concurrency, layer1.max_model_calls), (Some(7), 1, 9));
    assert_eq!(layer1.trace_results, TraceResults::None);
}

#[test]
fn bad_layer1_flags_name_the_flag_and_the_fix_all_at_once() {
    let problems = cli(SettingsArgs {
        server_url: Some("http://h/mcp".into()),
        models: vec!["gpt-4.1-mini".into(), ":gpt".into(), "openai:".into(), "openi:gpt-4.1".into()],
        runs: Some("0".into()),
        concurrency: Some("65".into()),
        max_model_calls: Some("0".into()),
        record: true,
        trace_results: Some("some".into()),
        ..SettingsArgs::default()
    })
    .expect_err("invalid");
    let all = rendered(&problems);
    for part in [
        "--model: `gpt-4.1-mini` is not PROVIDER:MODEL\n  hint: write it as openai:gpt-4.1-mini",
        "--model: `:gpt` is not PROVIDER:MODEL",
        "--model: `openai:` is not PROVIDER:MODEL",
        "--model: `openi` in `openi:gpt-4.1` is not a provider\n  hint: did you mean `openai:gpt-4.1`? the providers are openai, anthropic, replay",
        "--runs: `0` trials is out of range\n  hint: give a whole number from 1 to 100",
        "--concurrency: `65` trials in flight is out of range\n  hint: give a whole number from 1 to 64",
        "--max-model-calls: `0` model calls is out of range\n  hint: give a whole number of at least 1",
        "--record: needs --cassettes DIR\n  hint: give --cassettes DIR",
        "--trace-results: `some` is not a trace setting\n  hint: use full",
    ] {
        assert!(all.contains(part), "{part:?} missing in\n{all}");
    }
    assert_eq!(problems.len(), 9, "{all}");
}

#[test]
fn bad_layer1_inputs_and_file_values_name_their_source() {
    let dir = tempfile::tempdir().expect("temp dir");
    let config = write_config(&dir, "trace_results: all\nconcurrency: many\nmodels:\n  - gpt-4o\n");
    let problems = action(
        &[
            ("INPUT_SERVER-URL", "http://h/mcp"),
            ("INPUT_CONFIG", config.as_str()),
            ("INPUT_RUNS", "101"),
            ("INPUT_MAX-MODEL-CALLS", "-5"),
        ],
        Request::default(),
    )
    .expect_err("invalid");
    let all = rendered(&problems).replace(&dir.path().display().to_string(), "[dir]");
    for part in [
        "input `runs` (INPUT_RUNS): `101` trials is out of range",
        "input `max-model-calls` (INPUT_MAX-MODEL-CALLS): `-5`",
        "[dir]/mcp-eval.yaml:1:16: trace_results: `all` is not a trace setting",
        "[dir]/mcp-eval.yaml:2:14: concurrency: `many`",
        "[dir]/mcp-eval.yaml:4:5: models[0]: `gpt-4o` is not PROVIDER:MODEL",
    ] {
        assert!(all.contains(part), "{part:?} missing in\n{all}");
    }
    assert_eq!(problems.len(), 5, "{all}");
}

#[test]
fn a_config_provider_with_an_unknown_api_a_bad_url_or_a_taken_id_is_a_problem() {
    let dir = tempfile::tempdir().expect("temp dir");
    let config = write_config(
        &dir,
        "server:\n  url: http://h/mcp\nproviders:\n  - id: local\n    api: opneai\n    base_url: ftp://u:pw-s3cret@h/v1\n  - id: openai\n    api: openai\n    base_url: http://h/v1\n  - id: dup\n    api: openai\n    base_url: http://h/v1\n  - id: dup\n    api: anthropic\n    base_url: http://h/v1\n    api_key_env: sk-s3cret\n  - api: openai\n",
    );
    let problems = cli(SettingsArgs { config: Some(config), ..SettingsArgs::default() }).expect_err("invalid");
    let all = rendered(&problems).replace(&dir.path().display().to_string(), "[dir]");
    for part in [
        "[dir]/mcp-eval.yaml:5:10: providers[0].api: `opneai` is not an API\n  hint: did you mean `openai`? use openai",
        "[dir]/mcp-eval.yaml:6:15: providers[0].base_url: `ftp://u:***@h/v1` is not a usable API URL (scheme `ftp`",
        "[dir]/mcp-eval.yaml:7:9: providers[1].id: `openai` is a built-in provider\n  hint: choose another id, e.g. `openai-local`",
        "[dir]/mcp-eval.yaml:13:9: providers[3].id: `dup` is already the id of providers[2].id",
        "[dir]/mcp-eval.yaml:16:18: providers[3].api_key_env: is not a variable name (not shown: it may be the key itself)\n  hint: give the name of the variable that holds the key",
        "providers[4]: has no `id`",
        "providers[4]: has no `base_url`",
    ] {
        assert!(all.contains(part), "{part:?} missing in\n{all}");
    }
    assert_eq!(problems.len(), 7, "{all}");
    assert!(!all.contains("s3cret"), "neither the URL's password nor a key given as a variable name: {all}");
}

#[test]
fn a_model_with_an_unknown_provider_gets_did_you_mean_and_the_known_ids() {
    let dir = tempfile::tempdir().expect("temp dir");
    let config =
        write_config(&dir, "providers:\n  - id: myvllm\n    api: openai\n    base_url: http://127.0.0.1:8000/v1\n");
    let problems = cli(SettingsArgs {
        server_url: Some("http://h/mcp".into()),
        config: Some(config),
        models: vec!["myvlm:qwen3-8b".into(), "OpenAI:gpt-4o".into(), "mistral:large".into()],
        ..SettingsArgs::default()
    })
    .expect_err("unknown providers");
    let all = rendered(&problems);
    assert!(all.contains("--model: `myvlm` in `myvlm:qwen3-8b` is not a provider\n  hint: did you mean `myvllm:qwen3-8b`? the providers are openai, anthropic, replay, myvllm; define more in the config file's `providers:`"), "{all}");
    assert!(all.contains("did you mean `openai:gpt-4o`?"), "case is a likely typo: {all}");
    assert!(all.contains("`mistral` in `mistral:large` is not a provider\n  hint: the providers are openai"), "{all}");
    assert_eq!(problems.len(), 3, "{all}");
}

#[test]
fn a_duplicate_model_is_dropped_with_a_notice() {
    let settings = cli(SettingsArgs {
        server_url: Some("http://h/mcp".into()),
        models: vec!["openai:gpt-4o".into(), "anthropic:claude".into(), "openai: gpt-4o".into()],
        ..SettingsArgs::default()
    })
    .expect("a duplicate is not an error");
    assert_eq!(settings.layer1.models, [model("openai", "gpt-4o"), model("anthropic", "claude")]);
    assert_eq!(settings.notices, ["--model: `openai:gpt-4o` is given twice; it runs once"]);
}

#[test]
fn api_keys_are_secrets_and_never_in_debug_output_or_problems() {
    let dir = tempfile::tempdir().expect("temp dir");
    let config = write_config(
        &dir,
        "providers:\n  - id: proxy\n    api: openai\n    base_url: http://127.0.0.1:9/v1\n    api_key_env: PROXY_KEY\n",
    );
    let vars = [
        ("INPUT_SERVER-URL", "http://h/mcp"),
        ("INPUT_CONFIG", config.as_str()),
        ("OPENAI_API_KEY", "canary-openai-env-1"),
        ("ANTHROPIC_API_KEY", "canary-anthropic-env-2"),
        ("INPUT_ANTHROPIC-API-KEY", "canary-anthropic-input-3"),
        ("PROXY_KEY", "canary-proxy-4"),
        ("INPUT_MODELS", "openai:gpt-4o\nanthropic:claude\nproxy:m"),
    ];
    let settings = action(&vars, Request::default()).expect("valid");
    let key = |id: &str| {
        settings
            .layer1
            .providers
            .iter()
            .find(|provider| provider.id == id)
            .and_then(|provider| provider.api_key.clone())
    };
    assert_eq!(key("openai").as_deref(), Some("canary-openai-env-1"));
    assert_eq!(key("anthropic").as_deref(), Some("canary-anthropic-input-3"), "the input wins over the variable");
    assert_eq!(key("proxy").as_deref(), Some("canary-proxy-4"));
    let secrets = settings.secrets();
    let debug = format!("{settings:?} {settings:#?}");
    for canary in ["canary-openai-env-1", "canary-anthropic-input-3", "canary-proxy-4"] {
        assert!(secrets.contains(&canary.to_owned()), "{canary} missing in {secrets:?}");
        assert!(!debug.contains(canary), "{canary} in the Debug output");
    }
    assert!(!debug.contains("canary-"), "{debug}");

    let raw = raw_secrets(&Request::default(), &|name| env(&vars).get(name).cloned());
    for canary in ["canary-openai-env-1", "canary-anthropic-env-2", "canary-anthropic-input-3"] {
        assert!(raw.contains(&canary.to_owned()), "{canary} is masked before validation: {raw:?}");
    }

    let mut bad = vars.to_vec();
    bad.extend([("INPUT_RUNS", "0"), ("INPUT_TRACE-RESULTS", "lots"), ("INPUT_MODELS", "openai:gpt-4o\nnope")]);
    let problems = action(&bad, Request::default()).expect_err("invalid");
    let text = format!("{} {problems:?}", rendered(&problems));
    assert_eq!(problems.len(), 3, "{text}");
    assert!(!text.contains("canary-"), "{text}");
}

#[test]
fn an_unset_or_empty_key_is_none_without_a_problem() {
    let settings = action(
        &[
            ("INPUT_SERVER-URL", "http://h/mcp"),
            ("INPUT_OPENAI-API-KEY", ""),
            ("OPENAI_API_KEY", "  "),
            ("INPUT_MODELS", "openai:gpt-4o\nanthropic:claude"),
        ],
        Request::default(),
    )
    .expect("no key is reported by the runner, not here");
    assert!(settings.layer1.providers.iter().all(|provider| provider.api_key.is_none()));
    assert_eq!(settings.layer1.models.len(), 2);
    assert!(settings.secrets().is_empty(), "{:?}", settings.secrets());
    assert!(settings.notices.is_empty(), "{:?}", settings.notices);
}

#[test]
fn built_in_base_urls_come_from_the_environment_and_are_checked_when_used() {
    let vars = [("OPENAI_BASE_URL", "http://127.0.0.1:5/v1"), ("ANTHROPIC_BASE_URL", "not a url")];
    let flags = |models: &[&str]| SettingsArgs {
        server_url: Some("http://h/mcp".into()),
        models: models.iter().map(|model| (*model).to_owned()).collect(),
        ..SettingsArgs::default()
    };
    let settings = cli_with_env(flags(&["openai:gpt-4o"]), &vars).expect("anthropic is not used");
    assert_eq!(settings.layer1.providers[0].base_url, "http://127.0.0.1:5/v1");
    let problems = cli_with_env(flags(&["anthropic:claude"]), &vars).expect_err("anthropic is used");
    let all = rendered(&problems);
    assert!(all.starts_with("ANTHROPIC_BASE_URL: `not a url` is not a usable API URL"), "{all}");
    assert!(all.contains("hint: set ANTHROPIC_BASE_URL to the API root"), "{all}");
}

#[test]
fn cassettes_without_record_replay_and_are_resolved_against_the_workspace() {
    let request = Request {
        flags: SettingsArgs { cassettes: Some("tapes".into()), ..SettingsArgs::default() },
        ..Request::default()
    };
    let settings =
        action(&[("INPUT_SERVER-URL", "http://h/mcp"), ("GITHUB_WORKSPACE", "/ws")], request).expect("valid");
    assert_eq!(settings.layer1.cassettes, Some(CassetteSource::Dir(PathBuf::from("/ws/tapes"))));
    assert!(!settings.layer1.record);
}

#[test]
fn the_cassettes_input_replays_from_the_workspace_and_the_flag_wins_over_it() {
    let vars =
        [("INPUT_SERVER-URL", "http://h/mcp"), ("GITHUB_WORKSPACE", "/ws"), ("INPUT_CASSETTES", "tests/cassettes")];
    let settings = action(&vars, Request::default()).expect("valid");
    assert_eq!(settings.layer1.cassettes, Some(CassetteSource::Dir(PathBuf::from("/ws/tests/cassettes"))));
    assert!(!settings.layer1.record, "the input replays; recording is a one-off of the command line");
    let request = Request {
        flags: SettingsArgs { cassettes: Some("tapes".into()), ..SettingsArgs::default() },
        ..Request::default()
    };
    let settings = action(&vars, request).expect("valid");
    assert_eq!(settings.layer1.cassettes, Some(CassetteSource::Dir(PathBuf::from("/ws/tapes"))));
}

#[test]
fn a_broken_config_file_does_not_also_report_the_providers_it_may_define() {
    let dir = tempfile::tempdir().expect("temp dir");
    let config = write_config(&dir, "providers:\n  - id: myvllm\n    api: openai\n    base_url: [http://h/v1]\n");
    let problems = cli(SettingsArgs {
        server_url: Some("http://h/mcp".into()),
        config: Some(config),
        models: vec!["myvllm:qwen3-8b".into()],
        ..SettingsArgs::default()
    })
    .expect_err("shape");
    assert_eq!(problems.len(), 1, "{}", rendered(&problems));
    assert!(
        rendered(&problems).contains("mcp-eval.yaml:4:5: providers[0].base_url: expected a string"),
        "{}",
        rendered(&problems)
    );
}

#[test]
fn shard_comes_from_the_flag_or_the_input_and_a_bad_one_names_its_source() {
    let settings = cli(SettingsArgs {
        server_url: Some("http://h/mcp".into()),
        shard: Some("2/3".into()),
        ..SettingsArgs::default()
    })
    .expect("valid");
    assert_eq!(settings.layer1.shard, Some(crate::settings::layer1::Shard { index: 2, count: 3 }));

    let problems = action(&[("INPUT_SERVER-URL", "http://h/mcp"), ("INPUT_SHARD", "4/3")], Request::default())
        .expect_err("invalid");
    let all = rendered(&problems);
    assert!(all.contains("input `shard` (INPUT_SHARD): `4/3`: the index must be 1 to the count (3)"), "{all}");
    assert!(all.contains("hint: give INDEX/COUNT"), "{all}");
    let problems = cli(SettingsArgs {
        server_url: Some("http://h/mcp".into()),
        shard: Some("1/300".into()),
        ..SettingsArgs::default()
    })
    .expect_err("invalid");
    assert!(rendered(&problems).contains("--shard: `1/300`: the count must be 1 to 256"), "{}", rendered(&problems));
}

#[test]
fn merge_reports_needs_no_server() {
    let settings =
        action(&[("INPUT_MERGE-REPORTS", "reports/*")], Request::default()).expect("merging evaluates no server");
    assert_eq!(settings.action.and_then(|action| action.merge_reports).as_deref(), Some("reports/*"));
    assert!(action(&[], Request::default()).is_err(), "without it, a server is still needed");
}

#[test]
fn a_model_may_judge_itself_only_when_allowed() {
    let args = |allow: bool| SettingsArgs {
        server_url: Some("http://h/mcp".into()),
        models: vec!["openai:gpt-4o".into()],
        judge_model: Some("openai:gpt-4o".into()),
        allow_self_judge: allow,
        ..SettingsArgs::default()
    };
    let problems = cli(args(false)).expect_err("self-judging refused");
    assert!(problems.iter().any(|problem| problem.to_string().contains("is also a model under test")), "{problems:?}");
    let settings = cli(args(true)).expect("allowed");
    assert_eq!(settings.layer1.judge_model, Some(model("openai", "gpt-4o")));
    let other =
        cli(SettingsArgs { judge_model: Some("anthropic:claude".into()), ..args(false) }).expect("another judge");
    assert_eq!(other.layer1.judge_samples, 1);
}

#[test]
fn the_action_sets_judge_samples_and_allows_self_judging_through_its_inputs() {
    let base = [
        ("INPUT_SERVER-URL", "http://h/mcp"),
        ("INPUT_MODELS", "openai:gpt-4o"),
        ("INPUT_JUDGE-MODEL", "openai:gpt-4o"),
    ];
    let refused = action(&base, Request::default()).expect_err("self-judging refused");
    assert!(rendered(&refused).contains("input `allow-self-judge: true`"), "{}", rendered(&refused));
    let mut allowed = base.to_vec();
    allowed.extend([("INPUT_ALLOW-SELF-JUDGE", "true"), ("INPUT_JUDGE-SAMPLES", "3")]);
    let settings = action(&allowed, Request::default()).expect("allowed");
    assert!(settings.layer1.allow_self_judge);
    assert_eq!(settings.layer1.judge_samples, 3);
    let mut bad = allowed.clone();
    bad.push(("INPUT_JUDGE-SAMPLES", "12"));
    let text = rendered(&action(&bad, Request::default()).expect_err("out of range"));
    assert!(text.contains("input `judge-samples`") && text.contains("out of range"), "{text}");
}

#[test]
fn the_command_line_stores_a_baseline_only_when_asked_and_needs_a_cache_dir_for_it() {
    let server = || SettingsArgs { server_url: Some("http://127.0.0.1:9/mcp".into()), ..SettingsArgs::default() };
    let problems = cli(SettingsArgs { accept_baseline: true, ..server() }).expect_err("nowhere to store");
    let text = rendered(&problems);
    assert!(text.contains("--accept-baseline") && text.contains("--cache-dir"), "{text}");

    let settings =
        cli(SettingsArgs { accept_baseline: true, cache_dir: Some("cache".into()), ..server() }).expect("valid");
    let context = settings.layer1.store_context.expect("the command line has a store context");
    assert_eq!(context.event, super::layer1::CLI_EVENT);
    assert!(crate::baseline::store::should_store(&context.event, context.on_default_branch, true, true, true));
    assert!(
        !crate::baseline::store::should_store(&context.event, context.on_default_branch, true, false, false),
        "without --accept-baseline a command-line run never stores"
    );
}

/// A path setting `KEY` given three ways in `dir`: by the config file alone
/// (`KEY: DIR/from-file.EXTENSION`), by the flag `set_flag` sets to `DIR/flag.EXTENSION` over
/// that file, and by the Action input `input` (`(NAME, VALUE)`) over it; the three settings, in
/// that order.
fn given_three_ways(
    dir: &tempfile::TempDir,
    (key, extension): (&str, &str),
    set_flag: fn(&mut SettingsArgs, String),
    input: (&str, &str),
) -> [Settings; 3] {
    let at = |name: &str| dir.path().join(name);
    let config = write_config(
        dir,
        &format!("server: {{url: 'http://h/mcp'}}\n{key}: {}\n", at(&format!("from-file.{extension}")).display()),
    );
    let from_file = cli(SettingsArgs { config: Some(config.clone()), ..SettingsArgs::default() }).expect("valid");
    let mut flags = SettingsArgs { config: Some(config.clone()), ..SettingsArgs::default() };
    set_flag(&mut flags, at(&format!("flag.{extension}")).display().to_string());
    let flag = cli(flags).expect("valid");
    let workspace = dir.path().display().to_string();
    let from_input = action(
        &[("INPUT_SERVER-URL", "http://h/mcp"), ("GITHUB_WORKSPACE", &workspace), input, ("INPUT_CONFIG", &config)],
        Request::default(),
    )
    .expect("valid");
    [from_file, flag, from_input]
}

#[test]
fn the_fault_plan_comes_from_the_flag_the_input_or_the_file_in_that_order() {
    let dir = tempfile::tempdir().expect("temp dir");
    let at = |name: &str| dir.path().join(name);
    let [from_file, flag, input] = given_three_ways(
        &dir,
        ("fault_plan", "yaml"),
        |flags, path| flags.fault_plan = Some(path),
        ("INPUT_FAULT-PLAN", "plans/faults.yaml"),
    );
    assert_eq!(from_file.layer1.fault_plan, Some(at("from-file.yaml")));
    assert_eq!(flag.layer1.fault_plan, Some(at("flag.yaml")));
    assert_eq!(input.layer1.fault_plan, Some(at("plans/faults.yaml")), "in the workspace");
}

#[test]
fn the_price_table_and_the_budget_come_from_the_flag_the_input_or_the_file() {
    let dir = tempfile::tempdir().expect("temp dir");
    let at = |name: &str| dir.path().join(name);
    let config = write_config(
        &dir,
        &format!(
            "server: {{url: 'http://h/mcp'}}\nprice_table: {}\nmax_cost_usd: 2.5\nallow_unpriced: true\n",
            at("from-file.yaml").display()
        ),
    );
    let from_file = cli(SettingsArgs { config: Some(config.clone()), ..SettingsArgs::default() }).expect("valid");
    assert_eq!(from_file.layer1.price_table, Some(InputFile::Path(at("from-file.yaml"))));
    assert_eq!((from_file.layer1.max_cost_usd, from_file.layer1.allow_unpriced), (Some(2.5), true));
    let flag = cli(SettingsArgs {
        config: Some(config.clone()),
        prices: Some(at("flag.yaml").display().to_string()),
        max_cost_usd: Some("$0.75".into()),
        ..SettingsArgs::default()
    })
    .expect("valid");
    assert_eq!(
        (flag.layer1.price_table, flag.layer1.max_cost_usd),
        (Some(InputFile::Path(at("flag.yaml"))), Some(0.75))
    );
    let workspace = dir.path().display().to_string();
    let input = action(
        &[
            ("INPUT_SERVER-URL", "http://h/mcp"),
            ("GITHUB_WORKSPACE", &workspace),
            ("INPUT_PRICE-TABLE", "prices/models.yaml"),
            ("INPUT_MAX-COST-USD", "1"),
        ],
        Request::default(),
    )
    .expect("valid");
    assert_eq!(input.layer1.price_table, Some(InputFile::Path(at("prices/models.yaml"))), "in the workspace");
    assert!(!input.layer1.allow_unpriced);
}

#[test]
fn a_budget_without_a_price_table_or_that_is_not_a_sum_of_dollars_is_refused() {
    let server = || SettingsArgs { server_url: Some("http://127.0.0.1:9/mcp".into()), ..SettingsArgs::default() };
    let problems = cli(SettingsArgs { max_cost_usd: Some("5".into()), ..server() }).expect_err("a budget needs prices");
    assert!(problems.iter().any(|problem| problem.message.contains("needs a price table")), "{problems:?}");
    for bad in ["0", "-1", "five", "inf"] {
        let problems = cli(SettingsArgs { prices: Some("p.yaml".into()), max_cost_usd: Some(bad.into()), ..server() })
            .expect_err(bad);
        assert!(
            problems.iter().any(|problem| problem.message.contains("is not a budget in USD")),
            "{bad}: {problems:?}"
        );
    }
}

#[test]
fn judge_calibration_comes_from_the_flag_the_input_or_the_file_in_that_order() {
    let dir = tempfile::tempdir().expect("temp dir");
    let calibration = r#"{"format": 1, "judge_model": "p:j", "judge_prompt_version": 1, "judge_samples": 1,
        "golden_set_sha256": "sha256:s", "rubrics_sha256": "sha256:r", "labels": "l.yaml", "tpr": 0.9, "tnr": 0.8,
        "positives": 10, "negatives": 10, "true_positives": 9, "true_negatives": 8, "unknown": 0, "errors": 0,
        "measured_at": "2026-11-30"}"#;
    for name in ["from-file.json", "flag.json", "cal/judge.json"] {
        let path = dir.path().join(name);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(path, calibration).expect("write");
    }
    let at = |name: &str| dir.path().join(name);
    let [from_file, flag, input] = given_three_ways(
        &dir,
        ("judge_calibration", "json"),
        |flags, path| flags.judge_calibration = Some(path),
        ("INPUT_JUDGE-CALIBRATION", "cal/judge.json"),
    );
    assert_eq!(from_file.layer1.judge_calibration, Some(at("from-file.json")));
    assert_eq!(flag.layer1.judge_calibration, Some(at("flag.json")));
    assert_eq!(input.layer1.judge_calibration, Some(at("cal/judge.json")), "in the workspace");
    let none = action(&[("INPUT_SERVER-URL", "http://h/mcp"), ("INPUT_JUDGE-CALIBRATION", "")], Request::default())
        .expect("valid");
    assert_eq!(none.layer1.judge_calibration, None, "an empty input is no file");

    // A file that is not there is an input error at start, with the others, naming its source.
    let problems = cli(SettingsArgs {
        server_url: Some("http://h/mcp".into()),
        judge_calibration: Some(at("nope.json").display().to_string()),
        runs: Some("0".into()),
        ..SettingsArgs::default()
    })
    .expect_err("missing");
    let text = rendered(&problems);
    assert!(text.contains("--judge-calibration") && text.contains("no such file"), "{text}");
    assert!(text.contains("--runs"), "reported with the other problems: {text}");
}

#[test]
fn the_embedding_model_needs_a_provider_with_an_embeddings_endpoint() {
    let args = |text: &str| SettingsArgs {
        server_url: Some("http://h/mcp".into()),
        models: vec!["openai:gpt-4o".into()],
        embedding_model: Some(text.into()),
        ..SettingsArgs::default()
    };
    let settings = cli(args("openai:text-embedding-3-small")).expect("an OpenAI embeddings model");
    assert_eq!(settings.layer1.embedding_model, Some(model("openai", "text-embedding-3-small")));
    let refused = rendered(&cli(args("anthropic:claude-sonnet-4-5")).expect_err("the Messages API has no embeddings"));
    assert!(refused.contains("--embedding-model") && refused.contains("has no embeddings endpoint"), "{refused}");
    let unknown = rendered(&cli(args("nowhere:e")).expect_err("no such provider"));
    assert!(unknown.contains("no provider `nowhere` is defined"), "{unknown}");
    let bare = rendered(&cli(args("text-embedding-3-small")).expect_err("no provider"));
    assert!(bare.contains("is not PROVIDER:MODEL"), "{bare}");
}

#[test]
fn the_embedding_model_comes_from_the_input_or_the_config_file() {
    let dir = tempfile::tempdir().expect("temp dir");
    let config = dir.path().join("mcp-eval.yaml");
    std::fs::write(&config, "server:\n  url: http://h/mcp\nembedding_model: openai:text-embedding-3-large\n")
        .expect("write");
    let settings =
        cli(SettingsArgs { config: Some(config.display().to_string()), ..SettingsArgs::default() }).expect("valid");
    assert_eq!(settings.layer1.embedding_model, Some(model("openai", "text-embedding-3-large")));
    std::fs::write(&config, "server:\n  url: http://h/mcp\nembedding_model: anthropic:x\n").expect("write");
    let problems = rendered(
        &cli(SettingsArgs { config: Some(config.display().to_string()), ..SettingsArgs::default() })
            .expect_err("refused"),
    );
    assert!(problems.contains("mcp-eval.yaml:3:18: embedding_model"), "{problems}");
    let settings = action(
        &[("INPUT_SERVER-URL", "http://h/mcp"), ("INPUT_EMBEDDING-MODEL", "openai:text-embedding-3-small")],
        Request::default(),
    )
    .expect("valid");
    assert_eq!(settings.layer1.embedding_model, Some(model("openai", "text-embedding-3-small")));
}

#[test]
fn a_baseline_file_that_is_missing_or_not_a_report_is_an_input_error() {
    let dir = tempfile::tempdir().expect("temp dir");
    let server = || SettingsArgs { server_url: Some("http://127.0.0.1:9/mcp".into()), ..SettingsArgs::default() };
    let missing = dir.path().join("nowhere.json").display().to_string();
    let text = rendered(&cli(SettingsArgs { baseline: Some(missing), ..server() }).expect_err("missing"));
    assert!(text.contains("--baseline") && text.contains("cannot be read"), "{text}");
    let junk = dir.path().join("junk.json");
    std::fs::write(&junk, "{\"not\": \"a report\"}").expect("write");
    let text = rendered(
        &cli(SettingsArgs { baseline: Some(junk.display().to_string()), ..server() }).expect_err("not a report"),
    );
    assert!(text.contains("is not a report.json"), "{text}");
}

#[test]
fn the_ref_of_the_run_is_read_here_with_the_other_github_variables() {
    let vars = env(&[("GITHUB_REF", "refs/heads/main"), ("GITHUB_EVENT_NAME", "push")]);
    let lookup = |name: &str| vars.get(name).cloned();
    let context = github_context(&Request::default(), &lookup);
    assert_eq!(context.reference.as_deref(), Some("refs/heads/main"));
    let mut request = Request::default();
    request.action.github_ref = Some("refs/heads/release".into());
    assert_eq!(github_context(&request, &lookup).reference.as_deref(), Some("refs/heads/release"), "the flag wins");
}

#[test]
fn only_settings_reads_github_and_input_variables() {
    // The invariant of ARCHITECTURE.md: no module outside `src/settings/` names a `GITHUB_*` or
    // `INPUT_*` variable in code (comments may).
    fn walk(dir: &Path, found: &mut Vec<String>) {
        for entry in std::fs::read_dir(dir).expect("a source directory") {
            let path = entry.expect("an entry").path();
            if path.is_dir() {
                if path.file_name().is_some_and(|name| name != "settings") {
                    walk(&path, found);
                }
            } else if path.extension().is_some_and(|ext| ext == "rs") {
                let text = std::fs::read_to_string(&path).expect("a source file");
                for (line, code) in text.lines().enumerate() {
                    let code = code.trim_start();
                    if !code.starts_with("//") && (code.contains("\"GITHUB_") || code.contains("\"INPUT_")) {
                        found.push(format!("{}:{}: {code}", path.display(), line + 1));
                    }
                }
            }
        }
    }
    let mut found = Vec::new();
    walk(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"), &mut found);
    assert!(found.is_empty(), "read outside settings:\n{}", found.join("\n"));
}

#[test]
fn every_flag_of_run_has_a_config_key_or_a_stated_reason() {
    use clap::Args as _;
    let keys = table::flag_keys();
    let flags: Vec<String> = SettingsArgs::augment_args(clap::Command::new("run"))
        .get_arguments()
        .filter_map(|arg| arg.get_long().map(str::to_owned))
        .collect();
    for flag in &flags {
        let Some((_, key)) = keys.iter().find(|(name, _)| name == flag) else {
            panic!("--{flag} has neither a config key nor a reason in its row of settings::table");
        };
        match key {
            Ok(key) => assert!(
                config_file::has_key(key),
                "--{flag}'s key `{key}` is not one the file accepts (config_file::schema)"
            ),
            Err(reason) => assert!(!reason.trim().is_empty(), "--{flag} needs a reason"),
        }
    }
    for (name, _) in &keys {
        assert!(flags.iter().any(|flag| flag == name), "the table names --{name}, which `run` does not have");
    }
}

#[test]
fn the_cache_judge_and_eval_gate_settings_are_read_from_the_config_file() {
    let dir = tempfile::tempdir().expect("temp dir");
    let config = write_config(
        &dir,
        "server:\n  url: http://h/mcp\nmodels: [openai:gpt-4.1-mini]\ncache_dir: .verdicts\ncache_key: release-7\ncache_mode: write-only\njudge_model: anthropic:claude-sonnet-4-5\njudge_samples: 3\nallow_self_judge: true\nconfirm: false\ncassettes: tapes\ngate:\n  fail_on_evals: never\n  max_drop: 0.25\n",
    );
    let settings = cli_with_env(
        SettingsArgs { config: Some(config), ..SettingsArgs::default() },
        &[("OPENAI_API_KEY", "k"), ("ANTHROPIC_API_KEY", "k")],
    )
    .expect("valid");
    let layer1 = &settings.layer1;
    assert!(layer1.cache_dir.as_ref().is_some_and(|dir| dir.ends_with(".verdicts")), "{:?}", layer1.cache_dir);
    assert_eq!(layer1.cache_key, super::layer1::CacheKeySetting::Text("release-7".into()));
    assert_eq!(layer1.cache_mode, crate::cache::Mode::WriteOnly);
    assert_eq!(layer1.judge_model, Some(model("anthropic", "claude-sonnet-4-5")));
    assert_eq!((layer1.judge_samples, layer1.allow_self_judge, layer1.confirm), (3, true, false));
    assert!(
        matches!(&layer1.cassettes, Some(CassetteSource::Dir(dir)) if dir.ends_with("tapes")),
        "{:?}",
        layer1.cassettes
    );
    assert_eq!(layer1.fail_on_evals, crate::baseline::regression::FailOnEvals::Never);
    assert_eq!(layer1.max_drop, 0.25);

    // A flag still wins over the file, and a bad value names the file's line and key.
    let config = write_config(&dir, "gate:\n  max_drop: lots\n");
    let problems = cli(SettingsArgs {
        server_url: Some("http://h/mcp".into()),
        config: Some(config),
        cache_mode: Some("off".into()),
        ..SettingsArgs::default()
    })
    .expect_err("bad max_drop");
    assert!(rendered(&problems).contains("mcp-eval.yaml:2:13: gate.max_drop: "), "{}", rendered(&problems));
}

#[test]
fn the_otlp_endpoint_flag_wins_over_the_traces_variable_and_that_over_the_base_variable() {
    let demo = || SettingsArgs { server_url: Some("http://127.0.0.1:1/mcp".into()), ..SettingsArgs::default() };
    let base = ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://base:4318");
    let traces = ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://traces:4318/custom");
    let url = |settings: Settings| settings.trace.otlp.expect("an endpoint").url;
    assert_eq!(url(cli_with_env(demo(), &[base]).unwrap()), "http://base:4318/v1/traces", "a base URL gets the path");
    assert_eq!(url(cli_with_env(demo(), &[base, traces]).unwrap()), "http://traces:4318/custom", "used as it is");
    let flag = SettingsArgs { otlp_endpoint: Some("http://flag:4318".into()), ..demo() };
    assert_eq!(url(cli_with_env(flag, &[base, traces]).unwrap()), "http://flag:4318/v1/traces");
    let disabled = cli_with_env(demo(), &[base, ("OTEL_SDK_DISABLED", "true")]).unwrap();
    assert!(disabled.trace.otlp.is_none());
    assert!(disabled.notices.iter().any(|notice| notice.contains("OTEL_SDK_DISABLED=true")), "{:?}", disabled.notices);
    let timed = cli_with_env(demo(), &[base, ("OTEL_EXPORTER_OTLP_TIMEOUT", "2500")]).unwrap();
    assert_eq!(timed.trace.otlp.unwrap().timeout, std::time::Duration::from_millis(2500));
    assert!(cli_with_env(demo(), &[]).unwrap().trace.otlp.is_none(), "nothing given, nothing exported");
}

#[test]
fn otlp_header_values_are_secrets_masked_before_validation_and_never_in_a_problem() {
    let vars = env(&[
        ("INPUT_OTLP-HEADERS", "x-api-key=otlp%2Dsecret,broken"),
        ("OTEL_EXPORTER_OTLP_HEADERS", "authorization=Bearer env-secret"),
    ]);
    let secrets = raw_secrets(&Request::default(), &|name| vars.get(name).cloned());
    for secret in ["otlp%2Dsecret", "otlp-secret", "Bearer env-secret"] {
        assert!(secrets.contains(&secret.to_owned()), "{secret} missing in {secrets:?}");
    }
    let flags = SettingsArgs {
        server_url: Some("http://127.0.0.1:1/mcp".into()),
        otlp_endpoint: Some("http://collector:4318".into()),
        otlp_headers: Some("bad key=hunter2".into()),
        ..SettingsArgs::default()
    };
    let problems = cli(flags).expect_err("a bad header list");
    let text = rendered(&problems);
    assert!(text.contains("--otlp-headers: is not an OTLP header list"), "{text}");
    assert!(!text.contains("hunter2"), "{text}");
    let flags = SettingsArgs {
        server_url: Some("http://127.0.0.1:1/mcp".into()),
        otlp_endpoint: Some("http://collector:4318".into()),
        otlp_headers: Some("x-api-key=hunter2".into()),
        ..SettingsArgs::default()
    };
    assert!(cli(flags).unwrap().secrets().contains(&"hunter2".to_owned()));
}

#[test]
fn the_oauth_secret_comes_from_a_variable_or_the_masked_input_never_a_flag() {
    let flags = SettingsArgs {
        server_url: Some("http://127.0.0.1:1/mcp".into()),
        oauth_client_id: Some("ci".into()),
        oauth_client_secret_env: Some("MY_SECRET".into()),
        oauth_scopes: Some("mcp:read".into()),
        ..SettingsArgs::default()
    };
    let vars = env(&[("MY_SECRET", "s3cret-from-env")]);
    let request = Request { flags: flags.clone(), ..Request::default() };
    let settings = resolve(&request, FrontEnd::Cli, &|name| vars.get(name).cloned()).expect("valid");
    let oauth = settings.oauth.as_ref().expect("signed in");
    assert_eq!((oauth.client_id.as_str(), oauth.client_secret.as_str()), ("ci", "s3cret-from-env"));
    assert_eq!(oauth.scopes.as_deref(), Some("mcp:read"));
    assert!(settings.secrets().contains(&"s3cret-from-env".to_owned()));
    assert!(!format!("{settings:?}").contains("s3cret-from-env"), "Debug never shows the secret");
    // The variable unset: one problem naming it; an Authorization header beside the sign-in, another.
    let problems = cli(SettingsArgs {
        headers: vec!["Authorization: Bearer x-token-1".into()],
        oauth_client_secret_env: None,
        ..flags
    })
    .expect_err("invalid");
    let all = rendered(&problems);
    assert!(all.contains("`MCP_EVAL_OAUTH_CLIENT_SECRET` is not set"), "{all}");
    assert!(all.contains("an `Authorization` header and the client-credentials sign-in"), "{all}");
    // The Action's input holds the secret itself, and is one of the raw secrets masked first.
    let request = Request::default();
    let inputs = [
        ("INPUT_SERVER-URL", "http://127.0.0.1:1/mcp"),
        ("INPUT_OAUTH-CLIENT-ID", "ci"),
        ("INPUT_OAUTH-CLIENT-SECRET", "s3cret-from-input"),
        ("GITHUB_REPOSITORY", "octo/repo"),
    ];
    let settings = action(&inputs, request.clone()).expect("valid");
    assert_eq!(settings.oauth.as_ref().map(|oauth| oauth.client_secret.as_str()), Some("s3cret-from-input"));
    let vars = env(&inputs);
    assert!(raw_secrets(&request, &|name| vars.get(name).cloned()).contains(&"s3cret-from-input".to_owned()));
}

#[test]
fn every_sign_in_setting_without_the_client_id_is_the_same_error() {
    for flags in [
        SettingsArgs { oauth_scopes: Some("mcp:read".into()), ..SettingsArgs::default() },
        SettingsArgs { oauth_client_secret_env: Some("MY_SECRET".into()), ..SettingsArgs::default() },
        SettingsArgs { oauth_other_resource: Some("https://other.example/mcp".into()), ..SettingsArgs::default() },
    ] {
        let flags = SettingsArgs { server_url: Some("http://127.0.0.1:1/mcp".into()), ..flags };
        let all = rendered(&cli(flags.clone()).expect_err(&format!("{flags:?} without a client id is an error")));
        assert!(all.contains("only used with the client-credentials sign-in"), "{all}");
        assert!(all.contains("give the client id too (--oauth-client-id)"), "{all}");
    }
}

#[test]
fn an_empty_secret_variable_is_called_empty_and_the_action_leads_with_its_input() {
    let flags = SettingsArgs {
        server_url: Some("http://127.0.0.1:1/mcp".into()),
        oauth_client_id: Some("ci".into()),
        oauth_client_secret_env: Some("MY_SECRET".into()),
        ..SettingsArgs::default()
    };
    let all = rendered(&cli_with_env(flags, &[("MY_SECRET", "")]).expect_err("empty secret"));
    assert!(all.contains("`MY_SECRET` is set but empty"), "{all}");
    assert!(!all.contains("is not set"), "{all}");
    // The Action without the secret input: the fix leads with the input `oauth-client-secret`.
    let all = rendered(
        &action(
            &[
                ("INPUT_SERVER-URL", "http://127.0.0.1:1/mcp"),
                ("INPUT_OAUTH-CLIENT-ID", "ci"),
                ("GITHUB_REPOSITORY", "octo/repo"),
            ],
            Request::default(),
        )
        .expect_err("no secret"),
    );
    assert!(all.contains("the input `oauth-client-secret` is not given"), "{all}");
    assert!(all.contains("give the Action input `oauth-client-secret`"), "{all}");
}

#[test]
fn layer_3s_queueing_note_names_the_concurrency_flag_and_input_of_the_table() {
    use crate::telemetry::queueing::{CONCURRENCY_FLAG, CONCURRENCY_INPUT};
    assert_eq!(crate::settings::table::CONCURRENCY.flag_name(), CONCURRENCY_FLAG);
    assert_eq!(crate::settings::table::CONCURRENCY.input_name(), CONCURRENCY_INPUT);
}

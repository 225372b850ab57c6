//! Typed wire-shape checks of what a 2026-07-28 server sends (checklist row M-10, with the
//! details of P-6, R-3 and D-6; spec digest §2–§5, §8–§15).
//!
//! These are our own checks, written from the `$defs` of the official schema (which stays out
//! of this repository and is never loaded): results by originating method, errors by code,
//! notifications by method, and the JSON-RPC envelope. Each problem is one string naming the
//! JSON path and what was expected versus found, e.g.
//! "`result.tools[2].inputSchema`: expected an object, found null".
//!
//! Conventions:
//! - The schema is open: unknown extra fields are never flagged.
//! - "integer" means a JSON number without a fraction or exponent part (`5.0` is not one).
//! - Base64 (`data`, `blob`) must decode as standard, padded RFC 4648 base64.
//! - The four functions do not repeat each other: [`check_envelope`] looks at `jsonrpc`, `id`
//!   and which of `method`/`result`/`error` are present; [`check_result`], [`check_error`] and
//!   [`check_notification`] look at the `result`, the `error` and the notification's
//!   `method`/`params`.
//! - **Findings graded by other checks** start with `[<id>] ` so the M-10 check can filter them
//!   (see [`graded_elsewhere`]): `[M-7]` missing or non-string `resultType`, `[R-1]` unknown
//!   `resultType` value, `[R-2]` `input_required` on a method that may not return it, `[C-1]`
//!   missing `ttlMs`/`cacheScope`, `[C-2]` invalid `ttlMs`, `[C-3]` invalid `cacheScope`.

use base64::Engine as _;
use serde_json::{Map, Value};

/// The checklist id of a finding that another check grades (the `[<id>] ` prefix), if any.
/// Such findings are still valid M-10 schema violations; the prefix only avoids double grading.
pub fn graded_elsewhere(message: &str) -> Option<&str> {
    let rest = message.strip_prefix('[')?;
    let (id, _) = rest.split_once("] ")?;
    Some(id)
}

/// Checks a `result` object against the shape of the method that was requested (spec digest
/// §4, §9–§14; `SCH` `*Result`): `server/discover`, `tools/list`, `tools/call`, `prompts/list`,
/// `prompts/get`, `resources/list`, `resources/templates/list`, `resources/read`,
/// `completion/complete`, `subscriptions/listen`. A result with `resultType: "input_required"`
/// is checked as an `InputRequiredResult` instead. Other methods (extensions) get the
/// generic `Result` checks only. A missing `resultType` is reported (prefixed) and the result is
/// then checked as a complete one.
pub fn check_result(method: &str, result: &Value) -> Vec<String> {
    let mut ck = Ck::default();
    let path = "result";
    let Some(obj) = ck.obj(result, path) else {
        return ck.out;
    };
    result_meta(&mut ck, obj, path);
    let result_type = match obj.get("resultType") {
        None => {
            ck.push(format!(
                "[M-7] `{path}.resultType`: missing required field (expected a string)"
            ));
            "complete"
        }
        Some(Value::String(t)) => t.as_str(),
        Some(other) => {
            ck.push(format!(
                "[M-7] `{path}.resultType`: expected a string, found {}",
                found(other)
            ));
            return ck.out;
        }
    };
    match result_type {
        "complete" => complete_result(&mut ck, method, obj, path),
        "input_required" => {
            if !matches!(method, "tools/call" | "prompts/get" | "resources/read") {
                ck.push(format!(
                    "[R-2] `{path}.resultType`: \"input_required\" is not allowed on `{method}` \
                     (only tools/call, prompts/get, resources/read)"
                ));
            }
            input_required_result(&mut ck, obj, path);
        }
        other => ck.push(format!(
            "[R-1] `{path}.resultType`: expected \"complete\" or \"input_required\" (or a value \
             of a negotiated extension), found {}",
            found(&Value::String(other.to_owned()))
        )),
    }
    ck.out
}

/// Checks a JSON-RPC `error` object (spec digest §8; `SCH` `Error`, `HeaderMismatchError`,
/// `MissingRequiredClientCapabilityError`, `UnsupportedProtocolVersionError`): `code` an
/// integer, `message` a string, `data` anything; for `-32021`, `data.requiredCapabilities` is a
/// `ClientCapabilities` object; for `-32022`, `data.supported` is a string array and
/// `data.requested` a string. Which codes may be emitted at all (M-8) is not checked here.
pub fn check_error(error: &Value) -> Vec<String> {
    let mut ck = Ck::default();
    let path = "error";
    let Some(obj) = ck.obj(error, path) else {
        return ck.out;
    };
    let code = ck.field(obj, path, "code", Kind::Int, true);
    ck.field(obj, path, "message", Kind::Str, true);
    match code.and_then(Value::as_i64) {
        Some(-32021) => {
            let dp = join(path, "data");
            if let Some(Value::Object(data)) = ck.field(obj, path, "data", Kind::Obj, true) {
                if let Some(caps) = ck.field(data, &dp, "requiredCapabilities", Kind::Obj, true) {
                    client_capabilities(&mut ck, caps, &join(&dp, "requiredCapabilities"));
                }
            }
        }
        Some(-32022) => {
            let data_path = join(path, "data");
            if let Some(Value::Object(data)) = ck.field(obj, path, "data", Kind::Obj, true) {
                ck.strings(data, &data_path, "supported", true);
                ck.field(data, &data_path, "requested", Kind::Str, true);
            }
        }
        _ => {}
    }
    ck.out
}

/// Checks a notification a server sent, by its `method` (spec digest §5, §14, §15; `SCH`
/// `ServerNotification`): `notifications/cancelled`, `notifications/progress`,
/// `notifications/message`, `notifications/subscriptions/acknowledged`,
/// `notifications/{tools,prompts,resources}/list_changed`, `notifications/resources/updated`.
/// `params._meta["io.modelcontextprotocol/subscriptionId"]` is a string or integer when
/// present. Removed notifications (`notifications/elicitation/complete`) are flagged; other
/// unknown methods are not (an extension may define them) beyond `params` being an object.
pub fn check_notification(message: &Value) -> Vec<String> {
    let mut ck = Ck::default();
    let Some(obj) = ck.obj(message, "message") else {
        return ck.out;
    };
    let Some(Value::String(method)) = ck.field(obj, "", "method", Kind::Str, true) else {
        return ck.out;
    };
    let params = ck.field(obj, "", "params", Kind::Obj, false);
    let params = params.and_then(Value::as_object);
    if let Some(params) = params {
        if let Some(Value::Object(meta)) = ck.field(params, "params", "_meta", Kind::Obj, false) {
            ck.field(
                meta,
                "params._meta",
                "io.modelcontextprotocol/subscriptionId",
                Kind::Id,
                false,
            );
        }
    }
    let required = |ck: &mut Ck| -> Option<&Map<String, Value>> {
        if params.is_none() && obj.get("params").is_none() {
            ck.push("`params`: missing required field (expected an object)".to_owned());
        }
        params
    };
    let p = "params";
    match method.as_str() {
        "notifications/cancelled" => {
            if let Some(params) = required(&mut ck) {
                ck.field(params, p, "requestId", Kind::Id, true);
                ck.field(params, p, "reason", Kind::Str, false);
            }
        }
        "notifications/progress" => {
            if let Some(params) = required(&mut ck) {
                ck.field(params, p, "progressToken", Kind::Id, true);
                ck.field(params, p, "progress", Kind::Num, true);
                ck.field(params, p, "total", Kind::Num, false);
                ck.field(params, p, "message", Kind::Str, false);
            }
        }
        "notifications/message" => {
            if let Some(params) = required(&mut ck) {
                if let Some(level) = ck.field(params, p, "level", Kind::Str, true) {
                    ck.one_of(level, "params.level", LOG_LEVELS);
                }
                if !params.contains_key("data") {
                    ck.push(
                        "`params.data`: missing required field (expected any JSON value)".into(),
                    );
                }
                ck.field(params, p, "logger", Kind::Str, false);
            }
        }
        "notifications/subscriptions/acknowledged" => {
            if let Some(params) = required(&mut ck) {
                if let Some(Value::Object(filter)) =
                    ck.field(params, p, "notifications", Kind::Obj, true)
                {
                    let fp = "params.notifications";
                    for key in [
                        "toolsListChanged",
                        "promptsListChanged",
                        "resourcesListChanged",
                    ] {
                        ck.field(filter, fp, key, Kind::Bool, false);
                    }
                    ck.strings(filter, fp, "resourceSubscriptions", false);
                }
            }
        }
        "notifications/resources/updated" => {
            if let Some(params) = required(&mut ck) {
                ck.uri(params, p, "uri", true);
            }
        }
        "notifications/tools/list_changed"
        | "notifications/prompts/list_changed"
        | "notifications/resources/list_changed" => {}
        "notifications/elicitation/complete" => ck.push(format!(
            "`method`: `{method}` was removed in 2026-07-28 (a server does not send it)"
        )),
        _ => {}
    }
    ck.out
}

/// Checks the JSON-RPC envelope of any message a server sent (spec digest §2; `SCH`
/// `JSONRPCResultResponse`, `JSONRPCErrorResponse`, `JSONRPCNotification`): an object with
/// `jsonrpc: "2.0"`; a message with `method` has no `result`/`error`, a string `method`, an
/// object `params` when present and a string-or-integer `id` when present; any other message
/// is a response with exactly one of `result` (an object) and `error` (an object), and an `id`
/// that is a string or integer: required on results; on errors optional and also allowed to
/// be `null` (JSON-RPC 2.0 §5 uses `null` when the request id could not be read).
pub fn check_envelope(message: &Value) -> Vec<String> {
    let mut ck = Ck::default();
    let Some(obj) = ck.obj(message, "message") else {
        return ck.out;
    };
    match obj.get("jsonrpc") {
        Some(Value::String(v)) if v == "2.0" => {}
        None => ck.push("`jsonrpc`: missing required field (expected \"2.0\")".to_owned()),
        Some(other) => ck.push(format!(
            "`jsonrpc`: expected \"2.0\", found {}",
            found(other)
        )),
    }
    let has_result = obj.contains_key("result");
    let has_error = obj.contains_key("error");
    if obj.contains_key("method") {
        ck.field(obj, "", "method", Kind::Str, true);
        ck.field(obj, "", "params", Kind::Obj, false);
        ck.field(obj, "", "id", Kind::Id, false);
        if has_result || has_error {
            ck.push(
                "`method`: a message with `method` must not also carry `result` or `error`"
                    .to_owned(),
            );
        }
        return ck.out;
    }
    match (has_result, has_error) {
        (true, true) => ck.push(
            "`result`/`error`: expected exactly one of `result` or `error`, found both".to_owned(),
        ),
        (false, false) => ck.push(
            "`result`/`error`: expected `method`, or exactly one of `result` or `error`; found \
             none"
                .to_owned(),
        ),
        (true, false) => {
            ck.field(obj, "", "result", Kind::Obj, true);
            ck.field(obj, "", "id", Kind::Id, true);
        }
        (false, true) => {
            ck.field(obj, "", "error", Kind::Obj, true);
            if obj.get("id").is_some_and(|id| !id.is_null()) {
                ck.field(obj, "", "id", Kind::Id, false);
            }
        }
    }
    ck.out
}

// ---------------------------------------------------------------------------------------------
// Results
// ---------------------------------------------------------------------------------------------

/// Methods whose complete results carry caching hints (spec digest §10).
const CACHEABLE: &[&str] = &[
    "server/discover",
    "tools/list",
    "prompts/list",
    "resources/list",
    "resources/templates/list",
    "resources/read",
];

const LOG_LEVELS: &[&str] = &[
    "debug",
    "info",
    "notice",
    "warning",
    "error",
    "critical",
    "alert",
    "emergency",
];

fn complete_result(ck: &mut Ck, method: &str, obj: &Map<String, Value>, path: &str) {
    if CACHEABLE.contains(&method) {
        caching_hints(ck, obj, path);
    }
    if matches!(
        method,
        "tools/list" | "prompts/list" | "resources/list" | "resources/templates/list"
    ) {
        ck.field(obj, path, "nextCursor", Kind::Str, false);
    }
    match method {
        "server/discover" => {
            ck.strings(obj, path, "supportedVersions", true);
            if let Some(caps) = ck.field(obj, path, "capabilities", Kind::Obj, true) {
                server_capabilities(ck, caps, &join(path, "capabilities"));
            }
            ck.field(obj, path, "instructions", Kind::Str, false);
        }
        "tools/list" => ck.each(obj, path, "tools", true, tool),
        "tools/call" => {
            ck.each(obj, path, "content", true, content_block);
            ck.field(obj, path, "isError", Kind::Bool, false);
        }
        "prompts/list" => ck.each(obj, path, "prompts", true, prompt),
        "prompts/get" => {
            ck.field(obj, path, "description", Kind::Str, false);
            ck.each(obj, path, "messages", true, prompt_message);
        }
        "resources/list" => ck.each(obj, path, "resources", true, resource),
        "resources/templates/list" => {
            ck.each(obj, path, "resourceTemplates", true, resource_template);
        }
        "resources/read" => ck.each(obj, path, "contents", true, resource_contents),
        "completion/complete" => {
            if let Some(Value::Object(c)) = ck.field(obj, path, "completion", Kind::Obj, true) {
                let cp = join(path, "completion");
                if let Some(Value::Array(values)) = ck.strings(c, &cp, "values", true) {
                    if values.len() > 100 {
                        ck.push(format!(
                            "`{cp}.values`: expected at most 100 items, found {}",
                            values.len()
                        ));
                    }
                }
                ck.field(c, &cp, "total", Kind::Int, false);
                ck.field(c, &cp, "hasMore", Kind::Bool, false);
            }
        }
        "subscriptions/listen" => {
            let mp = join(path, "_meta");
            if let Some(Value::Object(meta)) = ck.field(obj, path, "_meta", Kind::Obj, true) {
                ck.field(
                    meta,
                    &mp,
                    "io.modelcontextprotocol/subscriptionId",
                    Kind::Id,
                    true,
                );
            }
        }
        _ => {}
    }
}

/// `ttlMs`/`cacheScope` (spec digest §10), prefixed: graded by C-1/C-2/C-3.
fn caching_hints(ck: &mut Ck, obj: &Map<String, Value>, path: &str) {
    match obj.get("ttlMs") {
        None => ck.push(format!(
            "[C-1] `{path}.ttlMs`: missing required field (expected an integer ≥ 0)"
        )),
        Some(v) if v.as_u64().is_some() => {}
        Some(v) => ck.push(format!(
            "[C-2] `{path}.ttlMs`: expected an integer ≥ 0, found {}",
            found(v)
        )),
    }
    match obj.get("cacheScope") {
        None => ck.push(format!(
            "[C-1] `{path}.cacheScope`: missing required field (expected \"public\" or \"private\")"
        )),
        Some(Value::String(s)) if s == "public" || s == "private" => {}
        Some(v) => ck.push(format!(
            "[C-3] `{path}.cacheScope`: expected \"public\" or \"private\", found {}",
            found(v)
        )),
    }
}

/// `_meta` of a result (`ResultMetaObject`).
fn result_meta(ck: &mut Ck, obj: &Map<String, Value>, path: &str) {
    if let Some(Value::Object(meta)) = ck.field(obj, path, "_meta", Kind::Obj, false) {
        let key = "io.modelcontextprotocol/serverInfo";
        let mp = join(path, "_meta");
        if let Some(info) = ck.field(meta, &mp, key, Kind::Obj, false) {
            implementation(ck, info, &join(&mp, key));
        }
    }
}

/// `InputRequiredResult` (R-3; spec digest §9.2).
fn input_required_result(ck: &mut Ck, obj: &Map<String, Value>, path: &str) {
    let requests = ck.field(obj, path, "inputRequests", Kind::Obj, false);
    ck.field(obj, path, "requestState", Kind::Str, false);
    if !obj.contains_key("inputRequests") && !obj.contains_key("requestState") {
        ck.push(format!(
            "`{path}`: an input_required result must carry `inputRequests` or `requestState`, \
             found neither"
        ));
    }
    if let Some(Value::Object(requests)) = requests {
        let rp = join(path, "inputRequests");
        for (key, request) in requests {
            input_request(ck, request, &join(&rp, key));
        }
    }
}

/// One `InputRequest`: `{method, params}` without `jsonrpc`/`id` (spec digest §9.2).
fn input_request(ck: &mut Ck, v: &Value, path: &str) {
    let Some(obj) = ck.obj(v, path) else {
        return;
    };
    for key in ["jsonrpc", "id"] {
        if obj.contains_key(key) {
            ck.push(format!(
                "`{}`: input requests are not JSON-RPC requests and carry no `{key}`",
                join(path, key)
            ));
        }
    }
    let Some(Value::String(method)) = ck.field(obj, path, "method", Kind::Str, true) else {
        return;
    };
    let pp = join(path, "params");
    match method.as_str() {
        "elicitation/create" => {
            if let Some(Value::Object(params)) = ck.field(obj, path, "params", Kind::Obj, true) {
                elicit_params(ck, params, &pp);
            }
        }
        "sampling/createMessage" => {
            if let Some(Value::Object(params)) = ck.field(obj, path, "params", Kind::Obj, true) {
                create_message_params(ck, params, &pp);
            }
        }
        "roots/list" => {
            if let Some(Value::Object(params)) = ck.field(obj, path, "params", Kind::Obj, false) {
                ck.field(params, &pp, "_meta", Kind::Obj, false);
            }
        }
        other => ck.push(format!(
            "`{}`: expected \"elicitation/create\", \"sampling/createMessage\" or \
             \"roots/list\", found {}",
            join(path, "method"),
            found(&Value::String(other.to_owned()))
        )),
    }
}

/// `ElicitRequestFormParams` / `ElicitRequestURLParams`.
fn elicit_params(ck: &mut Ck, params: &Map<String, Value>, path: &str) {
    ck.field(params, path, "message", Kind::Str, true);
    let mode = match ck.field(params, path, "mode", Kind::Str, false) {
        None => "form",
        Some(Value::String(m)) => m.as_str(),
        Some(_) => return,
    };
    match mode {
        "form" => {
            let sp = join(path, "requestedSchema");
            let Some(Value::Object(schema)) =
                ck.field(params, path, "requestedSchema", Kind::Obj, true)
            else {
                return;
            };
            match schema.get("type") {
                Some(Value::String(t)) if t == "object" => {}
                None => ck.push(format!(
                    "`{sp}.type`: missing required field (expected \"object\")"
                )),
                Some(other) => ck.push(format!(
                    "`{sp}.type`: expected \"object\", found {}",
                    found(other)
                )),
            }
            ck.field(schema, &sp, "$schema", Kind::Str, false);
            ck.strings(schema, &sp, "required", false);
            if let Some(Value::Object(props)) = ck.field(schema, &sp, "properties", Kind::Obj, true)
            {
                let pp = join(&sp, "properties");
                for (name, prop) in props {
                    primitive_schema(ck, prop, &join(&pp, name));
                }
            }
        }
        "url" => {
            ck.uri(params, path, "url", true);
        }
        other => ck.push(format!(
            "`{}`: expected \"form\" or \"url\", found {}",
            join(path, "mode"),
            found(&Value::String(other.to_owned()))
        )),
    }
}

/// `PrimitiveSchemaDefinition` (string, number, boolean and the enum variants).
fn primitive_schema(ck: &mut Ck, v: &Value, path: &str) {
    let Some(obj) = ck.obj(v, path) else {
        return;
    };
    ck.field(obj, path, "title", Kind::Str, false);
    ck.field(obj, path, "description", Kind::Str, false);
    let Some(Value::String(t)) = ck.field(obj, path, "type", Kind::Str, true) else {
        return;
    };
    match t.as_str() {
        "string" => {
            ck.field(obj, path, "minLength", Kind::Int, false);
            ck.field(obj, path, "maxLength", Kind::Int, false);
            if let Some(format) = ck.field(obj, path, "format", Kind::Str, false) {
                ck.one_of(
                    format,
                    &join(path, "format"),
                    &["date", "date-time", "email", "uri"],
                );
            }
            ck.field(obj, path, "default", Kind::Str, false);
            ck.strings(obj, path, "enum", false);
            ck.strings(obj, path, "enumNames", false);
            ck.each(obj, path, "oneOf", false, titled_const);
        }
        "number" | "integer" => {
            for key in ["minimum", "maximum", "default"] {
                ck.field(obj, path, key, Kind::Num, false);
            }
        }
        "boolean" => {
            ck.field(obj, path, "default", Kind::Bool, false);
        }
        "array" => {
            ck.field(obj, path, "minItems", Kind::Int, false);
            ck.field(obj, path, "maxItems", Kind::Int, false);
            ck.strings(obj, path, "default", false);
            let ip = join(path, "items");
            if let Some(Value::Object(items)) = ck.field(obj, path, "items", Kind::Obj, true) {
                if items.contains_key("anyOf") {
                    ck.each(items, &ip, "anyOf", true, titled_const);
                } else {
                    ck.strings(items, &ip, "enum", true);
                    if let Some(t) = ck.field(items, &ip, "type", Kind::Str, true) {
                        ck.one_of(t, &join(&ip, "type"), &["string"]);
                    }
                }
            }
        }
        other => ck.push(format!(
            "`{}`: expected \"string\", \"number\", \"integer\", \"boolean\" or \"array\", \
             found {}",
            join(path, "type"),
            found(&Value::String(other.to_owned()))
        )),
    }
}

/// `{const: string, title: string}` of the titled enum schemas.
fn titled_const(ck: &mut Ck, v: &Value, path: &str) {
    if let Some(obj) = ck.obj(v, path) {
        ck.field(obj, path, "const", Kind::Str, true);
        ck.field(obj, path, "title", Kind::Str, true);
    }
}

/// `CreateMessageRequestParams` (deprecated sampling).
fn create_message_params(ck: &mut Ck, params: &Map<String, Value>, path: &str) {
    ck.each(params, path, "messages", true, sampling_message);
    ck.field(params, path, "maxTokens", Kind::Int, true);
    ck.field(params, path, "systemPrompt", Kind::Str, false);
    if let Some(ctx) = ck.field(params, path, "includeContext", Kind::Str, false) {
        ck.one_of(
            ctx,
            &join(path, "includeContext"),
            &["none", "thisServer", "allServers"],
        );
    }
    ck.field(params, path, "temperature", Kind::Num, false);
    ck.strings(params, path, "stopSequences", false);
    ck.field(params, path, "metadata", Kind::Obj, false);
    if let Some(Value::Object(prefs)) = ck.field(params, path, "modelPreferences", Kind::Obj, false)
    {
        let pp = join(path, "modelPreferences");
        ck.each(prefs, &pp, "hints", false, |ck, v, p| {
            if let Some(hint) = ck.obj(v, p) {
                ck.field(hint, p, "name", Kind::Str, false);
            }
        });
        for key in ["costPriority", "speedPriority", "intelligencePriority"] {
            ck.unit_interval(prefs, &pp, key);
        }
    }
    ck.each(params, path, "tools", false, tool);
    if let Some(Value::Object(choice)) = ck.field(params, path, "toolChoice", Kind::Obj, false) {
        let cp = join(path, "toolChoice");
        if let Some(mode) = ck.field(choice, &cp, "mode", Kind::Str, false) {
            ck.one_of(mode, &join(&cp, "mode"), &["auto", "none", "required"]);
        }
    }
}

/// `SamplingMessage`: `role` and one content block or an array of them.
fn sampling_message(ck: &mut Ck, v: &Value, path: &str) {
    let Some(obj) = ck.obj(v, path) else {
        return;
    };
    if let Some(role) = ck.field(obj, path, "role", Kind::Str, true) {
        ck.one_of(role, &join(path, "role"), ROLES);
    }
    let cp = join(path, "content");
    match obj.get("content") {
        None => ck.push(format!(
            "`{cp}`: missing required field (expected a content block or an array of them)"
        )),
        Some(Value::Array(blocks)) => {
            for (i, block) in blocks.iter().enumerate() {
                sampling_content(ck, block, &format!("{cp}[{i}]"));
            }
        }
        Some(block) => sampling_content(ck, block, &cp),
    }
}

/// `SamplingMessageContentBlock`: the media blocks plus `tool_use` and `tool_result`.
fn sampling_content(ck: &mut Ck, v: &Value, path: &str) {
    let Some(obj) = ck.obj(v, path) else {
        return;
    };
    match obj.get("type").and_then(Value::as_str) {
        Some("tool_use") => {
            ck.field(obj, path, "id", Kind::Str, true);
            ck.field(obj, path, "name", Kind::Str, true);
            ck.field(obj, path, "input", Kind::Obj, true);
            ck.field(obj, path, "_meta", Kind::Obj, false);
        }
        Some("tool_result") => {
            ck.field(obj, path, "toolUseId", Kind::Str, true);
            ck.each(obj, path, "content", true, content_block);
            ck.field(obj, path, "isError", Kind::Bool, false);
            ck.field(obj, path, "_meta", Kind::Obj, false);
        }
        Some("text" | "image" | "audio") | None => content_block(ck, v, path),
        Some(other) => ck.push(format!(
            "`{}`: expected \"text\", \"image\", \"audio\", \"tool_use\" or \"tool_result\", \
             found {}",
            join(path, "type"),
            found(&Value::String(other.to_owned()))
        )),
    }
}

// ---------------------------------------------------------------------------------------------
// Shared object shapes
// ---------------------------------------------------------------------------------------------

const ROLES: &[&str] = &["user", "assistant"];

/// `ServerCapabilities` (spec digest §4).
fn server_capabilities(ck: &mut Ck, v: &Value, path: &str) {
    let Some(obj) = v.as_object() else {
        return;
    };
    for key in ["experimental", "extensions"] {
        ck.map_of_objects(obj, path, key);
    }
    for key in ["logging", "completions"] {
        ck.field(obj, path, key, Kind::Obj, false);
    }
    for (key, flags) in [
        ("prompts", &["listChanged"][..]),
        ("resources", &["subscribe", "listChanged"][..]),
        ("tools", &["listChanged"][..]),
    ] {
        if let Some(Value::Object(cap)) = ck.field(obj, path, key, Kind::Obj, false) {
            let cp = join(path, key);
            for flag in flags {
                ck.field(cap, &cp, flag, Kind::Bool, false);
            }
        }
    }
}

/// `ClientCapabilities` (spec digest §3), as echoed in `-32021` data.
fn client_capabilities(ck: &mut Ck, v: &Value, path: &str) {
    let Some(obj) = v.as_object() else {
        return;
    };
    for key in ["experimental", "extensions"] {
        ck.map_of_objects(obj, path, key);
    }
    ck.field(obj, path, "roots", Kind::Obj, false);
    for (key, subs) in [
        ("elicitation", ["form", "url"]),
        ("sampling", ["context", "tools"]),
    ] {
        if let Some(Value::Object(cap)) = ck.field(obj, path, key, Kind::Obj, false) {
            let cp = join(path, key);
            for sub in subs {
                ck.field(cap, &cp, sub, Kind::Obj, false);
            }
        }
    }
}

/// `Implementation` (`serverInfo`).
fn implementation(ck: &mut Ck, v: &Value, path: &str) {
    let Some(obj) = v.as_object() else {
        return;
    };
    ck.field(obj, path, "name", Kind::Str, true);
    ck.field(obj, path, "version", Kind::Str, true);
    ck.field(obj, path, "title", Kind::Str, false);
    ck.field(obj, path, "description", Kind::Str, false);
    ck.uri(obj, path, "websiteUrl", false);
    ck.each(obj, path, "icons", false, icon);
}

/// `Icon`.
fn icon(ck: &mut Ck, v: &Value, path: &str) {
    let Some(obj) = ck.obj(v, path) else {
        return;
    };
    ck.uri(obj, path, "src", true);
    ck.field(obj, path, "mimeType", Kind::Str, false);
    ck.strings(obj, path, "sizes", false);
    if let Some(theme) = ck.field(obj, path, "theme", Kind::Str, false) {
        ck.one_of(theme, &join(path, "theme"), &["light", "dark"]);
    }
}

/// `Annotations` of content and resources.
fn annotations(ck: &mut Ck, obj: &Map<String, Value>, path: &str) {
    let Some(Value::Object(ann)) = ck.field(obj, path, "annotations", Kind::Obj, false) else {
        return;
    };
    let ap = join(path, "annotations");
    if let Some(Value::Array(audience)) = ck.field(ann, &ap, "audience", Kind::Arr, false) {
        for (i, role) in audience.iter().enumerate() {
            let rp = format!("{ap}.audience[{i}]");
            if ck.is(role, &rp, Kind::Str) {
                ck.one_of(role, &rp, ROLES);
            }
        }
    }
    ck.unit_interval(ann, &ap, "priority");
    ck.field(ann, &ap, "lastModified", Kind::Str, false);
}

/// Fields shared by `Tool`, `Prompt`, `Resource`, `ResourceTemplate` and `ResourceLink`.
fn base_metadata(ck: &mut Ck, obj: &Map<String, Value>, path: &str) {
    ck.field(obj, path, "name", Kind::Str, true);
    ck.field(obj, path, "title", Kind::Str, false);
    ck.field(obj, path, "description", Kind::Str, false);
    ck.each(obj, path, "icons", false, icon);
    ck.field(obj, path, "_meta", Kind::Obj, false);
}

/// `Tool` (spec digest §12.1; the schema checks proper are in `conformance::schema`).
fn tool(ck: &mut Ck, v: &Value, path: &str) {
    let Some(obj) = ck.obj(v, path) else {
        return;
    };
    base_metadata(ck, obj, path);
    let ip = join(path, "inputSchema");
    if let Some(Value::Object(input)) = ck.field(obj, path, "inputSchema", Kind::Obj, true) {
        match input.get("type") {
            Some(Value::String(t)) if t == "object" => {}
            None => ck.push(format!(
                "`{ip}.type`: missing required field (expected \"object\")"
            )),
            Some(other) => ck.push(format!(
                "`{ip}.type`: expected \"object\", found {}",
                found(other)
            )),
        }
        ck.field(input, &ip, "$schema", Kind::Str, false);
    }
    if let Some(Value::Object(output)) = ck.field(obj, path, "outputSchema", Kind::Obj, false) {
        ck.field(
            output,
            &join(path, "outputSchema"),
            "$schema",
            Kind::Str,
            false,
        );
    }
    if let Some(Value::Object(ann)) = ck.field(obj, path, "annotations", Kind::Obj, false) {
        let ap = join(path, "annotations");
        ck.field(ann, &ap, "title", Kind::Str, false);
        for hint in [
            "readOnlyHint",
            "destructiveHint",
            "idempotentHint",
            "openWorldHint",
        ] {
            ck.field(ann, &ap, hint, Kind::Bool, false);
        }
    }
}

/// `Prompt` with its `PromptArgument`s (P-6).
fn prompt(ck: &mut Ck, v: &Value, path: &str) {
    let Some(obj) = ck.obj(v, path) else {
        return;
    };
    base_metadata(ck, obj, path);
    ck.each(obj, path, "arguments", false, |ck, v, p| {
        if let Some(arg) = ck.obj(v, p) {
            ck.field(arg, p, "name", Kind::Str, true);
            ck.field(arg, p, "title", Kind::Str, false);
            ck.field(arg, p, "description", Kind::Str, false);
            ck.field(arg, p, "required", Kind::Bool, false);
        }
    });
}

/// `PromptMessage`: `role` and one `ContentBlock`.
fn prompt_message(ck: &mut Ck, v: &Value, path: &str) {
    let Some(obj) = ck.obj(v, path) else {
        return;
    };
    if let Some(role) = ck.field(obj, path, "role", Kind::Str, true) {
        ck.one_of(role, &join(path, "role"), ROLES);
    }
    match obj.get("content") {
        None => ck.push(format!(
            "`{}`: missing required field (expected a content block)",
            join(path, "content")
        )),
        Some(content) => content_block(ck, content, &join(path, "content")),
    }
}

/// `Resource` (P-6: RFC 3986 `uri` and a `name`).
fn resource(ck: &mut Ck, v: &Value, path: &str) {
    let Some(obj) = ck.obj(v, path) else {
        return;
    };
    base_metadata(ck, obj, path);
    ck.uri(obj, path, "uri", true);
    ck.field(obj, path, "mimeType", Kind::Str, false);
    ck.field(obj, path, "size", Kind::Int, false);
    annotations(ck, obj, path);
}

/// `ResourceTemplate` (P-6: `uriTemplate` and `name`).
fn resource_template(ck: &mut Ck, v: &Value, path: &str) {
    let Some(obj) = ck.obj(v, path) else {
        return;
    };
    base_metadata(ck, obj, path);
    if let Some(Value::String(t)) = ck.field(obj, path, "uriTemplate", Kind::Str, true) {
        if let Some(problem) = uri_template_problem(t) {
            ck.push(format!(
                "`{}`: expected an RFC 6570 URI template, found {} ({problem})",
                join(path, "uriTemplate"),
                found(&Value::String(t.clone()))
            ));
        }
    }
    ck.field(obj, path, "mimeType", Kind::Str, false);
    annotations(ck, obj, path);
}

/// `TextResourceContents` | `BlobResourceContents`: a `uri` and exactly one of `text` and
/// `blob` (valid base64).
fn resource_contents(ck: &mut Ck, v: &Value, path: &str) {
    let Some(obj) = ck.obj(v, path) else {
        return;
    };
    ck.uri(obj, path, "uri", true);
    ck.field(obj, path, "mimeType", Kind::Str, false);
    ck.field(obj, path, "_meta", Kind::Obj, false);
    match (obj.contains_key("text"), obj.contains_key("blob")) {
        (true, true) => ck.push(format!(
            "`{path}`: expected exactly one of `text` or `blob`, found both"
        )),
        (false, false) => ck.push(format!(
            "`{path}`: expected exactly one of `text` or `blob`, found neither"
        )),
        (true, false) => {
            ck.field(obj, path, "text", Kind::Str, true);
        }
        (false, true) => ck.base64(obj, path, "blob"),
    }
}

/// `ContentBlock` by its `type`: text, image, audio, resource_link, resource (T-7 details).
fn content_block(ck: &mut Ck, v: &Value, path: &str) {
    let Some(obj) = ck.obj(v, path) else {
        return;
    };
    let Some(Value::String(kind)) = ck.field(obj, path, "type", Kind::Str, true) else {
        return;
    };
    match kind.as_str() {
        "text" => {
            ck.field(obj, path, "text", Kind::Str, true);
        }
        "image" | "audio" => {
            ck.base64(obj, path, "data");
            ck.field(obj, path, "mimeType", Kind::Str, true);
        }
        "resource_link" => {
            resource(ck, v, path);
            return;
        }
        "resource" => {
            if let Some(inner) = ck.field(obj, path, "resource", Kind::Obj, true) {
                resource_contents(ck, inner, &join(path, "resource"));
            }
        }
        other => {
            ck.push(format!(
                "`{}`: expected \"text\", \"image\", \"audio\", \"resource_link\" or \
                 \"resource\", found {}",
                join(path, "type"),
                found(&Value::String(other.to_owned()))
            ));
            return;
        }
    }
    ck.field(obj, path, "_meta", Kind::Obj, false);
    annotations(ck, obj, path);
}

// ---------------------------------------------------------------------------------------------
// The combinators
// ---------------------------------------------------------------------------------------------

/// Expected JSON kinds.
#[derive(Debug, Clone, Copy)]
enum Kind {
    Str,
    Int,
    Num,
    Bool,
    Obj,
    Arr,
    /// `RequestId` / `ProgressToken`: a string or an integer.
    Id,
}

impl Kind {
    fn matches(self, v: &Value) -> bool {
        match self {
            Kind::Str => v.is_string(),
            Kind::Int => is_integer(v),
            Kind::Num => v.is_number(),
            Kind::Bool => v.is_boolean(),
            Kind::Obj => v.is_object(),
            Kind::Arr => v.is_array(),
            Kind::Id => v.is_string() || is_integer(v),
        }
    }

    fn name(self) -> &'static str {
        match self {
            Kind::Str => "a string",
            Kind::Int => "an integer",
            Kind::Num => "a number",
            Kind::Bool => "a boolean",
            Kind::Obj => "an object",
            Kind::Arr => "an array",
            Kind::Id => "a string or an integer",
        }
    }
}

fn is_integer(v: &Value) -> bool {
    v.as_i64().is_some() || v.as_u64().is_some()
}

/// Collects problem strings.
#[derive(Default)]
struct Ck {
    out: Vec<String>,
}

impl Ck {
    fn push(&mut self, message: String) {
        self.out.push(message);
    }

    /// Checks `v` has `kind`; reports otherwise.
    fn is(&mut self, v: &Value, path: &str, kind: Kind) -> bool {
        let ok = kind.matches(v);
        if !ok {
            self.push(format!(
                "`{path}`: expected {}, found {}",
                kind.name(),
                found(v)
            ));
        }
        ok
    }

    /// `v` as an object, reporting when it is not one.
    fn obj<'v>(&mut self, v: &'v Value, path: &str) -> Option<&'v Map<String, Value>> {
        if self.is(v, path, Kind::Obj) {
            v.as_object()
        } else {
            None
        }
    }

    /// Field `key` of `obj`: reported when required and absent, or present with the wrong
    /// kind. Returns the value only when it is present and of the right kind.
    fn field<'v>(
        &mut self,
        obj: &'v Map<String, Value>,
        path: &str,
        key: &str,
        kind: Kind,
        required: bool,
    ) -> Option<&'v Value> {
        let fp = join(path, key);
        match obj.get(key) {
            None => {
                if required {
                    self.push(format!(
                        "`{fp}`: missing required field (expected {})",
                        kind.name()
                    ));
                }
                None
            }
            Some(v) => self.is(v, &fp, kind).then_some(v),
        }
    }

    /// Array field whose items are checked by `item` (called with `path.key[i]`).
    fn each<F: FnMut(&mut Ck, &Value, &str)>(
        &mut self,
        obj: &Map<String, Value>,
        path: &str,
        key: &str,
        required: bool,
        mut item: F,
    ) {
        if let Some(Value::Array(items)) = self.field(obj, path, key, Kind::Arr, required) {
            let fp = join(path, key);
            for (i, v) in items.iter().enumerate() {
                item(self, v, &format!("{fp}[{i}]"));
            }
        }
    }

    /// Array-of-strings field; returns the array when it is one.
    fn strings<'v>(
        &mut self,
        obj: &'v Map<String, Value>,
        path: &str,
        key: &str,
        required: bool,
    ) -> Option<&'v Value> {
        let array = self.field(obj, path, key, Kind::Arr, required)?;
        let fp = join(path, key);
        for (i, v) in array.as_array().into_iter().flatten().enumerate() {
            self.is(v, &format!("{fp}[{i}]"), Kind::Str);
        }
        Some(array)
    }

    /// Object field whose values must all be objects (`experimental`, `extensions`).
    fn map_of_objects(&mut self, obj: &Map<String, Value>, path: &str, key: &str) {
        if let Some(Value::Object(map)) = self.field(obj, path, key, Kind::Obj, false) {
            let fp = join(path, key);
            for (name, v) in map {
                self.is(v, &join(&fp, name), Kind::Obj);
            }
        }
    }

    /// String value `v` must be one of `allowed`.
    fn one_of(&mut self, v: &Value, path: &str, allowed: &[&str]) {
        if let Some(s) = v.as_str() {
            if !allowed.contains(&s) {
                let list: Vec<String> = allowed.iter().map(|a| format!("{a:?}")).collect();
                self.push(format!(
                    "`{path}`: expected one of {}, found {}",
                    list.join(", "),
                    found(v)
                ));
            }
        }
    }

    /// Optional number field within 0..=1.
    fn unit_interval(&mut self, obj: &Map<String, Value>, path: &str, key: &str) {
        if let Some(v) = self.field(obj, path, key, Kind::Num, false) {
            if v.as_f64().is_some_and(|n| !(0.0..=1.0).contains(&n)) {
                self.push(format!(
                    "`{}`: expected a number from 0 to 1, found {}",
                    join(path, key),
                    found(v)
                ));
            }
        }
    }

    /// String field holding an absolute RFC 3986 URI.
    fn uri(&mut self, obj: &Map<String, Value>, path: &str, key: &str, required: bool) {
        if let Some(Value::String(s)) = self.field(obj, path, key, Kind::Str, required) {
            if let Some(problem) = uri_problem(s) {
                self.push(format!(
                    "`{}`: expected an RFC 3986 URI, found {} ({problem})",
                    join(path, key),
                    found(&Value::String(s.clone()))
                ));
            }
        }
    }

    /// Required string field holding standard base64.
    fn base64(&mut self, obj: &Map<String, Value>, path: &str, key: &str) {
        if let Some(Value::String(s)) = self.field(obj, path, key, Kind::Str, true) {
            if let Err(e) = base64::engine::general_purpose::STANDARD.decode(s) {
                self.push(format!(
                    "`{}`: expected base64 (RFC 4648, padded), which does not decode: {e}",
                    join(path, key)
                ));
            }
        }
    }
}

/// `path.key`, or `path["key"]` when the key is not a plain identifier.
fn join(path: &str, key: &str) -> String {
    let plain = !key.is_empty()
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$');
    match (path.is_empty(), plain) {
        (true, true) => key.to_owned(),
        (true, false) => format!("[{key:?}]"),
        (false, true) => format!("{path}.{key}"),
        (false, false) => format!("{path}[{key:?}]"),
    }
}

/// How a found value is described: scalars verbatim (shortened), containers by kind.
fn found(v: &Value) -> String {
    match v {
        Value::Array(_) => "an array".to_owned(),
        Value::Object(_) => "an object".to_owned(),
        scalar => {
            let text = scalar.to_string();
            if text.chars().count() > 60 {
                let short: String = text.chars().take(60).collect();
                format!("{short}…")
            } else {
                text
            }
        }
    }
}

/// Why `s` is not an absolute RFC 3986 URI (`scheme ":" …` with only URI characters and
/// well-formed percent-escapes), if it is not.
fn uri_problem(s: &str) -> Option<&'static str> {
    let Some((scheme, rest)) = s.split_once(':') else {
        return Some("no scheme");
    };
    let mut chars = scheme.chars();
    if !chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        || !chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
    {
        return Some("invalid scheme");
    }
    let bytes = rest.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if b == b'%' {
            let hex = |j: usize| bytes.get(j).is_some_and(u8::is_ascii_hexdigit);
            if !(hex(i + 1) && hex(i + 2)) {
                return Some("malformed percent-escape");
            }
            i += 3;
            continue;
        }
        let allowed = b.is_ascii_alphanumeric() || b"-._~!$&'()*+,;=:@/?#[]".contains(&b);
        if !allowed {
            return Some(if b.is_ascii() {
                "character not allowed in a URI (e.g. a space)"
            } else {
                "non-ASCII character (must be percent-encoded)"
            });
        }
        i += 1;
    }
    None
}

/// Why `t` is not a plausible RFC 6570 URI template (non-empty, balanced non-nested braces, no
/// spaces), if it is not.
fn uri_template_problem(t: &str) -> Option<&'static str> {
    if t.is_empty() {
        return Some("empty");
    }
    let mut open = false;
    for c in t.chars() {
        match c {
            '{' if open => return Some("nested `{`"),
            '{' => open = true,
            '}' if !open => return Some("unbalanced `}`"),
            '}' => open = false,
            c if c.is_whitespace() || c.is_control() => return Some("whitespace or control"),
            _ => {}
        }
    }
    open.then_some("unclosed `{`")
}

//! Typed wire-shape checks of what a 2026-07-28 server sends (checklist row M-10, with the
//! details of P-6, R-3 and D-6; spec-notes §2–§5, §8–§15).
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
//! - Every check returns [`Problem`]s. Most are M-10's ([`SHAPE_ID`]); those another check grades
//!   carry its id, so M-10 can leave them out: M-7 missing or non-string `resultType`, R-1 unknown
//!   `resultType` value, R-2 `input_required` on a method that may not return it, C-1 missing
//!   `ttlMs`/`cacheScope`, C-2 invalid `ttlMs`, C-3 invalid `cacheScope`.

use base64::Engine as _;
use serde_json::{Map, Value};

use crate::mcp::entries::Entries;

pub(crate) use super::problem::Problem;

/// The requirement the shape checks grade (M-10: every message matches the schema); problems
/// with another id belong to the check named by it.
pub(crate) const SHAPE_ID: &str = "M-10";

/// The problems M-10 grades (the others belong to another check).
pub(crate) fn own(problems: Vec<Problem>) -> Vec<Problem> {
    problems.into_iter().filter(|problem| problem.id == SHAPE_ID).collect()
}

/// Checks a `result` object against the shape of the method that was requested (spec-notes
/// §4, §9–§14; `schema.ts` `*Result`): `server/discover`, `tools/list`, `tools/call`, `prompts/list`,
/// `prompts/get`, `resources/list`, `resources/templates/list`, `resources/read`,
/// `completion/complete`, `subscriptions/listen`. A result with `resultType: "input_required"`
/// is checked as an `InputRequiredResult` instead. Other methods (extensions) get the
/// generic `Result` checks only. A missing `resultType` is reported (prefixed) and the result is
/// then checked as a complete one.
pub(crate) fn check_result(method: &str, result: &Value) -> Vec<Problem> {
    check_answer(method, result, None)
}

/// [`check_result`] for an answer whose list entries were kept apart
/// ([`crate::mcp::exchange::Exchange::entries`]): `entries` stands for the result's `tools`,
/// `prompts`, … array, and each entry is parsed and checked in turn.
pub(crate) fn check_answer(method: &str, result: &Value, entries: Option<&Entries>) -> Vec<Problem> {
    let mut ck = Ck::default();
    let path = "result";
    let Some(obj) = ck.obj(result, path) else {
        return ck.out;
    };
    result_meta(&mut ck, obj, path);
    let result_type = match obj.get("resultType") {
        None => {
            ck.push_for("M-7", format!("`{path}.resultType`: missing required field (expected a string)"));
            "complete"
        }
        Some(Value::String(t)) => t.as_str(),
        Some(other) => {
            ck.push_for("M-7", format!("`{path}.resultType`: expected a string, found {}", found(other)));
            return ck.out;
        }
    };
    match result_type {
        "complete" => complete_result(&mut ck, method, obj, path, entries),
        "input_required" => {
            if !matches!(method, "tools/call" | "prompts/get" | "resources/read") {
                ck.push_for(
                    "R-2",
                    format!(
                        "`{path}.resultType`: \"input_required\" is not allowed on `{method}` \
                     (only tools/call, prompts/get, resources/read)"
                    ),
                );
            }
            input_required_result(&mut ck, obj, path);
        }
        other => ck.push_for(
            "R-1",
            format!(
                "`{path}.resultType`: expected \"complete\" or \"input_required\" (or a value \
             of a negotiated extension), found {}",
                found(&Value::String(other.to_owned()))
            ),
        ),
    }
    ck.out
}

/// Checks a JSON-RPC `error` object (spec-notes §8; `SCH` `Error`, `HeaderMismatchError`,
/// `MissingRequiredClientCapabilityError`, `UnsupportedProtocolVersionError`): `code` an
/// integer, `message` a string, `data` anything; for `-32021`, `data.requiredCapabilities` is a
/// `ClientCapabilities` object; for `-32022`, `data.supported` is a string array and
/// `data.requested` a string. Which codes may be emitted at all (M-8) is not checked here.
pub(crate) fn check_error(error: &Value) -> Vec<Problem> {
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

/// Checks a notification a server sent, by its `method` (spec-notes §5, §14, §15; `SCH`
/// `ServerNotification`): `notifications/cancelled`, `notifications/progress`,
/// `notifications/message`, `notifications/subscriptions/acknowledged`,
/// `notifications/{tools,prompts,resources}/list_changed`, `notifications/resources/updated`.
/// `params._meta["io.modelcontextprotocol/subscriptionId"]` is a string or integer when
/// present. Removed notifications (`notifications/elicitation/complete`) are flagged; other
/// unknown methods are not (an extension may define them) beyond `params` being an object.
pub(crate) fn check_notification(message: &Value) -> Vec<Problem> {
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
            ck.field(meta, "params._meta", "io.modelcontextprotocol/subscriptionId", Kind::Id, false);
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
                    ck.push("`params.data`: missing required field (expected any JSON value)".into());
                }
                ck.field(params, p, "logger", Kind::Str, false);
            }
        }
        "notifications/subscriptions/acknowledged" => {
            if let Some(params) = required(&mut ck) {
                if let Some(Value::Object(filter)) = ck.field(params, p, "notifications", Kind::Obj, true) {
                    let fp = "params.notifications";
                    for key in ["toolsListChanged", "promptsListChanged", "resourcesListChanged"] {
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
        "notifications/elicitation/complete" => {
            ck.push(format!("`method`: `{method}` was removed in 2026-07-28 (a server does not send it)"))
        }
        _ => {}
    }
    ck.out
}

/// Checks the JSON-RPC envelope of any message a server sent (spec-notes §2; `SCH`
/// `JSONRPCResultResponse`, `JSONRPCErrorResponse`, `JSONRPCNotification`): an object with
/// `jsonrpc: "2.0"`; a message with `method` has no `result`/`error`, a string `method`, an
/// object `params` when present and a string-or-integer `id` when present; any other message
/// is a response with exactly one of `result` (an object) and `error` (an object), and an `id`
/// that is a string or integer: required on results; on errors optional and also allowed to
/// be `null` (JSON-RPC 2.0 §5 uses `null` when the request id could not be read).
pub(crate) fn check_envelope(message: &Value) -> Vec<Problem> {
    let mut ck = Ck::default();
    let Some(obj) = ck.obj(message, "message") else {
        return ck.out;
    };
    match obj.get("jsonrpc") {
        Some(Value::String(v)) if v == "2.0" => {}
        None => ck.push("`jsonrpc`: missing required field (expected \"2.0\")".to_owned()),
        Some(other) => ck.push(format!("`jsonrpc`: expected \"2.0\", found {}", found(other))),
    }
    let has_result = obj.contains_key("result");
    let has_error = obj.contains_key("error");
    if obj.contains_key("method") {
        ck.field(obj, "", "method", Kind::Str, true);
        ck.field(obj, "", "params", Kind::Obj, false);
        ck.field(obj, "", "id", Kind::Id, false);
        if has_result || has_error {
            ck.push("`method`: a message with `method` must not also carry `result` or `error`".to_owned());
        }
        return ck.out;
    }
    match (has_result, has_error) {
        (true, true) => ck.push("`result`/`error`: expected exactly one of `result` or `error`, found both".to_owned()),
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

/// Methods whose complete results carry caching hints (spec-notes §10).
const CACHEABLE: &[&str] =
    &["server/discover", "tools/list", "prompts/list", "resources/list", "resources/templates/list", "resources/read"];

const LOG_LEVELS: &[&str] = &["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"];

fn complete_result(ck: &mut Ck, method: &str, obj: &Map<String, Value>, path: &str, entries: Option<&Entries>) {
    // A list whose entries were kept apart: each is parsed and checked in turn.
    if let (Some(entries), Some(key)) = (entries, crate::mcp::entries::list_key(method)) {
        let item: fn(&mut Ck, &Value, &str) = match key {
            "tools" => tool,
            "prompts" => prompt,
            "resources" => resource,
            _ => resource_template,
        };
        if CACHEABLE.contains(&method) {
            caching_hints(ck, obj, path);
        }
        ck.field(obj, path, "nextCursor", Kind::Str, false);
        let list = join(path, key);
        for (index, entry) in entries.iter().enumerate() {
            item(ck, &entry, &format!("{list}[{index}]"));
        }
        return;
    }
    if CACHEABLE.contains(&method) {
        caching_hints(ck, obj, path);
    }
    if matches!(method, "tools/list" | "prompts/list" | "resources/list" | "resources/templates/list") {
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
                        ck.push(format!("`{cp}.values`: expected at most 100 items, found {}", values.len()));
                    }
                }
                ck.field(c, &cp, "total", Kind::Int, false);
                ck.field(c, &cp, "hasMore", Kind::Bool, false);
            }
        }
        "subscriptions/listen" => {
            let mp = join(path, "_meta");
            if let Some(Value::Object(meta)) = ck.field(obj, path, "_meta", Kind::Obj, true) {
                ck.field(meta, &mp, "io.modelcontextprotocol/subscriptionId", Kind::Id, true);
            }
        }
        _ => {}
    }
}

/// `ttlMs`/`cacheScope` (spec-notes §10), prefixed: graded by C-1/C-2/C-3.
fn caching_hints(ck: &mut Ck, obj: &Map<String, Value>, path: &str) {
    match obj.get("ttlMs") {
        None => ck.push_for("C-1", format!("`{path}.ttlMs`: missing required field (expected an integer ≥ 0)")),
        Some(v) if v.as_u64().is_some() => {}
        Some(v) => ck.push_for("C-2", format!("`{path}.ttlMs`: expected an integer ≥ 0, found {}", found(v))),
    }
    match obj.get("cacheScope") {
        None => ck.push_for(
            "C-1",
            format!("`{path}.cacheScope`: missing required field (expected \"public\" or \"private\")"),
        ),
        Some(Value::String(s)) if s == "public" || s == "private" => {}
        Some(v) => {
            ck.push_for("C-3", format!("`{path}.cacheScope`: expected \"public\" or \"private\", found {}", found(v)))
        }
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

/// `InputRequiredResult` (R-3; spec-notes §9.2).
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

/// One `InputRequest`: `{method, params}` without `jsonrpc`/`id` (spec-notes §9.2).
fn input_request(ck: &mut Ck, v: &Value, path: &str) {
    let Some(obj) = ck.obj(v, path) else {
        return;
    };
    for key in ["jsonrpc", "id"] {
        if obj.contains_key(key) {
            ck.push(format!("`{}`: input requests are not JSON-RPC requests and carry no `{key}`", join(path, key)));
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
            let Some(Value::Object(schema)) = ck.field(params, path, "requestedSchema", Kind::Obj, true) else {
                return;
            };
            match schema.get("type") {
                Some(Value::String(t)) if t == "object" => {}
                None => ck.push(format!("`{sp}.type`: missing required field (expected \"object\")")),
                Some(other) => ck.push(format!("`{sp}.type`: expected \"object\", found {}", found(other))),
            }
            ck.field(schema, &sp, "$schema", Kind::Str, false);
            ck.strings(schema, &sp, "required", false);
            if let Some(Value::Object(props)) = ck.field(schema, &sp, "properties", Kind::Obj, true) {
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
                ck.one_of(format, &join(path, "format"), &["date", "date-time", "email", "uri"]);
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
        ck.one_of(ctx, &join(path, "includeContext"), &["none", "thisServer", "allServers"]);
    }
    ck.field(params, path, "temperature", Kind::Num, false);
    ck.strings(params, path, "stopSequences", false);
    ck.field(params, path, "metadata", Kind::Obj, false);
    if let Some(Value::Object(prefs)) = ck.field(params, path, "modelPreferences", Kind::Obj, false) {
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
        None => ck.push(format!("`{cp}`: missing required field (expected a content block or an array of them)")),
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

/// `ServerCapabilities` (spec-notes §4).
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

/// `ClientCapabilities` (spec-notes §3), as echoed in `-32021` data.
fn client_capabilities(ck: &mut Ck, v: &Value, path: &str) {
    let Some(obj) = v.as_object() else {
        return;
    };
    for key in ["experimental", "extensions"] {
        ck.map_of_objects(obj, path, key);
    }
    ck.field(obj, path, "roots", Kind::Obj, false);
    for (key, subs) in [("elicitation", ["form", "url"]), ("sampling", ["context", "tools"])] {
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

/// `Tool` (spec-notes §12.1; the schema checks proper are in `conformance::schema`).
fn tool(ck: &mut Ck, v: &Value, path: &str) {
    let Some(obj) = ck.obj(v, path) else {
        return;
    };
    base_metadata(ck, obj, path);
    let ip = join(path, "inputSchema");
    if let Some(Value::Object(input)) = ck.field(obj, path, "inputSchema", Kind::Obj, true) {
        match input.get("type") {
            Some(Value::String(t)) if t == "object" => {}
            None => ck.push(format!("`{ip}.type`: missing required field (expected \"object\")")),
            Some(other) => ck.push(format!("`{ip}.type`: expected \"object\", found {}", found(other))),
        }
        ck.field(input, &ip, "$schema", Kind::Str, false);
    }
    if let Some(Value::Object(output)) = ck.field(obj, path, "outputSchema", Kind::Obj, false) {
        ck.field(output, &join(path, "outputSchema"), "$schema", Kind::Str, false);
    }
    if let Some(Value::Object(ann)) = ck.field(obj, path, "annotations", Kind::Obj, false) {
        let ap = join(path, "annotations");
        ck.field(ann, &ap, "title", Kind::Str, false);
        for hint in ["readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"] {
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
        None => ck.push(format!("`{}`: missing required field (expected a content block)", join(path, "content"))),
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
        (true, true) => ck.push(format!("`{path}`: expected exactly one of `text` or `blob`, found both")),
        (false, false) => ck.push(format!("`{path}`: expected exactly one of `text` or `blob`, found neither")),
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
    out: Vec<Problem>,
}

impl Ck {
    /// An M-10 problem.
    fn push(&mut self, message: String) {
        self.out.push(Problem::fail(SHAPE_ID, message));
    }

    /// A problem that the check `id` grades.
    fn push_for(&mut self, id: &'static str, message: String) {
        self.out.push(Problem::fail(id, message));
    }

    /// Checks `v` has `kind`; reports otherwise.
    fn is(&mut self, v: &Value, path: &str, kind: Kind) -> bool {
        let ok = kind.matches(v);
        if !ok {
            self.push(format!("`{path}`: expected {}, found {}", kind.name(), found(v)));
        }
        ok
    }

    /// `v` as an object, reporting when it is not one.
    fn obj<'v>(&mut self, v: &'v Value, path: &str) -> Option<&'v Map<String, Value>> {
        if self.is(v, path, Kind::Obj) { v.as_object() } else { None }
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
                    self.push(format!("`{fp}`: missing required field (expected {})", kind.name()));
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
    fn strings<'v>(&mut self, obj: &'v Map<String, Value>, path: &str, key: &str, required: bool) -> Option<&'v Value> {
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
                self.push(format!("`{path}`: expected one of {}, found {}", list.join(", "), found(v)));
            }
        }
    }

    /// Optional number field within 0..=1.
    fn unit_interval(&mut self, obj: &Map<String, Value>, path: &str, key: &str) {
        if let Some(v) = self.field(obj, path, key, Kind::Num, false) {
            if v.as_f64().is_some_and(|n| !(0.0..=1.0).contains(&n)) {
                self.push(format!("`{}`: expected a number from 0 to 1, found {}", join(path, key), found(v)));
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
    let plain = !key.is_empty() && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$');
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
        scalar => crate::text::clip(&scalar.to_string(), 60),
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

#[cfg(test)]
mod tests {
    use super::*;

    // The tests read problems as text, tagged with the id of the check that grades them when it
    // is not M-10 (as the reports show them joined).
    fn texts(problems: Vec<Problem>) -> Vec<String> {
        problems.iter().map(|problem| problem.tagged(SHAPE_ID)).collect()
    }
    fn check_result(method: &str, result: &Value) -> Vec<String> {
        texts(super::check_result(method, result))
    }
    fn check_error(error: &Value) -> Vec<String> {
        texts(super::check_error(error))
    }
    fn check_notification(message: &Value) -> Vec<String> {
        texts(super::check_notification(message))
    }
    fn check_envelope(message: &Value) -> Vec<String> {
        texts(super::check_envelope(message))
    }
    /// The id a tagged text names (`[C-1] …` → `C-1`).
    fn graded_elsewhere(text: &str) -> Option<&str> {
        text.strip_prefix('[')?.split_once("] ").map(|(id, _)| id)
    }
    use serde_json::json;

    #[track_caller]
    fn clean(problems: Vec<String>) {
        assert!(problems.is_empty(), "unexpected problems: {problems:#?}");
    }

    /// Exactly one problem, containing every fragment.
    #[track_caller]
    fn one(problems: Vec<String>, fragments: &[&str]) {
        assert_eq!(problems.len(), 1, "expected one problem: {problems:#?}");
        for f in fragments {
            assert!(problems[0].contains(f), "{:?} lacks {f:?}", problems[0]);
        }
    }

    fn cacheable(mut extra: Value) -> Value {
        let obj = extra.as_object_mut().unwrap();
        obj.insert("resultType".into(), json!("complete"));
        obj.insert("ttlMs".into(), json!(60000));
        obj.insert("cacheScope".into(), json!("public"));
        extra
    }

    fn complete(mut extra: Value) -> Value {
        extra.as_object_mut().unwrap().insert("resultType".into(), json!("complete"));
        extra
    }

    // ---- graded elsewhere ----

    #[test]
    fn problems_graded_elsewhere_carry_their_id() {
        let problems = super::check_result("tools/list", &json!({"tools": []}));
        let ids: Vec<&str> = problems.iter().map(|problem| problem.id).collect();
        assert!(ids.contains(&"M-7") && ids.contains(&"C-1"), "{problems:?}");
        assert!(own(problems).is_empty(), "M-10 leaves the others out");
    }

    // ---- server/discover ----

    #[test]
    fn discover_kept() {
        clean(check_result(
            "server/discover",
            &json!({"resultType": "complete", "supportedVersions": ["2026-07-28"],
                    "capabilities": {"tools": {}, "resources": {"subscribe": true, "listChanged": false},
                                     "extensions": {"io.modelcontextprotocol/tasks": {}}},
                    "ttlMs": 3600000, "cacheScope": "public", "instructions": "hi",
                    "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "s", "version": "1"}},
                    "vendorExtra": [1, 2]}),
        ));
    }

    #[test]
    fn discover_broken() {
        one(
            check_result("server/discover", &cacheable(json!({"supportedVersions": "2026-07-28", "capabilities": {}}))),
            &["`result.supportedVersions`: expected an array, found \"2026-07-28\""],
        );
        one(
            check_result(
                "server/discover",
                &cacheable(json!({"supportedVersions": [], "capabilities": {"tools": {"listChanged": "yes"}}})),
            ),
            &["`result.capabilities.tools.listChanged`: expected a boolean"],
        );
        one(
            check_result("server/discover", &cacheable(json!({"supportedVersions": []}))),
            &["`result.capabilities`: missing required field"],
        );
        one(
            check_result(
                "server/discover",
                &cacheable(json!({"supportedVersions": [], "capabilities": {"extensions": {"x/y": true}}})),
            ),
            &["`result.capabilities.extensions[\"x/y\"]`: expected an object, found true"],
        );
        one(
            check_result(
                "server/discover",
                &cacheable(json!({"supportedVersions": [], "capabilities": {},
                    "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "s"}}})),
            ),
            &["`result._meta[\"io.modelcontextprotocol/serverInfo\"].version`: missing required"],
        );
    }

    #[test]
    fn caching_and_result_type_findings_are_prefixed() {
        let base = json!({"supportedVersions": [], "capabilities": {}});
        let p = check_result("server/discover", &complete(base.clone()));
        assert_eq!(p.len(), 2, "{p:#?}");
        assert!(p.iter().all(|m| graded_elsewhere(m) == Some("C-1")), "{p:#?}");

        for (ttl, scope, id) in [
            (json!(-1), json!("public"), "C-2"),
            (json!(1.5), json!("public"), "C-2"),
            (json!("60"), json!("private"), "C-2"),
            (json!(0), json!("shared"), "C-3"),
        ] {
            let mut r = complete(base.clone());
            r["ttlMs"] = ttl;
            r["cacheScope"] = scope;
            let p = check_result("server/discover", &r);
            assert_eq!(p.len(), 1, "{p:#?}");
            assert_eq!(graded_elsewhere(&p[0]), Some(id), "{p:#?}");
        }

        let mut r = base.clone();
        r["ttlMs"] = json!(0);
        r["cacheScope"] = json!("private");
        let p = check_result("server/discover", &r);
        assert_eq!(p.len(), 1);
        assert_eq!(graded_elsewhere(&p[0]), Some("M-7"));

        let p = check_result("tools/call", &json!({"resultType": 1, "content": []}));
        assert_eq!(graded_elsewhere(&p[0]), Some("M-7"));
        let p = check_result("tools/call", &json!({"resultType": "done", "content": []}));
        assert_eq!(graded_elsewhere(&p[0]), Some("R-1"));
        // Not cacheable: no hints needed.
        clean(check_result("tools/call", &complete(json!({"content": []}))));
    }

    // ---- tools/list ----

    #[test]
    fn tools_list_kept_and_broken() {
        let good = json!({"name": "t", "title": "T", "description": "d",
            "inputSchema": {"type": "object", "$schema": "https://json-schema.org/draft/2020-12/schema"},
            "outputSchema": {"type": "array"},
            "annotations": {"readOnlyHint": true, "title": "x"},
            "icons": [{"src": "https://example.com/i.png", "sizes": ["48x48"], "theme": "dark"}],
            "_meta": {}});
        clean(check_result("tools/list", &cacheable(json!({"tools": [good.clone()], "nextCursor": ""}))));
        one(
            check_result(
                "tools/list",
                &cacheable(json!({"tools": [good.clone(), good.clone(), {"name": "x", "inputSchema": null}]})),
            ),
            &["`result.tools[2].inputSchema`: expected an object, found null"],
        );
        one(
            check_result("tools/list", &cacheable(json!({"tools": [{"name": "x", "inputSchema": {}}]}))),
            &["`result.tools[0].inputSchema.type`: missing required field"],
        );
        one(
            check_result("tools/list", &cacheable(json!({"tools": [{"inputSchema": {"type": "object"}}]}))),
            &["`result.tools[0].name`: missing required field (expected a string)"],
        );
        one(
            check_result("tools/list", &cacheable(json!({"tools": [good.clone()], "nextCursor": 2}))),
            &["`result.nextCursor`: expected a string, found 2"],
        );
        one(
            check_result("tools/list", &cacheable(json!({}))),
            &["`result.tools`: missing required field (expected an array)"],
        );
        let mut bad_icon = good.clone();
        bad_icon["icons"][0]["theme"] = json!("blue");
        one(
            check_result("tools/list", &cacheable(json!({"tools": [bad_icon]}))),
            &["`result.tools[0].icons[0].theme`: expected one of \"light\", \"dark\", found \"blue\""],
        );
        let mut bad_hint = good;
        bad_hint["annotations"]["openWorldHint"] = json!(1);
        one(
            check_result("tools/list", &cacheable(json!({"tools": [bad_hint]}))),
            &["`result.tools[0].annotations.openWorldHint`: expected a boolean, found 1"],
        );
    }

    // ---- tools/call and content blocks ----

    #[test]
    fn call_tool_kept() {
        clean(check_result(
            "tools/call",
            &complete(json!({"content": [
                {"type": "text", "text": "hi", "annotations": {"audience": ["user"], "priority": 0.5}},
                {"type": "image", "data": "aGVsbG8=", "mimeType": "image/png"},
                {"type": "audio", "data": "", "mimeType": "audio/wav"},
                {"type": "resource_link", "uri": "file:///a%20b.txt", "name": "a", "size": 3},
                {"type": "resource", "resource": {"uri": "test://x", "text": "t"}},
                {"type": "resource", "resource": {"uri": "test://y", "blob": "AAEC", "mimeType": "x/y"}}
            ], "structuredContent": null, "isError": false})),
        ));
    }

    #[test]
    fn call_tool_broken() {
        one(
            check_result("tools/call", &complete(json!({}))),
            &["`result.content`: missing required field (expected an array)"],
        );
        one(
            check_result("tools/call", &complete(json!({"content": [], "isError": "no"}))),
            &["`result.isError`: expected a boolean, found \"no\""],
        );
        one(
            check_result(
                "tools/call",
                &complete(json!({"content": [{"type": "image", "data": "not base64!", "mimeType": "image/png"}]})),
            ),
            &["`result.content[0].data`: expected base64"],
        );
        one(
            check_result("tools/call", &complete(json!({"content": [{"type": "image", "data": "aGVsbG8="}]}))),
            &["`result.content[0].mimeType`: missing required field"],
        );
        let p = check_result(
            "tools/call",
            &complete(json!({"content": [{"type": "image", "data": "aGVsbG8", "mimeType": "i/p"}]})),
        );
        one(p, &["`result.content[0].data`: expected base64 (RFC 4648, padded)"]);
        one(
            check_result("tools/call", &complete(json!({"content": [{"type": "video"}]}))),
            &["`result.content[0].type`: expected \"text\", \"image\""],
        );
        one(
            check_result("tools/call", &complete(json!({"content": [{"text": "x"}]}))),
            &["`result.content[0].type`: missing required field"],
        );
        one(
            check_result(
                "tools/call",
                &complete(
                    json!({"content": [{"type": "resource", "resource": {"uri": "a:b", "text": "t", "blob": "AA=="}}]}),
                ),
            ),
            &["`result.content[0].resource`: expected exactly one of `text` or `blob`, found both"],
        );
        one(
            check_result(
                "tools/call",
                &complete(json!({"content": [{"type": "text", "text": "x", "annotations": {"priority": 2}}]})),
            ),
            &["`result.content[0].annotations.priority`: expected a number from 0 to 1, found 2"],
        );
        one(
            check_result(
                "tools/call",
                &complete(json!({"content": [{"type": "text", "text": "x", "annotations": {"audience": ["system"]}}]})),
            ),
            &["`result.content[0].annotations.audience[0]`: expected one of \"user\", \"assistant\""],
        );
        one(
            check_result(
                "tools/call",
                &complete(json!({"content": [{"type": "resource_link", "uri": "https://x/y"}]})),
            ),
            &["`result.content[0].name`: missing required field"],
        );
    }

    // ---- prompts ----

    #[test]
    fn prompts_kept_and_broken() {
        clean(check_result(
            "prompts/list",
            &cacheable(json!({"prompts": [{"name": "p", "arguments": [{"name": "a", "required": true}]}]})),
        ));
        one(
            check_result(
                "prompts/list",
                &cacheable(json!({"prompts": [{"name": "p", "arguments": [{"description": "no name"}]}]})),
            ),
            &["`result.prompts[0].arguments[0].name`: missing required field"],
        );
        one(
            check_result(
                "prompts/list",
                &cacheable(json!({"prompts": [{"name": "p", "arguments": [{"name": "a", "required": "yes"}]}]})),
            ),
            &["`result.prompts[0].arguments[0].required`: expected a boolean"],
        );
        clean(check_result(
            "prompts/get",
            &complete(json!({"description": "d", "messages": [
                {"role": "user", "content": {"type": "text", "text": "hi"}},
                {"role": "assistant", "content": {"type": "audio", "data": "AAAA", "mimeType": "audio/wav"}}
            ]})),
        ));
        one(
            check_result(
                "prompts/get",
                &complete(json!({"messages": [{"role": "system", "content": {"type": "text", "text": "hi"}}]})),
            ),
            &["`result.messages[0].role`: expected one of \"user\", \"assistant\", found \"system\""],
        );
        one(
            check_result("prompts/get", &complete(json!({"messages": [{"role": "user"}]}))),
            &["`result.messages[0].content`: missing required field"],
        );
        one(
            check_result("prompts/get", &complete(json!({"messages": {}}))),
            &["`result.messages`: expected an array, found an object"],
        );
    }

    // ---- resources ----

    #[test]
    fn resources_kept_and_broken() {
        clean(check_result(
            "resources/list",
            &cacheable(json!({"resources": [
                {"uri": "file:///tmp/a.txt", "name": "a", "mimeType": "text/plain", "size": 10,
                 "annotations": {"lastModified": "2025-01-01T00:00:00Z"}},
                {"uri": "custom+scheme://host/p?q=1#f", "name": "b"}
            ]})),
        ));
        one(
            check_result("resources/list", &cacheable(json!({"resources": [{"uri": "no scheme", "name": "a"}]}))),
            &["`result.resources[0].uri`: expected an RFC 3986 URI", "no scheme"],
        );
        one(
            check_result("resources/list", &cacheable(json!({"resources": [{"uri": "file:///a b", "name": "a"}]}))),
            &["`result.resources[0].uri`: expected an RFC 3986 URI"],
        );
        one(
            check_result("resources/list", &cacheable(json!({"resources": [{"uri": "x:%zz", "name": "a"}]}))),
            &["malformed percent-escape"],
        );
        one(
            check_result("resources/list", &cacheable(json!({"resources": [{"uri": "1x:y", "name": "a"}]}))),
            &["invalid scheme"],
        );
        one(
            check_result("resources/list", &cacheable(json!({"resources": [{"uri": "x:y"}]}))),
            &["`result.resources[0].name`: missing required field"],
        );
        one(
            check_result(
                "resources/list",
                &cacheable(json!({"resources": [{"uri": "x:y", "name": "n", "size": 1.5}]})),
            ),
            &["`result.resources[0].size`: expected an integer, found 1.5"],
        );
        clean(check_result(
            "resources/templates/list",
            &cacheable(json!({"resourceTemplates": [{"uriTemplate": "file:///{path}", "name": "f"}]})),
        ));
        one(
            check_result("resources/templates/list", &cacheable(json!({"resourceTemplates": [{"name": "f"}]}))),
            &["`result.resourceTemplates[0].uriTemplate`: missing required field"],
        );
        one(
            check_result(
                "resources/templates/list",
                &cacheable(json!({"resourceTemplates": [{"uriTemplate": "file:///{path", "name": "f"}]})),
            ),
            &["RFC 6570", "unclosed"],
        );
    }

    #[test]
    fn read_resource_kept_and_broken() {
        clean(check_result(
            "resources/read",
            &cacheable(json!({"contents": [{"uri": "a:b", "text": ""}, {"uri": "a:c", "blob": "AAEC"}]})),
        ));
        one(
            check_result("resources/read", &cacheable(json!({"contents": [{"uri": "a:c", "blob": "%%%"}]}))),
            &["`result.contents[0].blob`: expected base64"],
        );
        one(
            check_result("resources/read", &cacheable(json!({"contents": [{"uri": "a:c"}]}))),
            &["`result.contents[0]`: expected exactly one of `text` or `blob`, found neither"],
        );
        one(
            check_result("resources/read", &cacheable(json!({"contents": [{"text": "x"}]}))),
            &["`result.contents[0].uri`: missing required field"],
        );
    }

    // ---- completion (D-6) ----

    #[test]
    fn completion_kept_and_broken() {
        clean(check_result(
            "completion/complete",
            &complete(json!({"completion": {"values": ["a", "b"], "total": 2, "hasMore": false}})),
        ));
        let many: Vec<String> = (0..101).map(|i| i.to_string()).collect();
        one(
            check_result("completion/complete", &complete(json!({"completion": {"values": many}}))),
            &["`result.completion.values`: expected at most 100 items, found 101"],
        );
        one(
            check_result("completion/complete", &complete(json!({"completion": {"values": ["a", 1]}}))),
            &["`result.completion.values[1]`: expected a string, found 1"],
        );
        one(
            check_result("completion/complete", &complete(json!({"completion": {"values": [], "total": 1.5}}))),
            &["`result.completion.total`: expected an integer"],
        );
        one(
            check_result("completion/complete", &complete(json!({"completion": {"values": [], "hasMore": "x"}}))),
            &["`result.completion.hasMore`: expected a boolean"],
        );
        one(
            check_result("completion/complete", &complete(json!({}))),
            &["`result.completion`: missing required field"],
        );
    }

    // ---- subscriptions/listen and generic results ----

    #[test]
    fn listen_result_and_generic_results() {
        clean(check_result(
            "subscriptions/listen",
            &complete(json!({"_meta": {"io.modelcontextprotocol/subscriptionId": 7}})),
        ));
        one(
            check_result("subscriptions/listen", &complete(json!({"_meta": {}}))),
            &["`result._meta[\"io.modelcontextprotocol/subscriptionId\"]`: missing required"],
        );
        one(
            check_result("subscriptions/listen", &complete(json!({}))),
            &["`result._meta`: missing required field (expected an object)"],
        );
        clean(check_result("tasks/get", &json!({"resultType": "complete", "anything": 1})));
        one(check_result("tools/call", &json!(null)), &["`result`: expected an object, found null"]);
        one(
            check_result("tasks/get", &complete(json!({"_meta": []}))),
            &["`result._meta`: expected an object, found an array"],
        );
    }

    // ---- input_required (R-3) ----

    #[test]
    fn input_required_kept() {
        clean(check_result("tools/call", &json!({"resultType": "input_required", "requestState": "opaque"})));
        clean(check_result(
            "prompts/get",
            &json!({"resultType": "input_required", "inputRequests": {
                "login": {"method": "elicitation/create", "params": {
                    "message": "Who?", "requestedSchema": {"type": "object", "properties": {
                        "name": {"type": "string", "minLength": 1, "format": "email"},
                        "age": {"type": "integer", "minimum": 0},
                        "ok": {"type": "boolean", "default": true},
                        "color": {"type": "string", "enum": ["red", "blue"]},
                        "size": {"type": "string", "oneOf": [{"const": "s", "title": "Small"}]},
                        "tags": {"type": "array", "items": {"type": "string", "enum": ["a"]}},
                        "more": {"type": "array", "items": {"anyOf": [{"const": "a", "title": "A"}]}}
                    }, "required": ["name"]}}},
                "web": {"method": "elicitation/create", "params": {
                    "mode": "url", "message": "Open", "url": "https://example.com/auth"}},
                "llm": {"method": "sampling/createMessage", "params": {
                    "messages": [{"role": "user", "content": {"type": "text", "text": "hi"}},
                                 {"role": "assistant", "content": [{"type": "tool_use", "id": "1", "name": "t", "input": {}}]}],
                    "maxTokens": 100, "includeContext": "none",
                    "modelPreferences": {"hints": [{"name": "claude"}], "costPriority": 0.3}}},
                "roots": {"method": "roots/list"}
            }, "requestState": "s"}),
        ));
    }

    #[test]
    fn input_required_broken() {
        one(
            check_result("resources/read", &json!({"resultType": "input_required"})),
            &["must carry `inputRequests` or `requestState`, found neither"],
        );
        let p = check_result("tools/list", &json!({"resultType": "input_required", "requestState": "x"}));
        assert_eq!(p.len(), 1, "{p:#?}");
        assert_eq!(graded_elsewhere(&p[0]), Some("R-2"));
        one(
            check_result("tools/call", &json!({"resultType": "input_required", "requestState": 5})),
            &["`result.requestState`: expected a string, found 5"],
        );
        one(
            check_result(
                "tools/call",
                &json!({"resultType": "input_required", "inputRequests": {"k": {"method": "ping", "params": {}}}}),
            ),
            &["`result.inputRequests.k.method`: expected \"elicitation/create\""],
        );
        one(
            check_result(
                "tools/call",
                &json!({"resultType": "input_required", "inputRequests": {"k": {"method": "roots/list", "jsonrpc": "2.0"}}}),
            ),
            &["`result.inputRequests.k.jsonrpc`: input requests are not JSON-RPC requests"],
        );
        one(
            check_result(
                "tools/call",
                &json!({"resultType": "input_required", "inputRequests": {"k": {"method": "elicitation/create",
                    "params": {"mode": "url", "message": "m", "url": "not a url"}}}}),
            ),
            &["`result.inputRequests.k.params.url`: expected an RFC 3986 URI"],
        );
        one(
            check_result(
                "tools/call",
                &json!({"resultType": "input_required", "inputRequests": {"k": {"method": "elicitation/create",
                    "params": {"message": "m", "requestedSchema": {"type": "object", "properties": {
                        "n": {"type": "object"}}}}}}}),
            ),
            &["`result.inputRequests.k.params.requestedSchema.properties.n.type`: expected \"string\""],
        );
        one(
            check_result(
                "tools/call",
                &json!({"resultType": "input_required", "inputRequests": {"k": {"method": "elicitation/create",
                    "params": {"message": "m"}}}}),
            ),
            &["`result.inputRequests.k.params.requestedSchema`: missing required field"],
        );
        one(
            check_result(
                "tools/call",
                &json!({"resultType": "input_required", "inputRequests": {"k": {"method": "sampling/createMessage",
                    "params": {"messages": []}}}}),
            ),
            &["`result.inputRequests.k.params.maxTokens`: missing required field (expected an integer)"],
        );
        one(
            check_result(
                "tools/call",
                &json!({"resultType": "input_required", "inputRequests": {"k": {"method": "elicitation/create"}}}),
            ),
            &["`result.inputRequests.k.params`: missing required field"],
        );
        one(
            check_result("tools/call", &json!({"resultType": "input_required", "inputRequests": []})),
            &["`result.inputRequests`: expected an object, found an array"],
        );
    }

    // ---- errors ----

    #[test]
    fn errors_kept() {
        clean(check_error(&json!({"code": -32602, "message": "Unknown tool", "data": {"uri": "x"}})));
        clean(check_error(&json!({"code": -32020, "message": "Header mismatch"})));
        clean(check_error(&json!({"code": -32021, "message": "m",
            "data": {"requiredCapabilities": {"elicitation": {}, "extensions": {"io.modelcontextprotocol/tasks": {}}}}})));
        clean(check_error(&json!({"code": -32022, "message": "Unsupported protocol version",
            "data": {"supported": ["2026-07-28", "2025-11-25"], "requested": "1900-01-01"}})));
    }

    #[test]
    fn errors_broken() {
        one(check_error(&json!({"code": "x", "message": "m"})), &["`error.code`: expected an integer, found \"x\""]);
        one(check_error(&json!({"code": -32600.5, "message": "m"})), &["`error.code`: expected an integer"]);
        one(check_error(&json!({"code": -32600})), &["`error.message`: missing required field"]);
        one(check_error(&json!("oops")), &["`error`: expected an object, found \"oops\""]);
        one(
            check_error(&json!({"code": -32021, "message": "m"})),
            &["`error.data`: missing required field (expected an object)"],
        );
        one(
            check_error(&json!({"code": -32021, "message": "m", "data": {"requiredCapabilities": ["elicitation"]}})),
            &["`error.data.requiredCapabilities`: expected an object, found an array"],
        );
        one(
            check_error(
                &json!({"code": -32021, "message": "m", "data": {"requiredCapabilities": {"elicitation": true}}}),
            ),
            &["`error.data.requiredCapabilities.elicitation`: expected an object, found true"],
        );
        one(
            check_error(
                &json!({"code": -32022, "message": "m", "data": {"supported": "2026-07-28", "requested": "x"}}),
            ),
            &["`error.data.supported`: expected an array"],
        );
        one(
            check_error(&json!({"code": -32022, "message": "m", "data": {"supported": []}})),
            &["`error.data.requested`: missing required field"],
        );
    }

    // ---- notifications ----

    #[test]
    fn notifications_kept() {
        for n in [
            json!({"jsonrpc": "2.0", "method": "notifications/progress",
                   "params": {"progressToken": "t", "progress": 0.5, "total": 1, "message": "half"}}),
            json!({"jsonrpc": "2.0", "method": "notifications/message",
                   "params": {"level": "warning", "data": null, "logger": "x"}}),
            json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                   "params": {"requestId": 3, "reason": "bye",
                              "_meta": {"io.modelcontextprotocol/subscriptionId": 3}}}),
            json!({"jsonrpc": "2.0", "method": "notifications/subscriptions/acknowledged",
                   "params": {"notifications": {"toolsListChanged": true, "resourceSubscriptions": ["a:b"]},
                              "_meta": {"io.modelcontextprotocol/subscriptionId": "L1"}}}),
            json!({"jsonrpc": "2.0", "method": "notifications/resources/updated", "params": {"uri": "file:///x"}}),
            json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}),
            json!({"jsonrpc": "2.0", "method": "notifications/prompts/list_changed", "params": {}}),
            json!({"jsonrpc": "2.0", "method": "com.example/custom", "params": {"any": 1}}),
        ] {
            clean(check_notification(&n));
        }
    }

    #[test]
    fn notifications_broken() {
        one(
            check_notification(&json!({"method": "notifications/progress", "params": {"progress": 1}})),
            &["`params.progressToken`: missing required field (expected a string or an integer)"],
        );
        one(
            check_notification(
                &json!({"method": "notifications/progress", "params": {"progressToken": 1, "progress": "1"}}),
            ),
            &["`params.progress`: expected a number, found \"1\""],
        );
        one(check_notification(&json!({"method": "notifications/progress"})), &["`params`: missing required field"]);
        one(
            check_notification(&json!({"method": "notifications/message", "params": {"level": "verbose", "data": 1}})),
            &["`params.level`: expected one of \"debug\""],
        );
        one(
            check_notification(&json!({"method": "notifications/message", "params": {"level": "info"}})),
            &["`params.data`: missing required field"],
        );
        one(
            check_notification(&json!({"method": "notifications/cancelled", "params": {"requestId": null}})),
            &["`params.requestId`: expected a string or an integer, found null"],
        );
        one(
            check_notification(&json!({"method": "notifications/subscriptions/acknowledged", "params": {}})),
            &["`params.notifications`: missing required field"],
        );
        one(
            check_notification(&json!({"method": "notifications/subscriptions/acknowledged",
                "params": {"notifications": {}, "_meta": {"io.modelcontextprotocol/subscriptionId": 1.5}}})),
            &["`params._meta[\"io.modelcontextprotocol/subscriptionId\"]`: expected a string or an integer"],
        );
        one(
            check_notification(&json!({"method": "notifications/resources/updated", "params": {"uri": "nope"}})),
            &["`params.uri`: expected an RFC 3986 URI"],
        );
        one(
            check_notification(&json!({"method": "notifications/tools/list_changed", "params": []})),
            &["`params`: expected an object, found an array"],
        );
        one(
            check_notification(&json!({"method": "notifications/elicitation/complete", "params": {}})),
            &["was removed in 2026-07-28"],
        );
        one(check_notification(&json!({"params": {}})), &["`method`: missing required field"]);
    }

    // ---- envelope ----

    #[test]
    fn envelopes_kept() {
        for m in [
            json!({"jsonrpc": "2.0", "id": 1, "result": {"resultType": "complete"}}),
            json!({"jsonrpc": "2.0", "id": "req-7", "result": {}}),
            json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32601, "message": "m"}}),
            json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32600, "message": "m"}}),
            json!({"jsonrpc": "2.0", "error": {"code": -32700, "message": "m"}}),
            json!({"jsonrpc": "2.0", "method": "notifications/progress", "params": {}}),
            json!({"jsonrpc": "2.0", "id": 9, "method": "sampling/createMessage"}),
        ] {
            clean(check_envelope(&m));
        }
    }

    #[test]
    fn envelopes_broken() {
        one(check_envelope(&json!({"id": 1, "result": {}})), &["`jsonrpc`: missing required field"]);
        one(
            check_envelope(&json!({"jsonrpc": "1.0", "id": 1, "result": {}})),
            &["`jsonrpc`: expected \"2.0\", found \"1.0\""],
        );
        one(check_envelope(&json!({"jsonrpc": "2.0", "id": 1, "result": {}, "error": {}})), &["found both"]);
        one(check_envelope(&json!({"jsonrpc": "2.0", "id": 1})), &["found none"]);
        one(
            check_envelope(&json!({"jsonrpc": "2.0", "result": {}})),
            &["`id`: missing required field (expected a string or an integer)"],
        );
        one(
            check_envelope(&json!({"jsonrpc": "2.0", "id": null, "result": {}})),
            &["`id`: expected a string or an integer, found null"],
        );
        one(
            check_envelope(&json!({"jsonrpc": "2.0", "id": 1.5, "result": {}})),
            &["`id`: expected a string or an integer, found 1.5"],
        );
        one(
            check_envelope(&json!({"jsonrpc": "2.0", "id": 1, "result": []})),
            &["`result`: expected an object, found an array"],
        );
        one(
            check_envelope(&json!({"jsonrpc": "2.0", "id": 1, "error": "bad"})),
            &["`error`: expected an object, found \"bad\""],
        );
        one(
            check_envelope(&json!({"jsonrpc": "2.0", "id": true, "error": {}})),
            &["`id`: expected a string or an integer, found true"],
        );
        one(
            check_envelope(&json!({"jsonrpc": "2.0", "method": "x", "result": {}})),
            &["must not also carry `result` or `error`"],
        );
        one(check_envelope(&json!({"jsonrpc": "2.0", "method": 5})), &["`method`: expected a string, found 5"]);
        one(check_envelope(&json!([1])), &["`message`: expected an object, found an array"]);
    }
}

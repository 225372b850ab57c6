//! Layer 3's trace settings: the W3C `tracestate` and `baggage` sent beside each request's
//! `traceparent` (`--trace-state`, `--baggage`; inputs `trace-state`, `baggage`; config keys
//! `trace_state`, `baggage`), and where the spans are exported over OTLP/HTTP.
//!
//! The endpoint, in this order: `--otlp-endpoint` (input `otlp-endpoint`, config
//! `otlp_endpoint`), a base URL to which `/v1/traces` is added; `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`,
//! used as it is; `OTEL_EXPORTER_OTLP_ENDPOINT`, a base URL. Headers: `--otlp-headers` (input
//! `otlp-headers`), else `OTEL_EXPORTER_OTLP_TRACES_HEADERS`, else `OTEL_EXPORTER_OTLP_HEADERS`,
//! each `key=value,key=value` with percent-encoded values (values are secrets). The export's
//! bound: `OTEL_EXPORTER_OTLP_TRACES_TIMEOUT`, else `OTEL_EXPORTER_OTLP_TIMEOUT`, in
//! milliseconds, else 10 s. `OTEL_SDK_DISABLED=true` turns the export off. These are the
//! OpenTelemetry exporter specification's variables and meanings.

use std::time::Duration;

use super::{Problem, Source, Sources, env_vars, table};
use crate::telemetry::otlp::{TRACES_PATH, Target};

/// The export's bound when no variable sets one (the OTLP exporter specification's default).
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);

/// The most bytes of `tracestate` (W3C Trace Context: 512) and of `baggage` (W3C Baggage: 8192).
const MAX_TRACESTATE: usize = 512;
const MAX_BAGGAGE: usize = 8192;

/// Layer 3's trace settings.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct TraceSettings {
    /// Where spans are exported (`None`: nowhere; the trace context is still sent).
    pub otlp: Option<Target>,
    /// Where `otlp`'s URL came from (for messages).
    pub otlp_source: Option<String>,
    /// `OTEL_SDK_DISABLED=true` turned off the export an endpoint asked for.
    pub disabled: bool,
    /// `tracestate`, sent as given.
    pub trace_state: Option<String>,
    /// `baggage`, sent as given.
    pub baggage: Option<String>,
}

impl TraceSettings {
    /// The header values of the export (secrets).
    pub(crate) fn secrets(&self) -> impl Iterator<Item = &str> {
        self.otlp.iter().flat_map(|target| target.headers.iter().map(|(_, value)| value.as_str()))
    }
}

/// The trace settings; every problem is added to `problems`, things to know to `notices`.
///
/// # Errors
/// Adds to `problems` an endpoint that is not an `http(s)` URL, a header list that is not
/// `key=value,…`, and a `tracestate` or `baggage` that breaks its W3C format.
pub(super) fn resolve(sources: &Sources<'_>, problems: &mut Vec<Problem>, notices: &mut Vec<String>) -> TraceSettings {
    let flags = &sources.request.flags;
    let trace_state = checked(
        sources.setting(&table::TRACE_STATE, &flags.trace_state),
        (check_tracestate, "is not a W3C tracestate"),
        "give up to 32 `key=value` members separated by commas, e.g. `vendor=abc123`",
        problems,
    );
    let baggage = checked(
        sources.setting(&table::BAGGAGE, &flags.baggage),
        (check_baggage, "is not W3C baggage"),
        "give `key=value` members separated by commas, values percent-encoded, e.g. `team=payments,env=ci`",
        problems,
    );

    let given = sources.setting(&table::OTLP_ENDPOINT, &flags.otlp_endpoint);
    let endpoint = given
        .map(|(source, base)| (source, traces_url(&base)))
        .or_else(|| env(sources, env_vars::OTEL_EXPORTER_OTLP_TRACES_ENDPOINT))
        .or_else(|| {
            env(sources, env_vars::OTEL_EXPORTER_OTLP_ENDPOINT).map(|(source, base)| (source, traces_url(&base)))
        });
    let disabled =
        env(sources, env_vars::OTEL_SDK_DISABLED).is_some_and(|(_, value)| value.eq_ignore_ascii_case("true"));
    let mut settings = TraceSettings { otlp: None, otlp_source: None, disabled: false, trace_state, baggage };
    let Some((source, url)) = endpoint else { return settings };
    if disabled {
        notices.push(format!(
            "{}=true: the spans are not exported to the endpoint {source} gives",
            env_vars::OTEL_SDK_DISABLED
        ));
        settings.otlp_source = Some(source.to_string());
        settings.disabled = true;
        return settings;
    }
    if let Err(detail) = check_url(&url) {
        problems.push(Problem::new(
            &source,
            format!("is not an OTLP endpoint: {detail}"),
            "give the collector's base URL, e.g. http://localhost:4318 (`/v1/traces` is added)",
        ));
        return settings;
    }
    let headers = sources
        .setting(&table::OTLP_HEADERS, &flags.otlp_headers)
        .or_else(|| env(sources, env_vars::OTEL_EXPORTER_OTLP_TRACES_HEADERS))
        .or_else(|| env(sources, env_vars::OTEL_EXPORTER_OTLP_HEADERS))
        .map_or_else(Vec::new, |(source, text)| match parse_headers(&text) {
            Ok(headers) => headers,
            Err(detail) => {
                problems.push(Problem::new(
                    &source,
                    format!("is not an OTLP header list: {detail}"),
                    "give `key=value` pairs separated by commas, values percent-encoded, e.g. `x-api-key=…`",
                ));
                Vec::new()
            }
        });
    for var in [env_vars::OTEL_EXPORTER_OTLP_TRACES_PROTOCOL, env_vars::OTEL_EXPORTER_OTLP_PROTOCOL] {
        if let Some((_, protocol)) = env(sources, var).filter(|(_, protocol)| protocol != "http/protobuf") {
            notices.push(format!("{var} is `{protocol}`: mcp-eval exports traces over http/protobuf only"));
            break;
        }
    }
    let timeout = [env_vars::OTEL_EXPORTER_OTLP_TRACES_TIMEOUT, env_vars::OTEL_EXPORTER_OTLP_TIMEOUT]
        .into_iter()
        .find_map(|var| env(sources, var).map(|found| (var, found)))
        .map_or(DEFAULT_TIMEOUT, |(var, (_, text))| match text.parse::<u64>() {
            Ok(ms) if ms > 0 => Duration::from_millis(ms.min(600_000)),
            _ => {
                notices
                    .push(format!("{var} is not a number of milliseconds above 0 (`{text}`): the export waits 10 s"));
                DEFAULT_TIMEOUT
            }
        });
    settings.otlp_source = Some(source.to_string());
    settings.otlp = Some(Target { url, headers, timeout });
    settings
}

/// A W3C grammar's check: `Err` says what breaks it.
type Grammar = fn(&str) -> Result<(), Refusal>;

/// Why a value was refused: what of its grammar (a URL, a header list, `tracestate`, baggage)
/// it breaks, never the value itself (it may be a secret).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub(crate) struct Refusal(pub String);

/// The value `picked` when `check` (and its problem's words) accepts it; else a problem naming
/// its source with `hint`.
fn checked(
    picked: Option<(Source, String)>,
    (check, what): (Grammar, &str),
    hint: &str,
    problems: &mut Vec<Problem>,
) -> Option<String> {
    let (source, text) = picked?;
    match check(&text) {
        Ok(()) => Some(text),
        Err(detail) => {
            problems.push(Problem::new(&source, format!("{what}: {detail}"), hint));
            None
        }
    }
}

/// A variable of the environment, trimmed; empty is unset.
fn env(sources: &Sources<'_>, var: &str) -> Option<(Source, String)> {
    (sources.lookup)(var)
        .map(|value| value.trim().to_owned())
        .filter(|value| !value.is_empty())
        .map(|value| (Source::Env(var.to_owned()), value))
}

/// The traces URL of a base endpoint: `/v1/traces` added to its path, a query kept after it (a
/// URL whose path already ends with it is taken as it is).
pub(crate) fn traces_url(base: &str) -> String {
    let base = base.trim();
    let Ok(mut url) = url::Url::parse(base) else {
        return format!("{}{TRACES_PATH}", base.trim_end_matches('/'));
    };
    let path = url.path().trim_end_matches('/').to_owned();
    if path.ends_with(TRACES_PATH) {
        return base.to_owned();
    }
    url.set_path(&format!("{path}{TRACES_PATH}"));
    url.to_string()
}

/// An `http` or `https` URL with a host.
fn check_url(text: &str) -> Result<(), Refusal> {
    let url = url::Url::parse(text)
        .map_err(|error| Refusal(format!("`{}`: {error}", super::secrets::url_without_secrets(text))))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(Refusal(format!("the scheme is `{}`, not http or https", url.scheme())));
    }
    if url.host_str().is_none_or(str::is_empty) {
        return Err(Refusal("it has no host".into()));
    }
    Ok(())
}

/// `key=value,…` (the OTLP exporter's header list): keys are header names, values are
/// percent-decoded; the error never holds a value.
pub(crate) fn parse_headers(text: &str) -> Result<Vec<(String, String)>, Refusal> {
    let mut headers = Vec::new();
    for (index, member) in text.split(',').enumerate().filter(|(_, member)| !member.trim().is_empty()) {
        let Some((key, value)) = member.split_once('=') else {
            return Err(Refusal(format!("entry {} has no `=`", index + 1)));
        };
        let key = key.trim();
        if key.is_empty() || !key.bytes().all(is_token_byte) {
            return Err(Refusal(format!("entry {}: `{key}` is not a header name", index + 1)));
        }
        let value = percent_decode(value.trim())
            .ok_or_else(|| Refusal(format!("entry {}: its value's percent-encoding is broken", index + 1)))?;
        if value.bytes().any(|byte| byte < 0x20 && byte != b'\t' || byte == 0x7f) {
            return Err(Refusal(format!("entry {}: its value holds control characters", index + 1)));
        }
        headers.push((key.to_owned(), value));
    }
    Ok(headers)
}

/// RFC 9110 token characters.
fn is_token_byte(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&byte)
}

/// `%XX` sequences decoded; `None` when one is broken or the result is not UTF-8.
fn percent_decode(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut index = 0;
    while index < bytes.len() {
        if bytes[index] == b'%' {
            let hex = text.get(index + 1..index + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            index += 3;
        } else {
            out.push(bytes[index]);
            index += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// W3C Trace Context's `tracestate`: at most 32 members of `key=value`, at most 512 bytes.
fn check_tracestate(text: &str) -> Result<(), Refusal> {
    if text.len() > MAX_TRACESTATE {
        return Err(Refusal(format!("{} bytes, over the {MAX_TRACESTATE} allowed", text.len())));
    }
    let members: Vec<&str> = text.split(',').map(str::trim).filter(|member| !member.is_empty()).collect();
    if members.is_empty() || members.len() > 32 {
        return Err(Refusal(format!("{} members; 1 to 32 are allowed", members.len())));
    }
    for member in members {
        let Some((key, value)) = member.split_once('=') else {
            return Err(Refusal(format!("`{member}` has no `=`")));
        };
        let key_ok = |part: &str, first_digit: bool, max: usize| {
            let mut bytes = part.bytes();
            bytes.next().is_some_and(|first| first.is_ascii_lowercase() || (first_digit && first.is_ascii_digit()))
                && part.len() <= max
                && bytes.all(|byte| byte.is_ascii_lowercase() || byte.is_ascii_digit() || b"_-*/".contains(&byte))
        };
        let valid_key = match key.split_once('@') {
            Some((tenant, system)) => key_ok(tenant, true, 241) && key_ok(system, false, 14),
            None => key_ok(key, false, 256),
        };
        if !valid_key {
            return Err(Refusal(format!(
                "`{key}` is not a key (lower-case letters, digits, `_-*/`, starting with a letter)"
            )));
        }
        let valid_value = !value.is_empty()
            && value.len() <= 256
            && !value.ends_with(' ')
            && value.bytes().all(|byte| (0x20..=0x7e).contains(&byte) && byte != b',' && byte != b'=');
        if !valid_value {
            return Err(Refusal(format!(
                "the value of `{key}` is not 1 to 256 printable characters without `,` or `=`"
            )));
        }
    }
    Ok(())
}

/// W3C Baggage: `key=value` members (with optional `;property` parts) separated by commas, at
/// most 64 members and 8192 bytes; keys are tokens, values percent-encoded octets.
fn check_baggage(text: &str) -> Result<(), Refusal> {
    if text.len() > MAX_BAGGAGE {
        return Err(Refusal(format!("{} bytes, over the {MAX_BAGGAGE} allowed", text.len())));
    }
    let members: Vec<&str> = text.split(',').map(str::trim).collect();
    if members.len() > 64 {
        return Err(Refusal(format!("{} members, over the 64 allowed", members.len())));
    }
    for member in members {
        let pair = member.split(';').next().unwrap_or("");
        let Some((key, value)) = pair.split_once('=') else {
            return Err(Refusal(format!("`{member}` has no `=`")));
        };
        let key = key.trim();
        if key.is_empty() || !key.bytes().all(is_token_byte) {
            return Err(Refusal(format!("`{key}` is not a key (a token: letters, digits, `!#$%&'*+-.^_`|~`)")));
        }
        let value = value.trim();
        let octet = |byte: u8| matches!(byte, 0x21 | 0x23..=0x2b | 0x2d..=0x3a | 0x3c..=0x5b | 0x5d..=0x7e);
        if !value.bytes().all(octet) || percent_decode(value).is_none() {
            return Err(Refusal(format!("the value of `{key}` holds characters baggage must percent-encode")));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_base_endpoint_gets_the_traces_path_once() {
        assert_eq!(traces_url("http://localhost:4318"), "http://localhost:4318/v1/traces");
        assert_eq!(traces_url("http://localhost:4318/"), "http://localhost:4318/v1/traces");
        assert_eq!(traces_url("https://otel.example/base"), "https://otel.example/base/v1/traces");
        assert_eq!(traces_url("http://localhost:4318/v1/traces"), "http://localhost:4318/v1/traces");
        assert_eq!(traces_url("http://localhost:4318/?tenant=a"), "http://localhost:4318/v1/traces?tenant=a");
    }

    #[test]
    fn otlp_headers_are_percent_decoded_and_a_bad_list_never_shows_a_value() {
        assert_eq!(
            parse_headers("api-key=s%3Dcret, x-team = a b").unwrap(),
            vec![("api-key".to_owned(), "s=cret".to_owned()), ("x-team".to_owned(), "a b".to_owned())]
        );
        let error = parse_headers("api-key").unwrap_err();
        assert!(error.0.contains("no `=`"), "{error}");
        let error = parse_headers("bad key=hunter2").unwrap_err();
        assert!(!error.0.contains("hunter2"), "{error}");
        assert!(parse_headers("k=%zz").is_err());
    }

    #[test]
    fn tracestate_follows_the_w3c_rules() {
        assert!(check_tracestate("vendor=abc123").is_ok());
        assert!(check_tracestate("rojo=00f067aa0ba902b7,congo=t61rcWkgMzE").is_ok());
        assert!(check_tracestate("tenant@system=x").is_ok());
        assert!(check_tracestate("Vendor=abc").is_err(), "upper-case key");
        assert!(check_tracestate("vendor").is_err(), "no value");
        assert!(check_tracestate("vendor=a=b").is_err(), "`=` in the value");
        assert!(check_tracestate(&vec!["k=v"; 33].join(",")).is_err(), "33 members");
    }

    #[test]
    fn baggage_follows_the_w3c_rules() {
        assert!(check_baggage("team=payments,env=ci").is_ok());
        assert!(check_baggage("user=a%20b;prop=1").is_ok());
        assert!(check_baggage("team=pay ments").is_err(), "a space in a value");
        assert!(check_baggage("=x").is_err(), "no key");
        assert!(check_baggage("k=%zz").is_err(), "broken percent-encoding");
    }
}

//! The export of layer 3's spans over OTLP/HTTP with protobuf bodies (`--otlp-endpoint`), by
//! the OpenTelemetry project's exporter (`opentelemetry-otlp`) on a reqwest client of ours.
//!
//! The export happens once, when the evaluation ends, in batches of [`BATCH`] spans, and the
//! whole of it — connection, retries, every batch — is bounded by one timeout: a collector that
//! is down or slow costs the run that timeout at most, and is a warning, never a failure. The
//! resource names us (`service.name` `mcp-eval`, `service.version`); spans carry no secret
//! (see [`super::trace`]).

use std::collections::HashMap;
use std::time::Duration;

use opentelemetry::trace::{SpanContext, SpanId, SpanKind, Status, TraceFlags, TraceId, TraceState};
use opentelemetry::{InstrumentationScope, KeyValue};
use opentelemetry_otlp::{Protocol, WithExportConfig as _, WithHttpConfig as _};
use opentelemetry_sdk::trace::{SpanData, SpanEvents, SpanExporter as _, SpanLinks};

use super::trace::{FinishedSpan, Kind, Value};

/// Spans per export request (the OpenTelemetry SDK's default batch size).
pub(crate) const BATCH: usize = 512;

/// The path OTLP/HTTP adds to a base endpoint for traces (the OTLP exporter specification).
pub(crate) const TRACES_PATH: &str = "/v1/traces";

/// Where spans go.
#[derive(Clone, PartialEq, Eq)]
pub(crate) struct Target {
    /// The full URL of the traces endpoint (`…/v1/traces`).
    pub url: String,
    /// Headers every request carries (values are secrets).
    pub headers: Vec<(String, String)>,
    /// The bound of the whole export.
    pub timeout: Duration,
}

impl std::fmt::Debug for Target {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<&str> = self.headers.iter().map(|(name, _)| name.as_str()).collect();
        formatter
            .debug_struct("Target")
            .field("url", &self.url)
            .field("headers", &names)
            .field("timeout", &self.timeout)
            .finish()
    }
}

/// What an export sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Exported {
    /// Spans the collector accepted.
    pub spans: usize,
    /// Requests made.
    pub requests: usize,
}

/// Exports `spans` to `target`: what was delivered, and why the rest was not (the exporter
/// could not be built — a bad URL —, the collector refused a batch or did not answer, or the
/// timeout passed; the text may name the URL, the caller redacts it).
pub(crate) async fn export(target: &Target, spans: Vec<FinishedSpan>) -> (Exported, Option<String>) {
    let mut exported = Exported { spans: 0, requests: 0 };
    match send(target, spans, &mut exported).await {
        Ok(()) => (exported, None),
        Err(error) => (exported, Some(error.to_string())),
    }
}

/// Why the spans were not all delivered; the message quotes its cause.
#[derive(Debug, thiserror::Error)]
enum ExportError {
    /// The HTTP client could not be built.
    #[error("cannot build the HTTP client: {0}")]
    Client(#[source] reqwest::Error),
    /// The exporter could not be set up.
    #[error("cannot set up the OTLP exporter: {0}")]
    Exporter(#[source] opentelemetry_otlp::ExporterBuildError),
    /// A request failed.
    #[error("{missing} of {total} span(s) not delivered: {source}")]
    Undelivered {
        /// The spans not delivered.
        missing: usize,
        /// All the spans.
        total: usize,
        /// The exporter's error.
        source: opentelemetry_sdk::error::OTelSdkError,
    },
    /// The collector did not answer in time.
    #[error("{missing} of {total} span(s) not delivered: no answer within {millis} ms")]
    TimedOut {
        /// The spans not delivered.
        missing: usize,
        /// All the spans.
        total: usize,
        /// The timeout.
        millis: u128,
    },
}

async fn send(target: &Target, spans: Vec<FinishedSpan>, exported: &mut Exported) -> Result<(), ExportError> {
    if spans.is_empty() {
        return Ok(());
    }
    // Installing twice is harmless; the first provider wins.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let client = reqwest::Client::builder()
        .timeout(target.timeout)
        .connect_timeout(target.timeout)
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .map_err(ExportError::Client)?;
    let headers: HashMap<String, String> = target.headers.iter().cloned().collect();
    let mut exporter = opentelemetry_otlp::SpanExporter::builder()
        .with_http()
        .with_http_client(client)
        .with_protocol(Protocol::HttpBinary)
        .with_endpoint(target.url.clone())
        .with_headers(headers)
        .with_timeout(target.timeout)
        .build()
        .map_err(ExportError::Exporter)?;
    exporter.set_resource(
        &opentelemetry_sdk::Resource::builder_empty()
            .with_service_name("mcp-eval")
            .with_attribute(KeyValue::new("service.version", env!("CARGO_PKG_VERSION")))
            .build(),
    );
    let scope = InstrumentationScope::builder("mcp-eval").with_version(env!("CARGO_PKG_VERSION")).build();
    let total = spans.len();
    let mut spans = spans.into_iter().map(|span| span_data(span, &scope)).peekable();
    let sending = async {
        while spans.peek().is_some() {
            let batch: Vec<SpanData> = spans.by_ref().take(BATCH).collect();
            let size = batch.len();
            exported.requests += 1;
            exporter.export(batch).await?;
            exported.spans += size;
        }
        Ok::<_, opentelemetry_sdk::error::OTelSdkError>(())
    };
    match tokio::time::timeout(target.timeout, sending).await {
        Ok(Ok(())) => Ok(()),
        Ok(Err(source)) => Err(ExportError::Undelivered { missing: total - exported.spans, total, source }),
        Err(_) => {
            Err(ExportError::TimedOut { missing: total - exported.spans, total, millis: target.timeout.as_millis() })
        }
    }
}

/// The SDK's form of a finished span.
fn span_data(span: FinishedSpan, scope: &InstrumentationScope) -> SpanData {
    SpanData {
        span_context: SpanContext::new(
            TraceId::from_bytes(span.trace_id),
            SpanId::from_bytes(span.span_id),
            TraceFlags::SAMPLED,
            false,
            TraceState::default(),
        ),
        parent_span_id: span.parent.map_or(SpanId::INVALID, SpanId::from_bytes),
        parent_span_is_remote: false,
        span_kind: match span.kind {
            Kind::Internal => SpanKind::Internal,
            Kind::Client => SpanKind::Client,
        },
        name: span.name.into(),
        start_time: span.start,
        end_time: span.end,
        attributes: span
            .attributes
            .into_iter()
            .map(|(key, value)| match value {
                Value::Text(text) => KeyValue::new(key, text),
                Value::Int(number) => KeyValue::new(key, number),
            })
            .collect(),
        dropped_attributes_count: 0,
        events: SpanEvents::default(),
        links: SpanLinks::default(),
        status: span.error.map_or(Status::Unset, Status::error),
        instrumentation_scope: scope.clone(),
    }
}

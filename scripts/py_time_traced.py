#!/usr/bin/env python3
"""Serve the py-time MCP server (mcp-server-time) over stdio with OpenTelemetry tracing on.

Usage: py_time_traced.py [TIMEZONE]

The Python SDK's server opens a SERVER span for every request it handles, parented on the
`traceparent` the request carries in `_meta` (its OpenTelemetry middleware); without a tracer
provider those spans go nowhere. This installs the OpenTelemetry SDK's provider with the OTLP/HTTP
exporter, configured by the standard variables (OTEL_EXPORTER_OTLP_ENDPOINT and friends), exporting
each span as it ends, then runs the same server object the package's `serve()` builds. A team that
traces its server does the same. Run it with the interop venv's python (scripts/install-servers.sh
installs opentelemetry-sdk and opentelemetry-exporter-otlp-proto-http there).
"""
import sys

from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

from mcp_server_time.server import create_server, get_local_tz, load_zoneinfo


def main() -> None:
    if len(sys.argv) > 2:
        sys.exit("usage: py_time_traced.py [TIMEZONE]")
    tz = sys.argv[1] if len(sys.argv) == 2 else "UTC"
    load_zoneinfo(tz)
    provider = TracerProvider(resource=Resource.create({"service.name": "mcp-server-time"}))
    provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter()))
    trace.set_tracer_provider(provider)
    try:
        create_server(str(get_local_tz(tz))).run("stdio")
    finally:
        provider.shutdown()


if __name__ == "__main__":
    main()

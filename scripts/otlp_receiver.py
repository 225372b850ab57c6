#!/usr/bin/env python3
"""An OTLP/HTTP trace receiver for the layer-3 tests: decodes each protobuf export request with
the OpenTelemetry project's own message definitions (the `opentelemetry-proto` package, installed
by scripts/install-action-tools.sh) and appends every span to a file as one JSON line.

    otlp_receiver.py --out FILE [--status CODE] [--delay SECONDS]

Listens on 127.0.0.1 on a free port and prints its base URL (`http://127.0.0.1:PORT`) as the
first line of stdout. `POST /v1/traces` with `Content-Type: application/x-protobuf` is decoded;
each span becomes `{"service", "trace_id", "span_id", "parent_span_id", "name", "kind",
"status", "attributes"}` (ids in lower-case hex, "" for no parent), and each request one
`{"request": {"headers": {...}, "spans": N}}` line first. `--status` answers every request with
that HTTP status instead of 200 (a refusing collector); `--delay` waits that long before
answering (a collector that hangs).
"""

import argparse
import json
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)

LOCK = threading.Lock()


def value_of(any_value):
    """An AnyValue as plain JSON."""
    kind = any_value.WhichOneof("value")
    if kind is None:
        return None
    if kind in ("array_value", "kvlist_value"):
        return str(getattr(any_value, kind))
    if kind == "bytes_value":
        return any_value.bytes_value.hex()
    return getattr(any_value, kind)


def attributes_of(key_values):
    return {kv.key: value_of(kv.value) for kv in key_values}


def handler_for(args):
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *_):
            pass

        def answer(self, status, body=b"", content_type="application/x-protobuf"):
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_POST(self):
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length)
            if args.delay:
                time.sleep(args.delay)
            if self.path != "/v1/traces":
                return self.answer(404, b"not found", "text/plain")
            if self.headers.get("Content-Type") != "application/x-protobuf":
                return self.answer(415, b"protobuf only", "text/plain")
            if args.status != 200:
                return self.answer(args.status, b"refused", "text/plain")
            request = ExportTraceServiceRequest()
            request.ParseFromString(body)
            lines = []
            count = 0
            for resource_spans in request.resource_spans:
                resource = attributes_of(resource_spans.resource.attributes)
                for scope_spans in resource_spans.scope_spans:
                    for span in scope_spans.spans:
                        count += 1
                        lines.append(
                            {
                                "service": resource.get("service.name"),
                                "scope": scope_spans.scope.name,
                                "trace_id": span.trace_id.hex(),
                                "span_id": span.span_id.hex(),
                                "parent_span_id": span.parent_span_id.hex(),
                                "name": span.name,
                                "kind": span.kind,
                                "status": span.status.code,
                                "start": span.start_time_unix_nano,
                                "end": span.end_time_unix_nano,
                                "attributes": attributes_of(span.attributes),
                            }
                        )
            headers = {name.lower(): value for name, value in self.headers.items()}
            with LOCK, open(args.out, "a", encoding="utf-8") as out:
                out.write(json.dumps({"request": {"headers": headers, "spans": count}}) + "\n")
                for line in lines:
                    out.write(json.dumps(line) + "\n")
            return self.answer(200, ExportTraceServiceResponse().SerializeToString())

    return Handler


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", required=True)
    parser.add_argument("--status", type=int, default=200)
    parser.add_argument("--delay", type=float, default=0.0)
    args = parser.parse_args()
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler_for(args))
    server.daemon_threads = True
    print(f"http://127.0.0.1:{server.server_address[1]}", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Serve the py-time MCP server (mcp-server-time) over Streamable HTTP.

Usage: py_time_http.py PORT [TIMEZONE]

The package itself ships stdio only. This builds the same server object its
`serve()` builds (`mcp_server_time.server.create_server(str(get_local_tz(tz)))`)
and runs it with the SDK's streamable-http transport on 127.0.0.1:PORT, path /mcp.
Run it with the interop venv's python (see scripts/install-servers.sh).
"""
import sys

from mcp_server_time.server import create_server, get_local_tz, load_zoneinfo


def main() -> None:
    if len(sys.argv) not in (2, 3):
        sys.exit("usage: py_time_http.py PORT [TIMEZONE]")
    port = int(sys.argv[1])
    tz = sys.argv[2] if len(sys.argv) == 3 else "UTC"
    load_zoneinfo(tz)  # fail early on a bad zone, as serve() does
    server = create_server(str(get_local_tz(tz)))
    server.run("streamable-http", host="127.0.0.1", port=port, streamable_http_path="/mcp")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""A small MCP server on the Python SDK (MCPServer), shaped like a team's own server package:
the image test copies it into a workspace as `my_server/__main__.py` and starts it the way the
recipes of docs/action.md do.

Usage: python -m my_server                      stdio
       python -m my_server --http HOST PORT     Streamable HTTP at http://HOST:PORT/mcp

Whatever HOST it binds (`0.0.0.0` on the runner, so the Action's container can reach it), it
keeps the SDK's DNS-rebinding check for localhost: only a Host of 127.0.0.1, localhost or [::1]
(any port) is served, and a request with an Origin must come from one of them. The SDK turns the
check on by itself only for a loopback HOST; bound to 0.0.0.0 it is off unless given, as here.
"""
import sys

from mcp.server.mcpserver import MCPServer
from mcp.server.transport_security import TransportSecuritySettings

LOCALHOST_ONLY = TransportSecuritySettings(
    enable_dns_rebinding_protection=True,
    allowed_hosts=["127.0.0.1:*", "localhost:*", "[::1]:*"],
    allowed_origins=["http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*"],
)

server = MCPServer("recipe-py-server")


@server.tool()
def add(a: int, b: int) -> int:
    """Add two integers and return the sum."""
    return a + b


@server.tool()
def echo(text: str) -> str:
    """Return the text unchanged."""
    return text


def main() -> None:
    args = sys.argv[1:]
    if not args:
        server.run("stdio")
    elif len(args) == 3 and args[0] == "--http":
        server.run(
            "streamable-http",
            host=args[1],
            port=int(args[2]),
            streamable_http_path="/mcp",
            transport_security=LOCALHOST_ONLY,
        )
    else:
        sys.exit("usage: python -m my_server [--http HOST PORT]")


if __name__ == "__main__":
    main()

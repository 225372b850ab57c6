#!/usr/bin/env python3
"""A small MCP server on the Python SDK (MCPServer), shaped like a team's own server package:
the image test copies it into a workspace as `my_server/__main__.py` and starts it the way the
recipes of docs/action.md do.

Usage: python -m my_server                      stdio
       python -m my_server --http HOST PORT     Streamable HTTP at http://HOST:PORT/mcp

With `--http 0.0.0.0 PORT` the SDK does not turn on its DNS-rebinding check (it does for a
loopback host), so a request whose Host is the runner's gateway address is served.
"""
import sys

from mcp.server.mcpserver import MCPServer

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
        server.run("streamable-http", host=args[1], port=int(args[2]), streamable_http_path="/mcp")
    else:
        sys.exit("usage: python -m my_server [--http HOST PORT]")


if __name__ == "__main__":
    main()

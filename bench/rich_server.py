#!/usr/bin/env python3
"""A large MCP server for bench/large_server.sh: TOOLS tools (default 2,000) with rich input
schemas, on the Python SDK's low-level server (both eras, as the SDK serves them).

Usage: rich_server.py [--tools N] [--log FILE]                  stdio
       rich_server.py [--tools N] [--log FILE] --http PORT      Streamable HTTP at http://127.0.0.1:PORT/mcp

The tools are made up but shaped like a real vendor server's: names such as
`billing_invoices_search_0042`, descriptions of two to four sentences, and input schemas with
nested objects, enums, arrays of objects, formats, bounds, required lists and `$defs` reached by
`$ref`. No two schemas are the same (each names its tool in a description), so nothing can be
shared between them by accident. Tools whose verb only reads are annotated `readOnlyHint: true`;
a call answers with the arguments it was given. Run it with the interop venv's python (see
scripts/install-servers.sh).

With `--log FILE`, every `tools/list` served appends one line to FILE, so the benchmark can
count the lists a run asks for (an argument, not the environment: a stdio server's environment
is scrubbed).
"""
import json
import sys

import mcp_types as types
from mcp.server.lowlevel.server import Server

AREAS = ["billing", "crm", "inventory", "shipping", "support", "analytics", "identity", "storage",
         "calendar", "payments", "catalog", "compliance", "hr", "marketing", "search", "devops",
         "messaging", "contracts", "forecasting", "procurement"]
NOUNS = ["invoices", "customers", "orders", "shipments", "tickets", "reports", "users", "files",
         "events", "refunds", "products", "audits", "employees", "campaigns", "documents",
         "deployments", "threads", "agreements", "budgets", "suppliers"]
VERBS = [("search", True), ("get", True), ("list", True), ("export", True), ("create", False),
         ("update", False), ("archive", False), ("delete", False), ("approve", False), ("sync", False)]
STATUSES = ["draft", "open", "pending_review", "approved", "rejected", "closed", "archived"]
REGIONS = ["us-east", "us-west", "eu-central", "eu-west", "ap-south", "ap-northeast", "sa-east"]


def description(area: str, noun: str, verb: str, index: int) -> str:
    what = {
        "search": f"Searches {noun} in the {area} workspace by free text and structured filters, newest first.",
        "get": f"Fetches one of the {noun} of the {area} workspace by its identifier, with its related records.",
        "list": f"Lists the {noun} of the {area} workspace a page at a time, in the order the sort asks for.",
        "export": f"Exports the {noun} of the {area} workspace that match the filter as a downloadable file.",
        "create": f"Creates one of the {noun} in the {area} workspace from the fields given.",
        "update": f"Updates the fields given of one of the {noun} in the {area} workspace; others stay as they are.",
        "archive": f"Archives one of the {noun} of the {area} workspace: it stays readable but no longer changes.",
        "delete": f"Deletes one of the {noun} of the {area} workspace for good, after the grace period set by the admin.",
        "approve": f"Approves one of the {noun} of the {area} workspace on behalf of the caller, with an optional note.",
        "sync": f"Synchronises the {noun} of the {area} workspace with the connected external system.",
    }[verb]
    return (f"{what} Use it when the user names a specific record or asks for a filtered view; "
            f"dates are ISO 8601 in UTC and amounts are in the smallest currency unit. "
            f"Rate limited to 60 calls a minute per workspace (tool #{index}).")


def schema(area: str, noun: str, verb: str, index: int) -> dict:
    money = {"type": "object", "description": "An amount of money.",
             "properties": {"amount": {"type": "integer", "minimum": 0, "description": "In the smallest unit (cents)."},
                            "currency": {"type": "string", "pattern": "^[A-Z]{3}$", "description": "ISO 4217 code."}},
             "required": ["amount", "currency"], "additionalProperties": False}
    period = {"type": "object", "description": f"A time window for the {noun}.",
              "properties": {"from": {"type": "string", "format": "date-time"},
                             "to": {"type": "string", "format": "date-time"}},
              "additionalProperties": False}
    address = {"type": "object",
               "properties": {"line1": {"type": "string", "maxLength": 200}, "city": {"type": "string"},
                              "postal_code": {"type": "string"}, "country": {"type": "string", "pattern": "^[A-Z]{2}$"}},
               "required": ["line1", "country"]}
    props = {
        "workspace_id": {"type": "string", "description": f"The {area} workspace, e.g. `ws_{index:04d}`.",
                         "pattern": "^ws_[0-9a-z]+$"},
        "region": {"type": "string", "enum": REGIONS, "description": "Where the workspace's data lives."},
    }
    required = ["workspace_id"]
    if verb in ("search", "list", "export"):
        props["query"] = {"type": "string", "maxLength": 500, "description": f"Free text matched against the {noun}' titles and notes."}
        props["filter"] = {
            "type": "object", "description": "Structured filters; all must hold.",
            "properties": {"status": {"type": "array", "items": {"type": "string", "enum": STATUSES}, "uniqueItems": True},
                           "created": {"$ref": "#/$defs/period"},
                           "total": {"type": "object", "properties": {"min": {"$ref": "#/$defs/money"}, "max": {"$ref": "#/$defs/money"}}},
                           "tags": {"type": "array", "items": {"type": "string", "minLength": 1}, "maxItems": 20},
                           "owner": {"type": "object", "properties": {"id": {"type": "string"}, "team": {"type": "string"}}}},
            "additionalProperties": False}
        props["sort"] = {"type": "object", "properties": {"field": {"type": "string", "enum": ["created", "updated", "total", "title"]},
                                                         "direction": {"type": "string", "enum": ["asc", "desc"], "default": "desc"}}}
        props["page"] = {"type": "object", "properties": {"size": {"type": "integer", "minimum": 1, "maximum": 200, "default": 50},
                                                         "cursor": {"type": "string"}}}
        if verb == "export":
            props["format"] = {"type": "string", "enum": ["csv", "xlsx", "json", "pdf"]}
            required.append("format")
    else:
        props["id"] = {"type": "string", "description": f"The identifier of one of the {noun}.", "minLength": 8}
        required.append("id")
    if verb in ("create", "update"):
        props["record"] = {
            "type": "object", "description": f"The fields of the {noun[:-1] if noun.endswith('s') else noun}.",
            "properties": {"title": {"type": "string", "minLength": 1, "maxLength": 200},
                           "status": {"type": "string", "enum": STATUSES},
                           "total": {"$ref": "#/$defs/money"},
                           "period": {"$ref": "#/$defs/period"},
                           "address": {"$ref": "#/$defs/address"},
                           "lines": {"type": "array", "maxItems": 100,
                                     "items": {"type": "object",
                                               "properties": {"sku": {"type": "string"}, "quantity": {"type": "integer", "minimum": 1},
                                                              "price": {"$ref": "#/$defs/money"}},
                                               "required": ["sku", "quantity"]}},
                           "metadata": {"type": "object", "additionalProperties": {"type": "string"}, "maxProperties": 50}},
            "required": ["title"] if verb == "create" else []}
        required.append("record")
    if verb in ("approve", "archive", "delete"):
        props["note"] = {"type": "string", "maxLength": 1000, "description": "Kept in the audit log."}
        props["notify"] = {"type": "boolean", "default": True, "description": "Whether the owner is told."}
    if verb == "sync":
        props["direction"] = {"type": "string", "enum": ["pull", "push", "both"], "default": "both"}
        props["dry_run"] = {"type": "boolean", "default": False}
    return {"type": "object", "properties": props, "required": required, "additionalProperties": False,
            "$defs": {"money": money, "period": period, "address": address}}


def make_tools(count: int) -> list:
    tools = []
    for index in range(count):
        area = AREAS[index % len(AREAS)]
        noun = NOUNS[(index // len(AREAS)) % len(NOUNS)]
        verb, read_only = VERBS[(index // (len(AREAS) * len(NOUNS)) + index) % len(VERBS)]
        name = f"{area}_{noun}_{verb}_{index:04d}"
        annotations = types.ToolAnnotations(title=f"{verb.title()} {area} {noun}", read_only_hint=read_only,
                                            destructive_hint=verb in ("delete", "archive"), open_world_hint=False)
        tools.append(types.Tool(name=name, description=description(area, noun, verb, index),
                                input_schema=schema(area, noun, verb, index), annotations=annotations))
    return tools


def main() -> None:
    args = sys.argv[1:]
    count, log = 2000, None
    while args[:1] in (["--tools"], ["--log"]):
        if args[0] == "--tools":
            count = int(args[1])
        else:
            log = args[1]
        args = args[2:]
    tools = make_tools(count)

    async def list_tools(ctx, params):
        if log:
            with open(log, "a") as out:
                out.write("tools/list\n")
        return types.ListToolsResult(tools=tools)

    async def call_tool(ctx, params):
        if not any(tool.name == params.name for tool in tools):
            return types.CallToolResult(content=[types.TextContent(text=f"unknown tool {params.name}")], is_error=True)
        return types.CallToolResult(content=[types.TextContent(text=json.dumps(params.arguments or {}))])

    server = Server("rich-bench-server", version="1.0.0", on_list_tools=list_tools, on_call_tool=call_tool)
    if not args:
        import anyio
        from mcp.server.stdio import stdio_server

        async def serve() -> None:
            async with stdio_server() as (read_stream, write_stream):
                await server.run(read_stream, write_stream, server.create_initialization_options())

        anyio.run(serve)
    elif len(args) == 2 and args[0] == "--http":
        import uvicorn
        uvicorn.run(server.streamable_http_app(), host="127.0.0.1", port=int(args[1]), log_level="warning")
    else:
        sys.exit("usage: rich_server.py [--tools N] [--log FILE] [--http PORT]")


if __name__ == "__main__":
    main()

// A small MCP server on the TypeScript SDK v2 (`createMcpHandler` on a bare `node:http`
// server), shaped like a team's own server: the image test copies it into a workspace as
// `server.mjs` and starts it the way the Node recipe of docs/action.md does.
//
// Usage: PORT=8000 HOST=0.0.0.0 node server.mjs     Streamable HTTP at http://HOST:PORT/mcp
//
// Bound to 0.0.0.0 (so the Action's container can reach it), it still keeps its DNS-rebinding
// check for localhost: `localhostHostValidation()` serves only a Host of localhost, 127.0.0.1
// or [::1] (any port), and `localhostOriginValidation()` refuses an Origin from anywhere else
// (403 from both).
import http from "node:http";
import { McpServer, createMcpHandler } from "@modelcontextprotocol/server";
import { localhostHostValidation, localhostOriginValidation, toNodeHandler } from "@modelcontextprotocol/node";
import * as z from "zod";

function makeServer() {
  const server = new McpServer({ name: "recipe-node-server", version: "1.0.0" });
  server.registerTool(
    "add",
    { description: "Add two integers and return the sum.", inputSchema: z.object({ a: z.number().int(), b: z.number().int() }) },
    async ({ a, b }) => ({ content: [{ type: "text", text: String(a + b) }] }),
  );
  server.registerTool(
    "echo",
    { description: "Return the text unchanged.", inputSchema: z.object({ text: z.string() }) },
    async ({ text }) => ({ content: [{ type: "text", text }] }),
  );
  return server;
}

const handle = toNodeHandler(createMcpHandler(makeServer));
const validHost = localhostHostValidation();
const validOrigin = localhostOriginValidation();

http
  .createServer((req, res) => {
    if (!validHost(req, res) || !validOrigin(req, res)) return; // answered 403 already
    if (new URL(req.url ?? "/", "http://localhost").pathname !== "/mcp") {
      res.writeHead(404).end();
      return;
    }
    void handle(req, res);
  })
  .listen(Number(process.env.PORT ?? 8000), process.env.HOST ?? "0.0.0.0");

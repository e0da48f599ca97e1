// An MCP session through svc with the official TypeScript SDK
// (@modelcontextprotocol/sdk): connect over streamable HTTP with a virtual
// key, list the tools, make the calls asked for. Prints one JSON line the Go
// test (internal/e2e/mcp_npm_test.go) checks:
//
//   {"server": {name, version}, "tools": [names], "calls": [
//     {"name", "text", "isError"} | {"name", "error", "code"}]}
//
// A call the server refuses with a JSON-RPC error is recorded in "calls"
// (refusals are what the test checks); a failure to connect or to list the
// tools exits 1 with the error on stderr.
//
// Environment: SVC_MCP_URL (the endpoint), SVC_KEY (a virtual key),
// SVC_CALLS (a JSON array of {name, arguments}; optional).
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { McpError } from "@modelcontextprotocol/sdk/types.js";

const url = new URL(process.env.SVC_MCP_URL);
const calls = JSON.parse(process.env.SVC_CALLS || "[]");
const transport = new StreamableHTTPClientTransport(url, {
  requestInit: { headers: { Authorization: `Bearer ${process.env.SVC_KEY}` } },
  reconnectionOptions: { maxRetries: 0, initialReconnectionDelay: 100, maxReconnectionDelay: 100, reconnectionDelayGrowFactor: 1 },
});
const client = new Client({ name: "svc-e2e-npm", version: "1" });

// call makes one tools/call, recording a protocol refusal instead of failing.
async function call({ name, arguments: args }) {
  try {
    const r = await client.callTool({ name, arguments: args });
    const text = (r.content || []).filter((c) => c.type === "text").map((c) => c.text).join("");
    return { name, text, isError: r.isError === true };
  } catch (err) {
    if (err instanceof McpError) return { name, error: err.message, code: err.code };
    throw err;
  }
}

try {
  await client.connect(transport);
  const { tools } = await client.listTools();
  const results = [];
  for (const c of calls) results.push(await call(c));
  console.log(JSON.stringify({ server: client.getServerVersion(), tools: tools.map((t) => t.name).sort(), calls: results }));
  await client.close();
} catch (err) {
  console.error(`mcp_client: ${err?.stack || err}`);
  process.exit(1);
}

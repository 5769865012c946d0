// Drive the bridge the way the TypeScript MCP clients do, and fail loudly where they would.
//
// Claude Code, Cursor, VS Code and MCP Inspector are built on the official TypeScript SDK. Its
// `Client.callTool` validates every `structuredContent` against the tool's `outputSchema` with AJV
// and throws when it does not fit, so a schema our Python tests accept can still break those
// clients. This script lists the tools, compiles every schema with AJV in strict mode (what
// Inspector's strict checks complain about), calls every listed tool once and checks the contract
// a structured-content-only reader depends on: the headline first, the untrusted marking, the
// size bound.
//
// Usage: node check.mjs <asp-mcp-bridge executable> <git work tree>
// Prints one JSON report on stdout; exits 1 when anything failed.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import Ajv from "ajv";

const STRUCTURED_LIMIT = 100_000;
// One call per tool: the smallest arguments that make the tool do real work on a small repo.
const CALLS = {
  asp_status: {},
  asp_capabilities: {},
  asp_authority_status: {},
  asp_inspect: { verb: "symbols", path: "a.py" },
  asp_debug_host: {},
  asp_debug_trace: { limit: 5 },
  asp_ext_evaluate_changeset: {},
  asp_ext_request_edit_plan: { operation: "rename", paths: ["a.py"], args: { from: "f", to: "g" } },
  asp_migration_check: { legacy: ["pyflakes"] },
};

const [bridge, repo] = process.argv.slice(2);
if (!bridge || !repo) {
  console.error("usage: node check.mjs <asp-mcp-bridge> <repo>");
  process.exit(2);
}

const failures = [];
const schemaWarnings = [];
const ajv = new Ajv({
  strict: true,
  allErrors: true,
  logger: {
    log() {},
    warn: (message) => schemaWarnings.push(String(message)),
    error: (message) => schemaWarnings.push(String(message)),
  },
});

const transport = new StdioClientTransport({
  command: bridge,
  args: ["serve", "--repo", repo],
  stderr: "ignore",
});
const client = new Client({ name: "asp-bridge-ts-sdk-check", version: "1" });
await client.connect(transport);
const { tools } = await client.listTools();

for (const tool of tools) {
  for (const kind of ["inputSchema", "outputSchema"]) {
    if (!tool[kind]) {
      if (kind === "outputSchema") failures.push(`${tool.name}: no outputSchema`);
      continue;
    }
    try {
      ajv.compile(tool[kind]);
    } catch (error) {
      failures.push(`${tool.name}.${kind}: AJV strict: ${error.message}`);
    }
  }
  for (const hint of ["readOnlyHint", "destructiveHint", "openWorldHint"]) {
    if (typeof tool.annotations?.[hint] !== "boolean") failures.push(`${tool.name}: no ${hint}`);
  }
}

const calls = [];
for (const tool of tools) {
  const args = CALLS[tool.name];
  if (args === undefined) {
    failures.push(`${tool.name}: listed but this check has no call for it`);
    continue;
  }
  const started = performance.now();
  try {
    // callTool validates structuredContent against the outputSchema and throws if it does not fit.
    const result = await client.callTool({ name: tool.name, arguments: args }, undefined, {
      timeout: 55_000,
    });
    const structured = result.structuredContent;
    const size = JSON.stringify(structured ?? null).length;
    const keys = Object.keys(structured ?? {});
    calls.push({ tool: tool.name, isError: Boolean(result.isError), size, ms: Math.round(performance.now() - started) });
    if (!structured) failures.push(`${tool.name}: no structuredContent`);
    else {
      if (keys[0] !== "headline" || !String(structured.headline).startsWith("NON-AUTHORITATIVE"))
        failures.push(`${tool.name}: structuredContent does not open with the NON-AUTHORITATIVE headline`);
      const untrusted = structured.untrusted ?? {};
      if (!Array.isArray(untrusted.parts) || !untrusted.note)
        failures.push(`${tool.name}: structuredContent does not name its untrusted parts`);
      if (size > STRUCTURED_LIMIT) failures.push(`${tool.name}: structuredContent is ${size} characters`);
    }
  } catch (error) {
    failures.push(`${tool.name}: ${error.code ?? ""} ${String(error.message).slice(0, 400)}`);
  }
}

// A wrong argument must come back as a readable tool error, not a protocol failure.
try {
  const wrong = await client.callTool({ name: "asp_inspect", arguments: { verb: "bogus" } });
  if (!wrong.isError) failures.push("asp_inspect with verb 'bogus' was not an error");
} catch (error) {
  failures.push(`asp_inspect with a wrong argument threw: ${String(error.message).slice(0, 200)}`);
}

await client.close();
const report = {
  server: client.getServerVersion()?.name,
  tools: tools.map((tool) => tool.name),
  calls,
  schemaWarnings,
  failures,
};
console.log(JSON.stringify(report, null, 2));
process.exit(failures.length || schemaWarnings.length ? 1 : 0);

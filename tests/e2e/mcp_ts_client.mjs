// The official TypeScript MCP client (@modelcontextprotocol/sdk, package.json) against a Route Health MCP
// endpoint: reads {"url", "calls": [{"name", "arguments"}]} on stdin, connects over Streamable HTTP, lists the
// tools, makes each call (the client checks each structured result against the tool's outputSchema) and prints
// {"protocolVersion", "serverVersion", "sessionId", "tools", "results"} as JSON on stdout.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const chunks = [];
for await (const chunk of process.stdin) chunks.push(chunk);
const plan = JSON.parse(Buffer.concat(chunks).toString("utf8"));

const transport = new StreamableHTTPClientTransport(new URL(plan.url));
const client = new Client({ name: "route-health-tests", version: "1.0.0" });
await client.connect(transport);
const { tools } = await client.listTools();
const results = [];
for (const call of plan.calls) {
  try {
    results.push(await client.callTool({ name: call.name, arguments: call.arguments }));
  } catch (error) {
    results.push({ clientError: String(error?.message ?? error) });
  }
}
const answer = {
  protocolVersion: transport.protocolVersion ?? null,
  serverVersion: client.getServerVersion() ?? null,
  sessionId: transport.sessionId ?? null,
  tools,
  results,
};
await client.close();
process.stdout.write(JSON.stringify(answer));

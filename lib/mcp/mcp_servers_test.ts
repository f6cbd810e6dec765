// Unit tests of MCP_SERVERS parsing: fields, secrets in headers, what is dropped and said; Deno.
import { assert, assertEquals } from "@std/assert";
import { parseMcpServers } from "./mcp_servers.ts";

Deno.test("parseMcpServers() reads each server and resolves ${NAME} in headers from env", () => {
  const { servers, problems } = parseMcpServers(
    JSON.stringify([
      {
        name: "notion",
        url: "https://mcp.example.com/mcp",
        headers: { Authorization: "Bearer ${NOTION_TOKEN}", "X-Team": "t-${TEAM}" },
        approval: ["write"],
        tools: ["read", "write"],
      },
      { name: "docs-1", url: "http://127.0.0.1:9/mcp", approval: true },
    ]),
    { NOTION_TOKEN: "tok-123", TEAM: "blue" },
  );
  assertEquals(problems, []);
  assertEquals(servers[0].headers, { Authorization: "Bearer tok-123", "X-Team": "t-blue" });
  assertEquals([...(servers[0].approval as Set<string>)], ["write"]);
  assertEquals([...servers[0].tools!], ["read", "write"]);
  assertEquals(servers[1].approval, true);
  assertEquals(servers[1].tools, null);
  assertEquals(servers[1].headers, {});
});

Deno.test("parseMcpServers() drops bad entries and says why without a header's value", () => {
  const { servers, problems } = parseMcpServers(
    JSON.stringify([
      { name: "a__b", url: "https://x.example/mcp" },
      { name: "ok", url: "ftp://x.example/mcp" },
      { name: "ok", url: "https://x.example/mcp", headers: { A: "Bearer ${MISSING}" } },
      { name: "ok", url: "https://x.example/mcp", headers: { A: "plain-secret-value" } },
      { name: "ok", url: "https://y.example/mcp" },
    ]),
    {},
  );
  assertEquals(servers.map((s) => s.url), ["https://x.example/mcp"]);
  assertEquals(problems.length, 4);
  assert(problems[0].startsWith("MCP_SERVERS[0].name"));
  assert(problems[1].startsWith("MCP_SERVERS[1].url"));
  assertEquals(problems[2], "MCP server ok: header A names ${MISSING}, which is not set");
  assertEquals(problems[3], "MCP_SERVERS[4]: the name ok is used twice");
  assert(!problems.join("\n").includes("plain-secret-value"));
});

Deno.test("parseMcpServers() of unset, non-JSON or non-list input", () => {
  assertEquals(parseMcpServers(undefined, {}), { servers: [], problems: [] });
  assertEquals(parseMcpServers("  ", {}), { servers: [], problems: [] });
  assertEquals(parseMcpServers("{", {}).problems, ["MCP_SERVERS is not valid JSON"]);
  assertEquals(parseMcpServers("{}", {}).problems, ["MCP_SERVERS is not a JSON list"]);
});

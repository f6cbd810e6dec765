// Unit tests of McpToolbox against a real SDK server on loopback; Deno.
import { assert, assertEquals, assertMatch, assertRejects } from "@std/assert";
import { startMcpServer, type TestMcpServer } from "../../test/_support/mcp_server.ts";
import { currentContext } from "../runtime/mod.ts";
import type { Tool } from "../agent/mod.ts";
import { parseMcpServers } from "./mcp_servers.ts";
import { McpToolbox, resultText } from "./mcp_tools.ts";

const _signal = () => new AbortController().signal;
/** A tool call's options outside any turn: an unaborted signal, the empty context. */
const _options = () => ({ signal: _signal(), context: currentContext() });

async function _withServer(
  fn: (server: TestMcpServer, toolbox: McpToolbox) => Promise<void>,
  opts: { timeoutMs?: number; ttlMs?: number; entry?: Record<string, unknown> } = {},
): Promise<void> {
  const server = await startMcpServer();
  const { servers } = parseMcpServers(
    JSON.stringify([{ name: "t", url: server.url, ...opts.entry }]),
    { TOKEN: "s3cret-value" },
  );
  const toolbox = new McpToolbox({
    servers,
    timeoutMs: opts.timeoutMs ?? 5_000,
    toolsTtlMs: opts.ttlMs ?? 60_000,
  });
  try {
    await fn(server, toolbox);
  } finally {
    await toolbox.close();
    await server.close();
  }
}

function _tool(tools: Tool[], name: string): Tool {
  const tool = tools.find((t) => t.name === name);
  if (!tool) throw new Error(`no tool ${name} in ${tools.map((t) => t.name)}`);
  return tool;
}

Deno.test("McpToolbox.tools() offers each tool as <server>__<tool> with its JSON schema", async () => {
  await _withServer(async (server, toolbox) => {
    const tools = await toolbox.tools(_signal());
    assertEquals(tools.map((t) => t.name).sort(), [
      "t__add",
      "t__echo",
      "t__fail",
      "t__stuck",
      "t__wait",
    ]);
    const echo = _tool(tools, "t__echo");
    assertEquals(echo.description, "Echoes the text.");
    const schema = echo.parameters as { type: string; properties: Record<string, unknown> };
    assertEquals(schema.type, "object");
    assertEquals(Object.keys(schema.properties), ["text"]);
    assertEquals(server.lastHeaders?.get("authorization"), "Bearer s3cret-value");
  }, { entry: { headers: { Authorization: "Bearer ${TOKEN}" } } });
});

Deno.test("McpToolbox calls round-trip arguments and results; a tool error throws", async () => {
  await _withServer(async (server, toolbox) => {
    const tools = await toolbox.tools(_signal());
    const echoed = await _tool(tools, "t__echo").run({ text: "hi" }, _options());
    assertEquals(echoed, "echo: hi");
    assertEquals(await _tool(tools, "t__add").run({ a: 2, b: 3 }, _options()), "5");
    assertEquals(server.calls.slice(0, 2), [
      { name: "echo", arguments: { text: "hi" } },
      { name: "add", arguments: { a: 2, b: 3 } },
    ]);
    const error = await assertRejects(
      async () => await _tool(tools, "t__fail").run({}, _options()),
    ) as Error;
    assertEquals(error.message, "the tool broke");
  });
});

Deno.test("McpToolbox lists a server once while its list is fresh", async () => {
  await _withServer(async (server, toolbox) => {
    await toolbox.tools(_signal());
    await toolbox.tools(_signal());
    await toolbox.tools(_signal());
    assertEquals(server.methods.filter((m) => m === "tools/list").length, 1);
  });
});

Deno.test("McpToolbox lists again after tools/list_changed", async () => {
  await _withServer(async (server, toolbox) => {
    await toolbox.tools(_signal());
    server.addTool("extra");
    // The changed list is fetched in the background; a later turn sees it.
    await server.waitFor("notifications/initialized");
    let names: string[] = [];
    for (let i = 0; i < 200 && !names.includes("t__extra"); i++) {
      names = (await toolbox.tools(_signal())).map((t) => t.name);
      await new Promise((r) => setTimeout(r, 20));
    }
    assert(names.includes("t__extra"), `listed: ${names}`);
  });
});

Deno.test("McpToolbox filters tools and marks approval", async () => {
  await _withServer(async (_server, toolbox) => {
    const tools = await toolbox.tools(_signal());
    assertEquals(tools.map((t) => t.name).sort(), ["t__add", "t__echo"]);
    assertEquals(_tool(tools, "t__add").approval, "always");
    assertEquals(_tool(tools, "t__echo").approval, undefined);
  }, { entry: { tools: ["echo", "add"], approval: ["add"] } });
});

Deno.test("McpToolbox: a call that gets no answer fails with a timeout error and is cancelled", async () => {
  await _withServer(async (server, toolbox) => {
    const tools = await toolbox.tools(_signal());
    const error = await assertRejects(
      async () => await _tool(tools, "t__wait").run({}, _options()),
    ) as Error;
    assertMatch(error.message, /^MCP server t: no answer within 300 ms/);
    await server.waitFor("notifications/cancelled");
    // The connection still serves the next call.
    assertEquals(
      await _tool(tools, "t__echo").run({ text: "x" }, _options()),
      "echo: x",
    );
  }, { timeoutMs: 300 });
});

Deno.test("McpToolbox: an aborted turn cancels its call on the server", async () => {
  await _withServer(async (server, toolbox) => {
    const tools = await toolbox.tools(_signal());
    const turn = new AbortController();
    const call = _tool(tools, "t__wait").run({}, {
      signal: turn.signal,
      context: currentContext(),
    });
    await server.waitFor("tools/call");
    turn.abort(new Error("stopped"));
    await assertRejects(async () => await call);
    await server.waitFor("notifications/cancelled");
    for (let i = 0; i < 200 && server.cancelled < 1; i++) {
      await new Promise((r) => setTimeout(r, 20));
    }
    assertEquals(server.cancelled, 1);
  });
});

Deno.test("McpToolbox: a call the server never answers, even cancelled, has its exchange ended", async () => {
  await _withServer(async (server, toolbox) => {
    const tools = await toolbox.tools(_signal());
    await assertRejects(async () => await _tool(tools, "t__stuck").run({}, _options()));
    await server.waitFor("notifications/cancelled");
    for (let i = 0; i < 200 && server.disconnected < 1; i++) {
      await new Promise((r) => setTimeout(r, 20));
    }
    assertEquals(server.disconnected, 1);
  }, { timeoutMs: 300 });
});

Deno.test("McpToolbox: HTTP 500 on a call is a tool error, and the next call reconnects", async () => {
  await _withServer(async (server, toolbox) => {
    const tools = await toolbox.tools(_signal());
    server.failCalls = true;
    const error = await assertRejects(
      async () => await _tool(tools, "t__echo").run({ text: "a" }, _options()),
    ) as Error;
    assertMatch(error.message, /^MCP server t: .*500/);
    server.failCalls = false;
    assertEquals(
      await _tool(tools, "t__echo").run({ text: "b" }, _options()),
      "echo: b",
    );
    assertEquals(server.methods.filter((m) => m === "initialize").length, 2);
  });
});

Deno.test("McpToolbox lists once more on a fresh connection when the first listing's connection is lost", async () => {
  const server = await startMcpServer();
  const { servers } = parseMcpServers(JSON.stringify([{ name: "t", url: server.url }]), {});
  // The first request meets a pooled connection the server had already closed, as workerd
  // reports it; every later one goes through.
  let lost = 0;
  const toolbox = new McpToolbox({ servers, timeoutMs: 5_000, toolsTtlMs: 60_000 }, {
    fetch: (url, init) => {
      if (lost++ === 0) return Promise.reject(new TypeError("Network connection lost."));
      return fetch(url, init);
    },
  });
  try {
    assertEquals((await toolbox.tools(_signal())).length, 5);
    assertEquals(server.methods.filter((m) => m === "tools/list").length, 1);
  } finally {
    await toolbox.close();
    await server.close();
  }
});

Deno.test("McpToolbox: a server down at start-up offers nothing, and is listed again later", async () => {
  const probe = await startMcpServer();
  const { port, url } = probe;
  await probe.close();
  const { servers } = parseMcpServers(JSON.stringify([{ name: "t", url }]), {});
  let now = 1_000_000;
  const toolbox = new McpToolbox({ servers, timeoutMs: 2_000, toolsTtlMs: 60_000 }, {
    now: () => now,
  });
  assertEquals(await toolbox.tools(_signal()), []);
  const server = await startMcpServer(port);
  try {
    // Within the retry delay nothing is tried; after it, the server is listed.
    assertEquals(await toolbox.tools(_signal()), []);
    assertEquals(server.methods, []);
    now += 10_000;
    assertEquals((await toolbox.tools(_signal())).length, 5);
  } finally {
    await toolbox.close();
    await server.close();
  }
});

Deno.test("McpToolbox: a server gone away gives the model an error naming no URL and no secret", async () => {
  const server = await startMcpServer();
  const url = `${server.url}?key=url-s3cret`;
  const { servers } = parseMcpServers(
    JSON.stringify([{ name: "t", url, headers: { Authorization: "Bearer ${TOKEN}" } }]),
    { TOKEN: "header-s3cret" },
  );
  const toolbox = new McpToolbox({ servers, timeoutMs: 5_000, toolsTtlMs: 60_000 });
  try {
    const tools = await toolbox.tools(_signal());
    await server.close();
    const error = await assertRejects(
      async () => await _tool(tools, "t__echo").run({ text: "x" }, _options()),
    ) as Error;
    assertEquals(error.message, "MCP server t: could not reach the MCP server");
    assert(!error.message.includes("s3cret") && !error.message.includes("127.0.0.1"));
  } finally {
    await toolbox.close();
  }
});

Deno.test("resultText() joins text parts, summarises images, falls back to structured content", () => {
  assertEquals(
    resultText({
      content: [{ type: "text", text: "a" }, {
        type: "image",
        data: "AAAA",
        mimeType: "image/png",
      }],
    }),
    'a\n{"type":"image","mimeType":"image/png"}',
  );
  assertEquals(resultText({ content: [], structuredContent: { x: 1 } }), '{"x":1}');
});

// MCP_SERVERS in workerd: a real SDK server's tools offered to the model, called, failing, stopped, cached — each test with a Worker and an MCP server of its own (shared ones lost listings under a loaded full run, not understood yet); Deno + Miniflare.
import { assert, assertEquals, assertMatch, assertStrictEquals } from "@std/assert";
import { API_KEY, chat, chatReply, type Json, json, until, withBaton } from "./_support/clients.ts";
import type { FakeModel, FakeModelRequest, FakeModelStep } from "../lib/testing/fake_model.ts";
import { startMcpServer, type TestMcpServer } from "./_support/mcp_server.ts";
import type { TestWorker } from "./_support/worker.ts";

const auth = { authorization: `Bearer ${API_KEY}` };
const MCP_TOKEN = "mcp-bearer-secret-value";

/** Runs `fn` against baton configured with the test server as `t` (its header naming a secret). */
async function withMcp(
  fn: (worker: TestWorker, fake: FakeModel, server: TestMcpServer) => Promise<void>,
  opts: { vars?: Record<string, string>; entry?: Record<string, unknown>; server?: TestMcpServer } =
    {},
): Promise<void> {
  const server = opts.server ?? await startMcpServer();
  try {
    const servers = [{
      name: "t",
      url: server.url,
      headers: { Authorization: "Bearer ${MCP_TOKEN}" },
      ...opts.entry,
    }];
    await withBaton((worker, fake) => fn(worker, fake, server), {
      vars: {
        MCP_SERVERS: JSON.stringify(servers),
        MCP_TOKEN,
        // Generous: under a loaded run a healthy server's tools/list can take over a second.
        MCP_TIMEOUT_MS: "5000",
        ...opts.vars,
      },
    });
  } finally {
    await server.close();
  }
}

/** First call: the tool; then a reply quoting the tool result. */
const toolThenText =
  (tool: string, args: Record<string, unknown>) => (req: FakeModelRequest): FakeModelStep => {
    const last = req.body.messages.at(-1);
    return last.role === "tool"
      ? { kind: "text", text: `result: ${last.content}` }
      : { kind: "tool_call", name: tool, args };
  };

Deno.test("MCP_SERVERS offers each server's tools to the model as <name>__<tool> with their schemas", async () => {
  await withMcp(async (worker, fake, server) => {
    assertEquals(await chatReply(await chat(worker, "hello", { session: "m1" })), "hello");
    const tools: Json[] = fake.requests[0].body.tools;
    const byName = new Map(tools.map((t) => [t.function.name, t.function]));
    for (const name of ["t__echo", "t__add", "t__fail", "t__wait", "t__stuck"]) {
      assert(byName.has(name), `offered: ${[...byName.keys()]}`);
    }
    assert(byName.has("session_info"));
    const echo = byName.get("t__echo");
    assertEquals(echo.description, "Echoes the text.");
    assertEquals(echo.parameters.type, "object");
    assertEquals(echo.parameters.properties.text.type, "string");
    assertEquals(echo.parameters.required, ["text"]);
    // The header's ${MCP_TOKEN} was resolved from the Worker's secrets.
    assertEquals(server.lastHeaders?.get("authorization"), `Bearer ${MCP_TOKEN}`);
  });
});

Deno.test("MCP_SERVERS tools filter and approval: only the listed tools, the marked one asks first", async () => {
  await withMcp(async (worker, fake) => {
    fake.script(toolThenText("t__add", { a: 1, b: 2 }));
    const res = await worker.fetch("/v1/runs", {
      method: "POST",
      headers: { ...auth, "content-type": "application/json" },
      body: JSON.stringify({ input: "add", session: "m-approve" }),
    });
    const run = await json(res);
    const names = () => fake.requests[0].body.tools.map((t: Json) => t.function.name);
    await fake.waitForRequests(1);
    assertEquals(names().filter((n: string) => n.startsWith("t__")).sort(), ["t__add", "t__echo"]);
    await until(
      async () =>
        (await json(await worker.fetch(`/v1/runs/${run.run_id}`, { headers: auth }))).status ===
          "waiting_for_approval",
      "waiting for approval",
    );
  }, { entry: { tools: ["echo", "add"], approval: ["add"] } });
});

Deno.test("MCP_SERVERS: a call's arguments and result round-trip through the model", async () => {
  await withMcp(async (worker, fake, server) => {
    fake.script(toolThenText("t__add", { a: 20, b: 22 }));
    assertEquals(await chatReply(await chat(worker, "sum", { session: "m2" })), "result: 42");
    assertEquals(server.calls, [{ name: "add", arguments: { a: 20, b: 22 } }]);
  });
});

Deno.test("MCP_SERVERS: a second turn does not list the tools again", async () => {
  await withMcp(async (worker, _fake, server) => {
    await chatReply(await chat(worker, "one", { session: "m3" }));
    await chatReply(await chat(worker, "two", { session: "m3" }));
    await chatReply(await chat(worker, "three", { session: "m3" }));
    assertEquals(server.methods.filter((m) => m === "tools/list").length, 1);
  });
});

for (
  const [what, arrange, pattern] of [
    ["answers 500", (s: TestMcpServer) => void (s.failCalls = true), /HTTP 500/],
    ["hangs", () => {}, /no answer within 3000 ms/],
  ] as const
) {
  Deno.test(`MCP_SERVERS: a server that ${what} gives the model a tool error and the turn completes`, async () => {
    // 3 s, not the file's 1 s: under a loaded run the warm-up's tools/list could itself take 1 s,
    // leaving the model no tool to call (seen: "unknown tool: t__stuck").
    await withMcp(async (worker, fake, server) => {
      await chatReply(await chat(worker, "warm up", { session: "m4" }));
      arrange(server);
      const tool = what === "hangs" ? "t__stuck" : "t__echo";
      fake.script(toolThenText(tool, { text: "x" }));
      const reply = await chatReply(await chat(worker, "call it", { session: "m4" }));
      assertMatch(reply, /^result: \{"error":"MCP server t: /);
      assertMatch(reply, pattern);
    }, { vars: { MCP_TIMEOUT_MS: "3000" } });
  });
}

Deno.test("MCP_SERVERS: a server that is not started offers no tools, the turn completes, it is listed later", async () => {
  const probe = await startMcpServer();
  const { port } = probe;
  await probe.close();
  let server: TestMcpServer | null = null;
  try {
    await withMcp(async (worker, fake) => {
      assertEquals(await chatReply(await chat(worker, "first", { session: "m5" })), "first");
      const names = fake.requests[0].body.tools.map((t: Json) => t.function.name);
      assertEquals(names.filter((n: string) => n.startsWith("t__")), []);
      // A call of one of its tools anyway is an error the model reads.
      fake.script(toolThenText("t__echo", { text: "x" }));
      assertMatch(await chatReply(await chat(worker, "x", { session: "m5" })), /unknown tool/);
      fake.script((req) => ({ kind: "text", text: req.lastUserText }));
      server = await startMcpServer(port);
      // Retried after min(10 s, MCP_TOOLS_TTL_MS): turns go on until its tools appear.
      await until(async () => {
        await chatReply(await chat(worker, "again", { session: "m5" }));
        const last = fake.requests.at(-1)!.body.tools.map((t: Json) => t.function.name);
        return last.includes("t__echo");
      }, "the server's tools offered");
    }, {
      vars: { MCP_TOOLS_TTL_MS: "200" },
      server: { url: `http://127.0.0.1:${port}/mcp`, close: async () => {} } as TestMcpServer,
    });
  } finally {
    await (server as TestMcpServer | null)?.close();
  }
});

Deno.test("MCP_SERVERS: POST /v1/runs/{id}/stop cancels an in-flight MCP call", async () => {
  await withMcp(async (worker, fake, server) => {
    fake.script(toolThenText("t__wait", {}));
    const res = await worker.fetch("/v1/runs", {
      method: "POST",
      headers: { ...auth, "content-type": "application/json" },
      body: JSON.stringify({ input: "wait", session: "m6" }),
    });
    assertStrictEquals(res.status, 202);
    const run = await json(res);
    await server.waitFor("tools/call");
    const stop = await worker.fetch(`/v1/runs/${run.run_id}/stop`, {
      method: "POST",
      headers: auth,
    });
    assertStrictEquals(stop.status, 200);
    await server.waitFor("notifications/cancelled");
    await until(() => server.cancelled === 1, "the server's handler cancelled");
    await until(
      async () =>
        (await json(await worker.fetch(`/v1/runs/${run.run_id}`, { headers: auth }))).status ===
          "cancelled",
      "run cancelled",
    );
  }, { vars: { MCP_TIMEOUT_MS: "60000" } });
});

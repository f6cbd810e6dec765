// POST /mcp in workerd: the SDK's own client against baton — tools, ask, history, keys, tenants, bad input; Deno + Miniflare.
import { assert, assertEquals, assertStrictEquals } from "@std/assert";
import { Client, StreamableHTTPClientTransport } from "../lib/mcp/_sdk.ts";
import { API_KEY, type Json, json, sessionState } from "./_support/clients.ts";
import { sharedBaton } from "./_support/shared_baton.ts";
import type { TestWorker } from "./_support/worker.ts";

const OTHER_KEY = "other-tenant-key-0123";

// One Worker for the file, with a second tenant for the history test.
const baton = sharedBaton({ vars: { GATEWAY_API_KEYS: `other:${OTHER_KEY}` } });

/** An SDK client connected to the worker's /mcp with `key`. */
async function connect(worker: TestWorker, key = API_KEY): Promise<Client> {
  const client = new Client({ name: "test-client", version: "1.0.0" });
  const transport = new StreamableHTTPClientTransport(new URL("mcp", worker.url), {
    requestInit: { headers: { authorization: `Bearer ${key}` } },
  });
  await client.connect(transport);
  return client;
}

const text = (result: Json): string => result.content.map((c: Json) => c.text).join("");

baton.test("POST /mcp tools/list offers ask and session_history with their schemas", async (worker) => {
  const client = await connect(worker);
  try {
    const { tools } = await client.listTools();
    assertEquals(tools.map((t) => t.name).sort(), ["ask", "session_history"]);
    const ask = tools.find((t) => t.name === "ask")!;
    assertEquals(ask.inputSchema.required, ["message"]);
    assert(ask.inputSchema.properties && "session" in ask.inputSchema.properties);
  } finally {
    await client.close();
  }
});

baton.test(
  "POST /mcp ask returns the agent's answer, with progress; the turn is in the session's transcript",
  async (worker, fake) => {
    fake.script((req) => ({ kind: "text", text: `answer to ${req.lastUserText}` }));
    const client = await connect(worker);
    try {
      const progress: string[] = [];
      const result = await client.callTool(
        { name: "ask", arguments: { session: "mcp-a", message: "hello" } },
        undefined,
        { onprogress: (p) => void progress.push(p.message ?? "") },
      );
      assertEquals(result.isError, undefined);
      assertEquals(text(result), "answer to hello");
      assertEquals(result.structuredContent, { session: "mcp-a", answer: "answer to hello" });
      assert(progress.includes("run.completed"), `progress: ${progress}`);
      const state = await sessionState(worker, "api:mcp-a");
      assertEquals(state.messages.map((m) => [m.role, m.content]), [
        ["user", "hello"],
        ["assistant", "answer to hello"],
      ]);
      // Without a session, a new one is started and named.
      const fresh = await client.callTool({ name: "ask", arguments: { message: "again" } });
      const session = (fresh.structuredContent as Json).session;
      assert(typeof session === "string" && session !== "mcp-a");
      const history = await client.callTool({ name: "session_history", arguments: { session } });
      assertEquals(JSON.parse(text(history)).messages.map((m: Json) => m.content), [
        "again",
        "answer to again",
      ]);
    } finally {
      await client.close();
    }
  },
);

baton.test("POST /mcp with a wrong key is a 401", async (worker) => {
  const res = await worker.fetch("/mcp", {
    method: "POST",
    headers: {
      authorization: "Bearer wrong-key",
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
    },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
  });
  assertStrictEquals(res.status, 401);
  assertEquals((await json(res)).error.type, "invalid_api_key");
  let failed = false;
  await connect(worker, "wrong-key").catch(() => failed = true);
  assert(failed, "the SDK client connected with a wrong key");
});

baton.test("POST /mcp session_history of another tenant's session is not found", async (worker) => {
  const owner = await connect(worker);
  const other = await connect(worker, OTHER_KEY);
  try {
    await owner.callTool({ name: "ask", arguments: { session: "shared", message: "mine" } });
    const seen = await owner.callTool({
      name: "session_history",
      arguments: { session: "shared" },
    });
    assertEquals(seen.isError, undefined);
    const result = await other.callTool({
      name: "session_history",
      arguments: { session: "shared" },
    });
    assertEquals(result.isError, true);
    assertEquals(text(result), "no such session: shared");
  } finally {
    await owner.close();
    await other.close();
  }
});

baton.test("POST /mcp bad input is a JSON-RPC error or a 4xx, never a 5xx", async (worker) => {
  const post = (body: string, accept = "application/json, text/event-stream") =>
    worker.fetch("/mcp", {
      method: "POST",
      headers: {
        authorization: `Bearer ${API_KEY}`,
        "content-type": "application/json",
        accept,
      },
      body,
    });
  const notJson = await post("{not json");
  await notJson.body?.cancel();
  assertStrictEquals(notJson.status, 400);
  // An empty batch has nothing to answer (202); the others are refused. None is a 5xx.
  for (const body of ["[]", '{"jsonrpc":"2.0"}', '"x"', '{"jsonrpc":"2.0","id":1}']) {
    const res = await post(body);
    await res.body?.cancel();
    assert(res.status < 500, `${body} → ${res.status}`);
  }
  const noAccept = await post('{"jsonrpc":"2.0","id":1,"method":"tools/list"}', "text/html");
  await noAccept.body?.cancel();
  assertStrictEquals(noAccept.status, 406);
  const get = await worker.fetch("/mcp", { headers: { authorization: `Bearer ${API_KEY}` } });
  await get.body?.cancel();
  assertStrictEquals(get.status, 405);
  const client = await connect(worker);
  try {
    const bad = await client.callTool({ name: "ask", arguments: { session: "bad id!" } })
      .catch((error) => ({ isError: true, content: [{ text: String(error) }] }));
    assertEquals(bad.isError, true);
    const unknown = await client.callTool({ name: "nope", arguments: {} })
      .catch((error) => ({ isError: true, content: [{ text: String(error) }] }));
    assertEquals(unknown.isError, true);
  } finally {
    await client.close();
  }
});

baton.done();

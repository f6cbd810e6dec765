// Depth limits on request JSON: deep nesting is refused at parse time and the session it named keeps working, across a restart; Deno + Miniflare.
import { assert, assertEquals, assertStrictEquals } from "@std/assert";
import { API_KEY, chatReply, json, postJson, sendWebhook, withBaton } from "./_support/clients.ts";
import { sharedBaton } from "./_support/shared_baton.ts";
import { tempPersistDir, type TestWorker } from "./_support/worker.ts";

// One Worker for the tests without a restart; the restart test starts its own, twice.
const baton = sharedBaton();

// What broke a session: ~1,000 levels (~6 KB), past SQLite's JSON depth limit once stored.
const DEEP = 1_000;

/** `levels` levels of JSON objects, each holding the next under "a" (the innermost empty). */
function nested(levels: number): Record<string, unknown> {
  return JSON.parse('{"a":'.repeat(levels - 1) + "{}" + "}".repeat(levels - 1));
}

/**
 * POST `path` with the API key and `body`, given up after 15 s: before the fix a broken session
 * never answers, and the test must fail on that, not hang.
 */
const post = (worker: TestWorker, path: string, body: unknown, headers?: Record<string, string>) =>
  postJson(worker, path, body, headers, 15_000);

/** A one-message Chat Completions body, with `extra` fields. */
function chatBody(text: string, extra: Record<string, unknown> = {}) {
  return { model: "any", messages: [{ role: "user", content: text }], ...extra };
}

/** Asserts a 400 `invalid_request_error` whose message includes `names`. */
async function assertRefused(res: Response, names: string): Promise<void> {
  const body = await json(res);
  assertStrictEquals(res.status, 400, JSON.stringify(body).slice(0, 300));
  assertStrictEquals(body.error.type, "invalid_request_error");
  assert(body.error.message.includes(names), `"${body.error.message}" names ${names}`);
}

/** GET/POST a session route with the key, given up after 15 s; asserts a 200. */
async function sessionRoute(worker: TestWorker, key: string, route: string): Promise<void> {
  const res = await worker.fetch(`/v1/sessions/${encodeURIComponent(key)}/${route}`, {
    method: route === "inspect" ? "GET" : "POST",
    headers: { authorization: `Bearer ${API_KEY}` },
    signal: AbortSignal.timeout(15_000),
  });
  assertStrictEquals(res.status, 200, `${route}: ${await res.text()}`);
}

Deno.test(
  "POST /v1/chat/completions refuses 1,000 levels of nesting in a tool's parameters or a response schema with a 400, and the session answers, also after a restart",
  async () => {
    const dir = await tempPersistDir();
    const session = { "x-session-id": "deep-chat" };
    try {
      await withBaton(async (worker, fake) => {
        assertEquals(
          await chatReply(await post(worker, "/v1/chat/completions", chatBody("one"), session)),
          "one",
        );
        const tools = [{ type: "function", function: { name: "probe", parameters: nested(DEEP) } }];
        await assertRefused(
          await post(worker, "/v1/chat/completions", chatBody("deep tools", { tools }), session),
          "tools.0.function.parameters: nesting deeper than 64 levels",
        );
        const response_format = {
          type: "json_schema",
          json_schema: { name: "deep", schema: nested(DEEP) },
        };
        await assertRefused(
          await post(
            worker,
            "/v1/chat/completions",
            chatBody("deep schema", { response_format }),
            session,
          ),
          "response_format.json_schema.schema: nesting deeper than 64 levels",
        );
        // Nesting anywhere else in the body is bounded too.
        const messages = [{ role: "user", content: "deep extra", extra: nested(DEEP) }];
        await assertRefused(
          await post(worker, "/v1/chat/completions", { model: "any", messages }, session),
          "messages.0.extra",
        );
        assertEquals(fake.requests.length, 1, "no refused request started a turn");
        assertEquals(
          await chatReply(await post(worker, "/v1/chat/completions", chatBody("two"), session)),
          "two",
        );
        await sessionRoute(worker, "api:deep-chat", "inspect");
      }, { persistDir: dir.path });
      await withBaton(async (worker, fake) => {
        assertEquals(
          await chatReply(await post(worker, "/v1/chat/completions", chatBody("three"), session)),
          "three",
        );
        assertEquals(fake.requests.map((r) => r.lastUserText), ["three"]);
        for (const route of ["inspect", "stop", "reset"]) {
          await sessionRoute(worker, "api:deep-chat", route);
        }
      }, { persistDir: dir.path });
    } finally {
      await dir.cleanup();
    }
  },
);

baton.test(
  "POST /v1/responses refuses deep nesting in tools, text.format.schema and input items with a 400; the conversation continues",
  async (worker, fake) => {
    const first = await post(worker, "/v1/responses", { model: "any", input: "first" });
    const created = await json(first);
    assertStrictEquals(first.status, 200, JSON.stringify(created));
    const previous_response_id = created.id;
    const deep = nested(DEEP);
    const refusals: [Record<string, unknown>, string][] = [
      [
        { tools: [{ type: "function", name: "probe", parameters: deep }] },
        "tools.0.parameters: nesting deeper than 64 levels",
      ],
      [
        { text: { format: { type: "json_schema", name: "deep", schema: deep } } },
        "text.format.schema: nesting deeper than 64 levels",
      ],
      [
        { input: [{ role: "user", content: "deep", extra: deep }] },
        "input.0.extra",
      ],
    ];
    for (const [fields, names] of refusals) {
      const res = await post(worker, "/v1/responses", {
        model: "any",
        input: "deep",
        previous_response_id,
        ...fields,
      });
      await assertRefused(res, names);
    }
    assertEquals(fake.requests.length, 1, "no refused request started a turn");
    const next = await post(worker, "/v1/responses", {
      model: "any",
      input: "second",
      previous_response_id,
    });
    const answer = await json(next);
    assertStrictEquals(next.status, 200, JSON.stringify(answer));
    assertStrictEquals(answer.status, "completed");
    assertStrictEquals(answer.output[0].content[0].text, "second");
  },
);

baton.test(
  "POST /webhooks/generic refuses a deeply nested delivery with a 400 and starts no turn",
  async (worker, fake) => {
    const res = await sendWebhook(worker, {
      session: "deep-hook",
      text: "hi",
      extra: nested(DEEP),
    });
    await assertRefused(res, "nesting deeper than");
    assertEquals(fake.requests.length, 0);
    const ok = await sendWebhook(worker, { session: "deep-hook", text: "still here" });
    assertEquals(await json(ok), { session: "deep-hook", reply: "still here" });
  },
);

baton.test(
  "POST /v1/chat/completions accepts a tool schema nested 64 levels deep",
  async (worker) => {
    const tools = [{ type: "function", function: { name: "probe", parameters: nested(64) } }];
    const res = await post(worker, "/v1/chat/completions", chatBody("at the limit", { tools }), {
      "x-session-id": "deep-limit",
    });
    assert(res.status === 200, await res.clone().text());
    assertEquals(await chatReply(res), "at the limit");
  },
);

baton.done();

// The HTTP surface in workerd: OpenAI-compatible API, streaming, and every bad-input class; Deno + Miniflare.
import { assert, assertEquals, assertMatch, assertStrictEquals } from "@std/assert";
import {
  API_KEY,
  chat,
  chatReply,
  json,
  sendWebhook,
  sessionState,
  WEBHOOK_SECRET,
  withBaton,
} from "./_support/clients.ts";
import { sharedBaton } from "./_support/shared_baton.ts";
import type { TestWorker } from "./_support/worker.ts";

// One Worker for the file; the test of missing secrets starts its own.
const baton = sharedBaton({ vars: { LLM_MODEL: "test-model", LLM_MAX_RETRIES: "0" } });

async function expectError(res: Response, status: number, type?: string): Promise<string> {
  const body = await json(res);
  assertStrictEquals(res.status, status, JSON.stringify(body));
  assertStrictEquals(typeof body.error?.message, "string");
  if (type) assertStrictEquals(body.error.type, type);
  return body.error.message;
}

/**
 * Sends a request whose body is over the limit. The Worker answers 413 from the Content-Length
 * without reading the body, and now and then the client is still uploading when the connection
 * closes ("error reading a body from connection"): a race of the test's socket, so try again.
 */
async function _oversized(send: () => Promise<Response>): Promise<Response> {
  for (let attempt = 1;; attempt++) {
    try {
      const res = await send();
      // Read here too: the failure may come while reading the answer.
      return new Response(await res.text(), { status: res.status, headers: res.headers });
    } catch (error) {
      if (attempt >= 3 || !(error instanceof TypeError)) throw error;
    }
  }
}

const post = (
  worker: TestWorker,
  path: string,
  body: BodyInit,
  headers: Record<string, string> = {},
) =>
  worker.fetch(path, {
    method: "POST",
    headers: { authorization: `Bearer ${API_KEY}`, ...headers },
    body,
  });

baton.test("GET /healthz answers without auth", async (worker) => {
  const res = await worker.fetch("/healthz");
  assertEquals(await json(res), { ok: true });
});

baton.test(
  "POST /v1/chat/completions answers in the OpenAI shape and keeps the session's history",
  async (worker, fake) => {
    const res = await chat(worker, "hello", { session: "shape" });
    assertStrictEquals(res.headers.get("x-session-id"), "shape");
    const body = await json(res);
    assertMatch(body.id, /^chatcmpl-/);
    assertEquals(body.object, "chat.completion");
    assertEquals(body.choices[0], {
      index: 0,
      message: { role: "assistant", content: "hello" },
      finish_reason: "stop",
    });
    assertEquals(body.usage, { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 });
    // The stored transcript supplies the history; the request's earlier messages are ignored now.
    await chatReply(
      await chat(worker, [
        { role: "user", content: "ignored" },
        { role: "assistant", content: "ignored too" },
        { role: "user", content: "second" },
      ], { session: "shape" }),
    );
    assertEquals(fake.requests[1].body.messages.map((m: { content: string }) => m.content), [
      "hello",
      "hello",
      "second",
    ]);
  },
);

baton.test(
  "POST /v1/chat/completions continues the session whose conversation is exactly the request's history",
  async (worker, fake) => {
    const first = await chat(worker, [{ role: "system", content: "sys" }, {
      role: "user",
      content: "start",
    }]);
    const id = first.headers.get("x-session-id")!;
    await chatReply(first);
    const next = await chat(worker, [
      { role: "system", content: "sys" },
      { role: "user", content: "start" },
      { role: "assistant", content: "start" },
      { role: "user", content: "more" },
    ]);
    assertStrictEquals(next.headers.get("x-session-id"), id);
    await chatReply(next);
    const other = await chat(worker, [{ role: "system", content: "sys" }, {
      role: "user",
      content: "start",
    }]);
    assert(other.headers.get("x-session-id") !== id, "a first message never joins a conversation");
    await chatReply(other);
    const state = await sessionState(worker, `api:${id}`);
    assertEquals(state.messages.map((m) => m.content), ["start", "start", "more", "more"]);
    assertEquals(fake.requests[0].body.messages[0], { role: "system", content: "sys" });
  },
);

baton.test(
  "POST /v1/chat/completions seeds a new session from the request's earlier messages",
  async (worker, fake) => {
    await chatReply(
      await chat(worker, [
        { role: "user", content: "earlier" },
        { role: "assistant", content: "earlier answer" },
        { role: "user", content: "now" },
      ], { session: "seeded" }),
    );
    assertEquals(fake.requests[0].body.messages.map((m: { content: string }) => m.content), [
      "earlier",
      "earlier answer",
      "now",
    ]);
    assertEquals((await sessionState(worker, "api:seeded")).messages.length, 4);
  },
);

baton.test("POST /v1/chat/completions streams chat.completion.chunk events ending with [DONE]", async (worker) => {
  const res = await chat(worker, "streamed reply", { session: "stream", stream: true });
  assertStrictEquals(res.status, 200);
  assertMatch(res.headers.get("content-type") ?? "", /text\/event-stream/);
  const text = await res.text();
  const data = text.split("\n\n").filter((f) => f.startsWith("data: ")).map((f) => f.slice(6));
  assertStrictEquals(data.at(-1), "[DONE]");
  const chunks = data.slice(0, -1).map((d) => JSON.parse(d));
  for (const c of chunks) assertEquals(c.object, "chat.completion.chunk");
  assertEquals(chunks.map((c) => c.choices[0].delta.content ?? "").join(""), "streamed reply");
  assertEquals(chunks.at(-1).choices[0].finish_reason, "stop");
});

baton.test(
  "POST /v1/chat/completions streams a model failure as an error event",
  async (worker, fake) => {
    fake.script(() => ({ kind: "status", status: 503 }));
    const text = await (await chat(worker, "x", { session: "stream-fail", stream: true })).text();
    const data = text.split("\n\n").filter((f) => f.startsWith("data: ")).map((f) => f.slice(6));
    assertEquals(JSON.parse(data.at(-2)!).error.type, "model_error");
    assertStrictEquals(data.at(-1), "[DONE]");
  },
);

baton.test("GET /v1/models lists the configured model", async (worker) => {
  const res = await worker.fetch("/v1/models", {
    headers: { authorization: `Bearer ${API_KEY}` },
  });
  assertEquals((await json(res)).data[0].id, "test-model");
});

baton.test(
  "baton refuses bad input with a 4xx JSON error and starts no turn",
  async (worker, fake) => {
    const ok = JSON.stringify({ messages: [{ role: "user", content: "x" }] });
    await expectError(await worker.fetch("/nope"), 404, "not_found");
    await expectError(await worker.fetch("/v1/chat/completions"), 405, "method_not_allowed");
    await expectError(await worker.fetch("/healthz", { method: "POST" }), 405);
    await expectError(
      await worker.fetch("/v1/chat/completions", { method: "POST", body: ok }),
      401,
      "invalid_api_key",
    );
    await expectError(await chat(worker, "x", { key: "wrong-key" }), 401, "invalid_api_key");
    await expectError(
      await worker.fetch("/v1/chat/completions", {
        method: "POST",
        headers: { authorization: `Basic ${API_KEY}` },
        body: ok,
      }),
      401,
    );
    await expectError(
      await post(worker, "/v1/chat/completions", "{not json"),
      400,
      "invalid_request_error",
    );
    assertMatch(
      await expectError(
        await post(
          worker,
          "/v1/chat/completions",
          JSON.stringify({ messages: [{ role: "wizard" }] }),
        ),
        400,
      ),
      /messages\.0\.role/,
    );
    assertMatch(
      await expectError(await post(worker, "/v1/chat/completions", JSON.stringify({})), 400),
      /messages/,
    );
    assertMatch(
      await expectError(
        await post(
          worker,
          "/v1/chat/completions",
          JSON.stringify({ messages: [{ role: "system", content: "s" }] }),
        ),
        400,
      ),
      /no user message/,
    );
    await expectError(await chat(worker, "x", { session: "bad session!" }), 400);
    await expectError(
      await _oversized(() => post(worker, "/v1/chat/completions", "x".repeat(1024 * 1024 + 1))),
      413,
      "request_too_large",
    );

    const good = { session: "w", text: "hi" };
    await expectError(
      await sendWebhook(worker, good, { secret: "whsec_" + btoa("another-secret-entirely") }),
      401,
    );
    await expectError(await sendWebhook(worker, good, { signature: "v1,AAAA" }), 401);
    await expectError(
      await sendWebhook(worker, good, { timestamp: Math.floor(Date.now() / 1000) - 3600 }),
      401,
    );
    await expectError(
      await sendWebhook(worker, good, { timestamp: Math.floor(Date.now() / 1000) + 3600 }),
      401,
    );
    await expectError(
      await worker.fetch("/webhooks/generic", { method: "POST", body: JSON.stringify(good) }),
      401,
    );
    await expectError(await sendWebhook(worker, null, { rawBody: "{oops" }), 400);
    assertMatch(await expectError(await sendWebhook(worker, { session: "w" }), 400), /text/);
    assertMatch(
      await expectError(await sendWebhook(worker, { session: "a b", text: "x" }), 400),
      /session/,
    );
    await expectError(
      await sendWebhook(worker, null, { rawBody: "y".repeat(1024 * 1024 + 1) }),
      413,
    );

    assertStrictEquals(fake.requests.length, 0, "no bad request reached the model");
    assertEquals((await sessionState(worker, "webhook:w")).queued, 0);
    assertEquals((await sessionState(worker, "webhook:w")).messages, []);
  },
);

Deno.test("baton refuses the API and the webhook when their secrets are not configured", async () => {
  await withBaton(async (worker, fake) => {
    const apiMessage = await expectError(await chat(worker, "x"), 403, "not_configured");
    assertMatch(apiMessage, /GATEWAY_API_KEY/);
    assertMatch(apiMessage, /\.dev\.vars/, "names the local fix too");
    const message = await expectError(
      await sendWebhook(worker, { session: "s", text: "x" }),
      403,
      "not_configured",
    );
    assertMatch(message, /WEBHOOK_SECRET/);
    assertMatch(message, /\.dev\.vars/);
    assert(!message.includes(WEBHOOK_SECRET));
    assertStrictEquals(fake.requests.length, 0);
  }, { vars: { GATEWAY_API_KEY: "", WEBHOOK_SECRET: "" } });
});

baton.done();

// The Responses API through the real `openai` package against baton in workerd; Deno + Miniflare.
import OpenAI from "openai";
import { assert, assertEquals, assertRejects, assertStrictEquals } from "@std/assert";
import { API_KEY, json, until } from "./_support/clients.ts";
import { holdOn } from "./_support/fake_llm_scripts.ts";
import type { FakeModel } from "../lib/testing/fake_model.ts";
import { responseId } from "../lib/openai/mod.ts";
import { sharedBaton } from "./_support/shared_baton.ts";
import type { TestWorker } from "./_support/worker.ts";

// One Worker for the file, retrying the model once (the openai client's retry test counts on it).
const baton = sharedBaton({ vars: { LLM_MAX_RETRIES: "1" } });

/** The `openai` client as users configure it (default retries on; a short timeout). */
function client(worker: TestWorker): OpenAI {
  return new OpenAI({ baseURL: new URL("v1", worker.url).href, apiKey: API_KEY, timeout: 8_000 });
}

/** The messages (role:text) the fake model received in call `i`, system prompt left out. */
function seen(fake: FakeModel, i: number): string[] {
  return fake.requests[i].body.messages
    .filter((m: { role: string }) => m.role !== "system")
    .map((m: { role: string; content: string }) => `${m.role}:${m.content}`);
}

/** A raw request to the Responses API with the key. */
function call(worker: TestWorker, path: string, init: RequestInit = {}): Promise<Response> {
  return worker.fetch(`/v1/responses${path}`, {
    ...init,
    headers: {
      authorization: `Bearer ${API_KEY}`,
      "content-type": "application/json",
      ...init.headers,
    },
  });
}

baton.test(
  "POST /v1/responses creates a response from a string input; GET /v1/responses/{id} retrieves it",
  async (worker, fake) => {
    const openai = client(worker);
    const created = await openai.responses.create({
      model: "gpt-4o-mini",
      input: "hello there",
      metadata: { ticket: "42" },
      max_output_tokens: 64,
      temperature: 0.3,
      top_p: 0.8,
    });
    assertStrictEquals(created.status, "completed");
    assertStrictEquals(created.output_text, "hello there");
    assert(/^resp_[A-Za-z0-9_-]+_1$/.test(created.id), created.id);
    assertEquals(created.metadata, { ticket: "42" });
    assertEquals(created.usage?.total_tokens, 2);
    const sent = fake.requests[0].body;
    assertStrictEquals(sent.max_completion_tokens, 64);
    assertStrictEquals(sent.temperature, 0.3);
    assertStrictEquals(sent.top_p, 0.8);
    const got = await openai.responses.retrieve(created.id);
    assertStrictEquals(got.output_text, "hello there");
    assertEquals({ ...got, output_text: undefined }, { ...created, output_text: undefined });
    const items = await openai.responses.inputItems.list(created.id);
    assertEquals(items.data.map((i) => i.type === "message" && i.content), [[{
      type: "input_text",
      text: "hello there",
    }]]);
  },
);

baton.test(
  "POST /v1/responses with message items and instructions: the model sees the system text and messages",
  async (worker, fake) => {
    const created = await client(worker).responses.create({
      model: "gpt-4o-mini",
      instructions: "be terse",
      input: [
        { role: "developer", content: "no emoji" },
        { role: "user", content: "first" },
        { type: "message", role: "assistant", content: "reply one" },
        { role: "user", content: [{ type: "input_text", text: "second" }] },
      ],
    });
    assertStrictEquals(created.output_text, "second");
    assertStrictEquals(created.instructions, "be terse");
    const system = fake.requests[0].body.messages.filter((m: { role: string }) =>
      m.role === "system"
    ).map((m: { content: string }) => m.content).join("\n");
    assert(system.includes("be terse") && system.includes("no emoji"), system);
    assertEquals(seen(fake, 0), ["user:first", "assistant:reply one", "user:second"]);
  },
);

baton.test("POST /v1/responses streams the Responses events in order, deltas joined into the reply", async (worker) => {
  const stream = client(worker).responses.stream({
    model: "gpt-4o-mini",
    input: "stream this reply please",
  });
  const events: { type: string; sequence_number: number; delta?: string }[] = [];
  for await (const event of stream) events.push(event);
  const final = await stream.finalResponse();
  const types = events.map((e) => e.type).filter((t, i, all) =>
    t !== "response.output_text.delta" || all[i - 1] !== t
  );
  assertEquals(types, [
    "response.created",
    "response.in_progress",
    "response.output_item.added",
    "response.content_part.added",
    "response.output_text.delta",
    "response.output_text.done",
    "response.content_part.done",
    "response.output_item.done",
    "response.completed",
  ]);
  assert(events.filter((e) => e.type === "response.output_text.delta").length > 1);
  assertEquals(events.map((e) => e.sequence_number), events.map((_, i) => i));
  const deltas = events.map((e) => e.type === "response.output_text.delta" ? e.delta : "");
  assertStrictEquals(deltas.join(""), "stream this reply please");
  assertStrictEquals(final.output_text, "stream this reply please");
  assertStrictEquals(final.status, "completed");
  const got = await client(worker).responses.retrieve(final.id);
  assertStrictEquals(got.output_text, "stream this reply please");
});

baton.test(
  "POST /v1/responses with previous_response_id continues a chain, and a fork sees only its own branch",
  async (worker, fake) => {
    const openai = client(worker);
    const r1 = await openai.responses.create({ model: "m", input: "one" });
    const r2 = await openai.responses.create({
      model: "m",
      input: "two",
      previous_response_id: r1.id,
    });
    assertEquals(seen(fake, 1), ["user:one", "assistant:one", "user:two"]);
    assertStrictEquals(r2.previous_response_id, r1.id);
    const session = (id: string) => id.split("_")[1];
    assertStrictEquals(session(r2.id), session(r1.id), "r2 continues r1's session");
    const fork = await openai.responses.create({
      model: "m",
      input: "other",
      previous_response_id: r1.id,
    });
    assertEquals(seen(fake, 2), ["user:one", "assistant:one", "user:other"], "not r2's turn");
    assert(session(fork.id) !== session(r1.id), "the fork runs in a new session");
    // The fork continues in its own session; r2's branch continues in r1's.
    await openai.responses.create({ model: "m", input: "deeper", previous_response_id: fork.id });
    assertEquals(seen(fake, 3), [
      "user:one",
      "assistant:one",
      "user:other",
      "assistant:other",
      "user:deeper",
    ]);
    await openai.responses.create({ model: "m", input: "three", previous_response_id: r2.id });
    assertEquals(seen(fake, 4), [
      "user:one",
      "assistant:one",
      "user:two",
      "assistant:two",
      "user:three",
    ]);
  },
);

baton.test(
  "POST /v1/responses with background: queued at once, polled with GET until completed",
  async (worker, fake) => {
    fake.script(holdOn("slow job"));
    const openai = client(worker);
    const created = await openai.responses.create({
      model: "m",
      input: "slow job",
      background: true,
    });
    assertStrictEquals(created.status, "queued");
    assertStrictEquals(created.background, true);
    await fake.waitForRequests(1);
    assertStrictEquals((await openai.responses.retrieve(created.id)).status, "in_progress");
    fake.release();
    let done = created;
    await until(async () => {
      done = await openai.responses.retrieve(created.id);
      return done.status === "completed";
    }, "completed");
    assertStrictEquals(done.output_text, "slow job");
  },
);

baton.test("DELETE /v1/responses/{id} deletes a response: GET is 404 afterwards", async (worker) => {
  const openai = client(worker);
  const created = await openai.responses.create({ model: "m", input: "forget me" });
  const res = await call(worker, `/${created.id}`, { method: "DELETE" });
  assertEquals(await json(res), { id: created.id, object: "response", deleted: true });
  const error = await assertRejects(() => openai.responses.retrieve(created.id));
  assert(error instanceof OpenAI.NotFoundError, String(error));
  assertStrictEquals((await call(worker, `/${created.id}`, { method: "DELETE" })).status, 404);
  const chained = await assertRejects(() =>
    openai.responses.create({ model: "m", input: "x", previous_response_id: created.id })
  );
  assert(chained instanceof OpenAI.NotFoundError, String(chained));
});

baton.test(
  "POST /v1/responses/{id}/cancel ends a held turn cancelled and answers the response",
  async (worker, fake) => {
    fake.script(holdOn("long"));
    const openai = client(worker);
    const created = await openai.responses.create({ model: "m", input: "long", background: true });
    await fake.waitForRequests(1);
    const cancelled = await openai.responses.cancel(created.id);
    assertStrictEquals(cancelled.status, "cancelled");
    assertStrictEquals((await openai.responses.retrieve(created.id)).status, "cancelled");
    const again = await call(worker, `/${created.id}/cancel`, { method: "POST" });
    assertStrictEquals((await json(again)).status, "cancelled");
    const done = await openai.responses.create({ model: "m", input: "quick" });
    const finished = await call(worker, `/${done.id}/cancel`, { method: "POST" });
    assertStrictEquals(finished.status, 409);
    assertStrictEquals(fake.requests.length, 2, "the cancelled turn never ran again");
  },
);

baton.test("POST /v1/responses with store: false keeps nothing retrievable", async (worker) => {
  const openai = client(worker);
  const created = await openai.responses.create({ model: "m", input: "secret", store: false });
  assertStrictEquals(created.output_text, "secret");
  assertStrictEquals((created as unknown as { store: boolean }).store, false);
  const error = await assertRejects(() => openai.responses.retrieve(created.id));
  assert(error instanceof OpenAI.NotFoundError, String(error));
  assertStrictEquals((await call(worker, `/${created.id}/input_items`)).status, 404);
});

baton.test(
  "POST /v1/responses refuses a previous_response_id that is no stored response (404), running nothing",
  async (worker, fake) => {
    const openai = client(worker);
    const unstored = await openai.responses.create({ model: "m", input: "unstored", store: false });
    const chat = await worker.fetch("/v1/chat/completions", {
      method: "POST",
      headers: { authorization: `Bearer ${API_KEY}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "m", messages: [{ role: "user", content: "a chat turn" }] }),
    });
    assertStrictEquals(chat.status, 200);
    await chat.body?.cancel();
    // The Chat Completions turn's id as a Responses id: same tenant, same session, its seq.
    const chatTurn = responseId("default", chat.headers.get("x-session-id")!, 1);
    const calls = fake.requests.length;
    for (const previous of [unstored.id, chatTurn]) {
      const error = await assertRejects(() =>
        openai.responses.create({ model: "m", input: "go on", previous_response_id: previous })
      );
      assert(error instanceof OpenAI.NotFoundError, `${previous}: ${error}`);
    }
    assertStrictEquals(fake.requests.length, calls, "no turn ran");
  },
);

baton.test(
  "POST /v1/responses refuses bad input with a 4xx JSON naming the field, calling no model",
  async (worker, fake) => {
    const post = (body: string) => call(worker, "", { method: "POST", body });
    const cases: [string, number, RegExp][] = [
      ["{not json", 400, /JSON/i],
      [JSON.stringify({ input: 42 }), 400, /^input/],
      [JSON.stringify({ input: "x", temperature: "hot" }), 400, /^temperature/],
      [JSON.stringify({ input: "x", metadata: { a: 1 } }), 400, /^metadata/],
      [
        JSON.stringify({ input: [{ type: "function_call_output", call_id: "c", output: "o" }] }),
        400,
        /^input/,
      ],
      [
        JSON.stringify({
          input: [{ role: "user", content: [{ type: "input_image", image_url: "x" }] }],
        }),
        400,
        /^input/,
      ],
      [JSON.stringify({ input: [{ role: "assistant", content: "last" }] }), 400, /^input/],
      [JSON.stringify({ input: "x", background: true, store: false }), 400, /^background/],
      [
        JSON.stringify({ input: "x", previous_response_id: "resp_bm9wZQ_1" }),
        404,
        /previous_response_id/,
      ],
      [
        JSON.stringify({ input: "x", previous_response_id: "garbage" }),
        404,
        /previous_response_id/,
      ],
    ];
    for (const [body, status, message] of cases) {
      const res = await post(body);
      const answer = await json(res);
      assertStrictEquals(res.status, status, body);
      assert(message.test(answer.error.message), `${body}: ${answer.error.message}`);
      assertStrictEquals(typeof answer.error.type, "string");
    }
    for (const path of ["/resp_bm9wZQ_1", "/garbage", "/resp_bm9wZQ_1/input_items"]) {
      const res = await call(worker, path);
      assertStrictEquals(res.status, 404, path);
      assertStrictEquals((await json(res)).error.type, "not_found");
    }
    const unauthorized = await worker.fetch("/v1/responses", { method: "POST", body: "{}" });
    assertStrictEquals(unauthorized.status, 401);
    assertStrictEquals(fake.requests.length, 0);
  },
);

baton.test(
  "POST /v1/responses: a failed turn is not retried by the openai client (x-should-retry: false)",
  async (worker, fake) => {
    fake.script(() => ({ kind: "status", status: 500 }));
    const error = await assertRejects(() =>
      client(worker).responses.create({ model: "m", input: "boom" })
    );
    assert(error instanceof OpenAI.APIError && error.status === 502, String(error));
    assertStrictEquals(fake.requests.length, 1 + 1);
  },
);

baton.test(
  "POST /v1/responses with stream: a failed turn ends the stream with response.failed",
  async (worker, fake) => {
    fake.script(() => ({ kind: "status", status: 500 }));
    const stream = await client(worker).responses.create({
      model: "m",
      input: "doomed",
      stream: true,
    });
    const types: string[] = [];
    let failed: OpenAI.Responses.Response | null = null;
    for await (const event of stream) {
      types.push(event.type);
      if (event.type === "response.failed") failed = event.response;
    }
    assertStrictEquals(types.at(-1), "response.failed");
    assertStrictEquals(types[0], "response.created");
    assertStrictEquals(failed?.status, "failed");
    assertStrictEquals(failed?.error?.code as string, "model_error");
    const got = await client(worker).responses.retrieve(failed!.id);
    assertStrictEquals(got.status, "failed");
  },
);

baton.done();

// The OpenAI surface through the real `openai` package (its retries, streaming and models API) against baton in workerd; Deno + Miniflare.
import OpenAI from "openai";
import { assert, assertEquals, assertRejects, assertStrictEquals } from "@std/assert";
import { API_KEY, json, sessionState, until, withBaton } from "./_support/clients.ts";
import { sharedBaton } from "./_support/shared_baton.ts";
import { tempPersistDir, type TestWorker } from "./_support/worker.ts";

// One Worker for the file (one model retry, a configured model); the restart test starts its own.
const baton = sharedBaton({ vars: { LLM_MAX_RETRIES: "1", LLM_MODEL: "m-test" } });

/**
 * The `openai` client as users configure it: its default retries (2) left on. The short timeout
 * makes a wrong retry (whose turn the fake model holds) fail the test instead of hanging it.
 */
function client(worker: TestWorker, session?: string): OpenAI {
  return new OpenAI({
    baseURL: new URL("v1", worker.url).href,
    apiKey: API_KEY,
    timeout: 8_000,
    ...(session ? { defaultHeaders: { "x-session-id": session } } : {}),
  });
}

baton.test(
  "POST /v1/chat/completions: a model failure is not retried by the openai client (x-should-retry: false)",
  async (worker, fake) => {
    fake.script(() => ({ kind: "status", status: 500 }));
    const error = await assertRejects(() =>
      client(worker, "fails").chat.completions.create({
        model: "gpt-4o-mini",
        messages: [{ role: "user", content: "boom" }],
      })
    );
    assert(error instanceof OpenAI.APIError && error.status === 502, String(error));
    // One request from the client: the model saw 1 + LLM_MAX_RETRIES calls, not three times that.
    assertStrictEquals(fake.requests.length, 1 + 1);
  },
);

baton.test(
  "POST /v1/chat/completions: a stopped turn stays stopped under the openai client's retries",
  async (worker, fake) => {
    fake.script(() => ({ kind: "hold" }));
    const pending = client(worker, "stopped").chat.completions.create({
      model: "gpt-4o-mini",
      messages: [{ role: "user", content: "long job" }],
    });
    const outcome = pending.then(() => null, (error) => error);
    await fake.waitForRequests(1);
    const stop = await worker.fetch("/v1/sessions/api%3Astopped/stop", {
      method: "POST",
      headers: { authorization: `Bearer ${API_KEY}` },
    });
    assertStrictEquals(stop.status, 200);
    const error = await outcome;
    assert(error instanceof OpenAI.APIError && error.status === 409, String(error));
    await until(async () => !(await sessionState(worker, "api:stopped")).running, "idle");
    assertStrictEquals(fake.requests.length, 1, "the stopped turn never ran again");
  },
);

baton.test("POST /v1/chat/completions streams a last usage chunk with stream_options.include_usage", async (worker) => {
  const stream = await client(worker, "usage").chat.completions.create({
    model: "gpt-4o-mini",
    messages: [{ role: "user", content: "count me" }],
    stream: true,
    stream_options: { include_usage: true },
  });
  const chunks = [];
  for await (const chunk of stream) chunks.push(chunk);
  const text = chunks.map((c) => c.choices[0]?.delta.content ?? "").join("");
  assertStrictEquals(text, "count me");
  const last = chunks.at(-1)!;
  assertEquals(last.choices, []);
  assertEquals(last.usage, { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 });
  assert(chunks.slice(0, -1).every((c) => c.usage === null), "usage: null before the last");
});

baton.test("POST /v1/chat/completions streams no usage chunk unless asked", async (worker) => {
  const stream = await client(worker, "no-usage").chat.completions.create({
    model: "gpt-4o-mini",
    messages: [{ role: "user", content: "plain" }],
    stream: true,
  });
  const chunks = [];
  for await (const chunk of stream) chunks.push(chunk);
  assert(chunks.every((c) => c.choices.length === 1 && !("usage" in c)));
});

baton.test("GET /v1/models/{id} retrieves the configured model and 404s any other", async (worker) => {
  const models = client(worker).models;
  assertEquals(await models.retrieve("m-test"), {
    id: "m-test",
    object: "model",
    created: 0,
    owned_by: "baton",
  });
  assertEquals((await models.list()).data.map((m) => m.id), ["m-test"]);
  const error = await assertRejects(() => models.retrieve("gpt-unknown"));
  assert(error instanceof OpenAI.NotFoundError, String(error));
});

baton.test(
  "POST /v1/chat/completions passes the caller's model parameters to the provider",
  async (worker, fake) => {
    const params = {
      temperature: 0.2,
      top_p: 0.9,
      max_tokens: 50,
      stop: ["END"],
      seed: 7,
      presence_penalty: 0.5,
      frequency_penalty: -0.5,
      reasoning_effort: "low" as const,
      response_format: {
        type: "json_schema" as const,
        json_schema: { name: "answer", schema: { type: "object" }, strict: true },
      },
    };
    await client(worker, "params").chat.completions.create({
      model: "gpt-4o-mini",
      messages: [{ role: "user", content: "tuned" }],
      ...params,
    });
    const sent = fake.requests[0].body;
    for (const [name, value] of Object.entries(params)) assertEquals(sent[name], value, name);
  },
);

baton.test(
  "POST /v1/chat/completions refuses an out-of-range parameter with a 400 naming it, running nothing",
  async (worker, fake) => {
    const error = await assertRejects(() =>
      client(worker, "bad-params").chat.completions.create({
        model: "gpt-4o-mini",
        messages: [{ role: "user", content: "too hot" }],
        temperature: 5,
      })
    );
    assert(error instanceof OpenAI.BadRequestError, String(error));
    assert(/temperature/.test(error.message), error.message);
    assertStrictEquals(fake.requests.length, 0);
  },
);

/** The messages (role, text) the fake model received in call `i`, system prompt left out. */
function seen(
  fake: { requests: { body: { messages: { role: string; content: string }[] } }[] },
  i: number,
) {
  return fake.requests[i].body.messages.filter((m) => m.role !== "system").map((m) =>
    `${m.role}:${m.content}`
  );
}

baton.test(
  "POST /v1/chat/completions: two clients opening with the same text never see each other's messages",
  async (worker, fake) => {
    const openai = client(worker);
    const ask = (messages: { role: "user" | "assistant"; content: string }[]) =>
      openai.chat.completions.create({ model: "gpt-4o-mini", messages });
    await ask([{ role: "user", content: "hello" }]); // client A
    await ask([{ role: "user", content: "hello" }]); // client B, same opener
    await ask([
      { role: "user", content: "hello" },
      { role: "assistant", content: "hello" },
      { role: "user", content: "A's secret" },
    ]);
    await ask([
      { role: "user", content: "hello" },
      { role: "assistant", content: "hello" },
      { role: "user", content: "B asks" },
    ]);
    assertEquals(seen(fake, 1), ["user:hello"], "B's first call saw nothing of A");
    assertEquals(seen(fake, 3), ["user:hello", "assistant:hello", "user:B asks"]);
  },
);

baton.test(
  "POST /v1/chat/completions: a regenerate and an edit run on exactly the request's history",
  async (worker, fake) => {
    const openai = client(worker);
    const ask = async (messages: { role: "user" | "assistant"; content: string }[]) => {
      const reply = await openai.chat.completions.create({ model: "gpt-4o-mini", messages });
      return reply.choices[0].message.content!;
    };
    const u1 = { role: "user" as const, content: "u1" };
    const a1 = { role: "assistant" as const, content: await ask([u1]) };
    const u2 = { role: "user" as const, content: "u2" };
    await ask([u1, a1, u2]); // continues the conversation
    await ask([u1, a1, u2]); // regenerate: the same history again
    await ask([u1, a1, { role: "user", content: "u2 edited" }]); // edit
    assertEquals(seen(fake, 1), ["user:u1", "assistant:u1", "user:u2"]);
    assertEquals(seen(fake, 2), ["user:u1", "assistant:u1", "user:u2"], "not [u1, a1, u2, a2, u2]");
    assertEquals(seen(fake, 3), ["user:u1", "assistant:u1", "user:u2 edited"]);
  },
);

baton.test("POST /v1/chat/completions: a streamed reply is remembered, so the next request continues its session", async (worker) => {
  const stream = await client(worker).chat.completions.create({
    model: "gpt-4o-mini",
    messages: [{ role: "user", content: "streamed start" }],
    stream: true,
  });
  for await (const _ of stream);
  const next = await client(worker).chat.completions.create({
    model: "gpt-4o-mini",
    messages: [
      { role: "user", content: "streamed start" },
      { role: "assistant", content: "streamed start" },
      { role: "user", content: "and on" },
    ],
  }).withResponse();
  const id = next.response.headers.get("x-session-id")!;
  const state = await sessionState(worker, `api:${id}`);
  assertEquals(state.messages.map((m) => m.content), [
    "streamed start",
    "streamed start",
    "and on",
    "and on",
  ]);
});

/** Posts a chat completion by hand: the same body, byte for byte, each time (as a client retry). */
function postChat(worker: TestWorker, body: string, headers: Record<string, string> = {}) {
  return worker.fetch("/v1/chat/completions", {
    method: "POST",
    headers: { authorization: `Bearer ${API_KEY}`, "content-type": "application/json", ...headers },
    body,
  });
}

baton.test(
  "POST /v1/chat/completions: the identical request after a failed turn gets that failure, not a second run",
  async (worker, fake) => {
    fake.script(() => ({ kind: "status", status: 500 }));
    // A first message without X-Session-Id: the AI SDK retries exactly this body, ignoring headers.
    const body = JSON.stringify({ messages: [{ role: "user", content: "fragile" }] });
    const first = await postChat(worker, body);
    assertStrictEquals(first.status, 502);
    const firstError = await json(first);
    for (let retry = 0; retry < 2; retry++) {
      const again = await postChat(worker, body);
      assertStrictEquals(again.status, 502);
      assertEquals(await json(again), firstError);
    }
    // The file's Worker retries the model once (LLM_MAX_RETRIES=1): one turn is two model calls.
    assertStrictEquals(fake.requests.length, 1 + 1, "one turn for three identical requests");
    // Another body is another request: it runs.
    fake.script((req) => ({ kind: "text", text: req.lastUserText }));
    const other = await postChat(
      worker,
      JSON.stringify({ messages: [{ role: "user", content: "sturdy" }] }),
    );
    assertStrictEquals(other.status, 200);
  },
);

Deno.test("POST /v1/chat/completions: an Idempotency-Key replays the first answer, also after a restart; another body is 422", async () => {
  const dir = await tempPersistDir();
  try {
    const body = JSON.stringify({ messages: [{ role: "user", content: "once only" }] });
    const key = { "idempotency-key": "order-42", "x-session-id": "idem" };
    let first: { id: string; choices: unknown } | undefined;
    await withBaton(async (worker, fake) => {
      first = await json(await postChat(worker, body, key));
      const again = await json(await postChat(worker, body, key));
      assertEquals([again.id, again.choices], [first!.id, first!.choices]);
      assertStrictEquals(fake.requests.length, 1);
      const reused = await postChat(
        worker,
        JSON.stringify({ messages: [{ role: "user", content: "something else" }] }),
        key,
      );
      assertStrictEquals(reused.status, 422);
      assertStrictEquals((await json(reused)).error.type, "idempotency_key_reused");
      assertStrictEquals(fake.requests.length, 1);
    }, { persistDir: dir.path });
    await withBaton(async (worker, fake) => {
      const replay = await json(await postChat(worker, body, key));
      assertEquals([replay.id, replay.choices], [first!.id, first!.choices]);
      assertStrictEquals(fake.requests.length, 0, "no turn after the restart either");
    }, { persistDir: dir.path });
  } finally {
    await dir.cleanup();
  }
});

const _weatherTool = {
  type: "function" as const,
  function: {
    name: "get_weather",
    description: "The weather in a city",
    parameters: { type: "object", properties: { city: { type: "string" } } },
  },
};

/** The model calls the client's get_weather until it sees a tool result, then answers with it. */
function weatherModel(req: { body: { messages: { role: string; content: string }[] } }) {
  const last = req.body.messages.at(-1)!;
  return last.role === "tool"
    ? { kind: "text" as const, text: `it is ${last.content}` }
    : { kind: "tool_call" as const, name: "get_weather", args: { city: "Oslo" }, id: "call_w1" };
}

for (const session of ["tools-pinned", undefined]) {
  baton.test(
    `POST /v1/chat/completions: a client tool round trip${session ? " in a pinned session" : ""}`,
    async (worker, fake) => {
      fake.script(weatherModel);
      const openai = client(worker, session);
      const messages: OpenAI.Chat.ChatCompletionMessageParam[] = [
        { role: "user", content: "weather in Oslo?" },
      ];
      const first = await openai.chat.completions.create({
        model: "gpt-4o-mini",
        messages,
        tools: [_weatherTool],
      });
      const choice = first.choices[0];
      assertStrictEquals(choice.finish_reason, "tool_calls");
      const call = choice.message.tool_calls![0];
      assert(call.type === "function");
      assertEquals([call.id, call.function.name, JSON.parse(call.function.arguments)], [
        "call_w1",
        "get_weather",
        { city: "Oslo" },
      ]);
      assert(
        fake.requests[0].body.tools.some((t: { function: { name: string } }) =>
          t.function.name === "get_weather"
        ),
        "the client's tool is offered beside baton's",
      );
      messages.push(choice.message, { role: "tool", tool_call_id: call.id, content: "sunny" });
      const second = await openai.chat.completions.create({
        model: "gpt-4o-mini",
        messages: session ? [messages.at(-1)!] : messages,
        tools: [_weatherTool],
      });
      assertStrictEquals(second.choices[0].message.content, "it is sunny");
      assertStrictEquals(second.choices[0].finish_reason, "stop");
      const sent = fake.requests[1].body.messages.filter((m: { role: string }) =>
        m.role !== "system"
      );
      assertEquals(sent.map((m: { role: string }) => m.role), ["user", "assistant", "tool"]);
      assertStrictEquals(fake.requests.length, 2);
    },
  );
}

baton.test(
  "POST /v1/chat/completions streams a client tool call and refuses a tool named like baton's",
  async (worker, fake) => {
    fake.script(weatherModel);
    const stream = await client(worker, "tools-stream").chat.completions.create({
      model: "gpt-4o-mini",
      messages: [{ role: "user", content: "weather?" }],
      tools: [_weatherTool],
      stream: true,
    });
    const chunks = [];
    for await (const chunk of stream) chunks.push(chunk);
    const calls = chunks.flatMap((c) => c.choices[0]?.delta.tool_calls ?? []);
    assertEquals(calls.map((c) => [c.id, c.function?.name, c.function?.arguments]), [
      ["call_w1", "get_weather", JSON.stringify({ city: "Oslo" })],
    ]);
    assertStrictEquals(chunks.at(-1)!.choices[0].finish_reason, "tool_calls");
    const clash = await assertRejects(() =>
      client(worker, "tools-clash").chat.completions.create({
        model: "gpt-4o-mini",
        messages: [{ role: "user", content: "x" }],
        tools: [{ type: "function", function: { name: "session_info" } }],
      })
    );
    assert(clash instanceof OpenAI.BadRequestError && /session_info/.test(clash.message));
  },
);

baton.test(
  "POST /v1/chat/completions answers finish_reason length for a reply cut at max_tokens",
  async (worker, fake) => {
    fake.script(() => ({ kind: "text", text: "partial", finish: "length" }));
    const reply = await client(worker, "cut").chat.completions.create({
      model: "gpt-4o-mini",
      messages: [{ role: "user", content: "long" }],
      max_tokens: 2,
    });
    assertStrictEquals(reply.choices[0].finish_reason, "length");
    const stream = await client(worker, "cut-stream").chat.completions.create({
      model: "gpt-4o-mini",
      messages: [{ role: "user", content: "long" }],
      max_tokens: 2,
      stream: true,
    });
    const reasons = [];
    for await (const chunk of stream) reasons.push(chunk.choices[0]?.finish_reason);
    assertStrictEquals(reasons.at(-1), "length");
  },
);

baton.done();

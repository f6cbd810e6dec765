// Unit tests for lib/agent/chat_model.ts's streamed calls through the real openai package against the fake model on loopback: the request goes out at once, deltas, tool calls, usage and an abort mid-reply as before; Deno.
import { assert, assertEquals, assertRejects, assertStrictEquals } from "@std/assert";
import { startFakeModel } from "../testing/fake_model.ts";
import { openAIChatModel } from "./chat_model.ts";

const _OPTIONS = { apiKey: "k", model: "m", maxRetries: 0, timeoutMs: 10_000 };
const _ASK = [{ role: "user" as const, content: "hi" }];

Deno.test("openAIChatModel() streaming sends its request before any zero-delay timer runs", async () => {
  // In a Durable Object a setTimeout(0) runs only after the object's other events (the submit's
  // answer once its write is durable, the stream's subscription): the package's stream helper
  // started its request from one, so the model call waited on them.
  const fake = await startFakeModel();
  const realFetch = globalThis.fetch;
  const realSetTimeout = globalThis.setTimeout;
  const order: string[] = [];
  try {
    fake.script(() => ({ kind: "text", text: "streamed" }));
    globalThis.fetch = (input, init) => {
      order.push("fetch");
      return realFetch(input, init);
    };
    globalThis.setTimeout = ((fn: () => void, ms?: number) => {
      if (ms) return realSetTimeout(fn, ms);
      return realSetTimeout(() => {
        order.push("timer");
        fn();
      }, 0);
    }) as typeof setTimeout;
    let deltas = "";
    const model = openAIChatModel({ ..._OPTIONS, baseURL: fake.url });
    const reply = await model.complete({ messages: _ASK, tools: [], onDelta: (d) => deltas += d });
    assertStrictEquals(order[0], "fetch", `first: ${order.join(", ")}`);
    assertStrictEquals(reply.content, "streamed");
    assertStrictEquals(deltas, "streamed");
  } finally {
    globalThis.fetch = realFetch;
    globalThis.setTimeout = realSetTimeout;
    await fake.close();
  }
});

Deno.test("openAIChatModel() streaming gathers a tool call, the text before it and the usage", async () => {
  const fake = await startFakeModel();
  try {
    fake.script(() => ({
      kind: "tool_call",
      name: "lookup",
      args: { q: "x" },
      id: "call_1",
      text: "Let me look",
      usage: { prompt_tokens: 7, completion_tokens: 3 },
    }));
    let deltas = "";
    const model = openAIChatModel({ ..._OPTIONS, baseURL: fake.url });
    const reply = await model.complete({ messages: _ASK, tools: [], onDelta: (d) => deltas += d });
    assertStrictEquals(deltas, "Let me look");
    assertStrictEquals(reply.content, "Let me look");
    const calls = reply.toolCalls.flatMap((c) => c.type === "function" ? [c] : []);
    assertEquals(calls.map((c) => [c.id, c.function.name, c.function.arguments]), [
      ["call_1", "lookup", JSON.stringify({ q: "x" })],
    ]);
    assertEquals(reply.usage, { prompt_tokens: 7, completion_tokens: 3 });
    assertStrictEquals(fake.requests[0].body?.stream, true);
  } finally {
    await fake.close();
  }
});

Deno.test("openAIChatModel() streaming aborted mid-reply rejects, never answers with the part it had", async () => {
  const fake = await startFakeModel();
  try {
    fake.script(() => ({ kind: "text", text: "one two three", holdAfter: 1 }));
    const controller = new AbortController();
    const model = openAIChatModel({ ..._OPTIONS, baseURL: fake.url });
    let deltas = "";
    const call = model.complete({
      messages: _ASK,
      tools: [],
      signal: controller.signal,
      onDelta: (d) => {
        deltas += d;
        controller.abort(); // after the first piece: the rest is held back by the fake
      },
    });
    const error = await assertRejects(() => call);
    assert(error instanceof Error && /abort/i.test(`${error.name} ${error.message}`), `${error}`);
    assert(deltas.length > 0 && deltas !== "one two three", deltas);
  } finally {
    fake.release();
    await fake.close();
  }
});

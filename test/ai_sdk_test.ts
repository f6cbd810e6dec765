// The OpenAI surface through the Vercel AI SDK (`ai` + `@ai-sdk/openai`): chat completions via `.chat()`, Responses via the default provider; Deno + Miniflare.
import { createOpenAI } from "@ai-sdk/openai";
import { generateText, streamText } from "ai";
import { assert, assertEquals, assertRejects, assertStrictEquals } from "@std/assert";
import { API_KEY } from "./_support/clients.ts";
import { sharedBaton } from "./_support/shared_baton.ts";
import type { TestWorker } from "./_support/worker.ts";

// One Worker for the file, the model not retried (the retry test counts its calls).
const baton = sharedBaton({ vars: { LLM_MAX_RETRIES: "0" } });

/** The AI SDK's OpenAI provider pointed at baton, speaking Chat Completions. */
function chatModel(worker: TestWorker) {
  return createOpenAI({ baseURL: new URL("v1", worker.url).href, apiKey: API_KEY })
    .chat("gpt-4o-mini");
}

baton.test("POST /v1/chat/completions answers the AI SDK's generateText, with usage", async (worker) => {
  const result = await generateText({ model: chatModel(worker), prompt: "hello from ai" });
  assertStrictEquals(result.text, "hello from ai");
  assertStrictEquals(result.finishReason, "stop");
  assertEquals([result.usage.inputTokens, result.usage.outputTokens], [1, 1]);
});

baton.test("POST /v1/chat/completions streams to the AI SDK's streamText, usage included", async (worker) => {
  const result = streamText({ model: chatModel(worker), prompt: "streamed via ai" });
  let text = "";
  for await (const delta of result.textStream) text += delta;
  assertStrictEquals(text, "streamed via ai");
  const usage = await result.usage;
  assertEquals([usage.inputTokens, usage.outputTokens], [1, 1], "the include_usage chunk");
});

baton.test(
  "POST /v1/chat/completions: the AI SDK's retries of a failed turn run the model no more than once",
  async (worker, fake) => {
    fake.script(() => ({ kind: "status", status: 500 }));
    // The AI SDK ignores x-should-retry and retries 5xx twice with the identical body: baton
    // answers those retries with the first outcome instead of running the turn again.
    const error = await assertRejects(() =>
      generateText({ model: chatModel(worker), prompt: "fails for everyone" })
    );
    assert(error instanceof Error);
    assertStrictEquals(fake.requests.length, 1, "1 + LLM_MAX_RETRIES model calls in all");
  },
);

baton.test("POST /v1/responses answers the AI SDK's default provider (it speaks Responses)", async (worker) => {
  const provider = createOpenAI({ baseURL: new URL("v1", worker.url).href, apiKey: API_KEY });
  const result = await generateText({ model: provider("gpt-4o-mini"), prompt: "via responses" });
  assertStrictEquals(result.text, "via responses");
  const streamed = streamText({ model: provider("gpt-4o-mini"), prompt: "streamed responses" });
  let text = "";
  for await (const delta of streamed.textStream) text += delta;
  assertStrictEquals(text, "streamed responses");
});

baton.done();

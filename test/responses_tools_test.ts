// POST /v1/responses with the client's function tools, through the real `openai` package against baton in workerd; Deno + Miniflare.
import OpenAI from "openai";
import { assert, assertEquals, assertRejects, assertStrictEquals } from "@std/assert";
import { API_KEY } from "./_support/clients.ts";
import { sharedBaton } from "./_support/shared_baton.ts";
import type { TestWorker } from "./_support/worker.ts";

// One Worker for the file: each response runs in a session of its own.
const baton = sharedBaton();

function client(worker: TestWorker): OpenAI {
  return new OpenAI({ baseURL: new URL("v1", worker.url).href, apiKey: API_KEY, timeout: 8_000 });
}

const weather = {
  type: "function" as const,
  name: "get_weather",
  description: "The weather in a city",
  parameters: { type: "object", properties: { city: { type: "string" } } },
  strict: false,
};

/** The model calls the client's get_weather until it sees a tool result, then answers with it. */
function weatherModel(req: { body: { messages: { role: string; content: string }[] } }) {
  const last = req.body.messages.at(-1)!;
  return last.role === "tool"
    ? { kind: "text" as const, text: `it is ${last.content}` }
    : { kind: "tool_call" as const, name: "get_weather", args: { city: "Oslo" }, id: "call_r1" };
}

baton.test(
  "POST /v1/responses: a function tool round trip through previous_response_id",
  async (worker, fake) => {
    fake.script(weatherModel);
    const openai = client(worker);
    const first = await openai.responses.create({
      model: "gpt-4o-mini",
      input: "weather in Oslo?",
      tools: [weather],
    });
    const call = first.output.find((item) => item.type === "function_call");
    assert(call?.type === "function_call", JSON.stringify(first.output));
    assertEquals([call.call_id, call.name, JSON.parse(call.arguments)], [
      "call_r1",
      "get_weather",
      { city: "Oslo" },
    ]);
    const second = await openai.responses.create({
      model: "gpt-4o-mini",
      previous_response_id: first.id,
      input: [{ type: "function_call_output", call_id: call.call_id, output: "sunny" }],
      tools: [weather],
    });
    assertStrictEquals(second.output_text, "it is sunny");
    const roles = fake.requests[1].body.messages
      .filter((m: { role: string }) => m.role !== "system")
      .map((m: { role: string }) => m.role);
    assertEquals(roles, ["user", "assistant", "tool"]);
  },
);

baton.test(
  "POST /v1/responses: a client that keeps its own history sends the call and its output",
  async (worker, fake) => {
    fake.script(weatherModel);
    const answer = await client(worker).responses.create({
      model: "gpt-4o-mini",
      input: [
        { role: "user", content: "weather in Oslo?" },
        {
          type: "function_call",
          call_id: "call_r1",
          name: "get_weather",
          arguments: '{"city":"Oslo"}',
        },
        { type: "function_call_output", call_id: "call_r1", output: "rainy" },
      ],
      tools: [weather],
    });
    assertStrictEquals(answer.output_text, "it is rainy");
    assertStrictEquals(fake.requests.length, 1);
    const orphan = await assertRejects(() =>
      client(worker).responses.create({
        model: "gpt-4o-mini",
        input: [{ type: "function_call_output", call_id: "nope", output: "x" }],
      })
    );
    assert(orphan instanceof OpenAI.BadRequestError, String(orphan));
    assertStrictEquals(fake.requests.length, 1, "no turn for an output without its call");
  },
);

baton.test("POST /v1/responses streams a function call's events", async (worker, fake) => {
  fake.script(weatherModel);
  const stream = client(worker).responses.stream({
    model: "gpt-4o-mini",
    input: "weather?",
    tools: [weather],
  });
  const types: string[] = [];
  for await (const event of stream) types.push(event.type);
  const final = await stream.finalResponse();
  assert(types.includes("response.function_call_arguments.done"), types.join(" "));
  assertStrictEquals(types.at(-1), "response.completed");
  const call = final.output.find((item) => item.type === "function_call");
  assert(call?.type === "function_call" && call.name === "get_weather");
});

baton.test(
  "POST /v1/responses reports a reply cut at max_output_tokens as incomplete, also streamed",
  async (worker, fake) => {
    fake.script(() => ({ kind: "text", text: "cut sho", finish: "length" }));
    const openai = client(worker);
    const response = await openai.responses.create({
      model: "gpt-4o-mini",
      input: "write a long essay",
      max_output_tokens: 3,
    });
    assertStrictEquals(response.status, "incomplete");
    assertEquals(response.incomplete_details, { reason: "max_output_tokens" });
    assertStrictEquals(response.output_text, "cut sho");
    assertStrictEquals(fake.requests[0].body.max_completion_tokens, 3);
    const stream = openai.responses.stream({
      model: "gpt-4o-mini",
      input: "again",
      max_output_tokens: 3,
    });
    const types: string[] = [];
    for await (const event of stream) types.push(event.type);
    assertStrictEquals(types.at(-1), "response.incomplete");
  },
);

baton.done();

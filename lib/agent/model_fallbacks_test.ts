// Unit tests of lib/agent/model_fallbacks.ts (the chain) and of its events through runTurn; Deno.
import { assertEquals, assertRejects, assertStrictEquals } from "@std/assert";
import {
  type ChatModel,
  type FallbackAttempt,
  ModelError,
  type ModelReply,
  type ModelRequest,
} from "./chat_model.ts";
import { fallsBack, modelFallbacks } from "./model_fallbacks.ts";
import { type ModelEvent, runTurn } from "./run_turn.ts";
import { ToolRegistry } from "./tools.ts";

/** A model named `name` that fails with `error` (when given) or answers its name; records what it was asked. */
function _model(
  name: string,
  error?: unknown,
  opts: { streamFirst?: string } = {},
): ChatModel & { asked: ModelRequest[] } {
  const asked: ModelRequest[] = [];
  return {
    name,
    asked,
    complete(request): Promise<ModelReply> {
      asked.push(request);
      if (opts.streamFirst) request.onDelta?.(opts.streamFirst);
      if (error) return Promise.reject(error);
      request.onDelta?.(`from ${name}`);
      return Promise.resolve({
        content: `from ${name}`,
        toolCalls: [],
        usage: { prompt_tokens: 1, completion_tokens: 1 },
      });
    },
  };
}

const _request = (extra: Partial<ModelRequest> = {}): ModelRequest => ({
  messages: [{ role: "user", content: "hi" }],
  tools: [],
  ...extra,
});

Deno.test("modelFallbacks() asks the next model when the first answers 503, and tells onFallback", async () => {
  const first = _model("primary", new ModelError("the model provider answered 503", 503));
  const second = _model("backup");
  const attempts: FallbackAttempt[] = [];
  const reply = await modelFallbacks([first, second]).complete(
    _request({ onFallback: (a) => attempts.push(a) }),
  );
  assertStrictEquals(reply.content, "from backup");
  assertEquals(attempts.map(({ duration_ms: _, ...a }) => a), [{
    from: "primary",
    to: "backup",
    status: 503,
    error: "ModelError: the model provider answered 503",
  }]);
  assertEquals(typeof attempts[0].duration_ms, "number");
});

Deno.test("modelFallbacks() moves on after 429, a timeout and no connection, down the whole chain", async () => {
  const chain = modelFallbacks([
    _model("a", new ModelError("the model provider answered 429", 429)),
    _model("b", new ModelError("the model provider timed out", undefined, true)),
    _model("c", new ModelError("could not reach the model provider", undefined, true)),
    _model("d"),
  ]);
  const attempts: FallbackAttempt[] = [];
  const reply = await chain.complete(_request({ onFallback: (a) => attempts.push(a) }));
  assertStrictEquals(reply.content, "from d");
  assertEquals(attempts.map((a) => [a.from, a.to, a.status]), [
    ["a", "b", 429],
    ["b", "c", undefined],
    ["c", "d", undefined],
  ]);
});

Deno.test("modelFallbacks() does not ask another model after a 400: the request itself is wrong", async () => {
  const second = _model("backup");
  const attempts: FallbackAttempt[] = [];
  const error = await assertRejects(() =>
    modelFallbacks([
      _model("primary", new ModelError("the model provider answered 400", 400)),
      second,
    ])
      .complete(_request({ onFallback: (a) => attempts.push(a) }))
  );
  assertStrictEquals((error as ModelError).status, 400);
  assertEquals(second.asked.length, 0);
  assertEquals(attempts, []);
  assertEquals(fallsBack(new ModelError("x", 401)), false);
  assertEquals(fallsBack(new ModelError("x", 500)), true);
  assertEquals(fallsBack(new Error("aborted")), false);
});

Deno.test("modelFallbacks() fails like the last model when every model fails", async () => {
  const error = await assertRejects(() =>
    modelFallbacks([
      _model("a", new ModelError("the model provider answered 503", 503)),
      _model("b", new ModelError("the model provider answered 502", 502)),
    ]).complete(_request())
  );
  assertStrictEquals((error as ModelError).status, 502);
});

Deno.test("modelFallbacks() does not replace a model that streamed text before it failed", async () => {
  const second = _model("backup");
  const deltas: string[] = [];
  await assertRejects(() =>
    modelFallbacks([
      _model("primary", new ModelError("could not reach the model provider", undefined, true), {
        streamFirst: "Half an ans",
      }),
      second,
    ]).complete(_request({ onDelta: (d) => deltas.push(d) }))
  );
  assertEquals(deltas, ["Half an ans"]);
  assertEquals(second.asked.length, 0);
});

Deno.test("modelFallbacks() sends the turn's chosen name to the first model only", async () => {
  const first = _model("primary", new ModelError("the model provider answered 503", 503));
  const second = _model("backup");
  const attempts: FallbackAttempt[] = [];
  await modelFallbacks([first, second]).complete(
    _request({ model: "chosen-one", onFallback: (a) => attempts.push(a) }),
  );
  assertStrictEquals(first.asked[0].model, "chosen-one");
  assertStrictEquals(second.asked[0].model, undefined);
  assertEquals(attempts[0].from, "chosen-one");
});

Deno.test("modelFallbacks() asks no other model once the turn is stopped", async () => {
  const stop = new AbortController();
  stop.abort();
  const second = _model("backup");
  await assertRejects(() =>
    modelFallbacks([_model("primary", new ModelError("timed out", undefined, true)), second])
      .complete(_request({ signal: stop.signal }))
  );
  assertEquals(second.asked.length, 0);
});

Deno.test("runTurn() records a fallback as a model.fallback event of its step, before model.completed", async () => {
  const events: ModelEvent[] = [];
  const result = await runTurn({
    model: modelFallbacks([
      _model("primary", new ModelError("the model provider answered 503", 503)),
      _model("backup"),
    ]),
    tools: new ToolRegistry(),
    system: [],
    history: [],
    input: "hi",
    maxSteps: 2,
    signal: new AbortController().signal,
    modelName: "primary",
    onModel: (event) => events.push(event),
  });
  assertStrictEquals(result.reply, "from backup");
  assertEquals(events.map((e) => e.type), ["model.fallback", "model.completed"]);
  const fallback = events[0] as Extract<ModelEvent, { type: "model.fallback" }>;
  assertEquals([fallback.step, fallback.from, fallback.to, fallback.status], [
    1,
    "primary",
    "backup",
    503,
  ]);
});

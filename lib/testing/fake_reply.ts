// The fake model's answers (lib/testing/fake_model.ts): a scripted step as an OpenAI Chat Completions JSON body or SSE stream; runtime-neutral.
import type { FakeModelStep } from "./fake_step.ts";

function _imagePart(url: string) {
  return { type: "image_url", image_url: { url } };
}

/** A reply message with images: in OpenRouter's `images`, or as `content` parts after the text. */
function _withImages(text: string, urls: string[], where: "images" | "content") {
  const parts = urls.map(_imagePart);
  return where === "images"
    ? { role: "assistant", content: text, images: parts }
    : { role: "assistant", content: [...(text ? [{ type: "text", text }] : []), ...parts] };
}

function _split(s: string, parts: number): string[] {
  if (s.length < 2) return [s];
  const n = Math.min(parts, s.length);
  const size = Math.ceil(s.length / n);
  const out: string[] = [];
  for (let i = 0; i < s.length; i += size) out.push(s.slice(i, i + size));
  return out;
}

/** An answer the fake writes out; with `holdAt`, the chunks from that index wait for `release()`. */
export type FakeReply = {
  status: number;
  headers: Record<string, string>;
  chunks: string[];
  holdAt?: number;
  /** A pause before each chunk after the first (a slowly written stream). */
  gapMs?: number;
};

/** A JSON answer: `body` as one chunk, with `status` and `headers`. */
export const jsonReply = (
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): FakeReply => ({
  status,
  headers: { "content-type": "application/json", ...headers },
  chunks: [JSON.stringify(body)],
});

/**
 * The answer to a request `body` for a scripted `step`: a status error, or a completion (streamed
 * as SSE chunks when `body.stream`); `nextSeq` numbers a completion's ids (never a status error's).
 */
export function fakeReply(
  // deno-lint-ignore no-explicit-any
  body: any,
  step: Exclude<FakeModelStep, { kind: "hold" }>,
  nextSeq: () => number,
): FakeReply {
  if (step.kind === "status") {
    const headers: Record<string, string> = {};
    if (step.retryAfter !== undefined) headers["retry-after"] = step.retryAfter;
    return jsonReply(
      step.status,
      step.body ?? { error: { message: "fake error", type: "server_error" } },
      headers,
    );
  }
  const seq = nextSeq();
  const id = `chatcmpl-fake-${seq}`;
  const created = Math.floor(Date.now() / 1000);
  const model = body?.model ?? "fake-model";
  const counts = step.usage ?? { prompt_tokens: 1, completion_tokens: 1 };
  const usage = {
    prompt_tokens: counts.prompt_tokens,
    completion_tokens: counts.completion_tokens,
    total_tokens: counts.prompt_tokens + counts.completion_tokens,
    ...(counts.cached_tokens
      ? { prompt_tokens_details: { cached_tokens: counts.cached_tokens } }
      : {}),
  };
  const call = step.kind === "tool_call"
    ? {
      id: step.id ?? `call_fake_${seq}`,
      type: "function",
      function: { name: step.name, arguments: JSON.stringify(step.args) },
    }
    : undefined;
  const finish = call ? "tool_calls" : step.kind === "text" && step.finish ? step.finish : "stop";
  if (body?.stream !== true) {
    const message = call
      ? {
        role: "assistant",
        content: step.kind === "tool_call" ? step.text ?? null : null,
        tool_calls: [call],
      }
      : step.kind === "text" && step.images?.length
      ? _withImages(step.text, step.images, step.imagesIn ?? "images")
      : { role: "assistant", content: step.kind === "text" ? step.text : "" };
    return jsonReply(200, {
      id,
      object: "chat.completion",
      created,
      model,
      choices: [{ index: 0, message, finish_reason: finish }],
      usage,
    });
  }
  const chunk = (delta: unknown, finish_reason: string | null = null) => ({
    id,
    object: "chat.completion.chunk",
    created,
    model,
    choices: [{ index: 0, delta, finish_reason }],
  });
  const events: unknown[] = [chunk({ role: "assistant" })];
  if (call) {
    if (step.kind === "tool_call" && step.text) {
      for (const piece of _split(step.text, step.pieces ?? 3)) {
        events.push(chunk({ content: piece }));
      }
    }
    events.push(chunk({
      tool_calls: [{
        index: 0,
        id: call.id,
        type: "function",
        function: { name: call.function.name, arguments: "" },
      }],
    }));
    for (const piece of _split(call.function.arguments, 2)) {
      events.push(chunk({ tool_calls: [{ index: 0, function: { arguments: piece } }] }));
    }
  } else if (step.kind === "text") {
    const pieces = step.kind === "text" ? step.pieces ?? 3 : 3;
    for (const piece of _split(step.text, pieces)) events.push(chunk({ content: piece }));
    for (const url of step.images ?? []) events.push(chunk({ images: [_imagePart(url)] }));
  }
  events.push(chunk({}, finish));
  if (body?.stream_options?.include_usage) {
    events.push({ id, object: "chat.completion.chunk", created, model, choices: [], usage });
  }
  return {
    status: 200,
    headers: { "content-type": "text/event-stream", "cache-control": "no-cache" },
    chunks: [...events.map((e) => `data: ${JSON.stringify(e)}\n\n`), "data: [DONE]\n\n"],
    // After the role chunk and `holdAfter` pieces of the text.
    ...(step.kind === "text" && step.holdAfter !== undefined ? { holdAt: 1 + step.holdAfter } : {}),
    ...(step.pieceDelayMs ? { gapMs: step.pieceDelayMs } : {}),
  };
}

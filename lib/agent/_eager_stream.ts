// A streamed Chat Completions call through the openai package's stream helper, its request sent at once rather than from a timer; any runtime with fetch.
import type OpenAI from "openai";
import type { ChatCompletionStream } from "openai/lib/ChatCompletionStream";
import type { ChatCompletionCreateParamsStreaming } from "openai/resources/chat/completions";

type _Params = Omit<ChatCompletionCreateParamsStreaming, "stream">;

/** The stream class `eagerChatStream` starts: the package's helper, its request begun at once. */
export interface EagerStreamClass {
  new (params: _Params): ChatCompletionStream<null>;
  /** A runner with its request already on its way (see `eagerChatStream`). */
  start(client: OpenAI, params: _Params, signal?: AbortSignal): ChatCompletionStream<null>;
}

/**
 * The class, defined once on the first streamed call (with the package, see chat_model.ts): it
 * extends the package's helper, which a start-up must not load, so it cannot be made at module
 * load; made once, every call shares its class and shapes.
 */
let _class: Promise<EagerStreamClass> | undefined;

async function _defineClass(): Promise<EagerStreamClass> {
  const { ChatCompletionStream } = await import("openai/lib/ChatCompletionStream");
  return class EagerStream extends ChatCompletionStream<null> {
    static start(client: OpenAI, params: _Params, signal?: AbortSignal): EagerStream {
      const runner = new EagerStream(params);
      const started = runner._runChatCompletion(client, { ...params, stream: true }, {
        signal,
        headers: { "X-Stainless-Helper-Method": "stream" },
      });
      // Its failure reaches the caller through the runner below, after the package's timer.
      started.catch(() => {});
      runner._run(() => started);
      return runner;
    }
  };
}

/** The stream class, defined on its first use and the same one after (a failed load is retried). */
export function eagerStreamClass(): Promise<EagerStreamClass> {
  _class ??= _defineClass().catch((error) => {
    _class = undefined;
    throw error;
  });
  return _class;
}

/**
 * `client.chat.completions.stream(params, { signal })`, but with the request on its way before
 * this returns. The package starts it from a `setTimeout(0)` (EventStream's `_run`), and a Durable
 * Object runs a timer only after its other pending events — the submit's answer, held until its
 * write is durable, and the subscription of the run's stream — so every streamed turn's model call
 * waited on them (the fetch called 5–11 ms after the claim in the bench, now 1). The helper's own
 * request path is kept (`_runChatCompletion`: the same body, headers, retries, abort and final
 * completion), only no longer behind the timer; its events are the package's, and none fires before
 * the response arrives, so listeners added on return miss none.
 */
export async function eagerChatStream(
  client: OpenAI,
  params: _Params,
  signal?: AbortSignal,
): Promise<ChatCompletionStream<null>> {
  return (await eagerStreamClass()).start(client, params, signal);
}

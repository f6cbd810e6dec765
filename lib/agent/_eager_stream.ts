// A streamed Chat Completions call through the openai package's stream helper, its request sent at once rather than from a timer; any runtime with fetch.
import type OpenAI from "openai";
import type { ChatCompletionStream } from "openai/lib/ChatCompletionStream";
import type { ChatCompletionCreateParamsStreaming } from "openai/resources/chat/completions";

/** The package's stream helper, loaded with the package on the first streamed call (see chat_model.ts). */
let _helper: Promise<typeof import("openai/lib/ChatCompletionStream")> | undefined;

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
  params: Omit<ChatCompletionCreateParamsStreaming, "stream">,
  signal?: AbortSignal,
): Promise<ChatCompletionStream<null>> {
  const { ChatCompletionStream } = await (_helper ??= import("openai/lib/ChatCompletionStream"));
  class EagerStream extends ChatCompletionStream<null> {
    static start(): EagerStream {
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
  }
  return EagerStream.start();
}

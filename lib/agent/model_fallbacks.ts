// A fallback chain of chat models (`MODEL_FALLBACKS`): the next model asked when one is overloaded, failing or unreachable; any runtime with fetch.
import type { ChatModel, FallbackAttempt, ModelRequest } from "./chat_model.ts";
import { ModelError } from "./chat_model.ts";
import { errorText, log } from "../runtime/mod.ts";

/**
 * Whether another model may answer after `error`: a `ModelError` that is `transient` (408, 429,
 * 5xx, a timeout, no connection). A client error (400, 401, 404, 422, …) says the request itself
 * is wrong, and would be wrong at the next model too; a stop (an abort) is not a failure.
 */
export function fallsBack(error: unknown): boolean {
  return error instanceof ModelError && error.transient;
}

/**
 * A `ChatModel` over `models`, asked in order: each call goes to the first, and to the next only
 * when the one before failed with a `fallsBack` error — after its own retries (each model is an
 * `openAIChatModel` with `LLM_MAX_RETRIES` of its own: a blip is ridden out on the model the
 * deployer or user chose, and only an outage moves on). Every move is logged (the models' names,
 * the status and error; never a key or URL) and told to `request.onFallback`, which the turn
 * records as a `model.fallback` run event.
 *
 * A model that streamed any text to the user before it failed is not replaced: the reader has
 * half an answer, and a second model's whole answer after it would read as one garbled reply.
 * That failure fails the turn as it would without fallbacks. The turn's chosen name
 * (`request.model`) goes to the first model only; the fallbacks are asked by their own names.
 * One model alone is returned as it is.
 */
export function modelFallbacks(models: readonly ChatModel[]): ChatModel {
  if (!models.length) throw new Error("modelFallbacks: no models");
  if (models.length === 1) return models[0];
  return {
    name: models[0].name,
    async complete(request: ModelRequest) {
      let streamed = false;
      const onDelta = request.onDelta;
      const shared: ModelRequest = {
        ...request,
        ...(onDelta
          ? {
            onDelta: (delta: string) => {
              if (delta) streamed = true;
              onDelta(delta);
            },
          }
          : {}),
      };
      for (let i = 0;; i++) {
        const model = models[i];
        const { model: chosen, ...rest } = shared;
        const started = Date.now();
        try {
          return await model.complete(i === 0 ? shared : rest);
        } catch (error) {
          const next = models[i + 1];
          if (!next || streamed || request.signal?.aborted || !fallsBack(error)) throw error;
          const attempt: FallbackAttempt = {
            from: (i === 0 && chosen) || model.name,
            to: next.name,
            ...(error instanceof ModelError && error.status !== undefined
              ? { status: error.status }
              : {}),
            error: errorText(error).slice(0, 300),
            duration_ms: Date.now() - started,
          };
          log.warn("model call failed; asking the next model", { ...attempt });
          request.onFallback?.(attempt);
        }
      }
    },
  };
}

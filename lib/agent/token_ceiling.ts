// The turn's token ceiling (TURN_MAX_TOKENS) applied to one model call: no call when nothing is left, else its output bound clamped to what is; runtime-neutral.
import type { ModelParams } from "./chat_model.ts";

/**
 * The parameters of a turn's next model call under ceiling `maxTokens`, or null when the call
 * must not start. `used` is the turn's tokens so far; `nextPrompt` the least the call will send
 * (the last call's prompt: a turn's prompt only grows). What is left, `maxTokens - used -
 * nextPrompt`, bounds the call's output, so its completion cannot carry the turn past the
 * ceiling: a caller's own bound is kept where it is smaller. The field clamped is the one the
 * caller set (`max_tokens` alone: a provider that takes only that one keeps getting it), else
 * `max_completion_tokens`, the one OpenAI's current models require. Without a ceiling `params` are
 * returned as they are. Nothing left (under one token): null.
 */
export function clampToCeiling(
  maxTokens: number | undefined,
  params: ModelParams | undefined,
  used: { prompt_tokens: number; completion_tokens: number },
  nextPrompt: number,
): ModelParams | undefined | null {
  if (maxTokens === undefined) return params;
  const left = maxTokens - used.prompt_tokens - used.completion_tokens - nextPrompt;
  if (left < 1) return null;
  const field = params?.max_tokens != null && params.max_completion_tokens == null
    ? "max_tokens"
    : "max_completion_tokens";
  const asked = params?.[field];
  return { ...params, [field]: asked != null && asked < left ? asked : left };
}

// The summarizer compaction asks (lib/session/compactor.ts): one model call, no tools, the session's model; runtime-neutral.
import { type ChatModel, turnModelName } from "../agent/mod.ts";
import type { Summarizer } from "../session/mod.ts";
import type { BatonConfig } from "./config.ts";
import { modelFromConfig } from "./agent.ts";

/**
 * Writes a conversation's summary with the deployment's model (its fallbacks included): the
 * session's chosen model where `MODELS` allows it, else `LLM_MODEL`. Without LLM_BASE_URL the echo
 * model answers with the prompt's input, which then stands as the summary.
 */
export function createSummarizer(
  config: BatonConfig,
  model: ChatModel = modelFromConfig(config),
): Summarizer {
  return async ({ system, input, model: chosen, signal }) => {
    const name = turnModelName({ chosen }, { allowed: config.models, default: config.llmModel });
    const reply = await model.complete({
      messages: [{ role: "system", content: system }, { role: "user", content: input }],
      tools: [],
      signal,
      ...(name ? { model: name } : {}),
    });
    return reply.content;
  };
}

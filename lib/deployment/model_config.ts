// Model routing settings: `MODELS` (the names users may choose) and `MODEL_FALLBACKS` with their `LLM_API_KEY_<N>` keys; runtime-neutral.

/** One model of the fallback chain, after the configured one. */
export interface FallbackModel {
  model: string;
  /** Its endpoint: `LLM_BASE_URL`, or the `name@baseURL` entry's own. */
  baseURL: string;
  /** `LLM_API_KEY_<N>`; unset, `LLM_API_KEY` on the same endpoint and "" on another. */
  apiKey: string;
}

/**
 * `MODEL_FALLBACKS`: comma-separated entries, each a model name on `LLM_BASE_URL`, or
 * `name@https://host/v1` for a model on another OpenAI-compatible endpoint. Entry N (1-based)
 * takes its key from `LLM_API_KEY_<N>`. Another endpoint never gets `LLM_API_KEY`: the main
 * key is not sent to a host it was not issued for. The split is at the last `@` that starts a
 * URL, so names with `@` (`@cf/meta/llama-3.1-8b-instruct`) stay whole. Empty entries are dropped
 * (their position still counts, as the deployer counted it).
 */
export function parseModelFallbacks(env: Record<string, unknown>): FallbackModel[] {
  const text = typeof env.MODEL_FALLBACKS === "string" ? env.MODEL_FALLBACKS : "";
  const llmBaseUrl = typeof env.LLM_BASE_URL === "string" ? env.LLM_BASE_URL : "";
  if (!text.trim() || !llmBaseUrl) return [];
  const mainKey = typeof env.LLM_API_KEY === "string" ? env.LLM_API_KEY : "";
  return text.split(",").flatMap((raw, i) => {
    const entry = raw.trim();
    if (!entry) return [];
    const own = env[`LLM_API_KEY_${i + 1}`];
    const key = typeof own === "string" && own ? own : undefined;
    const at = /^(.+)@(https?:\/\/\S+)$/.exec(entry);
    if (at) return [{ model: at[1].trim(), baseURL: at[2], apiKey: key ?? "" }];
    return [{ model: entry, baseURL: llmBaseUrl, apiKey: key ?? mainKey }];
  });
}

// Whether a model provider's error says the prompt was longer than the model's context (OpenAI, Anthropic, Gemini, Mistral, vLLM, llama.cpp, Ollama wording); any runtime.

/**
 * What providers say when a prompt does not fit: OpenAI's code `context_length_exceeded` and
 * message ("maximum context length"), Anthropic's "prompt is too long", Gemini's "input token
 * count … exceeds", vLLM's and llama.cpp's "context window"/"too many tokens", Mistral's and
 * Groq's "reduce the length". Matched on the provider's text, never shown to users.
 */
const _OVERFLOW =
  /context[_ ]length[_ ]exceeded|maximum context length|context window|context length|prompt is too long|too many (input )?tokens|input token count|exceeds the (model'?s? )?(maximum|max)|reduce the length|request too large for model|string_above_max_length/i;

/**
 * Whether a provider's error answer (`status`, its `error.code`, `error.type`, `error.message`)
 * says the context is too long. Only client errors (400, 413, 422) qualify: a 5xx that mentions
 * a context is the provider's trouble, not the prompt's.
 */
export function isContextOverflow(
  status: number | undefined,
  error: { code?: unknown; type?: unknown; message?: unknown },
): boolean {
  if (status !== 400 && status !== 413 && status !== 422) return false;
  const texts = [error.code, error.type, error.message].filter((t) => typeof t === "string");
  return texts.some((text) => _OVERFLOW.test(text as string));
}

// Speech to text through a Workers AI binding's `run` (Whisper models), the road taken without TRANSCRIBE_BASE_URL; runtime-neutral (the binding is any object with `run`).
import { deadlineSignal } from "../runtime/deadline.ts";
import { encodeBase64 } from "../runtime/mod.ts";
import { TRANSCRIBE_TIMEOUT_MS, type Transcriber } from "./transcribe.ts";

/** What transcription needs of a Workers AI binding (the Worker's `env.AI`): its `run`. */
export interface AiRunner {
  run(
    model: string,
    input: Record<string, unknown>,
    options?: { signal?: AbortSignal },
  ): Promise<unknown>;
}

/** Voice through the `AI` binding: `TRANSCRIBE_MODEL` names a Workers AI model (`@cf/…`). */
export interface WorkersAiTranscribeSettings {
  /** The binding, as the Worker's env has it. */
  ai: AiRunner;
  /** E.g. `@cf/openai/whisper-large-v3-turbo`. */
  model: string;
}

/**
 * The older Whisper models take the recording as a list of byte values; the newer ones (the
 * turbo model) as base64, the shape every model added since takes.
 */
const _BYTE_LIST_MODELS: ReadonlySet<string> = new Set([
  "@cf/openai/whisper",
  "@cf/openai/whisper-tiny-en",
]);

/** Whether `value` can stand for a Workers AI binding (an object with a `run` method). */
export function isAiRunner(value: unknown): value is AiRunner {
  return typeof value === "object" && value !== null &&
    typeof (value as { run?: unknown }).run === "function";
}

/**
 * A `Transcriber` calling `ai.run(model, { audio })`: base64 for the turbo model and newer, byte
 * values for `@cf/openai/whisper` and `@cf/openai/whisper-tiny-en`; the answer's `text` is the
 * transcript. Bounded by `TRANSCRIBE_TIMEOUT_MS` and the turn's signal (passed to `run`, and
 * not waited past even where the binding ignores it). A failure names Workers AI and its error.
 */
export function workersAiTranscriber(
  settings: WorkersAiTranscribeSettings,
  options: { timeoutMs?: number } = {},
): Transcriber {
  const { ai, model } = settings;
  const timeoutMs = options.timeoutMs ?? TRANSCRIBE_TIMEOUT_MS;
  return async ({ bytes }, signal) => {
    const audio = _BYTE_LIST_MODELS.has(model) ? Array.from(bytes) : encodeBase64(bytes);
    const deadline = deadlineSignal(timeoutMs, signal);
    let answer: unknown;
    try {
      answer = await _unlessAborted(
        ai.run(model, { audio }, { signal: deadline.signal }),
        deadline.signal,
      );
    } catch (error) {
      signal?.throwIfAborted();
      if (deadline.expired) throw new Error(`Workers AI took longer than ${timeoutMs / 1000} s`);
      const why = error instanceof Error ? error.message : "unknown error";
      throw new Error(`Workers AI failed: ${why.slice(0, 160)}`);
    } finally {
      deadline.clear();
    }
    const text = (answer as { text?: unknown } | null | undefined)?.text;
    if (typeof text !== "string") throw new Error("Workers AI sent no text");
    return text.trim();
  };
}

/** `work`, or the signal's reason as soon as it aborts: a turn never waits on a binding that ignores it. */
function _unlessAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
  });
}

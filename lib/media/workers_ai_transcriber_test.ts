// Unit tests of the Workers AI road for voice: readConfig choosing it, workersAiTranscriber's input shapes, text and failures, describeMedia through a fake `run`; runs under Deno.
import { assert, assertEquals, assertRejects, assertStrictEquals } from "@std/assert";
import { readConfig } from "../deployment/config.ts";
import { describeMedia } from "./describe_media.ts";
import type { MediaRef } from "./media_ref.ts";
import { memoryMediaStore } from "./media_store.ts";
import { type AiRunner, workersAiTranscriber } from "./workers_ai_transcriber.ts";

const TURBO = "@cf/openai/whisper-large-v3-turbo";

/** A stand-in for `env.AI`: records each call, answers with `answer` (or throws it when an Error). */
function fakeAi(answer: unknown) {
  const calls: { model: string; input: Record<string, unknown>; signal?: AbortSignal }[] = [];
  return {
    calls,
    run(model: string, input: Record<string, unknown>, options?: { signal?: AbortSignal }) {
      calls.push({ model, input, ...(options?.signal ? { signal: options.signal } : {}) });
      return answer instanceof Error ? Promise.reject(answer) : Promise.resolve(answer);
    },
  };
}

Deno.test("readConfig() transcribes voice through the AI binding when TRANSCRIBE_MODEL is an @cf/ model and no TRANSCRIBE_BASE_URL is set", async () => {
  const ai = fakeAi({ text: " buongiorno ", word_count: 1 });
  const config = readConfig({ TRANSCRIBE_MODEL: TURBO, AI: ai });
  assert(config.media.transcribe !== null, "voice is refused");
  const store = memoryMediaStore();
  const ogg = new Uint8Array([0x4f, 0x67, 0x67, 0x53, 0, 1, 2, 255]);
  store.objects.set("s/voice", { bytes: ogg, type: "audio/ogg" });
  const [described] = await describeMedia(
    [{ id: "s/voice", type: "audio/ogg", size: ogg.length }],
    { store, settings: config.media },
  );
  assertStrictEquals((described as MediaRef).description, "[voice message] buongiorno");
  assertEquals(ai.calls.map((c) => [c.model, c.input]), [[TURBO, { audio: "T2dnUwABAv8=" }]]);
});

Deno.test("readConfig() keeps voice refused without the binding, without an @cf/ model, and prefers TRANSCRIBE_BASE_URL", () => {
  const ai = fakeAi({ text: "x" });
  assertStrictEquals(readConfig({ TRANSCRIBE_MODEL: TURBO }).media.transcribe, null);
  assertStrictEquals(readConfig({ AI: ai }).media.transcribe, null);
  assertStrictEquals(readConfig({ TRANSCRIBE_MODEL: "whisper-1", AI: ai }).media.transcribe, null);
  assertStrictEquals(readConfig({ TRANSCRIBE_MODEL: TURBO, AI: {} }).media.transcribe, null);
  assertEquals(
    readConfig({ TRANSCRIBE_BASE_URL: "https://stt.example/v1", TRANSCRIBE_MODEL: TURBO, AI: ai })
      .media.transcribe,
    { baseUrl: "https://stt.example/v1", model: TURBO, apiKey: "" },
  );
});

Deno.test("workersAiTranscriber() sends the older Whisper models the bytes as numbers", async () => {
  const ai = fakeAi({ text: "hello", vtt: "WEBVTT" });
  const turn = new AbortController();
  const transcribe = workersAiTranscriber({ ai, model: "@cf/openai/whisper" });
  const text = await transcribe(
    { bytes: new Uint8Array([1, 2, 250]), type: "audio/wav" },
    turn.signal,
  );
  assertStrictEquals(text, "hello");
  assertEquals(ai.calls[0].input, { audio: [1, 2, 250] });
});

Deno.test("workersAiTranscriber() fails naming Workers AI on its error, on an answer without text, and on the deadline", async () => {
  const audio = { bytes: new Uint8Array([1]), type: "audio/ogg" };
  const failure = async (ai: AiRunner, timeoutMs?: number) =>
    ((await assertRejects(() =>
      workersAiTranscriber({ ai, model: TURBO }, timeoutMs ? { timeoutMs } : {})(audio)
    )) as Error).message;
  assertStrictEquals(
    await failure(fakeAi(new Error("3010: Invalid input"))),
    "Workers AI failed: 3010: Invalid input",
  );
  assertStrictEquals(await failure(fakeAi({ response: "?" })), "Workers AI sent no text");
  // A binding that never answers and ignores its signal is not waited past the deadline.
  const never = { run: () => new Promise<unknown>(() => {}) };
  assertStrictEquals(await failure(never, 1), "Workers AI took longer than 0.001 s");
});

Deno.test("workersAiTranscriber() rethrows the turn's own abort, not a transcription failure", async () => {
  const turn = new AbortController();
  let given: AbortSignal | undefined;
  const never: AiRunner = {
    run: (_model, _input, options) => (given = options?.signal, new Promise<unknown>(() => {})),
  };
  const pending = workersAiTranscriber({ ai: never, model: TURBO })(
    { bytes: new Uint8Array([1]), type: "audio/ogg" },
    turn.signal,
  );
  const reason = new Error("the turn was stopped");
  turn.abort(reason);
  const thrown = await pending.catch((error) => error);
  assertStrictEquals(thrown, reason);
  assert(given?.aborted, "the turn's abort did not reach run");
});

Deno.test("describeMedia() notes a Workers AI failure as the recording not transcribed", async () => {
  const config = readConfig({
    TRANSCRIBE_MODEL: TURBO,
    AI: fakeAi(new Error("5007: no such model")),
  });
  const store = memoryMediaStore();
  store.objects.set("s/v", { bytes: new Uint8Array([1, 2]), type: "audio/ogg" });
  const [described] = await describeMedia([{ id: "s/v", type: "audio/ogg", size: 2 }], {
    store,
    settings: config.media,
  });
  assertStrictEquals(
    (described as MediaRef).description,
    "[voice message] (the recording could not be transcribed (Error: Workers AI failed: 5007: no such model))",
  );
});

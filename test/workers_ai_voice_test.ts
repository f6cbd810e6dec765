// Voice through the Workers AI binding end to end: with an `@cf/` TRANSCRIBE_MODEL and no TRANSCRIBE_BASE_URL, an input_audio part is sent to `AI.run` as base64 and the model reads its text; Deno + Miniflare.
import OpenAI from "openai";
import { assert, assertEquals, assertStrictEquals } from "@std/assert";
import { API_KEY } from "./_support/clients.ts";
import { sharedBaton } from "./_support/shared_baton.ts";
import { encodeBase64 } from "../lib/runtime/mod.ts";
import { startFakeTranscriber } from "../lib/testing/fake_transcriber.ts";

const TURBO = "@cf/openai/whisper-large-v3-turbo";
/** Where the test Worker's `AI.run` relays (test/_support/workers_ai_worker.ts). */
const transcriber = await startFakeTranscriber();
const baton = sharedBaton({
  media: true,
  entry: "test/_support/workers_ai_worker.ts",
  vars: { TRANSCRIBE_MODEL: TURBO, FAKE_AI_URL: transcriber.url },
  label: "AI binding",
});

/** A PCM WAV of one second of silence at 8 kHz, 8-bit mono. */
function silentWav(): Uint8Array {
  const bytes = new Uint8Array(44 + 8000).fill(128);
  const view = new DataView(bytes.buffer);
  const ascii = (at: number, text: string) => bytes.set(new TextEncoder().encode(text), at);
  ascii(0, "RIFF");
  view.setUint32(4, 36 + 8000, true);
  ascii(8, "WAVEfmt ");
  view.setUint32(16, 16, true);
  view.setUint16(20, 1, true);
  view.setUint16(22, 1, true);
  view.setUint32(24, 8000, true);
  view.setUint32(28, 8000, true);
  view.setUint16(32, 1, true);
  view.setUint16(34, 8, true);
  ascii(36, "data");
  view.setUint32(40, 8000, true);
  return bytes;
}

baton.test(
  "POST /v1/chat/completions: an input_audio part is transcribed by AI.run (the exact bytes as base64, the @cf/ model) and the model reads the transcript",
  async (worker, fake) => {
    transcriber.reset();
    const openai = new OpenAI({
      baseURL: new URL("v1", worker.url).href,
      apiKey: API_KEY,
      timeout: 30_000,
      maxRetries: 0,
      defaultHeaders: { "x-session-id": "workers-ai-voice" },
    });
    const wav = silentWav();
    await openai.chat.completions.create({
      model: "m",
      messages: [{
        role: "user",
        content: [
          { type: "text", text: "listen:" },
          { type: "input_audio", input_audio: { data: encodeBase64(wav), format: "wav" } },
        ],
      }],
    });
    assertStrictEquals(transcriber.requests.length, 1);
    assertEquals(transcriber.requests[0].bytes, wav, "the exact audio bytes");
    assertStrictEquals(transcriber.requests[0].model, TURBO);
    const sent = JSON.stringify(fake.requests[0].body.messages);
    assert(sent.includes("[voice message, 0:01] hello from the voice note"), sent);
  },
);

Deno.test({
  name: "the fake Workers AI relay's transcriber closes",
  sanitizeOps: false,
  sanitizeResources: false,
  fn: () => transcriber.close(),
});

baton.done();

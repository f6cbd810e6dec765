// Voice and documents over the OpenAI APIs end to end: input_audio transcribed once by a fake /audio/transcriptions, a PDF's and a CSV's text given to the model, unread types a 400 naming the part; Deno + Miniflare.
import OpenAI from "openai";
import { assert, assertEquals, assertStrictEquals } from "@std/assert";
import { API_KEY, json, postJson } from "./_support/clients.ts";
import { sharedBaton } from "./_support/shared_baton.ts";
import type { TestWorker } from "./_support/worker.ts";
import { encodeBase64 } from "../lib/runtime/mod.ts";
import type { FakeModelRequest } from "../lib/testing/fake_model.ts";
import { startFakeTranscriber } from "../lib/testing/fake_transcriber.ts";

/** The fake transcription endpoint the Worker is pointed at (closed by the file's last tests). */
const transcriber = await startFakeTranscriber();
const baton = sharedBaton({
  media: true,
  vars: { TRANSCRIBE_BASE_URL: transcriber.url, TRANSCRIBE_MODEL: "whisper-test" },
  label: "MEDIA, transcription",
});

/** A text-only model: each image described once by VISION_MODEL (the same fake endpoint). */
const describing = sharedBaton({
  media: true,
  vars: { VISION: "describe", VISION_MODEL: "vision-test" },
  label: "VISION=describe",
});

/** The PDF fixture (lib/media/testdata/make_invoice_pdf.cjs, pdfkit). */
const PDF = await Deno.readFile(new URL("../lib/media/testdata/invoice.pdf", import.meta.url));

/** A PCM WAV of one second of silence at 8 kHz, 8-bit mono. */
function silentWav(): Uint8Array {
  const data = 8000;
  const bytes = new Uint8Array(44 + data).fill(128);
  const view = new DataView(bytes.buffer);
  const ascii = (at: number, text: string) => bytes.set(new TextEncoder().encode(text), at);
  ascii(0, "RIFF");
  view.setUint32(4, 36 + data, true);
  ascii(8, "WAVEfmt ");
  view.setUint32(16, 16, true);
  view.setUint16(20, 1, true);
  view.setUint16(22, 1, true);
  view.setUint32(24, 8000, true);
  view.setUint32(28, 8000, true);
  view.setUint16(32, 1, true);
  view.setUint16(34, 8, true);
  ascii(36, "data");
  view.setUint32(40, data, true);
  return bytes;
}

function client(worker: TestWorker, session?: string): OpenAI {
  return new OpenAI({
    baseURL: new URL("v1", worker.url).href,
    apiKey: API_KEY,
    timeout: 30_000,
    maxRetries: 0,
    ...(session ? { defaultHeaders: { "x-session-id": session } } : {}),
  });
}

/** The text the model was sent in `request`, all messages joined. */
function sentText(request: FakeModelRequest): string {
  // deno-lint-ignore no-explicit-any
  return request.body.messages.map((m: any) =>
    typeof m.content === "string"
      ? m.content
      // deno-lint-ignore no-explicit-any
      : (m.content ?? []).map((p: any) => p.text ?? "").join("")
  ).join("\n");
}

baton.test(
  "POST /v1/chat/completions: an input_audio part is transcribed (the exact bytes, the model named) and the model reads the transcript; the next turn does not transcribe again",
  async (worker, fake) => {
    transcriber.reset();
    const openai = client(worker, "voice-chat");
    const wav = silentWav();
    const first = [{
      role: "user" as const,
      content: [
        { type: "text" as const, text: "listen:" },
        {
          type: "input_audio" as const,
          input_audio: { data: encodeBase64(wav), format: "wav" as const },
        },
      ],
    }];
    await openai.chat.completions.create({ model: "m", messages: first });
    assertStrictEquals(transcriber.requests.length, 1);
    assertEquals(transcriber.requests[0].bytes, wav, "the exact audio bytes");
    assertEquals([transcriber.requests[0].model, transcriber.requests[0].filename], [
      "whisper-test",
      "audio.wav",
    ]);
    const heard = "listen:\n[voice message, 0:01] hello from the voice note";
    assert(sentText(fake.requests[0]).includes(heard), sentText(fake.requests[0]));
    // The client sends its history again, audio included, as the openai package does.
    await openai.chat.completions.create({
      model: "m",
      messages: [...first, { role: "assistant", content: "heard" }, {
        role: "user",
        content: "what did I say?",
      }],
    });
    assertStrictEquals(transcriber.requests.length, 1, "transcribed once, not every turn");
    assert(sentText(fake.requests[1]).includes(heard), sentText(fake.requests[1]));
    assert(!JSON.stringify(fake.requests[1].body).includes(encodeBase64(wav)), "no audio sent");
  },
);

baton.test(
  "POST /v1/responses: an input_file PDF reaches the model as its text, named by its filename",
  async (worker, fake) => {
    const created = await client(worker).responses.create({
      model: "m",
      input: [{
        role: "user",
        content: [
          { type: "input_text", text: "what is due?" },
          {
            type: "input_file",
            filename: "invoice.pdf",
            file_data: `data:application/pdf;base64,${encodeBase64(PDF)}`,
          },
        ],
      }],
    });
    assertStrictEquals(created.status, "completed");
    const text = sentText(fake.requests[0]);
    assert(
      text.includes(
        "[document: invoice.pdf (PDF, 1 page)]\nInvoice 4711 from Example Tools Ltd.\n" +
          "Total due: 128.40 EUR by 2026-12-01.",
      ),
      text,
    );
  },
);

baton.test(
  "POST /v1/chat/completions: a CSV file part reaches the model as its text",
  async (worker, fake) => {
    const csv = "sku,qty\nbolt-m4,40\nnut-m4,12\n";
    const res = await postJson(worker, "/v1/chat/completions", {
      model: "m",
      messages: [{
        role: "user",
        content: [{ type: "text", text: "stock?" }, {
          type: "file",
          file: {
            filename: "stock.csv",
            file_data: `data:text/csv;base64,${encodeBase64(new TextEncoder().encode(csv))}`,
          },
        }],
      }],
    }, { "x-session-id": "csv-chat" });
    assertStrictEquals(res.status, 200, JSON.stringify(await res.clone().json()));
    assert(sentText(fake.requests[0]).includes(`[document: stock.csv]\n${csv}`));
  },
);

baton.test(
  "POST /v1/responses and /v1/chat/completions: a file of a type baton does not read, or audio that is none, is a 400 naming the part; no turn starts",
  async (worker, fake) => {
    const zip = new Uint8Array([0x50, 0x4b, 0x03, 0x04, 0x14, 0x00, 0x00, 0x00, 0x08, 0x00]);
    const res = await postJson(worker, "/v1/responses", {
      model: "m",
      input: [{
        role: "user",
        content: [{ type: "input_text", text: "unzip" }, {
          type: "input_file",
          filename: "a.zip",
          file_data: `data:application/zip;base64,${encodeBase64(zip)}`,
        }],
      }],
    });
    assertStrictEquals(res.status, 400);
    const message = (await json(res)).error.message as string;
    assert(message.startsWith("input[0].content[1]: application/zip is not read"), message);
    const audio = await postJson(worker, "/v1/chat/completions", {
      model: "m",
      messages: [{
        role: "user",
        content: [{
          type: "input_audio",
          input_audio: { data: encodeBase64(new TextEncoder().encode("not audio")), format: "mp3" },
        }],
      }],
    }, { "x-session-id": "not-audio" });
    assertStrictEquals(audio.status, 400);
    assertStrictEquals(
      (await json(audio)).error.message,
      "messages[0].content[0]: not audio by its content (text/plain)",
    );
    assertStrictEquals(fake.requests.length, 0, "no turn started");
  },
);

baton.test(
  "POST /v1/chat/completions: a failed transcription is a note the model reads, and the session goes on",
  async (worker, fake) => {
    transcriber.reset();
    transcriber.answer = { status: 503 };
    const openai = client(worker, "voice-fail");
    await openai.chat.completions.create({
      model: "m",
      messages: [{
        role: "user",
        content: [{
          type: "input_audio",
          input_audio: { data: encodeBase64(silentWav()), format: "wav" },
        }],
      }],
    });
    assert(
      sentText(fake.requests[0]).includes(
        "[voice message] (the recording could not be transcribed (Error: the transcription " +
          "service answered 503))",
      ),
      sentText(fake.requests[0]),
    );
    const next = await openai.chat.completions.create({
      model: "m",
      messages: [{ role: "user", content: "hello again" }],
    });
    assertStrictEquals(next.choices[0].message.content, "hello again");
  },
);

describing.test(
  "POST /v1/chat/completions with VISION=describe: VISION_MODEL describes the image once (its exact bytes); the model reads the words, never the image",
  async (worker, fake) => {
    const PNG = Uint8Array.from(
      atob(
        "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==",
      ),
      (c) => c.charCodeAt(0),
    );
    const image = `data:image/png;base64,${encodeBase64(PNG)}`;
    fake.script((request) =>
      request.body.model === "vision-test"
        ? { kind: "text", text: "a single red pixel" }
        : { kind: "text", text: "ok" }
    );
    const openai = client(worker, "describe-chat");
    const first = [{
      role: "user" as const,
      content: [
        { type: "text" as const, text: "what is this?" },
        { type: "image_url" as const, image_url: { url: image } },
      ],
    }];
    await openai.chat.completions.create({ model: "m", messages: first });
    const vision = fake.requests.filter((r) => r.body.model === "vision-test");
    assertStrictEquals(vision.length, 1);
    assert(JSON.stringify(vision[0].body.messages).includes(image), "the exact image bytes");
    const turn = fake.requests.filter((r) => r.body.model !== "vision-test");
    assert(!JSON.stringify(turn[0].body).includes("image_url"), "no image part to the text model");
    assert(
      sentText(turn[0]).includes("what is this?\n[image: a single red pixel]"),
      sentText(turn[0]),
    );
    await openai.chat.completions.create({
      model: "m",
      messages: [...first, { role: "assistant", content: "ok" }, {
        role: "user",
        content: "sure?",
      }],
    });
    assertStrictEquals(
      fake.requests.filter((r) => r.body.model === "vision-test").length,
      1,
      "described once, not every turn",
    );
    assert(sentText(fake.requests.at(-1)!).includes("[image: a single red pixel]"));
  },
);

Deno.test({
  name: "the fake transcription endpoint closes",
  sanitizeOps: false,
  sanitizeResources: false,
  fn: () => transcriber.close(),
});

baton.done();
describing.done();

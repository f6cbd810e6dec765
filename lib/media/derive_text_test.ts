// Unit tests of deriveMediaText, audioDuration and openAITranscriber: labelled transcripts, documents cut to a budget, refusals naming the type, the exact bytes uploaded; runs under Deno.
import { assert, assertEquals, assertStrictEquals } from "@std/assert";
import { startFakeTranscriber } from "../testing/fake_transcriber.ts";
import { audioDuration, formatDuration } from "./audio_duration.ts";
import { deriveMediaText, mediaTextRefusal, NOT_TRANSCRIBED, PDF_NOT_READ } from "./derive_text.ts";
import { openAITranscriber, type Transcriber } from "./transcribe.ts";
import { sniffMediaType } from "./sniff_media_type.ts";
import type { PdfjsLoader } from "./pdf_text.ts";

// pdf.js as the Worker gets it through functions/pdfjs/ (here the package, straight from node_modules).
const pdfjs: PdfjsLoader = () => import("unpdf/pdfjs");

/** The PDF fixture, made by testdata/make_invoice_pdf.cjs with pdfkit. */
const PDF = await Deno.readFile(new URL("./testdata/invoice.pdf", import.meta.url));
const utf8 = (text: string) => new TextEncoder().encode(text);

/** A PCM WAV of `seconds` of silence at 8 kHz, 8-bit mono (a byte a sample). */
export function silentWav(seconds: number): Uint8Array {
  const data = 8000 * seconds;
  const bytes = new Uint8Array(44 + data);
  const view = new DataView(bytes.buffer);
  bytes.set(utf8("RIFF"), 0);
  view.setUint32(4, 36 + data, true);
  bytes.set(utf8("WAVEfmt "), 8);
  view.setUint32(16, 16, true); // fmt chunk size
  view.setUint16(20, 1, true); // PCM
  view.setUint16(22, 1, true); // mono
  view.setUint32(24, 8000, true); // sample rate
  view.setUint32(28, 8000, true); // byte rate
  view.setUint16(32, 1, true); // block align
  view.setUint16(34, 8, true); // bits per sample
  bytes.set(utf8("data"), 36);
  view.setUint32(40, data, true);
  bytes.fill(128, 44);
  return bytes;
}

/** An Ogg page (header and one packet): enough of the container for its length to be read. */
function oggPage(granule: bigint, packet: Uint8Array): Uint8Array {
  const page = new Uint8Array(27 + 1 + packet.length);
  const view = new DataView(page.buffer);
  page.set(utf8("OggS"), 0);
  view.setBigUint64(6, granule, true);
  page[26] = 1;
  page[27] = packet.length;
  page.set(packet, 28);
  return page;
}

const fixed = (text: string): Transcriber => () => Promise.resolve(text);
const options = { maxChars: 1000 };
/** A deployment that reads PDFs (`defineBaton({ pdf })`). */
const reading = { ...options, pdf: pdfjs };

Deno.test("audioDuration() reads WAV, Ogg Opus and MP4 lengths; formatDuration() writes them as a clock", () => {
  assertStrictEquals(audioDuration(silentWav(3), "audio/wav"), 3);
  const head = new Uint8Array(19);
  head.set(utf8("OpusHead"));
  new DataView(head.buffer).setUint16(10, 312, true); // pre-skip
  const ogg = new Uint8Array([...oggPage(0n, head), ...oggPage(48_000n * 42n + 312n, utf8("x"))]);
  assertStrictEquals(sniffMediaType(ogg), "audio/ogg");
  assertStrictEquals(audioDuration(ogg, "audio/ogg"), 42);
  const mvhd = new Uint8Array(40);
  mvhd.set(utf8("mvhd"), 4);
  new DataView(mvhd.buffer).setUint32(20, 600); // timescale, after version, flags and two dates
  new DataView(mvhd.buffer).setUint32(24, 600 * 75); // duration
  assertStrictEquals(audioDuration(mvhd, "audio/mp4"), 75);
  assertStrictEquals(audioDuration(utf8("ID3 no length"), "audio/mpeg"), null);
  assertStrictEquals(audioDuration(utf8("OggS broken"), "audio/ogg"), null);
  assertEquals([formatDuration(42), formatDuration(75.4), formatDuration(3723)], [
    "0:42",
    "1:15",
    "1:02:03",
  ]);
});

Deno.test("deriveMediaText() labels a transcript as a voice message with its length, a named file as audio", async () => {
  const wav = silentWav(2);
  assertEquals(await deriveMediaText(wav, "audio/wav", { ...options, transcribe: fixed("hi") }), {
    ok: true,
    text: "[voice message, 0:02] hi",
  });
  const named = await deriveMediaText(utf8("ID3...."), "audio/mpeg", {
    ...options,
    name: "talk.mp3",
    transcribe: fixed(""),
  });
  assertEquals(named, { ok: true, text: "[audio talk.mp3] (no speech heard)" });
});

Deno.test("deriveMediaText() refuses voice without a transcriber, and a failed transcription, never throwing", async () => {
  const wav = silentWav(1);
  assertEquals(await deriveMediaText(wav, "audio/wav", options), {
    ok: false,
    reason: NOT_TRANSCRIBED,
  });
  const failing: Transcriber = () => Promise.reject(new Error("the service answered 500"));
  assertEquals(await deriveMediaText(wav, "audio/wav", { ...options, transcribe: failing }), {
    ok: false,
    reason: "the recording could not be transcribed (Error: the service answered 500)",
  });
  // A stopped turn is not bad input: its reason is thrown.
  const stop = new AbortController();
  stop.abort(new Error("stopped"));
  const stopped = await deriveMediaText(wav, "audio/wav", {
    ...options,
    transcribe: (_audio, signal) => Promise.reject(signal?.reason),
    signal: stop.signal,
  }).then(() => "resolved", (e) => String(e));
  assertStrictEquals(stopped, "Error: stopped");
});

Deno.test("deriveMediaText() reads text, CSV and JSON as they are, cut to maxChars with a note", async () => {
  const csv = "name,qty\nbolts,40\nnuts,12\n";
  assertEquals(await deriveMediaText(utf8(csv), "text/plain", { ...options, name: "stock.csv" }), {
    ok: true,
    text: `[document: stock.csv]\n${csv}`,
  });
  const long = await deriveMediaText(utf8("x".repeat(50)), "application/json", { maxChars: 10 });
  assert(long.ok);
  assertStrictEquals(
    long.text,
    "[document: text]\nxxxxxxxxxx\n[cut: the document has 50 characters; the first 10 are here (MEDIA_TEXT_MAX_CHARS)]",
  );
  assertEquals(await deriveMediaText(new Uint8Array([0xc3, 0x28]), "text/plain", options), {
    ok: false,
    reason: "the document is not UTF-8 text",
  });
});

Deno.test("deriveMediaText() reads a PDF's text through unpdf, and refuses a corrupt one", async () => {
  assertStrictEquals(sniffMediaType(PDF), "application/pdf");
  const read = await deriveMediaText(PDF, "application/pdf", { ...reading, name: "invoice.pdf" });
  assertEquals(read, {
    ok: true,
    text: "[document: invoice.pdf (PDF, 1 page)]\n" +
      "Invoice 4711 from Example Tools Ltd.\nTotal due: 128.40 EUR by 2026-12-01.",
  });
  assertEquals(PDF[0], 0x25, "the caller's bytes are its own still");
  const corrupt = await deriveMediaText(utf8("%PDF-1.7\nnothing else"), "application/pdf", reading);
  assert(!corrupt.ok && corrupt.reason.startsWith("the PDF could not be read ("), String(corrupt));
});

Deno.test("deriveMediaText() and mediaTextRefusal() refuse other types, naming them", async () => {
  const zip = await deriveMediaText(new Uint8Array([0x50, 0x4b, 3, 4]), "application/zip", reading);
  assertEquals(zip, {
    ok: false,
    reason: "application/zip is not read: text, Markdown, CSV, JSON and PDF documents and voice " +
      "messages are read",
  });
  const all = { transcribes: true, readsPdf: true };
  assertStrictEquals(
    mediaTextRefusal("audio/ogg", { ...all, transcribes: false }),
    NOT_TRANSCRIBED,
  );
  assertStrictEquals(mediaTextRefusal("audio/ogg", all), null);
  assertStrictEquals(mediaTextRefusal("application/pdf", { ...all, transcribes: false }), null);
  assert(mediaTextRefusal("", all)!.startsWith("a file of unknown type is not read"));
});

Deno.test("deriveMediaText() and mediaTextRefusal() refuse a PDF, and name no PDFs as read, where no pdf.js was given", async () => {
  const none = { transcribes: true, readsPdf: false };
  assertStrictEquals(mediaTextRefusal("application/pdf", none), PDF_NOT_READ);
  for (const pdf of [undefined, null]) {
    assertEquals(await deriveMediaText(PDF, "application/pdf", { ...options, pdf }), {
      ok: false,
      reason: "PDFs are not read on this deployment",
    });
  }
  assertStrictEquals(
    mediaTextRefusal("application/zip", none),
    "application/zip is not read: text, Markdown, CSV and JSON documents and voice messages are read",
  );
  // Another deployment in the same isolate, one that gave pdf.js, reads them all the same.
  assertStrictEquals(mediaTextRefusal("application/pdf", { ...none, readsPdf: true }), null);
  assert((await deriveMediaText(PDF, "application/pdf", reading)).ok);
  assertEquals(await deriveMediaText(PDF, "application/pdf", options), {
    ok: false,
    reason: "PDFs are not read on this deployment",
  });
});

Deno.test("openAITranscriber() uploads the exact bytes and the model as multipart, and fails without the key", async () => {
  const fake = await startFakeTranscriber();
  try {
    const wav = silentWav(1);
    const transcribe = openAITranscriber({ baseUrl: fake.url, model: "whisper-1", apiKey: "sk-t" });
    assertStrictEquals(
      await transcribe({ bytes: wav, type: "audio/wav" }),
      "hello from the voice note",
    );
    assertEquals(fake.requests.length, 1);
    const [got] = fake.requests;
    assertEquals(got.bytes, wav);
    assertEquals([got.model, got.filename, got.authorization], [
      "whisper-1",
      "audio.wav",
      "Bearer sk-t",
    ]);
    fake.answer = { status: 500 };
    const failed = await transcribe({ bytes: wav, type: "audio/wav" }).catch((e) => String(e));
    assertStrictEquals(failed, "Error: the transcription service answered 500");
    const away = openAITranscriber({
      baseUrl: "http://127.0.0.1:1/v1",
      model: "m",
      apiKey: "sk-t",
    });
    const unreachable = await away({ bytes: wav, type: "audio/wav" }).catch((e) => String(e));
    assert(!unreachable.includes("sk-t"), unreachable);
    assert(unreachable.includes("could not reach the transcription service"), unreachable);
  } finally {
    await fake.close();
  }
});

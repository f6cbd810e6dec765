// Unit tests of describeMedia, prepareFile and the model's view of voice and documents: described once, refused naming the part, shown as text; runs under Deno.
import { assert, assertEquals, assertStrictEquals, assertThrows } from "@std/assert";
import type { ChatMessage } from "../agent/mod.ts";
import { encodeBase64 } from "../runtime/mod.ts";
import { describeMedia } from "./describe_media.ts";
import { DEFAULT_MEDIA_SETTINGS } from "./media_settings.ts";
import { memoryMediaStore } from "./media_store.ts";
import type { MediaRef } from "./media_ref.ts";
import { mediaModelView } from "./model_view.ts";
import { prepareFile } from "./prepare_file.ts";
import { MediaRefusal } from "./prepare_image.ts";
import type { PdfjsLoader } from "./pdf_text.ts";

/** pdf.js straight from node_modules, as functions/pdfjs/ gives it to the Worker. */
const pdfjs: PdfjsLoader = () => import("unpdf/pdfjs");
/** The PDF fixture (testdata/make_invoice_pdf.cjs, pdfkit). */
const PDF = await Deno.readFile(new URL("./testdata/invoice.pdf", import.meta.url));

const utf8 = (text: string) => new TextEncoder().encode(text);
const WAV = (() => {
  const bytes = new Uint8Array(44 + 16_000).fill(128);
  const view = new DataView(bytes.buffer);
  bytes.set(utf8("RIFF"), 0);
  bytes.set(utf8("WAVEfmt "), 8);
  view.setUint32(16, 16, true);
  view.setUint32(28, 8000, true); // byte rate
  bytes.set(utf8("data"), 36);
  view.setUint32(40, 16_000, true);
  return bytes;
})();
// A deployment that reads PDFs, as functions/index.ts is (the refusals name PDFs as read).
const transcribing = {
  ...DEFAULT_MEDIA_SETTINGS,
  transcribe: { baseUrl: "x", model: "m", apiKey: "" },
  pdf: pdfjs,
};

Deno.test("describeMedia() describes voice and documents once, leaving images and described ones alone", async () => {
  const store = memoryMediaStore();
  store.objects.set("s/voice", { bytes: WAV, type: "audio/wav" });
  store.objects.set("s/doc", { bytes: utf8("a,b\n1,2\n"), type: "text/plain" });
  const refs: MediaRef[] = [
    { id: "s/voice", type: "audio/wav", size: WAV.length },
    { id: "s/doc", type: "text/plain", size: 8, name: "t.csv" },
    { id: "s/img", type: "image/png", size: 70 },
    { id: "s/old", type: "audio/ogg", size: 9, description: "[voice message] said before" },
    { id: "s/gone", type: "application/pdf", size: 9, name: "gone.pdf" },
  ];
  let calls = 0;
  const described = await describeMedia(refs, {
    store,
    settings: transcribing,
    transcribe: () => (calls++, Promise.resolve("ciao")),
  });
  assertEquals(described.map((m) => (m as MediaRef).description), [
    "[voice message, 0:02] ciao",
    "[document: t.csv]\na,b\n1,2\n",
    undefined,
    "[voice message] said before",
    "[file: gone.pdf] (it is no longer stored)",
  ]);
  assertStrictEquals(calls, 1);
  const without = await describeMedia([refs[0]], { store, settings: DEFAULT_MEDIA_SETTINGS });
  assertStrictEquals(
    (without[0] as MediaRef).description,
    "[voice message] (voice notes are not transcribed on this deployment)",
  );
});

Deno.test("mediaModelView() shows voice and documents as their description, never as images", async () => {
  const view = mediaModelView({ store: memoryMediaStore(), settings: DEFAULT_MEDIA_SETTINGS });
  const sent = await view([{
    role: "user",
    content: "listen",
    media: [
      { id: "k/1", type: "audio/ogg", size: 10, description: "[voice message, 0:03] hi" },
      { id: "k/2", type: "application/pdf", size: 2000, name: "a.pdf" },
    ],
  } as ChatMessage]);
  assertStrictEquals(sent[0].content, "listen\n[voice message, 0:03] hi\n[file: a.pdf, 2.0 kB]");
});

Deno.test("prepareFile() takes audio and documents by their bytes and refuses, naming the part and the reason", () => {
  const checks = { stored: true, settings: { ...transcribing, maxBytes: 20_000 } };
  const part = (url: string, kind: "audio" | "file" = "file") => ({
    path: "input[0].content[1]",
    url,
    kind,
  });
  const data = (type: string, bytes: Uint8Array) => `data:${type};base64,${encodeBase64(bytes)}`;
  const audio = prepareFile(part(data("audio/wav", WAV), "audio"), checks);
  assertEquals("type" in audio && audio.type, "audio/wav");
  const csv = prepareFile(part(data("text/csv", utf8("a,b\n"))), checks);
  assertEquals("type" in csv && csv.type, "text/plain");
  const refusal = (fn: () => unknown) => {
    const error = assertThrows(fn);
    assert(error instanceof MediaRefusal);
    return error.message;
  };
  assertStrictEquals(
    refusal(() =>
      prepareFile(part(data("audio/wav", WAV), "audio"), {
        ...checks,
        settings: DEFAULT_MEDIA_SETTINGS,
      })
    ),
    "input[0].content[1]: voice notes are not transcribed on this deployment",
  );
  assertStrictEquals(
    refusal(() =>
      prepareFile(part(data("application/zip", new Uint8Array([0x50, 0x4b, 3, 4, 0]))), checks)
    ),
    "input[0].content[1]: application/zip is not read (its bytes are no type baton reads): " +
      "text, Markdown, CSV, JSON and PDF documents and voice messages are read",
  );
  assert(
    refusal(() =>
      prepareFile(part(data("audio/wav", WAV), "audio"), {
        ...checks,
        settings: { ...transcribing, maxBytes: 100 },
      })
    ).includes("over MEDIA_MAX_BYTES (100)"),
  );
  assertStrictEquals(
    refusal(() => prepareFile(part(data("audio/wav", WAV), "audio"), { ...checks, stored: false })),
    "input[0].content[1]: audio parts are off on this deployment",
  );
  assert(refusal(() => prepareFile(part(""), checks)).includes("base64 `file_data`"));
});

Deno.test("prepareFile() and describeMedia() read a PDF only where the deployment's settings carry pdf.js", async () => {
  const part = {
    path: "messages[0].content[1]",
    url: `data:application/pdf;base64,${encodeBase64(PDF)}`,
    kind: "file" as const,
  };
  const without = { ...transcribing, pdf: null };
  const refusal = (fn: () => unknown) => {
    const error = assertThrows(fn);
    assert(error instanceof MediaRefusal);
    return error.message;
  };
  assertStrictEquals(
    refusal(() => prepareFile(part, { stored: true, settings: without })),
    "messages[0].content[1]: PDFs are not read on this deployment",
  );
  const zip = `data:application/zip;base64,${encodeBase64(new Uint8Array([0x50, 0x4b, 3, 4]))}`;
  assertStrictEquals(
    refusal(() => prepareFile({ ...part, url: zip }, { stored: true, settings: without })),
    "messages[0].content[1]: application/zip is not read (its bytes are no type baton reads): " +
      "text, Markdown, CSV and JSON documents and voice messages are read",
  );
  const taken = prepareFile(part, { stored: true, settings: transcribing });
  assertEquals("type" in taken && taken.type, "application/pdf");

  const store = memoryMediaStore();
  store.objects.set("s/pdf", { bytes: PDF, type: "application/pdf" });
  const ref: MediaRef = { id: "s/pdf", type: "application/pdf", size: PDF.length, name: "i.pdf" };
  const [read] = await describeMedia([ref], { store, settings: transcribing });
  assert((read as MediaRef).description!.startsWith("[document: i.pdf (PDF, 1 page)]\nInvoice"));
  const [refused] = await describeMedia([ref], { store, settings: without });
  assertStrictEquals(
    (refused as MediaRef).description,
    "[file: i.pdf] (PDFs are not read on this deployment)",
  );
});

Deno.test("describeMedia() with VISION=describe puts each stored image into words once; a failure is a note", async () => {
  const GIF = Uint8Array.from(
    atob("R0lGODlhAQABAIAAAP///wAAACH5BAEAAAAALAAAAAABAAEAAAICRAEAOw=="),
    (c) => c.charCodeAt(0),
  );
  const store = memoryMediaStore();
  store.objects.set("s/gif", { bytes: GIF, type: "image/gif" });
  const seen: Uint8Array[] = [];
  const settings = { ...DEFAULT_MEDIA_SETTINGS, vision: "describe" as const };
  const image: MediaRef = { id: "s/gif", type: "image/gif", size: GIF.length, name: "dot.gif" };
  const [described] = await describeMedia([image], {
    store,
    settings,
    describeImage: ({ bytes }) => (seen.push(bytes), Promise.resolve("a white dot")),
  });
  assertEquals(seen, [GIF]);
  assertStrictEquals((described as MediaRef).description, "a white dot");
  const again = await describeMedia([described], {
    store,
    settings,
    describeImage: () => Promise.reject(new Error("must not be asked")),
  });
  assertStrictEquals((again[0] as MediaRef).description, "a white dot");
  const [failed] = await describeMedia([image], {
    store,
    settings,
    describeImage: () => Promise.reject(new Error("model down")),
  });
  assertStrictEquals(
    (failed as MediaRef).description,
    `dot.gif, ${GIF.length} B (it could not be described: Error: model down)`,
  );
  // VISION=native leaves images to be shown as images.
  const [native] = await describeMedia([image], {
    store,
    settings: DEFAULT_MEDIA_SETTINGS,
    describeImage: () => Promise.reject(new Error("must not be asked")),
  });
  assertStrictEquals(native, image);
});

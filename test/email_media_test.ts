// Workerd tests of a mail's attachments through the media path: stored in R2 (MEDIA) before the mail is taken, an image shown to the model, a document read as text, an unreadable file named in one short notice; Deno + Miniflare.
import { assert, assertEquals } from "@std/assert";
import { sessionState, settled } from "./_support/clients.ts";
import { deliverMail, mailSessionKey, mailText, untilMails } from "./_support/mail_driver.ts";
import { sharedBaton } from "./_support/shared_baton.ts";
import { encodeBase64 } from "../lib/runtime/mod.ts";
import type { FakeModelRequest } from "../lib/testing/fake_model.ts";
import { startFakeTranscriber } from "../lib/testing/fake_transcriber.ts";

/** The fake transcription endpoint the Worker is pointed at (closed by the file's last tests). */
const transcriber = await startFakeTranscriber();
const baton = sharedBaton({
  email: true,
  media: true,
  vars: {
    EMAIL_FROM: "bot@baton.example",
    MEDIA_MAX_BYTES: "4000",
    TRANSCRIBE_BASE_URL: transcriber.url,
    TRANSCRIBE_MODEL: "whisper-test",
  },
});

/** The PDF fixture (lib/media/testdata/make_invoice_pdf.cjs, pdfkit). */
const PDF = await Deno.readFile(new URL("../lib/media/testdata/invoice.pdf", import.meta.url));

/** A PCM WAV of a quarter second of silence at 8 kHz, 8-bit mono. */
function _silentWav(): Uint8Array {
  const data = 2000;
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

/** A 1×1 PNG. */
const PNG = Uint8Array.from(
  atob(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==",
  ),
  (c) => c.charCodeAt(0),
);

/** One MIME part of a multipart mail, its bytes in base64. */
interface Part {
  type: string;
  bytes: Uint8Array;
  name?: string;
  /** A Content-ID: an inline image an HTML part would show as `cid:`. */
  cid?: string;
}

/** A multipart/mixed mail: a plain-text part (when `body` is set), then each of `parts`. */
function _multipart(m: { from: string; id: string; body?: string; parts: Part[] }): string {
  const boundary = "b-attach-1";
  const lines: string[] = [];
  if (m.body !== undefined) {
    lines.push(`--${boundary}`, "Content-Type: text/plain; charset=utf-8", "", m.body);
  }
  for (const part of m.parts) {
    const name = part.name ? `; filename="${part.name}"` : "";
    lines.push(
      `--${boundary}`,
      `Content-Type: ${part.type}${part.name ? `; name="${part.name}"` : ""}`,
      "Content-Transfer-Encoding: base64",
      `Content-Disposition: ${part.cid ? "inline" : "attachment"}${name}`,
      ...(part.cid ? [`Content-ID: <${part.cid}>`] : []),
      "",
      encodeBase64(part.bytes).replace(/.{76}/g, "$&\n"),
    );
  }
  lines.push(`--${boundary}--`, "");
  return mailText({
    from: m.from,
    id: m.id,
    body: lines.join("\n"),
    headers: { "Content-Type": `multipart/mixed; boundary="${boundary}"` },
  });
}

/** The image URLs the model was sent in `request`, in order. */
function _imageUrls(request: FakeModelRequest): string[] {
  // deno-lint-ignore no-explicit-any
  return request.body.messages.flatMap((m: any) =>
    Array.isArray(m.content)
      // deno-lint-ignore no-explicit-any
      ? m.content.filter((p: any) => p.type === "image_url").map((p: any) => p.image_url.url)
      : []
  );
}

const _text = (s: string) => new TextEncoder().encode(s);

baton.test(
  "email() attachments: an inline image reaches the model as an image, a CSV as its text, an unreadable file in one notice",
  async (worker, fake) => {
    const id = "<attach.1@example.com>";
    const raw = _multipart({
      from: "olga@example.com",
      id,
      body: "What do you make of these?",
      parts: [
        { type: "image/png", bytes: PNG, name: "dot.png", cid: "dot@example.com" },
        { type: "text/csv", bytes: _text("fruit,count\nquince,7\n"), name: "stock.csv" },
        { type: "application/zip", bytes: Uint8Array.of(0x50, 0x4b, 3, 4, 0, 0), name: "a.zip" },
      ],
    });
    assertEquals((await deliverMail(worker, raw, "olga@example.com")).status, 200);
    const [reply] = await untilMails(worker, "olga@example.com", 1);
    const request = fake.requests.find((r) =>
      JSON.stringify(r.body.messages).includes("What do you make of these?")
    );
    assert(request, "the model was asked");
    assertEquals(_imageUrls(request), [`data:image/png;base64,${encodeBase64(PNG)}`]);
    assert(JSON.stringify(request.body.messages).includes("quince,7"), "the CSV's text is shown");
    // The zip is named once, ahead of the answer; the answer still comes.
    const text = reply.text ?? "";
    assert(text.startsWith("I couldn't read the document a.zip"), text);
    assertEquals(text.split("I couldn't read").length, 2, text);
    assert(text.includes("What do you make of these?"), text);
  },
);

baton.test(
  "email() a mail with an attachment and no text is taken (not dropped as empty)",
  async (worker, fake) => {
    const id = "<attach.2@example.com>";
    const raw = _multipart({
      from: "paul@example.com",
      id,
      parts: [{ type: "image/png", bytes: PNG, name: "only.png" }],
    });
    assertEquals((await deliverMail(worker, raw, "paul@example.com")).status, 200);
    await untilMails(worker, "paul@example.com", 1);
    const key = await mailSessionKey("paul@example.com", id);
    await settled(worker, key);
    const users = (await sessionState(worker, key)).messages.filter((m) => m.role === "user");
    assertEquals(users.length, 1);
    assert(fake.requests.some((r) => _imageUrls(r).length === 1), "the image reached the model");
  },
);

baton.test(
  "email() attachments over MEDIA_MAX_BYTES and past the count cap are named, not stored",
  async (worker) => {
    const id = "<attach.3@example.com>";
    const big = new Uint8Array(5000).fill(0x61);
    const many = Array.from({ length: 11 }, (_, i) => ({
      type: "text/plain",
      bytes: _text(`note ${i}`),
      name: `n${i}.txt`,
    }));
    const raw = _multipart({
      from: "quinn@example.com",
      id,
      body: "Lots of files.",
      parts: [{ type: "text/plain", bytes: big, name: "big.txt" }, ...many],
    });
    assertEquals((await deliverMail(worker, raw, "quinn@example.com")).status, 200);
    const [reply] = await untilMails(worker, "quinn@example.com", 1);
    const text = reply.text ?? "";
    assert(text.startsWith("I couldn't read the document big.txt (it is over"), text);
    assert(text.includes("the document n9.txt ("), text);
    assert(!text.includes("the document n8.txt ("), text);
  },
);

baton.test(
  "email() attachments: a PDF reaches the model as its text, a recording as its transcript",
  async (worker, fake) => {
    transcriber.reset();
    const wav = _silentWav();
    const raw = _multipart({
      from: "rosa@example.com",
      id: "<attach.4@example.com>",
      body: "Invoice and a voice memo.",
      parts: [
        { type: "application/pdf", bytes: PDF, name: "invoice.pdf" },
        { type: "audio/wav", bytes: wav, name: "memo.wav" },
      ],
    });
    assertEquals((await deliverMail(worker, raw, "rosa@example.com")).status, 200);
    const [reply] = await untilMails(worker, "rosa@example.com", 1);
    assert(!(reply.text ?? "").includes("I couldn't read"), reply.text);
    const request = fake.requests.find((r) =>
      JSON.stringify(r.body.messages).includes("Invoice and a voice memo.")
    )!;
    const sent = JSON.stringify(request.body.messages);
    assert(sent.includes("Invoice 4711 from Example Tools Ltd."), sent);
    assert(sent.includes("hello from the voice note"), sent);
    assertEquals(transcriber.requests.map((r) => r.bytes), [wav], "the exact bytes, once");
  },
);

Deno.test({
  name: "the fake transcription endpoint closes",
  sanitizeOps: false,
  sanitizeResources: false,
  fn: () => transcriber.close(),
});

baton.done();

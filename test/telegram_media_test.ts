// Telegram media end to end: photos, albums, voice notes and documents fetched through a fake Bot file API inside the turn, stored in R2 (MEDIA), the model sent the exact image bytes; never silence; Deno + Miniflare.
import { assert, assertEquals, assertStrictEquals } from "@std/assert";
import { json, sendWebhook, sessionState, settled } from "./_support/clients.ts";
import {
  telegramBotToken as TOKEN,
  telegramDriver as driver,
  telegramMediaUpdate,
} from "./_support/drivers/telegram.ts";
import { expectOk } from "./_support/platform_rig.ts";
import { sharedBaton } from "./_support/shared_baton.ts";
import type { TestWorker } from "./_support/worker.ts";
import { encodeBase64 } from "../lib/runtime/mod.ts";
import type { FakeModelRequest } from "../lib/testing/fake_model.ts";

// MEDIA bound, a small cap so that an oversize file is cheap.
const baton = sharedBaton({ media: true, vars: { ...driver.vars(), MEDIA_MAX_BYTES: "4000" } });

const _bytes = (b64: string) => Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
/** A 1×1 PNG. */
const PNG = _bytes(
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==",
);
/** A 1×1 GIF. */
const GIF = _bytes("R0lGODlhAQABAIAAAP///wAAACH5BAEAAAAALAAAAAABAAEAAAICRAEAOw==");
/** Bytes that start as a JPEG does (the type is read from them). */
const JPEG = Uint8Array.from([0xff, 0xd8, 0xff, 0xe0, 0, 16, 74, 70, 73, 70, 0, 1, 1, 0, 0, 1]);
/** An OGG page header: a voice note as Telegram stores one. */
const OGG = Uint8Array.from([..."OggS"].map((c) => c.charCodeAt(0)).concat([0, 2, 0, 0, 0, 0]));

const dataUrl = (type: string, bytes: Uint8Array) => `data:${type};base64,${encodeBase64(bytes)}`;

let _chats = 0;
let _ids = 0;
/** A private chat of its own for a test. */
const newChat = () => String(8_100_000 + ++_chats);
const nextId = () => String(++_ids);

/** A photo as Telegram lists it: sizes smallest first, the largest (`fileId`) last. */
function photo(fileId: string, size: number) {
  return [
    { file_id: `${fileId}-thumb`, file_unique_id: `${fileId}-t`, width: 90, height: 90 },
    { file_id: fileId, file_unique_id: `${fileId}-u`, width: 800, height: 800, file_size: size },
  ];
}

/** POSTs an update as Telegram does, signed by the driver; asserts the acknowledgement. */
async function post(worker: TestWorker, update: unknown): Promise<void> {
  const body = JSON.stringify(update);
  const headers = await driver.sign(body, driver.credentials);
  await expectOk(await worker.fetch(driver.path, { method: "POST", headers, body }));
}

/** The image URLs the model was sent in `request`, in order. */
function imageUrls(request: FakeModelRequest): string[] {
  // deno-lint-ignore no-explicit-any
  return request.body.messages.flatMap((m: any) =>
    Array.isArray(m.content)
      // deno-lint-ignore no-explicit-any
      ? m.content.filter((p: any) => p.type === "image_url").map((p: any) => p.image_url.url)
      : []
  );
}

/** The text of the last user message the model was sent. */
function lastUserText(request: FakeModelRequest): string {
  // deno-lint-ignore no-explicit-any
  const users = request.body.messages.filter((m: any) => m.role === "user");
  const content = users.at(-1)?.content;
  // deno-lint-ignore no-explicit-any
  return typeof content === "string" ? content : content.map((p: any) => p.text ?? "").join("");
}

baton.test(
  "POST /webhooks/telegram: a photo without a caption is a turn, the model sent the largest size's exact bytes, fetched with the bot's token",
  async (worker, fake, telegram) => {
    const chat = newChat();
    telegram.serveTelegramFile(TOKEN, "ph-1", { bytes: PNG });
    fake.script(() => ({ kind: "text", text: "a single pixel" }));
    await post(worker, telegramMediaUpdate({ chat, id: nextId() }, { photo: photo("ph-1", 70) }));
    await telegram.waitForCalls(1);
    assertStrictEquals(telegram.calls[0].body.text, "a single pixel");
    assertStrictEquals(fake.requests.length, 1);
    assertEquals(imageUrls(fake.requests[0]), [dataUrl("image/png", PNG)]);
    assert(
      telegram.fileCalls.some((c) => c.path === `/bot${TOKEN}/getFile`),
      "getFile asked with the token",
    );
    // The transcript keeps a reference; a second turn downloads nothing again.
    await settled(worker, `telegram:${chat}`);
    const downloads = telegram.fileCalls.length;
    fake.script(() => ({ kind: "text", text: "still a pixel" }));
    await post(worker, driver.shape({ chat, text: "and now?", id: nextId() }));
    await telegram.waitForCalls(2);
    assertEquals(imageUrls(fake.requests[1]), [dataUrl("image/png", PNG)]);
    assertStrictEquals(telegram.fileCalls.length, downloads, "nothing downloaded again");
  },
);

baton.test(
  "POST /webhooks/telegram: a captioned photo reaches the model as the caption and the image",
  async (worker, fake, telegram) => {
    const chat = newChat();
    telegram.serveTelegramFile(TOKEN, "ph-2", { bytes: GIF });
    await post(
      worker,
      telegramMediaUpdate({ chat, id: nextId(), text: "what colour?" }, {
        photo: photo("ph-2", GIF.length),
      }),
    );
    await telegram.waitForCalls(1);
    assertStrictEquals(telegram.calls[0].body.text, "what colour?");
    assertEquals(imageUrls(fake.requests[0]), [dataUrl("image/gif", GIF)]);
    assertStrictEquals(lastUserText(fake.requests[0]), "what colour?");
  },
);

baton.test(
  "POST /webhooks/telegram: an album of three photos is one turn with three images",
  async (worker, fake, telegram) => {
    const chat = newChat();
    const files = [["al-1", PNG], ["al-2", GIF], ["al-3", JPEG]] as const;
    for (const [id, bytes] of files) telegram.serveTelegramFile(TOKEN, id, { bytes });
    fake.script(() => ({ kind: "text", text: "three pictures" }));
    for (const [i, [id, bytes]] of files.entries()) {
      const caption = i === 0 ? { text: "our trip" } : {};
      await post(
        worker,
        telegramMediaUpdate({ chat, id: nextId(), ...caption }, {
          photo: photo(id, bytes.length),
        }, "album-77"),
      );
    }
    await telegram.waitForCalls(1);
    await settled(worker, `telegram:${chat}`);
    assertStrictEquals(fake.requests.length, 1, "one turn");
    assertEquals(imageUrls(fake.requests[0]), [
      dataUrl("image/png", PNG),
      dataUrl("image/gif", GIF),
      dataUrl("image/jpeg", JPEG),
    ]);
    assertStrictEquals(lastUserText(fake.requests[0]), "our trip");
    assertStrictEquals(telegram.calls.length, 1, "one reply");
  },
);

baton.test(
  "POST /webhooks/telegram: a voice note is never silence — one reply, no empty turn for the model",
  async (worker, fake, telegram) => {
    const chat = newChat();
    telegram.serveTelegramFile(TOKEN, "vo-1", { bytes: OGG });
    await post(
      worker,
      telegramMediaUpdate({ chat, id: nextId() }, {
        voice: { file_id: "vo-1", file_unique_id: "vo-1u", duration: 3, mime_type: "audio/ogg" },
      }),
    );
    await telegram.waitForCalls(1);
    await settled(worker, `telegram:${chat}`);
    assertStrictEquals(telegram.calls.length, 1);
    assert(/voice note/.test(telegram.calls[0].body.text), telegram.calls[0].body.text);
    // Either read (a transcript the model answers) or a short notice: never an empty user turn.
    for (const request of fake.requests) assert(lastUserText(request).trim() !== "");
  },
);

baton.test(
  "POST /webhooks/telegram: a document over MEDIA_MAX_BYTES gets one short reply and no model call",
  async (worker, fake, telegram) => {
    const chat = newChat();
    telegram.serveTelegramFile(TOKEN, "doc-big", { bytes: new Uint8Array(5000) });
    await post(
      worker,
      telegramMediaUpdate({ chat, id: nextId() }, {
        document: {
          file_id: "doc-big",
          file_unique_id: "doc-big-u",
          file_name: "report.pdf",
          mime_type: "application/pdf",
          file_size: 5000,
        },
      }),
    );
    await telegram.waitForCalls(1);
    await settled(worker, `telegram:${chat}`);
    assertStrictEquals(telegram.calls.length, 1);
    const text: string = telegram.calls[0].body.text;
    assert(/report\.pdf/.test(text) && /MEDIA_MAX_BYTES|limit/.test(text), text);
    assertStrictEquals(fake.requests.length, 0, "no model call");
  },
);

baton.test(
  "POST /webhooks/telegram: a photo whose download answers 500 gets one short reply, and the next message is answered",
  async (worker, fake, telegram) => {
    const chat = newChat();
    telegram.serveTelegramFile(TOKEN, "ph-500", { bytes: PNG, status: 500 });
    await post(worker, telegramMediaUpdate({ chat, id: nextId() }, { photo: photo("ph-500", 70) }));
    await telegram.waitForCalls(1);
    await settled(worker, `telegram:${chat}`);
    const notice: string = telegram.calls[0].body.text;
    assert(/couldn't read the photo/i.test(notice), notice);
    assert(!notice.includes(TOKEN.split(":")[1]), "no token in the notice");
    assertStrictEquals(fake.requests.length, 0, "no model call");
    await post(worker, driver.shape({ chat, text: "hello again", id: nextId() }));
    await telegram.waitForCalls(2);
    assertStrictEquals(telegram.calls[1].body.text, "hello again");
    assertStrictEquals(telegram.calls.length, 2);
    const state = await sessionState(worker, `telegram:${chat}`);
    assert(state.messages.length >= 3, "the failed photo is recorded in the conversation");
  },
);

baton.test(
  "POST /webhooks/telegram: a redelivered photo update adds nothing twice",
  async (worker, fake, telegram) => {
    const chat = newChat();
    telegram.serveTelegramFile(TOKEN, "ph-re", { bytes: PNG });
    fake.script(() => ({ kind: "text", text: "seen once" }));
    const update = telegramMediaUpdate({ chat, id: nextId(), text: "look" }, {
      photo: photo("ph-re", 70),
    });
    await post(worker, update);
    await post(worker, update);
    await telegram.waitForCalls(1);
    await settled(worker, `telegram:${chat}`);
    await post(worker, update);
    await settled(worker, `telegram:${chat}`);
    assertStrictEquals(fake.requests.length, 1);
    assertStrictEquals(telegram.calls.length, 1);
    assertStrictEquals(
      telegram.fileCalls.filter((c) => c.path.startsWith("/file/")).length,
      1,
      "downloaded once",
    );
  },
);

baton.test(
  "POST /webhooks/generic: a base64 attachment is stored and reaches the model as an image; one over MEDIA_MAX_BYTES is a 400 naming it, no turn",
  async (worker, fake) => {
    const ok = await sendWebhook(worker, {
      session: "gen-media-1",
      attachments: [{ name: "dot.png", data: encodeBase64(PNG) }],
    }, { id: "msg_gen_media_1" });
    assertStrictEquals(ok.status, 200);
    assertEquals(imageUrls(fake.requests[0]), [dataUrl("image/png", PNG)]);
    const big = await sendWebhook(worker, {
      session: "gen-media-2",
      text: "read this",
      attachments: [{ name: "big.txt", data: encodeBase64(new Uint8Array(5000).fill(65)) }],
    }, { id: "msg_gen_media_2" });
    assertStrictEquals(big.status, 400);
    const body = await json(big);
    assert(
      /attachments\[0\]/.test(body.error.message) && /MEDIA_MAX_BYTES/.test(body.error.message),
    );
    assertStrictEquals(fake.requests.length, 1, "no turn for the refused delivery");
  },
);

baton.done();

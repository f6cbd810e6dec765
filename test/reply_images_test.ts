// Images in the model's own reply (OpenRouter `message.images`, Chat Completions `image_url` content parts) sent as native media: Telegram sendPhoto once (a redelivered update sends nothing again), the OpenAI APIs' file links; Deno + Miniflare.
import OpenAI from "openai";
import { assert, assertEquals, assertStrictEquals } from "@std/assert";
import { API_KEY, settled, until } from "./_support/clients.ts";
import { telegramDriver as driver } from "./_support/drivers/telegram.ts";
import type { FakePlatform, PlatformCall, UploadedFile } from "./_support/fake_platform.ts";
import { CHART_PNG_BASE64 } from "./_support/files_fixtures.ts";
import { expectOk } from "./_support/platform_rig.ts";
import { sharedBaton } from "./_support/shared_baton.ts";
import type { TestWorker } from "./_support/worker.ts";

const PUBLIC_URL = "https://baton.example.com";
const vars = {
  ...driver.vars(),
  MEDIA_URL_SECRET: "media-link-secret-for-reply-images",
  PUBLIC_URL,
};
const baton = sharedBaton({ entry: "test/_support/files_worker.ts", media: true, vars });

const PNG = Uint8Array.from(atob(CHART_PNG_BASE64), (c) => c.charCodeAt(0));
const PNG_DATA_URL = `data:image/png;base64,${CHART_PNG_BASE64}`;

let _chats = 0;
/** A private chat of this file's own. */
const newChat = () => String(8_700_000 + ++_chats);

/** POSTs a text message to the bot as Telegram does; asserts the ack; returns a redelivery of the same update. */
async function say(
  worker: TestWorker,
  chat: string,
  text: string,
  id: string,
): Promise<() => Promise<void>> {
  const body = JSON.stringify(driver.shape({ chat, text, id }));
  const headers = await driver.sign(body, driver.credentials);
  const post = async () =>
    await expectOk(await worker.fetch(driver.path, { method: "POST", headers, body }));
  await post();
  return post;
}

/** The reply calls to `chat` (texts and uploads), in order. */
function sendsTo(platform: FakePlatform, chat: string): PlatformCall[] {
  return platform.calls.filter((c) =>
    /\/(sendMessage|sendPhoto|sendDocument)$/.test(c.path) && String(c.body?.chat_id) === chat
  );
}

/** The `openai` client as users configure it, on this file's Worker. */
function client(worker: TestWorker, session: string): OpenAI {
  return new OpenAI({
    baseURL: new URL("v1", worker.url).href,
    apiKey: API_KEY,
    timeout: 20_000,
    defaultHeaders: { "x-session-id": session },
  });
}

/** Fetches a signed link (made under PUBLIC_URL) from the Worker: its bytes. */
async function fetchLink(worker: TestWorker, url: string): Promise<Uint8Array> {
  assert(url.startsWith(`${PUBLIC_URL}/media/`), url);
  const link = new URL(url);
  const res = await worker.fetch(link.pathname + link.search);
  assertStrictEquals(res.status, 200, url);
  return new Uint8Array(await res.arrayBuffer());
}

baton.test(
  "a model reply's image (message.images) goes to Telegram as one sendPhoto with its bytes, then the text; a redelivered update sends neither again",
  async (worker, fake, telegram) => {
    const chat = newChat();
    fake.script(() => ({ kind: "text", text: "Here is a cat.", images: [PNG_DATA_URL] }));
    const redeliver = await say(worker, chat, "draw a cat", "31");
    await until(() => sendsTo(telegram, chat).length >= 2, "the photo and the text");
    await settled(worker, `telegram:${chat}`);
    const sends = sendsTo(telegram, chat);
    assertEquals(sends.map((c) => c.path.split("/").pop()), ["sendPhoto", "sendMessage"]);
    const photo = sends[0].body.photo as UploadedFile;
    assertEquals(photo.bytes, PNG);
    assertStrictEquals(photo.type, "image/png");
    assertStrictEquals(photo.filename, "image-1.png");
    // The text is the reply's content alone: no data URL, no image part.
    assertStrictEquals(sends[1].body.text, "Here is a cat.");

    await redeliver(); // Telegram sends the same update again
    await settled(worker, `telegram:${chat}`);
    assertEquals(sendsTo(telegram, chat).length, 2);
    assertEquals(fake.requests.length, 1);
  },
);

baton.test(
  "a model reply of image_url content parts only: one sendPhoto per image and no empty text message",
  async (worker, fake, telegram) => {
    const chat = newChat();
    fake.script(() => ({
      kind: "text",
      text: "",
      images: [PNG_DATA_URL],
      imagesIn: "content",
    }));
    await say(worker, chat, "just the picture", "32");
    await until(() => sendsTo(telegram, chat).length >= 1, "the photo");
    await settled(worker, `telegram:${chat}`);
    const sends = sendsTo(telegram, chat);
    assertEquals(sends.map((c) => c.path.split("/").pop()), ["sendPhoto"]);
    assertEquals((sends[0].body.photo as UploadedFile).bytes, PNG);
  },
);

baton.test(
  "POST /v1/chat/completions and /v1/responses: a model reply's image is a signed file link, the content its text only",
  async (worker, fake) => {
    fake.script(() => ({
      kind: "text",
      text: "A cat, as asked.",
      images: [PNG_DATA_URL],
      imagesIn: "content",
    }));
    const completion = await client(worker, "reply-images-chat").chat.completions.create({
      model: "gpt-4o-mini",
      messages: [{ role: "user", content: "draw a cat" }],
    });
    const message = completion.choices[0].message;
    assertStrictEquals(message.content, "A cat, as asked.");
    // deno-lint-ignore no-explicit-any
    const files = (message as any).files;
    assert(Array.isArray(files), `no files on the message: ${JSON.stringify(message)}`);
    const { url, ...rest } = files[0];
    assertEquals(rest, { name: "image-1.png", type: "image/png", size: PNG.length });
    assertEquals(await fetchLink(worker, url), PNG);

    const response = await client(worker, "reply-images-responses").responses.create({
      model: "gpt-4o-mini",
      input: "draw a cat",
    });
    assertStrictEquals(response.output_text, "A cat, as asked.");
    // deno-lint-ignore no-explicit-any
    const items = (response.output as any[]).filter((item) => item.type === "output_file");
    assertEquals(items.map((f) => [f.filename, f.mime_type]), [["image-1.png", "image/png"]]);
    assertEquals(await fetchLink(worker, items[0].file_url), PNG);
  },
);

baton.done();

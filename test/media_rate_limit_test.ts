// A platform's 429 on a media look-up or download is waited out (Retry-After, or Telegram's body's parameters.retry_after) inside the turn: the photo reaches the model, never a "could not download" notice; a wait over the cap is reported at once; Deno + Miniflare.
import { assert, assertEquals, assertMatch, assertStrictEquals } from "@std/assert";
import { settled } from "./_support/clients.ts";
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

// MEDIA bound; the default download deadline (30 s) leaves room for a 1 s wait.
const baton = sharedBaton({ media: true, vars: { ...driver.vars() } });

/** A 1×1 PNG. */
const PNG = Uint8Array.from(
  atob(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==",
  ),
  (c) => c.charCodeAt(0),
);

let _ids = 0;
const nextId = () => String(++_ids);

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

/** A photo of one size, `fileId`, as Telegram lists it. */
const photo = (fileId: string) => [
  { file_id: fileId, file_unique_id: `${fileId}-u`, width: 1, height: 1, file_size: PNG.length },
];

for (
  const [where, chat, rateLimit] of [
    ["download (Retry-After: 1)", "8300001", { times: 1, retryAfter: "1" }],
    ["getFile look-up (no Retry-After)", "8300002", { times: 1, at: "lookup" }],
    [
      "getFile look-up (its wait in the body's parameters.retry_after: 1)",
      "8300003",
      { times: 1, at: "lookup", bodyRetryAfter: 1 },
    ],
  ] as const
) {
  baton.test(
    `POST /webhooks/telegram: a photo whose ${where} answers 429 once is waited out; the model is sent its bytes`,
    async (worker, fake, telegram) => {
      const id = `rl-${chat}`;
      telegram.serveTelegramFile(TOKEN, id, { bytes: PNG, rateLimit: { ...rateLimit } });
      fake.script(() => ({ kind: "text", text: "a single pixel" }));
      await post(worker, telegramMediaUpdate({ chat, id: nextId() }, { photo: photo(id) }));
      await telegram.waitForCalls(1);
      await settled(worker, `telegram:${chat}`);
      assertStrictEquals(telegram.calls[0].body.text, "a single pixel");
      assertStrictEquals(telegram.calls.length, 1, "one reply, no notice");
      assertStrictEquals(fake.requests.length, 1);
      assertEquals(imageUrls(fake.requests[0]), [`data:image/png;base64,${encodeBase64(PNG)}`]);
      const asked = telegram.fileCalls.map((c) => c.path.startsWith("/file/") ? "file" : "getFile");
      assertEquals(
        asked,
        rateLimit.at === "lookup" ? ["getFile", "getFile", "file"] : ["getFile", "file", "file"],
      );
    },
  );
}

baton.test(
  "POST /webhooks/telegram: a getFile 429 whose body asks for a wait over the cap (retry_after 30) is reported at once, not waited out",
  async (worker, fake, telegram) => {
    const chat = "8300004";
    const id = `rl-${chat}`;
    // No Retry-After header: Telegram states the wait in the body only. Over the 10 s cap, so no
    // second getFile; a 1 s guess would ask again within the 30 s and find the file.
    const rateLimit = { times: 1, at: "lookup", bodyRetryAfter: 30 } as const;
    telegram.serveTelegramFile(TOKEN, id, { bytes: PNG, rateLimit: { ...rateLimit } });
    await post(worker, telegramMediaUpdate({ chat, id: nextId() }, { photo: photo(id) }));
    await telegram.waitForCalls(1);
    await settled(worker, `telegram:${chat}`);
    const asked = telegram.fileCalls.map((c) => c.path.startsWith("/file/") ? "file" : "getFile");
    assertEquals(asked, ["getFile"], "not asked again");
    const notice = String(telegram.calls[0].body.text);
    assertMatch(notice, /couldn't read the photo/i);
    assertMatch(notice, /Telegram getFile answered 429: Too Many Requests: retry after 30\b/);
    assert(!notice.includes(TOKEN.slice(TOKEN.indexOf(":") + 1)), "no token in the notice");
    assertStrictEquals(fake.requests.length, 0, "no model call");
  },
);

baton.done();

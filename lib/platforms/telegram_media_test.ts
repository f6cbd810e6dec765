// Unit tests of Telegram's media: announced from a message's fields, fetched through getFile and the file download with the bot token (telegram_media.ts); Deno.
import { assert, assertEquals } from "@std/assert";
import { withFetch } from "./_fetch_stub.ts";
import { fetchTelegramMedia, telegramMedia } from "./telegram_media.ts";

const TOKEN = "123:secret-part_x";
const ENV = { TELEGRAM_BOT_TOKEN: TOKEN, TELEGRAM_API_ROOT: "https://tg.test" };
const PHOTO = { platform: "telegram", file: "ph", kind: "photo" as const };
const options = () => ({ signal: new AbortController().signal, maxBytes: 100 });

Deno.test("telegramMedia() announces a sticker as an image, an animated one as unread, and names the album", () => {
  assertEquals(
    telegramMedia({ sticker: { file_id: "s1" }, media_group_id: "g1" }),
    { media: [{ platform: "telegram", file: "s1", kind: "sticker" }], album: "g1" },
  );
  assertEquals(
    telegramMedia({ sticker: { file_id: "s2", is_animated: true } }).media[0].kind,
    "animated_sticker",
  );
  // A GIF animation carries its document too: one medium.
  assertEquals(
    telegramMedia({ animation: { file_id: "a" }, document: { file_id: "a" } }).media.length,
    1,
  );
  assertEquals(telegramMedia({ text: "hi", media_group_id: "g" }), { media: [] });
});

Deno.test("fetchTelegramMedia() asks getFile, then downloads the file_path with the token in the path", async () => {
  await withFetch(
    (call) =>
      call.url.endsWith("/getFile")
        ? Response.json({ ok: true, result: { file_path: "photos/a b.jpg", file_size: 3 } })
        : new Response(new Uint8Array([1, 2, 3])),
    async (calls) => {
      const got = await fetchTelegramMedia(PHOTO, ENV, options());
      assertEquals(got, { ok: true, bytes: new Uint8Array([1, 2, 3]) });
      assertEquals(calls.map((c) => c.url), [
        `https://tg.test/bot${TOKEN}/getFile`,
        `https://tg.test/file/bot${TOKEN}/photos/a%20b.jpg`,
      ]);
      assertEquals(calls[0].body, { file_id: "ph" });
    },
  );
});

Deno.test("fetchTelegramMedia() refuses a file over maxBytes by getFile's size, downloading nothing", async () => {
  await withFetch(
    () => Response.json({ ok: true, result: { file_path: "p", file_size: 101 } }),
    async (calls) => {
      const got = await fetchTelegramMedia(PHOTO, ENV, options());
      assert(!got.ok && /MEDIA_MAX_BYTES/.test(got.why));
      assertEquals(calls.length, 1);
    },
  );
});

Deno.test("fetchTelegramMedia() words a failed getFile or download without the token", async () => {
  await withFetch(
    (call) =>
      call.url.endsWith("/getFile")
        ? Response.json({ ok: true, result: { file_path: `x/${TOKEN}` } })
        : new Response("no", { status: 500 }),
    async () => {
      const got = await fetchTelegramMedia(PHOTO, ENV, options());
      assert(!got.ok && /500/.test(got.why), JSON.stringify(got));
      assert(!got.ok && !got.why.includes("secret-part_x"));
    },
  );
  await withFetch(() => Promise.reject(new Error(`boom https://tg.test/bot${TOKEN}`)), async () => {
    const got = await fetchTelegramMedia(PHOTO, ENV, options());
    assert(!got.ok && !got.why.includes("secret-part_x"), JSON.stringify(got));
  });
});

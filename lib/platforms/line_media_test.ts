// Unit tests of LINE's media: announced from image, video, audio and file messages (1:1 chats only), fetched from the content API's own host with the channel token (line_media.ts, line.ts); Deno.
import { assert, assertEquals } from "@std/assert";
import type { RawRequest } from "../chat/mod.ts";
import { withFetch } from "./_fetch_stub.ts";
import { lineAdapter } from "./line.ts";
import { fetchLineMedia, lineMedia } from "./line_media.ts";

const TOKEN = "line-channel-access-token-value";
const ENV = { LINE_CHANNEL_ACCESS_TOKEN: TOKEN, LINE_DATA_API_ROOT: "https://data.line.test/" };
const options = () => ({ signal: new AbortController().signal, maxBytes: 100 });
const USER = "U4af4980629d6f5ad8b9f0a8b3a5cf1e2";
const GROUP = "Ca56f94637c3f7b6c0e3b9d1f0e0a0b0c";

function event(message: unknown, source: unknown = { type: "user", userId: USER }) {
  return {
    type: "message",
    mode: "active",
    timestamp: Date.now(),
    webhookEventId: `01H${crypto.randomUUID().slice(0, 20)}`,
    source,
    message,
  };
}

function raw(events: unknown[]): RawRequest {
  return {
    headers: new Headers({ "content-type": "application/json" }),
    body: new TextEncoder().encode(JSON.stringify({ destination: "Ubot", events })),
    url: "https://baton.test/webhooks/line",
    nowSeconds: Math.floor(Date.now() / 1000),
  };
}

Deno.test("lineMedia() announces images, videos, voice and files; an image set is an album; stickers are not media", () => {
  assertEquals(
    lineMedia({ type: "image", id: "1", contentProvider: { type: "line" }, imageSet: { id: "s" } }),
    { media: [{ platform: "line", file: "1", kind: "photo" }], album: "line:s" },
  );
  assertEquals(lineMedia({ type: "audio", id: "2", duration: 2500 })?.media[0], {
    platform: "line",
    file: "2",
    kind: "voice",
    type: "audio/mp4",
    seconds: 2.5,
  });
  assertEquals(lineMedia({ type: "file", id: "3", fileName: "a.pdf", fileSize: 9 })?.media[0], {
    platform: "line",
    file: "3",
    kind: "document",
    name: "a.pdf",
    size: 9,
  });
  const external = { type: "external", originalContentUrl: "https://cdn.example/v.mp4" };
  assertEquals(
    lineMedia({ type: "video", id: "4", contentProvider: external })?.media[0].file,
    external.originalContentUrl,
  );
  assertEquals(lineMedia({ type: "sticker", id: "5", packageId: "1", stickerId: "1" }), null);
});

Deno.test("lineAdapter.parse() makes a 1:1 chat's image a turn without text, and leaves a group's media alone", () => {
  const image = { type: "image", id: "77", contentProvider: { type: "line" } };
  const one = lineAdapter.parse(raw([event(image)]), ENV);
  assert(one.kind === "message");
  assertEquals(one.message.text, "");
  assertEquals(one.message.media, [{ platform: "line", file: "77", kind: "photo" }]);
  const group = lineAdapter.parse(
    raw([event(image, { type: "group", groupId: GROUP, userId: USER })]),
    ENV,
  );
  assertEquals(group.kind, "respond");
});

Deno.test("fetchLineMedia() downloads from the data API's host with the channel token, and says a failure without it", async () => {
  await withFetch(
    (_, i) => i === 0 ? new Response(new Uint8Array([1, 2])) : new Response("x", { status: 404 }),
    async (calls) => {
      const item = { platform: "line", file: "77", kind: "photo" as const };
      assertEquals(await fetchLineMedia(item, ENV, options()), {
        ok: true,
        bytes: new Uint8Array([1, 2]),
      });
      assertEquals(calls[0].url, "https://data.line.test/v2/bot/message/77/content");
      assertEquals(calls[0].headers.get("authorization"), `Bearer ${TOKEN}`);
      const failed = await fetchLineMedia(item, ENV, options());
      assert(!failed.ok && /404/.test(failed.why) && !failed.why.includes(TOKEN));
    },
  );
});

Deno.test("fetchLineMedia() fetches an external provider's URL without the channel token", async () => {
  await withFetch(() => new Response(new Uint8Array([3])), async (calls) => {
    const item = { platform: "line", file: "https://cdn.example/a.jpg", kind: "photo" as const };
    assert((await fetchLineMedia(item, ENV, options())).ok);
    assertEquals(calls[0].headers.get("authorization"), null);
  });
});

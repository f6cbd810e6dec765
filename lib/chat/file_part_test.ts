// Tests of a file reply part through the reply channel (sendFilePart: native upload, link, note, gone, store down); Deno.
import { assertEquals, assertStrictEquals } from "@std/assert";
import * as z from "zod";
import { memoryMediaStore } from "../media/mod.ts";
import type { OutgoingFile, PlatformAdapter, ReplyTarget, SendResult } from "./platform.ts";
import { replyChannel } from "./reply_channel.ts";

const FILE = { id: "p/h1", type: "image/png", size: 3, name: "chart.png" };
const target = { platform: "fake" };

/** An adapter recording its sends; `upload` gives it a `sendFile`. */
function adapter(upload: boolean) {
  const texts: string[] = [];
  const files: { file: OutgoingFile; caption: string }[] = [];
  const ok = (): Promise<SendResult> => Promise.resolve({ ok: true });
  const a: PlatformAdapter = {
    name: "fake",
    requiredEnv: [],
    maxMessageChars: 1000,
    asyncDelivery: false,
    replyTarget: z.object({ platform: z.literal("fake") }) as z.ZodType<ReplyTarget>,
    verify: () => Promise.resolve(null),
    parse: () => ({ kind: "respond", status: 200, body: {} }),
    send: (_t, text) => (texts.push(text), ok()),
    ...(upload ? { sendFile: (_t, file, caption) => (files.push({ file, caption }), ok()) } : {}),
  };
  return { a, texts, files };
}

Deno.test("replyChannel() sends a file part's stored bytes to the adapter's sendFile, with its link", async () => {
  const store = memoryMediaStore();
  await store.put(FILE.id, new Uint8Array([1, 2, 3]), FILE.type);
  const { a, texts, files } = adapter(true);
  const channel = replyChannel([a], {}, {
    store,
    link: (f) => Promise.resolve(`https://b.example/media/${f.id}`),
  });
  const result = await channel.send(target, "", { index: 0, count: 2, file: FILE });
  assertStrictEquals(result.ok, true);
  assertEquals(texts, []);
  assertEquals(files[0].file.bytes, new Uint8Array([1, 2, 3]));
  assertStrictEquals(files[0].file.url, "https://b.example/media/p/h1");
  assertStrictEquals(files[0].file.name, "chart.png");
});

Deno.test("replyChannel() sends a file part as its link, or a note, where the adapter has no sendFile", async () => {
  const { a, texts } = adapter(false);
  const linked = replyChannel([a], {}, { link: () => Promise.resolve("https://b.example/m") });
  await linked.send(target, "", { index: 0, count: 1, file: FILE });
  const bare = replyChannel([a], {});
  await bare.send(target, "", { index: 0, count: 1, file: FILE });
  assertEquals(texts, [
    "📎 chart.png (image/png, 3 B): https://b.example/m",
    "📎 chart.png (image/png, 3 B) — files cannot be shown here",
  ]);
});

Deno.test("replyChannel() sends a note for a file no longer stored, and retries a store that cannot be read", async () => {
  const store = memoryMediaStore();
  const { a, texts, files } = adapter(true);
  const channel = replyChannel([a], {}, { store });
  assertStrictEquals((await channel.send(target, "", { index: 0, count: 1, file: FILE })).ok, true);
  assertEquals(texts, ["📎 chart.png (image/png, 3 B) — it is no longer stored"]);
  store.failing = true;
  const down = await channel.send(target, "", { index: 0, count: 1, file: FILE });
  assertEquals(down.ok ? null : [down.retryable, down.message], [
    true,
    "the media store could not be read",
  ]);
  assertEquals(files, []);
});

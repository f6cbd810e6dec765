// Tests of a reply's own images (replyImages, replyWithImages, runTurn's final message, openAIChatModel against the fake model); Deno.
import { assert, assertEquals, assertStrictEquals } from "@std/assert";
import { type ChatModel, type ModelReply, openAIChatModel } from "./chat_model.ts";
import { IMAGES_NOT_SENT, replyImages, replyWithImages } from "./reply_images.ts";
import { runTurn } from "./run_turn.ts";
import { type AttachedFile, type ToolFileStore, turnFiles } from "./tool_files.ts";
import { ToolRegistry } from "./tools.ts";
import { startFakeModel } from "../testing/fake_model.ts";

const signal = new AbortController().signal;
const PNG_URL = "data:image/png;base64,iVBORw0KGgo=";
const part = (url: string) => ({ type: "image_url", image_url: { url } });

/** A store that keeps every file as `{ id: name, type: image/png, size: 1 }`, told what it got. */
function keepingStore(got: unknown[] = []): ToolFileStore {
  return (files) => {
    got.push(...files);
    const stored = files.map((f): AttachedFile => ({ id: f.name, type: "image/png", size: 1 }));
    return Promise.resolve({ stored, refused: [] });
  };
}

Deno.test("replyImages() takes image_url content parts and message.images out of the text; markdown stays text", () => {
  const markdown = "see ![a cat](https://example.com/cat.png)";
  assertEquals(replyImages({ content: markdown }), { text: markdown, images: [] });
  assertEquals(replyImages({ content: null }), { text: "", images: [] });
  const got = replyImages({
    content: [
      { type: "text", text: "one " },
      part(PNG_URL),
      { type: "text", text: "two" },
      { type: "image_url", image_url: "https://example.com/x?token=1" },
      { type: "input_audio", input_audio: {} },
    ],
    images: [part("data:image/jpeg;base64,/9j/"), part(PNG_URL), { type: "other" }],
  });
  assertStrictEquals(got.text, "one two");
  assertEquals(got.images, [
    { name: "image-1.png", data: PNG_URL },
    { name: "image-2", url: "https://example.com/x?token=1" },
    { name: "image-3.jpg", data: "data:image/jpeg;base64,/9j/" },
  ]);
});

Deno.test("replyImages() reads a stream's gathered delta.images instead of the message's last ones", () => {
  const got = replyImages(
    { content: "hi", images: [part("https://b")] },
    [part("https://a"), part("https://b")],
  );
  assertEquals(got.images.map((f) => f.url), ["https://a", "https://b"]);
});

Deno.test("replyWithImages() keeps stored images as files; a refused one is named after the text, never silent", async () => {
  const none = await replyWithImages("hi", undefined, keepingStore(), signal);
  assertEquals(none, { content: "hi", files: [] });
  const images = [{ name: "image-1.png", data: PNG_URL }];
  const kept = await replyWithImages("hi", images, keepingStore(), signal);
  assertEquals(kept, { content: "hi", files: [{ id: "image-1.png", type: "image/png", size: 1 }] });
  const refusing: ToolFileStore = (files) =>
    Promise.resolve({
      stored: [],
      refused: files.map((f) => `${f.name}: over MEDIA_MAX_BYTES (9)`),
    });
  const refused = await replyWithImages("hi", images, refusing, signal);
  assertStrictEquals(
    refused.content,
    `hi\n\n${IMAGES_NOT_SENT}image-1.png: over MEDIA_MAX_BYTES (9).)`,
  );
  assertEquals(refused.files, []);
  const alone = await replyWithImages("", images, undefined, signal);
  assert(alone.content.startsWith(IMAGES_NOT_SENT), alone.content);
});

Deno.test("runTurn() stores the final reply's images through toolFiles onto its assistant message; the next call never sees them", async () => {
  const replies: ModelReply[] = [
    {
      content: "a cat",
      images: [{ name: "image-1.png", data: PNG_URL }],
      toolCalls: [],
      usage: { prompt_tokens: 1, completion_tokens: 1 },
    },
  ];
  const model: ChatModel = {
    name: "images",
    complete: () => Promise.resolve(replies.shift()!),
  };
  const got: unknown[] = [];
  const base = { model, tools: new ToolRegistry(), system: [], maxSteps: 4, signal };
  const result = await runTurn({
    ...base,
    history: [],
    input: "draw",
    toolFiles: keepingStore(got),
  });
  assertStrictEquals(result.reply, "a cat");
  assertEquals(got, [{ name: "image-1.png", data: PNG_URL }]);
  assertEquals(result.messages.at(-1), {
    role: "assistant",
    content: "a cat",
    files: [{ id: "image-1.png", type: "image/png", size: 1 }],
  });
  assertEquals(turnFiles(result.messages).map((f) => f.id), ["image-1.png"]);

  const seen: unknown[] = [];
  const next: ChatModel = {
    name: "next",
    complete: (request) => {
      seen.push(...request.messages);
      return Promise.resolve({
        content: "ok",
        toolCalls: [],
        usage: { prompt_tokens: 1, completion_tokens: 1 },
      });
    },
  };
  await runTurn({ ...base, model: next, history: result.messages, input: "again" });
  assert(!JSON.stringify(seen).includes("files"), JSON.stringify(seen));
});

Deno.test("openAIChatModel() reads a reply's images from content parts, message.images and a stream's delta.images", async () => {
  const fake = await startFakeModel();
  try {
    const model = openAIChatModel({
      baseURL: fake.url,
      apiKey: "k",
      model: "m",
      maxRetries: 0,
      timeoutMs: 5_000,
    });
    const request = { messages: [{ role: "user" as const, content: "draw" }], tools: [], signal };
    const urls = [PNG_URL, "https://example.com/b.png"];
    for (const imagesIn of ["content", "images"] as const) {
      fake.script(() => ({ kind: "text", text: "two", images: urls, imagesIn }));
      const reply = await model.complete(request);
      assertStrictEquals(reply.content, "two", imagesIn);
      assertEquals(reply.images?.map((f) => f.data ?? f.url), urls, imagesIn);
    }
    // Streamed, each image in a chunk of its own: every one is kept, not only the last chunk's.
    fake.script(() => ({ kind: "text", text: "streamed", images: urls }));
    let deltas = "";
    const streamed = await model.complete({ ...request, onDelta: (d) => deltas += d });
    assertStrictEquals(streamed.content, "streamed");
    assertStrictEquals(deltas, "streamed");
    assertEquals(streamed.images?.map((f) => f.data ?? f.url), urls);
  } finally {
    await fake.close();
  }
});

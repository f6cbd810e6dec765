// Images over the OpenAI APIs end to end: data URLs stored in R2 (MEDIA), the model sent their exact bytes as image parts, refusals as 400s, a lost image never poisoning a session; Deno + Miniflare.
import OpenAI from "openai";
import { assert, assertEquals, assertStrictEquals } from "@std/assert";
import { API_KEY, json, postJson } from "./_support/clients.ts";
import { sharedBaton } from "./_support/shared_baton.ts";
import type { TestWorker } from "./_support/worker.ts";
import { encodeBase64 } from "../lib/runtime/mod.ts";
import { mediaPrefix } from "../lib/media/mod.ts";
import type { FakeModelRequest } from "../lib/testing/fake_model.ts";

// MEDIA bound, images small enough to test the cap cheaply.
const baton = sharedBaton({ media: true, vars: { MEDIA_MAX_BYTES: "4000" }, label: "MEDIA" });
// The same deployment without the MEDIA binding.
const bare = sharedBaton({ label: "no MEDIA" });

/** A 1×1 PNG. */
const PNG = Uint8Array.from(
  atob(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==",
  ),
  (c) => c.charCodeAt(0),
);
/** A 1×1 GIF. */
const GIF = Uint8Array.from(
  atob("R0lGODlhAQABAIAAAP///wAAACH5BAEAAAAALAAAAAABAAEAAAICRAEAOw=="),
  (c) => c.charCodeAt(0),
);

const dataUrl = (type: string, bytes: Uint8Array) => `data:${type};base64,${encodeBase64(bytes)}`;

function client(worker: TestWorker, session?: string): OpenAI {
  return new OpenAI({
    baseURL: new URL("v1", worker.url).href,
    apiKey: API_KEY,
    timeout: 20_000,
    maxRetries: 0,
    ...(session ? { defaultHeaders: { "x-session-id": session } } : {}),
  });
}

/** The image URLs of every message the model was sent in `request`, in order. */
function imageUrls(request: FakeModelRequest): string[] {
  // deno-lint-ignore no-explicit-any
  return request.body.messages.flatMap((m: any) =>
    Array.isArray(m.content)
      // deno-lint-ignore no-explicit-any
      ? m.content.filter((p: any) => p.type === "image_url").map((p: any) => p.image_url.url)
      : []
  );
}

/** The text the model was sent in `request`, all messages joined. */
function sentText(request: FakeModelRequest): string {
  // deno-lint-ignore no-explicit-any
  return request.body.messages.map((m: any) =>
    typeof m.content === "string"
      ? m.content
      // deno-lint-ignore no-explicit-any
      : (m.content ?? []).map((p: any) => p.text ?? "").join("")
  ).join("\n");
}

baton.test(
  "POST /v1/chat/completions: an image_url data URL reaches the model as an image part with its exact bytes, and the next turn still sees it",
  async (worker, fake) => {
    const openai = client(worker, "img-chat");
    const image = dataUrl("image/png", PNG);
    const first = [{
      role: "user" as const,
      content: [
        { type: "text" as const, text: "what is this?" },
        { type: "image_url" as const, image_url: { url: image } },
      ],
    }];
    const one = await openai.chat.completions.create({ model: "m", messages: first });
    assertStrictEquals(one.choices[0].message.content, "what is this?");
    assertEquals(imageUrls(fake.requests[0]), [image]);
    // The client sends its history again, image included, as the openai package does.
    await openai.chat.completions.create({
      model: "m",
      messages: [...first, { role: "assistant", content: "a pixel" }, {
        role: "user",
        content: "and its colour?",
      }],
    });
    assertEquals(imageUrls(fake.requests[1]), [image], "the second turn sees the image");
    assert(!JSON.stringify(fake.requests[1].body).includes('"media"'), "no media field sent");
    // The session keeps a reference: the bytes are in R2, not in its SQLite.
    const inspect = await worker.fetch("/v1/sessions/api%3Aimg-chat/inspect", {
      headers: { authorization: `Bearer ${API_KEY}` },
    });
    assertStrictEquals(inspect.status, 200);
    assert(!(await inspect.text()).includes(encodeBase64(PNG)), "no image bytes in the session");
  },
);

baton.test(
  "POST /v1/responses: an input_image data URL reaches the model as an image part, and a continuation still sees it",
  async (worker, fake) => {
    const openai = client(worker);
    const image = dataUrl("image/png", PNG);
    const created = await openai.responses.create({
      model: "m",
      input: [{
        role: "user",
        content: [
          { type: "input_text", text: "describe" },
          { type: "input_image", image_url: image, detail: "auto" },
        ],
      }],
    });
    assertStrictEquals(created.status, "completed");
    assertEquals(imageUrls(fake.requests[0]), [image]);
    await openai.responses.create({
      model: "m",
      previous_response_id: created.id,
      input: "and again?",
    });
    assertEquals(imageUrls(fake.requests[1]), [image], "the continuation sees the image");
  },
);

baton.test(
  "POST /v1/chat/completions: a GIF sent as data:image/png is typed GIF by its bytes",
  async (worker, fake) => {
    const res = await postJson(worker, "/v1/chat/completions", {
      model: "m",
      messages: [{
        role: "user",
        content: [{ type: "text", text: "gif?" }, {
          type: "image_url",
          image_url: { url: dataUrl("image/png", GIF) },
        }],
      }],
    }, { "x-session-id": "img-gif" });
    assertStrictEquals(res.status, 200, JSON.stringify(await res.clone().json()));
    assertEquals(imageUrls(fake.requests[0]), [dataUrl("image/gif", GIF)]);
  },
);

baton.test(
  "POST /v1/chat/completions: an image over MEDIA_MAX_BYTES, or bytes that are no image, are a 400 naming the part; no turn starts",
  async (worker, fake) => {
    const big = new Uint8Array(5000);
    big.set(PNG);
    const over = await postJson(worker, "/v1/chat/completions", {
      model: "m",
      messages: [{
        role: "user",
        content: [{ type: "text", text: "big" }, {
          type: "image_url",
          image_url: { url: dataUrl("image/png", big) },
        }],
      }],
    }, { "x-session-id": "img-big" });
    assertStrictEquals(over.status, 400);
    const message = (await json(over)).error.message as string;
    assert(message.startsWith("messages[0].content[1]: "), message);
    assert(message.includes("MEDIA_MAX_BYTES (4000)"), message);
    const text = new TextEncoder().encode("just text, not a picture");
    const notImage = await postJson(worker, "/v1/responses", {
      model: "m",
      input: [{
        role: "user",
        content: [{ type: "input_image", image_url: dataUrl("image/jpeg", text) }],
      }],
    });
    assertStrictEquals(notImage.status, 400);
    const why = (await json(notImage)).error.message as string;
    assert(why.startsWith("input[0].content[0]: not an image by its content (text/plain)"), why);
    assertStrictEquals(fake.requests.length, 0, "no turn started");
  },
);

baton.test(
  "POST /v1/chat/completions: an image deleted from R2 becomes a placeholder with a note; the session goes on",
  async (worker, fake) => {
    const openai = client(worker, "img-lost");
    const image = dataUrl("image/png", PNG);
    await openai.chat.completions.create({
      model: "m",
      messages: [{
        role: "user",
        content: [{ type: "text", text: "keep this" }, {
          type: "image_url",
          image_url: { url: image },
        }],
      }],
    });
    assertEquals(imageUrls(fake.requests[0]), [image]);
    // Miniflare's own R2 types do not resolve under Deno: the two calls used, as R2 has them.
    const bucket = await worker.mf.getR2Bucket("MEDIA") as unknown as {
      list(): Promise<{ objects: { key: string }[] }>;
      delete(key: string): Promise<void>;
    };
    for (const object of (await bucket.list()).objects) await bucket.delete(object.key);
    for (const [i, text] of ["still there?", "and now?"].entries()) {
      const reply = await openai.chat.completions.create({
        model: "m",
        messages: [{ role: "user", content: text }],
      });
      assertStrictEquals(reply.choices[0].message.content, text);
      const request = fake.requests[1 + i];
      assertEquals(imageUrls(request), []);
      assert(
        sentText(request).includes(
          "[image: image/png, 70 B] (the image could not be shown: it is no longer stored)",
        ),
        sentText(request),
      );
    }
  },
);

baton.test(
  "DELETE /v1/sessions/{key} deletes the session's media from R2, and no other session's",
  async (worker) => {
    const own = client(worker, "img-erase");
    const other = client(worker, "img-erase-other");
    for (const openai of [own, other]) {
      await openai.chat.completions.create({
        model: "m",
        messages: [{
          role: "user",
          content: [{ type: "text", text: "erase me" }, {
            type: "image_url",
            image_url: { url: dataUrl("image/gif", GIF) },
          }],
        }],
      });
    }
    // Miniflare's own R2 types do not resolve under Deno: the call used, as R2 has it.
    const bucket = await worker.mf.getR2Bucket("MEDIA") as unknown as {
      list(options: { prefix: string }): Promise<{ objects: { key: string }[] }>;
    };
    const stored = async (session: string) =>
      (await bucket.list({ prefix: await mediaPrefix(session) })).objects.length;
    assertStrictEquals(await stored("api:img-erase"), 1);
    const res = await worker.fetch(`/v1/sessions/${encodeURIComponent("api:img-erase")}`, {
      method: "DELETE",
      headers: { authorization: `Bearer ${API_KEY}` },
    });
    assertStrictEquals(res.status, 200, await res.text());
    assertStrictEquals(await stored("api:img-erase"), 0, "the erased session's media are gone");
    assertStrictEquals(await stored("api:img-erase-other"), 1, "another session's stay");
  },
);

bare.test(
  "POST /v1/chat/completions and /v1/responses: a deployment without MEDIA refuses an image with a 400 naming the part",
  async (worker, fake) => {
    const res = await postJson(worker, "/v1/chat/completions", {
      model: "m",
      messages: [{
        role: "user",
        content: [{ type: "text", text: "look" }, {
          type: "image_url",
          image_url: { url: dataUrl("image/png", PNG) },
        }],
      }],
    }, { "x-session-id": "img-off" });
    assertStrictEquals(res.status, 400);
    assertEquals((await json(res)).error, {
      message: "messages[0].content[1]: images are off on this deployment",
      type: "invalid_request_error",
    });
    const responses = await postJson(worker, "/v1/responses", {
      model: "m",
      input: [{
        role: "user",
        content: [{ type: "input_image", image_url: "https://example.com/a.png" }],
      }],
    });
    assertStrictEquals(responses.status, 400);
    assertStrictEquals(
      (await json(responses)).error.message,
      "input[0].content[0]: images are off on this deployment",
    );
    assertStrictEquals(fake.requests.length, 0, "no turn started");
  },
);

baton.done();
bare.done();

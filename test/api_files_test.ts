// Files through the OpenAI APIs: a turn's tool files returned as signed /media links (Chat Completions `message.files`, Responses `output_file` items, parsed by the real `openai` package); the request body limit raised for media, text still capped; Deno + Miniflare.
import OpenAI from "openai";
import { assert, assertEquals, assertStrictEquals } from "@std/assert";
import { API_KEY, json, postJson } from "./_support/clients.ts";
import { CHART_PNG_BASE64 } from "./_support/files_fixtures.ts";
import { sharedBaton } from "./_support/shared_baton.ts";
import type { TestWorker } from "./_support/worker.ts";
import type { FakeModel } from "../lib/testing/fake_model.ts";
import { encodeBase64 } from "../lib/runtime/mod.ts";

const PUBLIC_URL = "https://baton.example.com";
/** MEDIA_MAX_BYTES here: 1 MB, whose base64 is over the 1 MiB body limit text requests keep. */
const _MEDIA_MAX = 1_000_000;
const baton = sharedBaton({
  entry: "test/_support/files_worker.ts",
  media: true,
  vars: {
    MEDIA_URL_SECRET: "media-link-secret-for-api-tests",
    PUBLIC_URL,
    MEDIA_MAX_BYTES: String(_MEDIA_MAX),
  },
});

const PNG = Uint8Array.from(atob(CHART_PNG_BASE64), (c) => c.charCodeAt(0));

/** The `openai` client as users configure it, on this file's Worker. */
function client(worker: TestWorker, session?: string): OpenAI {
  return new OpenAI({
    baseURL: new URL("v1", worker.url).href,
    apiKey: API_KEY,
    timeout: 20_000,
    ...(session ? { defaultHeaders: { "x-session-id": session } } : {}),
  });
}

/** The model calls draw_chart once, then answers `text`. */
function drawsChart(fake: FakeModel, text: string): void {
  fake.script((req) =>
    // deno-lint-ignore no-explicit-any
    req.body.messages.some((m: any) => m.role === "tool")
      ? { kind: "text", text }
      : { kind: "tool_call", name: "draw_chart", args: {} }
  );
}

/** Fetches a signed link (made under PUBLIC_URL) from the Worker: its bytes, or a failure. */
async function fetchLink(worker: TestWorker, url: string): Promise<Uint8Array> {
  assert(url.startsWith(`${PUBLIC_URL}/media/`), url);
  const link = new URL(url);
  const res = await worker.fetch(link.pathname + link.search);
  assertStrictEquals(res.status, 200, url);
  return new Uint8Array(await res.arrayBuffer());
}

baton.test(
  "POST /v1/chat/completions: a tool's file comes back on choices[0].message.files as a signed link to its bytes",
  async (worker, fake) => {
    drawsChart(fake, "Here is your chart.");
    const completion = await client(worker, "files-chat").chat.completions.create({
      model: "gpt-4o-mini",
      messages: [{ role: "user", content: "draw me a chart" }],
    });
    const message = completion.choices[0].message;
    assertStrictEquals(message.content, "Here is your chart.");
    // deno-lint-ignore no-explicit-any
    const files = (message as any).files;
    assert(Array.isArray(files), `no files on the message: ${JSON.stringify(message)}`);
    assertEquals(files.length, 1);
    const { url, ...rest } = files[0];
    assertEquals(rest, { name: "chart.png", type: "image/png", size: PNG.length });
    assertEquals(await fetchLink(worker, url), PNG);
  },
);

baton.test(
  "POST /v1/chat/completions: a turn without tool files has no files field",
  async (worker, fake) => {
    fake.script(() => ({ kind: "text", text: "plain" }));
    const completion = await client(worker, "files-none").chat.completions.create({
      model: "gpt-4o-mini",
      messages: [{ role: "user", content: "just text" }],
    });
    assert(!("files" in completion.choices[0].message));
  },
);

baton.test(
  "POST /v1/responses: a tool's file is an output_file item with a signed link; output_text is still the reply",
  async (worker, fake) => {
    drawsChart(fake, "Chart attached.");
    const openai = client(worker);
    const response = await openai.responses.create({ model: "gpt-4o-mini", input: "a chart" });
    assertStrictEquals(response.output_text, "Chart attached.");
    // deno-lint-ignore no-explicit-any
    const items = response.output as any[];
    const files = items.filter((item) => item.type === "output_file");
    assertEquals(files.length, 1, JSON.stringify(items));
    const { id, file_url, ...rest } = files[0];
    assert(typeof id === "string" && id.length > 0);
    assertEquals(rest, {
      type: "output_file",
      status: "completed",
      filename: "chart.png",
      mime_type: "image/png",
      size: PNG.length,
    });
    assertEquals(await fetchLink(worker, file_url), PNG);
    // Retrieved later, the response still names its file (a fresh link to the same bytes).
    const again = await openai.responses.retrieve(response.id);
    // deno-lint-ignore no-explicit-any
    const kept = (again.output as any[]).filter((item) => item.type === "output_file");
    assertEquals(kept.map((f) => f.filename), ["chart.png"]);
    assertEquals(await fetchLink(worker, kept[0].file_url), PNG);
  },
);

/** A PNG of `size` bytes (its signature, then padding): an image by its content. */
function pngOf(size: number): Uint8Array {
  const bytes = new Uint8Array(size).fill(0x41);
  bytes.set(PNG);
  return bytes;
}

/**
 * Sends a request whose body is over the limit and reads its answer. The Worker answers 413 from
 * the Content-Length without reading the body, and now and then the test's client is still
 * uploading when the connection closes ("error reading a body from connection"; as in
 * test/api_test.ts): a race of the test's socket, so try again.
 */
async function oversized(send: () => Promise<Response>): Promise<Response> {
  for (let attempt = 1;; attempt++) {
    try {
      const res = await send();
      return new Response(await res.text(), { status: res.status, headers: res.headers });
    } catch (error) {
      if (attempt >= 5 || !(error instanceof TypeError)) throw error;
    }
  }
}

const dataUrl = (bytes: Uint8Array) => `data:image/png;base64,${encodeBase64(bytes)}`;

baton.test(
  "POST /v1/chat/completions: a 900 KB data-URL image (body over 1 MiB) is accepted when MEDIA is bound",
  async (worker, fake) => {
    fake.script(() => ({ kind: "text", text: "a big picture" }));
    const res = await postJson(worker, "/v1/chat/completions", {
      model: "m",
      messages: [{
        role: "user",
        content: [{ type: "text", text: "look" }, {
          type: "image_url",
          image_url: { url: dataUrl(pngOf(900_000)) },
        }],
      }],
    }, { "x-session-id": "big-image-chat" });
    assertStrictEquals(res.status, 200, JSON.stringify(await res.clone().json()));
    assertStrictEquals((await json(res)).choices[0].message.content, "a big picture");
  },
);

baton.test(
  "POST /v1/responses: a 900 KB input_image (body over 1 MiB) is accepted when MEDIA is bound",
  async (worker, fake) => {
    fake.script(() => ({ kind: "text", text: "seen" }));
    const res = await postJson(worker, "/v1/responses", {
      model: "m",
      input: [{
        role: "user",
        content: [{ type: "input_text", text: "look" }, {
          type: "input_image",
          image_url: dataUrl(pngOf(900_000)),
        }],
      }],
    });
    assertStrictEquals(res.status, 200, JSON.stringify(await res.clone().json()));
  },
);

baton.test(
  "POST /v1/chat/completions: text over 1 MiB is still a 413 naming the limit, beside an image or not; no turn starts",
  async (worker, fake) => {
    const long = "x".repeat(1_100_000);
    const bodies = [
      { model: "m", messages: [{ role: "user", content: long }] },
      {
        model: "m",
        messages: [{
          role: "user",
          content: [{ type: "text", text: long }, {
            type: "image_url",
            image_url: { url: dataUrl(pngOf(1000)) },
          }],
        }],
      },
    ];
    for (const [i, body] of bodies.entries()) {
      const res = await postJson(worker, "/v1/chat/completions", body, {
        "x-session-id": `long-text-${i}`,
      });
      assertStrictEquals(res.status, 413, `body ${i}`);
      const error = (await json(res)).error;
      assertStrictEquals(error.type, "request_too_large");
      assert(error.message.includes("1048576"), error.message);
    }
    assertStrictEquals(fake.requests.length, 0, "no turn started");
  },
);

baton.test(
  "POST /v1/responses: a body past what MEDIA_MAX_BYTES allows is a 413 naming the limit, never a 5xx",
  async (worker, fake) => {
    // Just past the limit (1 MiB + MEDIA_MAX_BYTES as base64): this image's base64 alone is over it.
    const image = dataUrl(pngOf(_MEDIA_MAX + 800_000));
    const res = await oversized(() =>
      postJson(worker, "/v1/responses", {
        model: "m",
        input: [{ role: "user", content: [{ type: "input_image", image_url: image }] }],
      })
    );
    assertStrictEquals(res.status, 413);
    const error = (await json(res)).error;
    assertStrictEquals(error.type, "request_too_large");
    assert(
      /\d{7,} bytes/.test(error.message) && error.message.includes("MEDIA_MAX_BYTES"),
      error.message,
    );
    assertStrictEquals(fake.requests.length, 0, "no turn started");
  },
);

baton.done();

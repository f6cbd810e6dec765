// Large turns: a request near the 1 MiB body cap runs to its end (no SQLITE_TOOBIG), and its session keeps working; Deno + Miniflare.
import { HISTORY_MAX_CHARS } from "../lib/session/transcript.ts";
import { assert, assertEquals, assertStrictEquals } from "@std/assert";
import { API_KEY, chatReply, json, postJson } from "./_support/clients.ts";
import { sharedBaton } from "./_support/shared_baton.ts";
import type { TestWorker } from "./_support/worker.ts";

const baton = sharedBaton();

/**
 * ~900 KB of text, under the body cap (`MAX_BODY_BYTES`, 1 MiB) with the JSON around it. The fake
 * model echoes it, so the reply is as large: before the fix, the inbox row held the input twice
 * (the turn and its input items) plus the reply, past SQLite's 2 MB row limit.
 */
function large(tag: string): string {
  const line = `${tag} — a long input line, with some non-ASCII: é ü 日本 🙂.\n`;
  return line.repeat(Math.floor(900_000 / new TextEncoder().encode(line).length));
}

/** POST `path` with the API key, given up after 60 s: before the fix the turn was retried three times. */
const post = (worker: TestWorker, path: string, body: unknown, headers?: Record<string, string>) =>
  postJson(worker, path, body, headers, 60_000);

/** GET `path` with the API key; asserts a 200 and returns the body. */
async function get(worker: TestWorker, path: string): Promise<unknown> {
  const res = await worker.fetch(path, {
    headers: { authorization: `Bearer ${API_KEY}` },
    signal: AbortSignal.timeout(30_000),
  });
  const body = await res.text();
  assertStrictEquals(res.status, 200, `${path}: ${body.slice(0, 300)}`);
  return JSON.parse(body);
}

baton.test(
  "POST /v1/responses with a ~900 KB input completes, is retrievable, and its conversation continues",
  async (worker) => {
    const input = large("responses");
    const body = JSON.stringify({ model: "any", input });
    assert(body.length < 1024 * 1024, `${body.length} bytes: under the body cap`);
    const res = await post(worker, "/v1/responses", { model: "any", input });
    const created = await json(res);
    assertStrictEquals(res.status, 200, JSON.stringify(created).slice(0, 300));
    assertStrictEquals(created.status, "completed");
    assertStrictEquals(created.output[0].content[0].text, input);
    // Stored and read back whole: the response, its input items.
    const again = await get(worker, `/v1/responses/${created.id}`) as typeof created;
    assertStrictEquals(again.output[0].content[0].text, input);
    const items = await get(worker, `/v1/responses/${created.id}/input_items`) as typeof created;
    assertStrictEquals(items.data[0].content[0].text, input);
    const next = await post(worker, "/v1/responses", {
      model: "any",
      input: "after the large one",
      previous_response_id: created.id,
    });
    const answer = await json(next);
    assertStrictEquals(next.status, 200, JSON.stringify(answer).slice(0, 300));
    assertStrictEquals(answer.output[0].content[0].text, "after the large one");
  },
);

baton.test(
  "POST /v1/chat/completions with a ~900 KB message completes, streamed or not, also with a ~2.7 MB reply, and the session answers after",
  async (worker, fake) => {
    const session = { "x-session-id": "large-chat" };
    const text = large("chat");
    const messages = [{ role: "user", content: text }];
    assertEquals(
      await chatReply(
        await post(worker, "/v1/chat/completions", { model: "any", messages }, session),
      ),
      text,
    );
    // A model reply three times as large (~2.7 MB, past the row limit on its own), streamed: its
    // transcript row, the run's run.completed event and the outcome all hold it whole.
    fake.script((req) => ({
      kind: "text",
      text: req.lastUserText.length > 100_000 ? req.lastUserText.repeat(3) : req.lastUserText,
    }));
    const streamed = await post(
      worker,
      "/v1/chat/completions",
      { model: "any", messages: [{ role: "user", content: `${text}again` }], stream: true },
      session,
    );
    assertStrictEquals(streamed.status, 200);
    const sse = await streamed.text();
    const deltas = sse.split("\n").filter((line) => line.startsWith("data: {"))
      .map((line) => JSON.parse(line.slice(6)).choices?.[0]?.delta?.content ?? "").join("");
    assertStrictEquals(deltas, `${text}again`.repeat(3));
    assert(sse.includes("data: [DONE]"), sse.slice(-300));
    assertEquals(
      await chatReply(
        await post(worker, "/v1/chat/completions", {
          model: "any",
          messages: [{ role: "user", content: "small" }],
        }, session),
      ),
      "small",
    );
    // The model was given the newest history within HISTORY_MAX_CHARS (the ~2.7 MB reply alone is
    // past it): forty such messages once took workerd's memory, and every session with it.
    const given = fake.requests.at(-1)!.body.messages as { content: string }[];
    assert(JSON.stringify(given).length <= HISTORY_MAX_CHARS + 65_536, String(given.length));
    assertStrictEquals(given.at(-1)?.content, "small");
    // Every message is kept: the snapshot shows the newest and counts the older ones left out.
    const snapshot = await get(worker, `/v1/sessions/${encodeURIComponent("api:large-chat")}`) as {
      messages: unknown[];
      omitted: number;
    };
    assert(
      snapshot.messages.length + snapshot.omitted === 6,
      JSON.stringify(snapshot).slice(0, 200),
    );
    assert(snapshot.omitted >= 1);
    await get(worker, `/v1/sessions/${encodeURIComponent("api:large-chat")}/inspect`);
  },
);

baton.done();

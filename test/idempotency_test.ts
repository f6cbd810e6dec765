// Idempotency-Key on every POST that starts a turn (chat completions, responses, runs), through workerd; Deno + Miniflare.
import { assertEquals, assertStrictEquals } from "@std/assert";
import { API_KEY, json, until } from "./_support/clients.ts";
import { sharedBaton } from "./_support/shared_baton.ts";
import type { TestWorker } from "./_support/worker.ts";

// One Worker for the file: each test has an Idempotency-Key and texts of its own.
const baton = sharedBaton();

function post(worker: TestWorker, path: string, body: unknown, key: string) {
  return worker.fetch(path, {
    method: "POST",
    headers: {
      authorization: `Bearer ${API_KEY}`,
      "content-type": "application/json",
      "idempotency-key": key,
    },
    body: JSON.stringify(body),
  });
}

baton.test(
  "Idempotency-Key: another body is 422 even when it would run in another conversation",
  async (worker, fake) => {
    const first = await post(worker, "/v1/chat/completions", {
      messages: [{ role: "user", content: "first question" }],
    }, "k-chat");
    assertStrictEquals(first.status, 200);
    const other = await post(worker, "/v1/chat/completions", {
      messages: [{ role: "user", content: "a different question" }],
    }, "k-chat");
    assertStrictEquals(other.status, 422);
    assertStrictEquals((await json(other)).error.type, "idempotency_key_reused");
    assertStrictEquals(fake.requests.length, 1);
  },
);

baton.test(
  "Idempotency-Key: POST /v1/responses replays its first response, one turn",
  async (worker, fake) => {
    const body = { model: "m", input: "once" };
    const a = await json(await post(worker, "/v1/responses", body, "k-resp"));
    const b = await json(await post(worker, "/v1/responses", body, "k-resp"));
    assertEquals([b.id, b.output], [a.id, a.output]);
    assertStrictEquals(fake.requests.length, 1);
    const other = await post(worker, "/v1/responses", { model: "m", input: "twice" }, "k-resp");
    assertStrictEquals(other.status, 422);
  },
);

baton.test(
  "Idempotency-Key: POST /v1/runs answers the same run, one turn",
  async (worker, fake) => {
    const a = await json(await post(worker, "/v1/runs", { input: "run once" }, "k-run"));
    const b = await json(await post(worker, "/v1/runs", { input: "run once" }, "k-run"));
    assertStrictEquals(b.run_id, a.run_id);
    await until(async () => {
      const state = await json(
        await worker.fetch(`/v1/runs/${a.run_id}`, {
          headers: { authorization: `Bearer ${API_KEY}` },
        }),
      );
      return state.status === "completed";
    }, "run completed");
    assertStrictEquals(fake.requests.length, 1);
  },
);

baton.done();

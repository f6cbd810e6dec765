// Tests that a streamed chat completion reaches its session object in one RPC (stored, and its run's events subscribed, in the same call) and streams as before; Deno (workerd via Miniflare).
import { assert, assertEquals, assertStrictEquals } from "@std/assert";
import { chat, json } from "./_support/clients.ts";
import { sharedBaton } from "./_support/shared_baton.ts";

const baton = sharedBaton({ entry: "test/_support/rpc_counted_worker.ts" });

/** The Worker's calls to session objects since the last asking. */
async function rpcs(worker: { fetch(path: string): Promise<Response> }): Promise<number> {
  return (await json(await worker.fetch("/__test/rpcs"))).rpcs;
}

/** The content deltas and the last data line of an SSE body. */
function frames(text: string): { content: string; last: string } {
  const data = text.split("\n").filter((l) => l.startsWith("data: ")).map((l) => l.slice(6));
  const content = data.filter((d) => d !== "[DONE]")
    .map((d) => JSON.parse(d).choices?.[0]?.delta?.content ?? "").join("");
  return { content, last: data.at(-1) ?? "" };
}

baton.test("POST /v1/chat/completions streamed stores its turn and subscribes its events in one RPC", async (worker) => {
  await rpcs(worker);
  const res = await chat(worker, "one call", { session: "stream-rpcs-1", stream: true });
  assertStrictEquals(res.status, 200);
  const body = frames(await res.text());
  assertEquals(body, { content: "one call", last: "[DONE]" });
  assertStrictEquals(await rpcs(worker), 1);
});

baton.test("POST /v1/chat/completions streamed twice with one Idempotency-Key replays the stored run", async (worker) => {
  const send = () =>
    worker.fetch("/v1/chat/completions", {
      method: "POST",
      headers: {
        authorization: "Bearer test-gateway-key",
        "content-type": "application/json",
        "x-session-id": "stream-rpcs-2",
        "idempotency-key": "stream-rpcs-key",
      },
      body: JSON.stringify({ messages: [{ role: "user", content: "once" }], stream: true }),
    });
  const first = await send();
  assertStrictEquals(first.status, 200);
  assertEquals(frames(await first.text()), { content: "once", last: "[DONE]" });
  const again = await send();
  assertStrictEquals(again.status, 200);
  const replayed = frames(await again.text());
  assertEquals(replayed, { content: "once", last: "[DONE]" });
  assert(again.headers.get("x-baton-run-id") === first.headers.get("x-baton-run-id"));
});

baton.done();

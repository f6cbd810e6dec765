// An API tenant's caps in workerd: MAX_SESSIONS_PER_TENANT (a new session refused, the others go on) and MAX_STREAMS_PER_TENANT (a stream beyond is a 429 before any turn; a slot freed when its stream ends or its client leaves); Deno + Miniflare.
import { assertStrictEquals } from "@std/assert";
import { chat, chatReply, json, until } from "./_support/clients.ts";
import { holdOn } from "./_support/fake_llm_scripts.ts";
import { sharedBaton } from "./_support/shared_baton.ts";
import type { TestWorker } from "./_support/worker.ts";

const SESSIONS = "sessions-key-0123456789";
const STREAMS = "streams-key-0123456789";
const METERED = "metered-key-0123456789";

// Small caps, each test in a tenant of its own; a quick keep-alive, so a client that left is seen.
// API_TURNS_PER_MINUTE is above what the other tests start in their tenants' minute.
const baton = sharedBaton({
  vars: {
    GATEWAY_API_KEYS: `sessions:${SESSIONS},streams:${STREAMS},metered:${METERED}`,
    MAX_SESSIONS_PER_TENANT: "2",
    MAX_STREAMS_PER_TENANT: "1",
    API_TURNS_PER_MINUTE: "10",
    KEEPALIVE_MS: "200",
  },
});

/** Asserts a JSON error with `status` and `type`; its message. */
async function expectError(res: Response, status: number, type: string): Promise<string> {
  const body = await json(res);
  assertStrictEquals(res.status, status, JSON.stringify(body));
  assertStrictEquals(body.error?.type, type, JSON.stringify(body));
  return body.error.message;
}

function createJob(worker: TestWorker, session: string): Promise<Response> {
  return worker.fetch("/v1/jobs", {
    method: "POST",
    headers: { authorization: `Bearer ${SESSIONS}`, "content-type": "application/json" },
    body: JSON.stringify({ session, prompt: "later", schedule: { in: 3600 } }),
  });
}

baton.test(
  "MAX_SESSIONS_PER_TENANT: a new session past the cap is a 403 naming it; the tenant's sessions go on",
  async (worker, fake) => {
    await chatReply(await chat(worker, "one", { session: "cap-1", key: SESSIONS }));
    await chatReply(await chat(worker, "two", { session: "cap-2", key: SESSIONS }));
    const before = fake.requests.length;
    const message = await expectError(
      await chat(worker, "three", { session: "cap-3", key: SESSIONS }),
      403,
      "session_limit",
    );
    assertStrictEquals(message.includes("MAX_SESSIONS_PER_TENANT (2)"), true, message);
    await expectError(
      await chat(worker, "three", { session: "cap-3", key: SESSIONS, stream: true }),
      403,
      "session_limit",
    );
    await expectError(await createJob(worker, "cap-4"), 403, "session_limit");
    assertStrictEquals(fake.requests.length, before, "no turn for a refused session");
    assertStrictEquals(
      await chatReply(await chat(worker, "again", { session: "cap-1", key: SESSIONS })),
      "again",
    );
    assertStrictEquals((await createJob(worker, "cap-2")).status, 201, "a job in a counted one");
    // Another tenant counts its own.
    await chatReply(await chat(worker, "elsewhere", { session: "cap-3", key: STREAMS }));
  },
);

baton.test(
  "MAX_STREAMS_PER_TENANT: a stream past the cap is a 429 before any turn; the slot is free once the stream ends or its client leaves",
  async (worker, fake) => {
    fake.script(holdOn("hold"));
    const first = await chat(worker, "hold", { session: "st-1", key: STREAMS, stream: true });
    assertStrictEquals(first.status, 200);
    await fake.waitForRequests(1);
    const refused = await chat(worker, "second", { session: "st-1", key: STREAMS, stream: true });
    assertStrictEquals(refused.headers.has("retry-after"), true);
    const message = await expectError(refused, 429, "stream_limit");
    assertStrictEquals(message.includes("MAX_STREAMS_PER_TENANT (1)"), true, message);
    assertStrictEquals(fake.requests.length, 1, "the refused stream started no turn");
    fake.release();
    await first.text(); // the stream ends: its slot is released
    let next: Response | undefined;
    await until(async () => {
      await next?.body?.cancel();
      next = await chat(worker, "hold", { session: "st-1", key: STREAMS, stream: true });
      return next.status === 200;
    }, "a slot after the first stream ended");
    // This client leaves mid-turn: a keep-alive finds it gone and frees its slot.
    await fake.waitForRequests(2);
    await next!.body!.cancel();
    await until(async () => {
      const res = await chat(worker, "after", { session: "st-1", key: STREAMS, stream: true });
      await res.body?.cancel(); // queued behind the held turn: its status is all this needs
      return res.status === 200;
    }, "a slot after the client left");
    fake.release();
  },
);

baton.test(
  "MAX_STREAMS_PER_TENANT: a stream refused its slot costs no API_TURNS_PER_MINUTE turn, on either streaming route",
  async (worker, fake) => {
    fake.script(holdOn("metered hold"));
    const held = await chat(worker, "metered hold", {
      session: "mt-1",
      key: METERED,
      stream: true,
    });
    assertStrictEquals(held.status, 200);
    // The fake is shared: the turns another test left queued may reach it too.
    const mine = (text: RegExp) => fake.requests.filter((r) => text.test(r.lastUserText)).length;
    await until(() => mine(/^metered hold$/) === 1, "the held turn");
    // Ten refused streams beside the held one: with each counted, the tenant's minute (10) is full.
    for (let i = 0; i < 10; i++) {
      const refused = i % 2
        ? await chat(worker, `m${i}`, { session: "mt-1", key: METERED, stream: true })
        : await worker.fetch("/v1/responses", {
          method: "POST",
          headers: { authorization: `Bearer ${METERED}`, "content-type": "application/json" },
          body: JSON.stringify({ model: "m", input: `m${i}`, stream: true }),
        });
      await expectError(refused, 429, "stream_limit");
    }
    fake.release();
    await held.text();
    assertStrictEquals(mine(/^m\d$/), 0, "no refused stream started a turn");
    const after = await chat(worker, "after", { session: "mt-2", key: METERED });
    assertStrictEquals(await chatReply(after), "after", "the tenant's minute holds one turn");
  },
);

baton.done();

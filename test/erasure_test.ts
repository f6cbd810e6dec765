// Erasure end to end in workerd: DELETE /v1/sessions/{key} (idle, mid-turn, tenant-scoped) and DELETE /v1/users/{platform:user}; Deno + Miniflare.
import { assert, assertEquals, assertStrictEquals } from "@std/assert";
import { API_KEY, chat, chatReply, type Json, json, until } from "./_support/clients.ts";
import { deliver, replies } from "./_support/drivers/mod.ts";
import { telegramDriver } from "./_support/drivers/telegram.ts";
import { holdOn } from "./_support/fake_llm_scripts.ts";
import { sharedBaton } from "./_support/shared_baton.ts";
import type { TestWorker } from "./_support/worker.ts";

const ACME = "acme-key-0123456789";
const BETA = "beta-key-0123456789";

// One Worker: two named tenants beside the default (admin) one, Telegram, and a user quota so
// that every chat user has an access record to erase.
const baton = sharedBaton({
  vars: {
    GATEWAY_API_KEYS: `acme:${ACME}, beta:${BETA}`,
    USER_TURNS_PER_HOUR: "100",
    ...telegramDriver.vars(),
  },
});

/** A request with `key` as the bearer token. */
function as(worker: TestWorker, key: string, path: string, init: RequestInit = {}) {
  return worker.fetch(path, {
    ...init,
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
  });
}

const sessionPath = (key: string) => `/v1/sessions/${encodeURIComponent(key)}`;

/** DELETE /v1/sessions/{key} as `key`'s holder; the body read. */
async function erase(worker: TestWorker, session: string, apiKey = API_KEY) {
  const res = await as(worker, apiKey, sessionPath(session), { method: "DELETE" });
  return { status: res.status, body: await json(res) };
}

/** Every user message text the fake model received in its last request. */
function seenByModel(body: Json): string[] {
  return body.messages.filter((m: Json) => m.role === "user").map((m: Json) => String(m.content));
}

baton.test(
  "DELETE /v1/sessions/{key} erases an API session's transcript and jobs; its id is 404 and a new message starts fresh",
  async (worker, fake) => {
    const key = "api:erase-1";
    await chatReply(await chat(worker, "my secret is pineapple", { session: "erase-1" }));
    const created = await as(worker, API_KEY, "/v1/jobs", {
      method: "POST",
      body: JSON.stringify({ session: "erase-1", prompt: "hourly", schedule: { every: 3600 } }),
    });
    assertStrictEquals(created.status, 201);
    const job = await json(created);

    const erased = await erase(worker, key);
    assertStrictEquals(erased.status, 200, JSON.stringify(erased.body));
    assertEquals(erased.body.key, key);
    assertStrictEquals(erased.body.erased, true);

    const read = await as(worker, API_KEY, sessionPath(key));
    assertStrictEquals(read.status, 404, await read.text());
    const inspect = await as(worker, API_KEY, `${sessionPath(key)}/inspect`);
    assertStrictEquals(inspect.status, 404, await inspect.text());
    const jobRead = await as(worker, API_KEY, `/v1/jobs/${job.id}`);
    assertStrictEquals(jobRead.status, 404, await jobRead.text());
    // Erased twice: nothing there any more.
    assertStrictEquals((await erase(worker, key)).status, 404);

    fake.reset();
    await chatReply(await chat(worker, "what is my secret?", { session: "erase-1" }));
    assertEquals(seenByModel(fake.requests.at(-1)!.body), ["what is my secret?"]);
    const state = await json(await as(worker, API_KEY, sessionPath(key)));
    assertEquals(state.messages.map((m: Json) => m.content), [
      "what is my secret?",
      "what is my secret?",
    ]);
  },
);

baton.test(
  "DELETE /v1/sessions/{key} during a running turn stops it first, and the session starts fresh after",
  async (worker, fake) => {
    const key = "api:erase-busy";
    await chatReply(await chat(worker, "remember kiwi", { session: "erase-busy" }));
    fake.script(holdOn("long one"));
    const running = chat(worker, "long one", { session: "erase-busy" });
    await fake.waitForRequests(2);

    const erased = await erase(worker, key);
    assertStrictEquals(erased.status, 200, JSON.stringify(erased.body));
    assertStrictEquals(erased.body.stopped, true);
    const held = await running;
    // The waiting caller is answered (its turn was stopped), never left hanging.
    assert(held.status >= 400, `held request: ${held.status}`);
    await held.body?.cancel();
    assertStrictEquals((await as(worker, API_KEY, sessionPath(key))).status, 404);

    fake.reset();
    await chatReply(await chat(worker, "anything left?", { session: "erase-busy" }));
    assertEquals(seenByModel(fake.requests.at(-1)!.body), ["anything left?"]);
  },
);

baton.test("DELETE /v1/sessions/{key}: a tenant erases only its own API sessions; another's and a platform's are 404 and kept", async (worker) => {
  await chatReply(await chat(worker, "acme's own", { session: "mine", key: ACME }));
  const key = "api.acme:mine";
  assertStrictEquals((await erase(worker, key, BETA)).status, 404);
  assertStrictEquals((await erase(worker, "telegram:1", ACME)).status, 404);
  const kept = await json(await as(worker, ACME, sessionPath(key)));
  assertEquals(kept.messages.length, 2, "another tenant's DELETE changed nothing");
  const own = await erase(worker, key, ACME);
  assertStrictEquals(own.status, 200, JSON.stringify(own.body));
  assertStrictEquals((await as(worker, ACME, sessionPath(key))).status, 404);
});

baton.test(
  "DELETE /v1/users/telegram:{id} erases the user's chat sessions and access record; admin key only",
  async (worker, fake, platform) => {
    telegramDriver.vars(platform);
    const chatId = telegramDriver.newChat();
    const key = telegramDriver.session(chatId);
    const ack = await deliver(
      worker.fetch,
      telegramDriver,
      await telegramDriver.message({ chat: chatId, text: "my address is 1 Elm St" }),
    );
    assertStrictEquals(ack.status, 200);
    await until(() => replies(telegramDriver, platform, chatId).length === 1, "the reply");
    // The directory row is written a moment after the turn.
    await until(async () => {
      const list = await json(
        await as(worker, API_KEY, "/v1/sessions?platform=telegram&limit=100"),
      );
      return list.data.some((s: Json) => s.key === key);
    }, "the directory row");

    const path = `/v1/users/${encodeURIComponent(`telegram:${chatId}`)}`;
    assertStrictEquals((await as(worker, ACME, path, { method: "DELETE" })).status, 403);
    const res = await as(worker, API_KEY, path, { method: "DELETE" });
    const body = await json(res);
    assertStrictEquals(res.status, 200, JSON.stringify(body));
    assertEquals(body.sessions, [key]);
    assertStrictEquals(body.access_record, true);

    assertStrictEquals((await as(worker, API_KEY, sessionPath(key))).status, 404);
    const list = await json(await as(worker, API_KEY, "/v1/sessions?platform=telegram&limit=100"));
    assert(!list.data.some((s: Json) => s.key === key), "the directory row is gone");
    // Again: nothing left, said so with a 200.
    const again = await json(await as(worker, API_KEY, path, { method: "DELETE" }));
    assertEquals([again.sessions, again.access_record], [[], false]);

    fake.reset();
    await deliver(
      worker.fetch,
      telegramDriver,
      await telegramDriver.message({ chat: chatId, text: "hello again" }),
    );
    await until(() => replies(telegramDriver, platform, chatId).length === 2, "the new reply");
    assertEquals(seenByModel(fake.requests.at(-1)!.body), ["hello again"]);
  },
);

baton.done();

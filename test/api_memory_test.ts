// API users' memory end to end: seen and forgotten through GET/DELETE /v1/memory (the caller's tenant only), and erased with the user (DELETE /v1/users/api:<tenant>:<user>); Deno + Miniflare.
import { assert, assertEquals, assertStrictEquals } from "@std/assert";
import { API_KEY, chat, chatReply, type Json, json } from "./_support/clients.ts";
import { sharedBaton } from "./_support/shared_baton.ts";
import type { FakeModel } from "../lib/testing/fake_model.ts";
import type { TestWorker } from "./_support/worker.ts";

const ACME = "acme-apimem-key-1";
const GLOBEX = "globex-apimem-key-1";

const baton = sharedBaton({
  vars: { MEMORY: "on", GATEWAY_API_KEYS: `acme:${ACME},globex:${GLOBEX}` },
});

/** The fake model: "remember: <fact>" calls `remember`; a tool's result is echoed back. */
function scriptMemory(fake: FakeModel): void {
  fake.script((req) => {
    const last = req.body.messages.at(-1);
    if (last.role === "tool") return { kind: "text", text: `noted: ${last.content}` };
    const fact = /^remember: (.*)$/s.exec(req.lastUserText)?.[1];
    if (fact !== undefined) return { kind: "tool_call", name: "remember", args: { fact } };
    return { kind: "text", text: `echo: ${req.lastUserText}` };
  });
}

/** A request with `key` as the bearer token; status and body. */
async function as(worker: TestWorker, key: string, path: string, method = "GET") {
  const res = await worker.fetch(path, { method, headers: { authorization: `Bearer ${key}` } });
  return { status: res.status, body: await json(res) as Json };
}

/** `user` of the tenant of `key` remembers `fact` (through the model's `remember`). */
async function remember(worker: TestWorker, key: string, user: string, fact: string) {
  const res = await chat(worker, `remember: ${fact}`, { key, session: `m-${user}`, user });
  assertEquals(await chatReply(res), "noted: Remembered.");
}

const facts = (body: Json) => (body.facts as Json[]).map((f) => f.text);

baton.test(
  "GET/DELETE /v1/memory show and forget the caller's tenant's user's memory, never another tenant's",
  async (worker, fake) => {
    scriptMemory(fake);
    await remember(worker, ACME, "u7", "acme u7 likes tea");
    await remember(worker, ACME, "u7", "acme u7 lives in Oslo");
    await remember(worker, GLOBEX, "u7", "globex u7 likes coffee");

    const acme = await as(worker, ACME, "/v1/memory?user=u7");
    assertStrictEquals(acme.status, 200, JSON.stringify(acme.body));
    assertEquals(facts(acme.body), ["acme u7 likes tea", "acme u7 lives in Oslo"]);
    assertEquals(acme.body.user, "u7");
    assertEquals(facts((await as(worker, GLOBEX, "/v1/memory?user=u7")).body), [
      "globex u7 likes coffee",
    ]);

    // One fact, as numbered at the version read; a stale version is a 409.
    const version = acme.body.version;
    const one = await as(worker, ACME, `/v1/memory/1?user=u7&version=${version}`, "DELETE");
    assertStrictEquals(one.status, 200, JSON.stringify(one.body));
    const stale = await as(worker, ACME, `/v1/memory/1?user=u7&version=${version}`, "DELETE");
    assertStrictEquals(stale.status, 409);
    assertEquals(facts((await as(worker, ACME, "/v1/memory?user=u7")).body), [
      "acme u7 lives in Oslo",
    ]);

    // Everything: acme's u7 forgets; globex's u7 keeps theirs.
    const all = await as(worker, ACME, "/v1/memory?user=u7", "DELETE");
    assertStrictEquals(all.status, 200, JSON.stringify(all.body));
    assertEquals(all.body.forgotten, 1);
    assertEquals(facts((await as(worker, ACME, "/v1/memory?user=u7")).body), []);
    assertEquals(facts((await as(worker, GLOBEX, "/v1/memory?user=u7")).body), [
      "globex u7 likes coffee",
    ]);

    assertStrictEquals((await as(worker, ACME, "/v1/memory")).status, 400, "user is required");
    assertStrictEquals((await as(worker, "wrong-key", "/v1/memory?user=u7")).status, 401);
  },
);

baton.test(
  "DELETE /v1/users/api:<tenant>:<user> erases that API user's memory; the model is offered nothing after",
  async (worker, fake) => {
    scriptMemory(fake);
    await remember(worker, ACME, "u8", "acme u8 has a cat named Pixel");
    const path = `/v1/users/${encodeURIComponent("api:acme:u8")}`;
    const erased = await as(worker, API_KEY, path, "DELETE");
    assertStrictEquals(erased.status, 200, JSON.stringify(erased.body));
    assertStrictEquals(erased.body.memory, true);
    assertEquals(facts((await as(worker, API_KEY, `${path}/memory`)).body), []);
    assertEquals(facts((await as(worker, ACME, "/v1/memory?user=u8")).body), []);

    await chatReply(await chat(worker, "hello u8", { key: ACME, session: "m-u8b", user: "u8" }));
    const request = fake.requests.findLast((r) => r.lastUserText === "hello u8");
    assert(request && !JSON.stringify(request.body.messages).includes("Pixel"), "memory offered");
  },
);

baton.done();

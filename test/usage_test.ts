// Usage you can see end to end: /usage in chat, GET /v1/usage (tenant isolation, admin, filters), MODEL_PRICES money, a job's turns counted against its creator's USER_TOKENS_PER_DAY; Deno + Miniflare.
import { assert, assertEquals, assertMatch, assertStrictEquals } from "@std/assert";
import { API_KEY, chat, chatReply, type Json, json, until, withBaton } from "./_support/clients.ts";
import type { FakeModelRequest, FakeModelStep } from "../lib/testing/fake_model.ts";
import { sharedBaton } from "./_support/shared_baton.ts";
import type { TestWorker } from "./_support/worker.ts";
import type { FakePlatform } from "./_support/fake_platform.ts";

const SECRET = "tg-webhook-secret_usage";
const TOKEN = "123456789:AAH-usage_bot_token_value";
const KEY_A = "usage-tenant-a-key-0123456789";
const KEY_B = "usage-tenant-b-key-0123456789";

// Every call reports 250 tokens (100 of its 200 prompt tokens cached): at MODEL_PRICES' 1 in,
// 0.5 cached, 2 out per million that is 100 × 1 + 100 × 0.5 + 50 × 2 = 250 millionths a call.
// USER_TOKENS_PER_DAY 1,000 and TURN_MAX_TOKENS 250 hold the job test's creator to four calls.
const baton = sharedBaton({
  vars: {
    TELEGRAM_WEBHOOK_SECRET: SECRET,
    TELEGRAM_BOT_TOKEN: TOKEN,
    GATEWAY_API_KEYS: `ua:${KEY_A},ub:${KEY_B}`,
    LLM_MODEL: "priced-model",
    MODEL_PRICES: JSON.stringify({ "priced-model": { in: 1, out: 2, cached: 0.5 } }),
    USER_TOKENS_PER_DAY: "1000",
    TURN_MAX_TOKENS: "250",
    BUSY_ACK: "off",
  },
});

const USAGE = { prompt_tokens: 200, completion_tokens: 50, cached_tokens: 100 };
const CALL_COST = 0.00025;

let _update = 770_000;

/** A private Telegram message from `user`: its own session `telegram:<user>`. */
async function tg(worker: TestWorker, user: number, text: string): Promise<Json> {
  const message = {
    message_id: _update,
    date: Math.floor(Date.now() / 1000),
    chat: { id: user, type: "private", first_name: `User${user}` },
    from: { id: user, is_bot: false, first_name: `User${user}` },
    text,
  };
  const res = await worker.fetch("/webhooks/telegram", {
    method: "POST",
    headers: { "content-type": "application/json", "X-Telegram-Bot-Api-Secret-Token": SECRET },
    body: JSON.stringify({ update_id: _update++, message }),
  });
  assertStrictEquals(res.status, 200);
  return json(res);
}

function textsTo(platform: FakePlatform, chat: number): string[] {
  return platform.calls.filter((c) => c.body?.chat_id === chat).map((c) => String(c.body.text));
}

function usage(worker: TestWorker, query: string, key = API_KEY): Promise<Response> {
  return worker.fetch(`/v1/usage${query}`, { headers: { authorization: `Bearer ${key}` } });
}

baton.test(
  "/usage reports this chat's and this user's tokens and cost after two turns",
  async (worker, fake, platform) => {
    fake.script((req) => ({ kind: "text", text: `re ${req.lastUserText}`, usage: USAGE }));
    const user = 7701;
    await tg(worker, user, "first");
    await until(() => textsTo(platform, user).includes("re first"), "the first reply");
    await tg(worker, user, "second");
    await until(() => textsTo(platform, user).includes("re second"), "the second reply");
    // The user's record is settled after each turn, off the path: wait for it.
    await until(async () => {
      const res = await usage(worker, `?user=telegram:${user}`);
      return (await json(res)).totals?.turns === 2;
    }, "the user's record settled");
    await tg(worker, user, "/usage");
    await until(() => textsTo(platform, user).some((t) => t.startsWith("Usage")), "the answer");
    const answer = textsTo(platform, user).find((t) => t.startsWith("Usage"))!;
    assertMatch(
      answer,
      /this chat: 500 tokens \(400 in, 200 cached, 100 out\), 2 turns, cost 0\.000500/,
    );
    assertMatch(
      answer,
      /you, all chats: 500 tokens .*2 turns, cost 0\.000500 \(limit 1,000 a day\)/,
    );
    assertMatch(answer, /Yesterday .*\n {2}this chat: 0 tokens/);
    assertStrictEquals(fake.requests.length, 2, "/usage is no model turn");
  },
);

baton.test(
  "GET /v1/usage: a tenant sees only its own usage, the admin sees every tenant's, with MODEL_PRICES money and the day, session and user filters",
  async (worker, fake) => {
    fake.script((req) => ({ kind: "text", text: `re ${req.lastUserText}`, usage: USAGE }));
    assertStrictEquals(
      await chatReply(await chat(worker, "a1", { key: KEY_A, session: "u1" })),
      "re a1",
    );
    assertStrictEquals(
      await chatReply(await chat(worker, "a2", { key: KEY_A, session: "u2" })),
      "re a2",
    );
    assertStrictEquals(
      await chatReply(await chat(worker, "b1", { key: KEY_B, session: "u1" })),
      "re b1",
    );
    // Tenants' records settle after the turn, the directory's rows a moment later.
    let a: Json = {};
    await until(async () => {
      a = await json(await usage(worker, "", KEY_A));
      return a.totals?.turns === 2 && a.sessions?.length === 2;
    }, "tenant a's usage");
    assertStrictEquals(a.tenant, "ua");
    assertEquals(
      [a.totals.total_tokens, a.totals.prompt_tokens, a.totals.cached_tokens, a.totals.cost],
      [500, 400, 200, 2 * CALL_COST],
    );
    assertEquals(a.sessions.map((s: Json) => s.session_key).sort(), ["api.ua:u1", "api.ua:u2"]);
    let b: Json = {};
    await until(async () => {
      b = await json(await usage(worker, "", KEY_B));
      return b.totals?.turns === 1 && b.sessions?.length === 1;
    }, "tenant b's usage");
    assertEquals([b.tenant, b.totals.total_tokens, b.totals.cost], ["ub", 250, CALL_COST]);
    assertEquals(b.sessions.map((s: Json) => s.session_key), ["api.ub:u1"]);
    // No cap and the directory bound: no turn settled with the tenant's one object (lesson 4).
    assertEquals(await tenantRecordTurns(worker, "ua"), 0);
    // The admin key sees both tenants' sessions.
    const all = await json(await usage(worker, "?limit=500"));
    assertStrictEquals(all.scope, "all");
    const keys = all.sessions.map((s: Json) => s.session_key);
    assert(["api.ua:u1", "api.ua:u2", "api.ub:u1"].every((k) => keys.includes(k)), keys.join());
    assert(all.totals.total_tokens >= 750, JSON.stringify(all.totals));
    const onlyB = await json(await usage(worker, "?tenant=ub"));
    assertEquals([onlyB.tenant, onlyB.totals.total_tokens], ["ub", 250]);
    // Filters: a session of one's own; another tenant's is not found; users are the admin's.
    const own = await json(await usage(worker, "?session=api.ua:u2", KEY_A));
    assertEquals([own.session, own.totals.total_tokens, own.totals.turns], ["api.ua:u2", 250, 1]);
    assertStrictEquals((await usage(worker, "?session=api.ub:u1", KEY_A)).status, 404);
    const user = await usage(worker, "?user=telegram:7701", KEY_A);
    assertStrictEquals(user.status, 403);
    assertStrictEquals((await json(user)).error.type, "permission_denied");
    assertStrictEquals((await usage(worker, "?tenant=ub", KEY_A)).status, 403);
    const old = await json(await usage(worker, "?day=2020-01-01", KEY_A));
    assertEquals([old.day, old.totals.total_tokens, old.sessions], ["2020-01-01", 0, []]);
    const bad = await usage(worker, "?day=yesterday", KEY_A);
    assertStrictEquals(bad.status, 400);
    assertMatch((await json(bad)).error.message, /YYYY-MM-DD/);
  },
);

/** Turns today in API tenant `tenant`'s own access record, read from the object itself. */
async function tenantRecordTurns(worker: TestWorker, tenant: string): Promise<number> {
  // Miniflare's proxy of the binding, typed here as the Worker sees it (its RPC method only).
  const namespace = await worker.mf.getDurableObjectNamespace("ACCESS") as unknown as {
    idFromName(name: string): unknown;
    get(id: unknown): { tokenUsage(day: string): Promise<{ turns: number }> };
  };
  const record = namespace.get(namespace.idFromName(`tenant:${tenant}`));
  return (await record.tokenUsage(new Date().toISOString().slice(0, 10))).turns;
}

Deno.test("GET /v1/usage without the DIRECTORY binding: the tenant's totals from its own record, settled after each turn", async () => {
  await withBaton(async (worker, fake) => {
    fake.script((req) => ({ kind: "text", text: `re ${req.lastUserText}`, usage: USAGE }));
    const vars = { key: KEY_A, session: "nd" };
    assertStrictEquals(await chatReply(await chat(worker, "one", vars)), "re one");
    assertStrictEquals(await chatReply(await chat(worker, "two", vars)), "re two");
    let a: Json = {};
    await until(async () => {
      a = await json(await usage(worker, "", KEY_A));
      return a.totals?.turns === 2;
    }, "tenant a's record settled");
    assertEquals([a.tenant, a.totals.total_tokens, a.sessions], ["ua", 500, undefined]);
    assertEquals(await tenantRecordTurns(worker, "ua"), 2);
  }, { directory: "none", vars: { GATEWAY_API_KEYS: `ua:${KEY_A}` } });
});

/** Schedules "remind X" in a second (one call, 250 tokens); the job's turn is one call of 600. */
function scheduler(req: FakeModelRequest): FakeModelStep {
  const last = req.body.messages.at(-1);
  if (last.role === "tool") return { kind: "text", text: "scheduled", usage: USAGE };
  const remind = /^remind (.*)$/.exec(req.lastUserText);
  if (remind) {
    return {
      kind: "tool_call",
      name: "schedule_task",
      args: { prompt: remind[1], in: 1 },
      usage: USAGE,
    };
  }
  const big = { prompt_tokens: 500, completion_tokens: 100 };
  return { kind: "text", text: `re ${req.lastUserText}`, usage: big };
}

baton.test(
  "jobCreatorCheck(): a job's turns count against its creator's USER_TOKENS_PER_DAY",
  async (worker, fake, platform) => {
    fake.script(scheduler);
    const user = 7702;
    // 250 tokens to schedule it, 600 for the job's turn: 850 of the creator's 1,000, so their
    // next message (reserving 250) is refused; were the job not theirs, 250 + 250 would fit.
    await tg(worker, user, "remind spendjob");
    await until(() => textsTo(platform, user).includes("re spendjob"), "the job's reply", 30_000);
    await until(async () => {
      const res = await usage(worker, `?user=telegram:${user}`);
      return (await json(res)).totals?.total_tokens === 850;
    }, "the job's tokens counted against its creator");
    const before = fake.requests.length;
    assertStrictEquals((await tg(worker, user, "after")).ignored, "over token budget");
    assertStrictEquals(fake.requests.length, before, "no model call past the cap");
  },
);

baton.done();

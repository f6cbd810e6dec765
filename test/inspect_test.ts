// GET /v1/sessions/{key}/inspect in workerd: the console inspector's read of a session, tenant-scoped; Deno + Miniflare.
import { assertEquals, assertStrictEquals } from "@std/assert";
import { ONE_TOOL_TURN_EVENTS } from "../lib/session/_sentinel_fixtures.ts";
import { API_KEY, type Json, json, settled, until } from "./_support/clients.ts";
import { echoSessionInfo } from "./_support/fake_llm_scripts.ts";
import { expectOk } from "./_support/platform_rig.ts";
import { sharedBaton } from "./_support/shared_baton.ts";
import type { TestWorker } from "./_support/worker.ts";

const ACME = "acme-key-0123456789";
const TG_SECRET = "tg-webhook-secret_42";
const TG_TOKEN = "123456789:AAH-test_bot_token_value";
const VARS = {
  GATEWAY_API_KEYS: `acme:${ACME}`,
  TELEGRAM_WEBHOOK_SECRET: TG_SECRET,
  TELEGRAM_BOT_TOKEN: TG_TOKEN,
};

// One Worker for the file: each test has a Telegram chat or an API session of its own.
const baton = sharedBaton({ vars: VARS });

function inspect(worker: TestWorker, key: string, apiKey = API_KEY): Promise<Response> {
  return worker.fetch(`/v1/sessions/${encodeURIComponent(key)}/inspect`, {
    headers: { authorization: `Bearer ${apiKey}` },
  });
}

/** A Telegram text message from user `chat` in their private chat with the bot. */
function telegramUpdate(
  worker: TestWorker,
  text: string,
  updateId: number,
  chat: number,
): Promise<Response> {
  return worker.fetch("/webhooks/telegram", {
    method: "POST",
    headers: { "content-type": "application/json", "X-Telegram-Bot-Api-Secret-Token": TG_SECRET },
    body: JSON.stringify({
      update_id: updateId,
      message: {
        message_id: updateId,
        date: Math.floor(Date.now() / 1000),
        chat: { id: chat, type: "private", first_name: "Ann" },
        from: { id: chat, is_bot: false, first_name: "Ann" },
        text,
      },
    }),
  });
}

baton.test(
  "GET /v1/sessions/{key}/inspect shows an admin a Telegram session's inbox, sent parts and last context",
  async (worker, _fake, telegram) => {
    await expectOk(await telegramUpdate(worker, "hi there", 900_001, 77));
    await telegram.waitForCalls(1);
    await settled(worker, "telegram:77");
    let body: Json = null;
    // The part is recorded as sent just after the platform answered.
    await until(async () => {
      const res = await inspect(worker, "telegram:77");
      body = await json(res);
      return res.status === 200 && body.parts.some((p: Json) => p.status === "sent");
    }, "a sent part");
    assertEquals(body.key, "telegram:77");
    assertEquals(body.inbox.map((m: Json) => [m.status, m.text]), [["done", "hi there"]]);
    assertEquals(body.parts.map((p: Json) => [p.kind, p.status, p.text, p.platform]), [
      ["reply", "sent", "hi there", "telegram"],
    ]);
    assertEquals(body.last_turn.context.platform, "telegram");
    assertEquals(body.last_turn.context.session_key, "telegram:77");
    // No text deltas: a chat turn's timeline is a few small rows.
    const types = body.runs.flatMap((r: Json) => r.events.map((e: Json) => e.type));
    assertEquals(types.includes("message.delta"), false);
  },
);

baton.test(
  "GET /v1/sessions/{key}/inspect is a 404 for another tenant's session and for a session never used",
  async (worker, _fake, telegram) => {
    await expectOk(await telegramUpdate(worker, "hello", 900_101, 78));
    await telegram.waitForCalls(1);
    const other = await inspect(worker, "telegram:78", ACME);
    assertStrictEquals(other.status, 404);
    assertEquals((await json(other)).error.type, "not_found");
    const none = await inspect(worker, "api:never-used");
    assertStrictEquals(none.status, 404);
    assertEquals((await json(none)).error, { message: "no such session", type: "not_found" });
    const unauthenticated = await inspect(worker, "telegram:78", "wrong-key");
    assertStrictEquals(unauthenticated.status, 401);
  },
);

baton.test("GET /v1/sessions/{key}/inspect shows a run's timeline with event times and its run id's session", async (worker) => {
  const start = await worker.fetch("/v1/runs", {
    method: "POST",
    headers: { authorization: `Bearer ${ACME}`, "content-type": "application/json" },
    body: JSON.stringify({ input: "timeline please", session: "t1" }),
  });
  const run = await json(start);
  assertStrictEquals(start.status, 202);
  assertEquals(run.session_key, "api.acme:t1");
  const events = await worker.fetch(`/v1/runs/${run.run_id}/events`, {
    headers: { authorization: `Bearer ${ACME}` },
  });
  await events.text(); // ends after the run's final event
  const res = await inspect(worker, "api.acme:t1", ACME);
  const body = await json(res);
  assertStrictEquals(res.status, 200);
  const timeline = body.runs[0].events;
  assertEquals(timeline[0].type, "run.queued");
  assertEquals(timeline.at(-1).type, "run.completed");
  assertEquals(timeline.every((e: Json) => typeof e.at === "number"), true);
  assertEquals(typeof timeline.at(-1).duration_ms, "number");
  assertEquals(body.inbox[0].status, "done");
});

baton.test(
  "GET /v1/sessions/{key}/inspect shows a Telegram turn's timeline: its model calls, tool call and reply sent",
  async (worker, fake, telegram) => {
    fake.script(echoSessionInfo());
    await expectOk(await telegramUpdate(worker, "what is my chat?", 900_201, 79));
    await telegram.waitForCalls(1);
    await settled(worker, "telegram:79");
    let body: Json = null;
    // The run's final event is stored as its reply is recorded sent, just after the platform answered.
    await until(async () => {
      const res = await inspect(worker, "telegram:79");
      body = await json(res);
      return res.status === 200 && body.runs[0]?.events.at(-1)?.type === "run.completed";
    }, "a run's final event");
    assertEquals(body.runs.map((r: Json) => r.seq), [body.inbox[0].seq]);
    const events: Json[] = body.runs[0].events;
    assertEquals(events.map((e) => e.type), ONE_TOOL_TURN_EVENTS);
    assertEquals(events[1].data.step, 1);
    assertEquals(events[2].data.tool, "session_info");
    assertEquals(events[5].data.part, "1/1");
    for (const i of [1, 3, 5, 6]) {
      assertEquals(typeof events[i].duration_ms, "number", events[i].type);
    }
  },
);

baton.test(
  "GET /v1/sessions/{key}/inspect shows a refused Telegram reply as reply.failed; its error line names the session key, chat and part",
  async (worker, _fake, telegram) => {
    telegram.respond(() => ({
      status: 400,
      body: { ok: false, error_code: 400, description: "Bad Request: chat not found" },
    }));
    await expectOk(await telegramUpdate(worker, "anyone there?", 900_301, 80));
    let body: Json = null;
    await until(async () => {
      const res = await inspect(worker, "telegram:80");
      body = await json(res);
      return res.status === 200 && body.runs[0]?.events.at(-1)?.type === "run.completed";
    }, "a run's final event");
    const failed = body.runs[0].events.find((e: Json) => e.type === "reply.failed");
    assertEquals(failed.data.part, "1/1");
    assertEquals(String(failed.data.error).includes("chat not found"), true, failed.data.error);
    const lines = worker.output().split("\n").flatMap((text) => {
      try {
        return [JSON.parse(text.slice(text.indexOf("{")))];
      } catch {
        return [];
      }
    });
    const line = lines.find((l) => l.message === "reply not delivered" && l.chat_id === "80");
    assertEquals(
      [line?.level, line?.session_key, line?.platform, line?.seq, line?.part],
      ["error", "telegram:80", "telegram", body.inbox[0].seq, "1/1"],
    );
  },
);

baton.done();

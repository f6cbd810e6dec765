// Approvals end to end in workerd: a tool that asks (APPROVAL_TOOLS=session_info), answered over the API and in Telegram chat, across a restart; Deno + Miniflare.
import { assert, assertEquals, assertMatch, assertStrictEquals } from "@std/assert";
import { API_KEY, type Json, json, sessionState, until, withBaton } from "./_support/clients.ts";
import { askThenEcho, toolRuns } from "./_support/fake_llm_scripts.ts";
import { expectOk, pause } from "./_support/platform_rig.ts";
import { sharedBaton } from "./_support/shared_baton.ts";
import { tempPersistDir, type TestWorker } from "./_support/worker.ts";

const auth = { authorization: `Bearer ${API_KEY}` };
const ASKING = { APPROVAL_TOOLS: "session_info" };
const OTHER_TENANT_KEY = "beta-key-0123456789";
const SECRET = "tg-webhook-secret_42";
const TOKEN = "123456789:AAH-test_bot_token_value";

// One Worker for the file (with a second tenant, and Telegram); the restarts and the short approval
// timeout start their own.
const baton = sharedBaton({
  vars: {
    ...ASKING,
    GATEWAY_API_KEYS: `beta:${OTHER_TENANT_KEY}`,
    TELEGRAM_WEBHOOK_SECRET: SECRET,
    TELEGRAM_BOT_TOKEN: TOKEN,
  },
});

async function startRun(worker: TestWorker, input: string, session: string): Promise<Json> {
  const res = await worker.fetch("/v1/runs", {
    method: "POST",
    headers: { ...auth, "content-type": "application/json" },
    body: JSON.stringify({ input, session }),
  });
  assertStrictEquals(res.status, 202);
  return json(res);
}

const getRun = async (worker: TestWorker, id: string) =>
  json(await worker.fetch(`/v1/runs/${id}`, { headers: auth }));

function answer(worker: TestWorker, id: string, body: unknown, key = API_KEY): Promise<Response> {
  return worker.fetch(`/v1/runs/${id}/approval`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
}

const untilStatus = (worker: TestWorker, id: string, status: string) =>
  until(async () => (await getRun(worker, id)).status === status, status);

/** Every event of a finished run, as `type` plus data. */
async function runEvents(worker: TestWorker, id: string): Promise<Json[]> {
  const text = await (await worker.fetch(`/v1/runs/${id}/events`, { headers: auth })).text();
  return text.split("\n").filter((l) => l.startsWith("data: ")).map((l) => JSON.parse(l.slice(6)));
}

baton.test(
  "POST /v1/runs/{id}/approval approves a waiting run: the tool runs once in the run's own context",
  async (worker, fake) => {
    fake.script(askThenEcho);
    const run = await startRun(worker, "who am i", "appr-a");
    await untilStatus(worker, run.run_id, "waiting_for_approval");
    assertStrictEquals(toolRuns(fake), 0);
    const later = await startRun(worker, "plain after", "appr-a");
    assertEquals((await getRun(worker, later.run_id)).status, "queued");

    assertStrictEquals((await answer(worker, run.run_id, { choice: "maybe" })).status, 400);
    assertStrictEquals((await answer(worker, later.run_id, { choice: "once" })).status, 409);
    const ok = await answer(worker, run.run_id, { choice: "once" });
    assertStrictEquals(ok.status, 200, await ok.clone().text());
    const again = await answer(worker, run.run_id, { choice: "once" });
    assertEquals([again.status, (await json(again)).error?.type], [409, "approval_not_pending"]);

    await untilStatus(worker, later.run_id, "completed");
    const state = await getRun(worker, run.run_id);
    assertEquals(state.status, "completed");
    assertMatch(state.output, /^done: \{"platform":"api","chat_id":"appr-a"/);
    assertStrictEquals(toolRuns(fake), 1);
    assertEquals((await getRun(worker, later.run_id)).output, "re: plain after");
    const events = await runEvents(worker, run.run_id);
    const request = events.find((e) => e.type === "approval.request");
    assertEquals(
      [request.tool, request.arguments, request.choices],
      ["session_info", {}, ["once", "session", "always", "deny"]],
    );
    const responded = events.find((e) => e.type === "approval.responded");
    assertEquals([responded.call_id, responded.choice, responded.by], [
      request.call_id,
      "once",
      "api",
    ]);
    assertEquals(
      events.map((e) => e.type).filter((t) => t.startsWith("approval") || t.startsWith("run.")),
      ["run.queued", "run.started", "approval.request", "approval.responded", "run.completed"],
    );
  },
);

baton.test(
  "POST /v1/runs/{id}/approval deny: the model is told, the tool never runs; another tenant's run is 404",
  async (worker, fake) => {
    const other = OTHER_TENANT_KEY;
    fake.script(askThenEcho);
    const run = await startRun(worker, "do it", "appr-b");
    await untilStatus(worker, run.run_id, "waiting_for_approval");
    assertStrictEquals((await answer(worker, run.run_id, { choice: "once" }, other)).status, 404);
    assertStrictEquals((await answer(worker, run.run_id, { choice: "deny" })).status, 200);
    await untilStatus(worker, run.run_id, "completed");
    assertMatch((await getRun(worker, run.run_id)).output, /the user denied this call/);
    assertStrictEquals(toolRuns(fake), 0);
  },
);

Deno.test("SessionDO keeps a run waiting for approval across a restart; approved after it, the tool runs once", async () => {
  const dir = await tempPersistDir();
  try {
    let id = "";
    await withBaton(async (worker, fake) => {
      fake.script(askThenEcho);
      id = (await startRun(worker, "survive", "appr-r")).run_id;
      await untilStatus(worker, id, "waiting_for_approval");
    }, { persistDir: dir.path, vars: { ...ASKING, TURN_LEASE_MS: "200" } });
    await withBaton(async (worker, fake) => {
      fake.script(askThenEcho);
      await pause(500); // past the lease: the watchdog must not rerun the paused turn
      assertEquals((await getRun(worker, id)).status, "waiting_for_approval");
      assertStrictEquals(fake.requests.length, 0);
      assertStrictEquals((await answer(worker, id, { choice: "once" })).status, 200);
      await untilStatus(worker, id, "completed");
      assertMatch((await getRun(worker, id)).output, /^done: \{"platform":"api"/);
      assertStrictEquals(toolRuns(fake), 1);
      assertStrictEquals(fake.requests.length, 1, "resumed after the tool, not rerun");
      assertEquals((await sessionState(worker, "api:appr-r")).running, false);
    }, { persistDir: dir.path, vars: { ...ASKING, TURN_LEASE_MS: "200" } });
  } finally {
    await dir.cleanup();
  }
});

Deno.test("SessionDO killed right after an approved call ran resumes without running it again", async () => {
  const dir = await tempPersistDir();
  const vars = { ...ASKING, TURN_LEASE_MS: "200" };
  try {
    let id = "";
    await withBaton(async (worker, fake) => {
      // After the tool ran, the model call that would finish the turn never answers before the
      // kill (a delay, not a hold: withBaton releases holds as it stops).
      fake.script((req) =>
        req.body.messages.at(-1).role === "tool"
          ? { kind: "text", text: "too late", delayMs: 60_000 }
          : askThenEcho(req)
      );
      id = (await startRun(worker, "once only", "appr-k")).run_id;
      await untilStatus(worker, id, "waiting_for_approval");
      assertStrictEquals((await answer(worker, id, { choice: "once" })).status, 200);
      await fake.waitForRequests(2);
    }, { persistDir: dir.path, vars });
    await withBaton(async (worker, fake) => {
      // The restart resumes at once (maybe before a script could be set): the default echo answers.
      await untilStatus(worker, id, "completed");
      const resumed = fake.requests[0].body.messages.at(-1);
      assertEquals(resumed.role, "tool", "the model is asked again with the stored result");
      assertMatch(resumed.content, /^\{"platform":"api","chat_id":"appr-k"/);
      const started = (await runEvents(worker, id)).filter((e) => e.type === "tool.started");
      assertStrictEquals(started.length, 1, "the approved call ran once, before the kill");
      assertStrictEquals(fake.requests.length, 1, "resumed after the tool, not rerun");
    }, { persistDir: dir.path, vars });
  } finally {
    await dir.cleanup();
  }
});

Deno.test("SessionDO denies a question nobody answers within APPROVAL_TIMEOUT_MS", async () => {
  await withBaton(async (worker, fake) => {
    fake.script(askThenEcho);
    const run = await startRun(worker, "wait for me", "appr-t");
    await untilStatus(worker, run.run_id, "waiting_for_approval");
    await untilStatus(worker, run.run_id, "completed");
    assertMatch((await getRun(worker, run.run_id)).output, /did not approve this call in time/);
    assertStrictEquals(toolRuns(fake), 0);
    const responded = (await runEvents(worker, run.run_id)).find((e) =>
      e.type === "approval.responded"
    );
    assertEquals([responded.choice, responded.by], ["deny", "timeout"]);
  }, { vars: { ...ASKING, APPROVAL_TIMEOUT_MS: "400" } });
});

const _group = { id: -100777, type: "group", title: "Ops" };
/** The second Telegram test's group: a session of its own on the shared Worker. */
const _group2 = { id: -100778, type: "group", title: "Ops 2" };
const _alice = { id: 42, is_bot: false, first_name: "Alice" };
const _bob = { id: 43, is_bot: false, first_name: "Bob" };
let _update = 900_000;

/** Sends a Telegram text message in the group `chat` from `from`, and expects the ack. */
async function say(
  worker: TestWorker,
  text: string,
  from = _alice,
  chat = _group,
): Promise<void> {
  const update = {
    update_id: _update++,
    message: { message_id: _update, date: Math.floor(Date.now() / 1000), chat, from, text },
  };
  await expectOk(
    await worker.fetch("/webhooks/telegram", {
      method: "POST",
      headers: { "content-type": "application/json", "X-Telegram-Bot-Api-Secret-Token": SECRET },
      body: JSON.stringify(update),
    }),
  );
}

baton.test(
  "POST /webhooks/telegram asks as text; another user's /approve does nothing; yes runs the tool once; waiting messages run after, in order",
  async (worker, fake, telegram) => {
    fake.script(askThenEcho);
    const texts = () => telegram.calls.map((c) => (c.body as { text: string }).text);
    await say(worker, "who am i");
    await until(() => texts().some((t) => t.startsWith("Approval needed: session_info")), "ask");
    await say(worker, "plain one");
    await say(worker, "plain two");
    await say(worker, "/approve", _bob);
    await until(() => texts().some((t) => t.startsWith("Not yours")), "not yours");
    await pause(100);
    assertStrictEquals(toolRuns(fake), 0);
    await say(worker, "yes");
    await until(() => texts().includes("re: plain two"), "all replies");
    await say(worker, "/approve");
    await until(() => texts().includes("Nothing is waiting for approval."), "second answer");
    assertStrictEquals(toolRuns(fake), 1);
    const replies = texts().filter((t) => t.startsWith("done: ") || t.startsWith("re: "));
    assertEquals(replies.length, 3);
    assertMatch(replies[0], /^done: \{"platform":"telegram","chat_id":"-100777".*"user_id":"42"/);
    assertEquals(replies.slice(1), ["re: plain one", "re: plain two"]);
    assertEquals(fake.requests.map((r) => r.lastUserText).filter((t) => t.startsWith("plain")), [
      "plain one",
      "plain two",
    ]);
  },
);

baton.test(
  "POST /webhooks/telegram /deny tells the model; /stop while waiting denies and frees the session",
  async (worker, fake, telegram) => {
    const say2 = (text: string) => say(worker, text, _alice, _group2);
    fake.script(askThenEcho);
    const texts = () => telegram.calls.map((c) => (c.body as { text: string }).text);
    await say2("first");
    await until(() => texts().filter((t) => t.startsWith("Approval needed")).length === 1, "ask");
    await say2("/deny");
    await until(() => texts().some((t) => /^done: .*the user denied this call/.test(t)), "denied");
    await say2("second");
    await until(() => texts().filter((t) => t.startsWith("Approval needed")).length === 2, "ask 2");
    assert((await sessionState(worker, "telegram:-100778")).running);
    await say2("/stop");
    await until(() => texts().includes("Stopped. The session is unlocked."), "stopped");
    assertEquals((await sessionState(worker, "telegram:-100778")).running, false);
    await say2("plain free");
    await until(() => texts().includes("re: plain free"), "free");
    assertStrictEquals(toolRuns(fake), 0);
  },
);

baton.done();

// Busy sessions in workerd: queue, interrupt and merge modes, the queue cap, and commands that always answer; Deno + Miniflare.
import { assert, assertEquals, assertMatch, assertStrictEquals } from "@std/assert";
import {
  API_KEY,
  json,
  sendWebhook,
  sessionState,
  until,
  untilQueued,
  withBaton,
} from "./_support/clients.ts";
import { holdOn } from "./_support/fake_llm_scripts.ts";
import { sharedBaton } from "./_support/shared_baton.ts";
import { deliver, replies } from "./_support/drivers/mod.ts";
import { telegramDriver } from "./_support/drivers/telegram.ts";
import { QUEUE_FULL_NOTICE } from "../lib/chat/mod.ts";

// One Worker for the file in the default queue mode; interrupt and merge each start their own.
const baton = sharedBaton();

const hook = (worker: Parameters<typeof sendWebhook>[0], session: string, text: string) =>
  sendWebhook(worker, { session, text }).then(async (res) => ({
    status: res.status,
    body: await json(res),
  }));

baton.test(
  "BUSY_INPUT_MODE=queue runs three messages sent during a slow turn as three turns in order",
  async (worker, fake) => {
    fake.script(holdOn("slow", "re "));
    const first = hook(worker, "q", "slow");
    await fake.waitForRequests(1);
    const later = [];
    for (const [i, text] of ["one", "two", "three"].entries()) {
      later.push(hook(worker, "q", text));
      await untilQueued(worker, "webhook:q", i + 1);
    }
    fake.release();
    assertEquals((await first).body.reply, "slow");
    assertEquals((await Promise.all(later)).map((r) => r.body.reply), [
      "re one",
      "re two",
      "re three",
    ]);
    assertEquals(fake.requests.map((r) => r.lastUserText), ["slow", "one", "two", "three"]);
    assertStrictEquals(fake.maxInFlightBySession.get(""), 1);
  },
);

Deno.test("BUSY_INPUT_MODE=interrupt aborts the running turn, keeps its partial work marked, then runs the newest", async () => {
  await withBaton(async (worker, fake) => {
    fake.script((req) => {
      if (req.lastUserText === "last") return { kind: "text", text: "final answer" };
      const messages: { role: string }[] = req.body.messages;
      const toolDone = messages.slice(messages.findLastIndex((m) => m.role === "user")).some((m) =>
        m.role === "tool"
      );
      return toolDone ? { kind: "hold" } : { kind: "tool_call", name: "session_info", args: {} };
    });
    const first = hook(worker, "i", "first");
    await fake.waitForRequests(2); // the tool step is done; the second model call hangs
    const second = hook(worker, "i", "second");
    await fake.waitForRequests(4);
    const last = hook(worker, "i", "last");
    const results = await Promise.all([first, second, last]);
    assertEquals(results.map((r) => r.status), [409, 409, 200]);
    assertEquals(results[0].body.error.type, "interrupted");
    assertEquals(results[2].body.reply, "final answer");
    await until(() => fake.inFlight === 0, "interrupted model calls aborted");
    const state = await sessionState(worker, "webhook:i");
    assertEquals(state.messages.map((m) => m.role), [
      "user",
      "assistant",
      "tool",
      "assistant",
      "user",
      "assistant",
      "tool",
      "assistant",
      "user",
      "assistant",
    ]);
    assertMatch(state.messages[3].content, /interrupted/);
    assertEquals(state.messages.slice(-2).map((m) => m.content), ["last", "final answer"]);
    assert(!state.running);
  }, { vars: { BUSY_INPUT_MODE: "interrupt" } });
});

Deno.test("BUSY_INPUT_MODE=merge answers messages sent during a turn once, joined in arrival order", async () => {
  await withBaton(async (worker, fake) => {
    fake.script(holdOn("slow", "re "));
    const first = hook(worker, "m", "slow");
    await fake.waitForRequests(1);
    const later = [];
    for (const [i, text] of ["one", "two", "three"].entries()) {
      later.push(hook(worker, "m", text));
      await untilQueued(worker, "webhook:m", i + 1);
    }
    fake.release();
    await first;
    const replies = (await Promise.all(later)).map((r) => r.body.reply);
    assertEquals(replies, ["re one\ntwo\nthree", "re one\ntwo\nthree", "re one\ntwo\nthree"]);
    assertEquals(fake.requests.map((r) => r.lastUserText), ["slow", "one\ntwo\nthree"]);
  }, { vars: { BUSY_INPUT_MODE: "merge" } });
});

baton.test(
  "MAX_QUEUED refuses the 33rd waiting message with 429 and drops nothing else",
  async (worker, fake) => {
    fake.script(holdOn("slow"));
    const first = hook(worker, "cap", "slow");
    await fake.waitForRequests(1);
    const waiting = Array.from({ length: 32 }, (_, i) => hook(worker, "cap", `m${i}`));
    await untilQueued(worker, "webhook:cap", 32);
    const refused = await hook(worker, "cap", "one too many");
    assertStrictEquals(refused.status, 429);
    assertEquals(refused.body.error.type, "queue_full");
    fake.release();
    await first;
    const replies = (await Promise.all(waiting)).map((r) => r.body.reply);
    assertEquals(replies, Array.from({ length: 32 }, (_, i) => `m${i}`));
    assert(!fake.requests.some((r) => r.lastUserText === "one too many"));
  },
);

baton.test(
  "/stop during a turn answers at once, cancels the turn and the queue, and unlocks the session",
  async (worker, fake) => {
    fake.script(holdOn("slow", "re "));
    const first = hook(worker, "s", "slow");
    await fake.waitForRequests(1);
    const queued = hook(worker, "s", "queued behind");
    await untilQueued(worker, "webhook:s", 1);
    const stop = await hook(worker, "s", "/stop");
    assertEquals(stop.status, 200);
    assertMatch(stop.body.reply, /Stopped.*Dropped 1 waiting message/);
    assertEquals((await first).status, 409);
    assertEquals((await first).body.error.type, "cancelled");
    assertEquals((await queued).status, 409);
    const state = await sessionState(worker, "webhook:s");
    assertEquals([state.running, state.queued], [false, 0]);
    fake.release(); // the stopped run's late end changes nothing
    assertEquals((await hook(worker, "s", "after")).body.reply, "re after");
    const after = await sessionState(worker, "webhook:s");
    assertEquals(after.messages.map((m) => m.content), [
      "slow",
      "(interrupted: stopped)",
      "after",
      "re after",
    ]);
    assertEquals(fake.requests.map((r) => r.lastUserText), ["slow", "after"]);
  },
);

baton.test("/status answers mid-turn, before the turn ends", async (worker, fake) => {
  fake.script(() => ({ kind: "hold" }));
  const first = hook(worker, "st", "slow");
  await fake.waitForRequests(1);
  const status = await hook(worker, "st", "/status");
  assertMatch(
    status.body.reply,
    // Its first line; the context size (CONTEXT_TOKENS) and the model follow on lines of their own.
    /^Working on a reply for \d+ s \(step 1\); 0 messages waiting\.(\n|$)/,
  );
  assertStrictEquals(fake.inFlight, 1, "the turn is still running");
  fake.release();
  assertEquals((await first).body.reply, "slow");
  assertMatch((await hook(worker, "st", "/status")).body.reply, /^Idle/);
});

baton.test(
  "/new starts a fresh conversation: the next turn sees no old history",
  async (worker, fake) => {
    await hook(worker, "n", "remember the old chat");
    assertMatch((await hook(worker, "n", "/reset")).body.reply, /new conversation/);
    await hook(worker, "n", "fresh start");
    assertEquals(fake.requests.at(-1)!.body.messages.map((m: { content: string }) => m.content), [
      "fresh start",
    ]);
    assertEquals((await sessionState(worker, "webhook:n")).messages.map((m) => m.content), [
      "fresh start",
      "fresh start",
    ]);
  },
);

baton.test(
  "/help, /start and unknown commands answer without a model call or a claim",
  async (worker, fake) => {
    assertMatch((await hook(worker, "c", "/help")).body.reply, /\/stop/);
    assertMatch((await hook(worker, "c", "/start")).body.reply, /Hi/);
    assertMatch(
      (await hook(worker, "c", "/frobnicate now")).body.reply,
      /^Unknown command \/frobnicate/,
    );
    assertStrictEquals(fake.requests.length, 0);
    const state = await sessionState(worker, "webhook:c");
    assertEquals([state.running, state.queued, state.messages.length], [false, 0, 0]);
  },
);

baton.test(
  "POST /v1/sessions/{key}/stop and /reset stop a running API turn",
  async (worker, fake) => {
    fake.script(() => ({ kind: "hold" }));
    const call = worker.fetch("/v1/chat/completions", {
      method: "POST",
      headers: { authorization: `Bearer ${API_KEY}`, "x-session-id": "ctl" },
      body: JSON.stringify({ messages: [{ role: "user", content: "long job" }] }),
    });
    await fake.waitForRequests(1);
    const stop = await worker.fetch(`/v1/sessions/${encodeURIComponent("api:ctl")}/stop`, {
      method: "POST",
      headers: { authorization: `Bearer ${API_KEY}` },
    });
    assertEquals((await json(stop)).stopped, true);
    const res = await call;
    assertStrictEquals(res.status, 409);
    assertEquals((await json(res)).error.type, "cancelled");
    const reset = await worker.fetch(`/v1/sessions/${encodeURIComponent("api:ctl")}/reset`, {
      method: "POST",
      headers: { authorization: `Bearer ${API_KEY}` },
    });
    assertEquals((await json(reset)).status, "reset");
    assertEquals((await sessionState(worker, "api:ctl")).messages, []);
  },
);

// A Telegram chat with room for one waiting message: refusals, and the notices they get.
const tight = sharedBaton({
  vars: { MAX_QUEUED: "1", BUSY_ACK: "off", ...telegramDriver.vars() },
  label: "MAX_QUEUED=1",
});

tight.test(
  "MAX_QUEUED: 8 messages refused in one chat get one queue-full notice, not 8",
  async (worker, fake, platform) => {
    telegramDriver.vars(platform);
    const chat = telegramDriver.newChat();
    const send = async (text: string) =>
      await deliver(worker.fetch, telegramDriver, await telegramDriver.message({ chat, text }));
    fake.script(holdOn("slow"));
    await (await send("slow")).text();
    await fake.waitForRequests(1);
    await (await send("waits")).text();
    await untilQueued(worker, telegramDriver.session(chat), 1);
    for (let i = 0; i < 8; i++) await (await send(`refused ${i}`)).text();
    fake.release();
    await until(
      () => replies(telegramDriver, platform, chat).includes("waits"),
      "the waiting message's reply",
    );
    const sent = replies(telegramDriver, platform, chat);
    assertEquals(sent.filter((text) => text === QUEUE_FULL_NOTICE).length, 1, sent.join(" | "));
    assert(!fake.requests.some((r) => r.lastUserText.startsWith("refused")), "none ran");
  },
);

baton.done();
tight.done();

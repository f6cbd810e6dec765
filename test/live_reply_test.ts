// Typing and streamed previews in workerd: Telegram drafts and chat actions, Discord's @original growing, Slack's status; the final reply exactly once; Deno + Miniflare.
import { assert, assertEquals, assertStrictEquals } from "@std/assert";
import { discordDriver, discordInteractionToken } from "./_support/drivers/discord.ts";
import { deliver } from "./_support/drivers/mod.ts";
import { telegramDriver } from "./_support/drivers/telegram.ts";
import type { FakeModelStep } from "../lib/testing/fake_model.ts";
import type { PlatformCall } from "./_support/fake_platform.ts";
import { expectOk, pause, withPlatform } from "./_support/platform_rig.ts";
import { sharedBaton } from "./_support/shared_baton.ts";
import type { TestWorker } from "./_support/worker.ts";
import { PREVIEW_STOPPED } from "../lib/session/live_reply.ts";

const TG = { ...telegramDriver.vars(), STREAM_REPLIES: "on" };
// Each test's turns in a session of its own: Alice's, Bob's and Carol's private chats, a group.
const _alice = { id: "42", name: "Alice" };
const _bob = { id: "43", name: "Bob" };
const _carol = { id: "44", name: "Carol" };
const _group = "-100555";
let _update = 800_000;

// One Worker for the file with previews on (Telegram and Discord); the test of STREAM_REPLIES=off
// starts its own for that part.
const baton = sharedBaton({ vars: { ...TG, ...discordDriver.vars(), STREAM_REPLIES: "on" } });

/** A reply in 24 pieces, written one every 150 ms (about 3.6 s in all). */
const REPLY = "The quick brown fox jumps over the lazy dog, again and again and again.";
const PIECES = 24;
const slow: FakeModelStep = { kind: "text", text: REPLY, pieces: PIECES, pieceDelayMs: 150 };

/**
 * `text` from `from` as Telegram delivers it (telegramDriver's shape and secret): in their private
 * chat, or in the group when `group`.
 */
async function tgSay(
  worker: TestWorker,
  text: string,
  from = _alice,
  group = false,
): Promise<void> {
  const id = String(_update++);
  const update = telegramDriver.shape({ chat: group ? _group : from.id, text, id, from, group });
  const body = JSON.stringify(update);
  const headers = await telegramDriver.sign(body, telegramDriver.credentials);
  await expectOk(await deliver(worker.fetch, telegramDriver, { headers, body, id }));
}

const ending = (calls: PlatformCall[], method: string) =>
  calls.filter((c) => c.path.endsWith(`/${method}`));

async function until(check: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 15_000;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await pause(20);
  }
}

baton.test(
  "LiveReply on Telegram: typing, then drafts of the growing reply (throttled), then one sendMessage",
  async (worker, fake, telegram) => {
    fake.script(() => slow);
    await tgSay(worker, "tell me");
    await until(() => ending(telegram.calls, "sendMessage").length === 1, "the reply");
    await pause(300);
    const sent = ending(telegram.calls, "sendMessage");
    assertEquals(sent.map((c) => c.body.text), [REPLY]);
    const drafts = ending(telegram.signals, "sendMessageDraft");
    assert(drafts.length >= 2, `${drafts.length} drafts`);
    assert(drafts.length <= PIECES / 3, `throttled: ${drafts.length} drafts for ${PIECES} pieces`);
    for (const d of drafts) assert(REPLY.startsWith(d.body.text), "a draft is the reply so far");
    assertEquals(new Set(drafts.map((d) => d.body.draft_id)).size, 1, "one draft per turn");
    const typing = ending(telegram.signals, "sendChatAction");
    assert(typing.length >= 1);
    assertEquals(typing[0].body.action, "typing");
    const last = Math.max(...[...drafts, ...typing].map((c) => c.order));
    assert(last < sent[0].order, "no typing or draft after the reply");
  },
);

baton.test(
  "LiveReply on Telegram: a group gets typing but no drafts; STREAM_REPLIES=off none",
  async (worker, fake, telegram) => {
    fake.script(() => slow);
    await tgSay(worker, "in the group", _alice, true);
    await until(() => ending(telegram.calls, "sendMessage").length === 1, "the reply");
    assertStrictEquals(ending(telegram.signals, "sendMessageDraft").length, 0);
    assert(ending(telegram.signals, "sendChatAction").length >= 1);
    // Its own Worker: previews off is the configuration under test.
    await withPlatform({ ...TG, STREAM_REPLIES: "off" }, async (worker, fake, telegram) => {
      fake.script(() => slow);
      await tgSay(worker, "no previews");
      await until(() => ending(telegram.calls, "sendMessage").length === 1, "the reply");
      assertStrictEquals(ending(telegram.signals, "sendMessageDraft").length, 0);
    });
  },
);

baton.test(
  "LiveReply on Telegram: a 429 on a draft stops the drafts, and the reply still arrives once",
  async (worker, fake, telegram) => {
    fake.script(() => slow);
    telegram.respondToSignals((call) =>
      call.path.endsWith("/sendMessageDraft")
        ? {
          status: 429,
          body: { ok: false, error_code: 429, parameters: { retry_after: 1 } },
        }
        : { status: 200, body: { ok: true, result: true } }
    );
    await tgSay(worker, "rate me", _bob);
    await until(() => ending(telegram.calls, "sendMessage").length === 1, "the reply");
    await pause(300);
    assertStrictEquals(ending(telegram.signals, "sendMessageDraft").length, 1);
    assertEquals(ending(telegram.calls, "sendMessage").map((c) => c.body.text), [REPLY]);
  },
);

baton.test(
  "LiveReply on Telegram: /stop mid-stream ends the drafts and sends no reply",
  async (worker, fake, telegram) => {
    fake.script((req) => req.lastUserText === "/stop" ? { kind: "text", text: "-" } : slow);
    await tgSay(worker, "long one", _carol);
    await until(() => ending(telegram.signals, "sendMessageDraft").length >= 1, "a draft");
    await tgSay(worker, "/stop", _carol);
    await until(() => ending(telegram.calls, "sendMessage").length >= 1, "the stop notice");
    await pause(1_500);
    const texts = ending(telegram.calls, "sendMessage").map((c) => String(c.body.text));
    assert(!texts.includes(REPLY), `no final reply: ${JSON.stringify(texts)}`);
    const stopNotice = ending(telegram.calls, "sendMessage")[0].order;
    const drafts = ending(telegram.signals, "sendMessageDraft");
    assert(drafts.every((d) => d.order < stopNotice + 2), "no draft long after the stop");
  },
);

let _ids = 0;

/** Sends `/ask <text>` in guild channel `channel` (discordDriver's shape, signed by it); returns the interaction's token. */
async function ask(
  worker: TestWorker,
  text: string,
  channel = "1300000000000000002",
): Promise<string> {
  const id = `12000000000${String(++_ids).padStart(8, "0")}`;
  const interaction = discordDriver.shape({ chat: channel, text, id });
  const body = JSON.stringify(interaction);
  const headers = await discordDriver.sign(body, discordDriver.credentials);
  const res = await deliver(worker.fetch, discordDriver, { headers, body, id });
  assertStrictEquals(res.status, 200);
  await res.body?.cancel();
  return discordInteractionToken(channel, id);
}

baton.test(
  "LiveReply on Discord: @original grows in throttled edits, and the last edit is the whole reply",
  async (worker, fake, discord) => {
    fake.script(() => slow);
    const token = await ask(worker, "grow");
    const edits = () =>
      discord.calls.filter((c) => c.path.includes(`/${token}/messages/@original`));
    await until(() => edits().some((c) => c.body.content === REPLY), "the final edit");
    await pause(500);
    const contents = edits().map((c) => String(c.body.content));
    assert(contents.length >= 3, `${contents.length} edits`);
    assert(contents.length <= PIECES / 3 + 1, `throttled: ${contents.length} edits`);
    assertEquals(contents.at(-1), REPLY);
    // On a loaded machine a preview can catch the last piece and show the whole text just before
    // the reply's own edit: the same text twice in one message, never a second message.
    assert(
      contents.filter((c) => c === REPLY).length <= 2,
      "the whole reply at most previewed once",
    );
    for (const c of contents) assert(REPLY.startsWith(c), "a preview is the reply so far");
  },
);

baton.test(
  "LiveReply on Discord: a stopped turn's preview is replaced by the stopped notice",
  async (worker, fake, discord) => {
    // A channel of its own: the test stops its session.
    const channel = "1300000000000000003";
    fake.script(() => slow);
    const token = await ask(worker, "stop me", channel);
    const edits = () =>
      discord.calls.filter((c) => c.path.includes(`/${token}/messages/@original`));
    await until(() => edits().length >= 1, "a preview");
    const stop = await worker.fetch(
      `/v1/sessions/${encodeURIComponent(`discord:${channel}`)}/stop`,
      { method: "POST", headers: { authorization: "Bearer test-gateway-key" } },
    );
    assertStrictEquals(stop.status, 200);
    await until(() => edits().some((c) => c.body.content === PREVIEW_STOPPED), "the notice");
    await pause(800);
    assertEquals(edits().at(-1)?.body.content, PREVIEW_STOPPED);
    assert(!edits().some((c) => c.body.content === REPLY), "no final reply");
  },
);

baton.done();

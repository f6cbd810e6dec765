// Approval buttons end to end in workerd: Telegram inline keyboards, Slack block buttons, Discord components; a click answers like /approve; Deno + Miniflare.
import { assertEquals, assertMatch, assertStrictEquals } from "@std/assert";
import { json, until } from "./_support/clients.ts";
import { discordDriver } from "./_support/drivers/discord.ts";
import { deliver } from "./_support/drivers/mod.ts";
import { SLACK_TEAM, slackDriver } from "./_support/drivers/slack.ts";
import { telegramDriver } from "./_support/drivers/telegram.ts";
import { askThenEcho, toolRuns } from "./_support/fake_llm_scripts.ts";
import type { PlatformCall } from "./_support/fake_platform.ts";
import { expectOk, pause, withPlatform } from "./_support/platform_rig.ts";
import { sharedBaton } from "./_support/shared_baton.ts";
import type { TestWorker } from "./_support/worker.ts";

const ASKING = { APPROVAL_TOOLS: "session_info" };

// Each platform's settings are its driver's (Discord's key pair made once, with the driver).
const SLACK = { ...ASKING, ...slackDriver.vars() };
const CHANNEL = "1300000000000000001";
const DISCORD = { ...ASKING, ...discordDriver.vars() };
const TG = { ...ASKING, ...telegramDriver.vars() };

/** Carol, an admin (`ADMIN_USERS`) of the Telegram group tests: may stop anyone's turn. */
const _carol = { id: 44, is_bot: false, first_name: "Carol" };

// One Worker for Telegram, Slack and Discord under the open policy, each test in a chat of its
// own; the allowlist test starts its own.
const baton = sharedBaton({
  vars: { ...TG, ...SLACK, ...DISCORD, ADMIN_USERS: `telegram:${_carol.id}` },
});

/** The choice data of the first question sent, once it is there (`of` finds a call's buttons). */
async function questionData(
  calls: PlatformCall[],
  of: (call: PlatformCall) => string[] | undefined,
): Promise<string[]> {
  await until(() => calls.some((c) => of(c)?.length), "the question with its buttons");
  return of(calls.find((c) => of(c)?.length)!)!;
}

// ── Telegram ────────────────────────────────────────────────────────────────────────────────────

const _group = { id: -100777, type: "group", title: "Ops" };
/** The group of the test with two questions: a session of its own on the shared Worker. */
const _group2 = { id: -100779, type: "group", title: "Ops 2" };
const _alice = { id: 42, is_bot: false, first_name: "Alice" };
const _bob = { id: 43, is_bot: false, first_name: "Bob" };
let _update = 700_000;

/** POST /webhooks/telegram: `update` signed by telegramDriver. */
async function telegram(
  worker: TestWorker,
  update: Record<string, unknown> & { update_id: number },
): Promise<Response> {
  const body = JSON.stringify(update);
  const headers = await telegramDriver.sign(body, telegramDriver.credentials);
  return await deliver(worker.fetch, telegramDriver, { headers, body, id: `${update.update_id}` });
}

/** `from`'s message `text` in the group `chat`, as telegramDriver shapes it. */
const tgSay = async (worker: TestWorker, text: string, from = _alice, chat = _group) =>
  await expectOk(
    await telegram(
      worker,
      telegramDriver.shape({
        chat: String(chat.id),
        text,
        id: String(_update),
        from: { id: String(from.id), name: from.first_name },
        group: true,
        event: String(_update++),
      }) as { update_id: number },
    ),
  );

const tgClick = async (
  worker: TestWorker,
  data: string,
  from = _alice,
  ack: unknown = { ok: true },
  chat = _group,
) =>
  await expectOk(
    // A callback query, which the driver does not shape: written as Telegram sends one.
    await telegram(worker, {
      update_id: _update++,
      callback_query: {
        id: `cbq-${_update}`,
        from,
        chat_instance: "ci",
        data,
        message: { message_id: 5, date: 1, chat, text: "Approval needed" },
      },
    }),
    ack,
  );

baton.test(
  "POST /webhooks/telegram: the question carries an inline keyboard; another user's click is not theirs, the starter's runs the tool once, a second click does nothing",
  async (worker, fake, platform) => {
    fake.script(askThenEcho);
    const toasts = () =>
      platform.calls.filter((c) => c.path.endsWith("/answerCallbackQuery")).map((c) =>
        c.body.text as string
      );
    await tgSay(worker, "who am i");
    const [once] = await questionData(
      platform.calls,
      (c) =>
        c.body?.reply_markup?.inline_keyboard?.flat().map((b: { callback_data: string }) =>
          b.callback_data
        ),
    );
    await tgClick(worker, once, _bob);
    await until(() => toasts().length === 1, "bob's toast");
    assertMatch(toasts()[0], /^Not yours/);
    await pause(100);
    assertStrictEquals(toolRuns(fake), 0);

    await tgClick(worker, once);
    await until(
      () => platform.calls.some((c) => String(c.body?.text).startsWith("done: ")),
      "done",
    );
    assertEquals(toasts()[1], "Approved: session_info");
    await tgClick(worker, once);
    await until(() => toasts().length === 3, "second toast");
    assertEquals(toasts()[2], "Already answered");
    await pause(100);
    assertStrictEquals(toolRuns(fake), 1);
    const done = platform.calls.find((c) => String(c.body?.text).startsWith("done: "))!;
    assertMatch(
      done.body.text,
      /^done: \{"platform":"telegram","chat_id":"-100777".*"user_id":"42"/,
    );
  },
);

// Its own Worker: the allowlist is what it tests.
Deno.test("POST /webhooks/telegram: a click by a sender the access policy does not know is refused before its session", async () => {
  const vars = { ...TG, ACCESS_POLICY: "allowlist", ALLOWED_USERS: "telegram:42" };
  await withPlatform(vars, async (worker, fake, platform) => {
    fake.script(askThenEcho);
    await tgSay(worker, "who am i");
    const [once] = await questionData(
      platform.calls,
      (c) =>
        c.body?.reply_markup?.inline_keyboard?.flat().map((b: { callback_data: string }) =>
          b.callback_data
        ),
    );
    await tgClick(worker, once, _bob, { ok: true, ignored: "sender not allowed" });
    await until(() => platform.calls.some((c) => c.path.endsWith("/answerCallbackQuery")), "toast");
    const toast = platform.calls.find((c) => c.path.endsWith("/answerCallbackQuery"))!;
    assertEquals(toast.body.text, "Not allowed");
    await pause(100);
    assertStrictEquals(toolRuns(fake), 0);
  });
});

baton.test(
  "POST /webhooks/telegram: a click on an earlier question's button never answers the question asked after it",
  async (worker, fake, platform) => {
    // Two calls in turn, each asking: session_info twice, then the reply.
    fake.script((req) => {
      const results = req.body.messages.filter((m: { role: string }) => m.role === "tool").length;
      if (results < 2) {
        return { kind: "tool_call", name: "session_info", args: {}, id: `call_${results}` };
      }
      return { kind: "text", text: "done twice" };
    });
    const keyboards = () =>
      platform.calls.filter((c) => c.body?.reply_markup).map((c) =>
        c.body.reply_markup.inline_keyboard.flat().map((b: { callback_data: string }) =>
          b.callback_data
        )
      );
    const toasts = () =>
      platform.calls.filter((c) => c.path.endsWith("/answerCallbackQuery")).map((c) => c.body.text);
    await tgSay(worker, "twice", _alice, _group2);
    await until(() => keyboards().length === 1, "first question");
    const [firstOnce] = keyboards()[0];
    await tgClick(worker, firstOnce, _alice, { ok: true }, _group2);
    await until(() => keyboards().length === 2, "second question");
    await tgClick(worker, firstOnce, _alice, { ok: true }, _group2);
    await until(() => toasts().length === 2, "second toast");
    assertEquals(toasts(), ["Approved: session_info", "Already answered"]);
    await pause(100);
    assertStrictEquals(toolRuns(fake), 1);
    await tgClick(worker, keyboards()[1][3], _alice, { ok: true }, _group2);
    await until(() => platform.calls.some((c) => c.body?.text === "done twice"), "done");
    assertEquals(toasts()[2], "Denied: session_info will not run");
    assertStrictEquals(toolRuns(fake), 1);
  },
);

/** The group of the per-member grant test, and of the /stop test: sessions of their own. */
const _group3 = { id: -100781, type: "group", title: "Ops 3" };
const _group4 = { id: -100783, type: "group", title: "Ops 4" };

/** Every inline keyboard sent so far, as its buttons' callback data. */
const tgKeyboards = (calls: PlatformCall[]): string[][] =>
  calls.filter((c) => c.body?.reply_markup).map((c) =>
    c.body.reply_markup.inline_keyboard.flat().map((b: { callback_data: string }) =>
      b.callback_data
    )
  );

baton.test(
  "POST /webhooks/telegram: in a group, Alice's Always click lets only Alice's later calls run unasked; Bob's call still asks",
  async (worker, fake, platform) => {
    fake.script(askThenEcho);
    const dones = () => platform.calls.filter((c) => String(c.body?.text).startsWith("done: "));
    await tgSay(worker, "who am i", _alice, _group3);
    await until(() => tgKeyboards(platform.calls).length === 1, "alice's question");
    const always = tgKeyboards(platform.calls)[0][2];
    assertMatch(always, /:a$/);
    await tgClick(worker, always, _alice, { ok: true }, _group3);
    await until(() => dones().length === 1, "alice's reply");

    await tgSay(worker, "who am i", _bob, _group3);
    await until(
      () => tgKeyboards(platform.calls).length === 2 || dones().length === 2,
      "bob's question (or, wrongly, his reply)",
    );
    assertEquals(dones().length, 1, "bob's call did not run on alice's grant");
    assertStrictEquals(toolRuns(fake), 1);
    // Bob's own answer still decides his call.
    await tgClick(worker, tgKeyboards(platform.calls)[1][3], _bob, { ok: true }, _group3);
    await until(() => dones().length === 2, "bob's reply");
    assertStrictEquals(toolRuns(fake), 1);

    await tgSay(worker, "who am i", _alice, _group3);
    await until(() => dones().length === 3, "alice's second reply, unasked");
    assertEquals(tgKeyboards(platform.calls).length, 2);
    assertStrictEquals(toolRuns(fake), 2);
  },
);

baton.test(
  "POST /webhooks/telegram: in a group, Bob's /stop of Alice's turn is refused; an admin's stops it",
  async (worker, fake, platform) => {
    fake.script(askThenEcho);
    const texts = () =>
      platform.calls.filter((c) => c.path.endsWith("/sendMessage")).map((c) => String(c.body.text));
    const toasts = () =>
      platform.calls.filter((c) => c.path.endsWith("/answerCallbackQuery")).map((c) => c.body.text);
    await tgSay(worker, "who am i", _alice, _group4);
    await until(() => tgKeyboards(platform.calls).length === 1, "alice's question");
    const [once] = tgKeyboards(platform.calls)[0];

    await tgSay(worker, "/stop", _bob, _group4);
    await until(
      () => texts().some((t) => t.startsWith("Not yours") || t.startsWith("Stopped")),
      "bob's answer",
    );
    assertEquals(
      texts().at(-1),
      "Not yours: only who started the current reply (or an admin) can /stop it.",
    );

    await tgSay(worker, "/stop", _carol, _group4);
    await until(() => texts().some((t) => t.startsWith("Stopped")), "carol's answer");
    assertEquals(texts().at(-1), "Stopped. The session is unlocked.");
    // The question went with the turn: Alice's click answers nothing, the tool never runs.
    await tgClick(worker, once, _alice, { ok: true }, _group4);
    await until(() => toasts().length === 1, "alice's toast");
    assertEquals(toasts(), ["Already answered"]);
    await pause(100);
    assertStrictEquals(toolRuns(fake), 0);
  },
);

// ── Slack ───────────────────────────────────────────────────────────────────────────────────────

const THREAD = "1700000000.000100";

/**
 * POST /webhooks/slack: `body` signed by slackDriver; a `form` (an interactivity payload) goes
 * form-encoded, as Slack posts one (the signature does not cover the content type).
 */
async function slack(worker: TestWorker, body: string, form: boolean): Promise<Response> {
  const headers = await slackDriver.sign(body, slackDriver.credentials);
  if (form) headers["content-type"] = "application/x-www-form-urlencoded";
  return await deliver(worker.fetch, slackDriver, { headers, body, id: "" });
}

async function slackClick(worker: TestWorker, value: string, user: string): Promise<void> {
  // A block_actions click, which the driver does not shape: in the driver's workspace.
  const payload = {
    type: "block_actions",
    user: { id: user, username: user, team_id: SLACK_TEAM },
    team: { id: SLACK_TEAM },
    channel: { id: "C1" },
    container: { type: "message", message_ts: "1700000000.000200", thread_ts: THREAD },
    message: { ts: "1700000000.000200", thread_ts: THREAD },
    actions: [{ type: "button", value, action_ts: String(Date.now()) }],
  };
  const res = await slack(worker, `payload=${encodeURIComponent(JSON.stringify(payload))}`, true);
  assertStrictEquals(res.status, 200, await res.clone().text());
  await res.body?.cancel();
}

baton.test(
  "POST /webhooks/slack: the question carries block buttons; a block_actions click by another user is not theirs, the starter's runs the tool once, a second does nothing",
  async (worker, fake, platform) => {
    fake.script(askThenEcho);
    const ephemerals = () =>
      platform.calls.filter((c) => c.path.endsWith("/chat.postEphemeral")).map((c) => c.body);
    const mention = slackDriver.shape({
      chat: "C1",
      text: "who am i",
      id: THREAD,
      from: { id: "U1", name: "U1" },
      group: true,
      mention: true,
    });
    await expectOk(await slack(worker, JSON.stringify(mention), false));
    const [once] = await questionData(
      platform.calls,
      (c) =>
        c.body?.blocks?.find((b: { type: string }) => b.type === "actions")?.elements.map((
          e: { value: string },
        ) => e.value),
    );
    await slackClick(worker, once, "U2");
    await until(() => ephemerals().length === 1, "U2's ephemeral");
    assertMatch(ephemerals()[0].text, /^Not yours/);
    assertEquals([ephemerals()[0].user, ephemerals()[0].thread_ts], ["U2", THREAD]);
    await pause(100);
    assertStrictEquals(toolRuns(fake), 0);

    await slackClick(worker, once, "U1");
    await until(
      () => platform.calls.some((c) => String(c.body?.text).startsWith("done: ")),
      "done",
    );
    assertEquals(ephemerals()[1].text, "Approved: session_info");
    await slackClick(worker, once, "U1");
    await until(() => ephemerals().length === 3, "second ephemeral");
    assertEquals(ephemerals()[2].text, "Already answered");
    await pause(100);
    assertStrictEquals(toolRuns(fake), 1);
  },
);

// ── Discord ─────────────────────────────────────────────────────────────────────────────────────

const ADA = { id: "1500000000000000001", username: "ada" };
const BEN = { id: "1500000000000000002", username: "ben" };
let _interaction = 0;

/** POST /webhooks/discord: `payload` signed by discordDriver. */
async function discord(
  worker: TestWorker,
  payload: Record<string, unknown> & { id: string },
): Promise<Response> {
  const body = JSON.stringify(payload);
  const headers = await discordDriver.sign(body, discordDriver.credentials);
  return await deliver(worker.fetch, discordDriver, { headers, body, id: payload.id });
}

/** discordDriver's `/ask prompt:<text>` by `user` in CHANNEL, under a fresh interaction id. */
function command(text: string, user: typeof ADA) {
  const id = `12000000000${String(++_interaction).padStart(8, "0")}`;
  const from = { id: user.id, name: user.username };
  return discordDriver.shape({ chat: CHANNEL, text, id, from }) as Record<string, unknown> & {
    id: string;
  };
}

/** Clicks `customId` as `user`; returns the ephemeral text the clicker was answered with. */
async function discordClick(worker: TestWorker, customId: string, user: typeof ADA) {
  // A button click, which the driver does not shape: its command's fields, a component's data.
  const res = await discord(worker, {
    ...command("", user),
    type: 3,
    message: { id: "1900000000000000001" },
    data: { custom_id: customId, component_type: 2 },
  });
  const body = await json(res);
  assertEquals([res.status, body.type, body.data?.flags], [200, 4, 64], JSON.stringify(body));
  return body.data.content as string;
}

baton.test(
  "POST /webhooks/discord: the question carries buttons; a component click by another user is not theirs, the starter's runs the tool once, a second does nothing",
  async (worker, fake, platform) => {
    fake.script(askThenEcho);
    const asked = await discord(worker, command("who am i", ADA));
    assertEquals(await json(asked), { type: 5 });
    const [once] = await questionData(
      platform.calls,
      (c) => c.body?.components?.[0]?.components.map((b: { custom_id: string }) => b.custom_id),
    );
    assertMatch(await discordClick(worker, once, BEN), /^Not yours/);
    await pause(100);
    assertStrictEquals(toolRuns(fake), 0);

    assertEquals(await discordClick(worker, once, ADA), "Approved: session_info");
    await until(
      () => platform.calls.some((c) => String(c.body?.content).startsWith("done: ")),
      "done",
    );
    assertEquals(await discordClick(worker, once, ADA), "Already answered");
    await pause(100);
    assertStrictEquals(toolRuns(fake), 1);
    // The reply replaces the question in @original and takes its buttons away.
    const done = platform.calls.find((c) => String(c.body?.content).startsWith("done: "))!;
    assertEquals(done.body.components, []);
  },
);

baton.done();

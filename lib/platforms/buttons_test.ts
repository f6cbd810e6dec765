// Unit tests of approval buttons in the Telegram, Slack and Discord adapters: clicks parsed, buttons in the send body, clicks answered; Deno.
import { assertEquals, assertStrictEquals } from "@std/assert";
import { discordTestKeys, signDiscordRequest } from "../../test/_support/discord_signer.ts";
import {
  approvalClickText,
  type Choice,
  type Ingress,
  type PlatformChoice,
  type ReplyTarget,
} from "../chat/mod.ts";
import { approvalButtons } from "../session/approval_buttons.ts";
import { discordAdapter, type DiscordTarget } from "./discord.ts";
import { slackAdapter, type SlackTarget } from "./slack.ts";
import { telegramAdapter, type TelegramTarget } from "./telegram.ts";
import { withFetch } from "./_fetch_stub.ts";
import { APP_ID, discordFixtures, TOKEN as DISCORD_TOKEN } from "./_discord_fixtures.ts";
import { ENV as SLACK_ENV, signed as slackSigned } from "./_slack_fixtures.ts";

const CHOICES: Choice[] = approvalButtons(7, "call_abc");
const ONCE = CHOICES[0].data;

function choiceOf<T extends ReplyTarget>(ingress: Ingress<T>): PlatformChoice<T> {
  if (ingress.kind !== "choice") {
    throw new Error(`expected a choice, got ${JSON.stringify(ingress)}`);
  }
  return ingress.choice;
}

// ── Telegram ────────────────────────────────────────────────────────────────────────────────────

const TG_TOKEN = "123456789:AAE-secret_token_part";
const TG_ENV = {
  TELEGRAM_WEBHOOK_SECRET: "s",
  TELEGRAM_BOT_TOKEN: TG_TOKEN,
  TELEGRAM_API_ROOT: "http://tg.test",
};
const _group = { id: -100555, type: "supergroup", title: "Ops" };
const _bob = { id: 43, is_bot: false, first_name: "Bob", username: "bob" };

function tgParse(payload: unknown): Ingress<TelegramTarget> {
  const body = new TextEncoder().encode(JSON.stringify(payload));
  return telegramAdapter.parse({
    headers: new Headers(),
    body,
    url: "https://baton.test/webhooks/telegram",
    nowSeconds: 0,
  }, TG_ENV);
}

function tgClick(data: unknown, message: Record<string, unknown> = {}) {
  return {
    update_id: 5,
    callback_query: {
      id: "cbq-1",
      from: _bob,
      chat_instance: "x",
      data,
      message: { message_id: 99, chat: _group, from: { id: 1, is_bot: true }, ...message },
    },
  };
}

Deno.test("telegramAdapter.parse() turns a click on baton's button into a choice from callback_query.from", () => {
  assertEquals(choiceOf(tgParse(tgClick(ONCE))), {
    sessionKey: "telegram:-100555",
    deliveryKey: "tg:cb:cbq-1",
    data: ONCE,
    context: {
      platform: "telegram",
      session_key: "telegram:-100555",
      chat_id: "-100555",
      chat_name: "Ops",
      thread_id: "",
      user_id: "43",
      user_name: "bob",
      message_id: "99",
    },
    reply: { platform: "telegram", chat_id: -100555 },
    sender: { platform: "telegram", user: "43", name: "bob", direct: false },
    handle: "cbq-1",
  });
  const topic = choiceOf(tgParse(tgClick(ONCE, { message_thread_id: 8, is_topic_message: true })));
  assertStrictEquals(topic.sessionKey, "telegram:-100555:8");
});

Deno.test("telegramAdapter.parse() ignores clicks that are not baton's, lack their message or come from a bot", () => {
  const ignored = { kind: "respond", status: 200, body: { ok: true } };
  assertEquals(tgParse(tgClick("other:data")), ignored);
  assertEquals(tgParse(tgClick(undefined)), ignored);
  assertEquals(
    tgParse({ update_id: 5, callback_query: { id: "q", from: _bob, data: ONCE } }),
    ignored,
  );
  const byBot = tgClick(ONCE);
  byBot.callback_query.from = { ..._bob, is_bot: true };
  assertEquals(tgParse(byBot), ignored);
});

Deno.test("telegramAdapter.send() puts a notice's choices in an inline keyboard; answerChoice() answers the callback query", async () => {
  await withFetch(() => Response.json({ ok: true, result: {} }), async (calls) => {
    const target = { platform: "telegram" as const, chat_id: -100555, message_id: 3 };
    await telegramAdapter.send(
      target,
      "Approve?",
      { index: 0, count: 1, choices: CHOICES },
      TG_ENV,
    );
    await telegramAdapter.send(target, "plain", { index: 0, count: 1 }, TG_ENV);
    assertEquals(calls[0].body.reply_markup, {
      inline_keyboard: [
        [{ text: "Approve once", callback_data: ONCE }, {
          text: "This session",
          callback_data: CHOICES[1].data,
        }],
        [{ text: "Always", callback_data: CHOICES[2].data }, {
          text: "Deny",
          callback_data: CHOICES[3].data,
        }],
      ],
    });
    assertStrictEquals(calls[1].body.reply_markup, undefined);
    for (const c of CHOICES) {
      assertStrictEquals(new TextEncoder().encode(c.data).length <= 64, true);
    }

    const answer = await telegramAdapter.answerChoice!(
      choiceOf(tgParse(tgClick(ONCE))),
      { kind: "not_yours" },
      TG_ENV,
    );
    assertEquals(answer, { status: 200, body: { ok: true } });
    assertEquals([calls[2].url, calls[2].body], [
      `http://tg.test/bot${TG_TOKEN}/answerCallbackQuery`,
      { callback_query_id: "cbq-1", text: approvalClickText({ kind: "not_yours" }) },
    ]);
  });
});

// ── Slack ───────────────────────────────────────────────────────────────────────────────────────

function slackClick(value: unknown, extra: Record<string, unknown> = {}) {
  const payload = {
    type: "block_actions",
    user: { id: "U2", username: "bob", team_id: "T1" },
    team: { id: "T1", domain: "x" },
    api_app_id: "A1",
    channel: { id: "C1", name: "general" },
    container: { type: "message", message_ts: "1700000000.000200", thread_ts: "1700000000.000100" },
    message: { ts: "1700000000.000200", thread_ts: "1700000000.000100", text: "Approve?" },
    response_url: "https://hooks.slack.test/x",
    actions: [{
      action_id: "baton_choice_0",
      block_id: "baton_choices",
      value,
      type: "button",
      action_ts: "1700000001.1",
    }],
    ...extra,
  };
  return `payload=${encodeURIComponent(JSON.stringify(payload))}`;
}

async function slackParse(body: string): Promise<Ingress<SlackTarget>> {
  const request = await slackSigned(body, { contentType: "application/x-www-form-urlencoded" });
  return slackAdapter.parse(request, SLACK_ENV);
}

Deno.test("slackAdapter.parse() turns a block_actions click into a choice by user.id within team.id", async () => {
  assertEquals(choiceOf(await slackParse(slackClick(ONCE))), {
    sessionKey: "slack:T1:C1:1700000000.000100",
    deliveryKey: "slack:click:C1:1700000000.000200:1700000001.1",
    data: ONCE,
    context: {
      platform: "slack",
      session_key: "slack:T1:C1:1700000000.000100",
      chat_id: "C1",
      chat_name: "",
      thread_id: "1700000000.000100",
      user_id: "U2",
      user_name: "bob",
      message_id: "1700000000.000200",
    },
    reply: { platform: "slack", channel: "C1", thread_ts: "1700000000.000100" },
    sender: { platform: "slack", user: "T1/U2", name: "bob", direct: false },
  });
  const dm = await slackParse(slackClick(ONCE, {
    channel: { id: "D1" },
    container: { type: "message" },
    message: { ts: "1700000000.000300" },
  }));
  assertEquals([choiceOf(dm).sessionKey, choiceOf(dm).sender.direct], ["slack:T1:D1", true]);
});

Deno.test("slackAdapter.parse() ignores other interactivity and other apps' buttons", async () => {
  const ignored = { kind: "respond", status: 200, body: { ok: true } };
  assertEquals(await slackParse(slackClick("not-baton")), ignored);
  assertEquals(await slackParse(slackClick(ONCE, { type: "view_submission" })), ignored);
  assertEquals(await slackParse("command=%2Fask&text=hi"), ignored);
});

Deno.test("slackAdapter.send() shows a notice's choices as block buttons; answerChoice() posts an ephemeral to the clicker", async () => {
  const env = { ...SLACK_ENV, SLACK_API_ROOT: "http://slack.test/api" };
  await withFetch(() => Response.json({ ok: true, ts: "1.2" }), async (calls) => {
    const target = { platform: "slack" as const, channel: "C1", thread_ts: "1700000000.000100" };
    await slackAdapter.send(target, "Approve?", { index: 0, count: 1, choices: CHOICES }, env);
    await slackAdapter.send(target, "plain", { index: 0, count: 1 }, env);
    const [section, actions] = calls[0].body.blocks;
    assertEquals(section, { type: "section", text: { type: "plain_text", text: "Approve?" } });
    assertEquals(actions.type, "actions");
    assertEquals(
      actions.elements.map((e: { value: string; style?: string }) => [e.value, e.style]),
      CHOICES.map((c) => [c.data, c.style]),
    );
    assertStrictEquals(calls[0].body.text, "Approve?");
    assertStrictEquals(calls[1].body.blocks, undefined);

    const choice = choiceOf(await slackParse(slackClick(ONCE)));
    assertEquals(await slackAdapter.answerChoice!(choice, { kind: "not_yours" }, env), {
      status: 200,
      body: {},
    });
    assertEquals([calls[2].url, calls[2].body], ["http://slack.test/api/chat.postEphemeral", {
      channel: "C1",
      user: "U2",
      text: approvalClickText({ kind: "not_yours" }),
      thread_ts: "1700000000.000100",
    }]);
  });
});

// ── Discord ─────────────────────────────────────────────────────────────────────────────────────

const discord = discordFixtures(await discordTestKeys(), signDiscordRequest);

function component(customId: string, extra: Record<string, unknown> = {}) {
  return {
    id: "1800000000000000001",
    type: 3,
    application_id: APP_ID,
    token: DISCORD_TOKEN,
    channel_id: "1300000000000000001",
    guild_id: "1400000000000000001",
    member: { user: { id: "1500000000000000002", username: "bob", global_name: "Bob" } },
    message: { id: "1900000000000000001" },
    data: { custom_id: customId, component_type: 2 },
    ...extra,
  };
}

async function discordParse(payload: unknown): Promise<Ingress<DiscordTarget>> {
  return discordAdapter.parse(await discord.signed(payload), discord.ENV);
}

Deno.test("discordAdapter.parse() turns a component interaction on baton's button into a choice from member.user or user", async () => {
  assertEquals(choiceOf(await discordParse(component(ONCE))), {
    sessionKey: "discord:1300000000000000001",
    deliveryKey: "discord:1800000000000000001",
    data: ONCE,
    context: {
      platform: "discord",
      session_key: "discord:1300000000000000001",
      chat_id: "1300000000000000001",
      chat_name: "",
      thread_id: "",
      user_id: "1500000000000000002",
      user_name: "Bob",
      message_id: "1900000000000000001",
    },
    reply: { platform: "discord", application_id: APP_ID, token: DISCORD_TOKEN },
    sender: { platform: "discord", user: "1500000000000000002", name: "Bob", direct: false },
  });
  const inDm = choiceOf(
    await discordParse(component(ONCE, {
      guild_id: undefined,
      member: undefined,
      user: { id: "1500000000000000003", username: "cy" },
    })),
  );
  assertEquals([inDm.context.user_id, inDm.sender.direct], ["1500000000000000003", true]);
});

Deno.test("discordAdapter.parse() acknowledges other components unchanged (type 6)", async () => {
  const unchanged = { kind: "respond", status: 200, body: { type: 6 } };
  assertEquals(await discordParse(component("someone-elses")), unchanged);
  assertEquals(await discordParse(component(ONCE, { application_id: "999" })), unchanged);
  assertEquals(await discordParse(component(ONCE, { member: undefined })), unchanged);
});

Deno.test("discordAdapter.send() puts a notice's choices in an action row; answerChoice() answers ephemerally", async () => {
  const env = { ...discord.ENV, DISCORD_API_ROOT: "http://discord.test" };
  await withFetch(() => Response.json({ id: "m" }), async (calls) => {
    const target = { platform: "discord" as const, application_id: APP_ID, token: DISCORD_TOKEN };
    await discordAdapter.send(target, "Approve?", { index: 0, count: 1, choices: CHOICES }, env);
    assertEquals(calls[0].body.components, [{
      type: 1,
      components: [
        { type: 2, style: 1, label: "Approve once", custom_id: ONCE },
        { type: 2, style: 2, label: "This session", custom_id: CHOICES[1].data },
        { type: 2, style: 2, label: "Always", custom_id: CHOICES[2].data },
        { type: 2, style: 4, label: "Deny", custom_id: CHOICES[3].data },
      ],
    }]);
  });
  const choice = choiceOf(await discordParse(component(ONCE)));
  assertEquals(await discordAdapter.answerChoice!(choice, { kind: "not_yours" }, env), {
    status: 200,
    body: { type: 4, data: { content: approvalClickText({ kind: "not_yours" }), flags: 64 } },
  });
});

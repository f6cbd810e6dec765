// POST /webhooks/slack end to end: signed Events API deliveries, turns and chat.postMessage replies in one workerd for the file; Deno + Miniflare.
import { assert, assertEquals, assertMatch, assertStrictEquals } from "@std/assert";
import { json, sessionState, settled } from "./_support/clients.ts";
import {
  SLACK_BOT as BOT,
  SLACK_TEAM as TEAM,
  type SlackCredentials,
  slackDriver as driver,
} from "./_support/drivers/slack.ts";
import { echoSessionInfo } from "./_support/fake_llm_scripts.ts";
import { expectOk, pause } from "./_support/platform_rig.ts";
import { sharedBaton } from "./_support/shared_baton.ts";
import type { TestWorker } from "./_support/worker.ts";

const VARS = driver.vars();
const TOKEN = VARS.SLACK_BOT_TOKEN;

// One Worker for the file: each test talks in channels, DMs and as users of its own (see place).
const baton = sharedBaton({ vars: VARS });

/**
 * POST /webhooks/slack signed by slackDriver (at `timestamp`, with `credentials`); `rawBody` is
 * sent in the payload's place.
 */
async function sendSlack(
  worker: TestWorker,
  payload: unknown,
  opts: { timestamp?: number; credentials?: SlackCredentials; rawBody?: string } = {},
): Promise<Response> {
  const body = opts.rawBody ?? JSON.stringify(payload);
  const headers = await driver.sign(body, opts.credentials ?? driver.credentials, {
    at: opts.timestamp,
  });
  return worker.fetch(driver.path, { method: "POST", headers, body });
}

let _tsCounter = 0;

function nextTs(): string {
  return `1700000000.${String(++_tsCounter).padStart(6, "0")}`;
}

type Event = Record<string, unknown>;

/** slackDriver's event_callback envelope carrying `event` (a kind the driver does not shape, too). */
function callback(event: Event) {
  return { ...driver.shape({ chat: String(event.channel ?? ""), text: "", id: nextTs() }), event };
}

/** The inner event slackDriver shapes for `post`. */
function shaped(post: Parameters<typeof driver.shape>[0]): Event {
  return (driver.shape(post) as { event: Event }).event;
}

/** Where one test talks: a channel, a DM and a user of its own, and events there. */
interface Place {
  channel: string;
  im: string;
  user: string;
  /** An app_mention of the bot in `channel` by `user` (override any field). */
  mention(text: string, extra?: Event): Event & { ts: string };
  /** A message in the DM `im` from `user` (override any field). */
  dm(text: string, extra?: Event): Event & { ts: string };
}

/** The channel C<tag>, the DM D<tag> and the user U<tag>: ids no other test of the file uses. */
function place(tag: string): Place {
  const channel = `C${tag}`;
  const im = `D${tag}`;
  const user = `U${tag}`;
  const from = { id: user, name: user };
  return {
    channel,
    im,
    user,
    mention(text, extra = {}) {
      const id = (extra.ts as string | undefined) ?? nextTs();
      const event = shaped({ chat: channel, text, id, from, group: true, mention: true });
      return { ...event, ...extra } as Event & { ts: string };
    },
    dm(text, extra = {}) {
      const event = shaped({ chat: im, text, id: nextTs(), from });
      return { ...event, ...extra } as Event & { ts: string };
    },
  };
}

baton.test(
  "POST /webhooks/slack runs an app_mention as one turn and replies in its thread",
  async (worker, fake, slack) => {
    const at = place("01");
    const event = at.mention("hello there");
    await expectOk(await sendSlack(worker, callback(event)));
    await slack.waitForCalls(1);
    assertStrictEquals(fake.requests.length, 1);
    assertEquals(fake.requests[0].lastUserText, "hello there");
    assertEquals(slack.calls.length, 1);
    const call = slack.calls[0];
    assertEquals([call.method, call.path], ["POST", "/api/chat.postMessage"]);
    assertEquals(call.headers.get("authorization"), `Bearer ${TOKEN}`);
    const { metadata, ...visible } = call.body;
    assertEquals(visible, { channel: at.channel, text: "hello there", thread_ts: event.ts });
    // The part's name rides along, invisible, so a send cut off by a crash can be looked for.
    assertEquals(metadata.event_type, "baton_part");
    assertMatch(metadata.event_payload.part, /^o[0-9]+-[0-9a-z]+$/);
    const state = await sessionState(worker, `slack:${TEAM}:${at.channel}:${event.ts}`);
    assertEquals(state.messages, [
      { role: "user", content: "hello there" },
      { role: "assistant", content: "hello there" },
    ]);
  },
);

baton.test(
  "POST /webhooks/slack refuses a stale or future timestamp with 401",
  async (worker, fake) => {
    const at = place("02");
    const now = Math.floor(Date.now() / 1000);
    for (const timestamp of [now - 360, now + 360]) {
      const res = await sendSlack(worker, callback(at.mention("replayed later")), { timestamp });
      assertStrictEquals(res.status, 401);
      assertEquals(
        (await json(res)).error.message,
        "X-Slack-Request-Timestamp is outside ±300s of now",
      );
    }
    assertStrictEquals(fake.requests.length, 0);
  },
);

baton.test(
  "POST /webhooks/slack makes one turn of an app_mention and its message twin",
  async (worker, fake, slack) => {
    // In a channel the twin is a channel message, which is not a turn; in a DM both keys agree.
    const at = place("03");
    const channel = at.mention("channel twin");
    const channelTwin = { ...channel, type: "message", channel_type: "channel" };
    delete (channelTwin as { event_ts?: string }).event_ts;
    await expectOk(await sendSlack(worker, callback(channel)));
    await expectOk(await sendSlack(worker, callback(channelTwin)));
    const direct = at.mention("dm twin", { channel: at.im });
    const directTwin = { ...direct, type: "message", channel_type: "im" };
    await expectOk(await sendSlack(worker, callback(directTwin)));
    await expectOk(await sendSlack(worker, callback(direct)));
    await slack.waitForCalls(2);
    const marker = at.dm("marker");
    await expectOk(await sendSlack(worker, callback(marker)));
    await slack.waitForCalls(3);
    const texts = fake.requests.map((r) => r.lastUserText);
    assertEquals([...texts.slice(0, 2).sort(), texts[2]], ["channel twin", "dm twin", "marker"]);
    assertEquals(slack.calls.length, 3);
  },
);

baton.test(
  "POST /webhooks/slack answers url_verification with its challenge once the signature checks",
  async (worker, fake) => {
    const payload = {
      token: "legacy",
      challenge: "3eZbrw1aBm2rZgRNFdxV2595E9CY3gmd",
      type: "url_verification",
    };
    const res = await sendSlack(worker, payload);
    assertStrictEquals(res.status, 200);
    assertEquals(await json(res), { challenge: "3eZbrw1aBm2rZgRNFdxV2595E9CY3gmd" });
    const forged = await sendSlack(worker, payload, { credentials: driver.stranger });
    assertStrictEquals(forged.status, 401);
    assert(!JSON.stringify(await json(forged)).includes("3eZbrw1aBm2rZgRNFdxV2595E9CY3gmd"));
    assertStrictEquals(fake.requests.length, 0);
  },
);

baton.test(
  "POST /webhooks/slack answers an ssl_check probe with 200 {} and starts nothing",
  async (worker, fake, slack) => {
    const res = await worker.fetch("/webhooks/slack", {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: "ssl_check=1&token=legacy",
    });
    assertStrictEquals(res.status, 200);
    assertEquals(await json(res), {});
    assertStrictEquals(fake.requests.length, 0);
    assertStrictEquals(slack.calls.length, 0);
  },
);

baton.test(
  "POST /webhooks/slack sends a long reply as ordered parts within 40000 characters",
  async (worker, fake, slack) => {
    const long = Array.from({ length: 2500 }, (_, i) => `line ${i} ${"x".repeat(40)}`).join("\n");
    fake.script(() => ({ kind: "text", text: long }));
    const at = place("06");
    const event = at.mention("write a lot");
    await expectOk(await sendSlack(worker, callback(event)));
    await slack.waitForCalls(4);
    await settled(worker, `slack:${TEAM}:${at.channel}:${event.ts}`);
    assert(slack.calls.length >= 4, `${slack.calls.length} parts`);
    for (const call of slack.calls) {
      assertEquals(call.path, "/api/chat.postMessage");
      assertEquals([call.body.channel, call.body.thread_ts], [at.channel, event.ts]);
      assert(call.body.text.length <= 40000, `part of ${call.body.text.length} chars`);
    }
    assertEquals(slack.calls.map((c) => c.body.text).join(""), long);
  },
);

baton.test(
  "POST /webhooks/slack does not resend a reply Slack refused with ok:false",
  async (worker, _fake, slack) => {
    const at = place("07");
    slack.respond(() => ({ status: 200, body: { ok: false, error: "not_in_channel" } }));
    await expectOk(await sendSlack(worker, callback(at.dm("refused"))));
    await slack.waitForCalls(1);
    await settled(worker, `slack:${TEAM}:${at.im}`);
    await pause(700);
    assertStrictEquals(slack.calls.length, 1);
  },
);

baton.test(
  "POST /webhooks/slack acknowledges bot messages, edits, joins, non-text and other events without a turn",
  async (worker, fake, slack) => {
    const at = place("08");
    const ignored = [
      at.dm("my own reply", { bot_id: "B0BATON", user: BOT }),
      at.dm("another bot", { subtype: "bot_message", bot_id: "B0OTHER" }),
      at.dm("", {
        subtype: "message_changed",
        message: { type: "message", user: at.user, text: "edited", ts: "1700000000.000001" },
      }),
      at.dm("", { subtype: "message_deleted", deleted_ts: "1700000000.000001" }),
      at.dm(`<@${at.user}> has joined the channel`, {
        subtype: "channel_join",
        channel: at.channel,
        channel_type: "channel",
      }),
      // A `file_share` is a turn now (its files read: test/chat_media_test.ts).
      { ...at.dm(""), text: undefined, blocks: [] },
      at.dm("chatter in a channel", { channel: at.channel, channel_type: "channel" }),
      {
        type: "reaction_added",
        user: at.user,
        reaction: "thumbsup",
        item: { type: "message", channel: at.channel, ts: "1700000000.000001" },
        event_ts: "1700000000.000002",
      },
      { type: "app_home_opened", user: at.user, channel: at.im, tab: "home" },
    ];
    for (const event of ignored) await expectOk(await sendSlack(worker, callback(event)));
    await expectOk(await sendSlack(worker, { type: "app_rate_limited", team_id: TEAM }));
    await expectOk(await sendSlack(worker, callback(at.dm("marker"))));
    await slack.waitForCalls(1);
    assertEquals(fake.requests.map((r) => r.lastUserText), ["marker"]);
    assertEquals(slack.calls.length, 1);
  },
);

baton.test(
  "POST /webhooks/slack answers a signed body that is not JSON with 400",
  async (worker, fake) => {
    const res = await sendSlack(worker, undefined, { rawBody: "{not json" });
    assertStrictEquals(res.status, 400);
    assertStrictEquals(fake.requests.length, 0);
  },
);

baton.test(
  "POST /webhooks/slack binds the message's context for session_info",
  async (worker, fake, slack) => {
    fake.script(echoSessionInfo());
    const root = nextTs();
    const at = place("10");
    const event = at.mention("who am I", { user: "U7", thread_ts: root });
    await expectOk(await sendSlack(worker, callback(event)));
    const direct = at.dm("and here?", { user: "U8", channel: "D9" });
    await expectOk(await sendSlack(worker, callback(direct)));
    await slack.waitForCalls(2);
    const byChannel = new Map(slack.calls.map((c) => [c.body.channel, c.body]));
    assertEquals(byChannel.get(at.channel).thread_ts, root);
    assertEquals(JSON.parse(byChannel.get(at.channel).text), {
      platform: "slack",
      chat_id: at.channel,
      thread_id: root,
      user_id: "U7",
      user_name: "U7",
      session_key: `slack:${TEAM}:${at.channel}:${root}`,
      message_id: event.ts,
      async_delivery: false,
    });
    assertEquals(byChannel.get("D9").thread_ts, undefined);
    assertEquals(JSON.parse(byChannel.get("D9").text), {
      platform: "slack",
      chat_id: "D9",
      thread_id: "",
      user_id: "U8",
      user_name: "U8",
      session_key: `slack:${TEAM}:D9`,
      message_id: direct.ts,
      async_delivery: false,
    });
  },
);

baton.done();

// POST /webhooks/teams end to end: workerd (one for the file's tests of the plain settings, the others their own), a fake model and a fake Bot Framework (OpenID metadata, keys, token endpoint, Bot Connector) on loopback; approval cards and typing; Deno + Miniflare.
import { assert, assertEquals, assertMatch, assertStrictEquals } from "@std/assert";
import { json, settled, until } from "./_support/clients.ts";
import type { Post } from "./_support/drivers/mod.ts";
import { TEAMS_APP_ID as APP_ID, teamsDriver as driver } from "./_support/drivers/teams.ts";
import type { FakePlatform } from "./_support/fake_platform.ts";
import { askThenEcho, toolRuns } from "./_support/fake_llm_scripts.ts";
import { expectOk, pause, withPlatform } from "./_support/platform_rig.ts";
import { sharedBaton } from "./_support/shared_baton.ts";
import type { TestWorker } from "./_support/worker.ts";

const VARS = driver.vars();
const CONVERSATION = "a:1personal-chat-ada";
const SESSION = `teams:${CONVERSATION}`;
/** teamsDriver's own sender (its `shape` sends as her when no `from` is given). */
const ADA = { id: "29:1ada", name: "Ada Lovelace", aadObjectId: "aad-ada-0001" };

// One Worker for the file's tests of VARS, each in conversations and as users of its own; a test
// of other settings, or of a Worker that has fetched no keys yet, starts its own.
const baton = sharedBaton({ vars: VARS });

let _next = 1;

type Activity = Record<string, unknown> & { id: string };

/**
 * teamsDriver's message activity of `post` on `platform`'s Bot Connector (the driver pointed at
 * it: its serviceUrl, its published key), sent by `from` when given (the driver names the
 * sender's aadObjectId after its id; these tests name their own).
 */
function shaped(platform: FakePlatform, post: Post, from?: typeof ADA): Activity {
  driver.vars(platform);
  const activity = driver.shape(post) as Activity;
  return from ? { ...activity, from } : activity;
}

/**
 * A message activity in the personal chat with Ada (or `at`'s conversation and sender), as the Bot
 * Connector sends it.
 */
function activity(
  platform: FakePlatform,
  text: string,
  at: { conversation: string; from: typeof ADA } = { conversation: CONVERSATION, from: ADA },
  id = `17000000${_next++}`,
) {
  return shaped(platform, { chat: at.conversation, text, id }, at.from);
}

/** POSTs an activity under teamsDriver's Bot Connector token for `platform`. */
async function post(worker: TestWorker, platform: FakePlatform, body: unknown): Promise<Response> {
  driver.vars(platform);
  const text = JSON.stringify(body);
  const headers = await driver.sign(text, driver.credentials);
  return worker.fetch(driver.path, { method: "POST", headers, body: text });
}

/** The Bot Connector path of `conversation`'s activities on the fake. */
const activitiesPath = (conversation: string) =>
  `/teams/v3/conversations/${encodeURIComponent(conversation)}/activities`;

/** A personal chat and its user, of one test's own on the shared Worker. */
function personal(n: number): { conversation: string; from: typeof ADA } {
  return {
    conversation: `a:1personal-chat-${n}`,
    from: { id: `29:1user${n}`, name: `User ${n}`, aadObjectId: `aad-user-${n}` },
  };
}

// Its own Worker: on the shared one another test may have had the keys fetched and cached.
Deno.test("POST /webhooks/teams answers 503 with Retry-After, and starts nothing, while the signing keys cannot be fetched", async () => {
  await withPlatform(VARS, async (worker, fake, teams) => {
    let down = true;
    teams.respondToAuth((call, i, usual) =>
      down && call.path.startsWith("/auth/teams/openid")
        ? { status: 503, body: { error: "unavailable" } }
        : usual(call, i)
    );
    const message = activity(teams, "while keys are down");
    const res = await post(worker, teams, message);
    const answer = await json(res);
    // Not the sender's fault and nothing stored: the platform is asked to deliver it again.
    assertStrictEquals(res.status, 503, JSON.stringify(answer));
    assertEquals(answer.error.type, "verification_unavailable");
    assertStrictEquals(res.headers.get("retry-after"), "30");
    await pause(300);
    assertStrictEquals(fake.requests.length, 0);
    down = false;
    await expectOk(await post(worker, teams, message));
    await teams.waitForCalls(1);
    assertStrictEquals(fake.requests.length, 1);
  });
});

// Its own Worker: on the shared one the keys and the bot's token may be cached already.
Deno.test("POST /webhooks/teams waits out a 429 with Retry-After on the OpenID metadata and on the bot's token once each: the message is answered", async () => {
  await withPlatform(VARS, async (worker, fake, teams) => {
    const limited = new Set<string>();
    teams.respondToAuth((call, i, usual) => {
      const path = call.path.split("?")[0];
      if (limited.has(path) || !/\/(openid|token)$/.test(path)) return usual(call, i);
      limited.add(path);
      return { status: 429, body: { error: "throttled" }, headers: { "retry-after": "1" } };
    });
    await expectOk(await post(worker, teams, activity(teams, "after the wait")));
    await teams.waitForCalls(1);
    await settled(worker, SESSION);
    assertEquals(fake.requests.map((r) => r.lastUserText), ["after the wait"]);
    assertStrictEquals(teams.calls.length, 1);
    const asked = (end: string) => teams.auth.filter((c) => c.path.endsWith(end)).length;
    assertEquals([asked("/openid"), asked("/token")], [2, 2], "each asked again once");
  });
});

baton.test(
  "POST /webhooks/teams acknowledges conversationUpdate and starts nothing",
  async (worker, fake, teams) => {
    const update = {
      ...activity(teams, "", personal(2)),
      type: "conversationUpdate",
      membersAdded: [{ id: `28:${APP_ID}` }],
    };
    await expectOk(await post(worker, teams, update));
    await pause(200);
    assertStrictEquals(fake.requests.length, 0);
    assertStrictEquals(teams.calls.length, 0);
  },
);

Deno.test("POST /webhooks/teams refuses a sender outside ALLOWED_USERS and runs an allowed one", async () => {
  await withPlatform(
    { ...VARS, ACCESS_POLICY: "allowlist", ALLOWED_USERS: "teams:aad-ada-0001" },
    async (worker, fake, teams) => {
      const stranger = {
        ...activity(teams, "let me in"),
        from: { id: "29:1eve", name: "Eve", aadObjectId: "aad-eve-0002" },
      };
      await post(worker, teams, stranger);
      await expectOk(await post(worker, teams, activity(teams, "allowed one")));
      await settled(worker, SESSION);
      await pause(200);
      assertEquals(fake.requests.map((r) => r.lastUserText), ["allowed one"]);
    },
  );
});

baton.test(
  "POST /webhooks/teams answers a channel mention in its thread's session, the mention removed",
  async (worker, fake, teams) => {
    const thread = "19:abc@thread.tacv2;messageid=1700000000000";
    const { from } = personal(4);
    const said = { chat: thread, text: "status?", id: `17000000${_next++}` };
    const mention = shaped(teams, { ...said, group: true, mention: true }, from);
    const chatter = { ...mention, id: "1700000009999", text: "just chatting", entities: [] };
    await expectOk(await post(worker, teams, chatter), { ok: true, ignored: "not mentioned" });
    await expectOk(await post(worker, teams, mention));
    await teams.waitForCalls(1);
    await settled(worker, `teams:${thread}`);
    await pause(200);
    assertEquals(fake.requests.map((r) => r.lastUserText), ["status?"]);
    assertStrictEquals(
      teams.calls[0].path,
      `/teams/v3/conversations/${encodeURIComponent(thread)}/activities`,
    );
  },
);

// ── approval cards and typing ───────────────────────────────────────────────────────────────────

const GROUP = "19:group-ada-bob@thread.v2";
const GROUP_PATH = `/teams/v3/conversations/${encodeURIComponent(GROUP)}/activities`;
const BOB = { id: "29:1bob", name: "Bob Kahn", aadObjectId: "aad-bob-0002" };
const group = { id: GROUP, conversationType: "groupChat", isGroup: true, tenantId: "tenant-1" };

/** Ada's message mentioning the bot in the group chat with Bob. */
function groupMention(platform: FakePlatform, text: string) {
  const id = `17000000${_next++}`;
  const mention = shaped(platform, { chat: GROUP, text, id, group: true, mention: true });
  return { ...mention, conversation: group };
}

/** A click on the question card's button `data` by `from`: an Action.Submit's message activity. */
function submit(platform: FakePlatform, data: string, from = ADA, id = `17000000${_next++}`) {
  const { text: _, textFormat: _f, ...message } = shaped(
    platform,
    { chat: GROUP, text: "", id },
    from,
  );
  return {
    ...message,
    conversation: group,
    replyToId: "1:question",
    value: { baton_choice: data },
  };
}

/** The choice data of the question card, once it has been sent. */
async function cardChoices(teams: FakePlatform): Promise<string[]> {
  const card = () => teams.calls.find((c) => c.body?.attachments?.length);
  await until(() => card() !== undefined, "the question card");
  const { content } = card()!.body.attachments[0];
  return content.actions.map((a: { data: { baton_choice: string } }) => a.data.baton_choice);
}

const texts = (teams: FakePlatform) => teams.calls.map((c) => String(c.body?.text ?? ""));
const ASKING = { ...VARS, APPROVAL_TOOLS: "session_info" };

Deno.test("POST /webhooks/teams: the question is an Adaptive Card; another member's click is told Not yours, the starter's runs the tool once, delivered twice", async () => {
  await withPlatform(ASKING, async (worker, fake, teams) => {
    fake.script(askThenEcho);
    const asking = groupMention(teams, "who am i");
    await expectOk(await post(worker, teams, asking));
    const [once] = await cardChoices(teams);
    const question = teams.calls.find((c) => c.body?.attachments)!;
    assertEquals([question.path, question.body.replyToId], [GROUP_PATH, asking.id]);

    await expectOk(await post(worker, teams, submit(teams, once, BOB)));
    await until(() => texts(teams).some((t) => t.startsWith("Bob Kahn: Not yours")), "not yours");
    await pause(100);
    assertStrictEquals(toolRuns(fake), 0);

    const click = submit(teams, once);
    await expectOk(await post(worker, teams, click));
    await expectOk(await post(worker, teams, click));
    await until(() => texts(teams).some((t) => t.startsWith("done: ")), "the reply");
    await settled(worker, `teams:${GROUP}`);
    await pause(200);
    assertStrictEquals(toolRuns(fake), 1);
    const done = texts(teams).filter((t) => t.startsWith("done: "));
    assertStrictEquals(done.length, 1);
    assertMatch(done[0], /"user_id":"aad-ada-0001"/);
    // Only the refused click was said in the chat: the answered one and its repeat stay quiet.
    assertEquals(texts(teams).filter((t) => /Not yours|Approved|Already/.test(t)).length, 1);
  });
});

Deno.test("POST /webhooks/teams: a click by a member outside ALLOWED_USERS is refused before its session and approves nothing", async () => {
  const vars = { ...ASKING, ACCESS_POLICY: "allowlist", ALLOWED_USERS: "teams:aad-ada-0001" };
  await withPlatform(vars, async (worker, fake, teams) => {
    fake.script(askThenEcho);
    await expectOk(await post(worker, teams, groupMention(teams, "who am i")));
    const [once] = await cardChoices(teams);
    await expectOk(await post(worker, teams, submit(teams, once, BOB)), {
      ok: true,
      ignored: "sender not allowed",
    });
    await pause(200);
    assertStrictEquals(toolRuns(fake), 0);
    assert(!texts(teams).some((t) => t.startsWith("done: ")));
  });
});

baton.test(
  "POST /webhooks/teams: a slow turn shows typing activities in its conversation, none after the reply",
  async (worker, fake, teams) => {
    fake.script(() => ({ kind: "text", text: "slowly written", pieces: 10, pieceDelayMs: 200 }));
    const at = personal(7);
    await expectOk(await post(worker, teams, activity(teams, "take your time", at)));
    await teams.waitForCalls(1);
    await settled(worker, `teams:${at.conversation}`);
    await pause(300);
    assertEquals(texts(teams), ["slowly written"]);
    const typing = teams.signals;
    assert(typing.length >= 1, "typing while the turn ran");
    for (const signal of typing) {
      assertEquals([signal.path, signal.body], [activitiesPath(at.conversation), {
        type: "typing",
      }]);
      assertMatch(signal.headers.get("authorization") ?? "", /^Bearer fake-access-token-\d+$/);
    }
    assert(Math.max(...typing.map((c) => c.order)) < teams.calls[0].order, "none after the reply");
  },
);

baton.done();

// Access control end to end on Slack, Discord and GitHub: pairing codes, /pair, revocation, channels and guilds, GitHub associations; Deno + Miniflare.
import { assert, assertEquals, assertMatch, assertStrictEquals } from "@std/assert";
import { GITHUB_REFUSAL_TEXT } from "../lib/access/access_notices.ts";
import { APP_ID } from "../lib/platforms/_discord_fixtures.ts";
import {
  BOT as SLACK_BOT,
  callback,
  dm,
  ENV as SLACK_ENV,
  mention,
  SECRET as SLACK_SECRET,
} from "../lib/platforms/_slack_fixtures.ts";
import { signGithubPayload } from "../lib/platforms/github.ts";
import { signSlackRequest } from "../lib/platforms/slack.ts";
import { API_KEY, json, until } from "./_support/clients.ts";
import { discordTestKeys, signDiscordRequest } from "./_support/discord_signer.ts";
import type { FakePlatform } from "./_support/fake_platform.ts";
import { expectOk, pause, withPlatform } from "./_support/platform_rig.ts";
import { sharedBaton } from "./_support/shared_baton.ts";
import type { TestWorker } from "./_support/worker.ts";

const CODE = /pairing code to its owner: ([A-Z2-9]{8})/;
const REFUSED = { ok: true, ignored: "sender not allowed" };

// The Discord key pair is made once for the file.
const keys = await discordTestKeys();
const DISCORD = {
  DISCORD_PUBLIC_KEY: keys.publicKeyHex,
  DISCORD_APPLICATION_ID: APP_ID,
  ACCESS_POLICY: "pairing",
};

const GH_SECRET = "github-test-webhook-secret";
const REPO = "octo-org/hello-world";
const GITHUB = {
  GITHUB_WEBHOOK_SECRET: GH_SECRET,
  GITHUB_TOKEN: "ghp_github_test_token",
  GITHUB_BOT_LOGIN: "batonbot",
  ACCESS_POLICY: "pairing",
};

// One Worker for the Slack, Discord and GitHub tests that share a configuration (each with users
// of its own: the access records are the Worker's); the GitHub settings tests start their own.
// Slack: T1/U1 and T1/U7 are allowed, T1/UADMIN is an admin.
const baton = sharedBaton({
  vars: {
    ...SLACK_ENV,
    ...DISCORD,
    ...GITHUB,
    ACCESS_POLICY: "pairing",
    ALLOWED_USERS: "slack:T1/U1,slack:T1/U7",
    ADMIN_USERS: "slack:T1/UADMIN",
  },
});

function api(worker: TestWorker, method: string, path: string): Promise<Response> {
  return worker.fetch(path, { method, headers: { authorization: `Bearer ${API_KEY}` } });
}

/**
 * The pending pairings of user `of`, or of every user of `of.platform`: the list is the Worker's,
 * other tests' users are in it too.
 */
async function pending(
  worker: TestWorker,
  of: string | { platform: string },
): Promise<string[][]> {
  const list = await json(await api(worker, "GET", "/v1/access/pairings"));
  const mine = (p: { platform: string; user: string }) =>
    typeof of === "string" ? p.user === of : p.platform === of.platform;
  return list.data.filter(mine).map((
    p: { code: string; platform: string; user: string; name: string },
  ) => [
    p.code,
    p.platform,
    p.user,
    p.name,
  ]);
}

// ---- Slack (the fixtures' workspace is T1) ----

let _ts = 0;

/** POST /webhooks/slack with `event` in an envelope, signed now (a fresh `ts` each time). */
async function slack(worker: TestWorker, event: Record<string, unknown>): Promise<Response> {
  const body = callback({ ...event, ts: `1700000100.${String(++_ts).padStart(6, "0")}` });
  const timestamp = Math.floor(Date.now() / 1000);
  return await worker.fetch("/webhooks/slack", {
    method: "POST",
    headers: {
      "content-type": "application/json",
      "x-slack-signature": await signSlackRequest({ secret: SLACK_SECRET, timestamp, body }),
      "x-slack-request-timestamp": String(timestamp),
    },
    body,
  });
}

/** A DM from Slack user `user` in their DM channel `D<user>`. */
const slackDm = (worker: TestWorker, user: string, text: string) =>
  slack(worker, dm({ user, text, channel: `D${user}` }));

/** The texts chat.postMessage was sent to `channel`. */
function posted(platform: FakePlatform, channel: string): string[] {
  return platform.calls
    .filter((c) => c.path === "/api/chat.postMessage" && c.body?.channel === channel)
    .map((c) => String(c.body.text));
}

baton.test(
  "POST /webhooks/slack gives an unknown DM one pairing code, no turn; API approval lets the next DM in; revocation shuts it again",
  async (worker, fake, platform) => {
    await expectOk(await slackDm(worker, "U21", "hello?"), REFUSED);
    await platform.waitForCalls(1);
    const code = CODE.exec(posted(platform, "DU21")[0])?.[1];
    assert(code, JSON.stringify(platform.calls.map((c) => c.body)));
    await expectOk(await slackDm(worker, "U21", "anyone?"), REFUSED);
    await pause(100);
    assertStrictEquals(platform.calls.length, 1);
    assertStrictEquals(fake.requests.length, 0);
    assertEquals(await pending(worker, "T1/U21"), [[code, "slack", "T1/U21", "U21"]]);

    const approved = await api(worker, "POST", `/v1/access/pairings/${code}/approve`);
    assertStrictEquals(approved.status, 200);
    assertEquals((await json(approved)).user.user, "T1/U21");
    await expectOk(await slackDm(worker, "U21", "now?"));
    await until(() => posted(platform, "DU21").length === 2, "the reply");
    assertEquals(posted(platform, "DU21")[1], "now?");
    assertEquals(fake.requests.map((r) => r.lastUserText), ["now?"]);

    const revoked = await api(worker, "DELETE", "/v1/access/users/slack%3AT1%2FU21");
    assertStrictEquals(revoked.status, 200);
    assertEquals(await json(revoked), { revoked: true, platform: "slack", user: "T1/U21" });
    await expectOk(await slackDm(worker, "U21", "still me"), REFUSED);
    await until(() => posted(platform, "DU21").length === 3, "a new code");
    const second = CODE.exec(posted(platform, "DU21")[2])?.[1];
    assert(second && second !== code, posted(platform, "DU21")[2]);
    assertStrictEquals(fake.requests.length, 1);
  },
);

baton.test(
  "POST /webhooks/slack ignores an unknown user's app_mention in a channel, and answers an ALLOWED_USERS user without pairing",
  async (worker, fake, platform) => {
    await expectOk(await slack(worker, mention({ user: "U22" })), REFUSED);
    const help = mention({ user: "U22", text: `<@${SLACK_BOT}> /help` });
    await expectOk(await slack(worker, help), REFUSED);
    await pause(100);
    assertStrictEquals(platform.calls.length, 0);
    assertStrictEquals(fake.requests.length, 0);
    assertEquals(await pending(worker, "T1/U22"), []);

    await expectOk(await slack(worker, mention({ user: "U1", text: `<@${SLACK_BOT}> hi all` })));
    await expectOk(await slackDm(worker, "U1", "and in private"));
    await until(() => platform.calls.length === 2, "two replies");
    assertEquals(posted(platform, "C1"), ["hi all"]);
    assertEquals(posted(platform, "DU1"), ["and in private"]);
    assertEquals(fake.requests.map((r) => r.lastUserText).sort(), ["and in private", "hi all"]);
    assertEquals([...await pending(worker, "T1/U22"), ...await pending(worker, "T1/U1")], []);
  },
);

baton.test(
  "POST /webhooks/slack approves another user's pairing code when an admin DMs /pair CODE, not when an allowed non-admin does",
  async (worker, fake, platform) => {
    await expectOk(await slackDm(worker, "U23", "let me in"), REFUSED);
    await platform.waitForCalls(1);
    const code = CODE.exec(posted(platform, "DU23")[0])![1];
    await expectOk(await slackDm(worker, "U7", `/pair ${code}`), {
      ok: true,
      ignored: "pair command",
    });
    await until(() => posted(platform, "DU7").length === 1, "the refusal");
    assertMatch(posted(platform, "DU7")[0], /Only an admin/);
    assertStrictEquals((await pending(worker, "T1/U23")).length, 1);

    await expectOk(await slackDm(worker, "UADMIN", `/pair ${code.toLowerCase()}`), {
      ok: true,
      ignored: "pair command",
    });
    await until(() => posted(platform, "DUADMIN").length === 1, "the approval");
    assertMatch(posted(platform, "DUADMIN")[0], /^Approved slack:T1\/U23\b/);
    assertEquals(await pending(worker, "T1/U23"), []);
    assertStrictEquals(fake.requests.length, 0);

    await expectOk(await slackDm(worker, "U23", "in?"));
    await until(() => posted(platform, "DU23").length === 2, "the reply");
    assertEquals(fake.requests.map((r) => r.lastUserText), ["in?"]);
  },
);

// ---- Discord ----

const DISCORD_USER = { id: "1500000000000000002", username: "eve", global_name: "Eve" };
/** The guild test's own unknown user (Eve is paired by the DM test on the same Worker). */
const DISCORD_STRANGER = { id: "1500000000000000003", username: "mallory", global_name: "Mallory" };
let _ids = 0;

/** A `/ask prompt:<text>` command from `user`, in the bot's DM or in a guild channel. */
function command(text: string, where: "dm" | "guild", user = DISCORD_USER) {
  const id = `12100000000${String(++_ids).padStart(8, "0")}`;
  const place = where === "dm"
    ? {
      channel_id: "1300000000000000009",
      channel: { id: "1300000000000000009", type: 1 },
      context: 1,
      user,
    }
    : {
      channel_id: "1300000000000000001",
      channel: { id: "1300000000000000001", name: "general", type: 0 },
      context: 0,
      guild_id: "1400000000000000001",
      member: { user, roles: [] },
    };
  return {
    id,
    type: 2,
    application_id: APP_ID,
    token: `token-${id}`,
    ...place,
    data: { id: "16", name: "ask", type: 1, options: [{ name: "prompt", type: 3, value: text }] },
  };
}

async function interact(worker: TestWorker, payload: unknown): Promise<Response> {
  const timestamp = String(Math.floor(Date.now() / 1000));
  const body = JSON.stringify(payload);
  const signature = await signDiscordRequest({ privateKey: keys.privateKey, timestamp, body });
  return await worker.fetch("/webhooks/discord", {
    method: "POST",
    headers: {
      "content-type": "application/json",
      "x-signature-ed25519": signature,
      "x-signature-timestamp": timestamp,
    },
    body,
  });
}

/** The content of an ephemeral (flags 64) type-4 interaction answer, asserting that it is one. */
async function ephemeral(res: Response): Promise<string> {
  const body = await json(res);
  assertStrictEquals(res.status, 200, JSON.stringify(body));
  assertStrictEquals(body.type, 4, JSON.stringify(body));
  assertStrictEquals(body.data.flags, 64);
  return body.data.content;
}

baton.test(
  "POST /webhooks/discord answers an unknown DM's command with an ephemeral pairing code, then 'waiting', and defers it after API approval",
  async (worker, fake, discord) => {
    const first = await ephemeral(await interact(worker, command("hello?", "dm")));
    const code = CODE.exec(first)?.[1];
    assert(code, first);
    const second = await ephemeral(await interact(worker, command("anyone?", "dm")));
    assertMatch(second, /waiting/);
    assert(!CODE.test(second) && !second.includes(code), second);
    await pause(100);
    assertStrictEquals(fake.requests.length, 0);
    assertStrictEquals(discord.calls.length, 0);
    assertEquals(await pending(worker, DISCORD_USER.id), [[
      code,
      "discord",
      DISCORD_USER.id,
      "Eve",
    ]]);

    const approved = await api(worker, "POST", `/v1/access/pairings/${code}/approve`);
    assertStrictEquals(approved.status, 200);
    await approved.body?.cancel();
    const payload = command("now?", "dm");
    await expectOk(await interact(worker, payload), { type: 5 });
    await discord.waitForCalls(1);
    const [edit] = discord.calls;
    assertEquals(
      [edit.method, edit.path, edit.body.content],
      ["PATCH", `/webhooks/${APP_ID}/${payload.token}/messages/@original`, "now?"],
    );
    assertEquals(fake.requests.map((r) => r.lastUserText), ["now?"]);
  },
);

baton.test(
  "POST /webhooks/discord tells an unknown user in a guild only 'This bot is private.': no turn, nothing pending",
  async (worker, fake, discord) => {
    for (const text of ["hi all", "/status"]) {
      assertEquals(
        await ephemeral(await interact(worker, command(text, "guild", DISCORD_STRANGER))),
        "This bot is private.",
      );
    }
    await pause(100);
    assertStrictEquals(fake.requests.length, 0);
    assertStrictEquals(discord.calls.length, 0);
    assertEquals(await pending(worker, DISCORD_STRANGER.id), []);
  },
);

// ---- GitHub ----

let _commentIds = 5000;

/** POST /webhooks/github: a signed issue comment by `login` (with `association`) on `issue`. */
async function mentionBy(
  worker: TestWorker,
  login: string,
  association: string,
  issue = 42,
): Promise<Response> {
  const body = JSON.stringify({
    action: "created",
    issue: { number: issue, title: "Flaky build" },
    comment: {
      id: ++_commentIds,
      body: `@batonbot help, ${login}`,
      user: { login, id: _commentIds, type: "User" },
      author_association: association,
    },
    repository: { id: 1296269, name: "hello-world", full_name: REPO, owner: { login: "octo-org" } },
    sender: { login, id: _commentIds },
  });
  return await worker.fetch("/webhooks/github", {
    method: "POST",
    headers: {
      "content-type": "application/json",
      "x-github-event": "issue_comment",
      "x-github-delivery": crypto.randomUUID(),
      "x-hub-signature-256": await signGithubPayload(GH_SECRET, body),
    },
    body,
  });
}

/** The comment bodies posted on `issue`. */
function commented(github: FakePlatform, issue: number): string[] {
  return github.calls
    .filter((c) => c.method === "POST" && c.path === `/repos/${REPO}/issues/${issue}/comments`)
    // Without the invisible part marker replies carry (notices from the access check have none).
    .map((c) => String(c.body.body).replace(/\n\n<!-- baton:part=[A-Za-z0-9_-]+ -->$/, ""));
}

/** GitHub's 201 to a created comment. */
const created = () => ({ status: 201, body: { id: 1 } });

/** withPlatform answering GitHub's 201 to a created comment. */
function withGithub(
  vars: Record<string, string>,
  fn: Parameters<typeof withPlatform>[1],
): Promise<void> {
  return withPlatform({ ...GITHUB, ...vars }, (worker, fake, github) => {
    github.respond(created);
    return fn(worker, fake, github);
  });
}

baton.test(
  "POST /webhooks/github ignores a mention by a NONE or CONTRIBUTOR author and runs one by a COLLABORATOR",
  async (worker, fake, github) => {
    github.respond(created);
    await expectOk(await mentionBy(worker, "stranger", "NONE"), REFUSED);
    await expectOk(await mentionBy(worker, "drive-by", "CONTRIBUTOR"), REFUSED);
    await pause(100);
    assertStrictEquals(fake.requests.length, 0);
    assertStrictEquals(github.calls.length, 0);
    // The only GitHub test on this Worker: nothing pending for GitHub at all.
    assertEquals(await pending(worker, { platform: "github" }), []);

    await expectOk(await mentionBy(worker, "regular", "COLLABORATOR"));
    await github.waitForCalls(1);
    assertEquals(commented(github, 42), ["@batonbot help, regular"]);
    assertEquals(fake.requests.map((r) => r.lastUserText), ["@batonbot help, regular"]);
  },
);

// Their own Workers: the associations let in and the refusal are what these tests configure.
Deno.test("POST /webhooks/github follows GITHUB_ALLOWED_ASSOCIATIONS and lets in ALLOWED_USERS logins whatever their case", async () => {
  const vars = { GITHUB_ALLOWED_ASSOCIATIONS: "OWNER", ALLOWED_USERS: "github:OctoCat" };
  await withGithub(vars, async (worker, fake, github) => {
    await expectOk(await mentionBy(worker, "mona", "MEMBER", 42), REFUSED);
    await pause(100);
    assertStrictEquals(fake.requests.length, 0);
    assertStrictEquals(github.calls.length, 0);

    await expectOk(await mentionBy(worker, "boss", "OWNER", 43));
    await expectOk(await mentionBy(worker, "octocat", "NONE", 44));
    await github.waitForCalls(2);
    assertEquals(commented(github, 43), ["@batonbot help, boss"]);
    assertEquals(commented(github, 44), ["@batonbot help, octocat"]);
    assertEquals(commented(github, 42), []);
    assertStrictEquals(fake.requests.length, 2);
  });
});

Deno.test("POST /webhooks/github posts one refusal comment per issue to strangers under GITHUB_REFUSAL=comment", async () => {
  await withGithub({ GITHUB_REFUSAL: "comment" }, async (worker, fake, github) => {
    await expectOk(await mentionBy(worker, "stranger", "NONE", 42), REFUSED);
    await expectOk(await mentionBy(worker, "another", "CONTRIBUTOR", 42), REFUSED);
    await expectOk(await mentionBy(worker, "stranger", "NONE", 43), REFUSED);
    await github.waitForCalls(2);
    await pause(100);
    assertEquals(commented(github, 42), [GITHUB_REFUSAL_TEXT]);
    assertEquals(commented(github, 43), [GITHUB_REFUSAL_TEXT]);
    assertStrictEquals(github.calls.length, 2);
    assertStrictEquals(fake.requests.length, 0);
  });
});

baton.done();

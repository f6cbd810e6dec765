// Access control end to end on Slack, Discord and GitHub: pairing codes, /pair, revocation, channels and guilds, GitHub associations; Deno + Miniflare.
import type { IssueCommentCreatedEvent } from "@octokit/webhooks-types";
import { assert, assertEquals, assertMatch, assertStrictEquals } from "@std/assert";
import {
  type APIChatInputApplicationCommandDMInteraction,
  type APIChatInputApplicationCommandGuildInteraction,
  ChannelType,
  InteractionContextType,
} from "discord-api-types/v10";
import { GITHUB_REFUSAL_TEXT } from "../lib/access/access_notices.ts";
import { API_KEY, json, until } from "./_support/clients.ts";
import { DISCORD_APP_ID as APP_ID, discordDriver } from "./_support/drivers/discord.ts";
import { GITHUB_REPO as REPO, githubDriver } from "./_support/drivers/github.ts";
import { deliver, type Post } from "./_support/drivers/mod.ts";
import { SLACK_TEAM as TEAM, slackDriver } from "./_support/drivers/slack.ts";
import type { FakePlatform } from "./_support/fake_platform.ts";
import { expectOk, pause, withPlatform } from "./_support/platform_rig.ts";
import { sharedBaton } from "./_support/shared_baton.ts";
import type { TestWorker } from "./_support/worker.ts";

const CODE = /pairing code to its owner: ([A-Z2-9]{8})/;
const REFUSED = { ok: true, ignored: "sender not allowed" };

// The drivers' settings: Discord's key pair is the driver's, made once (the Worker caches it).
const DISCORD = { ...discordDriver.vars(), ACCESS_POLICY: "pairing" };
const GITHUB = { ...githubDriver.vars(), ACCESS_POLICY: "pairing" };

// One Worker for the Slack, Discord and GitHub tests that share a configuration (each with users
// of its own: the access records are the Worker's); the GitHub settings tests start their own.
// Slack (the driver's workspace TEAM): TEAM/U1 and TEAM/U7 are allowed, TEAM/UADMIN is an admin.
const baton = sharedBaton({
  vars: {
    ...slackDriver.vars(),
    ...DISCORD,
    ...GITHUB,
    ACCESS_POLICY: "pairing",
    ALLOWED_USERS: `slack:${TEAM}/U1,slack:${TEAM}/U7`,
    ADMIN_USERS: `slack:${TEAM}/UADMIN`,
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

// ---- Slack (the driver's workspace TEAM) ----

let _ts = 0;

/** POST /webhooks/slack: slackDriver's envelope of `post` (a fresh `ts`), signed by it now. */
async function slack(worker: TestWorker, post: Omit<Post, "id">): Promise<Response> {
  const id = `1700000100.${String(++_ts).padStart(6, "0")}`;
  const body = JSON.stringify(slackDriver.shape({ ...post, id }));
  const headers = await slackDriver.sign(body, slackDriver.credentials);
  return await deliver(worker.fetch, slackDriver, { headers, body, id });
}

/** A DM from Slack user `user` in their DM channel `D<user>`. */
const slackDm = (worker: TestWorker, user: string, text: string) =>
  slack(worker, { chat: `D${user}`, text, from: { id: user, name: user } });

/** An app_mention of the bot by Slack user `user` in channel C1 (a thread of its own). */
const slackMention = (worker: TestWorker, user: string, text: string) =>
  slack(worker, { chat: "C1", text, from: { id: user, name: user }, group: true, mention: true });

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
    assertEquals(await pending(worker, `${TEAM}/U21`), [[code, "slack", `${TEAM}/U21`, "U21"]]);

    const approved = await api(worker, "POST", `/v1/access/pairings/${code}/approve`);
    assertStrictEquals(approved.status, 200);
    assertEquals((await json(approved)).user.user, `${TEAM}/U21`);
    await expectOk(await slackDm(worker, "U21", "now?"));
    await until(() => posted(platform, "DU21").length === 2, "the reply");
    assertEquals(posted(platform, "DU21")[1], "now?");
    assertEquals(fake.requests.map((r) => r.lastUserText), ["now?"]);

    const revoked = await api(worker, "DELETE", `/v1/access/users/slack%3A${TEAM}%2FU21`);
    assertStrictEquals(revoked.status, 200);
    assertEquals(await json(revoked), { revoked: true, platform: "slack", user: `${TEAM}/U21` });
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
    await expectOk(await slackMention(worker, "U22", "hello there"), REFUSED);
    await expectOk(await slackMention(worker, "U22", "/help"), REFUSED);
    await pause(100);
    assertStrictEquals(platform.calls.length, 0);
    assertStrictEquals(fake.requests.length, 0);
    assertEquals(await pending(worker, `${TEAM}/U22`), []);

    await expectOk(await slackMention(worker, "U1", "hi all"));
    await expectOk(await slackDm(worker, "U1", "and in private"));
    await until(() => platform.calls.length === 2, "two replies");
    assertEquals(posted(platform, "C1"), ["hi all"]);
    assertEquals(posted(platform, "DU1"), ["and in private"]);
    assertEquals(fake.requests.map((r) => r.lastUserText).sort(), ["and in private", "hi all"]);
    assertEquals(
      [...await pending(worker, `${TEAM}/U22`), ...await pending(worker, `${TEAM}/U1`)],
      [],
    );
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
    assertStrictEquals((await pending(worker, `${TEAM}/U23`)).length, 1);

    await expectOk(await slackDm(worker, "UADMIN", `/pair ${code.toLowerCase()}`), {
      ok: true,
      ignored: "pair command",
    });
    await until(() => posted(platform, "DUADMIN").length === 1, "the approval");
    assertMatch(posted(platform, "DUADMIN")[0], new RegExp(`^Approved slack:${TEAM}/U23\\b`));
    assertEquals(await pending(worker, `${TEAM}/U23`), []);
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

/**
 * A `/ask prompt:<text>` command from `user`: discordDriver's guild command, or in the bot's DM
 * that command as Discord sends it from a DM (no guild nor member: the user, DM context).
 */
function command(text: string, where: "dm" | "guild", user = DISCORD_USER) {
  const id = `12100000000${String(++_ids).padStart(8, "0")}`;
  const chat = where === "dm" ? "1300000000000000009" : "1300000000000000001";
  const from = { id: user.id, name: user.global_name };
  const shaped = discordDriver.shape({
    chat,
    text,
    id,
    from,
  }) as APIChatInputApplicationCommandGuildInteraction;
  if (where === "guild") return shaped;
  const { guild_id: _, guild: _guild, guild_locale: _locale, member, ...rest } = shaped;
  const dm: APIChatInputApplicationCommandDMInteraction = {
    ...rest,
    channel: { id: chat, type: ChannelType.DM },
    context: InteractionContextType.BotDM,
    user: member.user,
  };
  return dm;
}

/** POST /webhooks/discord: `payload` signed by discordDriver now. */
async function interact(worker: TestWorker, payload: { id: string }): Promise<Response> {
  const body = JSON.stringify(payload);
  const headers = await discordDriver.sign(body, discordDriver.credentials);
  return await deliver(worker.fetch, discordDriver, { headers, body, id: payload.id });
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

/**
 * POST /webhooks/github: githubDriver's issue comment mentioning the bot by `login` (with
 * `association`, which the driver's sample does not vary) on `issue`, signed by it.
 */
async function mentionBy(
  worker: TestWorker,
  login: string,
  association: IssueCommentCreatedEvent["comment"]["author_association"],
  issue = 42,
): Promise<Response> {
  const id = String(++_commentIds);
  const shaped = githubDriver.shape({
    chat: String(issue),
    text: `help, ${login}`,
    id,
    from: { id, name: login },
    mention: true,
  }) as IssueCommentCreatedEvent;
  const body = JSON.stringify({
    ...shaped,
    comment: { ...shaped.comment, author_association: association },
  });
  const headers = await githubDriver.sign(body, githubDriver.credentials);
  return await deliver(worker.fetch, githubDriver, { headers, body, id });
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

// Access control end to end on Telegram and the owner's API: pairing codes, /pair, revocation, groups, quotas; Deno + Miniflare.
import { assert, assertEquals, assertMatch, assertStrictEquals } from "@std/assert";
import { API_KEY, json, sendWebhook, until } from "./_support/clients.ts";
import { expectOk, pause, withPlatform } from "./_support/platform_rig.ts";
import { sharedBaton } from "./_support/shared_baton.ts";
import type { TestWorker } from "./_support/worker.ts";
import type { FakePlatform } from "./_support/fake_platform.ts";

const SECRET = "tg-webhook-secret_42";
const TOKEN = "123456789:AAH-test_bot_token_value";
const TELEGRAM = { TELEGRAM_WEBHOOK_SECRET: SECRET, TELEGRAM_BOT_TOKEN: TOKEN };
const PAIRING = { ...TELEGRAM, ACCESS_POLICY: "pairing", ADMIN_USERS: "telegram:1" };
const CODE = /pairing code to its owner: ([A-Z2-9]{8})/;

// Two Workers for the file, each test with Telegram users of its own (the access records are
// global: each test looks only at its own users). Pairing: telegram:7 is allowed but no admin, and
// the tenant acme is no admin; the API quota tests use tenants of their own.
const pairing = sharedBaton({
  vars: {
    ...PAIRING,
    ALLOWED_USERS: "telegram:7",
    GATEWAY_API_KEYS: "acme:acme-key-1,rate-a:rate-a-key-1,rate-b:rate-b-key-1",
    API_TURNS_PER_MINUTE: "2",
  },
  label: "pairing",
});
// Allowlist: telegram:4206 (the quota test's user), 4211-4213 (the group quota test's members) and
// generic:ops are allowed.
const allowlist = sharedBaton({
  vars: {
    ...TELEGRAM,
    ACCESS_POLICY: "allowlist",
    ALLOWED_USERS: "telegram:4206,telegram:4211,telegram:4212,telegram:4213,generic:ops",
    USER_TURNS_PER_HOUR: "3",
    BUSY_ACK: "off",
    MAX_QUEUED: "100",
  },
  label: "allowlist",
});

let _nextUpdate = 900_000;

/** A Telegram text message from user `from` in their private chat, or in `group`. */
function tg(worker: TestWorker, from: number, text: string, group?: number): Promise<Response> {
  const chat = group === undefined
    ? { id: from, type: "private", first_name: `User${from}` }
    : { id: group, type: "supergroup", title: "Group" };
  const update = {
    update_id: _nextUpdate++,
    message: {
      message_id: _nextUpdate,
      date: Math.floor(Date.now() / 1000),
      chat,
      from: { id: from, is_bot: false, first_name: `User${from}` },
      text,
    },
  };
  return worker.fetch("/webhooks/telegram", {
    method: "POST",
    headers: { "content-type": "application/json", "X-Telegram-Bot-Api-Secret-Token": SECRET },
    body: JSON.stringify(update),
  });
}

/** The texts the fake Telegram was sent to `chat`. */
function sentTo(platform: FakePlatform, chat: number): string[] {
  return platform.calls.filter((c) => c.body?.chat_id === chat).map((c) => String(c.body.text));
}

function api(worker: TestWorker, method: string, path: string, key = API_KEY): Promise<Response> {
  return worker.fetch(path, { method, headers: { authorization: `Bearer ${key}` } });
}

pairing.test(
  "gateMessage() gives an unknown Telegram DM one pairing code, no turn; approval lets the next message in; revocation shuts it again",
  async (worker, fake, platform) => {
    const user = 4201;
    const mine = (p: { user: string }) => p.user === String(user);
    const ack = await tg(worker, user, "hello?");
    assertEquals((await json(ack)).ignored, "sender not allowed");
    await platform.waitForCalls(1);
    const [notice] = sentTo(platform, user);
    const code = CODE.exec(notice)?.[1];
    assert(code, notice);
    // Whatever they send within the hour: no second code, no turn, no model call.
    await expectOk(await tg(worker, user, "/help"), { ok: true, ignored: "sender not allowed" });
    await expectOk(await tg(worker, user, "please"), { ok: true, ignored: "sender not allowed" });
    await pause(100);
    assertEquals(sentTo(platform, user).length, 1);
    assertStrictEquals(fake.requests.length, 0);

    const pending = await json(await api(worker, "GET", "/v1/access/pairings"));
    assertEquals(
      pending.data.filter(mine).map((
        p: { code: string; platform: string; user: string; name: string },
      ) => [p.code, p.platform, p.user, p.name]),
      [[code, "telegram", "4201", "User4201"]],
    );

    const approved = await api(worker, "POST", `/v1/access/pairings/${code.toLowerCase()}/approve`);
    assertStrictEquals(approved.status, 200);
    assertEquals((await json(approved)).user.user, "4201");
    assertEquals(
      (await json(await api(worker, "GET", "/v1/access/pairings"))).data.filter(mine),
      [],
    );
    const users = await json(await api(worker, "GET", "/v1/access/users"));
    assertEquals(
      users.data
        .filter((u: { user: string; source: string }) => mine(u) || u.source === "ADMIN_USERS")
        .map((u: { platform: string; user: string; source: string }) =>
          `${u.source}:${u.platform}:${u.user}`
        ),
      ["pairing:telegram:4201", "ADMIN_USERS:telegram:1"],
    );

    await expectOk(await tg(worker, user, "now?"));
    await until(() => sentTo(platform, user).length === 2, "the reply");
    assertEquals(sentTo(platform, user)[1], "now?");
    assertEquals(fake.requests.map((r) => r.lastUserText), ["now?"]);

    const revoked = await api(worker, "DELETE", "/v1/access/users/telegram%3A4201");
    assertStrictEquals(revoked.status, 200);
    assertStrictEquals(
      (await api(worker, "DELETE", "/v1/access/users/telegram%3A4201")).status,
      404,
    );
    await expectOk(await tg(worker, user, "again"), { ok: true, ignored: "sender not allowed" });
    await until(() => sentTo(platform, user).length === 3, "a new code");
    const second = CODE.exec(sentTo(platform, user)[2])?.[1];
    assert(second && second !== code);
    assertStrictEquals(fake.requests.length, 1);
  },
);

pairing.test(
  "gateMessage() ignores an unknown sender in a group: nothing sent, no turn, nothing pending",
  async (worker, fake, platform) => {
    const user = 4202;
    await expectOk(await tg(worker, user, "hi all", -1004202), {
      ok: true,
      ignored: "sender not allowed",
    });
    await expectOk(await tg(worker, user, "/status", -1004202), {
      ok: true,
      ignored: "sender not allowed",
    });
    await pause(100);
    assertStrictEquals(platform.calls.length, 0);
    assertStrictEquals(fake.requests.length, 0);
    const pending = (await json(await api(worker, "GET", "/v1/access/pairings"))).data;
    assertEquals(pending.filter((p: { user: string }) => p.user === String(user)), []);
  },
);

pairing.test(
  "gateMessage() lets an admin approve with /pair in chat, and refuses it from anyone else",
  async (worker, fake, platform) => {
    const user = 4203;
    await tg(worker, user, "let me in");
    await platform.waitForCalls(1);
    const code = CODE.exec(sentTo(platform, user)[0])![1];
    // An allowed non-admin: told so, nothing approved, no turn.
    await expectOk(await tg(worker, 7, `/pair ${code}`), { ok: true, ignored: "pair command" });
    await until(() => sentTo(platform, 7).length === 1, "the refusal");
    assertMatch(sentTo(platform, 7)[0], /Only an admin/);
    const pending = (await json(await api(worker, "GET", "/v1/access/pairings"))).data;
    assertEquals(pending.filter((p: { user: string }) => p.user === String(user)).length, 1);
    // The unknown sender cannot pair themselves either: they get the pairing answer, nothing else.
    await expectOk(await tg(worker, user, `/pair ${code}`), {
      ok: true,
      ignored: "sender not allowed",
    });

    await expectOk(await tg(worker, 1, `/pair ${code}`), { ok: true, ignored: "pair command" });
    await until(() => sentTo(platform, 1).length === 1, "the approval");
    assertMatch(sentTo(platform, 1)[0], /^Approved telegram:4203 \(User4203\)/);
    await tg(worker, 1, `/pair ${code}`);
    await until(() => sentTo(platform, 1).length === 2, "the repeat");
    assertMatch(sentTo(platform, 1)[1], /already approved/);
    await tg(worker, 1, "/pair NOPE2345");
    await until(() => sentTo(platform, 1).length === 3, "the unknown code");
    assertMatch(sentTo(platform, 1)[2], /No pending pairing/);
    assertStrictEquals(fake.requests.length, 0);

    await tg(worker, user, "in?");
    await until(() => sentTo(platform, user).length === 2, "the reply");
    assertEquals(fake.requests.map((r) => r.lastUserText), ["in?"]);
  },
);

pairing.test(
  "POST /v1/access/pairings/{code}/approve approves a code once when two approvals race",
  async (worker, _fake, platform) => {
    const user = 4204;
    await tg(worker, user, "hi");
    await platform.waitForCalls(1);
    const code = CODE.exec(sentTo(platform, user)[0])![1];
    const answers = await Promise.all(
      Array.from({ length: 5 }, () => api(worker, "POST", `/v1/access/pairings/${code}/approve`)),
    );
    const statuses = answers.map((r) => r.status).sort();
    for (const r of answers) await r.body?.cancel();
    assertEquals(statuses, [200, 409, 409, 409, 409]);
    assertStrictEquals(
      (await api(worker, "POST", "/v1/access/pairings/ABCDEFGH/approve")).status,
      404,
    );
    const bad = await api(worker, "POST", "/v1/access/pairings/0000/approve");
    assertStrictEquals(bad.status, 400);
    assertEquals((await json(bad)).error.type, "invalid_request_error");
  },
);

allowlist.test(
  "gateMessage() under ACCESS_POLICY=allowlist tells an unknown DM once that the bot is private, and never pairs",
  async (worker, fake, platform) => {
    const user = 4205;
    await expectOk(await tg(worker, user, "hi"), { ok: true, ignored: "sender not allowed" });
    await platform.waitForCalls(1);
    await expectOk(await tg(worker, user, "hi again"), { ok: true, ignored: "sender not allowed" });
    await pause(100);
    assertEquals(sentTo(platform, user), ["This bot is private."]);
    assertStrictEquals(fake.requests.length, 0);
    // No test on the allowlist Worker pairs anyone: nothing pending at all.
    assertEquals((await json(await api(worker, "GET", "/v1/access/pairings"))).data, []);
  },
);

allowlist.test(
  "gateMessage() starts no turn beyond USER_TURNS_PER_HOUR for 50 messages at once, and sends one notice",
  async (worker, fake, platform) => {
    const user = 4206; // allowed, with USER_TURNS_PER_HOUR=3, BUSY_ACK=off and MAX_QUEUED=100
    const answers = await Promise.all(
      Array.from({ length: 50 }, (_, i) => tg(worker, user, `m${i}`)),
    );
    const bodies = await Promise.all(answers.map((r) => json(r)));
    assertStrictEquals(bodies.filter((b) => b.ignored === "over quota").length, 47);
    await until(() => fake.requests.length === 3, "three turns");
    await until(() => sentTo(platform, user).length === 4, "three replies and one notice");
    await pause(200);
    assertStrictEquals(fake.requests.length, 3);
    const notices = sentTo(platform, user).filter((t) => /limit of 3 messages per hour/.test(t));
    assertStrictEquals(notices.length, 1);
    // Commands are answered without the model and do not count.
    await tg(worker, user, "/status");
    await until(() => sentTo(platform, user).length === 5, "the status answer");
    assertMatch(sentTo(platform, user)[4], /Idle|Not running|Working/);
  },
);

allowlist.test(
  "gateMessage() in a group: three members over USER_TURNS_PER_HOUR get one notice in the chat, not three",
  async (worker, fake, platform) => {
    const group = -1004211;
    const members = [4211, 4212, 4213]; // allowed, with USER_TURNS_PER_HOUR=3
    for (const member of members) {
      for (let i = 0; i < 3; i++) {
        const text = `${member} turn ${i}`;
        await expectOk(await tg(worker, member, text, group));
        await until(() => sentTo(platform, group).includes(text), `the reply to ${text}`);
      }
    }
    for (const member of members) {
      await expectOk(await tg(worker, member, `${member} over`, group), {
        ok: true,
        ignored: "over quota",
      });
    }
    // Sent from the sender's record after the acknowledgement: awaited, then a pause for a second.
    const notices = () =>
      sentTo(platform, group).filter((t) => /limit of 3 messages per hour/.test(t));
    await until(() => notices().length > 0, "the notice");
    await pause(200);
    assertStrictEquals(notices().length, 1, JSON.stringify(notices()));
    assertStrictEquals(fake.requests.length, 9, "no turn over the quota");
  },
);

allowlist.test(
  "POST /webhooks/generic is trusted by its signature unless ALLOWED_USERS names generic users",
  async (worker, fake) => {
    const refused = await sendWebhook(worker, {
      session: "generic-s1",
      text: "hi",
      user: "mallory",
    });
    assertStrictEquals(refused.status, 403);
    assertEquals((await json(refused)).error.type, "access_denied");
    assertStrictEquals(fake.requests.length, 0);
    const ok = await sendWebhook(worker, { session: "generic-s1", text: "hi", user: "ops" });
    assertEquals((await json(ok)).reply, "hi");
    // Its own Worker: ALLOWED_USERS naming no generic user is the configuration under test.
    await withPlatform({ ACCESS_POLICY: "allowlist" }, async (worker) => {
      const ok = await sendWebhook(worker, { session: "generic-s1", text: "hi", user: "anyone" });
      assertStrictEquals(ok.status, 200);
      await ok.body?.cancel();
    });
  },
);

pairing.test("/v1/access/* is for admin tenants only and refuses a listed user's revocation", async (worker) => {
  const refused = await api(worker, "GET", "/v1/access/pairings", "acme-key-1");
  assertStrictEquals(refused.status, 403);
  assertEquals((await json(refused)).error.type, "permission_denied");
  assertStrictEquals((await api(worker, "GET", "/v1/access/users", "wrong")).status, 401);
  const listed = await api(worker, "DELETE", "/v1/access/users/telegram%3A1");
  assertStrictEquals(listed.status, 409);
  await listed.body?.cancel();
  const bad = await api(worker, "DELETE", "/v1/access/users/nocolon");
  assertStrictEquals(bad.status, 400);
  await bad.body?.cancel();
});

pairing.test(
  "apiTurnQuota() answers 429 rate_limited with Retry-After past API_TURNS_PER_MINUTE, per tenant, for every turn route",
  async (worker, fake) => {
    // Tenants of its own: the quota is counted per tenant for as long as the Worker runs.
    const [tenant, other] = ["rate-a-key-1", "rate-b-key-1"];
    const run = (key: string, idempotency?: string) =>
      worker.fetch("/v1/runs", {
        method: "POST",
        headers: {
          authorization: `Bearer ${key}`,
          "content-type": "application/json",
          ...(idempotency ? { "idempotency-key": idempotency } : {}),
        },
        body: JSON.stringify({ input: "hi" }),
      });
    assertStrictEquals((await run(tenant, "k1")).status, 202);
    // A retry with the same Idempotency-Key is the same turn: counted once.
    assertStrictEquals((await run(tenant, "k1")).status, 202);
    assertStrictEquals((await run(tenant)).status, 202);
    for (const path of ["/v1/runs", "/v1/chat/completions", "/v1/responses"]) {
      const over = await worker.fetch(path, {
        method: "POST",
        headers: { authorization: `Bearer ${tenant}`, "content-type": "application/json" },
        body: JSON.stringify({
          input: "x",
          model: "m",
          messages: [{ role: "user", content: "x" }],
        }),
      });
      assertStrictEquals(over.status, 429, path);
      assertEquals((await json(over)).error.type, "rate_limited");
      const wait = Number(over.headers.get("retry-after"));
      assert(wait >= 1 && wait <= 60, `Retry-After ${wait}`);
    }
    // Another tenant has its own minute.
    assertStrictEquals((await run(other)).status, 202);
    await until(() => fake.requests.length === 3, "three turns");
  },
);

pairing.test(
  "queueNotice() waits out Telegram's 429 on a pairing code and sends it once it may",
  async (worker, fake, platform) => {
    const user = 4207;
    platform.respond((_call, i) =>
      i === 0
        ? {
          status: 429,
          body: {
            ok: false,
            error_code: 429,
            description: "Too Many Requests: retry after 1",
            parameters: { retry_after: 1 },
          },
        }
        : { status: 200, body: { ok: true, result: { message_id: i + 1 } } }
    );
    await expectOk(await tg(worker, user, "hello?"), { ok: true, ignored: "sender not allowed" });
    await until(() => sentTo(platform, user).length === 2, "the code, after the wait");
    const [refused, sent] = sentTo(platform, user);
    assertStrictEquals(sent, refused, "the same notice, tried again");
    assert(CODE.test(sent), sent);
    await pause(100);
    assertStrictEquals(sentTo(platform, user).length, 2);
    assertStrictEquals(fake.requests.length, 0);
  },
);

pairing.done();
allowlist.done();

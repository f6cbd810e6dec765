// Daily token caps end to end: USER_TOKENS_PER_DAY under 50 messages at once across a user's sessions, TENANT_TOKENS_PER_DAY's 429 budget_exceeded with its reset time; Deno + Miniflare.
import { assert, assertStrictEquals } from "@std/assert";
import { API_KEY, chat, chatReply, json, until } from "./_support/clients.ts";
import { pause } from "./_support/platform_rig.ts";
import { sharedBaton } from "./_support/shared_baton.ts";
import type { TestWorker } from "./_support/worker.ts";
import type { FakePlatform } from "./_support/fake_platform.ts";

const SECRET = "tg-webhook-secret_spend";
const TOKEN = "123456789:AAH-spend_bot_token_value";
const SPENDER = "spender-key-0123456789";

// Each turn reserves TURN_MAX_TOKENS (250) and the fake model reports 250 tokens a call: the
// user's 1,000 a day hold four turns, the tenant's 500 two.
const baton = sharedBaton({
  vars: {
    TELEGRAM_WEBHOOK_SECRET: SECRET,
    TELEGRAM_BOT_TOKEN: TOKEN,
    ACCESS_POLICY: "allowlist",
    ALLOWED_USERS: "telegram:5301,telegram:5302",
    GATEWAY_API_KEYS: `spender:${SPENDER}`,
    USER_TOKENS_PER_DAY: "1000",
    TENANT_TOKENS_PER_DAY: "500",
    TURN_MAX_TOKENS: "250",
    BUSY_ACK: "off",
    MAX_QUEUED: "100",
  },
});

let _nextUpdate = 530_000;

/** A Telegram text from `from` in group `group` (a session of its own per group). */
function tg(worker: TestWorker, from: number, text: string, group: number): Promise<Response> {
  const update = {
    update_id: _nextUpdate++,
    message: {
      message_id: _nextUpdate,
      date: Math.floor(Date.now() / 1000),
      chat: { id: group, type: "supergroup", title: "Group" },
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

function sentTo(platform: FakePlatform, chats: number[]): string[] {
  return platform.calls.filter((c) => chats.includes(c.body?.chat_id)).map((c) =>
    String(c.body.text)
  );
}

const USAGE = { prompt_tokens: 200, completion_tokens: 50 };

baton.test(
  "USER_TOKENS_PER_DAY: 50 messages at once from one user across five sessions start only the turns the cap allows, with one notice",
  async (worker, fake, platform) => {
    fake.script((req) => ({ kind: "text", text: `re ${req.lastUserText}`, usage: USAGE }));
    const user = 5301;
    const groups = [-1005301, -1005302, -1005303, -1005304, -1005305];
    const answers = await Promise.all(
      Array.from({ length: 50 }, (_, i) => tg(worker, user, `m${i}`, groups[i % 5])),
    );
    const bodies = await Promise.all(answers.map((r) => json(r)));
    assertStrictEquals(bodies.filter((b) => b.ignored === "over token budget").length, 46);
    await until(() => fake.requests.length === 4, "four turns");
    const notice = /today's limit of 1,000 tokens/;
    await until(
      () => sentTo(platform, groups).filter((t) => !notice.test(t)).length === 4,
      "four replies",
    );
    await until(() => sentTo(platform, groups).some((t) => notice.test(t)), "the notice");
    await pause(300);
    assertStrictEquals(fake.requests.length, 4, "no model call past the cap");
    assertStrictEquals(sentTo(platform, groups).filter((t) => notice.test(t)).length, 1);
    // Settled at 1,000 used: the next message is refused too, silently (one notice a day).
    assertStrictEquals(
      (await json(await tg(worker, user, "more", groups[0]))).ignored,
      "over token budget",
    );
    assertStrictEquals(fake.requests.length, 4);
  },
);

baton.test(
  "TENANT_TOKENS_PER_DAY: a turn that could pass the tenant's day is 429 budget_exceeded with Retry-After and reset_at",
  async (worker, fake) => {
    fake.script((req) => ({ kind: "text", text: `re ${req.lastUserText}`, usage: USAGE }));
    const before = fake.requests.length;
    assertStrictEquals(await chatReply(await chat(worker, "a", { key: SPENDER })), "re a");
    assertStrictEquals(await chatReply(await chat(worker, "b", { key: SPENDER })), "re b");
    const res = await chat(worker, "c", { key: SPENDER });
    const body = await json(res);
    assertStrictEquals(res.status, 429, JSON.stringify(body));
    assertStrictEquals(body.error.type, "budget_exceeded");
    const resetAt = Date.parse(body.error.reset_at);
    const midnight = (Math.floor(Date.now() / 86_400_000) + 1) * 86_400_000;
    assertStrictEquals(resetAt, midnight);
    const retryAfter = Number(res.headers.get("retry-after"));
    assert(retryAfter > 0 && retryAfter <= 86_400, String(retryAfter));
    assertStrictEquals(fake.requests.length, before + 2, "no model call for the refused turn");
  },
);

baton.test(
  "USER_TOKENS_PER_DAY: each settled turn gives back what it reserved and did not use, so turns that use little fit more than the day's reservations",
  async (worker, fake, platform) => {
    const small = { prompt_tokens: 80, completion_tokens: 20 };
    fake.script((req) => ({ kind: "text", text: `re ${req.lastUserText}`, usage: small }));
    const [user, group] = [5302, -1005311];
    // Four turns reserve the user's 1,000 (250 each); a fifth fits only once they settled at 100.
    for (let i = 1; i <= 5; i++) {
      const answer = await json(await tg(worker, user, `s${i}`, group));
      assertStrictEquals(answer.ignored, undefined, `s${i}: ${JSON.stringify(answer)}`);
      await until(() => sentTo(platform, [group]).includes(`re s${i}`), `the reply to s${i}`);
      await until(async () => {
        const res = await worker.fetch("/v1/usage?user=telegram:5302", {
          headers: { authorization: `Bearer ${API_KEY}` },
        });
        return (await json(res)).totals?.turns === i;
      }, `turn ${i} settled`);
    }
  },
);

baton.done();

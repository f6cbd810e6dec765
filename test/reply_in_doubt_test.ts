// A reply send cut off by a runtime kill, resolved after the restart the way each platform allows; Deno + Miniflare.
import { assert, assertEquals, assertStrictEquals } from "@std/assert";
import { RESEND_NOTE } from "../lib/platform.ts";
import { signGithubPayload } from "../lib/platforms/github.ts";
import { signSlackRequest } from "../lib/platforms/slack.ts";
import { settled, until, withBaton } from "./_support/clients.ts";
import {
  type FakePlatform,
  type PlatformCall,
  startFakePlatform,
} from "./_support/fake_platform.ts";
import { tempPersistDir, type TestWorker } from "./_support/worker.ts";

const TG = { TELEGRAM_WEBHOOK_SECRET: "tg-secret", TELEGRAM_BOT_TOKEN: "1:tg-token" };
const GH = {
  GITHUB_WEBHOOK_SECRET: "gh-secret",
  GITHUB_TOKEN: "gh-token",
  GITHUB_BOT_LOGIN: "bot",
};
const SLACK = { SLACK_SIGNING_SECRET: "slack-secret", SLACK_BOT_TOKEN: "xoxb-t" };

/** A platform's side of one case: how a message comes in, which calls are sends, which are reads. */
interface Case {
  vars: Record<string, string>;
  session: string;
  deliver(worker: TestWorker, text: string): Promise<Response>;
  isSend(call: PlatformCall): boolean;
  /** The fake's answer to a read-back call, from the sends that "arrived". */
  read?(call: PlatformCall, arrived: PlatformCall[]): unknown;
}

/**
 * Sends one message whose reply send the fake platform holds open (and, with `arrived`, counts
 * as posted), kills the runtime mid-send (disposes workerd), restarts it on the same state, and
 * returns every send the platform saw once the session is idle again.
 */
async function cutOffAndRestart(
  platform: Case,
  opts: { arrived: boolean; vars?: Record<string, string> },
): Promise<{ sends: PlatformCall[]; reads: PlatformCall[] }> {
  const fake: FakePlatform = await startFakePlatform();
  const dir = await tempPersistDir();
  const arrived: PlatformCall[] = [];
  const held = Promise.withResolvers<void>();
  let holding = true;
  fake.respond(async (call) => {
    if (!platform.isSend(call)) return { status: 200, body: platform.read?.(call, arrived) };
    if (holding) {
      holding = false;
      if (opts.arrived) arrived.push(call);
      await held.promise; // the runtime dies while this request is out
      return { status: 500 };
    }
    arrived.push(call);
    return { status: 200, body: { ok: true, result: { message_id: 9 }, id: 9 } };
  });
  const vars = {
    TELEGRAM_API_ROOT: fake.url,
    SLACK_API_ROOT: `${fake.url}/api`,
    GITHUB_API_ROOT: fake.url,
    TURN_LEASE_MS: "300",
    ...platform.vars,
    ...opts.vars,
  };
  try {
    await withBaton(async (worker) => {
      await (await platform.deliver(worker, "hello")).body?.cancel();
      await until(() => !holding, "the reply send");
    }, { persistDir: dir.path, vars });
    await withBaton(async (worker) => {
      // Idle again only once the watchdog has recovered the dead claim and settled the reply.
      await settled(worker, platform.session);
    }, { persistDir: dir.path, vars });
    return {
      sends: fake.calls.filter(platform.isSend),
      reads: fake.calls.filter((c) => !platform.isSend(c)),
    };
  } finally {
    held.resolve();
    await fake.close();
    await dir.cleanup();
  }
}

const telegram: Case = {
  vars: TG,
  session: "telegram:42",
  deliver: (worker, text) =>
    worker.fetch("/webhooks/telegram", {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "x-telegram-bot-api-secret-token": "tg-secret",
      },
      body: JSON.stringify({
        update_id: 1,
        message: {
          message_id: 1,
          date: 0,
          chat: { id: 42, type: "private" },
          from: { id: 42, is_bot: false, first_name: "A" },
          text,
        },
      }),
    }),
  isSend: (call) => call.path.endsWith("/sendMessage"),
};

const github: Case = {
  vars: GH,
  session: "github:o/r#1",
  async deliver(worker, text) {
    const body = JSON.stringify({
      action: "created",
      issue: { number: 1 },
      repository: { full_name: "o/r" },
      comment: {
        id: 1,
        body: `@bot ${text}`,
        user: { login: "ann", id: 2, type: "User" },
        author_association: "OWNER",
      },
    });
    return await worker.fetch("/webhooks/github", {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "x-github-event": "issue_comment",
        "x-github-delivery": "d-1",
        "x-hub-signature-256": await signGithubPayload("gh-secret", body),
      },
      body,
    });
  },
  isSend: (call) => call.method === "POST",
  read: (_call, arrived) => arrived.map((c, i) => ({ id: i + 1, body: c.body.body })),
};

const slack: Case = {
  vars: SLACK,
  session: "slack:T1:C1:1700000000.000100",
  async deliver(worker, text) {
    const body = JSON.stringify({
      type: "event_callback",
      team_id: "T1",
      event_id: "Ev1",
      authorizations: [{ user_id: "UBOT" }],
      event: {
        type: "app_mention",
        user: "U1",
        text: `<@UBOT> ${text}`,
        ts: "1700000000.000100",
        channel: "C1",
      },
    });
    const timestamp = Math.floor(Date.now() / 1000);
    return await worker.fetch("/webhooks/slack", {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "x-slack-request-timestamp": String(timestamp),
        "x-slack-signature": await signSlackRequest({ secret: "slack-secret", timestamp, body }),
      },
      body,
    });
  },
  isSend: (call) => call.path.endsWith("/chat.postMessage"),
  read: (_call, arrived) => ({
    ok: true,
    messages: arrived.map((c, i) => ({
      ts: `1700000001.00000${i}`,
      text: c.body.text,
      metadata: c.body.metadata,
    })),
  }),
};

Deno.test("OutboxSender after a kill: Telegram resends the part in doubt once, behind the note", async () => {
  const { sends } = await cutOffAndRestart(telegram, { arrived: true });
  assertEquals(sends.map((c) => c.body.text), ["hello", `${RESEND_NOTE}hello`]);
});

Deno.test("OutboxSender after a kill: REPLY_IN_DOUBT=skip leaves a Telegram part in doubt unsent", async () => {
  const { sends } = await cutOffAndRestart(telegram, {
    arrived: false,
    vars: { REPLY_IN_DOUBT: "skip" },
  });
  assertEquals(sends.map((c) => c.body.text), ["hello"]);
});

Deno.test("OutboxSender after a kill: GitHub finds the comment that arrived and never posts it twice", async () => {
  const { sends, reads } = await cutOffAndRestart(github, { arrived: true });
  assertStrictEquals(sends.length, 1);
  assert(
    reads.some((c) => c.path.startsWith("/repos/o/r/issues/1/comments?since=")),
    JSON.stringify(reads.map((c) => c.path)),
  );
});

Deno.test("OutboxSender after a kill: GitHub posts the comment that never arrived, once, unmarked", async () => {
  const { sends } = await cutOffAndRestart(github, { arrived: false });
  assertStrictEquals(sends.length, 2);
  assertEquals(sends[1].body.body, sends[0].body.body, "the same text and marker, no note");
});

Deno.test("OutboxSender after a kill: Slack finds the message that arrived by its metadata and never posts it twice", async () => {
  const { sends, reads } = await cutOffAndRestart(slack, { arrived: true });
  assertStrictEquals(sends.length, 1);
  assert(reads.some((c) => c.path.startsWith("/api/conversations.replies?")));
});

Deno.test("OutboxSender after a kill: Slack posts the message that never arrived, once", async () => {
  const { sends } = await cutOffAndRestart(slack, { arrived: false });
  assertStrictEquals(sends.length, 2);
  assertEquals(sends[1].body, sends[0].body);
});

// A reply send cut off by a runtime kill, resolved after the restart the way each platform allows; Deno + Miniflare.
import { assert, assertEquals, assertStrictEquals } from "@std/assert";
import { RESEND_NOTE } from "../lib/chat/mod.ts";
import { settled, until, withBaton } from "./_support/clients.ts";
import { GITHUB_REPO, githubDriver } from "./_support/drivers/github.ts";
import { deliver, type Driver, type Post } from "./_support/drivers/mod.ts";
import { SLACK_TEAM, slackDriver } from "./_support/drivers/slack.ts";
import { telegramDriver } from "./_support/drivers/telegram.ts";
import {
  type FakePlatform,
  type PlatformCall,
  startFakePlatform,
} from "./_support/fake_platform.ts";
import { tempPersistDir, type TestWorker } from "./_support/worker.ts";

/**
 * POSTs `post` as `driver` shapes it, signed with the driver's credentials (`id` names the
 * delivery where the platform sends one).
 */
async function send(
  worker: TestWorker,
  driver: Driver,
  post: Post,
  id?: string,
): Promise<Response> {
  const body = JSON.stringify(driver.shape(post));
  const headers = await driver.sign(body, driver.credentials, { id });
  return await deliver(worker.fetch, driver, { headers, body, id: post.id });
}

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
  vars: telegramDriver.vars(),
  session: "telegram:42",
  deliver: (worker, text) =>
    send(worker, telegramDriver, { chat: "42", text, id: "1", event: "1" }),
  isSend: (call) => call.path.endsWith("/sendMessage"),
};

const github: Case = {
  vars: githubDriver.vars(),
  session: `github:${GITHUB_REPO}#1`,
  deliver: (worker, text) =>
    send(worker, githubDriver, { chat: "1", text, id: "1", mention: true }, "d-1"),
  isSend: (call) => call.method === "POST",
  read: (_call, arrived) => arrived.map((c, i) => ({ id: i + 1, body: c.body.body })),
};

const slack: Case = {
  vars: slackDriver.vars(),
  session: `slack:${SLACK_TEAM}:C1:1700000000.000100`,
  deliver: (worker, text) =>
    send(worker, slackDriver, {
      chat: "C1",
      text,
      id: "1700000000.000100",
      from: { id: "U1", name: "U1" },
      group: true,
      mention: true,
      event: "Ev1",
    }),
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
    reads.some((c) => c.path.startsWith(`/repos/${GITHUB_REPO}/issues/1/comments?since=`)),
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

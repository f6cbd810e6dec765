// An access notice (a pairing code, GitHub's refusal comment) cut off mid-send by a runtime kill, sent once after the restart the way the platform allows; Deno + Miniflare.
import type { IssueCommentCreatedEvent } from "@octokit/webhooks-types";
import { assert, assertEquals, assertStrictEquals } from "@std/assert";
import { GITHUB_REFUSAL_TEXT } from "../lib/access/access_notices.ts";
import { RESEND_NOTE } from "../lib/chat/mod.ts";
import { until } from "./_support/clients.ts";
import { GITHUB_REPO, githubDriver } from "./_support/drivers/github.ts";
import { deliver } from "./_support/drivers/mod.ts";
import { telegramDriver } from "./_support/drivers/telegram.ts";
import { type PlatformCall, startFakePlatform } from "./_support/fake_platform.ts";
import { pause, withPlatform } from "./_support/platform_rig.ts";
import { tempPersistDir, type TestWorker } from "./_support/worker.ts";

const CODE = /pairing code to its owner: ([A-Z2-9]{8})/;

/** A platform's side of one case: the refused message, which calls are sends, which are reads. */
interface Case {
  vars: Record<string, string>;
  deliver(worker: TestWorker): Promise<Response>;
  isSend(call: PlatformCall): boolean;
  /** The fake's answer to a read-back call, from the sends that "arrived". */
  read?(call: PlatformCall, arrived: PlatformCall[]): unknown;
  /** Whether the restarted runtime is done with the notice, from the calls so far. */
  done(sends: PlatformCall[], reads: PlatformCall[]): boolean;
}

/**
 * Sends one message from a sender the settings refuse, whose notice the fake platform holds open
 * (counted as posted: it "arrived") while the runtime is killed (workerd disposed); restarts it on
 * the same state and returns every call the platform saw once `platform.done` says so.
 */
async function cutOffAndRestart(platform: Case): Promise<{
  sends: PlatformCall[];
  reads: PlatformCall[];
}> {
  const fake = await startFakePlatform();
  const dir = await tempPersistDir();
  const arrived: PlatformCall[] = [];
  const held = Promise.withResolvers<void>();
  let holding = true;
  fake.respond(async (call, i) => {
    if (!platform.isSend(call)) return { status: 200, body: platform.read?.(call, arrived) };
    if (holding) {
      holding = false;
      arrived.push(call);
      await held.promise; // the runtime dies while this request is out
      return { status: 500 };
    }
    arrived.push(call);
    return { status: 201, body: { ok: true, result: { message_id: i + 1 }, id: i + 1 } };
  });
  const vars = { TURN_LEASE_MS: "300", ...platform.vars };
  const sends = () => fake.calls.filter(platform.isSend);
  const reads = () => fake.calls.filter((c) => !platform.isSend(c));
  try {
    await withPlatform(vars, async (worker) => {
      // Not awaited to its end: a gate that sends before it answers never answers here.
      void platform.deliver(worker).then((r) => r.body?.cancel(), () => {});
      await until(() => !holding, "the notice's send");
    }, { persistDir: dir.path, platform: fake });
    await withPlatform(vars, async () => {
      await until(() => platform.done(sends(), reads()), "the notice after the restart", 20_000);
      await pause(300); // a second send, were there one, would be out by now
    }, { persistDir: dir.path, platform: fake });
    return { sends: sends(), reads: reads() };
  } finally {
    held.resolve();
    await fake.close();
    await dir.cleanup();
  }
}

const telegram: Case = {
  vars: { ...telegramDriver.vars(), ACCESS_POLICY: "pairing", ADMIN_USERS: "telegram:1" },
  deliver: async (worker) => {
    const body = JSON.stringify({
      update_id: 43010,
      message: {
        message_id: 1,
        date: Math.floor(Date.now() / 1000),
        chat: { id: 4301, type: "private", first_name: "User4301" },
        from: { id: 4301, is_bot: false, first_name: "User4301" },
        text: "hello?",
      },
    });
    const headers = await telegramDriver.sign(body, telegramDriver.credentials);
    return await deliver(worker.fetch, telegramDriver, { headers, body, id: "1" });
  },
  isSend: (call) => call.path.endsWith("/sendMessage"),
  done: (sends) => sends.length >= 2,
};

const github: Case = {
  vars: { ...githubDriver.vars(), ACCESS_POLICY: "pairing", GITHUB_REFUSAL: "comment" },
  deliver: async (worker) => {
    const shaped = githubDriver.shape({
      chat: "7",
      text: "help, stranger",
      id: "7001",
      from: { id: "7001", name: "stranger" },
      mention: true,
    }) as IssueCommentCreatedEvent;
    const body = JSON.stringify({
      ...shaped,
      comment: { ...shaped.comment, author_association: "NONE" },
    });
    const headers = await githubDriver.sign(body, githubDriver.credentials, { id: "d-7001" });
    return await deliver(worker.fetch, githubDriver, { headers, body, id: "7001" });
  },
  isSend: (call) => call.method === "POST",
  read: (_call, arrived) => arrived.map((c, i) => ({ id: i + 1, body: c.body.body })),
  done: (_sends, reads) => reads.some((c) => c.path.includes("/comments?since=")),
};

Deno.test("AccessDO.queueNotice() after a kill: Telegram gets the pairing code in doubt once more, behind the note", async () => {
  const { sends } = await cutOffAndRestart(telegram);
  const texts = sends.map((c) => String(c.body.text));
  assertStrictEquals(texts.length, 2, JSON.stringify(texts));
  assert(CODE.test(texts[0]), texts[0]);
  assertEquals(texts[1], `${RESEND_NOTE}${texts[0]}`, "the same code, marked");
});

Deno.test("AccessDO.queueNotice() after a kill: GitHub finds the refusal comment that arrived and never posts it twice", async () => {
  const { sends, reads } = await cutOffAndRestart(github);
  assertStrictEquals(sends.length, 1, JSON.stringify(sends.map((c) => c.body)));
  assert(String(sends[0].body.body).startsWith(GITHUB_REFUSAL_TEXT));
  assert(
    reads.some((c) => c.path.startsWith(`/repos/${GITHUB_REPO}/issues/7/comments?since=`)),
    JSON.stringify(reads.map((c) => c.path)),
  );
});

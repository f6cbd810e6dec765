// Slack previews in workerd: one message posted in the reply's place, grown by chat.update, edited into the reply exactly once (also across a crash); Deno + Miniflare.
import { assert, assertEquals, assertStrictEquals } from "@std/assert";
import { SLACK_PREVIEW_MARK } from "../lib/platforms/slack_preview.ts";
import { PREVIEW_STOPPED } from "../lib/session/live_reply.ts";
import { until } from "./_support/clients.ts";
import { deliver as deliverTo, type Post } from "./_support/drivers/mod.ts";
import { SLACK_TEAM as TEAM, slackDriver } from "./_support/drivers/slack.ts";
import type { FakeModelStep } from "../lib/testing/fake_model.ts";
import { type PlatformCall, startFakePlatform } from "./_support/fake_platform.ts";
import { expectOk, pause, withPlatform } from "./_support/platform_rig.ts";
import { sharedBaton } from "./_support/shared_baton.ts";
import { tempPersistDir, type TestWorker } from "./_support/worker.ts";

const SLACK = { ...slackDriver.vars(), STREAM_REPLIES: "on" };

// One Worker for the file with previews on (session_info asks: only the approval test calls it),
// each test in a thread or DM of its own; previews off and the crash start their own.
const baton = sharedBaton({ vars: { ...SLACK, APPROVAL_TOOLS: "session_info" } });

/** A reply in 24 pieces, written one every 150 ms (about 3.6 s in all). */
const REPLY = "The quick brown fox jumps over the lazy dog, again and again and again.";
const PIECES = 24;
const slow: FakeModelStep = { kind: "text", text: REPLY, pieces: PIECES, pieceDelayMs: 150 };
let _ts = 0;

/** Delivers `post` as Slack does: slackDriver's event callback, signed by it. */
async function deliver(worker: TestWorker, post: Post): Promise<void> {
  const body = JSON.stringify(slackDriver.shape(post));
  const headers = await slackDriver.sign(body, slackDriver.credentials);
  await expectOk(await deliverTo(worker.fetch, slackDriver, { headers, body, id: post.id }));
}

/** Mentions the bot in channel C1 (a new thread); returns the thread's session key. */
async function mention(worker: TestWorker, text: string): Promise<string> {
  const ts = `1700000100.${String(++_ts).padStart(6, "0")}`;
  const from = { id: "U1", name: "U1" };
  await deliver(worker, { chat: "C1", text, id: ts, from, group: true, mention: true });
  return `slack:${TEAM}:C1:${ts}`;
}

const method = (calls: PlatformCall[], name: string) =>
  calls.filter((c) => c.path === `/api/${name}`);
const texts = (calls: PlatformCall[]) => calls.map((c) => String(c.body.text));

baton.test(
  "Slack previews: one message grows by throttled chat.update, and the last edit is the reply, exactly once",
  async (worker, fake, slack) => {
    fake.script(() => slow);
    await mention(worker, "grow");
    await until(() => texts(method(slack.calls, "chat.update")).includes(REPLY), "the reply");
    await pause(500);
    const posts = method(slack.calls, "chat.postMessage");
    assertStrictEquals(posts.length, 1, "one message: the preview that becomes the reply");
    assert(String(posts[0].body.text).endsWith(SLACK_PREVIEW_MARK), "marked as unfinished");
    const updates = method(slack.calls, "chat.update");
    const ts = slack.calls.indexOf(posts[0]) + 1; // the fake names message i by `1700000000.${i}`
    assert(updates.every((u) => u.body.ts === `1700000000.${ts}`), "every edit is of that message");
    assert(updates.length >= 3, `${updates.length} edits`);
    assert(updates.length <= PIECES / 3 + 2, `throttled: ${updates.length} edits`);
    // The reply is the last edit, once, carrying its part's name; every preview before it is marked.
    assertEquals(updates.at(-1)!.body.text, REPLY);
    assertStrictEquals(texts(updates).filter((t) => t === REPLY).length, 1);
    assertEquals(updates.at(-1)!.body.metadata?.event_type, "baton_part");
    // The thread's status ("is thinking…") was set while it ran, and never after the reply.
    const statuses = method(slack.signals, "assistant.threads.setStatus");
    assert(statuses.length >= 1, "the status was shown");
    assert(statuses.every((c) => c.order < updates.at(-1)!.order), "no status after the reply");
    for (const preview of updates.slice(0, -1)) {
      const text = String(preview.body.text);
      assert(text.endsWith(SLACK_PREVIEW_MARK), "a preview says it is unfinished");
      assert(REPLY.startsWith(text.slice(0, -SLACK_PREVIEW_MARK.length)), "the reply so far");
    }
  },
);

// Its own Worker: previews off is the configuration under test.
Deno.test("Slack previews: STREAM_REPLIES=off posts the reply once and edits nothing", async () => {
  await withPlatform({ ...SLACK, STREAM_REPLIES: "off" }, async (worker, fake, slack) => {
    fake.script(() => slow);
    await mention(worker, "plain");
    await until(() => method(slack.calls, "chat.postMessage").length === 1, "the reply");
    await pause(500);
    assertEquals(texts(method(slack.calls, "chat.postMessage")), [REPLY]);
    assertStrictEquals(method(slack.calls, "chat.update").length, 0);
  });
});

baton.test(
  "Slack previews: a 429 on an edit stops the previews, and the reply still replaces the preview once",
  async (worker, fake, slack) => {
    fake.script(() => slow);
    let limited = 0;
    slack.respond((call, i) => {
      const preview = String(call.body?.text ?? "").endsWith(SLACK_PREVIEW_MARK);
      if (call.path === "/api/chat.update" && preview) {
        limited++;
        return { status: 429, headers: { "retry-after": "1" }, body: { ok: false } };
      }
      return { status: 200, body: { ok: true, ts: `1700000000.${i + 1}` } };
    });
    await mention(worker, "limited");
    await until(() => texts(method(slack.calls, "chat.update")).includes(REPLY), "the reply");
    await pause(1_500);
    assertStrictEquals(limited, 1, "no preview after the 429");
    assertStrictEquals(method(slack.calls, "chat.postMessage").length, 1);
    assertStrictEquals(
      texts(method(slack.calls, "chat.update")).filter((t) => t === REPLY).length,
      1,
    );
  },
);

baton.test(
  "Slack previews: a stop mid-stream edits the preview to the stopped notice, and no reply follows",
  async (worker, fake, slack) => {
    fake.script(() => slow);
    const key = await mention(worker, "stop me");
    await until(() => method(slack.calls, "chat.update").length >= 1, "a growing preview");
    const stop = await worker.fetch(`/v1/sessions/${encodeURIComponent(key)}/stop`, {
      method: "POST",
      headers: { authorization: "Bearer test-gateway-key" },
    });
    assertStrictEquals(stop.status, 200);
    await until(
      () => texts(method(slack.calls, "chat.update")).includes(PREVIEW_STOPPED),
      "notice",
    );
    await pause(1_000);
    assertEquals(method(slack.calls, "chat.update").at(-1)?.body.text, PREVIEW_STOPPED);
    const all = texts([
      ...method(slack.calls, "chat.update"),
      ...method(slack.calls, "chat.postMessage"),
    ]);
    assert(!all.includes(REPLY), "no final reply");
    assertStrictEquals(method(slack.calls, "chat.postMessage").length, 1, "only the preview");
  },
);

Deno.test("Slack previews: a turn killed mid-preview is recovered into that same message, never a second one", async () => {
  const dir = await tempPersistDir();
  const slack = await startFakePlatform();
  const vars = { ...SLACK, TURN_LEASE_MS: "200" };
  try {
    await withPlatform(vars, async (worker, fake) => {
      // The first attempt writes slowly and is killed while its preview grows.
      fake.script(() => ({ ...slow, pieceDelayMs: 400 }));
      await mention(worker, "survive");
      await until(() => method(slack.calls, "chat.update").length >= 1, "a growing preview");
    }, { persistDir: dir.path, platform: slack });
    const preview = method(slack.calls, "chat.postMessage");
    assertStrictEquals(preview.length, 1);
    const ts = `1700000000.${slack.calls.indexOf(preview[0]) + 1}`;
    await withPlatform(vars, async () => {
      // The restart runs the turn again (the default echo model answers at once).
      await until(
        () =>
          method(slack.calls, "chat.update").some((c) =>
            !String(c.body.text).endsWith(SLACK_PREVIEW_MARK)
          ),
        "the recovered reply",
      );
      await pause(800);
    }, { persistDir: dir.path, platform: slack });
    assertStrictEquals(method(slack.calls, "chat.postMessage").length, 1, "no second message");
    const finals = method(slack.calls, "chat.update").filter((c) =>
      !String(c.body.text).endsWith(SLACK_PREVIEW_MARK)
    );
    assertStrictEquals(finals.length, 1, "one final edit");
    assertStrictEquals(finals[0].body.ts, ts, "of the preview the killed attempt left");
  } finally {
    await slack.close();
    await dir.cleanup();
  }
});

/** Sends a direct message to the bot (channel D1); its session is `slack:<team>:D1`. */
async function direct(worker: TestWorker, text: string): Promise<void> {
  const ts = `1700000200.${String(++_ts).padStart(6, "0")}`;
  await deliver(worker, { chat: "D1", text, id: ts, from: { id: "U1", name: "U1" } });
}

baton.test(
  "Slack previews: a turn that pauses to ask deletes its preview, so the question and then the reply follow in order",
  async (worker, fake, slack) => {
    const before = "Let me look that up for you, it takes a moment.";
    fake.script((req) =>
      req.body.messages.at(-1).role === "tool" ? { kind: "text", text: "done looking" } : {
        kind: "tool_call",
        name: "session_info",
        args: {},
        text: before,
        pieces: 12,
        pieceDelayMs: 200,
      }
    );
    await direct(worker, "what session is this?");
    await until(() => method(slack.calls, "chat.delete").length === 1, "the preview deleted");
    await until(() => method(slack.calls, "chat.postMessage").length >= 2, "the question");
    const [preview, question] = method(slack.calls, "chat.postMessage");
    assert(String(preview.body.text).endsWith(SLACK_PREVIEW_MARK), "the preview came first");
    assert(String(question.body.text).includes("session_info"), "then the question");
    const deleted = method(slack.calls, "chat.delete")[0];
    assertStrictEquals(deleted.body.ts, `1700000000.${slack.calls.indexOf(preview) + 1}`);
    await direct(worker, "/approve");
    await until(
      () => texts(method(slack.calls, "chat.postMessage")).includes("done looking"),
      "reply",
    );
    await pause(500);
    // The reply is a message of its own after the question, not an edit of the deleted preview.
    const posts = method(slack.calls, "chat.postMessage");
    assertStrictEquals(posts.at(-1)!.body.text, "done looking");
    assert(posts.at(-1)!.order > question.order);
    assert(!texts(method(slack.calls, "chat.update")).includes("done looking"));
  },
);

baton.done();

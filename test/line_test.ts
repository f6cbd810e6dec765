// POST /webhooks/line end to end: workerd (one per configuration of the file), a fake model and a fake LINE Messaging API on loopback; Deno + Miniflare.
import { assert, assertEquals, assertMatch, assertStrictEquals } from "@std/assert";
import type { webhook } from "@line/bot-sdk";
import { settled, until } from "./_support/clients.ts";
import { lineDriver as driver } from "./_support/drivers/line.ts";
import { askThenEcho, toolRuns } from "./_support/fake_llm_scripts.ts";
import type { FakePlatform, PlatformCall } from "./_support/fake_platform.ts";
import { expectOk, pause, withPlatform } from "./_support/platform_rig.ts";
import { sharedBaton } from "./_support/shared_baton.ts";
import type { TestWorker } from "./_support/worker.ts";

const USER = "U4af4980629d6f5ad8b9f0a8b3a5cf1e2";
const SESSION = `line:user:${USER}`;
const PUSH_PATH = "/v2/bot/message/push";
const VARS = driver.vars();

// One Worker for the file's tests of these settings (and one for the approval tests, below); the
// allowlist test starts its own. Each test on a shared Worker has users and groups of its own.
const baton = sharedBaton({ vars: VARS });

/** A user id of one test's own (LINE's shape: U and 32 hex digits). */
const userOf = (n: number) => `U${String(n).padStart(32, "0")}`;
/** A group id of one test's own (C and 32 hex digits). */
const groupOf = (n: number) => `C${String(n).padStart(32, "0")}`;

let _next = 1;

/** The one event of lineDriver's delivery of `post` (a fresh message id). */
function shaped(post: Omit<Parameters<typeof driver.shape>[0], "id">): webhook.MessageEvent {
  const id = `4687895778982${_next++}`;
  return (driver.shape({ ...post, id }) as webhook.CallbackRequest)
    .events[0] as webhook.MessageEvent;
}

/** The destination every delivery names (the bot's user id), as lineDriver shapes it. */
const DESTINATION = (driver.shape({ chat: USER, text: "", id: "0" }) as webhook.CallbackRequest)
  .destination;

/** A text message event from the 1:1 chat with `user`. */
function textEvent(text: string, user: string) {
  return shaped({ chat: user, text });
}

/** POSTs events as LINE does, signed by lineDriver with the channel secret. */
async function post(worker: TestWorker, events: unknown[]): Promise<Response> {
  const body = JSON.stringify({ destination: DESTINATION, events });
  const headers = await driver.sign(body, driver.credentials);
  return worker.fetch(driver.path, { method: "POST", headers, body });
}

baton.test(
  "POST /webhooks/line acknowledges the console's empty verify delivery",
  async (worker, fake, line) => {
    await expectOk(await post(worker, []));
    await pause(200);
    assertStrictEquals(fake.requests.length, 0);
    assertStrictEquals(line.calls.length, 0);
  },
);

baton.test(
  "POST /webhooks/line retries a 500 under the same retry key and takes LINE's 409 as delivered",
  async (worker, _fake, line) => {
    line.respond((_, index) =>
      index === 0
        ? { status: 500, body: { message: "Internal error" } }
        : { status: 409, body: { message: "The retry key is already accepted" } }
    );
    const user = userOf(2);
    await expectOk(await post(worker, [textEvent("accepted already", user)]));
    await line.waitForCalls(2);
    await settled(worker, `line:user:${user}`);
    await pause(300);
    assertStrictEquals(line.calls.length, 2);
    assertStrictEquals(line.calls[1].body.messages[0].text, "accepted already", "no resend note");
    assertStrictEquals(
      line.calls[0].headers.get("x-line-retry-key"),
      line.calls[1].headers.get("x-line-retry-key"),
    );
  },
);

Deno.test("POST /webhooks/line runs the allowed sender's events of a delivery and refuses the others alone", async () => {
  const stranger = "U0000000000000000000000000000000f";
  await withPlatform(
    { ...VARS, ACCESS_POLICY: "allowlist", ALLOWED_USERS: `line:${USER}` },
    async (worker, fake, line) => {
      const fromStranger = {
        ...textEvent("let me in", USER),
        source: { type: "user", userId: stranger },
      };
      await expectOk(await post(worker, [fromStranger, textEvent("allowed one", USER)]));
      await settled(worker, SESSION);
      await line.waitForCalls(2);
      await pause(200);
      assertEquals(fake.requests.map((r) => r.lastUserText), ["allowed one"]);
      // The stranger's direct chat gets the private notice; the allowed sender their reply.
      assertEquals(line.calls.map((c) => c.body.to).sort(), [stranger, USER].sort());
      assertStrictEquals(
        line.calls.find((c) => c.body.to === USER)?.body.messages[0].text,
        "allowed one",
      );
    },
  );
});

// ── Approval buttons and the loading animation ──────────────────────────────────────────────────

const ASKING = { ...VARS, APPROVAL_TOOLS: "session_info" };
const asking = sharedBaton({ vars: ASKING, label: "approvals on" });

/**
 * A tap on a quick reply: a postback event from `user` (in `group` when given), lineDriver's
 * message event with its message swapped for the postback.
 */
function postbackEvent(data: string, user: string, opts: { group?: string } = {}) {
  const from = { id: user, name: user };
  const event = shaped({ chat: opts.group ?? user, text: "", from, group: !!opts.group });
  const { message: _, ...rest } = event;
  return { ...rest, type: "postback", postback: { data } };
}

/** A text event in `group` from `user` that mentions the bot, as lineDriver shapes a mention. */
function groupMention(text: string, user: string, group: string) {
  return shaped({ chat: group, text, from: { id: user, name: user }, group: true, mention: true });
}

/** The choice data of the first question pushed (its quick replies). */
async function quickReplies(line: FakePlatform): Promise<string[]> {
  const of = (c: PlatformCall) =>
    c.body?.messages?.at(-1)?.quickReply?.items?.map((i: { action: { data: string } }) =>
      i.action.data
    );
  await until(() => line.calls.some((c) => of(c)?.length), "the question with quick replies");
  return of(line.calls.find((c) => of(c)?.length)!);
}

const pushed = (line: FakePlatform) =>
  line.calls.filter((c) => c.path === PUSH_PATH).map((c) => c.body.messages[0].text as string);
const replied = (line: FakePlatform) =>
  line.calls.filter((c) => c.path === "/v2/bot/message/reply").map((c) => c.body);

asking.test(
  "POST /webhooks/line: the question carries postback quick replies; a tap approves and the turn goes on to one reply; the tap delivered twice runs the tool once",
  async (worker, fake, line) => {
    const user = userOf(11);
    fake.script(askThenEcho);
    await expectOk(await post(worker, [textEvent("who am i", user)]));
    const data = await quickReplies(line);
    assertStrictEquals(data.length, 4);
    const question = line.calls.find((c) => c.body?.messages?.[0]?.quickReply)!;
    assertEquals(question.body.messages[0].quickReply.items[0].action, {
      type: "postback",
      label: "Approve once",
      data: data[0],
      displayText: "Approve once",
    });

    const click = postbackEvent(data[0], user);
    await expectOk(await post(worker, [click]));
    await expectOk(await post(worker, [{ ...click, deliveryContext: { isRedelivery: true } }]));
    await until(() => pushed(line).some((t) => t.startsWith("done: ")), "done");
    await settled(worker, `line:user:${user}`);
    await pause(200);
    assertStrictEquals(toolRuns(fake), 1);
    const done = pushed(line).filter((t) => t.startsWith("done: "));
    assertStrictEquals(done.length, 1);
    assertMatch(done[0], new RegExp(`^done: \\{"platform":"line".*"user_id":"${user}"`));
    // The redelivery carries no reply token: nothing was said twice.
    assertEquals(replied(line), []);
  },
);

asking.test(
  "POST /webhooks/line: in a group, another member's tap is answered \"Not yours\" by reply token and approves nothing; the asker's runs the tool",
  async (worker, fake, line) => {
    const [user, other, group] = [userOf(12), userOf(1012), groupOf(12)];
    fake.script(askThenEcho);
    const ask = groupMention("who am i", user, group);
    await expectOk(await post(worker, [ask]));
    const [once] = await quickReplies(line);
    const bobs = postbackEvent(once, other, { group });
    await expectOk(await post(worker, [bobs]));
    await until(() => replied(line).length === 1, "the answer to the other member");
    assertEquals(replied(line)[0].replyToken, bobs.replyToken);
    assertMatch(replied(line)[0].messages[0].text, /^Not yours/);
    await pause(200);
    assertStrictEquals(toolRuns(fake), 0);

    await expectOk(await post(worker, [postbackEvent(once, user, { group })]));
    await until(() => pushed(line).some((t) => t.startsWith("done: ")), "done");
    assertStrictEquals(toolRuns(fake), 1);
    assertStrictEquals(replied(line).length, 1, "an approval needs no answer: the turn goes on");
  },
);

asking.test(
  "POST /webhooks/line: a postback batched with a message in one delivery answers the question and the message still runs",
  async (worker, fake, line) => {
    const user = userOf(13);
    fake.script(askThenEcho);
    await expectOk(await post(worker, [textEvent("who am i", user)]));
    const data = await quickReplies(line);
    await expectOk(
      await post(worker, [textEvent("plain after", user), postbackEvent(data[0], user)]),
    );
    await until(() => pushed(line).includes("re: plain after"), "the batched message's reply");
    await settled(worker, `line:user:${user}`);
    assertStrictEquals(toolRuns(fake), 1);
    assert(pushed(line).some((t) => t.startsWith("done: ")));
  },
);

baton.test(
  "POST /webhooks/line: a slow 1:1 turn shows the loading animation, none after the reply; a group gets none",
  async (worker, fake, line) => {
    const [user, group] = [userOf(4), groupOf(4)];
    fake.script(() => ({ kind: "text", text: "slowly", delayMs: 2_500 }));
    await expectOk(await post(worker, [textEvent("take your time", user)]));
    await line.waitForCalls(1);
    await settled(worker, `line:user:${user}`);
    await pause(300);
    assertEquals(pushed(line), ["slowly"]);
    assert(line.signals.length >= 1);
    for (const signal of line.signals) {
      assertStrictEquals(signal.path, "/v2/bot/chat/loading/start");
      assertEquals(signal.body, { chatId: user, loadingSeconds: 10 });
      assert(signal.order < line.calls[0].order, "no loading animation after the reply");
    }

    const inGroup = groupMention("slow in the group", user, group);
    const before = line.signals.length;
    await expectOk(await post(worker, [inGroup]));
    await until(() => pushed(line).length === 2, "the group's reply");
    assertStrictEquals(line.signals.length, before);
  },
);

baton.done();
asking.done();

// Memory across chats end to end (MEMORY=on): remember and recall, the prompt section, /memory and /forget, isolation between users and tenants; Deno + Miniflare.
import { assert, assertEquals, assertMatch, assertStrictEquals } from "@std/assert";
import { chat, chatReply, json, settled, until } from "./_support/clients.ts";
import { deliver, replies } from "./_support/drivers/mod.ts";
import { slackDriver } from "./_support/drivers/slack.ts";
import { telegramDriver } from "./_support/drivers/telegram.ts";
import { sharedBaton } from "./_support/shared_baton.ts";
import type { FakeModel, FakeModelRequest } from "../lib/testing/fake_model.ts";
import type { TestWorker } from "./_support/worker.ts";

const ACME = "acme-memory-key-1";
const GLOBEX = "globex-memory-key-1";

// One Worker for the file; each test has its own chats, users and API users.
const baton = sharedBaton({
  vars: {
    ...telegramDriver.vars(),
    ...slackDriver.vars(),
    MEMORY: "on",
    MEMORY_FACT_MAX_CHARS: "100",
    GATEWAY_API_KEYS: `acme:${ACME},globex:${GLOBEX}`,
  },
});

/**
 * The fake model: a message "remember: <fact>" calls `remember`, "recall" calls `recall`; a tool's
 * result is answered with "noted: <result>"; anything else is echoed.
 */
function scriptMemory(fake: FakeModel): void {
  fake.script((req) => {
    const last = req.body.messages.at(-1);
    if (last.role === "tool") return { kind: "text", text: `noted: ${last.content}` };
    const fact = /^remember: (.*)$/s.exec(req.lastUserText)?.[1];
    if (fact !== undefined) return { kind: "tool_call", name: "remember", args: { fact } };
    if (req.lastUserText === "recall") return { kind: "tool_call", name: "recall", args: {} };
    return { kind: "text", text: `echo: ${req.lastUserText}` };
  });
}

/** The system messages of the model request whose last user text is `text`. */
function systemOf(fake: FakeModel, text: string): string {
  const request = fake.requests.findLast((r: FakeModelRequest) => r.lastUserText === text);
  assert(request, `no model request for ${text}`);
  return request.body.messages.filter((m: { role: string }) => m.role === "system")
    .map((m: { content: string }) => m.content).join("\n");
}

/** Slack user `user` says `text` in direct chat `im` (the driver's `D…` channels). */
async function slackSays(worker: TestWorker, im: string, user: string, text: string) {
  const body = JSON.stringify(
    slackDriver.shape({ chat: im, text, id: nextTs(), from: { id: user, name: user } }),
  );
  const headers = await slackDriver.sign(body, slackDriver.credentials);
  const res = await deliver(worker.fetch.bind(worker), slackDriver, { headers, body, id: "" });
  assertStrictEquals(res.status, 200, await res.clone().text());
  await res.body?.cancel();
}

let _ts = 0;
function nextTs(): string {
  return `1700001000.${String(++_ts).padStart(6, "0")}`;
}

/** Waits for the `n`th reply in `chat` and returns it. */
async function nthReply(
  platform: Parameters<typeof replies>[1],
  driver: typeof slackDriver | typeof telegramDriver,
  chatId: string,
  n: number,
): Promise<string> {
  await until(
    () => replies(driver, platform, chatId).length >= n,
    `reply ${n} in ${chatId}`,
    30_000,
  );
  return replies(driver, platform, chatId)[n - 1];
}

baton.test(
  "remember: a fact a Slack user stores in one direct chat is offered in their other chat; /memory lists it, /forget 1 removes it",
  async (worker, fake, platform) => {
    scriptMemory(fake);
    const user = "UMEMSAME1";
    const [first, second] = [slackDriver.newChat(), slackDriver.newChat()];
    await slackSays(worker, first, user, "remember: prefers green tea");
    assertEquals(await nthReply(platform, slackDriver, first, 1), "noted: Remembered.");

    await slackSays(worker, second, user, "what do I drink?");
    await nthReply(platform, slackDriver, second, 1);
    assertMatch(
      systemOf(fake, "what do I drink?"),
      /What you remember about this user[^\n]*\n- prefers green tea/,
    );

    await slackSays(worker, second, user, "/memory");
    assertEquals(
      await nthReply(platform, slackDriver, second, 2),
      "What I remember about you:\n1. prefers green tea\n/forget N forgets one, /forget all forgets everything.",
    );
    await slackSays(worker, first, user, "/forget 1");
    assertEquals(await nthReply(platform, slackDriver, first, 2), "Forgot #1.");

    await slackSays(worker, second, user, "and now?");
    await nthReply(platform, slackDriver, second, 3);
    assert(!systemOf(fake, "and now?").includes("green tea"), "a forgotten fact was offered");
    await settled(worker, slackDriver.session(second));
  },
);

baton.test(
  "remember: two Telegram users' memories are their own",
  async (worker, fake, platform) => {
    scriptMemory(fake);
    const [ann, bob] = [telegramDriver.newChat(), telegramDriver.newChat()];
    const say = async (chatId: string, text: string) => {
      const res = await deliver(
        worker.fetch.bind(worker),
        telegramDriver,
        await telegramDriver.message({ chat: chatId, text }),
      );
      assertStrictEquals(res.status, 200);
      await res.body?.cancel();
    };
    await say(ann, "remember: ann's locker code is 4711");
    assertEquals(await nthReply(platform, telegramDriver, ann, 1), "noted: Remembered.");

    await say(bob, "tell bob something");
    await nthReply(platform, telegramDriver, bob, 1);
    assert(!systemOf(fake, "tell bob something").includes("4711"), "bob was offered ann's fact");
    await say(bob, "recall");
    assertEquals(
      await nthReply(platform, telegramDriver, bob, 2),
      "noted: Nothing is remembered about this user.",
    );
    await say(bob, "/memory");
    assertEquals(await nthReply(platform, telegramDriver, bob, 3), "I remember nothing about you.");

    await say(ann, "tell ann something");
    await nthReply(platform, telegramDriver, ann, 2);
    assertMatch(systemOf(fake, "tell ann something"), /- ann's locker code is 4711/);
    await say(ann, "/forget");
    assertEquals(
      await nthReply(platform, telegramDriver, ann, 3),
      "Forgot everything I remembered about you (1).",
    );
  },
);

baton.test(
  "remember: a user's memory is not read out in a group chat; /memory there says why",
  async (worker, fake, platform) => {
    scriptMemory(fake);
    const dm = telegramDriver.newChat();
    const group = `-${telegramDriver.newChat()}`;
    const say = async (chatId: string, text: string, inGroup = false) => {
      const body = JSON.stringify(telegramDriver.shape({
        chat: chatId,
        text,
        id: nextTs().replace(/\D/g, "").slice(-9),
        from: { id: dm, name: "Gus" },
        group: inGroup,
      }));
      const headers = await telegramDriver.sign(body, telegramDriver.credentials);
      const res = await deliver(worker.fetch.bind(worker), telegramDriver, {
        headers,
        body,
        id: "",
      });
      assertStrictEquals(res.status, 200);
      await res.body?.cancel();
    };
    await say(dm, "remember: gus's doctor appointment is on friday");
    assertEquals(await nthReply(platform, telegramDriver, dm, 1), "noted: Remembered.");
    await say(group, "hello group", true);
    await nthReply(platform, telegramDriver, group, 1);
    assert(!systemOf(fake, "hello group").includes("doctor"), "a group was offered gus's memory");
    await say(group, "/memory", true);
    assertMatch(await nthReply(platform, telegramDriver, group, 2), /direct chats only/);
  },
);

baton.test(
  "remember: API tenants with the same `user` never share a memory; a request without `user` has none",
  async (worker, fake) => {
    scriptMemory(fake);
    const acme = (text: string, session: string, user?: string) =>
      chat(worker, text, { key: ACME, session, ...(user ? { user } : {}) });
    assertEquals(
      await chatReply(await acme("remember: acme's u1 likes jazz", "mem-a1", "u1")),
      "noted: Remembered.",
    );
    // Another session (another chat) of the same tenant and user: offered.
    assertEquals(await chatReply(await acme("acme again", "mem-a2", "u1")), "echo: acme again");
    assertMatch(systemOf(fake, "acme again"), /- acme's u1 likes jazz/);
    // The other tenant's u1: nothing of acme's.
    const globex = await chat(worker, "recall", { key: GLOBEX, session: "mem-g1", user: "u1" });
    assertEquals(await chatReply(globex), "noted: Nothing is remembered about this user.");
    await chatReply(
      await chat(worker, "globex hi", { key: GLOBEX, session: "mem-g1", user: "u1" }),
    );
    assert(!systemOf(fake, "globex hi").includes("jazz"), "globex was offered acme's memory");
    // No `user`: no memory, and the tool says why.
    const anonymous = await chatReply(await acme("recall", "mem-a3"));
    assertMatch(anonymous, /no `user` to remember for/);
  },
);

baton.test(
  "remember: a fact over MEMORY_FACT_MAX_CHARS is refused with a tool result naming the limit",
  async (worker, fake) => {
    scriptMemory(fake);
    const long = `remember: ${"x".repeat(150)}`;
    const res = await chat(worker, long, { key: ACME, session: "mem-cap", user: "capped" });
    const reply = await chatReply(res);
    assertMatch(reply, /noted: Not remembered: a fact may be at most 100 characters/);
    const recalled = await chatReply(
      await chat(worker, "recall", { key: ACME, session: "mem-cap", user: "capped" }),
    );
    assertEquals(recalled, "noted: Nothing is remembered about this user.");
    assertEquals(
      (await json(await chat(worker, "x", { key: ACME, session: "mem-cap" }))).object,
      "chat.completion",
    );
  },
);

baton.done();

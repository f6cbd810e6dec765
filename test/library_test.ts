// baton as a library, end to end in workerd: a Worker of its own (test/_support/library_worker.ts) built on the public API only, its hooks and per-platform / per-channel options, two deployments in one Worker; Deno + Miniflare.
import { assert, assertEquals, assertStrictEquals } from "@std/assert";
import { chat, chatReply, json, postJson, until } from "./_support/clients.ts";
import { telegramDriver as driver } from "./_support/drivers/telegram.ts";
import type { FakePlatform } from "./_support/fake_platform.ts";
import {
  CHANNEL_CHAT,
  CHANNEL_MODEL,
  CHANNEL_PROMPT,
  CHANNEL_TOOL,
  DEFAULT_MODEL,
  DENIED_TOOL,
  DENIED_TOOL_RESULT,
  DENY_REASON,
  DEPLOYMENT_PROMPT,
  DROP_MARK,
  HANG_MARK,
  HOOK_TIMEOUT_MS,
  READER_PREFIX,
  TELEGRAM_MODEL,
  THROW_MARK,
  TURN_END_ERROR,
} from "./_support/library_fixtures.ts";
import { expectOk, pause } from "./_support/platform_rig.ts";
import { sharedBaton } from "./_support/shared_baton.ts";
import type { TestWorker } from "./_support/worker.ts";
import type { FakeModel, FakeModelRequest } from "../lib/testing/mod.ts";
import { pdfChat } from "./_support/pdf_chat.ts";

const baton = sharedBaton({
  entry: "test/_support/library_worker.ts",
  // MEDIA: a file part is stored before its turn (without it, both deployments refuse files).
  media: true,
  // The second deployment's own session objects (library_worker.ts's `reader`).
  durableObjects: { READER_SESSIONS: "ReaderSessionDO" },
  vars: {
    ...driver.vars(),
    HOOK_TIMEOUT_MS: String(HOOK_TIMEOUT_MS),
    LLM_MODEL: DEFAULT_MODEL,
    LIBRARY_TAG: "a tag from the deployment's env",
  },
});

/** Posts a Telegram text update from private chat `chatId`; asserts it is acknowledged. */
async function telegramSays(worker: TestWorker, chatId: string, text: string): Promise<void> {
  const update = await driver.message({ chat: chatId, text });
  await expectOk(
    await worker.fetch(driver.path, { method: "POST", headers: update.headers, body: update.body }),
  );
}

/** The replies sent to Telegram chat `chatId` so far, in order. */
function sentTo(telegram: FakePlatform, chatId: string): string[] {
  return telegram.calls.flatMap((call) => {
    const sent = driver.sent(call);
    return sent?.chat === chatId ? [sent.text] : [];
  });
}

/** Waits until Telegram chat `chatId` got a reply `text`. */
function replyReaches(telegram: FakePlatform, chatId: string, text: string): Promise<void> {
  return until(() => sentTo(telegram, chatId).includes(text), `the reply "${text}" in ${chatId}`);
}

/** The model's request whose last user message is `text` (asserting there is exactly one). */
function requestFor(fake: FakeModel, text: string): FakeModelRequest {
  const found = fake.requests.filter((req) => req.lastUserText === text);
  assertStrictEquals(found.length, 1, `requests for "${text}": ${found.length}`);
  return found[0];
}

/** A request's system prompt (its system messages joined). */
function systemOf(req: FakeModelRequest): string {
  return (req.body.messages as { role: string; content: string }[])
    .filter((m) => m.role === "system").map((m) => m.content).join("\n");
}

/** The names of the tools a request offered the model. */
function toolsOf(req: FakeModelRequest): string[] {
  return (req.body.tools ?? []).map((t: { function: { name: string } }) => t.function.name);
}

/** The Worker's JSON log lines whose `message` is `message`. */
function logLines(worker: TestWorker, message: string): Record<string, unknown>[] {
  return worker.output().split("\n").flatMap((line) => {
    const start = line.indexOf("{");
    if (start < 0 || !line.includes(`"message":"${message}"`)) return [];
    try {
      return [JSON.parse(line.slice(start))];
    } catch {
      return [];
    }
  });
}

baton.test(
  "defineBaton hooks.messageReceived drops a message: the API answers 422 message_dropped and the model is not asked, a Telegram update is acked and nothing is stored, sent or run; a kept message runs",
  async (worker, fake, telegram) => {
    // The API: refused before anything is stored, so no turn and no model request.
    const dropped = await chat(worker, `my pin is 1234 ${DROP_MARK}`, { user: "lib-drop-api" });
    const refusal = await json(dropped);
    assertStrictEquals(dropped.status, 422, JSON.stringify(refusal));
    assertStrictEquals(refusal.error.type, "message_dropped");
    assertStrictEquals(fake.requests.length, 0);
    // A message the hook keeps, from the same caller, runs as usual.
    const kept = "lib drop: an API message the hook keeps";
    assertStrictEquals(await chatReply(await chat(worker, kept, { user: "lib-drop-api" })), kept);
    assertStrictEquals(fake.requests.length, 1);

    // Telegram: the dropped update is acknowledged (no redelivery), then a kept one in the same
    // chat. Had the first been stored, it would run before the second or sit in its history.
    const chatId = driver.newChat();
    await telegramSays(worker, chatId, `my pin is 1234 ${DROP_MARK}`);
    const keptTg = "lib drop: a Telegram message the hook keeps";
    await telegramSays(worker, chatId, keptTg);
    await replyReaches(telegram, chatId, keptTg);
    assertEquals(sentTo(telegram, chatId), [keptTg]);
    assertStrictEquals(fake.requests.length, 2);
    const history = JSON.stringify(requestFor(fake, keptTg).body.messages);
    assert(!history.includes(DROP_MARK), history);
  },
);

baton.test(
  "defineBaton hooks.toolCall denies a call: the model is told the reason as the tool's result and the tool's run never runs",
  async (worker, fake) => {
    fake.script((req) => {
      const result = req.body.messages.findLast((m: { role: string }) => m.role === "tool");
      return result
        ? { kind: "text", text: `the tool answered: ${result.content}` }
        : { kind: "tool_call", name: DENIED_TOOL, args: {} };
    });
    const reply = await chatReply(
      await chat(worker, "please delete everything", { user: "lib-deny" }),
    );
    assertStrictEquals(fake.requests.length, 2);
    assert(toolsOf(fake.requests[0]).includes(DENIED_TOOL), toolsOf(fake.requests[0]).join());
    const result = fake.requests[1].body.messages.findLast((m: { role: string }) =>
      m.role === "tool"
    );
    // The refusal, not what the tool's run answers.
    assert(String(result.content).includes(DENY_REASON), result.content);
    assert(!String(result.content).includes(DENIED_TOOL_RESULT), result.content);
    assertStrictEquals(reply, `the tool answered: ${result.content}`);
  },
);

baton.test(
  "defineBaton hooks: a turnStart that hangs past HOOK_TIMEOUT_MS and a turnEnd that throws leave the turn answered, once",
  async (worker, fake, telegram) => {
    // Telegram: one reply, though both hooks misbehave on this turn.
    const chatId = driver.newChat();
    const text = `lib hooks: ${HANG_MARK} ${THROW_MARK} on telegram`;
    await telegramSays(worker, chatId, text);
    await replyReaches(telegram, chatId, text);
    const session = driver.session(chatId);
    // Both hooks really ran: cut off, and caught (turnEnd runs after the turn's end is stored).
    await until(
      () =>
        logLines(worker, "hook timed out").some((l) =>
          l.hook === "turnStart" && l.session_key === session
        ),
      "turnStart's time-out in the log",
    );
    await until(
      () =>
        logLines(worker, "hook failed").some((l) =>
          l.hook === "turnEnd" && l.session_key === session &&
          String(l.error).includes(TURN_END_ERROR)
        ),
      "turnEnd's failure in the log",
    );
    // Once: one model request, one reply (a second attempt would have had time to show by now).
    await pause(HOOK_TIMEOUT_MS * 2);
    assertEquals(sentTo(telegram, chatId), [text]);
    assertStrictEquals(requestFor(fake, text).body.model, TELEGRAM_MODEL);

    // The API: answered with its reply as usual.
    const apiText = `lib hooks: ${HANG_MARK} ${THROW_MARK} on the API`;
    assertStrictEquals(
      await chatReply(await chat(worker, apiText, { user: "lib-hooks-api" })),
      apiText,
    );
    await until(
      () =>
        logLines(worker, "hook failed").some((l) =>
          l.hook === "turnEnd" && l.user_id === "lib-hooks-api"
        ),
      "the API turn's turnEnd failure in the log",
    );
    requestFor(fake, apiText);
    assertStrictEquals(fake.requests.length, 2);
  },
);

baton.test(
  "defineBaton platforms: a Telegram channel's model, prompt and tool; the platform's model elsewhere on Telegram; the defaults on the API",
  async (worker, fake, telegram) => {
    // Chat A: the channel's own model, prompt and extra tool.
    const inChannel = "lib options: in the channel";
    await telegramSays(worker, CHANNEL_CHAT, inChannel);
    await replyReaches(telegram, CHANNEL_CHAT, inChannel);
    const a = requestFor(fake, inChannel);
    assertStrictEquals(a.body.model, CHANNEL_MODEL);
    assert(systemOf(a).includes(CHANNEL_PROMPT), systemOf(a));
    assert(!systemOf(a).includes(DEPLOYMENT_PROMPT), systemOf(a));
    assert(toolsOf(a).includes(CHANNEL_TOOL), toolsOf(a).join());
    assert(toolsOf(a).includes(DENIED_TOOL), toolsOf(a).join());

    // Chat B (no channel options): the platform's model, the deployment's prompt, no channel tool.
    const chatB = driver.newChat();
    const elsewhere = "lib options: elsewhere on telegram";
    await telegramSays(worker, chatB, elsewhere);
    await replyReaches(telegram, chatB, elsewhere);
    const b = requestFor(fake, elsewhere);
    assertStrictEquals(b.body.model, TELEGRAM_MODEL);
    assert(systemOf(b).includes(`${DEPLOYMENT_PROMPT} on telegram.`), systemOf(b));
    assert(!systemOf(b).includes(CHANNEL_PROMPT), systemOf(b));
    assert(!toolsOf(b).includes(CHANNEL_TOOL), toolsOf(b).join());
    assert(toolsOf(b).includes(DENIED_TOOL), toolsOf(b).join());

    // The API: LLM_MODEL and the deployment's prompt.
    const api = "lib options: on the API";
    assertStrictEquals(await chatReply(await chat(worker, api, { user: "lib-options-api" })), api);
    const c = requestFor(fake, api);
    assertStrictEquals(c.body.model, DEFAULT_MODEL);
    assert(systemOf(c).includes(`${DEPLOYMENT_PROMPT} on api.`), systemOf(c));
    // A prompt function reads the deployment's env through `cloudflare:workers`.
    assert(systemOf(c).includes("(a tag from the deployment's env)"), systemOf(c));
    assert(!toolsOf(c).includes(CHANNEL_TOOL), toolsOf(c).join());
  },
);

baton.test(
  "defineBaton platforms: a channel's delegate_task sub-agent works as its turn does — the channel's model, prompt and tools",
  async (worker, fake, telegram) => {
    const goal = "lib delegate: the sub-agent's goal";
    fake.script((req) => {
      if (req.lastUserText === goal) return { kind: "text", text: "the sub-agent is done" };
      const result = req.body.messages.findLast((m: { role: string }) => m.role === "tool");
      return result
        ? { kind: "text", text: "delegated and done" }
        : { kind: "tool_call", name: "delegate_task", args: { goal } };
    });
    await telegramSays(worker, CHANNEL_CHAT, "lib delegate: please hand this off");
    await replyReaches(telegram, CHANNEL_CHAT, "delegated and done");
    const child = requestFor(fake, goal);
    assertStrictEquals(child.body.model, CHANNEL_MODEL);
    assert(systemOf(child).includes(CHANNEL_PROMPT), systemOf(child));
    assert(toolsOf(child).includes(CHANNEL_TOOL), toolsOf(child).join());
    assert(!toolsOf(child).includes("delegate_task"), toolsOf(child).join());
  },
);

baton.test(
  "defineBaton hooks.toolCall: a delegate_task sub-agent's call is asked too, and denied",
  async (worker, fake) => {
    const goal = "lib delegate deny: the sub-agent deletes";
    fake.script((req) => {
      const result = req.body.messages.findLast((m: { role: string }) => m.role === "tool");
      if (req.lastUserText === goal) {
        return result
          ? { kind: "text", text: `sub-agent saw: ${result.content}` }
          : { kind: "tool_call", name: DENIED_TOOL, args: {} };
      }
      return result
        ? { kind: "text", text: `parent saw: ${result.content}` }
        : { kind: "tool_call", name: "delegate_task", args: { goal } };
    });
    const reply = await chatReply(
      await chat(worker, "lib delegate deny: hand off the deleting", { user: "lib-deny-child" }),
    );
    const child = fake.requests.filter((req) => req.lastUserText === goal);
    assertStrictEquals(child.length, 2);
    const result = child[1].body.messages.findLast((m: { role: string }) => m.role === "tool");
    assert(String(result.content).includes(DENY_REASON), result.content);
    assert(!String(result.content).includes(DENIED_TOOL_RESULT), result.content);
    assert(reply.includes("sub-agent saw:"), reply);
  },
);

baton.test(
  "defineBaton pdf is per deployment: in one Worker, the deployment without it refuses a PDF part with a 400, the one with it reads it, and neither changes the other",
  async (worker, fake) => {
    const refuse = async () => {
      const res = await postJson(worker, "/v1/chat/completions", pdfChat("lib-pdf-plain"));
      const body = await json(res);
      assertStrictEquals(res.status, 400, JSON.stringify(body));
      assertStrictEquals(
        body.error.message,
        "messages[0].content[1]: PDFs are not read on this deployment",
      );
    };
    await refuse();
    assertStrictEquals(fake.requests.length, 0, "no turn started");

    const read = await postJson(
      worker,
      `${READER_PREFIX}/v1/chat/completions`,
      pdfChat("lib-pdf-reader"),
    );
    assertStrictEquals(read.status, 200, JSON.stringify(await read.clone().json()));
    assertStrictEquals(fake.requests.length, 1);
    const sent = JSON.stringify(fake.requests[0].body.messages);
    assert(sent.includes("[document: invoice.pdf (PDF, 1 page)]"), sent);
    assert(sent.includes("Invoice 4711 from Example Tools Ltd."), sent);

    // The reader's pdf.js, loaded in this isolate now, did not turn PDFs on for the other.
    await refuse();
    assertStrictEquals(fake.requests.length, 1);
  },
);

baton.done();

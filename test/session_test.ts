// One turn at a time per session, in order, nothing lost or doubled: the session Durable Object in workerd; Deno + Miniflare.
import { assert, assertEquals, assertStrictEquals } from "@std/assert";
import {
  chat,
  chatReply,
  json,
  sendWebhook,
  sessionState,
  until,
  untilQueued,
  withBaton,
} from "./_support/clients.ts";
import { echoSessionInfo, holdOn } from "./_support/fake_llm_scripts.ts";
import { sharedBaton } from "./_support/shared_baton.ts";
import { tempPersistDir } from "./_support/worker.ts";

// One Worker for the file, one model retry (the failing-model test counts its calls); the restarts
// and the configured session defaults start their own.
const baton = sharedBaton({ vars: { LLM_MAX_RETRIES: "1" } });

baton.test(
  "SessionDO runs concurrent messages of one session one at a time, each caller getting its own reply",
  async (worker, fake) => {
    fake.script((req) => ({ kind: "text", text: `re: ${req.lastUserText}`, delayMs: 20 }));
    const texts = Array.from({ length: 8 }, (_, i) => `[tag:one] message ${i}`);
    const replies = await Promise.all(
      texts.map((t) => chat(worker, t, { session: "one" }).then(chatReply)),
    );
    assertEquals(replies, texts.map((t) => `re: ${t}`));
    assertStrictEquals(fake.maxInFlightBySession.get("one"), 1);
    const state = await sessionState(worker, "api:one");
    assertEquals(state.running, false);
    assertEquals(state.queued, 0);
    assertEquals(state.messages.length, 16);
    for (let i = 0; i < 16; i += 2) {
      assertEquals(state.messages[i].role, "user");
      assertEquals(state.messages[i + 1], {
        role: "assistant",
        content: `re: ${state.messages[i].content}`,
      });
    }
    assertEquals(
      state.messages.filter((m) => m.role === "user").map((m) => m.content).sort(),
      [...texts].sort(),
    );
  },
);

baton.test("SessionDO runs different sessions in parallel", async (worker, fake) => {
  fake.script((req) =>
    req.sessionTag === "slow" ? { kind: "hold" } : { kind: "text", text: "fast" }
  );
  const slow = chat(worker, "[tag:slow] wait", { session: "slow" });
  await fake.waitForRequests(1);
  assertEquals(await chatReply(await chat(worker, "[tag:fast] go", { session: "fast" })), "fast");
  assertStrictEquals(
    fake.inFlight,
    1,
    "the slow session is still running while the fast one finished",
  );
  fake.release();
  assertEquals(await chatReply(await slow), "[tag:slow] wait");
});

baton.test(
  "SessionDO binds each turn's own context across 100 concurrent sessions (session_info)",
  async (worker, fake) => {
    fake.script(echoSessionInfo(() => Math.floor(Math.random() * 20)));
    const ids = Array.from({ length: 100 }, (_, i) => `iso-${i}`);
    const infos = await Promise.all(
      ids.map(async (id) =>
        JSON.parse(
          await chatReply(await chat(worker, `[tag:${id}] who`, { session: id, user: `u-${id}` })),
        )
      ),
    );
    infos.forEach((info, i) => {
      assertEquals(info, {
        platform: "api",
        chat_id: ids[i],
        thread_id: "",
        user_id: `u-${ids[i]}`,
        user_name: "",
        session_key: `api:${ids[i]}`,
        message_id: "",
        async_delivery: false,
      });
    });
  },
);

// Its own Worker: defaults configured would change what every other test's turns see.
Deno.test("SessionDO falls back to configured defaults only for fields a turn never bound", async () => {
  await withBaton(async (worker, fake) => {
    fake.script(echoSessionInfo());
    const info = JSON.parse(await chatReply(await chat(worker, "who", { session: "defaults" })));
    assertEquals(info.thread_id, "default-thread", "never bound: configured default");
    assertEquals(info.user_id, "", 'bound to "" (no user field): no fallback');
    assertEquals(info.platform, "api");
  }, {
    vars: { SESSION_DEFAULT_THREAD_ID: "default-thread", SESSION_DEFAULT_USER_ID: "default-user" },
  });
});

baton.test(
  "SessionDO runs webhook messages of one session in arrival order",
  async (worker, fake) => {
    fake.script(holdOn("first"));
    const pending = [sendWebhook(worker, { session: "fifo", text: "first" })];
    await fake.waitForRequests(1);
    for (const [i, text] of ["second", "third", "fourth"].entries()) {
      pending.push(sendWebhook(worker, { session: "fifo", text }));
      await untilQueued(worker, "webhook:fifo", i + 1);
    }
    fake.release();
    const replies = await Promise.all(pending.map(async (r) => json(await r)));
    assertEquals(replies.map((r) => r.reply), ["first", "second", "third", "fourth"]);
    assertEquals(fake.requests.map((r) => r.lastUserText), ["first", "second", "third", "fourth"]);
    const state = await sessionState(worker, "webhook:fifo");
    assertEquals(state.messages.filter((m) => m.role === "user").map((m) => m.content), [
      "first",
      "second",
      "third",
      "fourth",
    ]);
  },
);

Deno.test("SessionDO reruns a turn whose executor died, losing and doubling nothing", async () => {
  const dir = await tempPersistDir();
  try {
    let firstRunSeen = false;
    await withBaton(async (worker, fake) => {
      // A reply that never comes before the runtime dies (withBaton releases holds, not delays).
      fake.script(() => ({ kind: "text", text: "too late", delayMs: 60_000 }));
      const doomed = sendWebhook(worker, { session: "crash", text: "survive me" }, {
        id: "msg_crash",
      })
        .then((r) => r.body?.cancel(), () => undefined);
      await fake.waitForRequests(1);
      const queued = sendWebhook(worker, { session: "crash", text: "after the crash" }, {
        id: "msg_after",
      })
        .then((r) => r.body?.cancel(), () => undefined);
      await untilQueued(worker, "webhook:crash", 1);
      firstRunSeen = true;
      void doomed;
      void queued;
    }, { persistDir: dir.path, vars: { TURN_LEASE_MS: "500" } });
    assert(firstRunSeen);
    await withBaton(async (worker, fake) => {
      // The platform resends what it never got an answer for.
      const [a, b] = await Promise.all([
        sendWebhook(worker, { session: "crash", text: "survive me" }, { id: "msg_crash" }),
        sendWebhook(worker, { session: "crash", text: "after the crash" }, { id: "msg_after" }),
      ]);
      assertEquals(await json(a), { session: "crash", reply: "survive me" });
      assertEquals(await json(b), { session: "crash", reply: "after the crash" });
      assertEquals(fake.requests.map((r) => r.lastUserText), ["survive me", "after the crash"]);
      const state = await sessionState(worker, "webhook:crash");
      assertEquals(state.messages.map((m) => m.content), [
        "survive me",
        "survive me",
        "after the crash",
        "after the crash",
      ]);
      assertEquals(state.running, false);
    }, { persistDir: dir.path, vars: { TURN_LEASE_MS: "500" } });
  } finally {
    await dir.cleanup();
  }
});

Deno.test("SessionDO recovers a dead executor's claim from its alarm, with no new message", async () => {
  const dir = await tempPersistDir();
  try {
    await withBaton(async (worker, fake) => {
      fake.script(() => ({ kind: "text", text: "too late", delayMs: 60_000 }));
      sendWebhook(worker, { session: "alarm", text: "wake me" }).then(
        (r) => r.body?.cancel(),
        () => undefined,
      );
      await fake.waitForRequests(1);
    }, { persistDir: dir.path, vars: { TURN_LEASE_MS: "300" } });
    await withBaton(async (worker, fake) => {
      await fake.waitForRequests(1);
      await until(
        async () => (await sessionState(worker, "webhook:alarm")).messages.length === 2,
        "rerun",
      );
      const state = await sessionState(worker, "webhook:alarm");
      assertEquals(state.messages, [{ role: "user", content: "wake me" }, {
        role: "assistant",
        content: "wake me",
      }]);
      assertEquals(state.running, false);
    }, { persistDir: dir.path, vars: { TURN_LEASE_MS: "300" } });
  } finally {
    await dir.cleanup();
  }
});

baton.test(
  "SessionDO retries a model 429 honouring Retry-After, then answers",
  async (worker, fake) => {
    let calls = 0;
    fake.script((req) =>
      ++calls === 1
        ? { kind: "status", status: 429, retryAfter: "0" }
        : { kind: "text", text: `ok ${req.lastUserText}` }
    );
    assertEquals(await chatReply(await chat(worker, "limited", { session: "r429" })), "ok limited");
    assertStrictEquals(fake.requests.length, 2);
  },
);

baton.test(
  "SessionDO fails a turn cleanly when the model keeps failing, and the session stays usable",
  async (worker, fake) => {
    fake.script(() => ({ kind: "status", status: 500 }));
    const res = await chat(worker, "doomed", { session: "fail" });
    assertStrictEquals(res.status, 502);
    const body = await json(res);
    assertEquals(body.error.type, "model_error");
    assert(body.error.message.includes("500"), body.error.message);
    assert(!JSON.stringify(body).includes("sk-test"));
    assertStrictEquals(fake.requests.length, 2, "one call plus LLM_MAX_RETRIES=1 retry");
    fake.script((req) => ({ kind: "text", text: req.lastUserText }));
    assertEquals(await chatReply(await chat(worker, "alive", { session: "fail" })), "alive");
    const state = await sessionState(worker, "api:fail");
    assertEquals(state.running, false);
    assertEquals(state.messages, [{ role: "user", content: "alive" }, {
      role: "assistant",
      content: "alive",
    }]);
  },
);

baton.done();

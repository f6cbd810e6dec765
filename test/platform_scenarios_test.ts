// The scenarios every chat-platform webhook shares, run over each platform's driver from one table against one workerd; Deno + Miniflare.
import { assert, assertEquals, assertStrictEquals } from "@std/assert";
import { API_KEY, json, sessionState, settled, until, untilQueued } from "./_support/clients.ts";
import {
  deliver,
  type Delivery,
  type Driver,
  DRIVERS,
  replies,
  replyCalls,
} from "./_support/drivers/mod.ts";
import { type FakeModel, startFakeModel } from "../lib/testing/fake_model.ts";
import { echoSessionInfo, type FakeScript } from "./_support/fake_llm_scripts.ts";
import {
  type FakePlatform,
  type PlatformAnswer,
  type PlatformCall,
  startFakePlatform,
} from "./_support/fake_platform.ts";
import { apiRoots, pause } from "./_support/platform_rig.ts";
import { startWorker, type TestWorker } from "./_support/worker.ts";

/** What a busy session tells a second message's sender before answering it. */
const QUEUED = "Queued — I'll answer after the current reply.";

/** The fake model, the fake platform API and the deployments they serve, shared by every test. */
interface Rig {
  fake: FakeModel;
  platform: FakePlatform;
  worker: TestWorker;
  /** The fake model's script per last user text (an echo for any other). */
  scripts: Map<string, FakeScript>;
  /** Replies still to refuse 429 per driver and chat (see `_key`). */
  limited: Map<string, number>;
  /** When each reply call arrived, per driver and chat. */
  arrivals: Map<string, number[]>;
}

const _key = (driver: Driver, chat: string) => `${driver.name}\u0000${chat}`;

/** Every driver's settings, pointed at `platform`, without the names in `drop`. */
function _vars(fake: FakeModel, platform: FakePlatform, drop: Set<string> = new Set()) {
  const all: Record<string, string> = {
    LLM_BASE_URL: fake.url,
    LLM_API_KEY: "sk-test",
    LLM_MAX_RETRIES: "2",
    GATEWAY_API_KEY: API_KEY,
    // Anyone may talk to the bot: access control has its own tests.
    ACCESS_POLICY: "open",
    ...apiRoots(platform),
    ...Object.assign({}, ...DRIVERS.map((d) => d.vars(platform))),
  };
  return Object.fromEntries(Object.entries(all).filter(([name]) => !drop.has(name)));
}

/** The default answer of the fake platform, as `startFakePlatform` gives it. */
function _usual(index: number): PlatformAnswer {
  return {
    status: 200,
    body: {
      ok: true,
      result: { message_id: index + 1 },
      id: String(index + 1),
      ts: `1700000000.${index + 1}`,
    },
  };
}

let _rig: Promise<Rig> | undefined;

/** The shared rig, started by the first test that needs it: one workerd for every platform. */
function rig(): Promise<Rig> {
  return _rig ??= (async () => {
    const fake = await startFakeModel();
    const platform = await startFakePlatform();
    const scripts = new Map<string, FakeScript>();
    fake.script((req) =>
      scripts.get(req.lastUserText)?.(req) ?? { kind: "text", text: req.lastUserText }
    );
    const limited = new Map<string, number>();
    const arrivals = new Map<string, number[]>();
    platform.respond((call: PlatformCall, index: number) => {
      for (const driver of DRIVERS) {
        const sent = driver.sent(call);
        if (!sent) continue;
        const key = _key(driver, sent.chat);
        arrivals.set(key, [...arrivals.get(key) ?? [], Date.now()]);
        const refusals = limited.get(key) ?? 0;
        if (refusals > 0) {
          limited.set(key, refusals - 1);
          return driver.rateLimited();
        }
        return driver.accepted?.() ?? _usual(index);
      }
      return _usual(index);
    });
    const worker = await startWorker({ vars: _vars(fake, platform) });
    return { fake, platform, worker, scripts, limited, arrivals };
  })();
}

/** Posts `delivery` to the shared workerd. */
async function send(driver: Driver, delivery: Delivery): Promise<Response> {
  const { worker } = await rig();
  return deliver(worker.fetch, driver, delivery);
}

/** Asserts `res` is `driver`'s good acknowledgement of a message (not for a reply-answering driver). */
async function expectAck(driver: Driver, res: Response): Promise<void> {
  const { ack } = driver;
  if (ack === "reply") throw new Error(`${driver.name} answers with the reply`);
  if ("json" in ack) {
    const body = await json(res);
    assertStrictEquals(res.status, 200, JSON.stringify(body));
    assertEquals(body, ack.json);
    return;
  }
  const text = await res.text();
  assertStrictEquals(res.status, 200, text);
  assertStrictEquals(res.headers.get("content-type"), ack.contentType);
  assertStrictEquals(text, ack.text);
}

/** Asserts a reply-answering driver's answer to a message in `chat`, and returns its reply. */
async function answered(chat: string, res: Response): Promise<string> {
  const body = await json(res);
  assertStrictEquals(res.status, 200, JSON.stringify(body));
  assertStrictEquals(body.session, chat);
  return body.reply;
}

/** How many model calls ran for a turn whose user text is `text`. */
function modelCalls(fake: FakeModel, text: string): number {
  return fake.requests.filter((r) => r.lastUserText === text).length;
}

/** Waits until the model has been asked about `text`. */
function untilAsked(fake: FakeModel, text: string): Promise<void> {
  return until(() => modelCalls(fake, text) > 0, `the model asked about ${text}`);
}

/** Waits until `driver`'s chat has `n` replies on the fake platform. */
function untilReplies(driver: Driver, platform: FakePlatform, chat: string, n: number) {
  return until(() => replies(driver, platform, chat).length >= n, `${n} replies in ${chat}`);
}

/** A text of `length` characters in words, lines and paragraphs: it splits at line ends. */
function longText(length: number): string {
  let text = "";
  for (let i = 0; text.length < length; i++) {
    text += `w${i}` + (i % 40 === 39 ? "\n\n" : i % 10 === 9 ? "\n" : " ");
  }
  return text.slice(0, length);
}

/** Every configured value long enough to be recognised: none may appear in a refusal. */
function secretsOf(driver: Driver, platform: FakePlatform): string[] {
  return Object.values(driver.vars(platform)).filter((v) => v.length >= 8);
}

const _opts = { sanitizeOps: false, sanitizeResources: false };
const async = DRIVERS.filter((d) => d.ack !== "reply");

for (const d of DRIVERS) {
  Deno.test({
    name: `POST ${d.path} runs one turn and replies to the message`,
    ..._opts,
    async fn() {
      const { fake, platform, worker } = await rig();
      const chat = d.newChat();
      const text = d.turnText(`hello ${chat}`);
      const delivery = await d.message({ chat, text: `hello ${chat}` });
      const res = await send(d, delivery);
      if (d.ack === "reply") {
        assertStrictEquals(await answered(chat, res), text);
      } else {
        await expectAck(d, res);
        await untilReplies(d, platform, chat, 1);
      }
      await settled(worker, d.session(chat));
      await pause(200);
      assertStrictEquals(modelCalls(fake, text), 1);
      if (d.ack !== "reply") {
        assertEquals(replies(d, platform, chat), [text]);
        d.expectReply?.(replyCalls(d, platform, chat)[0], delivery, platform);
      }
      assertEquals((await sessionState(worker, d.session(chat))).messages, [
        { role: "user", content: text },
        { role: "assistant", content: text },
      ]);
    },
  });
}

for (const d of async) {
  Deno.test({
    name: `POST ${d.path} acknowledges while the model call is still running`,
    ..._opts,
    async fn() {
      const { fake, platform, scripts } = await rig();
      const chat = d.newChat();
      const text = d.turnText(`think hard ${chat}`);
      scripts.set(text, () => ({ kind: "hold" }));
      const res = await send(d, await d.message({ chat, text: `think hard ${chat}` }));
      await untilAsked(fake, text);
      await expectAck(d, res);
      assertStrictEquals(fake.inFlight, 1, "the model call is still running");
      assertEquals(replies(d, platform, chat), []);
      fake.release();
      await untilReplies(d, platform, chat, 1);
      assertEquals(replies(d, platform, chat), [text]);
    },
  });
}

for (const d of DRIVERS) {
  Deno.test({
    name: `POST ${d.path} runs one turn for the same delivery sent five times during a slow turn`,
    ..._opts,
    async fn() {
      const { fake, platform, worker, scripts } = await rig();
      const chat = d.newChat();
      const text = d.turnText(`slow one ${chat}`);
      scripts.set(text, () => ({ kind: "hold" }));
      const delivery = await d.message({ chat, text: `slow one ${chat}` });
      const first = send(d, delivery);
      if (d.ack !== "reply") await expectAck(d, await first);
      await untilAsked(fake, text);
      // Redeliveries (marked so where the platform marks them) and plain repeats, at once.
      const again = await Promise.all(
        Array.from({ length: 5 }, async (_, i) => i % 2 ? await d.redeliver(delivery) : delivery),
      );
      const retries = Promise.all(again.map((r) => send(d, r)));
      if (d.ack === "reply") {
        await until(async () => (await sessionState(worker, d.session(chat))).running, "running");
        fake.release();
        for (const res of [await first, ...await retries]) {
          assertStrictEquals(await answered(chat, res), text);
        }
      } else {
        for (const res of await retries) await expectAck(d, res);
        assertStrictEquals((await sessionState(worker, d.session(chat))).queued, 0);
        fake.release();
        await untilReplies(d, platform, chat, 1);
      }
      await settled(worker, d.session(chat));
      await pause(200);
      assertStrictEquals(modelCalls(fake, text), 1);
      if (d.ack !== "reply") assertEquals(replies(d, platform, chat), [text]);
      assertEquals((await sessionState(worker, d.session(chat))).messages, [
        { role: "user", content: text },
        { role: "assistant", content: text },
      ]);
    },
  });
}

for (const d of DRIVERS) {
  Deno.test({
    name: `POST ${d.path} runs a delivery replayed after its turn once, with one reply`,
    ..._opts,
    async fn() {
      const { fake, platform, worker } = await rig();
      const chat = d.newChat();
      const text = d.turnText(`only once ${chat}`);
      const delivery = await d.message({ chat, text: `only once ${chat}` });
      const first = await send(d, delivery);
      if (d.ack === "reply") assertStrictEquals(await answered(chat, first), text);
      else await expectAck(d, first);
      await until(() => modelCalls(fake, text) === 1, "the turn");
      await settled(worker, d.session(chat));
      for (const replay of [delivery, await d.redeliver(delivery)]) {
        const res = await send(d, replay);
        // The generic webhook answers a replay with the first outcome.
        if (d.ack === "reply") assertStrictEquals(await answered(chat, res), text);
        else await expectAck(d, res);
      }
      await pause(300);
      await settled(worker, d.session(chat));
      assertStrictEquals(modelCalls(fake, text), 1);
      if (d.ack !== "reply") assertEquals(replies(d, platform, chat), [text]);
      assertStrictEquals((await sessionState(worker, d.session(chat))).messages.length, 2);
    },
  });
}

for (const d of DRIVERS) {
  Deno.test({
    name: `POST ${d.path} runs two messages of one chat as two turns in order`,
    ..._opts,
    async fn() {
      const { fake, platform, worker, scripts } = await rig();
      const chat = d.newChat();
      const [first, second] = [`first ${chat}`, `second ${chat}`].map(d.turnText);
      scripts.set(first, () => ({ kind: "hold" }));
      const one = send(d, await d.message({ chat, text: `first ${chat}` }));
      if (d.ack !== "reply") await expectAck(d, await one);
      await untilAsked(fake, first);
      const two = send(d, await d.message({ chat, text: `second ${chat}` }));
      if (d.ack !== "reply") await expectAck(d, await two);
      await untilQueued(worker, d.session(chat), 1);
      assertStrictEquals(modelCalls(fake, second), 0, "the second waits for the first");
      if (d.ack === "reply") {
        fake.release();
        assertEquals([await answered(chat, await one), await answered(chat, await two)], [
          first,
          second,
        ]);
      } else {
        // The queued notice goes to the second message's sender first.
        await untilReplies(d, platform, chat, 1);
        fake.release();
        await untilReplies(d, platform, chat, 3);
        assertEquals(replies(d, platform, chat), [QUEUED, first, second]);
      }
      const asked = fake.requests.map((r) => r.lastUserText).filter((t) =>
        t === first || t === second
      );
      assertEquals(asked, [first, second]);
      await settled(worker, d.session(chat));
      const state = await sessionState(worker, d.session(chat));
      assertEquals(state.messages.map((m) => m.content), [first, first, second, second]);
    },
  });
}

for (const d of async) {
  Deno.test({
    name: `POST ${d.path} sends a long reply as ordered parts of at most ${d.partLimit}`,
    ..._opts,
    async fn() {
      const { fake, platform, worker, scripts } = await rig();
      const chat = d.newChat();
      const text = d.turnText(`write a lot ${chat}`);
      const long = longText(Math.ceil(d.partLimit * 2.4));
      scripts.set(text, () => ({ kind: "text", text: long }));
      const delivery = await d.message({ chat, text: `write a lot ${chat}` });
      await expectAck(d, await send(d, delivery));
      await until(() => replies(d, platform, chat).join("") === long, "every part");
      await settled(worker, d.session(chat));
      await pause(200);
      const parts = replies(d, platform, chat);
      assert(parts.length >= 3, `${parts.length} parts`);
      for (const part of parts) {
        assert(part.length > 0 && part.length <= d.partLimit, `a part of ${part.length}`);
      }
      assertStrictEquals(parts.join(""), long);
      const calls = replyCalls(d, platform, chat);
      const keys = calls.map((c) => d.sent(c)!.key).filter((k) => k !== undefined);
      assertStrictEquals(new Set(keys).size, keys.length, "one idempotency key per part");
      d.expectParts?.(calls, delivery);
      assertStrictEquals(modelCalls(fake, text), 1);
    },
  });
}

for (const d of async) {
  Deno.test({
    name: `POST ${d.path} waits out a 429, then delivers exactly once`,
    ..._opts,
    async fn() {
      const { platform, worker, limited, arrivals } = await rig();
      const chat = d.newChat();
      const text = d.turnText(`rate limited ${chat}`);
      limited.set(_key(d, chat), 1);
      await expectAck(d, await send(d, await d.message({ chat, text: `rate limited ${chat}` })));
      await untilReplies(d, platform, chat, 2);
      await settled(worker, d.session(chat));
      await pause(300);
      const calls = replyCalls(d, platform, chat);
      assertStrictEquals(calls.length, 2);
      // The same request again: same path (a request id in it), body and idempotency key.
      assertEquals([calls[1].path, calls[1].body], [calls[0].path, calls[0].body]);
      assertStrictEquals(d.sent(calls[1])!.key, d.sent(calls[0])!.key);
      assertStrictEquals(d.sent(calls[1])!.text, text);
      const [at0, at1] = arrivals.get(_key(d, chat))!;
      assert(at1 - at0 >= 950, `retried after ${at1 - at0} ms, before the 1 s Retry-After`);
    },
  });
}

for (const d of DRIVERS) {
  Deno.test({
    name: `POST ${d.path} refuses a tampered signature with 401 and starts no turn`,
    ..._opts,
    async fn() {
      const { fake, platform, worker } = await rig();
      const chat = d.newChat();
      const text = d.turnText(`intruder ${chat}`);
      const delivery = await d.message({ chat, text: `intruder ${chat}` });
      const forgeries = await d.tamper(delivery);
      for (const [i, forged] of forgeries.entries()) {
        const res = await send(d, forged);
        const body = await json(res);
        assertStrictEquals(res.status, 401, `forgery ${i}: ${JSON.stringify(body)}`);
        assertEquals(body.error.type, "invalid_signature");
        for (const secret of secretsOf(d, platform)) {
          assert(!JSON.stringify(body).includes(secret), `forgery ${i}: the answer names a secret`);
        }
      }
      await pause(300);
      assertStrictEquals(modelCalls(fake, text), 0);
      assertEquals(replies(d, platform, chat), []);
      assertEquals((await sessionState(worker, d.session(chat))).messages, []);
      // The genuine delivery still runs: no forgery claimed its delivery id.
      const res = await send(d, delivery);
      if (d.ack === "reply") assertStrictEquals(await answered(chat, res), text);
      else {
        await expectAck(d, res);
        await untilReplies(d, platform, chat, 1);
      }
      assertStrictEquals(modelCalls(fake, text), 1);
    },
  });
}

for (const d of DRIVERS) {
  Deno.test({
    name: `POST ${d.path} binds the message's context (session_info)`,
    ..._opts,
    async fn() {
      const { platform, scripts } = await rig();
      const chat = d.newChat();
      const text = d.turnText(`who am I ${chat}`);
      scripts.set(text, echoSessionInfo());
      const message = { chat, text: `who am I ${chat}` };
      const delivery = await d.message(message);
      const res = await send(d, delivery);
      let reply: string;
      if (d.ack === "reply") reply = await answered(chat, res);
      else {
        await expectAck(d, res);
        await untilReplies(d, platform, chat, 1);
        reply = replies(d, platform, chat)[0];
      }
      // session_info reports no chat_name (lib/agent/tools.ts); the unit tests cover that field.
      assertEquals(JSON.parse(reply), d.context(message, delivery));
    },
  });
}

// ── A missing secret: deployments of their own, each without one secret of every platform ────

const _deployments = Math.max(...DRIVERS.map((d) => d.secretVars.length));

for (let k = 0; k < _deployments; k++) {
  let worker: Promise<TestWorker> | undefined;
  const missing = () =>
    worker ??= (async () => {
      const { fake, platform } = await rig();
      const drop = new Set(DRIVERS.flatMap((d) => d.secretVars[k] ?? []));
      return await startWorker({ vars: _vars(fake, platform, drop) });
    })();
  for (const d of DRIVERS.filter((d) => d.secretVars[k])) {
    const name = d.secretVars[k];
    Deno.test({
      name: `POST ${d.path} refuses with 403 and starts nothing while ${name} is missing`,
      ..._opts,
      async fn() {
        const { fake, platform } = await rig();
        const authBefore = platform.auth.length;
        const chat = d.newChat();
        const text = d.turnText(`anyone? ${chat}`);
        const res = await deliver(
          (await missing()).fetch,
          d,
          await d.message({ chat, text: `anyone? ${chat}` }),
        );
        const body = await json(res);
        assertStrictEquals(res.status, 403, JSON.stringify(body));
        assertEquals(body.error.type, "not_configured");
        assert(body.error.message.includes(name), body.error.message);
        for (const secret of secretsOf(d, platform)) {
          assert(!JSON.stringify(body).includes(secret), "the answer names a secret");
        }
        await pause(200);
        assertStrictEquals(modelCalls(fake, text), 0);
        assertEquals(replies(d, platform, chat), []);
        // Nor did it fetch keys or tokens (Teams, Google Chat).
        assertStrictEquals(platform.auth.length, authBefore);
      },
    });
  }
  Deno.test({
    name: `platform scenarios: the deployment missing secret #${
      k + 1
    } stops, its output leaking no secret`,
    ..._opts,
    async fn() {
      if (worker) await (await worker).dispose();
    },
  });
}

Deno.test({
  name: "platform scenarios: the shared deployment stops, its output leaking no secret",
  ..._opts,
  async fn() {
    if (!_rig) return;
    const { fake, platform, worker } = await _rig;
    fake.release();
    try {
      await worker.dispose();
    } finally {
      await fake.close();
      await platform.close();
    }
  },
});

// Model routing in workerd: MODEL_FALLBACKS on 503 (API and chat turns), no fallback on 400, MODELS with /model and the APIs' `model`; Deno + Miniflare.
import { assert, assertEquals, assertMatch, assertStrictEquals } from "@std/assert";
import {
  API_KEY,
  chat,
  chatReply,
  type Json,
  json,
  sendWebhook,
  until,
  withBaton,
} from "./_support/clients.ts";
import { type FakeModelStep, startFakeModel } from "../lib/testing/fake_model.ts";
import { sharedBaton } from "./_support/shared_baton.ts";
import type { TestWorker } from "./_support/worker.ts";

// LLM_MAX_RETRIES stays the tests' 2: the first model's retries are spent before the fallback.
const baton = sharedBaton({
  vars: {
    LLM_MODEL: "primary-model",
    MODEL_FALLBACKS: "backup-model",
    MODELS: "model-a,model-b",
  },
});

/** Every model echoes, naming itself. */
const named = (req: { body: Json; lastUserText: string }): FakeModelStep => ({
  kind: "text",
  text: `${req.body.model}: ${req.lastUserText}`,
});

/** The primary model answers `status`; every other model echoes, naming itself. */
const primaryFails =
  (status: number) => (req: { body: Json; lastUserText: string }): FakeModelStep =>
    req.body.model === "primary-model"
      ? { kind: "status", status }
      : { kind: "text", text: `${req.body.model}: ${req.lastUserText}` };

const hook = (worker: TestWorker, session: string, text: string) =>
  sendWebhook(worker, { session, text }).then(async (res) => ({
    status: res.status,
    body: await json(res),
  }));

/** POST /v1/chat/completions naming `model`. */
const chatAs = (worker: TestWorker, model: string, content: string, session: string) =>
  worker.fetch("/v1/chat/completions", {
    method: "POST",
    headers: {
      authorization: `Bearer ${API_KEY}`,
      "content-type": "application/json",
      "x-session-id": session,
    },
    body: JSON.stringify({ model, messages: [{ role: "user", content }] }),
  });

baton.test(
  "MODEL_FALLBACKS answers an API turn with the fallback when the first model answers 503 after its retries, and the timeline records model.fallback",
  async (worker, fake) => {
    fake.script(primaryFails(503));
    const res = await chatAs(worker, "primary-model", "hello api", "fb-api");
    assertStrictEquals(await chatReply(res), "backup-model: hello api");
    assertEquals(fake.requests.map((r) => r.body.model), [
      "primary-model",
      "primary-model",
      "primary-model",
      "backup-model",
    ]);
    let events: Json[] = [];
    await until(async () => {
      const inspect = await worker.fetch("/v1/sessions/api:fb-api/inspect", {
        headers: { authorization: `Bearer ${API_KEY}` },
      });
      events = (await json(inspect)).runs?.[0]?.events ?? [];
      return events.at(-1)?.type === "run.completed";
    }, "the run's timeline");
    const fallback = events.find((e) => e.type === "model.fallback");
    assert(fallback, JSON.stringify(events.map((e) => e.type)));
    assertEquals([fallback.data.from, fallback.data.to, fallback.data.status], [
      "primary-model",
      "backup-model",
      503,
    ]);
  },
);

baton.test(
  "MODEL_FALLBACKS answers a chat turn with the fallback when the first model answers 503",
  async (worker, fake) => {
    fake.script(primaryFails(503));
    const { body } = await hook(worker, "fb-chat", "hello chat");
    assertStrictEquals(body.reply, "backup-model: hello chat");
    assertStrictEquals(fake.requests.at(-1)?.body.model, "backup-model");
  },
);

baton.test(
  "MODEL_FALLBACKS: a 400 from the first model is not retried on another",
  async (worker, fake) => {
    fake.script(primaryFails(400));
    const res = await chatAs(worker, "primary-model", "bad request", "fb-400");
    assertStrictEquals(res.status, 502, JSON.stringify(await res.clone().json()));
    assertEquals(fake.requests.map((r) => r.body.model), ["primary-model"]);
  },
);

baton.test(
  "/model lists MODELS, switches the session's model (the model sees the new name, /status shows it) and refuses others",
  async (worker, fake) => {
    fake.script(named);
    const list = await hook(worker, "pick", "/model");
    assertMatch(
      list.body.reply,
      /Model: primary-model\.\nChoose with \/model NAME: model-a, model-b/,
    );
    assertMatch((await hook(worker, "pick", "/model gpt-5")).body.reply, /^Not available: gpt-5\./);
    assertMatch((await hook(worker, "pick", "/model Model-B")).body.reply, /^Model: model-b /);
    assertStrictEquals(
      (await hook(worker, "pick", "which model?")).body.reply,
      "model-b: which model?",
    );
    assertMatch((await hook(worker, "pick", "/status")).body.reply, /\nModel: model-b\.$/);
    // Remembered per session: another chat still runs the default.
    assertStrictEquals(
      (await hook(worker, "other", "and here?")).body.reply,
      "primary-model: and here?",
    );
    assertMatch((await hook(worker, "pick", "/model default")).body.reply, /back to the default/);
    await hook(worker, "pick", "again");
    assertEquals(fake.requests.map((r) => r.body.model), [
      "model-b",
      "primary-model",
      "primary-model",
    ]);
  },
);

baton.test(
  "the APIs' model field chooses from MODELS; a name not on it is a 400 model_not_allowed and starts no turn",
  async (worker, fake) => {
    fake.script(named);
    const ok = await chatAs(worker, "model-a", "hi a", "api-pick");
    const body = await json(ok);
    assertStrictEquals(ok.status, 200, JSON.stringify(body));
    assertEquals([body.model, body.choices[0].message.content], ["model-a", "model-a: hi a"]);
    const refused = await chatAs(worker, "gpt-5", "hi", "api-pick");
    const error = (await json(refused)).error;
    assertStrictEquals(refused.status, 400);
    assertStrictEquals(error.type, "model_not_allowed");
    assertMatch(error.message, /model-a, model-b/);
    const responses = await worker.fetch("/v1/responses", {
      method: "POST",
      headers: { authorization: `Bearer ${API_KEY}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "gpt-5", input: "hi" }),
    });
    assertStrictEquals(responses.status, 400);
    assertStrictEquals((await json(responses)).error.type, "model_not_allowed");
    assertEquals(fake.requests.map((r) => r.body.model), ["model-a"], "no turn for the refused");
  },
);

baton.done();

Deno.test("MODEL_FALLBACKS name@baseURL asks another endpoint with its LLM_API_KEY_<N>, never the main key", async () => {
  const far = await startFakeModel();
  try {
    far.script((req) => ({ kind: "text", text: `far ${req.body.model}: ${req.lastUserText}` }));
    await withBaton(async (worker, fake) => {
      fake.script(() => ({ kind: "status", status: 429 }));
      const res = await chat(worker, "over there", { session: "far" });
      assertStrictEquals(await chatReply(res), "far far-model: over there");
      assertStrictEquals(far.requests[0].headers.get("authorization"), "Bearer sk-far-key");
      assertStrictEquals(fake.requests.length, 1, "LLM_MAX_RETRIES=0: one try, then the fallback");
    }, {
      vars: {
        LLM_MAX_RETRIES: "0",
        MODEL_FALLBACKS: `far-model@${far.url}`,
        LLM_API_KEY_1: "sk-far-key",
      },
    });
  } finally {
    await far.close();
  }
});

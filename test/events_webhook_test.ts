// Workerd tests of EVENTS_WEBHOOK_URL: turn, approval and failure events posted to a loopback receiver, signed as Standard Webhooks, retried with the same webhook-id; Deno.
import { assert, assertEquals } from "@std/assert";
import { Webhook } from "standardwebhooks";
import { API_KEY, chat, chatReply, json, until } from "./_support/clients.ts";
import { sharedBaton } from "./_support/shared_baton.ts";

/** The events secret (base64 of 32 bytes), as a deployer would `wrangler secret put` it. */
const SECRET = `whsec_${btoa("events-webhook-test-secret-32by!")}`;

/** One delivery the receiver got: its headers, its body, and whether the signature verified. */
interface Delivery {
  id: string;
  body: { type: string; timestamp: string; data: Record<string, unknown> };
  verified: boolean;
  status: number;
}

const deliveries: Delivery[] = [];
/** Statuses to answer next (then 200): a 503 makes the sender retry. */
const answers: number[] = [];
const verifier = new Webhook(SECRET);
const receiver = Deno.serve({ port: 0, hostname: "127.0.0.1", onListen() {} }, async (req) => {
  const text = await req.text();
  const headers = Object.fromEntries(req.headers);
  let verified = false;
  try {
    verifier.verify(text, headers);
    verified = true;
  } catch {
    verified = false;
  }
  const status = answers.shift() ?? 200;
  deliveries.push({
    id: req.headers.get("webhook-id") ?? "",
    body: JSON.parse(text),
    verified,
    status,
  });
  return new Response(null, { status });
});

const baton = sharedBaton({
  vars: {
    EVENTS_WEBHOOK_URL: `http://127.0.0.1:${receiver.addr.port}/events`,
    EVENTS_WEBHOOK_SECRET: SECRET,
    APPROVAL_TOOLS: "session_info",
  },
});

/** The deliveries about API session `session` (the chat its events name). */
const about = (session: string) => deliveries.filter((d) => d.body.data.chat_id === session);

baton.test("EVENTS_WEBHOOK_URL gets one signed turn.completed per turn, naming its session and run", async (worker) => {
  assertEquals(
    await chatReply(await chat(worker, "hello events", { session: "ev-1" })),
    "hello events",
  );
  assertEquals(await chatReply(await chat(worker, "again", { session: "ev-1" })), "again");
  await until(() => about("ev-1").length >= 2, "two events");
  const events = about("ev-1");
  assertEquals(events.map((d) => d.body.type), ["turn.completed", "turn.completed"]);
  assert(events.every((d) => d.verified), "signatures verify with the standardwebhooks package");
  assertEquals(events.map((d) => d.body.data.seq), [1, 2]);
  assertEquals(events[0].body.data.platform, "api");
  assert(events[0].id !== events[1].id);
  assert(!Number.isNaN(Date.parse(events[0].body.timestamp)));
});

baton.test("EVENTS_WEBHOOK_URL: a 503 from the receiver is retried with the same webhook-id", async (worker) => {
  answers.push(503);
  assertEquals(await chatReply(await chat(worker, "retry me", { session: "ev-2" })), "retry me");
  await until(() => about("ev-2").some((d) => d.status === 200), "the retried event");
  const events = about("ev-2");
  assertEquals(events.map((d) => d.status), [503, 200]);
  assertEquals(events[0].id, events[1].id);
  assertEquals(events[0].body, events[1].body);
  assert(events.every((d) => d.verified));
});

baton.test(
  "EVENTS_WEBHOOK_URL gets turn.failed for a failed turn and approval.requested for a question",
  async (worker, fake) => {
    fake.script(() => ({ kind: "status", status: 400, body: { error: { message: "bad" } } }));
    const failed = await chat(worker, "fail please", { session: "ev-3" });
    assert(failed.status >= 400);
    await failed.body?.cancel();
    await until(() => about("ev-3").length >= 1, "the failure event");
    assertEquals(about("ev-3").map((d) => d.body.type), ["turn.failed"]);
    assertEquals(about("ev-3")[0].body.data.status, "failed");

    fake.script(() => ({ kind: "tool_call", name: "session_info", args: {} }));
    const res = await worker.fetch("/v1/runs", {
      method: "POST",
      headers: { authorization: `Bearer ${API_KEY}`, "content-type": "application/json" },
      body: JSON.stringify({ input: "ask first", session: "ev-4" }),
    });
    await json(res);
    await until(() => about("ev-4").length >= 1, "the approval event");
    const asked = about("ev-4")[0];
    assertEquals(asked.body.type, "approval.requested");
    assertEquals(asked.body.data.tool, "session_info");
    assert(asked.verified);
  },
);

baton.test("EVENTS_WEBHOOK_URL receiver shuts down", async () => {
  await receiver.shutdown();
});

baton.done();

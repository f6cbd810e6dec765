// GET and POST /webhooks/whatsapp end to end: workerd (one per configuration of the file; tests of a missing secret their own), a fake model and a fake Graph API on loopback; Deno + Miniflare.
import { assert, assertEquals, assertMatch, assertStrictEquals } from "@std/assert";
import { json, settled, until } from "./_support/clients.ts";
import {
  WHATSAPP_PHONE_ID as PHONE_ID,
  whatsappDriver as driver,
} from "./_support/drivers/whatsapp.ts";
import { askThenEcho, toolRuns } from "./_support/fake_llm_scripts.ts";
import type { FakePlatform, PlatformCall } from "./_support/fake_platform.ts";
import { expectOk, pause, withPlatform } from "./_support/platform_rig.ts";
import { sharedBaton } from "./_support/shared_baton.ts";
import type { TestWorker } from "./_support/worker.ts";

// The customer of the tests that start their own Worker.
const CUSTOMER = "16505551234";
const VARS = driver.vars();
const VERIFY_TOKEN = VARS.WHATSAPP_VERIFY_TOKEN;

// One Worker for the file's tests of VARS (and one for the approval tests, below); a test of a
// missing secret or of the allowlist starts its own. Each test on a shared Worker talks with
// customers of its own.
const baton = sharedBaton({ vars: VARS });

/** A customer's number (their wa_id) of one test's own. */
const customerOf = (n: number) => `1650555${String(n).padStart(4, "0")}`;

let _next = 1;

type Fields = Record<string, unknown>;
/** A `messages` notification as whatsappDriver shapes it. */
type Notification = { entry: { changes: { value: Fields & { messages?: Fields[] } }[] }[] };

/**
 * A `messages` notification carrying one text message from `customer`, as whatsappDriver shapes
 * it (or carrying the given `messages` instead).
 */
function notification(
  text: string,
  customer: string,
  opts: { id?: string; messages?: unknown[] } = {},
): Notification {
  const id = opts.id ?? `wamid.TEST${_next++}`;
  const shaped = driver.shape({ chat: customer, text, id }) as Notification;
  if (opts.messages) shaped.entry[0].changes[0].value.messages = opts.messages as Fields[];
  return shaped;
}

/**
 * `customer`'s message `id` as whatsappDriver shapes a text one, its text swapped for `extra`
 * (another type: an image, a tap).
 */
function messageOf(customer: string, id: string, extra: Fields): Fields {
  const { text: _, ...message } = notification("", customer, { id }).entry[0].changes[0].value
    .messages![0];
  return { ...message, ...extra };
}

/** POSTs a notification as Meta does, signed by whatsappDriver with the app secret. */
async function post(worker: TestWorker, payload: unknown): Promise<Response> {
  const body = JSON.stringify(payload);
  const headers = await driver.sign(body, driver.credentials);
  return worker.fetch(driver.path, { method: "POST", headers, body });
}

baton.test("GET /webhooks/whatsapp answers the subscription handshake with the challenge, and 403 to a wrong token", async (worker) => {
  const ok = await worker.fetch(
    `/webhooks/whatsapp?hub.mode=subscribe&hub.verify_token=${VERIFY_TOKEN}&hub.challenge=1158201444`,
  );
  assertStrictEquals(ok.status, 200);
  assert(ok.headers.get("content-type")?.startsWith("text/plain"));
  assertStrictEquals(await ok.text(), "1158201444");
  const wrong = await worker.fetch(
    "/webhooks/whatsapp?hub.mode=subscribe&hub.verify_token=nope&hub.challenge=1",
  );
  const body = await json(wrong);
  assertStrictEquals(wrong.status, 403);
  assert(!JSON.stringify(body).includes(VERIFY_TOKEN));
});

baton.test(
  "POST /webhooks/whatsapp runs the messages of one notification in order",
  async (worker, fake, graph) => {
    const customer = customerOf(2);
    const session = `whatsapp:${PHONE_ID}:${customer}`;
    const batch = notification("", customer, {
      messages: ["one", "two"].map((body, i) =>
        messageOf(customer, `wamid.BATCH${i}`, { type: "text", text: { body } })
      ),
    });
    await expectOk(await post(worker, batch));
    await settled(worker, session);
    await graph.waitForCalls(2);
    await settled(worker, session);
    assertEquals(fake.requests.map((r) => r.lastUserText), ["one", "two"]);
    assert(graph.calls.map((c) => c.body.text.body).join("|").endsWith("one|two"));
  },
);

baton.test(
  "POST /webhooks/whatsapp reports a reply outside the 24-hour window once and never retries it",
  async (worker, _fake, graph) => {
    graph.respond((_, index) =>
      index === 0
        ? {
          status: 400,
          body: {
            error: {
              message: "(#131047) Re-engagement message",
              type: "OAuthException",
              code: 131047,
            },
          },
        }
        : { status: 200, body: { messages: [{ id: "wamid.OUT" }] } }
    );
    const customer = customerOf(3);
    await expectOk(await post(worker, notification("too late", customer)));
    await graph.waitForCalls(1);
    await settled(worker, `whatsapp:${PHONE_ID}:${customer}`);
    await pause(500);
    assertStrictEquals(graph.calls.length, 1);
    await expectOk(await post(worker, notification("next", customer)));
    await graph.waitForCalls(2);
    assertEquals(graph.calls[1].body.text.body, "next");
  },
);

baton.test(
  "POST /webhooks/whatsapp acknowledges status callbacks and reactions with no turn",
  async (worker, fake, graph) => {
    const customer = customerOf(4);
    const statuses = notification("", customer, { messages: [] });
    const value = statuses.entry[0].changes[0].value;
    delete value.messages;
    value.statuses = [{ id: "wamid.S", status: "read", timestamp: "1", recipient_id: customer }];
    await expectOk(await post(worker, statuses));
    await expectOk(
      await post(
        worker,
        notification("", customer, {
          // Media are turns now (test/chat_media_test.ts); a reaction still is none.
          messages: [
            messageOf(customer, "wamid.REACT", {
              type: "reaction",
              reaction: { message_id: "wamid.OUT", emoji: "\u{1F44D}" },
            }),
          ],
        }),
      ),
    );
    await pause(300);
    assertStrictEquals(fake.requests.length, 0);
    assertStrictEquals(graph.calls.length, 0);
  },
);

Deno.test("POST and GET /webhooks/whatsapp refuse with 403 and start nothing while a secret is missing", async () => {
  for (const name of Object.keys(VARS)) {
    const vars: Record<string, string | undefined> = { ...VARS, [name]: undefined };
    await withPlatform(vars, async (worker, fake, graph) => {
      const res = await post(worker, notification("anyone?", CUSTOMER));
      const body = await json(res);
      assertStrictEquals(res.status, 403, JSON.stringify(body));
      assertEquals(body.error.type, "not_configured");
      const get = await worker.fetch(
        `/webhooks/whatsapp?hub.mode=subscribe&hub.verify_token=${VERIFY_TOKEN}&hub.challenge=1`,
      );
      assertStrictEquals(get.status, 403);
      await get.body?.cancel();
      for (const secret of Object.values(VARS)) assert(!JSON.stringify(body).includes(secret));
      await pause(100);
      assertStrictEquals(fake.requests.length, 0);
      assertStrictEquals(graph.calls.length, 0);
    });
  }
});

// ── Approval buttons and typing ─────────────────────────────────────────────────────────────────

const ASKING = { ...VARS, APPROVAL_TOOLS: "session_info" };
const asking = sharedBaton({ vars: ASKING, label: "approvals on" });

/**
 * A tap on a row of the question's list (or a reply button), as `customer`'s `interactive` message
 * (sent by `opts.from` when given).
 */
function tap(
  data: string,
  customer: string,
  opts: { id?: string; from?: string; kind?: string } = {},
) {
  const kind = opts.kind ?? "list_reply";
  return notification("", customer, {
    messages: [messageOf(customer, opts.id ?? `wamid.TAP${_next++}`, {
      context: { from: "15550783881", id: "wamid.QUESTION" },
      from: opts.from ?? customer,
      type: "interactive",
      interactive: { type: kind, [kind]: { id: data, title: "Approve once" } },
    })],
  });
}

/** The rows of the first question sent (a list message: an approval has four choices). */
async function questionRows(graph: FakePlatform): Promise<string[]> {
  const rows = (c: PlatformCall) =>
    c.body?.interactive?.action?.sections?.[0]?.rows?.map((r: { id: string }) => r.id);
  await until(() => graph.calls.some((c) => rows(c)?.length), "the question with its list");
  return rows(graph.calls.find((c) => rows(c)?.length)!);
}

const texts = (graph: FakePlatform) =>
  graph.calls.filter((c) => c.body?.type === "text").map((c) => c.body.text.body as string);

asking.test(
  "POST /webhooks/whatsapp: the question is a list of the choices; a tap approves and the turn goes on to one reply; the tap delivered twice runs the tool once",
  async (worker, fake, graph) => {
    const customer = customerOf(11);
    fake.script(askThenEcho);
    await expectOk(await post(worker, notification("who am i", customer, { id: "wamid.ASK" })));
    const rows = await questionRows(graph);
    assertStrictEquals(rows.length, 4);
    const question = graph.calls.find((c) => c.body?.type === "interactive")!;
    assertEquals(question.body.interactive.type, "list");
    assertEquals(question.body.context, { message_id: "wamid.ASK" });
    assert(question.body.interactive.body.text.startsWith("Approval needed: session_info"));

    const click = tap(rows[0], customer, { id: "wamid.CLICK" });
    await expectOk(await post(worker, click));
    await expectOk(await post(worker, click));
    await until(() => texts(graph).some((t) => t.startsWith("done: ")), "done");
    await settled(worker, `whatsapp:${PHONE_ID}:${customer}`);
    await pause(200);
    assertStrictEquals(toolRuns(fake), 1);
    const done = texts(graph).filter((t) => t.startsWith("done: "));
    assertStrictEquals(done.length, 1);
    assertMatch(done[0], new RegExp(`^done: \\{"platform":"whatsapp".*"user_id":"${customer}"`));
    // The repeat was judged "Already answered", and says so to the customer; nothing else was sent.
    assertEquals(texts(graph).filter((t) => !t.startsWith("done: ")), ["Already answered"]);
  },
);

asking.test(
  "POST /webhooks/whatsapp: a reply button's tap (button_reply) answers like a list row's; a tap from another customer answers nothing",
  async (worker, fake, graph) => {
    const [customer, other] = [customerOf(12), customerOf(9912)];
    fake.script(askThenEcho);
    await expectOk(await post(worker, notification("who am i", customer)));
    const rows = await questionRows(graph);
    // Another customer's chat is another session: nothing waits there.
    await expectOk(await post(worker, tap(rows[0], customer, { from: other })));
    await until(() => texts(graph).includes("Already answered"), "the stranger's answer");
    assertStrictEquals(graph.calls.find((c) => c.body?.type === "text")!.body.to, other);
    await pause(200);
    assertStrictEquals(toolRuns(fake), 0);
    await expectOk(await post(worker, tap(rows[3], customer, { kind: "button_reply" })));
    await until(() => fake.requests.length === 2, "the resumed turn");
    await settled(worker, `whatsapp:${PHONE_ID}:${customer}`);
    assertStrictEquals(toolRuns(fake), 0, "denied");
  },
);

Deno.test("POST /webhooks/whatsapp: a tap by a sender the access policy does not know is refused before its session", async () => {
  const vars = { ...ASKING, ACCESS_POLICY: "allowlist", ALLOWED_USERS: `whatsapp:${CUSTOMER}` };
  await withPlatform(vars, async (worker, fake, graph) => {
    fake.script(askThenEcho);
    await expectOk(await post(worker, notification("who am i", CUSTOMER)));
    const rows = await questionRows(graph);
    const stranger = "16505559999";
    await expectOk(await post(worker, tap(rows[0], CUSTOMER, { from: stranger })), {
      ok: true,
      ignored: "sender not allowed",
    });
    await until(() => graph.calls.some((c) => c.body?.to === stranger), "the gate's notice");
    await pause(300);
    assertStrictEquals(toolRuns(fake), 0);
    // The gate's own notice went to the stranger; no "Not allowed" on top of it.
    const toStranger = graph.calls.filter((c) => c.body?.to === stranger);
    assertStrictEquals(toStranger.length, 1);
    assert(toStranger[0].body.text.body !== "Not allowed");
  });
});

baton.test(
  "POST /webhooks/whatsapp: a slow turn shows the typing indicator on the customer's message, once within 25 s, and none after the reply",
  async (worker, fake, graph) => {
    fake.script(() => ({ kind: "text", text: "slowly", delayMs: 5_500 }));
    const customer = customerOf(5);
    await expectOk(
      await post(worker, notification("take your time", customer, { id: "wamid.SLOW" })),
    );
    await graph.waitForCalls(1);
    await settled(worker, `whatsapp:${PHONE_ID}:${customer}`);
    await pause(300);
    assertEquals(graph.calls.map((c) => c.body.text?.body), ["slowly"]);
    // Asked every 4 s, sent once: it lasts 25 s.
    assertStrictEquals(graph.signals.length, 1);
    assertEquals(graph.signals[0].body, {
      messaging_product: "whatsapp",
      status: "read",
      message_id: "wamid.SLOW",
      typing_indicator: { type: "text" },
    });
    assert(graph.signals[0].order < graph.calls[0].order, "typing before the reply");
  },
);

baton.done();
asking.done();

// Compaction across a crash: workerd restarted (state persisted) while the summary call is held, or right after the summary was stored: one summary, nothing lost or doubled; Deno + Miniflare.
import { assert, assertEquals, assertMatch } from "@std/assert";
import { API_KEY, json, sendWebhook, sessionState, until, withBaton } from "./_support/clients.ts";
import { tempPersistDir } from "./_support/worker.ts";
import type { FakeModelRequest, FakeModelStep } from "../lib/testing/fake_model.ts";

/** One short lease, so that the restarted runtime takes the dead executor's claim soon. */
const VARS = { CONTEXT_TOKENS: "1000", TURN_LEASE_MS: "500" };

/** Whether the request is a compaction's summary call (its system prompt, lib/session/compactor.ts). */
const isSummary = (req: FakeModelRequest) =>
  String(req.body.messages?.[0]?.content ?? "").startsWith("You compact a conversation");

/** Whether a turn's model call carries a summary in its history. */
const hasSummary = (req: FakeModelRequest) =>
  req.body.messages.some((m: { role: string; content: unknown }) =>
    m.role === "system" && String(m.content).startsWith("Summary of the earlier conversation")
  );

/**
 * Echoes, reporting 100 prompt tokens per message sent (as compaction_test.ts counts). The echo is
 * the fake model's unscripted answer too: the restarted runtime may rerun the cut turn before the
 * test scripts its new fake.
 */
function counting(req: FakeModelRequest): FakeModelStep {
  return isSummary(req) ? { kind: "text", text: "SUMMARY: the user counts" } : {
    kind: "text",
    text: req.lastUserText,
    usage: { prompt_tokens: 100 * req.body.messages.length, completion_tokens: 5 },
  };
}

/** A reply that never comes before the runtime dies (withBaton releases holds, not delays). */
const NEVER: FakeModelStep = { kind: "text", text: "too late", delayMs: 60_000 };

/** GET /v1/sessions/{key}: the transcript and its compactions. */
async function snapshot(
  worker: { fetch(path: string, init?: RequestInit): Promise<Response> },
  key: string,
) {
  const res = await worker.fetch(`/v1/sessions/${encodeURIComponent(key)}`, {
    headers: { authorization: `Bearer ${API_KEY}` },
  });
  return await json(res) as {
    messages: { role: string; content: string }[];
    compactions: { from: number; through?: number; summary: string }[];
  };
}

/**
 * Sends `msg 1`, `msg 2`, … to webhook session `session` one at a time until a turn's model work
 * reaches the point `stuck` names (its summary call, or the turn's own call after a summary),
 * which `NEVER` answers; returns how many messages were sent (the last one is in flight).
 */
async function sendUntilStuck(
  session: string,
  stuck: "summary" | "after summary",
): Promise<number> {
  let sent = 0;
  await withBaton(async (worker, fake) => {
    fake.script((req) => {
      if (stuck === "summary" && isSummary(req)) return NEVER;
      if (stuck === "after summary" && !isSummary(req) && hasSummary(req)) return NEVER;
      return counting(req);
    });
    const isStuck = () =>
      fake.requests.some((r) =>
        stuck === "summary" ? isSummary(r) : !isSummary(r) && hasSummary(r)
      );
    for (let n = 1; n <= 12 && !isStuck(); n++) {
      let answered = false;
      sendWebhook(worker, { session, text: `msg ${n}` }, { id: `msg_${session}_${n}` })
        .then(async (r) => {
          await r.body?.cancel();
          answered = true;
        }, () => undefined);
      sent = n;
      await until(() => answered || isStuck(), `msg ${n} answered or stuck`, 30_000);
    }
    assert(isStuck(), `no turn reached the ${stuck} point in 12 messages`);
  }, { persistDir: dir!, vars: VARS });
  return sent;
}

let dir: string | undefined;

/**
 * Restarts on the same state, resends the message in flight, and checks the session's record and
 * that the restarted runtime asked for `summaryCalls` summaries.
 */
async function restartAndCheck(
  session: string,
  sent: number,
  summaryCalls: number,
): Promise<void> {
  await withBaton(async (worker, fake) => {
    fake.script(counting);
    // The platform resends what it never got an answer for: answered once, as the turn ran.
    const res = await sendWebhook(worker, { session, text: `msg ${sent}` }, {
      id: `msg_${session}_${sent}`,
    });
    assertEquals(await json(res), { session, reply: `msg ${sent}` });
    // One more turn after the crash sees the summary, not the oldest message.
    const next = await sendWebhook(worker, { session, text: `msg ${sent + 1}` });
    assertEquals(await json(next), { session, reply: `msg ${sent + 1}` });
    const last = fake.requests.filter((r) => !isSummary(r)).at(-1)!;
    assert(hasSummary(last), "the turn after the restart sees the summary");
    const users = last.body.messages.filter((m: { role: string }) => m.role === "user")
      .map((m: { content: string }) => m.content);
    assert(!users.includes("msg 1"), "the oldest message is summarised, not sent");

    await until(
      async () => !(await sessionState(worker, `webhook:${session}`)).running,
      "turns done",
    );
    const snap = await snapshot(worker, `webhook:${session}`);
    // One summary, whatever the crash cut; nothing lost or doubled from the transcript.
    assertEquals(snap.compactions.length, 1, JSON.stringify(snap.compactions));
    // The fake's (or, before the test scripted it, its echo of the prompt's messages).
    assertMatch(snap.compactions[0].summary, /SUMMARY: the user counts|user: msg 1\n/);
    assertEquals(fake.requests.filter(isSummary).length, summaryCalls, "summary calls after");
    const expected = Array.from({ length: sent + 1 }, (_, i) => [
      { role: "user", content: `msg ${i + 1}` },
      { role: "assistant", content: `msg ${i + 1}` },
    ]).flat();
    assertEquals(
      snap.messages.map((m) => ({ role: m.role, content: m.content })),
      expected,
    );
  }, { persistDir: dir!, vars: VARS });
}

Deno.test(
  "compaction killed while its summary call is held: after the restart one summary, nothing lost",
  async () => {
    const tmp = await tempPersistDir();
    dir = tmp.path;
    try {
      const sent = await sendUntilStuck("cmp-kill", "summary");
      await restartAndCheck("cmp-kill", sent, 1);
    } finally {
      await tmp.cleanup();
    }
  },
);

Deno.test(
  "compaction stored, then the turn killed in its model call: the rerun summarises nothing twice",
  async () => {
    const tmp = await tempPersistDir();
    dir = tmp.path;
    try {
      const sent = await sendUntilStuck("cmp-kill-after", "after summary");
      await restartAndCheck("cmp-kill-after", sent, 0);
    } finally {
      await tmp.cleanup();
    }
  },
);

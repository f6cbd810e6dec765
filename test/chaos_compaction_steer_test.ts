// Checks of the chaos run's compaction and steer checks (the developer lane): the verifier given observations built by hand must flag a range out of place, a message summarised twice, a steer taken and answered, a steer neither; Deno.
import { assert, assertEquals } from "@std/assert";
import { SUMMARY_PROMPT } from "../lib/session/compactor.ts";
import { STEER_MARK } from "../lib/session/steers.ts";
import type { FakeModelRequest } from "../lib/testing/fake_model.ts";
import {
  type ChaosMessage,
  type ChaosObservation,
  type ChaosWay,
  figure,
  LABELS,
  newPlatformChat,
  noFaults,
  planChaos,
  replyLinkOf,
  seededRandom,
  verifyChaos,
} from "../scripts/chaos/mod.ts";
import {
  COMPACTION_LABELS,
  planCompaction,
  summaryStep,
  usageOf,
} from "../scripts/chaos/compaction.ts";
import { planSteers, STEER_LABELS, toolStepBeforeSteer, turnText } from "../scripts/chaos/steer.ts";
import { CHAOS_MARKER } from "../scripts/chaos/plan.ts";
import type { SeenCompaction } from "../scripts/chaos/observation.ts";

/** One accepted session of `way` with `count` messages, each answered by its echo; no model calls yet. */
function observed(way: ChaosWay, count: number): ChaosObservation {
  const plan = { seed: 5, messages: count, sessions: 1, spanMs: 1_000, longRate: 0, ways: [way] };
  const sessions = planChaos({ ...plan, duplicateRate: 0, badRate: 0 }, seededRandom(5));
  for (const m of sessions[0].messages) m.accepted = true;
  return {
    seed: 5,
    ways: [way],
    sessions,
    modelRequests: [],
    modelAnswered: [],
    injectedModel: { r429: 0, r500: 0, stall: 0 },
    shown: [],
    faults: { [way]: noFaults() } as ChaosObservation["faults"],
    lookups: { [way]: 0 } as ChaosObservation["lookups"],
    fakeEvents: {},
    transcripts: new Map(),
    locked: new Set(),
    late: new Map(),
    counts: {
      [way]: { sent: count, duplicatesSent: 0, badSent: 0, bad5xx: 0, good5xx: 0 },
    } as ChaosObservation["counts"],
    jobs: [],
    kills: [],
    openAtKills: 0,
    held: [],
    problems: [],
    seconds: 0,
  };
}

/** A model call with these messages (the last user message's text as the fake reads it). */
function call(messages: { role: string; content: string }[]): FakeModelRequest {
  const last = messages.findLast((m) => m.role === "user")?.content ?? "";
  return { body: { messages }, headers: new Headers(), lastUserText: last, sessionTag: "" };
}

/** The echo of `m` on its platform, linked to it where the platform links. */
function echo(m: ChaosMessage, at: number) {
  const way = m.session.way as "whatsapp";
  return { way, chat: newPlatformChat(m.session), text: m.text, replyToId: replyLinkOf(m), at };
}

/** A webhook session's transcript of `count` echoed messages, and the summary of messages `ks` at positions from–through. */
function compacted(count: number, ranges: [number, number, number[]][]): ChaosObservation {
  const obs = observed("webhook", count);
  const messages = obs.sessions[0].messages;
  for (const m of messages) m.answers.push({ status: 200, reply: m.text });
  const key = obs.sessions[0].key;
  obs.transcripts.set(
    key,
    messages.flatMap((m) => [
      { role: "user", content: m.text },
      { role: "assistant", content: m.text },
    ]),
  );
  // The summary the fake model writes of those messages, as compaction.ts's summaryStep does.
  const summaryOf = (ks: number[]) => {
    const input = [
      "Messages to compact:",
      ...ks.flatMap((k) => [`user: ${messages[k].text}`, `assistant: ${messages[k].text}`]),
    ].join("\n");
    const req = call([{ role: "system", content: SUMMARY_PROMPT }, {
      role: "user",
      content: input,
    }]);
    const step = summaryStep(req);
    return step.kind === "text" ? step.text : "";
  };
  obs.compactions = new Map<string, SeenCompaction[]>([[
    key,
    ranges.map(([from, through, ks]) => ({
      from,
      through,
      messages: through - from + 1,
      summary: summaryOf(ks),
    })),
  ]]);
  return obs;
}

Deno.test("verifyChaos() counts compactions that follow each other, and flags a range that overlaps, a message summarised twice or outside its range", () => {
  // Messages 0–1 (positions 0–3), then 2 (positions 4–5): contiguous, each summary inside its range.
  const clean = verifyChaos(compacted(4, [[0, 3, [0, 1]], [4, 5, [2]]]));
  assert(clean.ok, clean.problems.join("\n"));
  assertEquals(figure(clean, COMPACTION_LABELS.sessions), 1);
  assertEquals(figure(clean, COMPACTION_LABELS.compactions), 2);
  // The second starts inside the first (positions 2–5) and summarises message 1 again.
  const overlap = verifyChaos(compacted(4, [[0, 3, [0, 1]], [2, 5, [1, 2]]]));
  assertEquals(figure(overlap, COMPACTION_LABELS.ranges), 1, overlap.problems.join("\n"));
  assertEquals(figure(overlap, COMPACTION_LABELS.twice), 1, overlap.problems.join("\n"));
  assert(!overlap.ok);
  // A summary of message 3 stored for the range of messages 0–1; a range past the transcript's end.
  const outside = verifyChaos(compacted(4, [[0, 3, [3]], [4, 9, [2]]]));
  assertEquals(figure(outside, COMPACTION_LABELS.lost), 1, outside.problems.join("\n"));
  assertEquals(figure(outside, COMPACTION_LABELS.ranges), 1, outside.problems.join("\n"));
  assert(!outside.ok);
});

/** A WhatsApp session of three messages whose last is a steer, the model calls and transcript given. */
function steered(
  calls: (ms: ChaosMessage[]) => { role: string; content: string }[][],
  transcript: (ms: ChaosMessage[]) => { role: string; content: string }[],
  shown: (ms: ChaosMessage[]) => ChaosMessage[],
): ChaosObservation {
  const obs = observed("whatsapp", 3);
  const messages = obs.sessions[0].messages;
  obs.steers = new Set([messages[2].marker]);
  for (const c of calls(messages)) {
    obs.modelRequests.push(call(c));
    obs.modelAnswered.push(true);
  }
  obs.transcripts.set(obs.sessions[0].key, transcript(messages));
  obs.shown = shown(messages).map((m, i) => echo(m, i));
  return obs;
}

Deno.test("verifyChaos() counts a steer taken by the running turn as answered, and flags one also run as its own turn, or neither", () => {
  const user = (m: ChaosMessage) => ({ role: "user", content: m.text });
  const steer = (m: ChaosMessage) => ({ role: "user", content: STEER_MARK + m.text });
  const bot = (m: ChaosMessage) => ({ role: "assistant", content: m.text });
  // m0's turn takes steer m2 at its second step; m1 was queued behind it: out of arrival order,
  // by design, and no reply of m2's own.
  const taken = verifyChaos(steered(
    ([a, b, c]) => [[user(a)], [user(a), steer(c)], [user(a), steer(c), bot(a), user(b)]],
    ([a, b, c]) => [user(a), steer(c), bot(a), user(b), bot(b)],
    ([a, b]) => [a, b],
  ));
  assert(taken.ok, taken.problems.join("\n"));
  assertEquals(figure(taken, STEER_LABELS.taken), 1);
  assertEquals(figure(taken, LABELS.answered), 3);
  // Taken, and then run as a turn of its own too (answered twice).
  const both = verifyChaos(steered(
    ([a, b, c]) => [[user(a), steer(c)], [user(a), bot(a), user(b)], [user(c)]],
    ([a, b, c]) => [user(a), steer(c), bot(a), user(b), bot(b), user(c), bot(c)],
    ([a, b, c]) => [a, b, c],
  ));
  assert(figure(both, STEER_LABELS.both) === 1, both.problems.join("\n"));
  assert(!both.ok);
  // Accepted, never taken, never run: lost.
  const neither = verifyChaos(steered(
    ([a, b]) => [[user(a)], [user(a), bot(a), user(b)]],
    ([a, b]) => [user(a), bot(a), user(b), bot(b)],
    ([a, b]) => [a, b],
  ));
  assertEquals(figure(neither, STEER_LABELS.neither), 1, neither.problems.join("\n"));
  assert(figure(neither, LABELS.lost) === 1, neither.problems.join("\n"));
  assert(!neither.ok);
});

Deno.test("planSteers() and planCompaction() draw from their own stream: steers on the steer ways right after the message before, padding on a share of sessions", () => {
  const plan = { seed: 9, messages: 200, sessions: 8, spanMs: 60_000, longRate: 0 };
  const sessions = planChaos({ ...plan, duplicateRate: 0, badRate: 0 }, seededRandom(9));
  const steers = planSteers(sessions, seededRandom(1));
  assert(steers.size > 0);
  for (const m of sessions.flatMap((s) => s.messages).filter((m) => steers.has(m.marker))) {
    assert(m.text.startsWith("/steer [tag:"), m.text);
    assert(m.k > 0 && m.at <= m.session.messages[m.k - 1].at + 300);
    assert(["whatsapp", "line", "twilio", "teams"].includes(m.session.way));
  }
  const padded = planCompaction(sessions, seededRandom(2));
  assert(padded.length >= 1);
  assert(sessions[padded[0]].messages.every((m) => m.text.length > 300));
});

Deno.test("turnText() is the message the turn answers, not a steer it took; toolStepBeforeSteer() calls a tool once, on the first call of the message before a steer", () => {
  const steerOf = "[tag:s0] s0m2 x";
  const first = call([{ role: "user", content: "[tag:s0] s0m1 a" }]);
  const taken = call([
    { role: "user", content: "[tag:s0] s0m1 a" },
    { role: "assistant", content: "" },
    { role: "tool", content: "error" },
    { role: "user", content: STEER_MARK + steerOf },
  ]);
  assertEquals(turnText(taken), "[tag:s0] s0m1 a");
  const steers = new Set(["s0m2"]);
  const marker = CHAOS_MARKER.exec(turnText(first))!;
  assertEquals(toolStepBeforeSteer(first, marker, steers)?.kind, "tool_call");
  assertEquals(toolStepBeforeSteer(taken, marker, steers), null);
  assertEquals(toolStepBeforeSteer(first, marker, new Set()), null);
  // Token counts from the conversation's characters: what compaction measures a session by.
  assertEquals(usageOf(first, "abcd"), { prompt_tokens: 4, completion_tokens: 1 });
});

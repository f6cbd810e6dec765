// The chaos run's compaction share: padded sessions long enough to pass a small CONTEXT_TOKENS, the fake model's summaries and token counts, and the check that no message is summarised twice or lost; Deno.
import type { FakeModelRequest, FakeModelStep, FakeUsage } from "../../lib/testing/fake_model.ts";
import { SUMMARY_PROMPT } from "../../lib/session/compactor.ts";
import { CHAOS_MARKERS, type ChaosSession } from "./plan.ts";
import type { ChaosObservation } from "./observation.ts";
import { fig, type Tally } from "./tally.ts";
import type { ChaosFigure } from "./report.ts";

/**
 * baton's CONTEXT_TOKENS in the chaos run (the setting's least): a padded session passes it
 * after about six messages, a long reply at once; a plain session's forty-message window never.
 */
export const CHAOS_CONTEXT_TOKENS = 1_000;

/** Share of sessions whose messages are padded so that they compact (default 0.3). */
export const COMPACTING_SHARE = 0.3;

/** What a padded session's messages carry after their marker: ~330 characters the echo repeats. */
const _PAD = ` pad ${"ipsum dolor sit amet consectetur ".repeat(10).trim()}`;

/** Row labels of the compaction checks. */
export const COMPACTION_LABELS = {
  sessions: "sessions compacted",
  compactions: "compactions stored",
  ranges: "compaction ranges overlapping, with a gap or past the transcript",
  twice: "messages summarised twice",
  lost: "summarised messages missing from their range of the transcript",
} as const;

/**
 * Pads the messages of about `share` of the sessions (at least one), drawn from `random` (a
 * stream of its own, so that a seed's other draws stay as they were): those sessions run long
 * enough to compact several times. Returns the padded sessions' indexes.
 */
export function planCompaction(
  sessions: ChaosSession[],
  random: () => number,
  share = COMPACTING_SHARE,
): number[] {
  const chosen = sessions.filter(() => random() < share).map((s) => s.index);
  if (!chosen.length && sessions.length) chosen.push(sessions[0].index);
  for (const index of chosen) {
    for (const m of sessions[index].messages) m.text += _PAD;
  }
  return chosen;
}

/** Whether `req` is baton's summary call (lib/session/compactor.ts), not a turn's. */
export function isSummaryCall(req: FakeModelRequest): boolean {
  const first = req.body?.messages?.[0];
  return first?.role === "system" && first.content === SUMMARY_PROMPT;
}

/**
 * The fake model's summary: the markers of the user messages it was given to compact, written
 * so that no marker pattern matches them (`covers 3.4 3.5`): the check reads them back from the
 * stored compactions. Written slowly, so that a kill can land during the call.
 */
export function summaryStep(req: FakeModelRequest): FakeModelStep {
  const covered = [...summarised(req.lastUserText)].map((marker) =>
    marker.slice(1).replace("m", ".")
  );
  const text = `Chaos summary: covers ${covered.join(" ") || "nothing"}.`;
  return { kind: "text", text, delayMs: 400, usage: usageOf(req, text) };
}

/** The markers of the user messages a summary prompt's "Messages to compact" section holds. */
export function summarised(input: string): Set<string> {
  const at = input.indexOf("Messages to compact:");
  const section = at < 0 ? "" : input.slice(at);
  const markers = new Set<string>();
  // One entry per line that starts with a role (a steered user message goes on over two lines).
  for (const entry of section.split(/\n(?=(?:user|assistant|tool result|system): )/)) {
    if (!entry.startsWith("user: ")) continue;
    for (const match of entry.matchAll(CHAOS_MARKERS)) markers.add(match[0]);
  }
  return markers;
}

/**
 * The token counts the fake reports for an answer: a quarter token per character of the
 * conversation's messages (the deployment's system prompt and the summary aside) and of the
 * answer. baton's compaction measures a session by them (the default 1 and 1 never compacts).
 */
export function usageOf(req: FakeModelRequest, answer: string): FakeUsage {
  const messages: { role?: string; content?: unknown }[] = req.body?.messages ?? [];
  const chars = messages.filter((m) => m.role !== "system").reduce(
    (n, m) => n + _chars(m.content),
    0,
  );
  return {
    prompt_tokens: Math.ceil(chars / 4),
    completion_tokens: Math.max(1, Math.ceil(answer.length / 4)),
  };
}

/**
 * The compaction checks, per session: the stored ranges follow each other without gap or overlap
 * from the conversation's first message and end inside its transcript; each summary's messages
 * are still in the transcript, inside its range; no message is in two summaries. Returns the
 * figures (sessions compacted, compactions stored).
 */
export function verifyCompactions(obs: ChaosObservation, tally: Tally): ChaosFigure[] {
  tally.row(COMPACTION_LABELS.ranges, true);
  tally.row(COMPACTION_LABELS.twice, true);
  tally.row(COMPACTION_LABELS.lost, true);
  let sessions = 0;
  let stored = 0;
  let messages = 0;
  for (const session of obs.sessions) {
    const list = obs.compactions?.get(session.key) ?? [];
    if (!list.length) continue;
    sessions++;
    stored += list.length;
    const transcript = obs.transcripts.get(session.key) ?? [];
    const omitted = obs.omitted?.get(session.key) ?? 0;
    const covered = new Map<string, number>();
    let next = 0;
    for (const [i, c] of list.entries()) {
      messages += c.messages;
      const where = `${session.key} compaction ${i + 1} (${c.from}–${c.through})`;
      if (c.from !== next || c.through < c.from || c.through >= omitted + transcript.length) {
        tally.add(
          COMPACTION_LABELS.ranges,
          session.way,
          1,
          `${where}: expected to start at ${next}, transcript has ${omitted + transcript.length}`,
        );
      }
      next = c.through + 1;
      const slice = transcript.slice(Math.max(0, c.from - omitted), c.through - omitted + 1);
      const inRange = new Set(
        slice.filter((e) => e.role === "user").flatMap((e) =>
          [...e.content.matchAll(CHAOS_MARKERS)].map((m) => m[0])
        ),
      );
      for (const marker of _covers(c.summary)) {
        if (!inRange.has(marker)) {
          tally.add(COMPACTION_LABELS.lost, session.way, 1, `${where} summarised ${marker}`);
        }
        if (covered.has(marker)) {
          tally.add(
            COMPACTION_LABELS.twice,
            session.way,
            1,
            `${session.key}: ${marker} in compactions ${covered.get(marker)! + 1} and ${i + 1}`,
          );
        }
        covered.set(marker, i);
      }
    }
  }
  return [
    fig(COMPACTION_LABELS.sessions, sessions),
    fig(COMPACTION_LABELS.compactions, stored),
    fig("transcript messages the compactions stand for", messages),
  ];
}

/** The markers a chaos summary says it covers (`covers 3.4 3.5` → s3m4, s3m5). */
function _covers(summary: string): string[] {
  const list = /covers ([\d. ]+)/.exec(summary)?.[1] ?? "";
  return [...list.matchAll(/(\d+)\.(\d+)/g)].map((m) => `s${m[1]}m${m[2]}`);
}

/** A message content's characters: its text, its parts' texts, a hundred per image or file. */
function _chars(content: unknown): number {
  if (typeof content === "string") return content.length;
  if (!Array.isArray(content)) return 0;
  return content.reduce(
    (n: number, part: { type?: string; text?: unknown }) =>
      n + (typeof part?.text === "string" ? part.text.length : 100),
    0,
  );
}

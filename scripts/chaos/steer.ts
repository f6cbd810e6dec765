// The chaos run's steer share: messages sent as `/steer <text>` while their session's turn runs, the fake model's tool step that leaves them room, and the check that each is taken by a running turn or answered as its own, never both, never neither; Deno.
import type { FakeModelRequest, FakeModelStep } from "../../lib/testing/fake_model.ts";
import { STEER_MARK } from "../../lib/session/steers.ts";
import { isSummaryCall } from "./compaction.ts";
import { CHAOS_MARKER, type ChaosSession, type ChaosWay } from "./plan.ts";
import type { ChaosObservation } from "./observation.ts";
import { fig, type Tally } from "./tally.ts";
import type { ChaosFigure } from "./report.ts";

/**
 * The ways whose messages may be steers: platforms that hand baton the text as typed (no
 * mention, no slash-command payload) and ask no approval (a steer taken after an approval's
 * question would have the fake model ask again).
 */
export const STEER_WAYS: readonly ChaosWay[] = ["whatsapp", "line", "twilio", "teams"];

/** Share of the steer ways' messages (not a session's first, not a long one) sent as `/steer` (default 0.25). */
export const STEER_SHARE = 0.25;

/** How long after its session's message before it a steer goes out: while that turn still runs. */
const _STEER_AFTER_MS = 300;

/** The fake model's first call of a message a steer follows takes this long, then calls a tool. */
const _TOOL_STEP_MS = 1_200;

/** Row labels of the steer checks. */
export const STEER_LABELS = {
  sent: "steers sent (/steer while a turn runs)",
  taken: "steers taken by a running turn",
  own: "steers answered as their own turn",
  both: "steers taken and answered as their own turn",
  neither: "steers neither taken nor answered as their own turn",
} as const;

/**
 * Makes about `share` of the steer ways' messages (after a session's first, single-line ones)
 * `/steer <text>`, due just after the message before them, drawn from `random` (a stream of its
 * own). Returns their markers.
 */
export function planSteers(
  sessions: ChaosSession[],
  random: () => number,
  share = STEER_SHARE,
): Set<string> {
  const steers = new Set<string>();
  for (const session of sessions.filter((s) => STEER_WAYS.includes(s.way))) {
    for (const m of session.messages.slice(1)) {
      if (random() >= share || m.lines > 1) continue;
      const before = session.messages[m.k - 1];
      m.text = `/steer ${m.text}`;
      m.at = Math.min(m.at, before.at + _STEER_AFTER_MS);
      steers.add(m.marker);
    }
  }
  return steers;
}

/** The text of the last user message of `req` that is not a steer: the message its turn answers. */
export function turnText(req: FakeModelRequest): string {
  const messages: { role?: string; content?: unknown }[] = req.body?.messages ?? [];
  const own = messages.findLast((m) => m.role === "user" && !_isSteer(m));
  return own === undefined
    ? req.lastUserText
    : typeof own.content === "string"
    ? own.content
    : req.lastUserText;
}

/** The chaos markers of the steered user messages `req` carries (those the model sees mid-turn). */
export function steeredIn(req: FakeModelRequest): string[] {
  const messages: { role?: string; content?: unknown }[] = req.body?.messages ?? [];
  return messages.flatMap((m) =>
    m.role === "user" && _isSteer(m)
      ? [CHAOS_MARKER.exec(String(m.content))?.[0] ?? ""].filter((x) => x)
      : []
  );
}

/**
 * The fake model's step for the first call of a message a steer follows (s<i>m<k-1> when
 * s<i>m<k> is a steer): a slow call of a tool (an unknown one: its error is the result), so
 * that the turn has a next step for the steer to be taken at. Null for any other call.
 */
export function toolStepBeforeSteer(
  req: FakeModelRequest,
  marker: RegExpExecArray,
  steers: ReadonlySet<string>,
): FakeModelStep | null {
  if (!steers.has(`s${marker[1]}m${Number(marker[2]) + 1}`)) return null;
  const messages: { role?: string; content?: unknown }[] = req.body?.messages ?? [];
  const own = messages.findLastIndex((m) => m.role === "user" && !_isSteer(m));
  if (messages.slice(own + 1).some((m) => m.role === "tool")) return null;
  return { kind: "tool_call", name: "chaos_wait", args: {}, delayMs: _TOOL_STEP_MS };
}

/**
 * The steer checks: a steer the model saw marked as mid-turn, or that its session's transcript
 * holds so marked, was taken; one whose turn the model ran (the message it answered), or that
 * the transcript holds as a message of its own, was answered as its own turn. Each accepted
 * steer is exactly one. Returns the steers taken (the reply checks expect no reply of their own)
 * and the figures.
 */
export function verifySteers(
  obs: ChaosObservation,
  tally: Tally,
): { taken: Set<string>; figures: ChaosFigure[] } {
  const steers = obs.steers ?? new Set<string>();
  const ways = obs.ways.filter((w) => STEER_WAYS.includes(w));
  tally.row(STEER_LABELS.both, true, ways);
  tally.row(STEER_LABELS.neither, true, ways);
  const taken = new Set<string>();
  const own = new Set<string>();
  for (const req of obs.modelRequests) {
    for (const marker of steeredIn(req)) taken.add(marker);
    const marker = CHAOS_MARKER.exec(turnText(req))?.[0];
    if (marker && !isSummaryCall(req)) own.add(marker);
  }
  for (const session of obs.sessions) {
    for (const entry of obs.transcripts.get(session.key) ?? []) {
      if (entry.role !== "user") continue;
      const marker = CHAOS_MARKER.exec(entry.content)?.[0];
      if (!marker || !steers.has(marker)) continue;
      (entry.content.startsWith(STEER_MARK) ? taken : own).add(marker);
    }
  }
  let sent = 0;
  let tookCount = 0;
  let ownCount = 0;
  for (const m of obs.sessions.flatMap((s) => s.messages)) {
    if (!steers.has(m.marker)) continue;
    sent++;
    const way = m.session.way;
    const took = taken.has(m.marker);
    const ran = own.has(m.marker);
    if (took) tookCount++;
    if (ran) ownCount++;
    if (took && ran) {
      tally.add(
        STEER_LABELS.both,
        way,
        1,
        `${m.marker} (${way}) was steered in and ran its own turn`,
      );
    }
    if (!took && !ran && m.accepted) {
      tally.add(
        STEER_LABELS.neither,
        way,
        1,
        `${m.marker} (${way}) was neither steered in nor run`,
      );
    }
  }
  for (const marker of [...taken]) if (!steers.has(marker)) taken.delete(marker);
  return {
    taken,
    figures: [
      fig(STEER_LABELS.sent, sent),
      fig(STEER_LABELS.taken, tookCount),
      fig(STEER_LABELS.own, ownCount),
    ],
  };
}

/** Whether a chat message is a steered one (its text marked as arriving mid-turn). */
function _isSteer(m: { content?: unknown }): boolean {
  return typeof m.content === "string" && m.content.startsWith(STEER_MARK);
}

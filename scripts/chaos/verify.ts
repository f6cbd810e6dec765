// The chaos run's verdict: model calls, transcripts, HTTP answers, run event streams and platform replies, per way in; Deno.
import { expectedRefusal, isNewPlatformWay } from "./new_platforms.ts";
import { CHAOS_MARKER, type ChaosBadDelivery, type ChaosMessage, isPlatformWay } from "./plan.ts";
import { verifyApprovals } from "./approvals.ts";
import { verifyFlood } from "./floods.ts";
import { verifyMedia } from "./media.ts";
import { verifyFilesOut } from "./files_out.ts";
import { isSummaryCall, verifyCompactions } from "./compaction.ts";
import { STEER_MARK } from "../../lib/session/steers.ts";
import { turnText, verifySteers } from "./steer.ts";
import { JOB_TOKEN, verifyJobs } from "./jobs.ts";
import { verifyReplays } from "./replays.ts";
import { type ChaosReport, LABELS } from "./report.ts";
import { fig, Tally } from "./tally.ts";
import { partsInDoubt } from "./verify_doubt.ts";
import { verifyPlatformReplies } from "./verify_platforms.ts";
import type { ChaosObservation, ReadEvent } from "./observation.ts";

const _FINAL = new Set(["run.completed", "run.failed", "run.cancelled"]);

/** Checks what a chaos run observed; any must-be-zero figure that is not zero fails it. */
export function verifyChaos(obs: ChaosObservation): ChaosReport {
  const tally = new Tally(obs.ways, obs.problems);
  const platforms = obs.ways.filter(isPlatformWay);
  const api = obs.ways.filter((w) => w === "chat" || w === "runs");
  // Declared up front, in table order, so zeros show.
  for (
    const label of [
      "deliveries sent (retries and copies included)",
      LABELS.messages,
      LABELS.duplicates,
      LABELS.bad,
      LABELS.accepted,
      "turns run",
      LABELS.answered,
      LABELS.failures,
    ]
  ) {
    tally.row(label);
  }
  tally.row(LABELS.inDoubt, false, platforms);
  tally.row(LABELS.inDoubt5xx, false, platforms);
  tally.row(LABELS.marked, false, platforms);
  tally.row(LABELS.markedDuplicates, false, platforms);
  tally.row("platform faults injected (429 / 5xx / held)", false, []);
  tally.row("chat read-backs by baton (GitHub list, Slack history)", false, ["slack", "github"]);
  tally.row("streams dropped by the client / live subscribers", false, api);
  for (
    const label of [
      LABELS.lost,
      LABELS.unmarked,
      LABELS.twice,
      LABELS.order,
      LABELS.mixed,
      LABELS.locked,
      LABELS.bad5xx,
      LABELS.badTurns,
    ]
  ) {
    tally.row(label, true);
  }
  tally.row(LABELS.events, true, ["runs"]);
  tally.row(LABELS.badRefusal, true, obs.ways.filter(isNewPlatformWay));
  tally.row("unexpected 5xx to good input (other than 503)");

  const messages = obs.sessions.flatMap((s) => s.messages);
  const byMarker = new Map(messages.map((m) => [m.marker, m]));
  const wayOf = (index: number) => obs.sessions[index]?.way ?? obs.ways[0];
  for (const way of obs.ways) {
    const c = obs.counts[way];
    tally.add("deliveries sent (retries and copies included)", way, c.sent);
    tally.add(LABELS.duplicates, way, c.duplicatesSent);
    tally.add(LABELS.bad, way, c.badSent);
    tally.add(LABELS.bad5xx, way, c.bad5xx);
    tally.add("unexpected 5xx to good input (other than 503)", way, c.good5xx);
  }
  for (const m of messages) {
    tally.add(LABELS.messages, m.session.way);
    if (m.accepted) tally.add(LABELS.accepted, m.session.way);
  }
  // A signature or token that cannot check is refused 401, not merely left unanswered.
  for (const bad of obs.sessions.flatMap((s) => s.queue).filter((q) => !("k" in q))) {
    const { session, what, status } = bad as ChaosBadDelivery;
    const expected = expectedRefusal(session.way, what);
    if (expected !== undefined && status !== expected) {
      tally.add(LABELS.badRefusal, session.way, 1, `${session.way} ${what}: answered ${status}`);
    }
  }

  // Model calls: per session in arrival order; retries and reruns of one message are adjacent,
  // so after collapsing them any step backwards is a turn out of order.
  const turnsRun = new Set<string>();
  const failed = new Set<string>();
  const last = new Map<number, number>();
  obs.modelRequests.forEach((request, i) => {
    // A compaction's summary call quotes the session's older messages: no turn of theirs.
    if (isSummaryCall(request)) return;
    const bad = /\bbad\d+\b/.exec(request.lastUserText);
    const tag = /\[tag:s(\d+)\]/.exec(request.lastUserText);
    if (bad) {
      tally.add(
        LABELS.badTurns,
        wayOf(Number(tag?.[1] ?? -1)),
        1,
        `the model was called for ${bad[0]}`,
      );
    }
    // The message the turn answers (a steer it took mid-turn comes after it: steer.ts).
    const match = CHAOS_MARKER.exec(turnText(request));
    if (!match) return;
    const [marker, s, k] = [match[0], Number(match[1]), Number(match[2])];
    const way = wayOf(s);
    if (!turnsRun.has(marker)) tally.add("turns run", way);
    turnsRun.add(marker);
    if (obs.modelAnswered[i]) failed.delete(marker);
    else failed.add(marker);
    const tags = new Set(JSON.stringify(request.body?.messages ?? []).match(/\[tag:s\d+\]/g) ?? []);
    if (tags.size !== 1 || !tags.has(`[tag:s${s}]`)) {
      tally.add(LABELS.mixed, way, 1, `the model call for ${marker} carried ${[...tags]}`);
    }
    const previous = last.get(s) ?? -1;
    if (k < previous) {
      tally.add(LABELS.order, way, 1, `${marker}'s turn ran after s${s}m${previous}'s`);
    }
    last.set(s, Math.max(previous, k));
  });

  // Transcripts: each message's user turn at most once, in order, in its own session only.
  for (const session of obs.sessions) {
    const seen = new Set<string>();
    let highest = -1;
    for (const entry of obs.transcripts.get(session.key) ?? []) {
      // A job's turn: checked with the jobs (it was scheduled, not sent).
      if (entry.role !== "user" || JOB_TOKEN.test(entry.content)) continue;
      const marker = CHAOS_MARKER.exec(entry.content)?.[0];
      const message = marker ? byMarker.get(marker) : undefined;
      if (!message || message.session !== session) {
        tally.add(
          LABELS.mixed,
          session.way,
          1,
          `${session.key}'s transcript holds ${JSON.stringify(entry.content.slice(0, 60))}`,
        );
        continue;
      }
      if (seen.has(message.marker)) {
        tally.add(
          LABELS.twice,
          session.way,
          1,
          `${message.marker} is twice in ${session.key}'s transcript`,
        );
      }
      // A steer taken mid-turn sits in the turn that took it, before the messages queued behind
      // that turn: its own place in the order is checked with the steers (steer.ts).
      const steered = entry.content.startsWith(STEER_MARK);
      if (message.k < highest && !steered) {
        tally.add(
          LABELS.order,
          session.way,
          1,
          `${message.marker} follows s${session.index}m${highest} in the transcript`,
        );
      }
      seen.add(message.marker);
      if (!steered) highest = Math.max(highest, message.k);
    }
    if (obs.locked.has(session.key)) {
      tally.add(
        LABELS.locked,
        session.way,
        1,
        `${session.key} is still running or has messages queued`,
      );
    }
  }

  const steers = verifySteers(obs, tally);
  const repeated = verifyPlatformReplies(obs, tally, {
    failed,
    ran: turnsRun,
    steered: steers.taken,
  });
  for (const m of messages) {
    if (m.session.way === "webhook" || m.session.way === "chat") _verifyAnswers(m, tally);
    if (m.session.way === "runs") _verifyRun(m, obs.late.get(m), tally);
  }
  verifyApprovals(obs, tally);
  verifyJobs(obs, tally);
  const replayFigures = verifyReplays(obs, tally, repeated);
  const floodFigures = verifyFlood(obs.flood, tally);
  const mediaFigures = verifyMedia(obs, tally);
  const filesOutFigures = verifyFilesOut(obs, tally);
  const compactionFigures = verifyCompactions(obs, tally);

  const inDoubtPerKill = partsInDoubt(obs, tally);
  for (const way of platforms) {
    const f = obs.faults[way];
    tally.add(
      "platform faults injected (429 / 5xx / held)",
      way,
      f.r429 + f.r5xxPosted + f.r5xxNotPosted + f.held,
    );
    if (way === "slack" || way === "github") {
      tally.add("chat read-backs by baton (GitHub list, Slack history)", way, obs.lookups[way]);
    }
  }
  for (const m of messages) {
    if (m.session.way === "chat") {
      tally.add("streams dropped by the client / live subscribers", "chat", m.dropped);
    }
    if (m.session.way === "runs") {
      tally.add("streams dropped by the client / live subscribers", "runs", m.connections.length);
    }
  }

  const rows = tally.rows();
  const faults = Object.values(obs.faults);
  const sum = (f: (x: typeof faults[number]) => number) => faults.reduce((n, x) => n + f(x), 0);
  const figures = [
    fig(LABELS.kills, obs.kills.length),
    fig(
      "of which while a platform held a send open",
      obs.kills.filter((k) => k.reason.startsWith("held")).length,
    ),
    fig("held sends (platform, stored before the kill?)", obs.held.join("; ") || "none"),
    fig(LABELS.openAtKills, obs.openAtKills),
    fig("parts in doubt per kill", inDoubtPerKill.join(", ") || "–"),
    fig(
      "model faults injected (429 / 500 / stall)",
      `${obs.injectedModel.r429} / ${obs.injectedModel.r500} / ${obs.injectedModel.stall}`,
    ),
    fig(
      "platform 429s / 5xx after storing / 5xx before storing",
      `${sum((f) => f.r429)} / ${sum((f) => f.r5xxPosted)} / ${sum((f) => f.r5xxNotPosted)}`,
    ),
    ...replayFigures,
    ...floodFigures,
    ...mediaFigures,
    ...filesOutFigures,
    ...compactionFigures,
    ...steers.figures,
  ];
  const ok = rows.every((r) => !r.mustBeZero || Object.values(r.byWay).every((v) => !v));
  return {
    ok,
    seed: obs.seed,
    ways: obs.ways,
    rows: rows.filter((r) => Object.keys(r.byWay).length > 0),
    figures,
    problems: obs.problems,
    seconds: obs.seconds,
  };
}

/** Webhook and chat completions: one final answer per copy, all the same, carrying its own marker. */
function _verifyAnswers(m: ChaosMessage, tally: Tally): void {
  const way = m.session.way;
  const [first, ...others] = m.answers;
  if (!m.accepted || !first) {
    tally.add(
      LABELS.lost,
      way,
      1,
      `${m.marker} (${way}${way === "chat" ? ` ${m.chatMode}` : ""}) ${
        m.accepted ? "accepted, no final answer" : "never accepted"
      }`,
    );
    return;
  }
  // A dropped stream must not stop its turn (a turn given up after repeated kills may fail).
  if (
    m.chatMode === "disconnect" && first.reply === undefined && /cancel/.test(first.error ?? "")
  ) {
    tally.add(
      LABELS.lost,
      way,
      1,
      `${m.marker} (${way} ${m.chatMode}): the turn ended ${first.error}`,
    );
    return;
  }
  tally.add(LABELS.answered, way);
  if (first.reply === undefined) tally.add(LABELS.failures, way);
  else if (CHAOS_MARKER.exec(first.reply)?.[0] !== m.marker) {
    tally.add(
      LABELS.mixed,
      way,
      1,
      `${m.marker} was answered ${JSON.stringify(first.reply.slice(0, 60))}`,
    );
  }
  for (const other of others) {
    if (other.reply !== first.reply || other.error !== first.error) {
      tally.add(
        LABELS.unmarked,
        way,
        1,
        `${m.marker} (${way}) answered ${JSON.stringify(first.reply ?? first.error)} and ${
          JSON.stringify(other.reply ?? other.error)
        }`,
      );
    }
  }
}

/**
 * Runs: the late read must hold run.queued and run.started once, deltas, one final event last,
 * the deltas spelling the output; every live connection must have seen a prefix of it.
 */
function _verifyRun(
  m: ChaosMessage,
  late: { events: ReadEvent[]; status?: string; output?: string } | undefined,
  tally: Tally,
): void {
  if (!m.accepted || !m.runId) {
    tally.add(LABELS.lost, "runs", 1, `${m.marker} (runs) never accepted`);
    return;
  }
  const runs = new Set(m.answers.map((a) => a.reply).filter((id) => id !== undefined));
  if (runs.size > 1) {
    tally.add(
      LABELS.unmarked,
      "runs",
      runs.size - 1,
      `${m.marker}'s copies started runs ${[...runs]}`,
    );
  }
  const events = late?.events ?? [];
  const finals = events.filter((e) => _FINAL.has(e.type));
  const count = (type: string) => events.filter((e) => e.type === type).length;
  const problems: string[] = [];
  if (count("run.queued") !== 1) problems.push(`run.queued ${count("run.queued")} times`);
  if (count("run.started") !== 1) problems.push(`run.started ${count("run.started")} times`);
  if (finals.length !== 1) problems.push(`${finals.length} final events`);
  else if (events.at(-1) !== finals[0]) problems.push("events after the final one");
  const other = events.filter((e) =>
    ![
      "run.queued",
      "run.started",
      "message.delta",
      "tool.started",
      "tool.completed",
      "approval.request",
      "approval.responded",
    ].includes(e.type) && !_FINAL.has(e.type)
  );
  if (other.length) problems.push(`unexpected ${other.map((e) => e.type).join(", ")}`);
  const text = events.filter((e) => e.type === "message.delta").map((e) =>
    String(e.data.delta ?? "")
  ).join("");
  const final = finals[0];
  if (final?.type === "run.completed" && text !== String(final.data.output ?? "")) {
    problems.push(
      `deltas spell ${JSON.stringify(text.slice(0, 50))}, output ${
        JSON.stringify(String(final.data.output).slice(0, 50))
      }`,
    );
  }
  if (final && late?.status && `run.${late.status}` !== final.type) {
    problems.push(`GET says ${late.status}, the stream ${final.type}`);
  }
  const full = events.map((e) => JSON.stringify(e));
  for (const connection of m.connections) {
    let seen = connection.filter((e) => e.type !== "message").map((e) => JSON.stringify(e));
    // A connection a kill cut (no final event) may have seen the attempt that died: its events
    // are dropped when the run starts again, by design, so only what came before it must match.
    if (!connection.some((e) => _FINAL.has(e.type))) {
      const started = connection.findIndex((e) => e.type === "run.started");
      if (started >= 0) seen = seen.slice(0, started + 1);
    }
    if (seen.some((e, i) => e !== full[i])) {
      problems.push("a live subscriber saw events the late read does not have in that order");
    }
  }
  if (problems.length) {
    tally.add(LABELS.events, "runs", 1, `${m.marker} ${m.runId}: ${problems.join("; ")}`);
  }
  if (!final) {
    tally.add(LABELS.lost, "runs", 1, `${m.marker} (runs) accepted, no final event`);
    return;
  }
  tally.add(LABELS.answered, "runs");
  if (final.type !== "run.completed") tally.add(LABELS.failures, "runs");
  else if (CHAOS_MARKER.exec(String(final.data.output))?.[0] !== m.marker) {
    tally.add(
      LABELS.mixed,
      "runs",
      1,
      `${m.marker}'s run output ${JSON.stringify(String(final.data.output).slice(0, 60))}`,
    );
  }
}

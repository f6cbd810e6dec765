// The chaos run's verdict: what the fakes and transcripts saw, checked and tabulated; Deno.
import type { FakeLlm } from "../test/_support/fake_llm.ts";

/** `s<session>m<k>`: the marker every good message's text carries. */
export const CHAOS_MARKER = /\bs(\d+)m(\d+)\b/;

/** One row of the result table. */
export interface ChaosFigure {
  label: string;
  value: number;
  /** Must be zero for the run to pass. */
  mustBeZero: boolean;
}

/** What a chaos run measured; `ok` when every must-be-zero figure is zero. */
export interface ChaosReport {
  ok: boolean;
  figures: ChaosFigure[];
  /** Examples of what went wrong, for the log. */
  problems: string[];
  seconds: number;
}

/** How a session's messages arrive: the signed generic webhook or Telegram updates. */
export type ChaosKind = "webhook" | "telegram";

/** One good message of the plan and what its sender saw. */
export interface ChaosMessage {
  session: ChaosSession;
  k: number;
  marker: string;
  text: string;
  updateId: number;
  /** Extra copies: sent at once with the first ("concurrent") or after it was answered ("later"). */
  duplicate: { mode: "concurrent" | "later"; copies: number } | null;
  /** Telegram: the 200 ack; webhook: the final answer (a reply or a turn failure). */
  accepted: boolean;
  /** The generic webhook's final answers, one per copy that got one. */
  answers: { status: number; reply?: string; error?: string }[];
}

/** One malformed or badly signed delivery. */
export interface ChaosBadDelivery {
  session: ChaosSession;
  marker: string;
  what: string;
}

/** One session of the plan: its deliveries in sending order. */
export interface ChaosSession {
  index: number;
  kind: ChaosKind;
  name: string;
  /** The key of GET /v1/sessions/{key}. */
  key: string;
  chatId: number;
  queue: (ChaosMessage | ChaosBadDelivery)[];
  messages: ChaosMessage[];
}

/** Checks what a chaos run observed; every must-be-zero figure that is not zero fails it. */
export function verifyChaos(run: {
  sessions: ChaosSession[];
  model: FakeLlm;
  shown: { chatId: number; replyTo: number | undefined; text: string }[];
  transcripts: Map<string, { role: string; content: string }[]>;
  locked: Set<string>;
  counts: {
    sent: number;
    duplicatesSent: number;
    badSent: number;
    bad5xx: number;
    good5xx: number;
    kills: number;
    openAtKills: number;
    partsInDoubt: number;
  };
  injected: { model429: number; model500: number; modelStall: number; telegram429: number };
  problems: string[];
  seconds: number;
}): ChaosReport {
  const { sessions, model, shown, transcripts, problems } = run;
  const good = sessions.flatMap((s) => s.messages);
  const byMarker = new Map(good.map((m) => [m.marker, m]));
  const accepted = good.filter((m) => m.accepted);

  // Turns: the model's calls per session, in arrival order; retries and reruns of one message
  // are consecutive, so after collapsing them any step backwards is a turn out of order.
  const turnsRun = new Set<string>();
  let outOfOrder = 0;
  let badTurns = 0;
  let mixedCalls = 0;
  const lastBySession = new Map<number, number>();
  for (const request of model.requests) {
    if (/\bbad\d+\b/.test(request.lastUserText)) badTurns++;
    const match = CHAOS_MARKER.exec(request.lastUserText);
    if (!match) continue;
    const [marker, s, k] = [match[0], Number(match[1]), Number(match[2])];
    turnsRun.add(marker);
    const tags = new Set(
      JSON.stringify(request.body?.messages ?? []).match(/\[tag:s\d+\]/g) ?? [],
    );
    if (tags.size !== 1 || !tags.has(`[tag:s${s}]`)) {
      mixedCalls++;
      if (mixedCalls <= 3) problems.push(`model call for ${marker} carried tags ${[...tags]}`);
    }
    const last = lastBySession.get(s) ?? -1;
    if (k < last) {
      outOfOrder++;
      if (outOfOrder <= 5) problems.push(`${marker} ran after s${s}m${last}`);
    }
    lastBySession.set(s, Math.max(last, k));
  }

  // Replies: Telegram sends per (chat, message answered); webhook answers per message.
  const replies = new Map<string, string[]>();
  let misrouted = 0;
  for (const send of shown) {
    const session = sessions.find((s) => s.kind === "telegram" && s.chatId === send.chatId);
    const message = session?.messages[(send.replyTo ?? 0) - 1];
    if (!message) {
      misrouted++;
      problems.push(`a Telegram send answered no known message: ${send.text.slice(0, 80)}`);
      continue;
    }
    const list = replies.get(message.marker) ?? [];
    list.push(send.text);
    replies.set(message.marker, list);
  }
  for (const message of good) {
    if (message.session.kind !== "webhook" || !message.answers.length) continue;
    const first = message.answers[0];
    replies.set(message.marker, [first.reply ?? `failed: ${first.error}`]);
    for (const other of message.answers.slice(1)) {
      if (other.status !== first.status || other.reply !== first.reply) {
        replies.get(message.marker)!.push(other.reply ?? `failed: ${other.error}`);
      }
    }
  }
  let duplicates = 0;
  let failedTurns = 0;
  for (const [marker, texts] of replies) {
    if (texts.length > 1) {
      duplicates += texts.length - 1;
      problems.push(`${marker} was answered ${texts.length} times`);
    }
    for (const text of texts) {
      const apology = text.startsWith("Sorry, I could not answer that") ||
        text.startsWith("failed: ");
      if (apology) failedTurns++;
      const other = CHAOS_MARKER.exec(text)?.[0];
      if (!apology && other !== marker) {
        misrouted++;
        problems.push(`${marker} was answered with ${JSON.stringify(text.slice(0, 80))}`);
      }
    }
  }

  // Transcripts: each message's user turn at most once, in order.
  let recordedTwice = 0;
  for (const session of sessions) {
    const seen = new Set<string>();
    let last = -1;
    for (const entry of transcripts.get(session.key) ?? []) {
      if (entry.role !== "user") continue;
      const marker = CHAOS_MARKER.exec(entry.content)?.[0];
      const message = marker ? byMarker.get(marker) : undefined;
      if (!message || message.session !== session) {
        misrouted++;
        problems.push(`${session.key}'s transcript holds ${JSON.stringify(entry.content)}`);
        continue;
      }
      if (seen.has(marker!)) {
        recordedTwice++;
        problems.push(`${marker} is twice in ${session.key}'s transcript`);
      }
      if (message.k < last) {
        outOfOrder++;
        problems.push(`${marker} follows s${session.index}m${last} in the transcript`);
      }
      seen.add(marker!);
      last = Math.max(last, message.k);
    }
  }

  const lostMessages = good.filter((m) => !m.accepted || !replies.has(m.marker));
  for (const m of lostMessages.slice(0, 5)) {
    problems.push(
      `${m.marker} (${m.session.kind}) ${
        m.accepted ? "accepted, never answered" : "never accepted"
      }${turnsRun.has(m.marker) ? " (its turn ran)" : ""}`,
    );
  }
  const delivered = [...replies.values()].reduce((n, list) => n + Math.min(list.length, 1), 0);
  const figures: ChaosFigure[] = [
    {
      label: "deliveries sent (retries and duplicates included)",
      value: run.counts.sent,
      mustBeZero: false,
    },
    { label: "messages", value: good.length, mustBeZero: false },
    { label: "duplicate deliveries", value: run.counts.duplicatesSent, mustBeZero: false },
    { label: "malformed or badly signed deliveries", value: run.counts.badSent, mustBeZero: false },
    { label: "runtime kills (SIGKILL, process group)", value: run.counts.kills, mustBeZero: false },
    {
      label: "messages waiting or in a turn at the kills",
      value: run.counts.openAtKills,
      mustBeZero: false,
    },
    {
      label: "model faults injected (429 / 500 / stall)",
      value: run.injected.model429 + run.injected.model500 + run.injected.modelStall,
      mustBeZero: false,
    },
    { label: "Telegram 429s injected", value: run.injected.telegram429, mustBeZero: false },
    { label: "accepted messages", value: accepted.length, mustBeZero: false },
    { label: "turns run", value: turnsRun.size, mustBeZero: false },
    { label: "replies delivered", value: delivered, mustBeZero: false },
    { label: "of which failure notices (turn failed)", value: failedTurns, mustBeZero: false },
    {
      label: "reply sends cut off by a kill, not resent (in doubt)",
      value: run.counts.partsInDoubt,
      mustBeZero: false,
    },
    { label: "messages lost", value: lostMessages.length, mustBeZero: true },
    { label: "duplicate replies", value: duplicates, mustBeZero: true },
    { label: "turns recorded twice", value: recordedTwice, mustBeZero: true },
    { label: "out-of-order turns within a session", value: outOfOrder, mustBeZero: true },
    {
      label: "replies or model calls mixing sessions",
      value: misrouted + mixedCalls,
      mustBeZero: true,
    },
    { label: "sessions left locked", value: run.locked.size, mustBeZero: true },
    { label: "5xx answers to bad input", value: run.counts.bad5xx, mustBeZero: true },
    { label: "turns started by bad input", value: badTurns, mustBeZero: true },
    {
      label: "unexpected 5xx to good input (other than 503)",
      value: run.counts.good5xx,
      mustBeZero: false,
    },
  ];
  for (const key of run.locked) problems.push(`${key} is still running or has messages queued`);
  return {
    ok: figures.every((f) => !f.mustBeZero || f.value === 0),
    figures,
    problems,
    seconds: run.seconds,
  };
}

/** The report as a markdown table. */
export function formatChaosReport(report: ChaosReport): string {
  const rows = report.figures.map((f) =>
    `| ${f.label}${f.mustBeZero ? " (must be 0)" : ""} | ${f.value.toLocaleString("en-US")} |`
  );
  return ["| figure | value |", "|---|---|", ...rows].join("\n");
}

// The chaos run's plan: sessions over every way in, their messages, copies and bad deliveries, from one seed; Deno.
import { GITHUB_REPO } from "../../test/_support/drivers/github.ts";
import { SLACK_TEAM } from "../../test/_support/drivers/slack.ts";
import { platformAdapters } from "../../lib/platforms/mod.ts";
import { NEW_BAD_KINDS, NEW_PLATFORM_WAYS, newPlatformKey } from "./new_platforms.ts";

/** Every webhook platform's adapter, loaded. */
const ADAPTERS = await platformAdapters();

/** How the fake serves one photo's file: at once, after a pause (a kill may land in it), or 500 always. */
export type PhotoFate = "served" | "slow" | "failing";

/** One photo a message carries (its caption is the message's text). */
export interface ChaosPhoto {
  fileId: string;
  fate: PhotoFate;
  /** Slow: how long the file server waits before the bytes. */
  delayMs: number;
}

/** Every way a message reaches baton, in table order. */
export const CHAOS_WAYS = [
  "telegram",
  "slack",
  "discord",
  "github",
  ...NEW_PLATFORM_WAYS,
  "webhook",
  "chat",
  "runs",
] as const;

/** One way in: a chat platform (reply through its API) or an HTTP route that answers itself. */
export type ChaosWay = typeof CHAOS_WAYS[number];

/** The ways whose replies go out through a platform API (the outbox), so parts can be in doubt. */
export const PLATFORM_WAYS = [
  "telegram",
  "slack",
  "discord",
  "github",
  ...NEW_PLATFORM_WAYS,
] as const;

/** A platform way. */
export type PlatformWay = typeof PLATFORM_WAYS[number];

/** Whether `way` replies through a platform API. */
export function isPlatformWay(way: ChaosWay): way is PlatformWay {
  return (PLATFORM_WAYS as readonly string[]).includes(way);
}

/** `s<session>m<k>`: the marker every good message's text carries, echoed by the fake model. */
export const CHAOS_MARKER = /\bs(\d+)m(\d+)\b/;

/** Every marker in a text (a long reply carries its message's marker on each line). */
export const CHAOS_MARKERS = /\bs(\d+)m(\d+)\b/g;

/** How a chat-completions client asks: a plain request, a stream read to the end, or one it drops. */
export type ChatMode = "plain" | "stream" | "disconnect";

/**
 * How the fake user answers the approval question a message's turn asks (Telegram: a click on
 * "Approve once"; runs: `POST /v1/runs/{id}/approval`): at once, twice at once, a few seconds
 * late, or never (the question times out and counts as denied).
 */
export type ApprovalMode = "once" | "twice" | "late" | "never";

/** The ways whose messages may ask for approval (a button to click, or the runs API to answer). */
export const APPROVAL_WAYS: readonly ChaosWay[] = ["telegram", "runs"];

/** `q<session>x<k>`: the token an asking message's tool call carries, so its question names it. */
export function questionToken(m: { session: { index: number }; k: number }): string {
  return `q${m.session.index}x${m.k}`;
}

/** One good message of the plan and what its sender saw. */
export interface ChaosMessage {
  session: ChaosSession;
  k: number;
  marker: string;
  text: string;
  /** When it is due, in ms from the start of sending (a session still sends in order). */
  at: number;
  /** Telegram update id; also makes the other platforms' delivery ids unique. */
  updateId: number;
  /** Extra copies: sent at once with the first ("concurrent") or after it was answered ("later"). */
  duplicate: { mode: "concurrent" | "later"; copies: number } | null;
  /** Lines of the fake model's reply (1: a plain echo; more: a reply long enough to split). */
  lines: number;
  /** Chat completions only. */
  chatMode: ChatMode;
  /** Set when the message's turn asks for approval (its text carries `ask:<mode>`). */
  approval: ApprovalMode | null;
  /** Runs: the status of each approval answer the fake user sent. */
  approvalAnswers: number[];
  /**
   * Runs only: live subscribers. "stay" joins as the run is accepted and reads to its end,
   * "leave" drops after an event or two, "late" joins a few seconds later and reads to the end.
   */
  subscribers: ("stay" | "leave" | "late")[];
  /** Platforms: the 2xx acknowledgement; HTTP ways: a final answer (reply or turn failure). */
  accepted: boolean;
  /** Final HTTP answers, one per copy that got one (webhook, chat, runs' late read). */
  answers: { status: number; reply?: string; error?: string }[];
  /** Runs: the run id the POST answered. */
  runId?: string;
  /** Runs: what each subscriber connection saw, in order (a kill cuts one; the client rejoins). */
  connections: { type: string; data: Record<string, unknown> }[][];
  /** Chat streams dropped on purpose (the turn must still end). */
  dropped: number;
  /** Telegram: the photo it carries, its text the caption (scripts/chaos/media.ts). */
  photo?: ChaosPhoto;
  /** When it was first sent and when its (first) reply arrived, ms since the epoch. */
  sentAt?: number;
  answeredAt?: number;
}

/** One malformed, badly signed or unauthorised delivery. */
export interface ChaosBadDelivery {
  session: ChaosSession;
  marker: string;
  what: string;
  at: number;
  /** The status it was answered (none: no answer before the deadline). */
  status?: number;
}

/** One session of the plan: its deliveries in sending order. */
export interface ChaosSession {
  index: number;
  way: ChaosWay;
  /** Slack: a direct message (unthreaded replies) or a channel thread started by a mention. */
  slackKind?: "dm" | "thread";
  name: string;
  /** The key of GET /v1/sessions/{key}. */
  key: string;
  /** Telegram chat id; GitHub issue number; Discord and Slack channel number. */
  chatId: number;
  /** Slack and Discord channel id. */
  channel: string;
  /** Slack thread root ts (thread sessions). */
  threadTs?: string;
  queue: (ChaosMessage | ChaosBadDelivery)[];
  messages: ChaosMessage[];
}

/** What a plan needs to know. */
export interface PlanOptions {
  seed: number;
  messages: number;
  sessions: number;
  /** Ms over which the messages are spread (the sending pace). */
  spanMs: number;
  duplicateRate: number;
  badRate: number;
  /** Share of messages on the ways of `LONG_WAYS` whose reply is long enough to be split. */
  longRate: number;
  /** Share of Telegram and runs messages whose turn asks for approval (default 0: none). */
  approvalRate?: number;
  /** Ways to drive (default all). */
  ways?: readonly ChaosWay[];
}

/** A small seeded PRNG (mulberry32): the same seed plans the same run. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The kinds of bad delivery each way gets (each must be refused without a 5xx or a turn). */
export const BAD_KINDS: Record<ChaosWay, readonly string[]> = {
  webhook: [
    "bad signature",
    "stale timestamp",
    "unsigned",
    "malformed JSON",
    "wrong types",
    "truncated body",
  ],
  telegram: ["wrong secret", "no secret", "malformed JSON", "wrong types", "truncated body"],
  slack: [
    "bad signature",
    "stale timestamp",
    "unsigned",
    "malformed JSON",
    "wrong types",
    "truncated body",
  ],
  discord: ["bad signature", "stale timestamp", "unsigned", "malformed JSON", "wrong types"],
  github: ["bad signature", "unsigned", "malformed JSON", "wrong types", "truncated body"],
  ...NEW_BAD_KINDS,
  chat: ["no key", "wrong key", "malformed JSON", "wrong types", "bad session id"],
  runs: ["no key", "malformed JSON", "wrong types", "empty input", "unknown run", "bad run id"],
};

/** Sessions spread round-robin over the ways, messages drawn over them, all from `random`. */
export function planChaos(options: PlanOptions, random: () => number): ChaosSession[] {
  const ways = options.ways ?? CHAOS_WAYS;
  const sessions: ChaosSession[] = [];
  const tag = options.seed % 100_000;
  for (let i = 0; i < options.sessions; i++) {
    const way = ways[i % ways.length];
    const name = `chaos-${options.seed}-${i}`;
    const chatId = 1_000_000 + tag * 100 + i;
    const session: ChaosSession = {
      index: i,
      way,
      name,
      key: "",
      chatId,
      channel: "",
      queue: [],
      messages: [],
    };
    if (way === "slack") {
      // Alternate: a direct message conversation, then a channel thread.
      session.slackKind = Math.floor(i / ways.length) % 2 === 0 ? "dm" : "thread";
      session.channel = `${session.slackKind === "dm" ? "D" : "C"}${chatId}`;
    }
    if (way === "discord") session.channel = String(1_300_000_000_000_000_000n + BigInt(chatId));
    session.key = _sessionKey(session);
    sessions.push(session);
  }
  let updateId = 1;
  for (let n = 0; n < options.messages; n++) {
    const session = sessions[Math.floor(random() * sessions.length)];
    const at = Math.floor((n / options.messages) * options.spanMs);
    if (random() < options.badRate) {
      const kinds = BAD_KINDS[session.way];
      const what = kinds[Math.floor(random() * kinds.length)];
      session.queue.push({ session, marker: `bad${n}`, what, at });
      continue;
    }
    const k = session.messages.length;
    const marker = `s${session.index}m${k}`;
    const perPart = LONG_WAYS[session.way];
    const long = perPart !== undefined && random() < options.longRate;
    const lines = long ? perPart + 2 + Math.floor(random() * perPart * 1.4) : 1;
    const message: ChaosMessage = {
      session,
      k,
      marker,
      text: `[tag:s${session.index}] ${marker} ${Math.floor(random() * 1e9).toString(36)}${
        lines > 1 ? ` long:${lines}` : ""
      }`,
      at,
      updateId: updateId++,
      duplicate: random() < options.duplicateRate
        ? { mode: random() < 0.5 ? "concurrent" : "later", copies: 1 + Math.floor(random() * 2) }
        : null,
      lines,
      chatMode: "plain",
      approval: null,
      approvalAnswers: [],
      subscribers: [],
      accepted: false,
      answers: [],
      connections: [],
      dropped: 0,
    };
    if (session.way === "chat") {
      const r = random();
      message.chatMode = r < 0.4 ? "plain" : r < 0.75 ? "stream" : "disconnect";
    }
    if (session.way === "runs") {
      const count = Math.floor(random() * 3);
      message.subscribers = Array.from({ length: count }, () => {
        const r = random();
        return r < 0.4 ? "stay" : r < 0.7 ? "leave" : "late";
      });
    }
    // Drawn only where it applies, so the other ways' plans stay as they were for a seed.
    if (APPROVAL_WAYS.includes(session.way) && random() < (options.approvalRate ?? 0)) {
      const r = random();
      message.approval = r < 0.4 ? "once" : r < 0.6 ? "twice" : r < 0.85 ? "late" : "never";
      message.text += ` ask:${message.approval}`;
    }
    if (session.way === "github") message.text = `@batonbot ${message.text}`;
    if (session.way === "slack") {
      if (session.slackKind === "thread") message.text = `<@UBATON> ${message.text}`;
      if (session.slackKind === "thread" && k === 0) session.threadTs = slackTs(message);
    }
    session.messages.push(message);
    session.queue.push(message);
  }
  // A thread session must start with its root mention; a session with no message gets a key anyway.
  for (const s of sessions) if (s.slackKind === "thread") s.key = _sessionKey(s);
  return sessions;
}

/**
 * The ways whose long replies are split into parts, each with the lines of ~94 characters one more
 * than a part holds (the note's room left): 43 on Telegram, 21 on Discord, 54 on LINE, 17 on
 * Twilio, 266 on Teams. A long reply has that many and up to 1.4 times more again: two or three
 * parts, whatever the platform's limit.
 */
export const LONG_WAYS: Partial<Record<ChaosWay, number>> = Object.fromEntries(
  (["telegram", "discord", "whatsapp", "line", "twilio", "teams", "google-chat"] as const).map(
    (way) => {
      const limit = ADAPTERS.find((a) => a.name === way)!.maxMessageChars;
      return [way, Math.floor((limit - 80) / 94) + 1];
    },
  ),
);

/** The Slack `ts` of a message's event (unique: its update id). */
export function slackTs(message: ChaosMessage): string {
  return `1700000000.${String(message.updateId).padStart(6, "0")}`;
}

/** The Discord interaction id of a message (its token is derived from it). */
export function discordInteractionId(message: ChaosMessage): string {
  return String(1_200_000_000_000_000_000n + BigInt(message.updateId));
}

/**
 * The GitHub repository every GitHub session's issue lives in, the Slack workspace of every Slack
 * session: the ones the drivers' shapes name.
 */
export { GITHUB_REPO, SLACK_TEAM };

function _sessionKey(s: ChaosSession): string {
  switch (s.way) {
    case "telegram":
      return `telegram:${s.chatId}`;
    case "slack":
      return s.slackKind === "dm"
        ? `slack:${SLACK_TEAM}:${s.channel}`
        : `slack:${SLACK_TEAM}:${s.channel}:${s.threadTs ?? "none"}`;
    case "discord":
      return `discord:${s.channel}`;
    case "github":
      return `github:${GITHUB_REPO}#${s.chatId}`;
    case "whatsapp":
    case "line":
    case "twilio":
    case "teams":
    case "google-chat":
      return newPlatformKey(s);
    case "webhook":
      return `webhook:${s.name}`;
    case "chat":
    case "runs":
      return `api:${s.name}`;
  }
}

/** The lines the fake model answers a message with: its echo, or `lines` lines that each carry its marker. */
export function modelReply(lastUserText: string): string {
  const long = /\blong:(\d+)\b/.exec(lastUserText);
  const marker = CHAOS_MARKER.exec(lastUserText)?.[0];
  if (!long || !marker) return lastUserText;
  const lines: string[] = [];
  for (let j = 0; j < Number(long[1]); j++) {
    lines.push(`${marker} L${j} ${"lorem ipsum dolor sit amet ".repeat(3).trim()}`);
  }
  return lines.join("\n");
}

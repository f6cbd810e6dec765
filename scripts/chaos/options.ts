// What a chaos run takes (size, fault rates, guards taken away, sabotage) and its defaults; Deno.
import type { Sabotage } from "./fake_server.ts";
import { CHAOS_WAYS, type ChaosMessage, type ChaosWay, type PlatformWay } from "./plan.ts";

/** Size and faults of one chaos run. */
export interface ChaosOptions {
  /** Inbound messages in all, bad ones included (full run: 2,000). */
  messages: number;
  /** Sessions, spread round-robin over the ways in (full run: 60, five per way). */
  sessions: number;
  seed: number;
  /** SIGKILLs at moments drawn from the seed (default: two to five, drawn too). */
  kills?: number;
  /** One more kill while a fake platform holds a send open (default true). */
  holdKill?: boolean;
  /** Kill moments in ms from the start instead of drawn ones (the soak's steady kills). */
  killTimes?: number[];
  /** Ms over which messages are sent (default: about one a second per session, 15 s at least). */
  spanMs?: number;
  /** Share of good messages delivered two or three times (default 0.1). */
  duplicateRate?: number;
  /** Share of deliveries that are malformed, badly signed or unauthorised (default 0.05). */
  badRate?: number;
  /** Share of model calls that fail: 429 with Retry-After, 500, or a stall (default 0.2). */
  modelFailRate?: number;
  /** Share of platform sends and read-backs answered 429 (default 0.05). */
  platform429Rate?: number;
  /** Share of platform sends answered 5xx, half after storing the post (default 0.02). */
  platform5xxRate?: number;
  /** Share of messages with replies long enough to split, where they split (default 0.15). */
  longRate?: number;
  /** Share of Telegram and runs messages whose turn asks for approval (default 0.15). */
  approvalRate?: number;
  /** Runs sessions schedule one-off jobs due during the run (default true). */
  jobs?: boolean;
  /** A tenant of its own floods `/v1/jobs/{id}/run` and chat past API_TURNS_PER_MINUTE (default true; with runs). */
  flood?: boolean;
  /** Share of platform messages replayed once or twice under fresh delivery ids (default 0.1). */
  replayRate?: number;
  /** Share of Telegram messages that are photos (seeded slow and failing downloads; default 0.2). */
  mediaRate?: number;
  /** Share of Telegram messages answered with a file the fake model's reply carries (default 0.3). */
  filesOutRate?: number;
  /**
   * Takes a guard away on purpose, to show its row counts what it lets through: "turn-quota"
   * starts baton without API_TURNS_PER_MINUTE (the flood is held to it all the same),
   * "replay-ids" gives each replay a new signed message id (a new message to baton).
   */
  unguarded?: ("turn-quota" | "replay-ids")[];
  /** baton's STREAM_REPLIES: chat replies previewed as they grow (default true, baton's default). */
  streamReplies?: boolean;
  /** baton's REPLY_IN_DOUBT (default: baton's own default). */
  replyInDoubt?: "resend" | "skip";
  ways?: ChaosWay[];
  /**
   * The held send's platform, whether the fake stores it first, and when it is armed (default:
   * drawn); `upload`: only a file upload (Telegram's sendPhoto / sendDocument) is held.
   */
  hold?: { way?: PlatformWay; stored?: boolean; atMs?: number; upload?: boolean };
  /** Breaks a fake on purpose, to show the checks catch what it hides (see `Sabotage`). */
  sabotage?: Sabotage;
  /** Keep the state, log and observation.json of a failed run (default true). */
  keepOnFailure?: boolean;
  /** The run gives up after this long (default 10 min, or the span plus 5 min). */
  deadlineMs?: number;
  /** Called every `sampleMs` (default 5 s) while messages are sent: the soak's samples. */
  onSample?: (sample: { at: number; rssKiB: number | null; sessions: ChaosMessage[][] }) => void;
  sampleMs?: number;
  /** Give every run a subscriber that stays to its end (the soak times every answer). */
  followEveryRun?: boolean;
  log?: (line: string) => void;
}

/** `input` with every option it leaves out (or gives as undefined) set to its default. */
export function withDefaults(input: ChaosOptions) {
  return {
    duplicateRate: 0.1,
    badRate: 0.05,
    modelFailRate: 0.2,
    platform429Rate: 0.05,
    platform5xxRate: 0.02,
    longRate: 0.15,
    approvalRate: 0.15,
    jobs: true,
    flood: true,
    replayRate: 0.1,
    mediaRate: 0.2,
    filesOutRate: 0.3,
    // About one message a second per session: the pace a session's sender keeps up with.
    spanMs: Math.max(15_000, Math.round(input.messages / Math.max(1, input.sessions) * 1000)),
    holdKill: true,
    ways: [...CHAOS_WAYS],
    // An option given as undefined keeps its default.
    ...Object.fromEntries(Object.entries(input).filter(([, v]) => v !== undefined)) as ChaosOptions,
  };
}

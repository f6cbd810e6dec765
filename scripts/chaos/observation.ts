// What a chaos run observed, the verifier's input: its sessions' posts, model calls, transcripts, jobs, flood and replays; Deno.
import type { FakeModelRequest } from "../../lib/testing/fake_model.ts";
import type { FakeEvent, FaultCounts } from "./fake_server.ts";
import type { ChaosMessage, ChaosPhoto, ChaosSession, ChaosWay, PlatformWay } from "./plan.ts";
import type { KillRecord } from "./runtime.ts";

/** One stored compaction as GET /v1/sessions/{key} shows it. */
export interface SeenCompaction {
  from: number;
  through: number;
  messages: number;
  summary: string;
}

/** The media share of a run and what was seen of it. */
export interface ChaosMedia {
  /** The photos, by the marker of the message that carries each. */
  photos: Map<string, ChaosPhoto>;
  /** Per marker: model calls whose last user message carried the photo's own bytes. */
  seen: Map<string, number>;
  /** Model calls that carried an image that is not their message's photo. */
  wrong: string[];
  /** Per file id: getFile calls and file downloads answered with the bytes. */
  asked: Map<string, { getFile: number; served: number }>;
}

/** One upload the fake Telegram stored (sendPhoto or sendDocument). */
export interface SentFile {
  /** The chat it went to (`chat_id`). */
  chat: string;
  method: string;
  /** The message whose file its bytes are (their tail names it), if any. */
  marker?: string;
  /** Its bytes are exactly that message's file. */
  exact: boolean;
  /** Its caption began with baton's resend note (a part in doubt sent again). */
  marked: boolean;
  /** When the fake stored it (ms since the epoch). */
  at: number;
}

/** The files-out share of a run and what the fake Telegram was sent of it. */
export interface ChaosFilesOut {
  /** The markers of the messages whose reply carries a file. */
  markers: Set<string>;
  /** Every upload the fake stored, in arrival order. */
  sent: SentFile[];
  /** Model answers that carried a file (a turn rerun after a kill answers again). */
  answered: number;
}

/** A run event as a subscriber read it. */
export interface ReadEvent {
  type: string;
  data: Record<string, unknown>;
}

/** Deliveries one way sent and how bad ones were answered. */
export interface WayCounts {
  sent: number;
  duplicatesSent: number;
  badSent: number;
  bad5xx: number;
  good5xx: number;
}

/** Everything a chaos run saw from outside, for `verifyChaos`. */
export interface ChaosObservation {
  seed: number;
  ways: ChaosWay[];
  sessions: ChaosSession[];
  /** The fake model's calls, and per call whether it answered (else 429, 500 or a stall). */
  modelRequests: FakeModelRequest[];
  modelAnswered: boolean[];
  injectedModel: { r429: number; r500: number; stall: number };
  shown: ShownPost[];
  faults: Record<PlatformWay, FaultCounts>;
  lookups: Record<PlatformWay, number>;
  /** Every request each fake platform got and its fate (for observation.json). */
  fakeEvents: Record<string, FakeEvent[]>;
  transcripts: Map<string, { role: string; content: string }[]>;
  /** Per session key: the compactions GET /v1/sessions/{key} showed, and the messages it left out. */
  compactions?: Map<string, SeenCompaction[]>;
  omitted?: Map<string, number>;
  /** The markers of the messages sent as `/steer <text>` (steer.ts). */
  steers?: Set<string>;
  locked: Set<string>;
  /** Runs: a subscriber's read of the whole stream after the run, and GET /v1/runs/{id}. */
  late: Map<ChaosMessage, { events: ReadEvent[]; status?: string; output?: string }>;
  counts: Record<ChaosWay, WayCounts>;
  /** Jobs the runs sessions scheduled, with what was found of them after the run. */
  jobs: ChaosJob[];
  /** The flood tenant's calls past its quota and the turns the model saw of them (none: no flood). */
  flood?: ChaosFlood;
  /** The photos some Telegram messages carried and what the model saw of them (none: no media). */
  media?: ChaosMedia;
  /** The Telegram replies that carry a file and the uploads the fake stored (none: no files out). */
  filesOut?: ChaosFilesOut;
  /** Platform deliveries sent again under fresh delivery ids (none: no replays). */
  replays?: ChaosReplay[];
  kills: KillRecord[];
  openAtKills: number;
  /** What each deliberately held send was. */
  held: string[];
  problems: string[];
  seconds: number;
}

/** One text a chat shows, in the order the platform stored them. */
export interface ShownPost {
  way: PlatformWay;
  /** The chat: Telegram chat id, Slack "channel" or "channel/thread_ts", GitHub issue, Discord token. */
  chat: string;
  text: string;
  /** When the platform stored it (ms since the epoch). */
  at: number;
  /** Telegram: the message answered (first parts only). */
  replyTo?: number;
  /**
   * The platform's id of what it answers (WhatsApp's quoted message, the Teams activity replied
   * to, the Google Chat thread): see `replyLinkOf`.
   */
  replyToId?: string;
  /**
   * An edit that makes a message the reply (Discord's deferred `@original`, a Slack preview
   * edited into its reply part): a repeat replaces, never adds.
   */
  edit?: boolean;
  /** Slack: the ts of the edited message (a thread holds one per previewed reply). */
  message?: string;
  /** The part name baton carried (GitHub comment marker, Slack metadata), when it did. */
  part?: string;
  /** Telegram: the callback data of the inline buttons under it (an approval question). */
  buttons?: string[];
  /** Telegram: the id the platform gave it (a click on its buttons names it). */
  messageId?: number;
}

/** One job of the plan and what was found of it after the run. */
export interface ChaosJob {
  session: ChaosSession;
  token: string;
  /** When it is created, in ms from the start of sending; it is due `inSeconds` later. */
  at: number;
  inSeconds: number;
  /** The id POST /v1/jobs answered (or the job found by its token after a lost answer). */
  id?: string;
  /** After the run: the jobs whose prompt carries the token, with their runs. */
  found?: { status: string; runs: { status: string; run_id: string | null }[] }[];
}

/** One burst: this many run calls and chat calls, all at once, at `at` ms from the start. */
export interface FloodBurst {
  at: number;
  runs: number;
  chats: number;
}

/** The flood of one run, and what was seen of it. */
export interface ChaosFlood {
  /** API_TURNS_PER_MINUTE baton runs with: above the plan's own API turns, so only the flood meets it. */
  quota: number;
  /** baton was started without the quota on purpose (the checks still hold it to `quota`). */
  unguarded: boolean;
  /** The tenant's sessions: each holds one job the run calls target. */
  sessions: { name: string; tag: string; jobId?: string }[];
  bursts: FloodBurst[];
  /** Every call: its route, last answer (0: none, a kill or a timeout) and resends after no answer. */
  calls: { kind: "run" | "chat"; status: number; resent?: number }[];
  /** Each distinct turn the model saw (a retry or a rerun after a kill is the same turn): its first call. */
  turns: Map<string, { at: number; kind: "run" | "chat"; n: number }>;
  /** After the run: the user turns in the tenant's transcripts (null: a session did not answer). */
  transcribed?: number | null;
}

/** One replay of a good message: due `at` ms from the start, and only once the message was accepted. */
export interface ChaosReplay {
  message: ChaosMessage;
  at: number;
  /** Which replay of its message (1, 2): Slack's X-Slack-Retry-Num. */
  n: number;
  /** When it went out (ms since the epoch) and how it was answered (none: no answer by the deadline). */
  sentAt?: number;
  status?: number;
}

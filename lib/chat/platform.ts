// The shape every chat-platform adapter fills (verify, parse, send, presence); runtime-neutral.
import type { z } from "zod";
import type { ContextFields } from "../runtime/mod.ts";
import type { FetchedMedia, MediaPart, MediaRef, PlatformMedia } from "../media/mod.ts";
import type { Sender } from "./sender.ts";
import type { ClickAnswer } from "./session_commands.ts";

/** The deployment's settings as adapters read them (vars and secrets). */
export type PlatformEnv = Readonly<Record<string, string | undefined>>;

/** The raw request an adapter verifies: headers, the exact body bytes and the URL it was sent to. */
export interface RawRequest {
  headers: Headers;
  body: Uint8Array;
  /**
   * The URL the platform sent the request to, with its query: `PUBLIC_URL` (origin and any path
   * prefix) joined to the request's path where that is set, else the URL the Worker saw. Signed
   * by platforms that sign the URL (Twilio).
   */
  url: string;
  /** Seconds since the epoch, for timestamp windows. */
  nowSeconds: number;
}

/** Where and how a reply goes back; platform-specific, JSON-serialisable, stored with the message. */
export interface ReplyTarget {
  platform: string;
  [key: string]: unknown;
}

/**
 * The turn context an adapter binds to an event: complete as parsed — the platform (as turns and
 * logs name it) and the session key are always set, never added on the way.
 */
export type EventContext = Omit<ContextFields, "async_delivery"> & {
  platform: string;
  session_key: string;
};

/**
 * A chat message that starts a turn, complete as the adapter parsed it: the route hands it to
 * the access gate and then, with the gate's verdict, to its session (`chatInbound`) untouched.
 * `T` is the adapter's reply target.
 */
export interface PlatformMessage<T extends ReplyTarget = ReplyTarget> {
  sessionKey: string;
  /** The platform's delivery id: a repeat never starts a second turn. */
  deliveryKey: string;
  /**
   * How long `deliveryKey` is remembered where the inbox's day is too short: as long as the same
   * signed delivery may arrive again and verify — the platform's own retries inside its replay
   * horizon, or, for a platform that signs no time at all (Twilio), a chosen bound. Unset: the
   * inbox's day (`DEDUP_MS`).
   */
  keyMemoryMs?: number;
  /** The text, or the caption of its media ("" for media without one). */
  text: string;
  /**
   * Its media as the platform announced them (file ids, kinds, stated names, types and sizes):
   * never downloaded while parsing — the acknowledgement does not wait — but inside the turn,
   * by the adapter's `fetchMedia`.
   */
  media?: PlatformMedia[];
  /**
   * The album it is one piece of (Telegram's `media_group_id`): the pieces of one album make one
   * turn.
   */
  album?: string;
  context: EventContext;
  reply: T;
  /** Who sent it, for access control: the platform's own identity. */
  sender: Sender;
}

/**
 * A button a notice carries (an approval question's once / session / always / deny). Clicked, the
 * platform hands `data` back and the adapter parses it as a `PlatformChoice`.
 */
export interface Choice {
  label: string;
  /** What a click hands back: starts with `CHOICE_DATA_PREFIX`, at most 64 bytes (Telegram's limit). */
  data: string;
  /** How the platform may colour it: the safe default, or a refusal. */
  style?: "primary" | "danger";
}

/** Every `Choice.data` baton issues starts with this: a click on anything else is not baton's. */
export const CHOICE_DATA_PREFIX = "bt:";

/** Whether `data`, handed back by a click, can be one of baton's choices. */
export function isChoiceData(data: unknown): data is string {
  return typeof data === "string" && data.startsWith(CHOICE_DATA_PREFIX) &&
    new TextEncoder().encode(data).length <= 64;
}

/** A click on a notice's choice: who clicked, in which session, and what. */
export interface PlatformChoice<T extends ReplyTarget = ReplyTarget> {
  sessionKey: string;
  /** The platform's id of this click: repeats are harmless (a second answer changes nothing). */
  deliveryKey: string;
  /** The clicked choice's `Choice.data`. */
  data: string;
  /** The clicker as a message's sender would be bound (platform, session, user id and name, chat). */
  context: EventContext;
  /** Where a notice to the clicker's chat goes (access refusals). */
  reply: T;
  /** The clicker, for access control exactly as a message's sender. */
  sender: Sender;
  /** What the adapter needs to answer the click itself (Telegram's callback query id). */
  handle?: string;
}

/**
 * What a webhook answers: `body` as JSON, or, with `contentType`, `body` (a string) sent as it is —
 * TwiML for Twilio, the echoed challenge of WhatsApp's handshake.
 */
export interface WebhookAnswer {
  status: number;
  body: unknown;
  contentType?: string;
}

/** What a verified delivery asks of baton. */
export type Ingress<T extends ReplyTarget = ReplyTarget> =
  /** Answer at once and start nothing: handshakes, and events not for the bot (200). */
  | ({ kind: "respond" } & WebhookAnswer)
  /** Store the message, then acknowledge with `ack` (default: the adapter's `acknowledgement`). */
  | { kind: "message"; message: PlatformMessage<T>; ack?: WebhookAnswer }
  /**
   * Several messages in one delivery (LINE's `events`, WhatsApp's `messages`): each is gated and
   * stored in order, then the delivery is acknowledged once. A refused sender's message is left
   * out (their notice goes out as for a single message); the others still run. `choices`: clicks
   * in the same delivery (a LINE postback among its events), each answered first as a lone
   * `choice` would be; the delivery's acknowledgement is its answer.
   */
  | {
    kind: "messages";
    messages: PlatformMessage<T>[];
    choices?: PlatformChoice<T>[];
    ack?: WebhookAnswer;
  }
  /** A click on one of baton's choices: answer it in its session, then `answerChoice`. */
  | { kind: "choice"; choice: PlatformChoice<T> }
  /**
   * A message whose delivery is answered with its turn's outcome (the generic webhook): gated and
   * run like a message, then answered 200 `{...echo, reply}`, or `{...echo, error}` with the
   * failure's status. It has no reply target: nothing is sent to it, and an access refusal is the
   * delivery's 403.
   */
  | {
    kind: "run";
    message: Omit<PlatformMessage<T>, "reply">;
    echo: Record<string, unknown>;
    /**
     * Files the delivery carries inline (the generic webhook's `attachments[].data`, as base64
     * data URLs): checked and stored in `MEDIA` by the route before the message is stored — a
     * refused one is the delivery's 400 — and kept as references with it.
     */
    files?: MediaPart[];
  };

/** One part of a stored text as the outbox sends it. */
export interface PartSend {
  index: number;
  count: number;
  /**
   * A name unique to this part, carried invisibly where the platform can carry one (a GitHub
   * comment marker, Slack message metadata), so that a send left in doubt can be looked for.
   */
  marker?: string;
  /**
   * Called synchronously just before the request leaves (every time it does): the outbox marks
   * the part attempted here, so nothing but the request itself lies between the mark and the send.
   */
  leaving?: () => void;
  /**
   * Buttons to show with this part (the last part of a notice that asks). An adapter without
   * buttons leaves them out: the text names the same choices as commands.
   */
  choices?: readonly Choice[];
  /**
   * The preview this part replaces (its `PreviewResult` handle): the first part of a reply whose
   * turn previewed it as a message of its own (Slack). The adapter edits that message into the
   * part instead of posting one, so the finished message is the reply, and a repeat of the edit
   * cannot show twice.
   */
  replaces?: string;
  /**
   * The file this part sends (a tool's, stored in `MEDIA`); its text is the caption. The reply
   * channel reads the bytes and hands them to the adapter's `sendFile`, or sends a link or a note
   * where the adapter has none.
   */
  file?: MediaRef;
}

/**
 * A file as an adapter's `sendFile` gets it: its stored reference (type by content, size, name),
 * its bytes, and a signed, expiring link to it (`GET /media/{id}`) where the deployment can make
 * one (`PUBLIC_URL` and `MEDIA_URL_SECRET`), for platforms that fetch media by URL.
 */
export interface OutgoingFile extends MediaRef {
  /** The file's bytes; empty for an adapter that is `filesByLink` (it never reads them). */
  bytes: Uint8Array;
  url: string | null;
}

/**
 * The leading note of a part resent after a send that may or may not have arrived, where the
 * platform offers no way to look (`REPLY_IN_DOUBT=resend`): a repeat shows itself as one.
 */
export const RESEND_NOTE =
  "↻ Resent after an interruption — this may repeat an earlier message.\n\n";

/** What to do with a part whose earlier send was cut off before its answer was recorded. */
export type InDoubt =
  /** The platform shows it arrived: record it sent. */
  | "delivered"
  /** Send it again as it is: it did not arrive, or a repeat cannot show twice. */
  | "resend"
  /** Send it again behind `RESEND_NOTE`: nobody can tell whether it arrived. */
  | "resend_marked"
  /** Leave it (`REPLY_IN_DOUBT=skip`): a text missing rather than maybe shown twice. */
  | "skip";

/** How one send went. */
export type SendResult =
  | { ok: true }
  /**
   * `retryAfterMs` when the platform said how long to wait (429); `retryable` only where a resend
   * cannot post twice; `uncertain` when the request may have been carried out all the same (a 5xx,
   * a connection lost after the request left): the part is then in doubt, as after a crash.
   */
  | {
    ok: false;
    status: number;
    retryable: boolean;
    retryAfterMs?: number;
    uncertain?: boolean;
    message: string;
  };

/**
 * One chat platform: verify a delivery, parse it, send replies. One file per platform in
 * lib/platforms/. `T` is its reply target, checked against `replyTarget` by `replyChannel` before
 * `send` sees it; the table of all adapters is `PlatformAdapter[]` (T = ReplyTarget).
 */
export interface PlatformAdapter<T extends ReplyTarget = ReplyTarget> {
  /** Route segment and context platform name: `POST /webhooks/<name>`. */
  readonly name: string;
  /** Env names that must be set; without them the route refuses every request. */
  readonly requiredEnv: readonly string[];
  /** Longest message the platform accepts, in characters; longer replies are split. */
  readonly maxMessageChars: number;
  /** Whether the channel could deliver something after a turn has ended (none can in this bundle). */
  readonly asyncDelivery: false;
  /** The reply target `parse` stores and `send` takes; stored targets are checked against it before each send. */
  readonly replyTarget: z.ZodType<T>;
  /**
   * Checks the signature or secret over the raw bytes (constant time); a string is the refusal
   * reason (401). `Unverifiable`: the request could not be checked at all (the platform's signing
   * keys could not be fetched), answered 503 so that the platform delivers it again later.
   */
  verify(request: RawRequest, env: PlatformEnv): Promise<string | Unverifiable | null>;
  /** Turns a verified delivery into what to do. Throws `PayloadError` for a malformed payload (400). */
  parse(request: RawRequest, env: PlatformEnv): Ingress<T>;
  /**
   * How every delivery that starts nothing, or is stored, is acknowledged where the platform wants
   * more than 200 `{"ok":true}` (Twilio's empty TwiML `<Response/>`): parse's ignores, access
   * refusals and message acks alike.
   */
  readonly acknowledgement?: WebhookAnswer;
  /**
   * Answers a `GET` on the webhook's URL (WhatsApp's subscription handshake: `hub.mode`,
   * `hub.verify_token`, `hub.challenge`), given the query. Without it, a GET is 404. Only called
   * once `requiredEnv` is set.
   */
  handshake?(query: URLSearchParams, env: PlatformEnv): Promise<WebhookAnswer>;
  /**
   * Where the platform expects the answer to a delivery to carry a notice (Discord's interaction
   * response, seen only by the sender), the response body that does; without it, notices to a
   * sender who may not start a turn (a pairing code, a quota notice) are sent with `send`.
   */
  inlineNotice?(text: string): { status: number; body: unknown };
  /**
   * Answers a click as it was judged (`answer`: the session's verdict, or `not_allowed` from the
   * access gate), worded by `approvalClickText` and seen by the clicker alone where the platform
   * allows; returns the webhook's response. Never throws.
   */
  answerChoice?(
    choice: PlatformChoice<T>,
    answer: ClickAnswer,
    env: PlatformEnv,
  ): Promise<{ status: number; body: unknown }>;
  /**
   * Sends part `index` (of `count`) of a reply to a valid target, carrying `part.marker` where the
   * platform can and calling `part.leaving` just before the request leaves. Network errors are
   * returned, never thrown.
   */
  send(target: T, text: string, part: PartSend, env: PlatformEnv): Promise<SendResult>;
  /**
   * Sends a reply part that is a file as the platform's own media (Telegram's `sendPhoto` for an
   * image, `sendDocument` otherwise), `caption` under it ("" for none), exactly like `send`:
   * `part.leaving` just before the request leaves, errors returned, never thrown. Without it, a
   * file part is sent with `send` as a link to the file, or a note naming it.
   */
  sendFile?(
    target: T,
    file: OutgoingFile,
    caption: string,
    part: PartSend,
    env: PlatformEnv,
  ): Promise<SendResult>;
  /**
   * `sendFile` sends a file by its signed link alone (the platform fetches `OutgoingFile.url`) and
   * never reads `bytes`: the reply channel then only checks the file is still in MEDIA, and hands
   * it over with no bytes read (lib/chat/file_part.ts).
   */
  filesByLink?: true;
  /**
   * Where the platform can be read back: whether a part carrying `marker` was posted to the target
   * at or after `sinceMs` — true found, false absent, null when the platform could not be asked.
   */
  findPart?(target: T, marker: string, sinceMs: number, env: PlatformEnv): Promise<boolean | null>;
  /**
   * Fetches a medium `parse` announced (`PlatformMessage.media`) with the credentials the adapter
   * has (Telegram: `getFile`, then the download with the bot token), inside the turn: at most
   * `maxBytes` read, stopped by `signal`. A failure is answered as `{ ok: false, why }` naming
   * no URL or token, never thrown (but the signal's abort).
   */
  fetchMedia?(
    item: PlatformMedia,
    env: PlatformEnv,
    options: { signal: AbortSignal; maxBytes: number },
  ): Promise<FetchedMedia>;
  /** Whether sending part `index` again can never show it twice (Discord's edit of `@original`). */
  idempotentPart?(index: number): boolean;
  /**
   * Shows that the bot is working on an answer (Telegram's `typing` action, Slack's assistant
   * status); lasts a few seconds, renewed while the turn runs. False: not here, do not renew.
   */
  typing?(target: T, env: PlatformEnv): Promise<boolean>;
  /** How often `typing` is renewed while a turn runs (default 4 s: Telegram's lasts about five). */
  readonly typingEveryMs?: number;
  /**
   * Shows `text`, the reply so far, as a preview that the final reply replaces (Telegram's draft
   * in a private chat, Discord's `@original`, a Slack message of its own); `draft` names the turn,
   * `handle` the preview message an earlier update created (see `PreviewResult`). Never the
   * exactly-once record: the final reply is sent through the outbox as always.
   */
  preview?(
    target: T,
    text: string,
    draft: number,
    env: PlatformEnv,
    handle?: string,
  ): Promise<PreviewResult>;
  /**
   * Ends a preview left by a turn that ended without a reply: replaced with `text` (stopped), or
   * removed where it is a message of its own (`text` null: the turn paused to ask, and its reply
   * will follow the question). `handle` names that message.
   */
  endPreview?(target: T, text: string | null, env: PlatformEnv, handle?: string): Promise<void>;
}

/**
 * What became of a preview update: shown; shown as a message of its own, named `handle`, which
 * later updates edit and the reply's first part replaces (`PartSend.replaces`); not possible for
 * this target; a 429 (previews stop); failed.
 */
export type PreviewResult =
  | "shown"
  | { handle: string }
  | "unsupported"
  | "rate_limited"
  | "failed";

/**
 * A delivery that could not be verified either way, through no fault of its sender (the keys to
 * check it against are out of reach): neither accepted nor refused, but answered 503 and retried.
 */
export interface Unverifiable {
  unavailable: string;
}

// The one JSON decoder lives below the adapters' contract; adapters take it from here.
export { parseJsonBody, PayloadError } from "../runtime/mod.ts";

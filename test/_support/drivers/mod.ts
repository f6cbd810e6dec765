// One driver per chat platform (shape a delivery as the platform does, sign it as the platform does, read what the fake platform received) and their table; Deno (workerd tests, fuzzer, chaos run).
import type { FakePlatform, PlatformAnswer, PlatformCall } from "../fake_platform.ts";
import { discordDriver } from "./discord.ts";
import { genericDriver } from "./generic.ts";
import { githubDriver } from "./github.ts";
import { googleChatDriver } from "./google_chat.ts";
import { lineDriver } from "./line.ts";
import { slackDriver } from "./slack.ts";
import { teamsDriver } from "./teams.ts";
import { telegramDriver } from "./telegram.ts";
import { twilioDriver } from "./twilio.ts";
import { whatsappDriver } from "./whatsapp.ts";

// The drivers' shared wire helpers live apart, so a driver imported first meets no import cycle.
export { encode, seconds, utf8 } from "./wire.ts";

/** One webhook request as the platform would send it: its headers and its raw body. */
export interface Delivery {
  headers: Record<string, string>;
  body: string;
  /** The platform's id of the message carried (what a reply quotes, what session_info reports). */
  id: string;
}

/** One message a person sends: in `chat` (a driver's `newChat()`), with `text`. */
export interface Message {
  chat: string;
  text: string;
  /** The platform's message id; a fresh one when left out. */
  id?: string;
}

/**
 * One message as a driver's `shape` takes it: every field a caller may choose. The workerd tests
 * give chat, text and id; the fuzzer and the chaos run also choose who sends it and where.
 */
export interface Post {
  /** Where it is sent, in the platform's id format (a driver's `newChat()` is one). */
  chat: string;
  /** Its text, verbatim (a mention is added only when `mention` asks for one). */
  text: string;
  /** The platform's message id. */
  id: string;
  /** Who sends it: the platform's user id and display name; the driver's own person when left out. */
  from?: { id: string; name: string };
  /** Sent in a group conversation (a channel, group chat, room) rather than a direct one. */
  group?: boolean;
  /** The text starts with an @mention of the bot in the platform's syntax (and its metadata). */
  mention?: boolean;
  /** The thread it is in, where the platform threads (Slack's thread_ts, a Chat thread's name). */
  thread?: string;
  /** The platform's id of the delivery where it has one apart from the message's. */
  event?: string;
  /** Teams only: the Bot Connector the conversation lives on; the fake platform's when left out. */
  serviceUrl?: string;
}

/** What a signer is told besides the body and the credentials. */
export interface SignOptions {
  /**
   * When the platform signs (unix seconds, or any string a timestamp header may carry): the
   * timestamp a signature covers, a token's issue time. Now when left out.
   */
  at?: number | string;
  /** The delivery's id where the scheme signs or sends one (Standard Webhooks, GitHub). */
  id?: string;
}

/** A reply the fake platform received, as a driver reads it from the call. */
export interface Sent {
  /** The chat it went to, as `newChat()` named it. */
  chat: string;
  /** Its visible text (without invisible part markers). */
  text: string;
  /** The call's own idempotency key where the platform has one (a LINE retry key, a Chat message id). */
  key?: string;
}

/** What a good acknowledgement of a message delivery is. */
export type Ack =
  | { json: unknown }
  | { contentType: string; text: string }
  /** The webhook answers with the turn's reply itself (the generic webhook): `{session, reply}`. */
  | "reply";

/**
 * How a test talks to one platform: shape and sign its deliveries, and read baton's replies back
 * from the fake platform. Drivers keep no state but counters and the fake platform they were
 * pointed at (`vars`). `C` is what the platform signs with (a secret, a key pair, a token key):
 * the driver's own test credentials serve the workerd tests and the fuzzer, the chaos run passes
 * its per-run ones.
 */
export interface Driver<C = unknown> {
  /** The adapter's name, as in `/webhooks/<name>` and test names. */
  name: string;
  /** The webhook route. */
  path: string;
  /**
   * Points the driver at `platform` (its origin, the key sets it serves) and returns the settings
   * this platform needs in baton: secrets and ids (the API roots come from the rig). Without a
   * platform it only returns the settings: a Worker started before its fake platform (the
   * per-platform files' `sharedBaton`) is configured with them, and a test points the driver at
   * the platform before its first delivery.
   */
  vars(platform?: FakePlatform): Record<string, string>;
  /** The settings without which the webhook is refused 403 (each alone). */
  secretVars: readonly string[];
  /** A chat no other test uses (the platform's id format), for fresh state per scenario. */
  newChat(): string;
  /** The session key baton gives `chat`. */
  session(chat: string): string;
  /** What the model reads of a message whose text is `text` (GitHub keeps the @mention). */
  turnText(text: string): string;
  /**
   * The platform's payload of `post`, typed with the platform's own types: the one place this
   * platform's message shape is written. Synchronous, so fast-check generators can call it.
   */
  shape(post: Post): object;
  /** The payload is sent as a form of its fields (Twilio), not as JSON. */
  form?: true;
  /** The credentials the driver's `vars` configure baton with. */
  credentials: C;
  /** Credentials of the same kind that baton does not know: what a forger signs with. */
  stranger: C;
  /**
   * The headers the platform sends `body` with, signed with `credentials` by the platform's own
   * package or its documented scheme: content type, signature, timestamp, ids.
   */
  sign(
    body: string | Uint8Array,
    credentials: C,
    options?: SignOptions,
  ): Promise<Record<string, string>>;
  /** `message` signed and shaped as the platform sends it. */
  message(message: Message): Promise<Delivery>;
  /** Every way a forger gets `delivery` wrong: another key, a malformed or missing signature… */
  tamper(delivery: Delivery): Promise<Delivery[]>;
  /** The same delivery as the platform sends it again (marked a redelivery where it marks one). */
  redeliver(delivery: Delivery): Promise<Delivery>;
  /** A good acknowledgement. */
  ack: Ack;
  /** The reply a fake platform call carries, or undefined when the call is not this platform's. */
  sent(call: PlatformCall): Sent | undefined;
  /** The most characters one reply part may have on this platform. */
  partLimit: number;
  /** The platform's answer to a reply sent too fast (429, with its Retry-After of 1 s). */
  rateLimited(): PlatformAnswer;
  /** The platform's answer to a reply it took (when the fake's default is not its shape). */
  accepted?(): PlatformAnswer;
  /** What session_info reports for `message` delivered as `delivery`. */
  context(message: Message, delivery: Delivery): Record<string, unknown>;
  /** Asserts the platform's own request shape of the one reply to `delivery` (headers, body). */
  expectReply?(call: PlatformCall, delivery: Delivery, platform: FakePlatform): void;
  /** Asserts the platform's own rules for a reply sent as several `calls` (quotes, ids…). */
  expectParts?(calls: PlatformCall[], delivery: Delivery): void;
}

/** Every platform's driver, the generic webhook's last. */
export const DRIVERS: readonly Driver[] = [
  telegramDriver,
  slackDriver,
  discordDriver,
  githubDriver,
  lineDriver,
  twilioDriver,
  teamsDriver,
  googleChatDriver,
  whatsappDriver,
  genericDriver,
];

/** The calls of `platform` that carry replies of `driver` into `chat`, in arrival order. */
export function replyCalls(driver: Driver, platform: FakePlatform, chat: string): PlatformCall[] {
  return platform.calls.filter((call) => driver.sent(call)?.chat === chat);
}

/** The texts `platform` received from baton for `chat` of `driver`, in order. */
export function replies(driver: Driver, platform: FakePlatform, chat: string): string[] {
  return replyCalls(driver, platform, chat).map((call) => driver.sent(call)!.text);
}

/** POSTs `delivery` to `driver`'s route at `origin` (a Worker's `fetch` when given one). */
export function deliver(
  fetchPath: (path: string, init: RequestInit) => Promise<Response>,
  driver: Driver,
  delivery: Delivery,
): Promise<Response> {
  return fetchPath(driver.path, { method: "POST", headers: delivery.headers, body: delivery.body });
}

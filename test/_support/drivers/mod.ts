// One driver per chat platform (sign a delivery in the platform's shape, read what the fake platform received) and their table; Deno (tests, fuzzer, chaos run).
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
 * How a test talks to one platform: sign and shape its deliveries, and read baton's replies back
 * from the fake platform. Drivers keep no state but counters and the fake platform they were
 * pointed at (`vars`).
 */
export interface Driver {
  /** The adapter's name, as in `/webhooks/<name>` and test names. */
  name: string;
  /** The webhook route. */
  path: string;
  /**
   * Points the driver at `platform` (its origin, the key sets it serves) and returns the settings
   * this platform needs in baton: secrets and ids (the API roots come from the rig).
   */
  vars(platform: FakePlatform): Record<string, string>;
  /** The settings without which the webhook is refused 403 (each alone). */
  secretVars: readonly string[];
  /** A chat no other test uses (the platform's id format), for fresh state per scenario. */
  newChat(): string;
  /** The session key baton gives `chat`. */
  session(chat: string): string;
  /** What the model reads of a message whose text is `text` (GitHub keeps the @mention). */
  turnText(text: string): string;
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

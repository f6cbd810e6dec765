// The shape every chat-platform adapter fills (verify, parse, send) and the reply deliverer over them; runtime-neutral.
import type { z } from "zod";
import type { Sender } from "./access/access_policy.ts";
import type { ContextFields } from "./session_context.ts";
import { splitMessage } from "./split_message.ts";

/** The deployment's settings as adapters read them (vars and secrets). */
export type PlatformEnv = Readonly<Record<string, string | undefined>>;

/** The raw request an adapter verifies: headers and the exact body bytes. */
export interface RawRequest {
  headers: Headers;
  body: Uint8Array;
  /** Seconds since the epoch, for timestamp windows. */
  nowSeconds: number;
}

/** Where and how a reply goes back; platform-specific, JSON-serialisable, stored with the message. */
export interface ReplyTarget {
  platform: string;
  [key: string]: unknown;
}

/** A chat message that starts a turn; `T` is the adapter's reply target. */
export interface PlatformMessage<T extends ReplyTarget = ReplyTarget> {
  sessionKey: string;
  /** The platform's delivery id: a repeat never starts a second turn. */
  deliveryKey: string;
  text: string;
  context: Omit<ContextFields, "async_delivery">;
  reply: T;
  /** Who sent it, for access control (the route adds the platform). */
  sender: Omit<Sender, "platform">;
}

/** What a verified delivery asks of baton. */
export type Ingress<T extends ReplyTarget = ReplyTarget> =
  /** Answer at once and start nothing: handshakes, and events not for the bot (200). */
  | { kind: "respond"; status: number; body: unknown }
  /** Store the message, then acknowledge with `ack` (default 200 `{"ok":true}`). */
  | { kind: "message"; message: PlatformMessage<T>; ack?: { status: number; body: unknown } };

/** How one send went. */
export type SendResult =
  | { ok: true }
  /** `retryAfterMs` when the platform said how long to wait (429); `retryable` only where a resend cannot post twice. */
  | { ok: false; status: number; retryable: boolean; retryAfterMs?: number; message: string };

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
  /** Checks the signature or secret over the raw bytes (constant time); a string is the refusal reason (401). */
  verify(request: RawRequest, env: PlatformEnv): Promise<string | null>;
  /** Turns a verified delivery into what to do. Throws `PayloadError` for a malformed payload (400). */
  parse(request: RawRequest, env: PlatformEnv): Ingress<T>;
  /**
   * Where the platform expects the answer to a delivery to carry a notice (Discord's interaction
   * response, seen only by the sender), the response body that does; without it, notices to a
   * sender who may not start a turn (a pairing code, a quota notice) are sent with `send`.
   */
  inlineNotice?(text: string): { status: number; body: unknown };
  /** Sends part `index` (of `count`) of a reply to a valid target. Network errors are returned, never thrown. */
  send(
    target: T,
    text: string,
    part: { index: number; count: number },
    env: PlatformEnv,
  ): Promise<SendResult>;
}

/** A verified delivery whose payload is malformed (answered 400). */
export class PayloadError extends Error {
  override name = "PayloadError";
}

/** Parses a verified body as JSON, or throws `PayloadError`. The codebase's one JSON decoder of bytes. */
export function parseJsonBody(body: Uint8Array): unknown {
  try {
    return JSON.parse(new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(body));
  } catch {
    throw new PayloadError("request body is not valid JSON");
  }
}

/** How the session sends a stored reply back: split into parts, then one send per part. */
export interface ReplyChannel {
  split(target: ReplyTarget, text: string): string[];
  send(
    target: ReplyTarget,
    text: string,
    part: { index: number; count: number },
  ): Promise<SendResult>;
}

/**
 * The reply channel over a table of adapters, by `target.platform`. Each stored target is checked
 * against its adapter's `replyTarget` here, once, so adapters receive only well-formed targets; a
 * target that fails the check, or names no adapter, is a final failure, never a throw.
 */
export function replyChannel(adapters: readonly PlatformAdapter[], env: PlatformEnv): ReplyChannel {
  const byName = new Map(adapters.map((a) => [a.name, a]));
  return {
    // Without an adapter there is no limit to split by; the send below reports the problem.
    split: (target, text) => {
      const adapter = byName.get(target.platform);
      return adapter ? splitMessage(text, adapter.maxMessageChars) : [text];
    },
    send: (target, text, part) => {
      const adapter = byName.get(target.platform);
      if (!adapter) return _refused(`no adapter for platform ${JSON.stringify(target.platform)}`);
      const checked = adapter.replyTarget.safeParse(target);
      if (!checked.success) {
        return _refused(
          `the ${adapter.name} reply target is invalid: ${_firstIssue(checked.error)}`,
        );
      }
      return adapter.send(checked.data, text, part, env);
    },
  };
}

function _refused(message: string): Promise<SendResult> {
  // Stored data does not heal by waiting: never retryable.
  return Promise.resolve({ ok: false, status: 0, retryable: false, message });
}

// Names the field and the rule, never the value: a target may hold a credential (Discord's token).
function _firstIssue(error: z.ZodError): string {
  const issue = error.issues[0];
  if (!issue) return "rejected";
  const path = issue.path.map(String).join(".");
  return path ? `${path}: ${issue.message}` : issue.message;
}

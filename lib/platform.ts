// The shape every chat-platform adapter fills (verify, parse, send) and the reply deliverer over them; runtime-neutral.
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

/** A chat message that starts a turn. */
export interface PlatformMessage {
  sessionKey: string;
  /** The platform's delivery id: a repeat never starts a second turn. */
  deliveryKey: string;
  text: string;
  context: Omit<ContextFields, "async_delivery">;
  reply: ReplyTarget;
}

/** What a verified delivery asks of baton. */
export type Ingress =
  /** Answer at once and start nothing: handshakes, and events not for the bot (200). */
  | { kind: "respond"; status: number; body: unknown }
  /** Store the message, then acknowledge with `ack` (default 200 `{"ok":true}`). */
  | { kind: "message"; message: PlatformMessage; ack?: { status: number; body: unknown } };

/** How one send went. */
export type SendResult =
  | { ok: true }
  /** `retryAfterMs` when the platform said how long to wait (429); `retryable` only where a resend cannot post twice. */
  | { ok: false; status: number; retryable: boolean; retryAfterMs?: number; message: string };

/** One chat platform: verify a delivery, parse it, send replies. One file per platform in lib/platforms/. */
export interface PlatformAdapter {
  /** Route segment and context platform name: `POST /webhooks/<name>`. */
  readonly name: string;
  /** Env names that must be set; without them the route refuses every request. */
  readonly requiredEnv: readonly string[];
  /** Longest message the platform accepts, in characters; longer replies are split. */
  readonly maxMessageChars: number;
  /** Whether the channel could deliver something after a turn has ended (none can in this bundle). */
  readonly asyncDelivery: false;
  /** Checks the signature or secret over the raw bytes (constant time); a string is the refusal reason (401). */
  verify(request: RawRequest, env: PlatformEnv): Promise<string | null>;
  /** Turns a verified delivery into what to do. Throws `PayloadError` for a malformed payload (400). */
  parse(request: RawRequest, env: PlatformEnv): Ingress;
  /** Sends part `index` (of `count`) of a reply. Network errors are returned, never thrown. */
  send(
    target: ReplyTarget,
    text: string,
    part: { index: number; count: number },
    env: PlatformEnv,
  ): Promise<SendResult>;
}

/** A verified delivery whose payload is malformed (answered 400). */
export class PayloadError extends Error {
  override name = "PayloadError";
}

/** Parses a verified body as JSON, or throws `PayloadError`. */
export function parseJsonBody(body: Uint8Array): unknown {
  try {
    return JSON.parse(new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(body));
  } catch {
    throw new PayloadError("request body is not valid JSON");
  }
}

/** Sends one HTTP request for an adapter, mapping the outcome to a SendResult (429 → retryAfterMs). */
export async function sendRequest(
  url: string,
  init: RequestInit,
): Promise<SendResult & { body?: unknown }> {
  let res: Response;
  try {
    res = await fetch(url, init);
  } catch {
    // The request may not have left: only idempotent requests may be retried by the caller's rule.
    return { ok: false, status: 0, retryable: false, message: "could not reach the platform API" };
  }
  const text = await res.text();
  let body: unknown = undefined;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    body = undefined;
  }
  if (res.ok) return { ok: true, body };
  const retryAfterMs = _retryAfterMs(res.headers.get("retry-after"), body);
  return {
    ok: false,
    status: res.status,
    retryable: res.status === 429,
    ...(retryAfterMs !== undefined ? { retryAfterMs } : {}),
    message: `the platform API answered ${res.status}`,
  };
}

function _retryAfterMs(header: string | null, body: unknown): number | undefined {
  const fromBody = body as
    | { parameters?: { retry_after?: unknown }; retry_after?: unknown }
    | undefined;
  const seconds = fromBody?.parameters?.retry_after ?? fromBody?.retry_after ??
    (header ? Number(header) : NaN);
  return typeof seconds === "number" && Number.isFinite(seconds) && seconds >= 0
    ? Math.ceil(seconds * 1000)
    : undefined;
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

/** The reply channel over a table of adapters, by `target.platform`. */
export function replyChannel(adapters: readonly PlatformAdapter[], env: PlatformEnv): ReplyChannel {
  const byName = new Map(adapters.map((a) => [a.name, a]));
  const adapterOf = (target: ReplyTarget) => {
    const adapter = byName.get(target.platform);
    if (!adapter) throw new TypeError(`no adapter for platform ${target.platform}`);
    return adapter;
  };
  return {
    split: (target, text) => splitMessage(text, adapterOf(target).maxMessageChars),
    send: (target, text, part) => adapterOf(target).send(target, text, part, env),
  };
}

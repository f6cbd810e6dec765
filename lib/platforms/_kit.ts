// The jobs every chat-platform adapter shares: time windows, answers and sending (bytes and HMAC live in lib/runtime); runtime-neutral (fetch).
import {
  fetchOut,
  HTTP_OUT_TIMEOUT_MS,
  OutboundError,
  readJsonAnswer,
  redact,
  retryAfterHeader,
  statedWaitMs,
  type WaitOut,
  type WaitSource,
} from "../runtime/mod.ts";
import type {
  ClickAnswer,
  Ingress,
  PlatformChoice,
  PlatformEnv,
  PlatformMessage,
  ReplyTarget,
  SendResult,
} from "../chat/mod.ts";

const _DIGITS = /^[0-9]+$/;
/** How deep an error body is read; platform errors are shallow, and deeper data is dropped, not walked. */
const _MAX_DEPTH = 16;

// ── time windows ────────────────────────────────────────────────────────────────────────────────

/** How far a signed timestamp may be from now, either way (Slack's and Discord's rule). */
export const TIMESTAMP_TOLERANCE_SECONDS = 300;

/**
 * Checks a signed request's timestamp header (seconds since the epoch): "malformed" unless
 * decimal digits, "outside" unless a safe integer within ±`toleranceSeconds` (300) of
 * `nowSeconds`, else null.
 */
export function timestampProblem(
  value: string,
  nowSeconds: number,
  toleranceSeconds: number = TIMESTAMP_TOLERANCE_SECONDS,
): "malformed" | "outside" | null {
  if (!_DIGITS.test(value)) return "malformed";
  const seconds = Number(value);
  // Past 2^53 a number no longer names one second: a huge value could round into the window.
  if (!Number.isSafeInteger(seconds)) return "outside";
  return Math.abs(nowSeconds - seconds) > toleranceSeconds ? "outside" : null;
}

// ── deliveries ──────────────────────────────────────────────────────────────────────────────────

type _Respond = Extract<Ingress, { kind: "respond" }>;

/** Answer a delivery at once, starting nothing: a handshake or a platform's protocol answer. */
export function respond(body: unknown, status = 200): _Respond {
  return { kind: "respond", status, body };
}

/** Acknowledge a delivery that is not for the bot: 200 `{"ok":true}`, naming why when `reason` is given. */
export function ignore(reason?: string): _Respond {
  return respond(reason === undefined ? { ok: true } : { ok: true, ignored: reason });
}

/**
 * What a delivery that batches events (LINE's `events`, WhatsApp's `messages`) asks: nothing, one
 * message, one click, or several of either (clicks answered first, then the messages in order).
 */
export function batchIngress<T extends ReplyTarget>(
  messages: PlatformMessage<T>[],
  choices: PlatformChoice<T>[],
): Ingress<T> {
  if (messages.length === 0 && choices.length === 0) return ignore();
  if (choices.length === 0 && messages.length === 1) {
    return { kind: "message", message: messages[0] };
  }
  if (messages.length === 0 && choices.length === 1) return { kind: "choice", choice: choices[0] };
  return { kind: "messages", messages, ...(choices.length ? { choices } : {}) };
}

/**
 * Whether a click's answer tells the clicker something the chat will not show otherwise, where
 * the platform has no answer for the clicker alone (LINE, WhatsApp): "Not yours" and "Already
 * answered" — a click that did nothing. An approval or a denial shows itself (the turn resumes and
 * replies), and an access refusal has had the gate's own notice.
 */
export function clickNoticeDue(answer: ClickAnswer): boolean {
  return answer.kind === "not_yours" || answer.kind === "not_pending";
}

/** Whether the body is form-encoded (`application/x-www-form-urlencoded`) rather than JSON. */
export function isFormBody(headers: Headers): boolean {
  return /^application\/x-www-form-urlencoded\b/i.test(headers.get("content-type") ?? "");
}

/** One field of a form-encoded body, or null when absent or the body is not UTF-8. */
export function formField(body: Uint8Array, name: string): string | null {
  try {
    const form = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(body);
    return new URLSearchParams(form).get(name);
  } catch {
    return null;
  }
}

/** The value at `path` in parsed JSON, or undefined where any step is not an object holding that key. */
export function jsonField(value: unknown, ...path: string[]): unknown {
  let at = value;
  for (const key of path) {
    if (typeof at !== "object" || at === null || Array.isArray(at) || !Object.hasOwn(at, key)) {
      return undefined;
    }
    at = Reflect.get(at, key);
  }
  return at;
}

/**
 * The URL a platform sent the request to: with `PUBLIC_URL` (e.g. `https://bot.example.com`, or
 * with a path prefix a proxy strips), that base joined to the request's path and query; else the
 * URL the Worker saw. A `PUBLIC_URL` that is not an http(s) URL is passed over.
 */
export function publicUrl(base: string | undefined, requestUrl: string): string {
  const seen = new URL(requestUrl);
  const trimmed = (base ?? "").trim().replace(/\/+$/, "");
  if (!/^https?:\/\/[^/?#]+(\/[^?#]*)?$/i.test(trimmed)) return seen.href;
  return trimmed + seen.pathname + seen.search;
}

// ── sending ─────────────────────────────────────────────────────────────────────────────────────

/** The API root from `env[name]`, else `fallback`, without trailing slashes (paths are appended). */
export function apiRoot(env: PlatformEnv, name: string, fallback: string): string {
  return (env[name] || fallback).replace(/\/+$/, "");
}

export { redact };

/** A platform's own error text as a message suffix: ": <text>", cut to 200 characters; "" when none. */
export function detail(text: unknown): string {
  return typeof text === "string" && text !== "" ? `: ${text.slice(0, 200)}` : "";
}

/** An API's answer as `SendOptions` callbacks see it. */
export interface Answer {
  readonly status: number;
  readonly headers: Headers;
  /** The JSON body with every secret redacted; undefined when empty or not JSON. */
  readonly body: unknown;
}

// Where a rate-limited answer states its wait: read one way for a send's rate limit here and for
// a look-up's wait-out (`WaitOut.waitFrom`, fetchOut), lib/runtime/retry_after.ts.
export { retryAfterHeader, type WaitSource };

/** A JSON body's `retry_after` (Discord). */
export const bodyRetryAfter: WaitSource = ({ body }) => jsonField(body, "retry_after");

/** A JSON body's `parameters.retry_after` (Telegram). */
export const parametersRetryAfter: WaitSource = ({ body }) =>
  jsonField(body, "parameters", "retry_after");

/**
 * Where Telegram states a 429's wait: the body's `parameters.retry_after` (its ResponseParameters;
 * the header is not always there), else Retry-After. For its sends and its look-ups alike.
 */
export const TELEGRAM_WAIT_FROM: readonly WaitSource[] = [parametersRetryAfter, retryAfterHeader];

/** What `sendRequest` needs to know about one platform's API. */
export interface SendOptions {
  /** The API as messages name it: "could not reach the <api>", "the <api> answered 500". */
  readonly api: string;
  /**
   * The part's `leaving` (see `PartSend`), called just before the request leaves. Required, even
   * when undefined, so that no adapter can forget to pass it: a send the outbox does not mark
   * could never be found in doubt after a crash.
   */
  readonly leaving: (() => void) | undefined;
  /** Credentials that must never reach a message, e.g. a token in the URL; empty strings are skipped. */
  readonly secrets?: readonly string[];
  /**
   * Whether repeating the request cannot post twice (an edit): then a lost request and a 5xx are
   * retryable too. Otherwise only a rate limit is, since the request may have been carried out.
   */
  readonly idempotent?: boolean;
  /** Whether a failed answer is a rate limit (retryable after its wait); default: status 429. */
  readonly rateLimited?: (answer: Answer) => boolean;
  /** Where a rate limit's wait is read, first usable source wins; default: the Retry-After header. */
  readonly waitFrom?: readonly WaitSource[];
  /** The wait when a rate limit states none; default: none (the caller backs off). */
  readonly defaultWaitMs?: number;
  /** Whether a 2xx answer still says the call failed (Telegram's and Slack's `"ok": false`). */
  readonly refused?: (answer: Answer) => boolean;
  /** Called with a successful answer (redacted), where the caller needs what it names (Slack's `ts`). */
  readonly answered?: (answer: Answer) => void;
  /** Words a failure; default "the <api> answered <status>". Secrets are redacted afterwards too. */
  readonly describe?: (answer: Answer, kind: "refused" | "rate-limited" | "error") => string;
  /** How long the answer may take, body included; default `HTTP_OUT_TIMEOUT_MS`. */
  readonly timeoutMs?: number;
  /**
   * A look-up's wait-out of a 429 (`fetchOut`'s `waitOut`, e.g. `RATE_LIMIT_WAIT_OUT`); never for
   * a send, whose rate limit is returned for the outbox to wait out. Default: none.
   */
  readonly waitOut?: WaitOut;
}

/**
 * Sends one request to a platform API (through `fetchOut`) and maps the answer to a SendResult: a
 * 2xx is sent (unless `refused`), a rate limit is retryable with its wait, anything else is final
 * unless the request is idempotent. A lost connection or no answer by the deadline is returned,
 * never thrown, and no message carries a secret.
 */
export async function sendRequest(
  url: string,
  init: RequestInit,
  options: SendOptions,
): Promise<SendResult> {
  const secrets = options.secrets ?? [];
  const timeoutMs = options.timeoutMs ?? HTTP_OUT_TIMEOUT_MS;
  let res: Response;
  try {
    // Right before the request, nothing awaited between: in a Durable Object the output gate then
    // holds the request until the mark is durable, so a request never leaves unrecorded.
    options.leaving?.();
    res = await fetchOut(url, init, {
      api: options.api,
      secrets,
      timeoutMs,
      ...(options.waitOut ? { waitOut: options.waitOut } : {}),
    });
  } catch (error) {
    if (!(error instanceof OutboundError)) throw error;
    // The request may have left before the connection failed (or while no answer came), so only
    // an idempotent one may be repeated.
    const idempotent = options.idempotent === true;
    return {
      ok: false,
      status: 0,
      retryable: idempotent,
      ...(idempotent ? {} : _UNCERTAIN),
      message: error.message,
    };
  }
  const answer: Answer = {
    status: res.status,
    headers: res.headers,
    body: _redactJson(await readJsonAnswer(res), secrets, 0),
  };
  if (res.ok && !options.refused?.(answer)) {
    options.answered?.(answer);
    return { ok: true };
  }
  const rateLimited = !res.ok && (options.rateLimited ?? _is429)(answer);
  const kind = res.ok ? "refused" : rateLimited ? "rate-limited" : "error";
  const describe = options.describe ?? ((a: Answer) => `the ${options.api} answered ${a.status}`);
  const message = redact(describe(answer, kind), secrets);
  if (rateLimited) {
    const retryAfterMs = statedWaitMs(answer, options.waitFrom ?? [retryAfterHeader], Date.now()) ??
      options.defaultWaitMs;
    return {
      ok: false,
      status: res.status,
      retryable: true,
      ...(retryAfterMs !== undefined ? { retryAfterMs } : {}),
      message,
    };
  }
  const serverError = kind === "error" && res.status >= 500;
  const retryable = serverError && options.idempotent === true;
  // A 5xx says nothing about whether the post was made: in doubt, unless a repeat is harmless.
  const uncertain = serverError && !retryable ? _UNCERTAIN : {};
  return { ok: false, status: res.status, retryable, ...uncertain, message };
}

/**
 * Reads a platform API's JSON answer (a look-up, never a send; through `fetchOut`, within
 * `timeoutMs`, a rate limit waited out as `waitOut` says): the body of a 2xx answer, or null when
 * the API could not be reached in time, refused, or answered something that is not JSON. Nothing
 * is thrown and nothing said, so no URL or token can reach a message.
 */
export async function readJson(
  url: string,
  init: RequestInit,
  timeoutMs: number = HTTP_OUT_TIMEOUT_MS,
  waitOut?: WaitOut,
): Promise<unknown> {
  try {
    const res = await fetchOut(url, init, {
      api: "API",
      timeoutMs,
      ...(waitOut ? { waitOut } : {}),
    });
    const body = await readJsonAnswer(res);
    return res.ok ? body ?? null : null;
  } catch {
    return null;
  }
}

const _UNCERTAIN = { uncertain: true } as const;

function _is429(answer: Answer): boolean {
  return answer.status === 429;
}

// Redacted before any callback reads it, so text cut to length can never keep half a token.
function _redactJson(value: unknown, secrets: readonly string[], depth: number): unknown {
  if (secrets.length === 0) return value;
  if (depth > _MAX_DEPTH) return undefined;
  if (typeof value === "string") return redact(value, secrets);
  if (Array.isArray(value)) return value.map((item) => _redactJson(item, secrets, depth + 1));
  if (typeof value === "object" && value !== null) {
    return Object.fromEntries(
      Object.entries(value).map((
        [key, item],
      ) => [redact(key, secrets), _redactJson(item, secrets, depth + 1)]),
    );
  }
  return value;
}

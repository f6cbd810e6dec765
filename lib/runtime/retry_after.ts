// A server's "wait, then ask again" (429, or 503 with Retry-After): where its wait is stated (the header, a platform's body), read one way for fetchOut's opt-in `waitOut` and a send's rate limit, and waited out on a cleared timer; runtime-neutral (setTimeout).

/** A rate-limited answer as a `WaitSource` reads it (its body parsed as JSON, undefined if none). */
export interface RateLimitAnswer {
  readonly status: number;
  readonly headers: Headers;
  readonly body: unknown;
}

/**
 * Where an answer states its wait, in seconds, read at `now` (ms since the epoch); anything but a
 * finite number ≥ 0 is passed over.
 */
export type WaitSource = (answer: RateLimitAnswer, now: number) => unknown;

/** The `Retry-After` header, in seconds: delay-seconds, or an HTTP date (the time until it). */
export const retryAfterHeader: WaitSource = ({ headers }, now) => {
  const ms = retryAfterMs(headers.get("retry-after"), now);
  return ms === undefined ? undefined : ms / 1000;
};

/**
 * The wait `answer` states, in ms, from the first of `sources` that gives a usable one (so a
 * platform's own field can come before the header); undefined when none does.
 */
export function statedWaitMs(
  answer: RateLimitAnswer,
  sources: readonly WaitSource[],
  now: number,
): number | undefined {
  for (const source of sources) {
    const seconds = source(answer, now);
    if (typeof seconds === "number" && Number.isFinite(seconds) && seconds >= 0) {
      return Math.ceil(seconds * 1000);
    }
  }
  return undefined;
}

/**
 * How a call out waits out a server that asks it to (`OutOptions.waitOut`): a 429, or a 503 that
 * says how long with `Retry-After`, is asked again after that wait, a bounded number of times.
 */
export interface WaitOut {
  /** How many times the request is repeated after a wait. */
  readonly retries: number;
  /** The wait when a 429 states none, in ms (a 503 without Retry-After is not waited out). */
  readonly defaultWaitMs: number;
  /**
   * The longest wait honoured, in ms: a server asking for more is answered as it is (the 429),
   * since asking again sooner than it said would be refused again.
   */
  readonly maxWaitMs: number;
  /**
   * Where the wait is stated, first usable source wins; default: the Retry-After header alone.
   * Given, a 429's or 503's body is read (as JSON) for it: Telegram states its wait in the body.
   */
  readonly waitFrom?: readonly WaitSource[];
}

/**
 * The wait-out for look-ups and downloads (media): two more tries, 1 s when no wait is stated, and
 * no wait over 10 s — the media deadline (`MEDIA_DOWNLOAD_TIMEOUT_MS`) still bounds it all.
 */
export const RATE_LIMIT_WAIT_OUT: WaitOut = {
  retries: 2,
  defaultWaitMs: 1_000,
  maxWaitMs: 10_000,
};

/**
 * The wait-out for the keys and tokens a platform is verified and called with (JWKS, OpenID
 * metadata, OAuth tokens): one more try, 1 s when no wait is stated, none over 5 s — a key set is
 * fetched while the platform waits for its webhook's answer, and a token failure still goes back to
 * the caller (a send's outbox waits out what it states, as for any 429).
 */
export const CREDENTIAL_WAIT_OUT: WaitOut = {
  retries: 1,
  defaultWaitMs: 1_000,
  maxWaitMs: 5_000,
};

/**
 * The wait a `Retry-After` value asks for, in ms: delay-seconds ("120"), or an HTTP date (the time
 * until it, 0 when past); undefined when absent or neither.
 */
export function retryAfterMs(value: string | null | undefined, now: number): number | undefined {
  const text = value?.trim();
  if (!text) return undefined;
  if (/^\d+(\.\d+)?$/.test(text)) return Math.ceil(Number(text) * 1000);
  const at = Date.parse(text);
  // A bare number with a sign or an exponent is no HTTP date either.
  if (Number.isNaN(at) || /^[-+\d.e]+$/i.test(text)) return undefined;
  return Math.max(0, at - now);
}

/** Whether an answer of `status` may be one to wait out (see `waitOutMs`). */
export function mayWaitOut(status: number): boolean {
  return status === 429 || status === 503;
}

/**
 * How long to wait before asking `answer`'s server again under `policy`, in ms; null when it is
 * not one to wait out (not a 429, a 503 stating no wait, a wait over `maxWaitMs`).
 */
export function waitOutMs(answer: RateLimitAnswer, policy: WaitOut, now: number): number | null {
  if (!mayWaitOut(answer.status)) return null;
  const stated = statedWaitMs(answer, policy.waitFrom ?? [retryAfterHeader], now);
  const wait = stated ?? (answer.status === 429 ? policy.defaultWaitMs : null);
  return wait === null || wait > policy.maxWaitMs ? null : wait;
}

/**
 * Resolves after `ms`, or rejects with `signal`'s reason as soon as it aborts. The timer is cleared
 * on abort: workerd caps an object's active timers (deadline.ts).
 */
export function waitFor(ms: number, signal?: AbortSignal | null): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

// A server's "wait, then ask again" (429, or 503 with Retry-After) read and waited out on a cleared timer, for fetchOut's opt-in `waitOut`; runtime-neutral (setTimeout).

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

/**
 * How long to wait before asking `res`'s server again under `policy`, in ms; null when its answer
 * is not one to wait out (not a 429, a 503 without Retry-After, a wait over `maxWaitMs`).
 */
export function waitOutMs(res: Response, policy: WaitOut, now: number): number | null {
  if (res.status !== 429 && res.status !== 503) return null;
  const stated = retryAfterMs(res.headers.get("retry-after"), now);
  const wait = stated ?? (res.status === 429 ? policy.defaultWaitMs : null);
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

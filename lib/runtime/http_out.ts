// The one way baton calls out over HTTP (platform APIs, signing keys, tokens, MCP servers): fetch with a deadline, failures worded without URL or secret, answers read by the one JSON decoder; runtime-neutral (fetch).
import { deadlineSignal } from "./deadline.ts";
import { jsonOrUndefined } from "./json_body.ts";
import { mayWaitOut, waitFor, type WaitOut, waitOutMs } from "./retry_after.ts";

/** What a secret becomes in a message. */
const _REDACTED = "<token>";

/** How long a platform API call or look-up may take, answer body included, before it is given up. */
export const HTTP_OUT_TIMEOUT_MS = 30_000;

/** A fetch function (the runtime's, or a test's). */
export type FetchFn = (url: string | URL, init?: RequestInit) => Promise<Response>;

/** How one call out is made and how its failures are worded. */
export interface OutOptions {
  /** The peer as messages name it: "could not reach the <api>". */
  readonly api: string;
  /** Values that must never reach a message (tokens in a URL, header values); empty ones are skipped. */
  readonly secrets?: readonly string[];
  /**
   * The deadline for the answer and its body, in ms; null for none (an MCP stream stays open, and
   * the SDK times its own requests). A caller's `init.signal` still aborts it.
   */
  readonly timeoutMs: number | null;
  /** The fetch to use; by default the global one, looked up at each call (tests replace it). */
  readonly fetch?: FetchFn;
  /**
   * Opt-in: a 429 (or a 503 stating its wait) is asked again after the wait it states (where
   * `WaitOut.waitFrom` says: the Retry-After header by default), as `WaitOut` bounds it — for
   * look-ups, downloads, keys and tokens, never for a send (the outbox waits those out, and a
   * repeat could post twice). Without it the answer is returned as it is.
   */
  readonly waitOut?: WaitOut;
}

/**
 * A call out that got no answer: the connection failed, or the deadline passed (`timedOut`). Its
 * message names the API alone — the runtime's own error may quote the URL, hence a token, so none
 * of it is kept. A caller's abort is not one of these: its reason is thrown as it is.
 */
export class OutboundError extends Error {
  override name = "OutboundError";
  constructor(message: string, readonly timedOut: boolean) {
    super(message);
  }
}

/**
 * `fetch(url, init)` under the house rules: within `timeoutMs` (the body read too), and a failure
 * to get an answer thrown as an `OutboundError` that names no URL or secret. Nothing is awaited
 * before the request leaves, so a caller's mark made just before the call is the last thing before
 * it (a Durable Object's output gate holds the request until that mark is durable). With
 * `waitOut`, a 429 (or a 503 stating its wait) is waited out and asked again, each try under its
 * own deadline, no wait begun that would end past `timeoutMs` and every wait ended by the caller's
 * abort (its reason thrown).
 */
export async function fetchOut(
  url: string | URL,
  init: RequestInit,
  options: OutOptions,
): Promise<Response> {
  const { waitOut } = options;
  // A stream body is gone once sent: such a request is never asked again.
  if (!waitOut || init.body instanceof ReadableStream) return await _fetchOnce(url, init, options);
  const started = Date.now();
  for (let tries = 0;; tries++) {
    const answered = await _fetchOnce(url, init, options);
    if (tries >= waitOut.retries || !mayWaitOut(answered.status)) return answered;
    // A policy with its own wait sources may read the body (Telegram's `parameters.retry_after`).
    const { res, body } = waitOut.waitFrom
      ? await _bodyRead(answered, init.signal)
      : { res: answered, body: undefined };
    const wait = waitOutMs({ status: res.status, headers: res.headers, body }, waitOut, Date.now());
    // A wait that would end past this call's own deadline is not begun: the answer stands. The
    // caller's deadline (its signal) ends a wait that is.
    const late = options.timeoutMs !== null &&
      wait !== null && Date.now() + wait - started >= options.timeoutMs;
    if (wait === null || late) return res;
    await res.body?.cancel();
    await waitFor(wait, init.signal);
  }
}

/**
 * `res`'s body parsed as JSON (undefined when empty, not JSON or cut off), with `res` rebuilt
 * around the bytes read, so a caller it is returned to still reads them. The caller's abort is
 * thrown as it is.
 */
async function _bodyRead(
  res: Response,
  signal: AbortSignal | null | undefined,
): Promise<{ res: Response; body: unknown }> {
  let bytes: Uint8Array<ArrayBuffer> | null = null;
  try {
    bytes = new Uint8Array(await res.arrayBuffer());
  } catch {
    if (signal?.aborted) throw signal.reason;
  }
  const { status, statusText, headers } = res;
  return {
    res: new Response(bytes, { status, statusText, headers }),
    body: bytes ? jsonOrUndefined(bytes) : undefined,
  };
}

/** One `fetchOut` request: its deadline, its failure worded. */
async function _fetchOnce(
  url: string | URL,
  init: RequestInit,
  options: OutOptions,
): Promise<Response> {
  // Cleared once the body is read (or the call fails): an uncleared timer stays active until it
  // fires, and a busy session object may only have so many (deadline.ts).
  const deadline = options.timeoutMs === null
    ? null
    : deadlineSignal(options.timeoutMs, init.signal);
  const signal = deadline?.signal ?? init.signal;
  try {
    const res = await (options.fetch ?? fetch)(url, signal ? { ...init, signal } : init);
    return deadline ? _clearedAtBodyEnd(res, deadline.clear) : res;
  } catch {
    deadline?.clear();
    if (init.signal?.aborted) throw init.signal.reason;
    const timedOut = deadline?.expired === true;
    const message = timedOut
      ? `the ${options.api} did not answer within ${options.timeoutMs} ms`
      : `could not reach the ${options.api}`;
    throw new OutboundError(redact(message, options.secrets ?? []), timedOut);
  }
}

/** The statuses whose answer has no body (the Fetch standard's null body status). */
const _NULL_BODY_STATUSES = new Set([101, 103, 204, 205, 304]);

/**
 * `res` with a body that calls `clear` when it ends, fails or is cancelled, so the deadline covers
 * the body read and is gone once it is over; as it is (cleared now) when it has no body.
 */
function _clearedAtBodyEnd(res: Response, clear: () => void): Response {
  // A 204 or 304 may come with an empty body stream, yet no Response can be built with one.
  if (!res.body || _NULL_BODY_STATUSES.has(res.status)) {
    clear();
    return res;
  }
  const reader = res.body.getReader();
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const { done, value } = await reader.read();
        if (done) {
          clear();
          controller.close();
        } else controller.enqueue(value);
      } catch (error) {
        clear();
        controller.error(error);
      }
    },
    cancel(reason) {
      clear();
      return reader.cancel(reason);
    },
  });
  return new Response(body, {
    status: res.status,
    statusText: res.statusText,
    headers: res.headers,
  });
}

/**
 * The whole body of `res` as JSON (the one decoder, `parseJsonBody`), or undefined when it is
 * empty, not JSON, or cut off (a deadline passing mid-body): the status then speaks alone. Reading
 * it all also frees the connection.
 */
export async function readJsonAnswer(res: Response): Promise<unknown> {
  try {
    return jsonOrUndefined(new Uint8Array(await res.arrayBuffer()));
  } catch {
    return undefined;
  }
}

/** Every occurrence of each secret in `text` replaced by `<token>`, longest secret first. */
export function redact(text: string, secrets: readonly string[]): string {
  const sorted = secrets.filter((s) => s !== "").sort((a, b) => b.length - a.length);
  return sorted.reduce((out, secret) => out.split(secret).join(_REDACTED), text);
}

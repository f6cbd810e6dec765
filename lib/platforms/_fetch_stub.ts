// Test support: a global fetch stub that records every platform API call and answers it; Deno (tests only).

/** One request an adapter made through the stubbed fetch. */
export interface FetchCall {
  /** The request method, "GET" when none was given. */
  method: string;
  /** The URL exactly as the adapter passed it. */
  url: string;
  /** The request's headers. */
  headers: Headers;
  /** The request body parsed as JSON; null when there is none; the text itself when not JSON (Twilio's form). */
  // deno-lint-ignore no-explicit-any
  body: any;
  /** The init the adapter passed, as given (an empty object when none). */
  init: RequestInit;
}

/**
 * Runs `fn` with `globalThis.fetch` replaced by a stub that records each call and returns
 * `answer(call, index)` (a throw or rejection there is a network error), then restores the real
 * fetch. `fn` receives the calls recorded so far, oldest first.
 */
export async function withFetch(
  answer: (call: FetchCall, index: number) => Response | Promise<Response>,
  fn: (calls: FetchCall[]) => Promise<void>,
): Promise<void> {
  const original = globalThis.fetch;
  const calls: FetchCall[] = [];
  globalThis.fetch = (async (input: string | URL | Request, init?: RequestInit) => {
    const call: FetchCall = {
      method: init?.method ?? "GET",
      url: String(input),
      headers: new Headers(init?.headers),
      body: _body(init?.body),
      init: init ?? {},
    };
    const index = calls.push(call) - 1;
    return await answer(call, index);
  }) as typeof fetch;
  try {
    await fn(calls);
  } finally {
    globalThis.fetch = original;
  }
}

function _body(body: unknown): unknown {
  const text = String(body ?? "null");
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

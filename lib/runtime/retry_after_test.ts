// Unit tests of waiting out a server's 429 or 503 (fetchOut's `waitOut`): Retry-After as seconds or a date, a wait stated in the body where a policy reads it, a default when absent, none past a cap, the deadline or the caller's abort; Deno.
import { assert, assertEquals, assertStrictEquals } from "@std/assert";
import { type FetchFn, fetchOut } from "./http_out.ts";
import { countTimers } from "./_timer_count_test_support.ts";
import { deadlineSignal } from "./deadline.ts";
import {
  RATE_LIMIT_WAIT_OUT,
  retryAfterHeader,
  retryAfterMs,
  statedWaitMs,
  type WaitOut,
  waitOutMs,
  type WaitSource,
} from "./retry_after.ts";

/** A fetch that gives `answers` in turn (the last one again once they run out), counting calls. */
function scripted(...answers: (() => Response)[]): FetchFn & { calls: number } {
  const fn = Object.assign(() => {
    const answer = answers[Math.min(fn.calls, answers.length - 1)];
    fn.calls++;
    return Promise.resolve(answer());
  }, { calls: 0 });
  return fn;
}

const busy = (retryAfter?: string, status = 429) => () =>
  new Response("slow down", {
    status,
    headers: retryAfter === undefined ? {} : { "retry-after": retryAfter },
  });
const bytes = () => new Response("the bytes");

Deno.test("retryAfterMs() reads delay-seconds and HTTP dates, and nothing else", () => {
  const now = Date.parse("Wed, 25 Nov 2026 10:00:00 GMT");
  assertEquals(retryAfterMs("1", now), 1_000);
  assertEquals(retryAfterMs(" 0 ", now), 0);
  assertEquals(retryAfterMs("Wed, 25 Nov 2026 10:00:03 GMT", now), 3_000);
  assertEquals(retryAfterMs("Wed, 25 Nov 2026 09:59:00 GMT", now), 0, "a date past is no wait");
  for (const bad of [undefined, null, "", "-1", "1e3", "soon"]) {
    assertEquals(retryAfterMs(bad, now), undefined, String(bad));
  }
});

Deno.test("waitOutMs() waits out a 429 (a default when it states none) and a 503 only with Retry-After", () => {
  const now = Date.now();
  assertEquals(waitOutMs(busy("2")(), RATE_LIMIT_WAIT_OUT, now), 2_000);
  assertEquals(waitOutMs(busy()(), RATE_LIMIT_WAIT_OUT, now), RATE_LIMIT_WAIT_OUT.defaultWaitMs);
  assertEquals(waitOutMs(busy("1", 503)(), RATE_LIMIT_WAIT_OUT, now), 1_000);
  assertEquals(waitOutMs(busy(undefined, 503)(), RATE_LIMIT_WAIT_OUT, now), null);
  assertEquals(waitOutMs(busy("3600")(), RATE_LIMIT_WAIT_OUT, now), null, "over the cap");
  assertEquals(waitOutMs(busy("1", 500)(), RATE_LIMIT_WAIT_OUT, now), null);
  assertEquals(waitOutMs(bytes(), RATE_LIMIT_WAIT_OUT, now), null);
});

/** Telegram's wait, as its Bot API states it in a 429's body. */
const parameters: WaitSource = ({ body }) =>
  (body as { parameters?: { retry_after?: unknown } } | undefined)?.parameters?.retry_after;
const BODY_FIRST: WaitOut = { ...RATE_LIMIT_WAIT_OUT, waitFrom: [parameters, retryAfterHeader] };
const telegram429 = (seconds: number, retryAfter?: string) => () =>
  Response.json({
    ok: false,
    error_code: 429,
    description: `Too Many Requests: retry after ${seconds}`,
    parameters: { retry_after: seconds },
  }, { status: 429, headers: retryAfter === undefined ? {} : { "retry-after": retryAfter } });

Deno.test("statedWaitMs() takes the first usable source: a body's field before the header, a date as its distance", () => {
  const now = Date.parse("Wed, 25 Nov 2026 10:00:00 GMT");
  const answer = (body: unknown, retryAfter?: string) => ({
    status: 429,
    headers: new Headers(retryAfter === undefined ? {} : { "retry-after": retryAfter }),
    body,
  });
  const sources = [parameters, retryAfterHeader];
  assertEquals(statedWaitMs(answer({ parameters: { retry_after: 5 } }, "9"), sources, now), 5_000);
  assertEquals(
    statedWaitMs(answer({ parameters: { retry_after: "5" } }, "9"), sources, now),
    9_000,
  );
  assertEquals(
    statedWaitMs(answer(undefined, "Wed, 25 Nov 2026 10:00:02 GMT"), sources, now),
    2_000,
  );
  assertEquals(statedWaitMs(answer({ parameters: { retry_after: -1 } }), sources, now), undefined);
});

Deno.test("waitOutMs() reads the wait where the policy says: Telegram's body, else the header alone", () => {
  const now = Date.now();
  const body = { parameters: { retry_after: 5 } };
  const answer = { status: 429, headers: new Headers(), body };
  assertEquals(waitOutMs(answer, BODY_FIRST, now), 5_000);
  assertEquals(waitOutMs(answer, RATE_LIMIT_WAIT_OUT, now), 1_000, "the default: no body read");
  const over = { ...answer, body: { parameters: { retry_after: 30 } } };
  assertEquals(waitOutMs(over, BODY_FIRST, now), null, "over the 10 s cap");
});

Deno.test("fetchOut() with a body-reading waitOut answers at once a 429 whose body asks for more than the cap, its body kept", async () => {
  // No Retry-After: a 1 s guess would ask again (and find the bytes), 30 s before Telegram said.
  const fetch = scripted(telegram429(30), bytes);
  const res = await fetchOut("https://api.telegram.example/getFile", {}, {
    api: "Telegram Bot API",
    timeoutMs: 30_000,
    fetch,
    waitOut: BODY_FIRST,
  });
  assertEquals(res.status, 429);
  assertEquals(fetch.calls, 1);
  const body = await res.json() as { parameters?: unknown };
  assertEquals(body.parameters, { retry_after: 30 }, "the body read is handed on");
});

Deno.test("fetchOut() with a body-reading waitOut waits the body's retry_after, then has the bytes", async () => {
  const fetch = scripted(telegram429(0, "3600"), bytes);
  const res = await fetchOut("https://api.telegram.example/getFile", {}, {
    api: "Telegram Bot API",
    timeoutMs: 30_000,
    fetch,
    waitOut: BODY_FIRST,
  });
  assertEquals(await res.text(), "the bytes", "the body's 0 s, not the header's hour");
  assertEquals(fetch.calls, 2);
});

Deno.test("fetchOut() with waitOut waits Retry-After seconds after a 429, then has the bytes", async () => {
  const fetch = scripted(busy("1"), bytes);
  const res = await fetchOut("https://files.example/f", {}, {
    api: "file server",
    timeoutMs: 30_000,
    fetch,
    waitOut: RATE_LIMIT_WAIT_OUT,
  });
  assertEquals(res.status, 200);
  assertEquals(await res.text(), "the bytes");
  assertEquals(fetch.calls, 2);
});

Deno.test("fetchOut() with waitOut waits out a 503 with an HTTP date, at most `retries` times", async () => {
  const past = new Date(Date.now() - 60_000).toUTCString();
  const fetch = scripted(busy(past, 503));
  const res = await fetchOut("https://files.example/f", {}, {
    api: "file server",
    timeoutMs: 30_000,
    fetch,
    waitOut: { ...RATE_LIMIT_WAIT_OUT, retries: 2 },
  });
  assertEquals(res.status, 503, "the last answer, once the tries are spent");
  assertEquals(fetch.calls, 3);
});

Deno.test("fetchOut() without waitOut answers a 429 as it is (every other caller)", async () => {
  const fetch = scripted(busy("0"), bytes);
  const res = await fetchOut("https://api.example/", {}, { api: "API", timeoutMs: 1_000, fetch });
  assertEquals(res.status, 429);
  assertEquals(fetch.calls, 1);
});

Deno.test("fetchOut() with waitOut does not wait past its own deadline or a wait over the cap", async () => {
  for (const [retryAfter, timeoutMs] of [["5", 1_000], ["3600", 30_000]] as const) {
    const fetch = scripted(busy(retryAfter), bytes);
    const res = await fetchOut("https://files.example/f", {}, {
      api: "file server",
      timeoutMs,
      fetch,
      waitOut: RATE_LIMIT_WAIT_OUT,
    });
    assertEquals(res.status, 429, `Retry-After ${retryAfter}: answered at once`);
    assertEquals(fetch.calls, 1);
  }
});

Deno.test("fetchOut() with waitOut gives up at the caller's deadline, leaving no timer", async () => {
  const timers = countTimers();
  try {
    const deadline = deadlineSignal(30);
    const fetch = scripted(busy("5"), bytes);
    const thrown = await fetchOut("https://files.example/f", { signal: deadline.signal }, {
      api: "file server",
      timeoutMs: 30_000,
      fetch,
      waitOut: RATE_LIMIT_WAIT_OUT,
    }).catch((e) => e);
    assertEquals((thrown as DOMException).name, "TimeoutError");
    assert(deadline.expired);
    assertEquals(fetch.calls, 1);
    assertEquals(timers.active(), 0, "the wait's timer outlived the abort");
  } finally {
    timers.restore();
  }
});

Deno.test("fetchOut() with waitOut stops waiting at the caller's abort, with its reason", async () => {
  const controller = new AbortController();
  const reason = new Error("stopped");
  // The abort comes once the 429 is in: while fetchOut waits.
  const fetch = scripted(() => {
    queueMicrotask(() => queueMicrotask(() => controller.abort(reason)));
    return busy("5")();
  }, bytes);
  const timers = countTimers();
  try {
    const thrown = await fetchOut("https://files.example/f", { signal: controller.signal }, {
      api: "file server",
      timeoutMs: null,
      fetch,
      waitOut: RATE_LIMIT_WAIT_OUT,
    }).catch((e) => e);
    assertStrictEquals(thrown, reason);
    assertEquals(fetch.calls, 1);
    assertEquals(timers.active(), 0, "the wait's timer outlived the abort");
  } finally {
    timers.restore();
  }
});

// Unit tests of the one HTTP-out helper: deadlines, failures worded without URL or secret, a caller's abort passed on, answers read by the one decoder; Deno.
import { assert, assertEquals, assertRejects, assertStrictEquals } from "@std/assert";
import { fetchOut, OutboundError, readJsonAnswer, redact } from "./http_out.ts";
import { countTimers } from "./_timer_count_test_support.ts";

const _SECRET = "s3cret-in-the-url";

Deno.test("fetchOut() words a lost connection by the API alone, never the URL or a secret", async () => {
  const failing = () =>
    Promise.reject(
      new TypeError(`error sending request for url (https://x.example/?k=${_SECRET})`),
    );
  const error = await assertRejects(
    () =>
      fetchOut(`https://x.example/?k=${_SECRET}`, {}, {
        api: "Example API",
        secrets: [_SECRET],
        timeoutMs: 1_000,
        fetch: failing,
      }),
  ) as OutboundError;
  assert(error instanceof OutboundError);
  assertEquals(error.message, "could not reach the Example API");
  assertStrictEquals(error.timedOut, false);
});

Deno.test("fetchOut() gives up at its deadline, and says so", async () => {
  // A fetch that answers only when its signal aborts, as the runtime's does.
  const hanging = (_url: string | URL, init?: RequestInit) =>
    new Promise<Response>((_resolve, reject) => {
      init?.signal?.addEventListener("abort", () => reject(init.signal?.reason), { once: true });
    });
  const error = await assertRejects(
    () => fetchOut("https://x.example/", {}, { api: "Example API", timeoutMs: 20, fetch: hanging }),
  ) as OutboundError;
  assert(error instanceof OutboundError);
  assertEquals(error.message, "the Example API did not answer within 20 ms");
  assert(error.timedOut);
});

Deno.test("fetchOut() passes a caller's abort on as the caller's reason, and no deadline with timeoutMs null", async () => {
  const controller = new AbortController();
  let seen: AbortSignal | undefined;
  const hanging = (_url: string | URL, init?: RequestInit) =>
    new Promise<Response>((_resolve, reject) => {
      seen = init?.signal ?? undefined;
      init?.signal?.addEventListener("abort", () => reject(init.signal?.reason), { once: true });
    });
  const pending = fetchOut("https://x.example/", { signal: controller.signal }, {
    api: "MCP server",
    timeoutMs: null,
    fetch: hanging,
  });
  const reason = new Error("the request was cancelled");
  controller.abort(reason);
  assertStrictEquals(await pending.catch((e) => e), reason);
  assertStrictEquals(seen, controller.signal);
});

Deno.test("fetchOut() leaves no timer active once its answer is read, or once it fails", async () => {
  const timers = countTimers();
  try {
    const answering = () => Promise.resolve(Response.json({ ok: true }));
    const res = await fetchOut("https://x.example/", {}, {
      api: "Example API",
      timeoutMs: 30_000,
      fetch: answering,
    });
    assertEquals(await readJsonAnswer(res), { ok: true });
    assertEquals(timers.active(), 0, "a deadline timer outlived its answer");
    const failing = () => Promise.reject(new TypeError("connection refused"));
    await assertRejects(() =>
      fetchOut("https://x.example/", {}, { api: "Example API", timeoutMs: 30_000, fetch: failing })
    );
    assertEquals(timers.active(), 0, "a deadline timer outlived a failed call");
  } finally {
    timers.restore();
  }
});

Deno.test("fetchOut() keeps its deadline over the body read, and clears it when the body is cancelled", async () => {
  // An answer whose body never ends until the request's signal aborts, as a stalled server's.
  const stalling = (_url: string | URL, init?: RequestInit) =>
    Promise.resolve(
      new Response(
        new ReadableStream<Uint8Array>({
          start(controller) {
            controller.enqueue(new TextEncoder().encode("{"));
            init?.signal?.addEventListener("abort", () => controller.error(init.signal?.reason));
          },
        }),
        { status: 200, headers: { "x-kept": "yes" } },
      ),
    );
  const res = await fetchOut("https://x.example/", {}, {
    api: "Example API",
    timeoutMs: 20,
    fetch: stalling,
  });
  assertEquals(res.headers.get("x-kept"), "yes");
  assertEquals(await readJsonAnswer(res), undefined);
  const timers = countTimers();
  try {
    const held = await fetchOut("https://x.example/", {}, {
      api: "Example API",
      timeoutMs: 30_000,
      fetch: stalling,
    });
    await held.body?.cancel();
    assertEquals(timers.active(), 0);
  } finally {
    timers.restore();
  }
});

Deno.test("readJsonAnswer() reads JSON, and undefined for an empty, non-JSON or non-UTF-8 body", async () => {
  assertEquals(await readJsonAnswer(Response.json({ ok: true })), { ok: true });
  assertStrictEquals(await readJsonAnswer(new Response(null)), undefined);
  assertStrictEquals(await readJsonAnswer(new Response("<html>")), undefined);
  assertStrictEquals(
    await readJsonAnswer(new Response(new Uint8Array([0x22, 0xff, 0x22]))),
    undefined,
  );
});

Deno.test("redact() replaces every secret, longest first, skipping empty ones", () => {
  assertEquals(redact("a abc b ab", ["ab", "abc", ""]), "a <token> b <token>");
});

// Unit tests of the one HTTP-out helper: deadlines, failures worded without URL or secret, a caller's abort passed on, answers read by the one decoder; Deno.
import { assert, assertEquals, assertRejects, assertStrictEquals } from "@std/assert";
import { fetchOut, OutboundError, readJsonAnswer, redact } from "./http_out.ts";

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

// Fuzzed ingress: every route answers 2xx/4xx JSON and rejected requests start no turn; Deno + Miniflare + fast-check.
import fc from "fast-check";
import { assert } from "@std/assert";
import type { FakeModel } from "../lib/testing/fake_model.ts";
import { type FakePlatform, startFakePlatform } from "./_support/fake_platform.ts";
import { withPlatform } from "./_support/platform_rig.ts";
import type { TestWorker } from "./_support/worker.ts";
import { ACCESS_ROUTES } from "./_support/_fuzz_access.ts";
import { API_ROUTES, MCP_ROUTE, RANDOM_ROUTE } from "./_support/_fuzz_api.ts";
import { type Built, MAX_BODY, type RouteFuzz } from "./_support/_fuzz_gen.ts";
import { MORE_WEBHOOKS, webhookFuzz, WEBHOOKS, webhookVars } from "./_support/_fuzz_webhooks.ts";
import { MEDIA_ROUTES } from "./_support/_fuzz_media.ts";
import { fuzzReplays, REPLAY_DRIVERS, replayVerdicts } from "./_support/_fuzz_replays.ts";

/** Cases per route (FUZZ_RUNS overrides), the fixed seed (FUZZ_SEED overrides), requests in flight at once. */
const RUNS = Number(Deno.env.get("FUZZ_RUNS") ?? 2000);
const SEED = Number(Deno.env.get("FUZZ_SEED") ?? 20260426);
const BATCH = Math.max(1, Number(Deno.env.get("FUZZ_BATCH") ?? 8));

// Every text field carries "FUZZ-<n>." so a turn can be traced back to its request.
let _nextMarker = 0;
/**
 * Replay cases per platform: a hundredth of the routes' runs, at least four. Each case is a session
 * of its own, alive in the one workerd for the whole run: at a twentieth (900 more sessions at
 * 2,000 runs) the local runtime's SQLite ran out of memory (SQLITE_NOMEM) for every object.
 */
const REPLAY_RUNS = Math.max(4, Math.ceil(RUNS / 100));
let _nextReplay = 0;
/** Final status of each marker's request. */
const markerStatus = new Map<number, number>();

/** What one route's run sent and got. */
interface Stats {
  sent: number;
  skipped: number;
  /** Refusals (4xx) of a body over 1 MiB that the connection reset cut short, the body unread. */
  refusedUnread: number;
  /** Requests sent again after a connection reset. */
  retried: number;
  statuses: Map<number, number>;
  /** Statuses of the bodies of 512 KiB up to the cap (the size dimension). */
  large: Map<number, number>;
}

/** A request in a failure message (long bodies and headers cut). */
function describe(b: Built): string {
  const body = b.body
    ? `${b.body.length} bytes: ${JSON.stringify(new TextDecoder().decode(b.body.slice(0, 400)))}${
      b.body.length > 400 ? "…" : ""
    }`
    : "none";
  return `${b.method} ${b.path}\n  headers: ${
    JSON.stringify(b.headers.map(([k, v]) => [k, v.length > 200 ? v.slice(0, 200) + "…" : v]))
  }\n  body: ${body}`;
}

/** Sends one case and checks the invariants; returns false when the request cannot be sent. */
async function sendCase<C>(
  worker: TestWorker,
  route: RouteFuzz<C>,
  c: C,
  stats: Stats,
): Promise<boolean> {
  const n = _nextMarker++;
  const marker = `FUZZ-${n}.`;
  let built: Built | null;
  try {
    built = await route.build(c, marker);
  } catch (e) {
    if (e instanceof URIError) return false; // a lone surrogate cannot be put in a URL
    throw e;
  }
  if (!built) return false;
  let request: Request;
  // Deno's fetch cannot put control characters into a header (hyper refuses them): cannot send.
  // deno-lint-ignore no-control-regex
  const unsendable = /[\x00-\x08\x0a-\x1f\x7f]/;
  const abort = new AbortController();
  const _request = () =>
    new Request(new URL(worker.url).origin + built!.path, {
      method: built!.method,
      headers: new Headers(built!.headers),
      body: built!.body as BodyInit | undefined,
      redirect: "manual",
      signal: abort.signal,
    });
  try {
    request = _request();
    for (const [, v] of request.headers) if (unsendable.test(v)) throw new TypeError(v);
  } catch (e) {
    // Headers refuse values outside Latin-1 (and CR/LF/NUL); fetch refuses some methods: cannot send.
    if (e instanceof TypeError) {
      stats.skipped++;
      return false;
    }
    throw e;
  }
  const timer = setTimeout(() => abort.abort(), 60_000);
  let res: Response;
  let text: string;
  try {
    try {
      res = await fetch(request);
    } catch (e) {
      // A connection reset on two busy cores says nothing about the input: asked once more. A
      // case that really breaks the connection fails again.
      if (!(e instanceof TypeError) || abort.signal.aborted) throw e;
      stats.retried++;
      await new Promise((r) => setTimeout(r, 200));
      res = await fetch(_request());
    }
  } catch (e) {
    clearTimeout(timer);
    // The same reset can come before the answer's status is read, while the oversized body is
    // still going out: workerd refused it by its Content-Length, unread (it started no turn).
    if ((built.body?.length ?? 0) > MAX_BODY) {
      stats.sent++;
      stats.refusedUnread++;
      stats.statuses.set(413, (stats.statuses.get(413) ?? 0) + 1);
      markerStatus.set(n, 413);
      return true;
    }
    throw new Error(`${route.name}: request failed (${e})\n${describe(built)}`);
  }
  try {
    text = await res.text();
  } catch (e) {
    // A 413 is answered before the oversized body is read; workerd then closes the connection
    // with that body unread, and the reset can cut the answer's body short (the status arrived).
    // So can any refusal of a body over 1 MiB that the route's own limit let in (the OpenAI
    // routes take one medium more when MEDIA is bound): a 401 for a bad key reads no body either.
    const refused = res.status >= 400 && res.status < 500;
    if (refused && (built.body?.length ?? 0) > MAX_BODY) {
      stats.sent++;
      stats.refusedUnread++;
      stats.statuses.set(res.status, (stats.statuses.get(res.status) ?? 0) + 1);
      markerStatus.set(n, res.status);
      return true;
    }
    throw new Error(`${route.name}: reading the answer failed (${e})\n${describe(built)}`);
  } finally {
    clearTimeout(timer);
  }
  stats.sent++;
  stats.statuses.set(res.status, (stats.statuses.get(res.status) ?? 0) + 1);
  const size = built.body?.length ?? 0;
  if (size >= 512 * 1024 && size <= MAX_BODY) {
    stats.large.set(res.status, (stats.large.get(res.status) ?? 0) + 1);
  }
  markerStatus.set(n, res.status);
  const fail = (why: string) =>
    new Error(
      `${route.name}: ${why}\n${describe(built!)}\n  answer: ${res.status} ${
        res.headers.get("content-type")
      } ${JSON.stringify(text.slice(0, 300))}`,
    );
  const okStatus = (res.status >= 200 && res.status < 300) ||
    (res.status >= 400 && res.status < 500);
  if (!okStatus) throw fail(`status ${res.status} is neither 2xx nor 4xx`);
  const type = res.headers.get("content-type") ?? "";
  if (type.startsWith("text/event-stream")) {
    if (!built.sseAllowed || res.status !== 200) throw fail("unexpected text/event-stream");
  } else if (_consoleFile(built.method, res.status, type)) {
    // One of the web console's files (a GET or HEAD no route matched): not JSON, by design.
  } else if (built.textAnswer && res.status < 300 && type.startsWith(built.textAnswer)) {
    // The platform's own acknowledgement (TwiML): not JSON by design.
  } else if (
    // A 202 with no body: POST /mcp accepting only notifications, as the MCP transport must.
    !(built.method.toUpperCase() === "HEAD" || res.status === 204 ||
      (res.status === 202 && text === ""))
  ) {
    if (!type.startsWith("application/json")) throw fail("content-type is not application/json");
    try {
      JSON.parse(text);
    } catch {
      throw fail("body is not JSON");
    }
  }
  route.seen?.(res, text);
  return true;
}

/** Sends RUNS cases of `route` (BATCH at a time) and asserts every one was sent and answered well. */
async function fuzzRoute<C>(worker: TestWorker, route: RouteFuzz<C>, seed: number): Promise<void> {
  const stats: Stats = {
    sent: 0,
    skipped: 0,
    refusedUnread: 0,
    retried: 0,
    statuses: new Map(),
    large: new Map(),
  };
  const started = performance.now();
  console.log(`${route.name}: seed=${seed} runs=${RUNS} batch=${BATCH}`);
  if (BATCH === 1) {
    await fc.assert(
      fc.asyncProperty(route.arb, async (c) => {
        fc.pre(await sendCase(worker, route, c, stats));
      }),
      { numRuns: RUNS, seed },
    );
  } else {
    // Cases go out BATCH at a time; an unsendable case is replaced by a spare one of the run.
    await fc.assert(
      fc.asyncProperty(
        fc.array(route.arb, { minLength: BATCH * 4, maxLength: BATCH * 4 }),
        async (cases) => {
          let sent = 0;
          let inFlight = 0;
          const queue = [...cases];
          const lane = async () => {
            while (sent + inFlight < BATCH && queue.length) {
              inFlight++;
              const ok = await sendCase(worker, route, queue.shift()!, stats);
              inFlight--;
              if (ok) sent++;
            }
          };
          await Promise.all(Array.from({ length: BATCH }, lane));
        },
      ),
      { numRuns: Math.ceil(RUNS / BATCH), seed },
    );
  }
  const tally = (m: Map<number, number>) =>
    [...m].sort(([a], [b]) => a - b).map(([s, k]) => `${s}×${k}`).join(" ");
  const statuses = [tally(stats.statuses)];
  if (stats.large.size) statuses.push(`(near the cap: ${tally(stats.large)})`);
  console.log(
    `${route.name}: ${stats.sent} sent, ${stats.skipped} unsendable, ${
      ((performance.now() - started) / 1000).toFixed(1)
    } s; ${statuses.join(" ")}${
      stats.refusedUnread
        ? ` (${stats.refusedUnread} refusals of an unread body cut short by the connection reset)`
        : ""
    }${stats.retried ? ` (${stats.retried} sent again after a connection reset)` : ""}`,
  );
  assert(stats.sent >= RUNS, `${route.name}: only ${stats.sent} of ${RUNS} cases sent`);
}

/** Waits until no model call is in flight and none has started for a while. */
async function quiet(fake: FakeModel, platform: FakePlatform): Promise<void> {
  const deadline = Date.now() + 30_000;
  let last = -1;
  let stableSince = Date.now();
  while (Date.now() < deadline) {
    const now = fake.requests.length + platform.calls.length;
    if (now !== last || fake.inFlight > 0) {
      last = now;
      stableSince = Date.now();
    } else if (Date.now() - stableSince > 750) return;
    await new Promise((r) => setTimeout(r, 50));
  }
}

Deno.test("every route: fuzzed requests answer 2xx/4xx JSON and rejected ones start no turn", async (t) => {
  console.log(`fuzz: seed=${SEED} runs=${RUNS} batch=${BATCH} (FUZZ_SEED, FUZZ_RUNS, FUZZ_BATCH)`);
  // The platform first: the drivers point at it (Teams' serviceUrl, the published keys).
  const platform = await startFakePlatform();
  try {
    await withPlatform(webhookVars(platform), async (worker, fake) => {
      // The order fixes each route's seed (SEED + index): keep it.
      const routes: RouteFuzz<never>[] = [
        ...API_ROUTES,
        ...(WEBHOOKS.map(webhookFuzz) as unknown as RouteFuzz<never>[]),
        RANDOM_ROUTE,
        ...ACCESS_ROUTES,
        // Added later, so appended: the routes above keep their seeds.
        ...(MORE_WEBHOOKS.map(webhookFuzz) as unknown as RouteFuzz<never>[]),
        MCP_ROUTE,
        // Media parts and attachments (MEDIA is bound: admitted ones are stored and run).
        ...MEDIA_ROUTES,
      ];
      // Replays first, while the drivers' ids are fresh (a fuzzed case may reuse one of their ids
      // later and be taken for a copy, which is the dedup's job); their seeds follow the routes'.
      const replayed: [typeof REPLAY_DRIVERS[number], string[]][] = [];
      for (const [i, driver] of REPLAY_DRIVERS.entries()) {
        await t.step(
          `${driver.name} replays: copies of a signed delivery are acknowledged`,
          async () => {
            const markers = await fuzzReplays(
              worker,
              driver,
              SEED + routes.length + i,
              REPLAY_RUNS,
              () => `REPLAY-${_nextReplay++}.`,
            );
            replayed.push([driver, markers]);
          },
        );
      }
      for (const [i, route] of routes.entries()) {
        await t.step(`${route.name}: answers 2xx/4xx with JSON for fuzzed input`, async () => {
          await fuzzRoute(worker, route, SEED + i);
        });
      }
      await t.step("replays: each message ran once and was answered once", async () => {
        await quiet(fake, platform);
        const wrong = replayed.flatMap(([driver, markers]) =>
          replayVerdicts(driver, markers, fake, platform)
        );
        const total = replayed.reduce((n, [, markers]) => n + markers.length, 0);
        console.log(
          `replays: ${total} messages sent again 1–3 times; ${wrong.length} ran or answered other than once`,
        );
        assert(wrong.length === 0, `replayed messages:\n${wrong.slice(0, 20).join("\n")}`);
      });
      await t.step("fake model: no request text came from a rejected request", async () => {
        await quiet(fake, platform);
        const leaked: string[] = [];
        let accepted = 0;
        for (const req of fake.requests) {
          for (const m of JSON.stringify(req.body).matchAll(/FUZZ-([0-9]+)\./g)) {
            const status = markerStatus.get(Number(m[1]));
            if (status === undefined || status >= 400) leaked.push(`${m[0]} (status ${status})`);
            else accepted++;
          }
        }
        console.log(
          `fake model: ${fake.requests.length} requests, ${accepted} accepted markers, ${leaked.length} from rejected requests`,
        );
        assert(
          leaked.length === 0,
          `turns started by rejected requests: ${leaked.slice(0, 20).join(", ")}`,
        );
      });
    }, { platform, media: true });
  } finally {
    await platform.close();
  }
});

/** Whether an answer is one of the console's static files: a 200 to GET or HEAD as page, script or style. */
function _consoleFile(method: string, status: number, type: string): boolean {
  const read = method.toUpperCase() === "GET" || method.toUpperCase() === "HEAD";
  return read && status === 200 && /^text\/(html|javascript|css)\b/.test(type);
}

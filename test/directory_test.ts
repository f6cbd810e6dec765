// The session directory through workerd: rows written by session objects into a local D1, GET /v1/sessions's scoping, filters, cursor and a D1 outage; Deno + Miniflare.
import { assert, assertEquals, assertMatch } from "@std/assert";
import {
  API_KEY,
  chat,
  chatReply,
  type Json,
  json,
  sendWebhook,
  until,
  withBaton,
} from "./_support/clients.ts";
import { holdOn } from "./_support/fake_llm_scripts.ts";
import { sharedBaton } from "./_support/shared_baton.ts";
import { migrateDirectory, type TestWorker } from "./_support/worker.ts";

const ACME_KEY = "acme-key-0123456789";
const BETA_KEY = "beta-key-0123456789";
const TENANTS = { GATEWAY_API_KEYS: `acme:${ACME_KEY},beta:${BETA_KEY}` };
/** The paging test's own tenant: its 500 rows stay out of every other test's listing. */
const PAGING_KEY = "paging-key-0123456789";

// One Worker for the tests that list only their own sessions (by tenant or by key). The complete
// listing (no next page), the D1 outage and the missing binding each start their own.
const baton = sharedBaton({
  vars: {
    GATEWAY_API_KEYS: `${TENANTS.GATEWAY_API_KEYS},paging:${PAGING_KEY}`,
    APPROVAL_TOOLS: "session_info",
  },
});

/** The sessions of `data` among `keys`: a test's own on the shared Worker, in listing order. */
const among = (data: Json[], keys: string[]) => data.filter((s) => keys.includes(s.key));

/** GET /v1/sessions with `query`, as `key`; the status and the body. */
async function list(
  worker: TestWorker,
  query: Record<string, string> = {},
  key = API_KEY,
): Promise<{ status: number; body: Json }> {
  const res = await worker.fetch(`/v1/sessions?${new URLSearchParams(query)}`, {
    headers: { authorization: `Bearer ${key}` },
  });
  return { status: res.status, body: await json(res) };
}

/** The keys listed (one page of 100) once `check` holds for the page. */
async function listedWhen(
  worker: TestWorker,
  check: (data: Json[]) => boolean,
  query: Record<string, string> = {},
  key = API_KEY,
  what = "the directory",
): Promise<Json[]> {
  let data: Json[] = [];
  await until(async () => {
    const page = await list(worker, { limit: "100", ...query }, key);
    data = page.status === 200 ? page.body.data : [];
    return check(data);
  }, what);
  return data;
}

Deno.test("GET /v1/sessions lists API and webhook sessions after their turns, with title, times and status", async () => {
  await withBaton(async (worker) => {
    await chatReply(await chat(worker, "  Plan the\n trip to Lisbon  ", { session: "trip" }));
    await chatReply(await chat(worker, "and book it", { session: "trip" }));
    await chatReply(await chat(worker, "x".repeat(200), { session: "long" }));
    const hook = await sendWebhook(worker, { session: "ops", text: "deploy status?" });
    assertEquals(hook.status, 200);
    await hook.body?.cancel();
    const data = await listedWhen(
      worker,
      (d) => d.length === 3 && d.every((s) => s.status === "idle"),
    );
    const byKey = new Map(data.map((s) => [s.key, s]));
    const trip = byKey.get("api:trip");
    assertEquals(trip.platform, "api");
    assertEquals(trip.title, "Plan the trip to Lisbon");
    assertEquals(trip.queued, 0);
    assertEquals(Object.keys(trip).sort(), [
      "created_at",
      "key",
      "last_activity_at",
      "platform",
      "queued",
      "status",
      "title",
    ]);
    assert(trip.last_activity_at >= trip.created_at);
    assert(Math.abs(trip.created_at - Date.now() / 1000) < 600, "epoch seconds");
    assertEquals([...byKey.get("api:long").title].length, 80);
    assertEquals(byKey.get("webhook:ops").platform, "webhook");
    assertEquals(byKey.get("webhook:ops").title, "deploy status?");
    // Newest first: webhook:ops was created last.
    assertEquals(data[0].key, "webhook:ops");
    assertEquals((await list(worker)).body.next_cursor, null);
  });
});

baton.test("GET /v1/sessions shows a tenant only its own sessions, an admin key its own and the platforms'", async (worker) => {
  await chatReply(await chat(worker, "acme one", { session: "a1", key: ACME_KEY }));
  await chatReply(await chat(worker, "acme two", { session: "a2", key: ACME_KEY }));
  await chatReply(await chat(worker, "beta one", { session: "b1", key: BETA_KEY }));
  await chatReply(await chat(worker, "default one", { session: "d1" }));
  await (await sendWebhook(worker, { session: "w1", text: "hook" })).body?.cancel();
  const keys = (data: Json[]) => data.map((s) => s.key).sort();
  assertEquals(
    keys(await listedWhen(worker, (d) => d.length === 2, {}, ACME_KEY, "acme's")),
    ["api.acme:a1", "api.acme:a2"],
  );
  assertEquals(
    keys(await listedWhen(worker, (d) => d.length === 1, {}, BETA_KEY, "beta's")),
    ["api.beta:b1"],
  );
  // `default` is the admin tenant (ADMIN_API_KEYS unset): its own sessions and the platforms',
  // not the tenants' (the shared Worker's other sessions left out).
  const own = ["api.acme:a1", "api.acme:a2", "api.beta:b1", "api:d1", "webhook:w1"];
  assertEquals(
    keys(
      among(
        await listedWhen(worker, (d) => among(d, own).length === 2, {}, API_KEY, "the admin's"),
        own,
      ),
    ),
    ["api:d1", "webhook:w1"],
  );
});

baton.test(
  "GET /v1/sessions filters by platform and status, queued counting the waiting messages",
  async (worker, fake) => {
    fake.script(holdOn("slow"));
    await chatReply(await chat(worker, "quick", { session: "idle" }));
    await (await sendWebhook(worker, { session: "w", text: "hook" })).body?.cancel();
    const slow = chat(worker, "slow", { session: "busy" });
    await fake.waitForRequests(3);
    const queued = [
      chat(worker, "next 1", { session: "busy" }),
      chat(worker, "next 2", { session: "busy" }),
    ];
    const own = ["api:idle", "webhook:w", "api:busy"];
    const running = among(
      await listedWhen(
        worker,
        (d) => among(d, own).length === 1 && among(d, own)[0].queued === 2,
        { status: "running" },
      ),
      own,
    );
    assertEquals(running[0].key, "api:busy");
    const idle = among(
      await listedWhen(worker, (d) => among(d, own).length === 2, { status: "idle" }),
      own,
    );
    assertEquals(idle.map((s) => s.key).sort(), ["api:idle", "webhook:w"]);
    const hooks = among(
      await listedWhen(worker, (d) => among(d, own).length === 1, { platform: "webhook" }),
      own,
    );
    assertEquals(hooks.map((s) => s.key), ["webhook:w"]);
    assertEquals((await list(worker, { platform: "telegram" })).body.data, []);
    fake.release();
    await chatReply(await slow);
    for (const reply of queued) await chatReply(await reply);
    await listedWhen(worker, (d) => among(d, own).length === 3, { status: "idle" });
  },
);

baton.test("GET /v1/sessions refuses bad parameters with a 400 JSON error", async (worker) => {
  for (
    const [query, field] of [
      [{ limit: "0" }, "limit"],
      [{ limit: "1000" }, "limit"],
      [{ limit: "many" }, "limit"],
      [{ status: "done" }, "status"],
      [{ order: "title" }, "order"],
      [{ cursor: "garbage!" }, "cursor"],
      [{ cursor: btoa('{"o":"created","t":"x","k":1}') }, "cursor"],
    ] as const
  ) {
    const { status, body } = await list(worker, query);
    assertEquals(status, 400, JSON.stringify(query));
    assertEquals(body.error.type, "invalid_request_error");
    assertMatch(body.error.message, new RegExp(`^${field}:`));
  }
  assertEquals((await list(worker, {}, "wrong-key-0123456789")).status, 401);
});

/**
 * Seeds `n` directory rows of `tenant` straight into D1 (the listing reads nothing else), created a
 * second apart.
 */
async function seedRows(
  worker: TestWorker,
  n: number,
  start: number,
  tenant: string,
): Promise<string[]> {
  const db = await worker.mf.getD1Database("DIRECTORY");
  const keys = Array.from(
    { length: n },
    (_, i) => `api.${tenant}:seed-${String(i).padStart(4, "0")}`,
  );
  const insert = db.prepare(
    `INSERT INTO session_directory (key, tenant, platform, title, created_at, last_activity_at,
       messages, turns, status, queued, updated_at)
     VALUES (?, ?, 'api', ?, ?, ?, 1, 1, 'idle', 0, ?)`,
  );
  // Pairs share a created_at: the key breaks the tie.
  const times = keys.map((_, i) => start + Math.floor(i / 2) * 1_000);
  await db.batch(keys.map((k, i) => insert.bind(k, tenant, k, times[i], times[i], times[i])));
  return keys;
}

baton.test("GET /v1/sessions pages 500 sessions with no gap or repeat while sessions are created and active", async (worker) => {
  // In a tenant of its own: the shared Worker's other sessions stay out of its pages.
  const seeded = await seedRows(worker, 500, Date.now() - 3_600_000, "paging");
  const db = await worker.mf.getD1Database("DIRECTORY");
  let churn = 0;
  // Meanwhile: new sessions through real turns, and seeded sessions' activity moving forward.
  const busy = async () => {
    for (let i = 0; i < 12; i++) {
      await chatReply(
        await chat(worker, `new ${i}`, { session: `fresh-${i}`, key: PAGING_KEY }),
      );
      await db.prepare(
        `UPDATE session_directory SET last_activity_at = ? WHERE key = ?`,
      ).bind(Date.now() + i, seeded[(i * 37) % seeded.length]).run();
      churn++;
    }
  };
  const pageAll = async (order: string) => {
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const { status, body }: { status: number; body: Json } = await list(worker, {
        limit: "23",
        order,
        ...(cursor ? { cursor } : {}),
      }, PAGING_KEY);
      assertEquals(status, 200);
      assert(body.data.length <= 23);
      seen.push(...body.data.map((s: Json) => s.key));
      cursor = body.next_cursor;
    } while (cursor);
    return seen;
  };
  const [created] = await Promise.all([pageAll("created"), busy()]);
  assertEquals(new Set(created).size, created.length, "no session listed twice");
  const listed = new Set(created);
  assertEquals(seeded.filter((k) => !listed.has(k)), [], "no seeded session missed");
  assert(churn > 0);
  // Newest activity first: a session active meanwhile may jump ahead of the cursor, but none repeats.
  const [activity] = await Promise.all([pageAll("activity"), busy()]);
  assertEquals(new Set(activity).size, activity.length, "no session listed twice by activity");
});

Deno.test("GET /v1/sessions: a D1 outage never fails a turn, and the row appears once D1 works again", async () => {
  await withBaton(async (worker) => {
    // The binding is there, the table is not: every directory query fails in the real D1.
    assertEquals(await chatReply(await chat(worker, "hello", { session: "dark" })), "hello");
    assertEquals(await chatReply(await chat(worker, "again", { session: "dark" })), "again");
    const down = await list(worker);
    assertEquals(down.status, 503);
    assertEquals(down.body.error.type, "unavailable");
    // The sync gathers changes a moment before it writes: let a write meet the outage first.
    for (let i = 0; i < 100 && !worker.output().includes("row not written"); i++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    await migrateDirectory(worker.mf);
    // No new message: the retry the failed write armed (the session's alarm) writes the row.
    const deadline = Date.now() + 120_000;
    let data: Json[] = [];
    while (Date.now() < deadline) {
      data = (await list(worker)).body.data ?? [];
      if (data.length) break;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    assertEquals(data.map((s) => [s.key, s.title, s.status]), [["api:dark", "hello", "idle"]]);
    // The failed writes were logged as JSON lines naming their session.
    const warning = worker.output().split("\n").filter((l) => l.startsWith("{")).map((l) =>
      JSON.parse(l)
    ).find((l) => l.message === "directory: row not written; retrying");
    assertEquals(warning?.level, "warn");
    assertEquals(warning?.session_key, "api:dark");
  }, { directory: "unmigrated" });
});

Deno.test("GET /v1/sessions without the DIRECTORY binding is a 503; turns run as before", async () => {
  await withBaton(async (worker) => {
    assertEquals(await chatReply(await chat(worker, "hi", { session: "s" })), "hi");
    const { status, body } = await list(worker);
    assertEquals(status, 503);
    assertEquals(body.error.type, "not_configured");
  }, { directory: "none" });
});

baton.test(
  "GET /v1/sessions shows a run paused for approval as waiting_for_approval, then idle",
  async (worker, fake) => {
    fake.script((req) =>
      req.body.messages.at(-1).role === "tool"
        ? { kind: "text", text: "done" }
        : { kind: "tool_call", name: "session_info", args: {} }
    );
    const headers = { authorization: `Bearer ${API_KEY}`, "content-type": "application/json" };
    const started = await worker.fetch("/v1/runs", {
      method: "POST",
      headers,
      body: JSON.stringify({ input: "may I?", session: "asks" }),
    });
    assertEquals(started.status, 202);
    const { run_id } = await json(started);
    const own = ["api:asks"];
    const waiting = among(
      await listedWhen(worker, (d) => among(d, own).length === 1, {
        status: "waiting_for_approval",
      }),
      own,
    );
    assertEquals([waiting[0].key, waiting[0].title], ["api:asks", "may I?"]);
    const approved = await worker.fetch(`/v1/runs/${run_id}/approval`, {
      method: "POST",
      headers,
      body: JSON.stringify({ choice: "once" }),
    });
    assertEquals(approved.status, 200);
    await approved.body?.cancel();
    await listedWhen(worker, (d) => among(d, own).length === 1, { status: "idle" });
  },
);

baton.done();

// Unit tests for a run's event log and its live subscribers: text deltas sent at once, stored with the next event (issue 32); Deno.
import { assert, assertEquals } from "@std/assert";
import type { Transport } from "../runtime/mod.ts";
import type { Claim } from "./claim.ts";
import { sqliteStorage } from "./_sqlite_storage.ts";
import { SessionStores } from "./session_stores.ts";
import { timelineRecorder } from "./turn_trace.ts";
import type { InboundMessage, RunEvent } from "./types.ts";

/** A session over node:sqlite counting its storage transactions, with one claimed run that asked for events. */
function claimedRun(storage = sqliteStorage()) {
  let transactions = 0;
  const counted = {
    ...storage,
    transactionSync<T>(fn: () => T): T {
      transactions++;
      return storage.transactionSync(fn);
    },
  };
  let clock = 1_000;
  const stores = new SessionStores(counted, () => clock++);
  const message: InboundMessage = { text: "go", context: { session_key: "api:ev" }, events: true };
  const claim = stores.db.transaction((tx) => {
    const seq = stores.inbox.insert(tx, message, 0, "queued");
    const taken = stores.claims.take(tx, seq, 0)!;
    stores.events.emit(tx, seq, "run.started", {});
    return taken;
  });
  return { storage, stores, claim, message, transactions: () => transactions };
}

/** A transport that records what it is sent, and whether it was closed. */
function recording() {
  const seen: RunEvent[] = [];
  let closed = false;
  const transport: Transport<RunEvent> = {
    write: (event) => (seen.push(event), true),
    close: () => void (closed = true),
  };
  return { transport, seen, closed: () => closed };
}

/** Settles the claimed run as completed with `reply`, as a turn's end does (its final event). */
function complete(stores: SessionStores, claim: Claim, reply: string): void {
  const usage = { prompt_tokens: 1, completion_tokens: 1 };
  stores.db.transaction((tx) =>
    stores.release(tx, claim.seq, { status: "completed", reply, usage })
  );
}

const deltas = (events: RunEvent[]) =>
  events.filter((e) => e.type === "message.delta").map((e) => String(e.data.delta));

Deno.test("timelineRecorder() stores a model call's 20 deltas in one transaction, and a replay after the run gives the live events", () => {
  const { stores, claim, message, transactions } = claimedRun();
  const live = recording();
  stores.events.subscribe(claim.seq, live.transport);
  const record = timelineRecorder(stores, claim, message);
  const before = transactions();
  const words = Array.from({ length: 20 }, (_, i) => `w${i} `);
  for (const word of words) record("message.delta", { delta: word });
  record("model.completed", { step: 1, duration_ms: 5 });
  // Old code: one transaction per delta (20), then the model call's end (21).
  assert(
    transactions() - before <= 1,
    `${transactions() - before} transactions for 20 deltas and a model call's end`,
  );
  assertEquals(deltas(live.seen), words); // every delta reached the subscriber, in order
  complete(stores, claim, words.join(""));
  assert(live.closed());

  const after = recording();
  stores.events.subscribe(claim.seq, after.transport);
  assertEquals(after.seen, live.seen);
  assert(after.closed());
  const timeline = stores.events.timeline(claim.seq).map((e) => e.type);
  assertEquals(timeline, [
    "run.started",
    ...words.map(() => "message.delta"),
    "model.completed",
    "run.completed",
  ]);
});

Deno.test("RunEventStore.subscribe() mid-call replays the deltas not stored yet, then the live ones, once each and in order", () => {
  const { stores, claim, message } = claimedRun();
  const record = timelineRecorder(stores, claim, message);
  record("message.delta", { delta: "a" });
  record("tool.started", { tool: "t", call_id: "c1" }); // stores "a" before itself
  record("message.delta", { delta: "b" });
  record("message.delta", { delta: "c" });
  const joined = recording();
  stores.events.subscribe(claim.seq, joined.transport);
  record("message.delta", { delta: "d" });
  complete(stores, claim, "abcd");
  assertEquals(joined.seen.map((e) => e.type === "message.delta" ? e.data.delta : e.type), [
    "run.started",
    "a",
    "tool.started",
    "b",
    "c",
    "d",
    "run.completed",
  ]);
  const replay = recording();
  stores.events.subscribe(claim.seq, replay.transport);
  assertEquals(replay.seen, joined.seen);
});

Deno.test("RunEventStore.timeline() shows a running call's deltas not stored yet after the stored events", () => {
  const { stores, claim, message } = claimedRun();
  const record = timelineRecorder(stores, claim, message);
  record("message.delta", { delta: "x" });
  assertEquals(stores.events.timeline(claim.seq).map((e) => e.type), [
    "run.started",
    "message.delta",
  ]);
});

Deno.test("RunEventStore.restartAttempt() drops a dead attempt's deltas not stored yet: the next event stores none of them", () => {
  const { stores, claim, message } = claimedRun();
  timelineRecorder(stores, claim, message)("message.delta", { delta: "dead" });
  stores.db.transaction((tx) => stores.events.restartAttempt(tx, claim.seq));
  stores.db.transaction((tx) => stores.events.emit(tx, claim.seq, "run.started", {}));
  assertEquals(deltas(stores.events.timeline(claim.seq)), []);
});

Deno.test("RunEventStore.dropResumedText() drops the deltas not stored yet with the stored ones after the last answer", () => {
  const { stores, claim, message } = claimedRun();
  const record = timelineRecorder(stores, claim, message);
  record("message.delta", { delta: "asked " });
  stores.db.transaction((tx) =>
    stores.events.emit(tx, claim.seq, "approval.responded", { choice: "once" })
  );
  record("message.delta", { delta: "stored " });
  record("tool.started", { tool: "t", call_id: "c1" });
  record("message.delta", { delta: "kept" });
  stores.db.transaction((tx) => stores.events.dropResumedText(tx, claim.seq));
  stores.db.transaction((tx) => stores.events.emit(tx, claim.seq, "run.steered", {}));
  assertEquals(deltas(stores.events.timeline(claim.seq)), ["asked "]);
});

Deno.test("timelineRecorder() of a stopped run sends and keeps none of its late deltas", () => {
  const { stores, claim, message } = claimedRun();
  const live = recording();
  stores.events.subscribe(claim.seq, live.transport);
  const record = timelineRecorder(stores, claim, message);
  record("message.delta", { delta: "before " });
  stores.db.transaction((tx) => stores.claims.release(tx, true));
  record("message.delta", { delta: "late" });
  assertEquals(deltas(live.seen), ["before "]);
});

Deno.test("RunEventStore loses no delta when the transaction storing it rolls back: the next event stores it", () => {
  const { stores, claim, message } = claimedRun();
  const record = timelineRecorder(stores, claim, message);
  record("message.delta", { delta: "kept" });
  try {
    stores.db.transaction((tx) => {
      stores.events.emit(tx, claim.seq, "tool.started", { tool: "t", call_id: "c1" });
      throw new Error("rolled back");
    });
  } catch { /* the test's own rollback */ }
  record("tool.started", { tool: "t", call_id: "c2" });
  assertEquals(
    stores.events.timeline(claim.seq).map((e) =>
      e.type === "message.delta" ? e.data.delta : e.type
    ),
    ["run.started", "kept", "tool.started"],
  );
});

Deno.test("RunEventStore in a restarted instance replays the deltas its predecessor stored, none it kept in memory", () => {
  const first = claimedRun();
  const record = timelineRecorder(first.stores, first.claim, first.message);
  record("message.delta", { delta: "stored" });
  record("model.completed", { step: 1 });
  record("message.delta", { delta: "in memory" });
  const restarted = new SessionStores(first.storage, () => 0);
  assertEquals(deltas(restarted.events.timeline(first.claim.seq)), ["stored"]);
});

Deno.test("RunEventStore.recorded() reads no row for a run this instance started, and still answers for one started before a restart", () => {
  const storage = sqliteStorage();
  let reads = 0;
  const exec = storage.sql.exec;
  storage.sql.exec = (query, ...bindings) => {
    if (/^SELECT 1 FROM run_events/.test(query)) reads++;
    return exec(query, ...bindings);
  };
  const { stores, claim } = claimedRun(storage);
  assertEquals(stores.events.recorded(claim.seq), true);
  assertEquals(reads, 0, "its start was emitted here");
  const fresh = stores.db.transaction((tx) =>
    stores.inbox.insert(tx, { text: "x", context: { session_key: "api:ev" } }, 0, "queued")
  );
  assertEquals(stores.events.recorded(fresh), false, "nothing recorded: read");
  const restarted = new SessionStores(storage, () => 5_000);
  assertEquals(restarted.events.recorded(claim.seq), true, "a restarted instance reads the row");
  stores.db.transaction((tx) => stores.events.restartAttempt(tx, claim.seq));
  assertEquals(stores.events.recorded(claim.seq), false, "a dropped attempt's start is gone");
});

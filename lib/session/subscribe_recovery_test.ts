// Unit test of a subscriber that reaches a restarted session object first: it never replays what the dead attempt recorded; Deno.
import { assertEquals } from "@std/assert";
import type { Transport } from "../runtime/mod.ts";
import { type RunEvent, SessionSentinel, type TurnExecutor } from "./mod.ts";
import { options } from "./_sentinel_fixtures.ts";
import { sqliteStorage } from "./_sqlite_storage.ts";

/** Streams `text` as a run event, then answers it (or, `dies`, hangs for good: its object dies). */
function streaming(text: string, dies: boolean): TurnExecutor {
  return (_message, _history, _signal, progress) => {
    progress.emit?.("message.delta", { delta: text });
    if (dies) return new Promise(() => {});
    const usage = { prompt_tokens: 0, completion_tokens: 0 };
    return Promise.resolve({ reply: text, messages: [], usage });
  };
}

Deno.test("SessionSentinel.subscribe() in a restarted object replays none of the dead attempt's events", async () => {
  const storage = sqliteStorage();
  const dead: SessionSentinel = new SessionSentinel(storage, streaming("dead text", true), {
    ...options,
    startDrain: () => void dead.drain(),
  });
  const { seq } = dead.submit({ text: "go", context: { session_key: "api:x" }, events: true });
  await new Promise((r) => setTimeout(r, 10));

  const restarted: SessionSentinel = new SessionSentinel(storage, streaming("alive", false), {
    ...options,
    startDrain: () => void restarted.drain(),
  });
  const seen: RunEvent[] = [];
  const transport: Transport<RunEvent> = { write: (e) => (seen.push(e), true), close: () => {} };
  restarted.subscribe(seq, transport);
  await restarted.outcome(seq);
  assertEquals(
    seen.map((e) => e.type === "message.delta" ? `delta ${e.data.delta}` : e.type),
    ["run.queued", "run.started", "delta alive", "run.completed"],
  );
});

// Unit tests for lib/session/transcript.ts over node:sqlite; Deno.
import { assertEquals } from "@std/assert";
import type { ChatMessage } from "../chat_model.ts";
import { migrate } from "./schema.ts";
import { SessionDb } from "./session_db.ts";
import { TranscriptStore } from "./transcript.ts";
import { sqliteStorage } from "./_sqlite_storage.ts";

Deno.test("TranscriptStore.window() answers from its copy exactly what a fresh read gives", () => {
  const db = new SessionDb(sqliteStorage());
  migrate(db);
  const store = new TranscriptStore(db);
  const turn = (i: number): ChatMessage[] => [
    { role: "user", content: `q${i}` },
    ...(i % 3 ? [] : [{ role: "assistant" as const, content: null, tool_calls: [] }]),
    { role: "assistant", content: `a${i}` },
  ];
  for (let i = 0; i < 30; i++) {
    assertEquals(store.window(0, 7), new TranscriptStore(db).window(0, 7), `before turn ${i}`);
    db.transaction((tx) => store.append(tx, 0, i, turn(i), i));
  }
  assertEquals(store.window(0, 7), new TranscriptStore(db).window(0, 7));
  assertEquals(store.window(1, 7), [], "another conversation is read, not copied");
});

Deno.test("TranscriptStore.window() keeps no message of a rolled-back append", () => {
  const db = new SessionDb(sqliteStorage());
  migrate(db);
  const store = new TranscriptStore(db);
  db.transaction((tx) => store.append(tx, 0, 1, [{ role: "user", content: "kept" }], 1));
  store.window(0, 10);
  try {
    db.transaction((tx) => {
      store.append(tx, 0, 2, [{ role: "user", content: "rolled back" }], 2);
      throw new Error("abort");
    });
  } catch {
    // expected
  }
  assertEquals(store.window(0, 10), [{ role: "user", content: "kept" }]);
});

Deno.test("TranscriptStore.visibleTurns() shows a seeded turn's seed, stops at a turn, skips tool steps", () => {
  const db = new SessionDb(sqliteStorage());
  migrate(db);
  const store = new TranscriptStore(db);
  db.transaction((tx) =>
    store.append(tx, 0, 1, [
      { role: "user", content: "s1" },
      { role: "assistant", content: "s2" },
      { role: "user", content: "q1" },
      { role: "assistant", content: null, tool_calls: [] },
      { role: "assistant", content: "a1" },
    ], 1)
  );
  db.transaction((tx) =>
    store.append(
      tx,
      0,
      2,
      [{ role: "user", content: "q2" }, { role: "assistant", content: "a2" }],
      2,
    )
  );
  const all = ["user:s1", "assistant:s2", "user:q1", "assistant:a1", "user:q2", "assistant:a2"];
  const text = (turns: { role: string; content: string }[]) =>
    turns.map((t) => `${t.role}:${t.content}`);
  assertEquals(text(store.visibleTurns(0)), all);
  assertEquals(text(store.visibleTurns(0, 1)), all.slice(0, 4));
  assertEquals(store.conversationOf(2), 0);
  assertEquals(store.conversationOf(3), null);
});

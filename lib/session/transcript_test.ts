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

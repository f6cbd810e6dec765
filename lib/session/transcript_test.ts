// Unit tests for lib/session/transcript.ts over node:sqlite; Deno.
import { assert, assertEquals } from "@std/assert";
import type { ChatMessage } from "../agent/mod.ts";
import { migrate } from "./schema.ts";
import { SessionDb } from "./session_db.ts";
import { HISTORY_MAX_CHARS, READ_MAX_CHARS, TranscriptStore } from "./transcript.ts";
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

Deno.test("TranscriptStore.window() holds at most HISTORY_MAX_CHARS of text (the newest message always), from its copy as from a fresh read", () => {
  const db = new SessionDb(sqliteStorage());
  migrate(db);
  const store = new TranscriptStore(db);
  const big = 300_000; // spilled: each message is longer than a row keeps
  const turn = (i: number): ChatMessage[] => [
    { role: "user", content: `q${i} ` + "x".repeat(big) },
    { role: "assistant", content: `a${i} ` + "y".repeat(big) },
  ];
  const chars = (messages: ChatMessage[]) => JSON.stringify(messages).length;
  for (let i = 0; i < 12; i++) {
    db.transaction((tx) => store.append(tx, 0, i, turn(i), i));
    const copy = store.window(0, 40);
    const fresh = new TranscriptStore(db).window(0, 40);
    assertEquals(
      copy.map((m) => String(m.content).slice(0, 4)),
      fresh.map((m) => String(m.content).slice(0, 4)),
      `turn ${i}`,
    );
    assert(chars(copy) <= HISTORY_MAX_CHARS + 4 * big, `turn ${i}: ${chars(copy)} chars`);
    assertEquals(copy.at(-1)?.content?.slice(0, 3), `a${i} `.slice(0, 3));
    assertEquals(copy[0].role, "user");
  }
  // Far fewer than the 24 messages HISTORY_WINDOW would allow.
  assert(store.window(0, 40).length <= 4, String(store.window(0, 40).length));
  // One message past the budget on its own is still the turn's history.
  db.transaction((tx) =>
    store.append(tx, 0, 99, [{ role: "user", content: "z".repeat(HISTORY_MAX_CHARS + 10) }], 99)
  );
  assertEquals(store.window(0, 40).length, 1);
  assertEquals(new TranscriptStore(db).window(0, 40).length, 1);
});

Deno.test("TranscriptStore.snapshot() and visibleTurns() read the newest READ_MAX_CHARS of a long conversation, older turns left out whole", () => {
  const db = new SessionDb(sqliteStorage());
  migrate(db);
  const store = new TranscriptStore(db);
  const each = 600_000;
  const n = Math.ceil(READ_MAX_CHARS / each) + 3;
  for (let i = 0; i < n; i++) {
    db.transaction((tx) =>
      store.append(tx, 0, i, [
        { role: "user", content: `q${i} ` + "x".repeat(each / 2) },
        { role: "assistant", content: `a${i} ` + "y".repeat(each / 2) },
      ], i)
    );
  }
  const { messages, omitted } = store.snapshot(0);
  assertEquals(messages.length + omitted, 2 * n);
  assert(omitted > 0);
  assertEquals(messages.at(-1)?.content.slice(0, 3), `a${n - 1} `.slice(0, 3));
  const turns = store.visibleTurns(0);
  assert(turns.length < 2 * n && turns.length > 0, String(turns.length));
  assertEquals(turns[0].role, "user", "a turn is kept whole or left out");
  assertEquals(turns.at(-1)?.content.slice(0, 3), `a${n - 1} `.slice(0, 3));
  assertEquals(store.snapshot(5), { messages: [], omitted: 0 });
});

Deno.test("TranscriptStore.snapshot() lists a user message's media and a tool message's files, never their descriptions", () => {
  const db = new SessionDb(sqliteStorage());
  migrate(db);
  const store = new TranscriptStore(db);
  const photo = {
    id: "aa11/bb22",
    type: "image/png",
    size: 68,
    name: "cat.png",
    description: "a cat",
  };
  const report = { id: "aa11/cc33", type: "application/pdf", size: 2048, name: "report.pdf" };
  const messages = [
    { role: "user", content: "look", media: [photo] },
    { role: "tool", tool_call_id: "c1", content: "{}", files: [report] },
    { role: "assistant", content: "seen" },
  ] as ChatMessage[];
  db.transaction((tx) => store.append(tx, 0, 1, messages, 1));
  assertEquals(store.snapshot(0).messages, [
    {
      role: "user",
      content: "look",
      media: [{ id: "aa11/bb22", type: "image/png", size: 68, name: "cat.png" }],
    },
    { role: "tool", content: "{}", media: [report] },
    { role: "assistant", content: "seen" },
  ]);
});

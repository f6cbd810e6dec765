// Unit tests of media retention (lib/session/media_retention.ts) through the sentinel's alarm, over node:sqlite and a memory media store; Deno.
import { assertEquals, assertStrictEquals } from "@std/assert";
import {
  type ChatMessage,
  type ChatModel,
  defineTool,
  runTurn,
  toolAsks,
  ToolRegistry,
} from "../agent/mod.ts";
import { parseCommand } from "../chat/mod.ts";
import {
  DEFAULT_MEDIA_SETTINGS,
  mediaKey,
  mediaModelView,
  type MediaRef,
  memoryMediaStore,
} from "../media/mod.ts";
import { bindTurn } from "../runtime/mod.ts";
import { options } from "./_sentinel_fixtures.ts";
import { sqliteStorage } from "./_sqlite_storage.ts";
import { SWEEP_RECHECK_MS } from "./media_retention.ts";
import { type InboundMessage, SessionSentinel, type TurnExecutor } from "./mod.ts";

const DAY = 86_400_000;
const RETENTION = 30 * DAY;

/** A 1×1 PNG. */
const PNG = Uint8Array.from(
  atob(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==",
  ),
  (c) => c.charCodeAt(0),
);

/** Stores `bytes` as session test:1 would and returns its reference. */
async function stored(store: ReturnType<typeof memoryMediaStore>, bytes: Uint8Array) {
  const id = await mediaKey("test:1", bytes);
  await store.put(id, bytes, "image/png");
  return { id, type: "image/png", size: bytes.length } satisfies MediaRef;
}

/** A chat message of session test:1 carrying `media`, commands on. */
const chatMsg = (text: string, media: MediaRef[] = []): InboundMessage => ({
  text,
  command: parseCommand(text),
  ...(media.length ? { media } : {}),
  context: { session_key: "test:1", platform: "telegram", user_id: "alice", message_id: text },
});

/** An executor that keeps each message's media on its user message, records histories, answers "ok". */
function mediaExecutor() {
  const histories: ChatMessage[][] = [];
  const execute: TurnExecutor = (message, history) => {
    histories.push(history);
    const user = { role: "user", content: message.text, media: message.media } as ChatMessage;
    return Promise.resolve({
      reply: "ok",
      messages: [user, { role: "assistant", content: "ok" }],
      usage: { prompt_tokens: 0, completion_tokens: 0 },
    });
  };
  return { histories, execute };
}

/** An executor whose model calls the tool `act` (approval: always) for every message, then answers. */
function askingExecutor(): TurnExecutor {
  const act = defineTool({
    name: "act",
    description: "acts",
    parameters: { type: "object" },
    approval: "always",
    run: () => "acted",
  });
  const usage = { prompt_tokens: 1, completion_tokens: 1 };
  const model: ChatModel = {
    name: "fake",
    complete({ messages }) {
      if (messages.at(-1)!.role === "tool") {
        return Promise.resolve({ content: "done", toolCalls: [], usage });
      }
      const call = {
        id: "c1",
        type: "function" as const,
        function: { name: "act", arguments: "{}" },
      };
      return Promise.resolve({ content: "", toolCalls: [call], usage });
    },
  };
  const tools = new ToolRegistry([act]);
  return (message, history, signal, progress, approvals) =>
    bindTurn(message.context, {}, () =>
      runTurn({
        model,
        tools,
        system: [],
        history,
        input: message.text,
        maxSteps: 8,
        signal,
        progress,
        asks: (tool, args) => !approvals?.granted.has(tool.name) && toolAsks(tool, args, new Set()),
        ...(approvals?.resume ? { resume: approvals.resume } : {}),
      }));
}

Deno.test("SessionSentinel.alarm() deletes a medium past MEDIA_RETENTION_DAYS, keeps a newer one, and the next turn shows the expired one's placeholder", async () => {
  let now = 1_000 * DAY;
  const storage = sqliteStorage();
  const store = memoryMediaStore();
  const { histories, execute } = mediaExecutor();
  const sentinel: SessionSentinel = new SessionSentinel(storage, execute, {
    ...options,
    now: () => now,
    mediaRetention: { store, retentionMs: RETENTION },
  });
  // No startDrain: each submit's turn runs in the alarm called here, so its end is awaited.
  const turn = async (message: InboundMessage) => {
    const { seq } = sentinel.submit(message);
    await sentinel.alarm();
    assertStrictEquals((await sentinel.outcome(seq)).status, "completed");
  };
  const old = await stored(store, PNG);
  await turn(chatMsg("first", [old]));
  assertEquals(storage.alarms.at(-1), now + RETENTION, "the alarm is set for the medium's expiry");

  now += 20 * DAY;
  const newer = await stored(store, new Uint8Array([...PNG, 0]));
  await turn(chatMsg("second", [newer]));

  now += 11 * DAY; // the first is 31 days old, the second 11
  await sentinel.alarm();
  assertStrictEquals(store.objects.has(old.id), false, "the expired medium is deleted");
  assertStrictEquals(store.objects.has(newer.id), true, "the newer one stays");

  await turn(chatMsg("third"));
  const view = mediaModelView({ store, settings: DEFAULT_MEDIA_SETTINGS });
  const seen = await view(histories.at(-1)!);
  const firstSeen = seen.find((m) => m.role === "user" && JSON.stringify(m).includes("first"))!;
  assertStrictEquals(
    firstSeen.content,
    `first\n[image: image/png, ${PNG.length} B] (the image could not be shown: it is no longer stored)`,
  );
});

Deno.test("SessionSentinel.alarm() spares a turn's media while it waits for approval past MEDIA_RETENTION_DAYS; /new deletes none; they go once expired and unneeded", async () => {
  let now = 1_000 * DAY;
  const store = memoryMediaStore();
  const sentinel: SessionSentinel = new SessionSentinel(sqliteStorage(), askingExecutor(), {
    ...options,
    now: () => now,
    approvalTimeoutMs: { chat: 60 * DAY, api: 60 * DAY },
    mediaRetention: { store, retentionMs: RETENTION },
    startDrain: () => void sentinel.drain(),
  });
  const image = await stored(store, PNG);
  const asked = sentinel.submit(chatMsg("look", [image]));
  assertStrictEquals(await sentinel.outcome(asked.seq, true), null, "the turn waits for approval");

  now += 31 * DAY;
  await sentinel.alarm();
  assertStrictEquals(sentinel.runState(asked.seq)?.status, "waiting_for_approval");
  assertStrictEquals(store.objects.has(image.id), true, "the paused turn's image is kept");

  sentinel.submit(chatMsg("/new"));
  assertStrictEquals((await sentinel.outcome(asked.seq)).status, "failed", "/new ended the turn");
  assertStrictEquals(store.objects.has(image.id), true, "/new deletes no media");

  now += SWEEP_RECHECK_MS; // the spared medium is looked at again an hour later
  await sentinel.alarm();
  assertStrictEquals(store.objects.has(image.id), false, "expired and no longer needed: deleted");
  assertEquals(await sentinel.alarm(), undefined, "a sweep with nothing due is a no-op");
});

// Unit tests for lib/runtime/session_context.ts; Deno.
import { assertEquals, assertStrictEquals } from "@std/assert";
import {
  asyncDeliverySupported,
  bindTurn,
  contextDefaultsFromEnv,
  contextField,
  currentContext,
  frameJobs,
  frameLogFields,
  withContextFields,
  withLogFields,
  withSessionContext,
  withTurnFrame,
} from "./session_context.ts";

const tick = (ms: number) => new Promise((r) => setTimeout(r, ms));

Deno.test("withSessionContext() isolates overlapping turns across awaits and timers", async () => {
  const seen: string[] = [];
  const turn = (key: string, delays: number[]) =>
    bindTurn({ session_key: key, platform: "telegram", chat_id: key }, {}, async () => {
      for (const ms of delays) {
        await tick(ms);
        seen.push(`${key}:${contextField("session_key")}:${contextField("chat_id")}`);
        await new Promise<void>((resolve) =>
          setTimeout(() => {
            seen.push(`${key}:${contextField("session_key")}`);
            resolve();
          }, ms)
        );
        queueMicrotask(() => seen.push(`${key}:${contextField("session_key")}`));
      }
    });
  await Promise.all([turn("a", [5, 1, 3]), turn("b", [1, 4, 1]), turn("c", [2, 2, 2])]);
  assertEquals(seen.length, 27);
  for (const entry of seen) {
    const [owner, ...values] = entry.split(":");
    for (const v of values) assertStrictEquals(v, owner);
  }
});

Deno.test("contextField() reads the configured default only for fields never bound", () => {
  const defaults = { platform: "discord", chat_id: "fallback-chat", user_name: "fallback-user" };
  withSessionContext({ platform: "telegram", chat_id: "" }, defaults, () => {
    assertStrictEquals(contextField("platform"), "telegram");
    assertStrictEquals(contextField("chat_id"), "", 'bound to "" must not fall back');
    assertStrictEquals(contextField("user_name"), "fallback-user");
    assertStrictEquals(contextField("thread_id"), "");
  });
  withSessionContext({}, defaults, () => assertStrictEquals(contextField("platform"), "discord"));
});

Deno.test('contextField() outside any turn reads "" and nothing of a finished turn', async () => {
  await bindTurn({ session_key: "s1", user_id: "u1" }, {}, async () => {
    await tick(1);
    assertStrictEquals(contextField("session_key"), "s1");
  });
  assertStrictEquals(contextField("session_key"), "");
  assertStrictEquals(contextField("user_id"), "");
});

Deno.test("asyncDeliverySupported() is true when never bound and false when bound false", () => {
  assertStrictEquals(asyncDeliverySupported(), true);
  withSessionContext(
    { platform: "x" },
    {},
    () => assertStrictEquals(asyncDeliverySupported(), true),
  );
  withSessionContext({ async_delivery: false }, {}, () => {
    assertStrictEquals(asyncDeliverySupported(), false);
  });
  bindTurn({ platform: "api" }, {}, () => {
    assertStrictEquals(asyncDeliverySupported(), false);
    assertStrictEquals(contextField("platform"), "api");
  });
});

Deno.test("bindTurn() replaces an outer frame instead of inheriting its fields", () => {
  withSessionContext({ platform: "outer", chat_id: "outer-chat" }, {}, () => {
    bindTurn({ platform: "inner" }, {}, () => {
      assertStrictEquals(contextField("platform"), "inner");
      assertStrictEquals(contextField("chat_id"), "");
    });
    assertStrictEquals(contextField("chat_id"), "outer-chat");
  });
});

Deno.test("currentContext() reports every field and the async flag", () => {
  const ctx = bindTurn({ platform: "api", session_key: "api:x", chat_id: "x" }, {}, currentContext);
  assertEquals(ctx, {
    platform: "api",
    chat_id: "x",
    chat_name: "",
    thread_id: "",
    user_id: "",
    user_name: "",
    session_key: "api:x",
    message_id: "",
    job_id: "",
    async_delivery: false,
  });
});

Deno.test("contextDefaultsFromEnv() reads SESSION_DEFAULT_* strings only", () => {
  assertEquals(
    contextDefaultsFromEnv({
      SESSION_DEFAULT_PLATFORM: "discord",
      SESSION_DEFAULT_CHAT_ID: 5,
      OTHER: "x",
    }),
    { platform: "discord" },
  );
});

Deno.test("withContextFields() binds fields over the enclosing frame's, keeping its other fields and defaults", () => {
  withSessionContext(
    { session_key: "telegram:42", user_id: "7" },
    { user_name: "fallback" },
    () =>
      withContextFields({ platform: "telegram", chat_id: "42", user_id: "8" }, () => {
        assertEquals(
          ["session_key", "platform", "chat_id", "user_id", "user_name"].map((f) =>
            contextField(f as "session_key")
          ),
          ["telegram:42", "telegram", "42", "8", "fallback"],
        );
      }),
  );
  // Outside any frame: only what it binds.
  withContextFields({ chat_id: "9" }, () => assertEquals(currentContext().chat_id, "9"));
});

Deno.test("withTurnFrame() binds a turn's context alone, its jobs and log fields in one frame, keeping the entry's defaults", () => {
  const jobs = { list: () => [] };
  withSessionContext(
    { session_key: "telegram:1", thread_id: "stale", user_id: "other" },
    { user_name: "fallback", chat_id: "fallback-chat", chat_name: "fallback-name" },
    () =>
      withLogFields({ entry: 1 }, () =>
        withTurnFrame(
          {
            context: { session_key: "telegram:2", chat_id: "", user_id: "7" },
            jobs,
            log: { seq: 4 },
          },
          () => {
            assertEquals(
              ["session_key", "thread_id", "user_id", "user_name", "chat_id", "chat_name"].map(
                (f) => contextField(f as "session_key"),
              ),
              // The entry's stale fields are gone; "" stays cleared; never-set fields fall back.
              ["telegram:2", "", "7", "fallback", "", "fallback-name"],
            );
            assertStrictEquals(asyncDeliverySupported(), false);
            assertStrictEquals(frameJobs(), jobs);
            assertEquals(frameLogFields(), { entry: 1, seq: 4 });
            // Fields and log lines added inside the turn keep its jobs.
            withLogFields({ step: 2 }, () => {
              assertStrictEquals(frameJobs(), jobs);
              assertEquals(frameLogFields(), { entry: 1, seq: 4, step: 2 });
            });
            withContextFields({ chat_id: "9" }, () => assertStrictEquals(frameJobs(), jobs));
          },
        )),
  );
  assertStrictEquals(frameJobs(), null);
});

Deno.test("withSessionContext() starts a new frame: no log fields, no jobs of an enclosing one", () => {
  withTurnFrame(
    { context: { session_key: "s" }, jobs: {}, log: { seq: 1 } },
    () =>
      withSessionContext({ platform: "api" }, {}, () => {
        assertEquals(frameLogFields(), {});
        assertStrictEquals(frameJobs(), null);
        assertStrictEquals(contextField("session_key"), "");
        assertStrictEquals(asyncDeliverySupported(), true);
      }),
  );
});

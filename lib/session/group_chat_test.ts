// Unit tests of a group chat's session (several members, one session): per-member grants (approval_gate.ts, approvals.ts) and who may /stop or /new (command_runner.ts, group_stop.ts); Deno over node:sqlite.
import { assertEquals, assertMatch, assertStrictEquals } from "@std/assert";
import { type ChatModel, defineTool, runTurn, toolAsks, ToolRegistry } from "../agent/mod.ts";
import { bindTurn, currentContext } from "../runtime/mod.ts";
import { options } from "./_sentinel_fixtures.ts";
import { sqliteStorage } from "./_sqlite_storage.ts";
import { mayStopTurn } from "./group_stop.ts";
import { type InboundMessage, type SentinelOptions, SessionSentinel } from "./mod.ts";
import { parseCommand } from "../chat/mod.ts";

/** A sentinel whose model calls the asking tool `act` once per message; `runs` lists who ran it. */
function groupSentinel(extra: Partial<SentinelOptions> = {}) {
  const runs: string[] = [];
  const act = defineTool({
    name: "act",
    description: "acts",
    parameters: { type: "object" },
    approval: "always",
    run() {
      runs.push(currentContext().user_id);
      return "acted";
    },
  });
  let calls = 0;
  const usage = { prompt_tokens: 1, completion_tokens: 1 };
  const model: ChatModel = {
    name: "fake",
    complete({ messages }) {
      if (messages.at(-1)!.role === "tool") {
        return Promise.resolve({ content: "done", toolCalls: [], usage });
      }
      const call = { id: `call${++calls}`, type: "function" as const };
      const toolCalls = [{ ...call, function: { name: "act", arguments: "{}" } }];
      return Promise.resolve({ content: "", toolCalls, usage });
    },
  };
  const tools = new ToolRegistry([act]);
  const sentinel: SessionSentinel = new SessionSentinel(
    sqliteStorage(),
    (message, history, signal, progress, approvals) =>
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
          asks: (tool, args) =>
            !approvals?.granted.has(tool.name) && toolAsks(tool, args, new Set()),
          ...(approvals?.resume ? { resume: approvals.resume } : {}),
        })),
    { ...options, ...extra, startDrain: () => void sentinel.drain() },
  );
  return { sentinel, runs };
}

/** `user`'s message in group chat -100 (session test:group), as the webhook route marks it. */
const say = (text: string, user: string, admin = false): InboundMessage => ({
  text,
  command: parseCommand(text),
  group: true,
  ...(admin ? { admin: true } : {}),
  context: { session_key: "test:group", platform: "telegram", chat_id: "-100", user_id: user },
  reply: { platform: "telegram", chat_id: -100 },
});

/** Lets the drains a submit started run until the session has nothing left to do now. */
const settle = () => new Promise((r) => setTimeout(r, 20));

Deno.test("SessionSentinel in a group: alice's /approve always lets only alice's later calls run unasked", async () => {
  const { sentinel, runs } = groupSentinel();
  const first = sentinel.submit(say("go", "alice"));
  await settle();
  assertEquals(
    sentinel.submit(say("/approve always", "alice")).notice,
    "Approved: act runs now and will not ask again here.",
  );
  await sentinel.outcome(first.seq);

  const bobs = sentinel.submit(say("mine", "bob"));
  await settle();
  assertEquals(sentinel.runState(bobs.seq)?.status, "waiting_for_approval", "bob is asked");
  assertEquals(runs, ["alice"], "bob's call did not run on alice's grant");
  assertEquals(sentinel.submit(say("/status", "bob")).notice!.includes("act (always)"), false);
  assertEquals(sentinel.submit(say("/deny", "bob")).notice, "Denied: act will not run.");
  await sentinel.outcome(bobs.seq);

  const again = sentinel.submit(say("again", "alice"));
  assertEquals((await sentinel.outcome(again.seq)).status, "completed");
  assertEquals(runs, ["alice", "alice"], "alice's own call ran unasked");
  assertMatch(sentinel.submit(say("/status", "alice")).notice!, /act \(always\)/);
});

Deno.test("SessionSentinel in a group: bob's /forget approvals leaves alice's grants alone", async () => {
  const { sentinel, runs } = groupSentinel();
  const first = sentinel.submit(say("go", "alice"));
  await settle();
  sentinel.submit(say("/approve always", "alice"));
  await sentinel.outcome(first.seq);
  assertEquals(sentinel.submit(say("/forget approvals", "bob")).notice, "No approvals to forget.");
  const again = sentinel.submit(say("again", "alice"));
  assertEquals((await sentinel.outcome(again.seq)).status, "completed");
  assertEquals(runs, ["alice", "alice"]);
});

Deno.test("SessionSentinel in a group: bob's /stop, /new and /reset of alice's turn are refused; an admin's /stop ends it", async () => {
  const { sentinel } = groupSentinel();
  const first = sentinel.submit(say("go", "alice"));
  await settle();
  const queued = sentinel.submit(say("later", "carol"));
  for (const word of ["stop", "new", "reset"]) {
    assertEquals(
      sentinel.submit(say(`/${word}`, "bob")).notice,
      `Not yours: only who started the current reply (or an admin) can /${word} it.`,
    );
  }
  assertEquals(
    sentinel.runState(first.seq)?.status,
    "waiting_for_approval",
    "alice's turn goes on",
  );
  assertEquals(sentinel.runState(queued.seq)?.status, "queued", "nothing was dropped");
  assertEquals(
    sentinel.submit(say("/stop", "dave", true)).notice,
    "Stopped. The session is unlocked. Dropped 1 waiting message.",
  );
  assertEquals((await sentinel.outcome(first.seq)).status, "failed");
  assertStrictEquals(sentinel.snapshot().running, false);
});

Deno.test("SessionSentinel in a group: the turn's own sender may /new it; anyone may once nothing runs", async () => {
  const { sentinel } = groupSentinel();
  const first = sentinel.submit(say("go", "alice"));
  await settle();
  assertEquals(
    sentinel.submit(say("/new", "alice")).notice,
    "Stopped the current reply. Started a new conversation.",
  );
  assertEquals((await sentinel.outcome(first.seq)).status, "failed");
  assertEquals(sentinel.submit(say("/stop", "bob")).notice, "Nothing was running.");
});

Deno.test("SessionSentinel with GROUP_STOP=anyone lets any member of a group /stop another's turn", async () => {
  const { sentinel } = groupSentinel({ groupStop: "anyone" });
  const first = sentinel.submit(say("go", "alice"));
  await settle();
  assertEquals(sentinel.submit(say("/stop", "bob")).notice, "Stopped. The session is unlocked.");
  assertEquals((await sentinel.outcome(first.seq)).status, "failed");
});

Deno.test("mayStopTurn() allows a 1:1 chat, an idle session, the sender and an admin; refuses another member", () => {
  const member = (userId: string, extra: { group?: boolean; admin?: boolean } = {}) => ({
    group: extra.group ?? true,
    userId,
    admin: extra.admin ?? false,
  });
  assertStrictEquals(mayStopTurn("sender", member("bob", { group: false }), "alice"), true);
  assertStrictEquals(mayStopTurn("sender", member("bob"), null), true);
  assertStrictEquals(mayStopTurn("sender", member("alice"), "alice"), true);
  assertStrictEquals(mayStopTurn("sender", member("bob", { admin: true }), "alice"), true);
  assertStrictEquals(mayStopTurn("sender", member("bob"), "alice"), false);
  assertStrictEquals(mayStopTurn("sender", member(""), ""), false, "no id matches no one");
  assertStrictEquals(mayStopTurn("anyone", member("bob"), "alice"), true);
});

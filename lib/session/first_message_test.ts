// Unit tests for a new session's first message (issue 32, "first message like the hundredth"): the statements it runs beyond a warm session's, over node:sqlite; Deno.
import { assertEquals } from "@std/assert";
import { ClaimStore, FRESH_CLAIM } from "./claim.ts";
import { SessionSentinel } from "./mod.ts";
import { migrate } from "./schema.ts";
import { SessionDb } from "./session_db.ts";
import { msg, options, recordingChannel, recordingExecutor } from "./_sentinel_fixtures.ts";
import { sqliteStorage } from "./_sqlite_storage.ts";

/** The statements (and thrown statements, and alarms set) of each message a new session runs in turn. */
async function traced(texts: string[]): Promise<{ statements: string[]; thrown: string[] }[]> {
  const storage = sqliteStorage();
  let current = { statements: [] as string[], thrown: [] as string[] };
  const exec = storage.sql.exec;
  storage.sql.exec = (query, ...bindings) => {
    const statement = query.replace(/\s+/g, " ").trim();
    current.statements.push(statement);
    try {
      return exec(query, ...bindings);
    } catch (error) {
      current.thrown.push(statement);
      throw error;
    }
  };
  const out = [];
  let sentinel: SessionSentinel | null = null;
  for (const [i, text] of texts.entries()) {
    // The object starts with its first message, as a Durable Object does: its constructor counts.
    sentinel ??= new SessionSentinel(storage, recordingExecutor().execute, {
      ...options,
      channel: recordingChannel([]),
      startDrain: () => void sentinel?.drain(),
    });
    const receipt = sentinel.submit({
      ...msg(text, `d${i}`),
      reply: { platform: "telegram", chat_id: 1 },
    });
    await sentinel.outcome(receipt.seq);
    await sentinel.drain(); // the drain that ran the turn has ended: its last reads are counted
    out.push(current);
    current = { statements: [], thrown: [] };
  }
  return out;
}

/** `a`'s statements that `b` lacks, each as often as it is missing. */
function beyond(a: string[], b: string[]): string[] {
  const left = [...b];
  return a.filter((s) => {
    const i = left.indexOf(s);
    if (i < 0) return true;
    left.splice(i, 1);
    return false;
  });
}

Deno.test("SessionSentinel runs a new session's first message in a warm one's statements, its schema's two aside", async () => {
  const [first, , warm] = await traced(["one", "two", "three"]);
  const extra = beyond(first.statements, warm.statements);
  assertEquals(extra.length, 2, extra.join("\n"));
  assertEquals(extra[0].startsWith("SELECT name FROM sqlite_master"), true, extra[0]);
  assertEquals(extra[1].startsWith("CREATE TABLE IF NOT EXISTS inbox"), true, extra[1]);
  // Fewer reads may remain (the claim a warm turn reads again after its last release).
  assertEquals(first.statements.length <= warm.statements.length + 2, true);
});

Deno.test("SessionSentinel's first message in a new session throws no statement (no version read of a missing table)", async () => {
  const [first] = await traced(["one"]);
  assertEquals(first.thrown, []);
});

Deno.test("FRESH_CLAIM is the run row a new database's schema writes (what a new session knows unread)", () => {
  const db = new SessionDb(sqliteStorage());
  assertEquals(migrate(db), true);
  assertEquals({ ...new ClaimStore(db).state() }, { ...FRESH_CLAIM });
});

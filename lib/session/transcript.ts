// The session's transcript: every kept message of every conversation, and the window a turn sees; runtime-neutral.
import type { ChatMessage } from "../agent/mod.ts";
import { num, type Row, type SessionDb, type SqlValue, str, type Tx } from "./session_db.ts";
import { interruptedTurn } from "./interrupted_turn.ts";
import { SpillStore } from "./spill.ts";
import { snapshotMedia, type SnapshotMedium } from "./snapshot_media.ts";

const _ROWS_PER_INSERT = 20;

/**
 * The most characters of stored message JSON a turn's history holds, whatever `HISTORY_WINDOW`
 * allows; the newest message always. Why: a session's messages may each be near the 1 MiB body
 * cap (they are split across rows to be storable), and forty of them, loaded for one turn and
 * kept in memory for the next, took workerd's memory (SQLITE_NOMEM) and with it every session
 * of the isolate. Far beyond what any model's context holds: issue 30's compaction decides what
 * a model sees; this only keeps the object alive.
 */
export const HISTORY_MAX_CHARS = 1_000_000;

/**
 * The most characters of message text a read of a whole conversation returns (the API's
 * snapshot, the turns a continuation or a fork compares and seeds): its newest messages, the
 * older ones counted as left out.
 */
export const READ_MAX_CHARS = 4_000_000;

/** The newest messages of one conversation, as the table has them. */
interface _Recent {
  conversation: number;
  /** Oldest first; each parsed from the JSON stored, so equal to what a read returns. */
  messages: ChatMessage[];
  /** The stored JSON's length of each message, in the same order. */
  sizes: number[];
  /** Each message's row id, in the same order (a compaction covers ids). */
  ids: number[];
  /**
   * Whether these are every message a window can want: all of the conversation's, or as many
   * older ones as `HISTORY_MAX_CHARS` lets in (the next older would not fit).
   */
  complete: boolean;
  /** How many a turn asks for: the copy keeps twice that. */
  size: number;
}

/**
 * A transcript row's stored text length in SQL, read without the text: a spilled row's (a head in
 * its column) is the sum of its parts' lengths, found through the spill table's key.
 */
const _LENGTH = `CASE WHEN substr(message, 1, 10) = '{"$spill":'
  THEN (SELECT sum(length(text)) FROM spill WHERE owner = 'transcript:' || transcript.id || ':')
  ELSE length(message) END`;

/** One row's place in a bounded read: its id and how long its text is (a spilled one counted whole). */
interface _Sized {
  id: number;
  chars: number;
}

/**
 * The `transcript` table. The newest messages of the current conversation are also kept in memory
 * (the object is the table's only writer, and the copy changes only once a write has committed),
 * so a turn's history costs no read: it was the costliest statement of a turn.
 */
export class TranscriptStore {
  readonly #db: SessionDb;
  /** Messages too long for a row (a huge tool result, an input near the body cap), in parts. */
  readonly #spill: SpillStore;
  #recent: _Recent | null = null;
  /** A conversation known to have no message without a read (a new database's first), until a write. */
  #empty: number | null = null;

  constructor(db: SessionDb) {
    this.#db = db;
    this.#spill = new SpillStore(db);
  }

  /** Appends messages of turn `seq` to `conversation`. */
  append(tx: Tx, conversation: number, seq: number, messages: ChatMessage[], now: number): void {
    this.#empty = null;
    // Few statements for the whole turn: a write costs far more per statement than per row. Durable
    // Object SQL takes at most 100 bindings per statement: 20 rows of 5.
    const stored = messages.map((message) => JSON.stringify(message));
    // A message too long for its row goes alone, in parts named after its row id; order is kept.
    let batch: SqlValue[][] = [];
    const ids: number[] = [];
    const flush = () => {
      if (!batch.length) return;
      const rows = this.#db.exec(
        tx,
        `INSERT INTO transcript (conversation, seq, role, message, created_at) VALUES ${
          batch.map(() => "(?, ?, ?, ?, ?)").join(", ")
        } RETURNING id`,
        ...batch.flat(),
      );
      ids.push(...rows.map((row) => num(row, "id")));
      batch = [];
    };
    for (const [i, message] of messages.entries()) {
      if (SpillStore.fits(stored[i])) {
        batch.push([conversation, seq, message.role, stored[i], now]);
        if (batch.length === _ROWS_PER_INSERT) flush();
        continue;
      }
      flush();
      const id = num(
        this.#db.exec(
          tx,
          `INSERT INTO transcript (conversation, seq, role, message, created_at)
           VALUES (?, ?, ?, '{}', ?) RETURNING id`,
          conversation,
          seq,
          message.role,
          now,
        )[0],
        "id",
      );
      ids.push(id);
      const column = this.#spill.write(tx, _owner(id), stored[i], { role: message.role });
      this.#db.exec(tx, `UPDATE transcript SET message = ? WHERE id = ?`, column, id);
    }
    flush();
    tx.onCommit(() => {
      const recent = this.#recent;
      if (!recent || recent.conversation !== conversation) return;
      recent.messages.push(...stored.map((text) => JSON.parse(text) as ChatMessage));
      recent.sizes.push(...stored.map((text) => text.length));
      recent.ids.push(...ids);
      // The copy keeps twice a window's count, and never more text than one window may hold.
      let chars = recent.sizes.reduce((a, b) => a + b, 0);
      let drop = Math.max(0, recent.messages.length - 2 * recent.size);
      while (
        chars - _sum(recent.sizes, drop) > HISTORY_MAX_CHARS && drop < recent.sizes.length - 1
      ) {
        drop++;
      }
      if (drop > 0) {
        chars -= _sum(recent.sizes, drop);
        recent.messages.splice(0, drop);
        recent.sizes.splice(0, drop);
        recent.ids.splice(0, drop);
        // Cut by count it may lack what a window wants; cut by size it holds all a window can take.
        recent.complete = recent.messages.length >= recent.size ||
          chars + (recent.sizes[0] ?? 0) > HISTORY_MAX_CHARS;
      }
    });
  }

  /**
   * Keeps what an ended turn had done: its longest prefix in which every tool call has its
   * result (so the history stays valid for the model), then a marker saying why it ended.
   */
  appendInterrupted(
    tx: Tx,
    conversation: number,
    seq: number,
    messages: ChatMessage[],
    why: string,
    now: number,
  ): void {
    if (!messages.length) return;
    this.append(tx, conversation, seq, interruptedTurn(messages, why), now);
  }

  /**
   * The most recent `size` messages within `HISTORY_MAX_CHARS` of stored text (the newest one
   * always), starting at a user message so tool results stay paired; only those after row
   * `afterId` (a compaction's end: the window counts from the summary).
   */
  window(conversation: number, size: number, afterId = 0): ChatMessage[] {
    return this.windowEntries(conversation, size, afterId).map((entry) => entry.message);
  }

  /** `window`'s messages with their row ids and stored lengths (what compaction measures and cuts). */
  windowEntries(conversation: number, size: number, afterId = 0): WindowEntry[] {
    const recent = this.#recent;
    const cached = recent !== null && recent.conversation === conversation &&
      (recent.complete || recent.messages.length >= size);
    const all = cached ? _entries(recent) : this.#load(conversation, size);
    const fit = _fitting(all.map((e) => e.chars), size, HISTORY_MAX_CHARS);
    const entries = all.slice(all.length - fit).filter((entry) => entry.id > afterId);
    const start = entries.findIndex((entry) => entry.message.role === "user");
    return start < 0 ? [] : entries.slice(start);
  }

  /**
   * Records that `conversation` has no message (the database was just made): its first window
   * costs no read.
   */
  knownEmpty(conversation: number): void {
    this.#empty = conversation;
  }

  #load(conversation: number, size: number): WindowEntry[] {
    const { rows, complete } = this.#empty === conversation
      ? { rows: [], complete: true }
      : this.#newest(conversation, size, HISTORY_MAX_CHARS);
    const loaded = this.#read(conversation, rows);
    const messages = loaded.map((m) => m.message as ChatMessage);
    const sizes = loaded.map((m) => m.chars);
    const ids = loaded.map((m) => m.id);
    this.#recent = { conversation, messages, sizes, ids, complete, size };
    return _entries(this.#recent);
  }

  /**
   * The newest rows of `conversation` (at most `limit`, `Infinity` for any number) whose texts fit
   * in `budget` characters together, oldest first, read by their sizes alone; `complete` when no older row was left out but for the budget, or there is none.
   */
  #newest(
    conversation: number,
    limit: number,
    budget: number,
  ): { rows: _Sized[]; complete: boolean; omitted: number } {
    const sized = this.#db.rows(
      `SELECT id, ${_LENGTH} AS n FROM transcript WHERE conversation = ? ORDER BY id DESC LIMIT ?`,
      conversation,
      Number.isFinite(limit) ? limit : -1,
    ).map((row): _Sized => ({ id: num(row, "id"), chars: num(row, "n") }));
    const keep = _fitting(sized.map((r) => r.chars).reverse(), sized.length, budget);
    const rows = sized.slice(0, keep).reverse();
    const complete = keep < sized.length || sized.length < limit;
    return { rows, complete, omitted: sized.length - keep };
  }

  /** The messages of `rows` (ids of `conversation`, oldest first), unreadable ones skipped. */
  #read(conversation: number, rows: _Sized[]): { id: number; message: unknown; chars: number }[] {
    if (!rows.length) return [];
    const chars = new Map(rows.map((r) => [r.id, r.chars]));
    return this.#db.rows(
      `SELECT id, role, seq, message FROM transcript WHERE conversation = ? AND id >= ? ORDER BY id`,
      conversation,
      rows[0].id,
    ).flatMap((row) => {
      const message = this.#message<unknown>(row);
      return message === undefined
        ? []
        : [{ id: num(row, "id"), message, chars: chars.get(num(row, "id")) ?? 0 }];
    });
  }

  /**
   * The conversation as a client saw it, through turn `through` when given (and of the turns after
   * `after` only): per turn, the seed it started with (earlier user messages and replies), its user
   * message and its final reply (the last assistant text); tool calls, tool results and a stopped
   * turn's marker never reached it.
   */
  visibleTurns(
    conversation: number,
    through = Number.MAX_SAFE_INTEGER,
    after = -1,
  ): { role: "user" | "assistant"; content: string }[] {
    const turns = new Map<number, { role: string; content: string }[]>();
    // Read newest first by size, within READ_MAX_CHARS: a turn cut by the budget is left out whole.
    const sized = this.#db.rows(
      `SELECT id, seq, ${_LENGTH} AS n FROM transcript
       WHERE conversation = ? AND seq <= ? AND seq > ? ORDER BY id DESC`,
      conversation,
      through,
      after,
    );
    const keep = _fitting(
      sized.map((row) => num(row, "n")).reverse(),
      sized.length,
      READ_MAX_CHARS,
    );
    const kept = sized.slice(0, keep);
    const cut = keep < sized.length ? num(sized[keep], "seq") : null;
    const from = kept.length ? num(kept[kept.length - 1], "id") : Number.MAX_SAFE_INTEGER;
    for (
      const row of this.#db.rows(
        `SELECT id, seq, role, message FROM transcript
         WHERE conversation = ? AND seq <= ? AND seq > ? AND id >= ? AND seq IS NOT ?
         ORDER BY id`,
        conversation,
        through,
        after,
        from,
        cut,
      )
    ) {
      const content = this.#message<{ content?: unknown }>(row)?.content;
      if (typeof content !== "string") continue;
      const turn = turns.get(num(row, "seq")) ?? [];
      turns.set(num(row, "seq"), turn);
      turn.push({ role: str(row, "role"), content });
    }
    return [...turns.values()].flatMap((turn) => {
      // The turn's own user message is its last; any before it came from the seed.
      const own = turn.findLastIndex((m) => m.role === "user");
      if (own < 0) return [];
      const seed = turn.slice(0, own).filter((m) => m.role === "user" || m.role === "assistant");
      const reply = turn.slice(own + 1).findLast((m) => m.role === "assistant");
      return [...seed, turn[own], ...(reply ? [reply] : [])].map((m) => ({
        role: m.role as "user" | "assistant",
        content: m.content,
      }));
    });
  }

  /**
   * Row `row`'s message (its `id` and `message` read), or undefined when it cannot be read back:
   * skipped, so that one bad row never stops a turn, a snapshot or the inspector.
   */
  #message<T>(row: Row): T | undefined {
    return this.#spill.tryJson<T>(_owner(num(row, "id")), row.message);
  }

  /** The conversation turn `seq` wrote to, or null when it wrote nothing. */
  conversationOf(seq: number): number | null {
    const row = this.#db.rows(`SELECT conversation FROM transcript WHERE seq = ? LIMIT 1`, seq)[0];
    return row ? num(row, "conversation") : null;
  }

  /** Turns stored in every conversation (each turn's messages share its seq): the directory's count. */
  turnCount(): number {
    return num(this.#db.rows(`SELECT count(DISTINCT seq) AS n FROM transcript`)[0], "n");
  }

  /**
   * The messages of `conversation` as role and text (tool calls and non-text content as ""): the
   * newest within `READ_MAX_CHARS`, and how many older ones were left out.
   */
  snapshot(
    conversation: number,
  ): { messages: SnapshotMessage[]; omitted: number } {
    const { rows, omitted } = this.#newest(conversation, Infinity, READ_MAX_CHARS);
    if (!rows.length) return { messages: [], omitted };
    const messages = this.#db.rows(
      `SELECT id, role, message FROM transcript WHERE conversation = ? AND id >= ? ORDER BY id`,
      conversation,
      rows[0].id,
    ).map((row) => {
      const message = this.#message<{ content?: unknown }>(row);
      // References only (never bytes): the console shows the images and files beside the text.
      const media = snapshotMedia(message);
      return {
        role: str(row, "role"),
        content: typeof message?.content === "string" ? message.content : "",
        ...(media.length ? { media } : {}),
      };
    });
    return { messages, omitted };
  }
}

/** A message as a snapshot reads it: role, text, and its media when it has any. */
export interface SnapshotMessage {
  role: string;
  content: string;
  media?: SnapshotMedium[];
}

/** A message of a turn's window, with its row id and its stored JSON's length. */
export interface WindowEntry {
  id: number;
  message: ChatMessage;
  chars: number;
}

/** The cached messages as entries (copies of the lists: a caller may keep them). */
function _entries(recent: _Recent): WindowEntry[] {
  return recent.messages.map((message, i) => ({
    id: recent.ids[i],
    message,
    chars: recent.sizes[i],
  }));
}

/** How many of the newest of `sizes` (oldest first) fit in `budget` together: at most `limit`, at least one. */
function _fitting(sizes: number[], limit: number, budget: number): number {
  let n = 0;
  let chars = 0;
  for (let i = sizes.length - 1; i >= 0 && n < limit; i--) {
    if (n > 0 && chars + sizes[i] > budget) break;
    chars += sizes[i];
    n++;
  }
  return n;
}

/** The sum of the first `n` of `sizes`. */
function _sum(sizes: number[], n: number): number {
  let total = 0;
  for (let i = 0; i < n; i++) total += sizes[i];
  return total;
}

/** The spill owner of transcript row `id`'s parts. */
function _owner(id: number): string {
  return `transcript:${id}:`;
}

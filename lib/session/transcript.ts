// The session's transcript: every kept message of every conversation, and the window a turn sees; runtime-neutral.
import type { ChatMessage } from "../chat_model.ts";
import { num, type Row, type SessionDb, type SqlValue, str, type Tx } from "./session_db.ts";
import { SpillStore } from "./spill.ts";

const _ROWS_PER_INSERT = 20;

/** The newest messages of one conversation, as the table has them. */
interface _Recent {
  conversation: number;
  /** Oldest first; each parsed from the JSON stored, so equal to what a read returns. */
  messages: ChatMessage[];
  /** Whether these are all of the conversation's messages. */
  all: boolean;
  /** How many a turn asks for: the copy keeps twice that. */
  size: number;
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

  constructor(db: SessionDb) {
    this.#db = db;
    this.#spill = new SpillStore(db);
  }

  /** Appends messages of turn `seq` to `conversation`. */
  append(tx: Tx, conversation: number, seq: number, messages: ChatMessage[], now: number): void {
    // Few statements for the whole turn: a write costs far more per statement than per row. Durable
    // Object SQL takes at most 100 bindings per statement: 20 rows of 5.
    const stored = messages.map((message) => JSON.stringify(message));
    // A message too long for its row goes alone, in parts named after its row id; order is kept.
    let batch: SqlValue[][] = [];
    const flush = () => {
      if (!batch.length) return;
      this.#db.exec(
        tx,
        `INSERT INTO transcript (conversation, seq, role, message, created_at) VALUES ${
          batch.map(() => "(?, ?, ?, ?, ?)").join(", ")
        }`,
        ...batch.flat(),
      );
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
      const column = this.#spill.write(tx, _owner(id), stored[i], { role: message.role });
      this.#db.exec(tx, `UPDATE transcript SET message = ? WHERE id = ?`, column, id);
    }
    flush();
    tx.onCommit(() => {
      const recent = this.#recent;
      if (!recent || recent.conversation !== conversation) return;
      recent.messages.push(...stored.map((text) => JSON.parse(text) as ChatMessage));
      if (recent.messages.length > 2 * recent.size) {
        recent.messages.splice(0, recent.messages.length - 2 * recent.size);
        recent.all = false;
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

  /** The most recent `size` messages, starting at a user message so tool results stay paired. */
  window(conversation: number, size: number): ChatMessage[] {
    const recent = this.#recent;
    const cached = recent !== null && recent.conversation === conversation &&
      (recent.all || recent.messages.length >= size);
    const messages = cached ? recent.messages.slice(-size) : this.#load(conversation, size);
    const start = messages.findIndex((message) => message.role === "user");
    return start < 0 ? [] : messages.slice(start);
  }

  #load(conversation: number, size: number): ChatMessage[] {
    const messages = this.#db.rows(
      `SELECT id, message FROM transcript WHERE conversation = ? ORDER BY id DESC LIMIT ?`,
      conversation,
      size,
    ).reverse().flatMap((row) => this.#message<ChatMessage>(row) ?? []);
    this.#recent = { conversation, messages, all: messages.length < size, size };
    return messages.slice();
  }

  /**
   * The conversation as a client saw it, through turn `through` when given: per turn, the seed it
   * started with (earlier user messages and replies), its user message and its final reply (the
   * last assistant text); tool calls, tool results and a stopped turn's marker never reached it.
   */
  visibleTurns(
    conversation: number,
    through = Number.MAX_SAFE_INTEGER,
  ): { role: "user" | "assistant"; content: string }[] {
    const turns = new Map<number, { role: string; content: string }[]>();
    for (
      const row of this.#db.rows(
        `SELECT id, seq, role, message FROM transcript WHERE conversation = ? AND seq <= ?
         ORDER BY id`,
        conversation,
        through,
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

  /** Every message of `conversation` as role and text (tool calls and non-text content as ""). */
  snapshot(conversation: number): { role: string; content: string }[] {
    return this.#db.rows(
      `SELECT id, role, message FROM transcript WHERE conversation = ? ORDER BY id`,
      conversation,
    ).map((row) => {
      const message = this.#message<{ content?: unknown }>(row);
      return {
        role: str(row, "role"),
        content: typeof message?.content === "string" ? message.content : "",
      };
    });
  }
}

/** The spill owner of transcript row `id`'s parts. */
function _owner(id: number): string {
  return `transcript:${id}:`;
}

/** An ended turn's messages as kept: the paired prefix, then `(interrupted: why)`. */
export function interruptedTurn(messages: ChatMessage[], why: string): ChatMessage[] {
  return [..._pairedPrefix(messages), { role: "assistant", content: `(interrupted: ${why})` }];
}

/** The longest prefix in which every assistant tool call has its result. */
function _pairedPrefix(messages: ChatMessage[]): ChatMessage[] {
  let end = 0;
  let open = 0;
  for (const [i, message] of messages.entries()) {
    if (message.role === "assistant") open = message.tool_calls?.length ?? 0;
    else if (message.role === "tool") open--;
    if (open <= 0) end = i + 1;
  }
  return messages.slice(0, end);
}

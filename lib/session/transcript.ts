// The session's transcript: every kept message of every conversation, and the window a turn sees; runtime-neutral.
import type { ChatMessage } from "../chat_model.ts";
import { json, type SessionDb, type SqlValue, str, type Tx } from "./session_db.ts";

const _ROWS_PER_INSERT = 20;

/** The `transcript` table. */
export class TranscriptStore {
  readonly #db: SessionDb;

  constructor(db: SessionDb) {
    this.#db = db;
  }

  /** Appends messages of turn `seq` to `conversation`. */
  append(tx: Tx, conversation: number, seq: number, messages: ChatMessage[], now: number): void {
    // Few statements for the whole turn: a write costs far more per statement than per row. Durable
    // Object SQL takes at most 100 bindings per statement: 20 rows of 5.
    for (let start = 0; start < messages.length; start += _ROWS_PER_INSERT) {
      const rows = messages.slice(start, start + _ROWS_PER_INSERT);
      const values: SqlValue[] = [];
      for (const message of rows) {
        values.push(conversation, seq, message.role, JSON.stringify(message), now);
      }
      this.#db.exec(
        tx,
        `INSERT INTO transcript (conversation, seq, role, message, created_at) VALUES ${
          rows.map(() => "(?, ?, ?, ?, ?)").join(", ")
        }`,
        ...values,
      );
    }
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
    const rows = this.#db.rows(
      `SELECT role, message FROM transcript WHERE conversation = ? ORDER BY id DESC LIMIT ?`,
      conversation,
      size,
    ).reverse();
    const start = rows.findIndex((row) => str(row, "role") === "user");
    if (start < 0) return [];
    return rows.slice(start).map((row) => json<ChatMessage>(row, "message")!);
  }

  /** Every message of `conversation` as role and text (tool calls and non-text content as ""). */
  snapshot(conversation: number): { role: string; content: string }[] {
    return this.#db.rows(
      `SELECT role, message FROM transcript WHERE conversation = ? ORDER BY id`,
      conversation,
    ).map((row) => {
      const message = json<{ content?: unknown }>(row, "message")!;
      return {
        role: str(row, "role"),
        content: typeof message.content === "string" ? message.content : "",
      };
    });
  }
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

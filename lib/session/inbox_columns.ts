// How an inbox row's message and outcome are written and read back: long ones in parts, unreadable ones never thrown; runtime-neutral.
import { errorText, jsonDepthError, log } from "../runtime/mod.ts";
import type { SessionDb, Tx } from "./session_db.ts";
import { SpillStore } from "./spill.ts";
import type { InboundMessage, TurnOutcome } from "./types.ts";

/**
 * How deep a stored message may nest. SQLite's JSON functions (the inbox reads `$.events`,
 * `$.text`, … in SQL) refuse JSON nested past 1,000 levels: a message past that was stored, then
 * broke every read of its row (issue 26, finding 1). The request bodies' own limit
 * (`MAX_BODY_DEPTH`, 128) plus the levels a message puts around them stays far under this.
 */
export const MAX_STORED_DEPTH = 500;

/** What a message's head keeps of its text when the message is stored in parts (the inspector shows 500 characters). */
const _HEAD_TEXT = 1_000;

/** The error type of a message or an outcome whose stored JSON cannot be read back. */
export const UNREADABLE = "unreadable_message";

/**
 * `json_extract(message, path)`, or NULL when the column is not JSON SQLite can read (malformed,
 * or nested too deep): a bad row must not make every statement reading it fail.
 */
export function messageField(path: string): string {
  return `CASE WHEN json_valid(message) THEN json_extract(message, '${path}') END`;
}

/** Why `message` cannot be stored so as to be read back (nested past `MAX_STORED_DEPTH`), or null. */
export function unstorable(message: InboundMessage): string | null {
  const error = jsonDepthError(message, MAX_STORED_DEPTH);
  if (!error) return null;
  const field = error.path.slice(0, 4).join(".") || "message";
  return `the message cannot be stored: ${field} is ${error.message}`;
}

/** The failed outcome of a message that cannot be read back. */
export function unreadableOutcome(seq: number): Extract<TurnOutcome, { status: "failed" }> {
  return {
    status: "failed",
    error: { message: `message ${seq} could not be read back from storage`, type: UNREADABLE },
  };
}

/** Writes and reads the `message` and `outcome` columns of inbox rows. */
export class InboxColumns {
  readonly #spill: SpillStore;

  constructor(db: SessionDb) {
    this.#spill = new SpillStore(db);
  }

  /** Whether both texts fit their columns as they are (one INSERT stores the row). */
  static fit(...texts: (string | null)[]): boolean {
    return texts.every((text) => text === null || SpillStore.fits(text));
  }

  /**
   * The `message` column of row `seq` for `message` (serialized: `text`); a long one goes in
   * parts, its column a head with the fields SQL reads (`$.events`, `$.text`, `$.context`, `$.reply`).
   * Throws on a message `unstorable` refuses: the admission checks first, this is the last guard.
   */
  message(tx: Tx, seq: number, message: InboundMessage, text: string): string {
    const why = unstorable(message);
    if (why) throw new Error(why);
    return this.#spill.write(tx, `inbox:${seq}:message:`, text, {
      text: message.text.slice(0, _HEAD_TEXT),
      context: message.context,
      ...(message.reply ? { reply: message.reply } : {}),
      ...(message.events ? { events: true } : {}),
    });
  }

  /** The `outcome` column of row `seq` for `outcome` (serialized: `text`). */
  outcome(tx: Tx, seq: number, outcome: TurnOutcome, text: string): string {
    return this.#spill.write(tx, `inbox:${seq}:outcome:`, text, { status: outcome.status });
  }

  /** Row `seq`'s message from its column, or null (logged) when it cannot be read back. */
  readMessage(seq: number, column: unknown): InboundMessage | null {
    try {
      return this.#spill.readJson<InboundMessage>(`inbox:${seq}:message:`, column);
    } catch (error) {
      log.error("inbox message unreadable", { seq, error: errorText(error) });
      return null;
    }
  }

  /** Row `seq`'s outcome from its column (null: none yet); one that cannot be read back is `unreadableOutcome`. */
  readOutcome(seq: number, column: unknown): TurnOutcome | null {
    if (column === null || column === undefined) return null;
    return this.#spill.tryJson<TurnOutcome>(`inbox:${seq}:outcome:`, column) ??
      unreadableOutcome(seq);
  }

  /** Forgets the parts of pruned rows. */
  forget(tx: Tx, seqs: number[]): void {
    for (const seq of seqs) this.#spill.removeUnder(tx, `inbox:${seq}:`);
  }
}

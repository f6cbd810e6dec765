// Large JSON texts a session stores, split across rows of the `spill` table so no row passes SQLite's size cap; runtime-neutral.
import { type SessionDb, str, type Tx } from "./session_db.ts";

// Why: Durable Object SQLite refuses a string or a row over 2 MB (workerd's local build: about
// 2,200,000 bytes, measured), with SQLITE_TOOBIG. A Responses request near the 1 MiB body cap
// was stored as its message (input and input items: twice) plus its outcome (the reply) on one
// inbox row, which failed at the turn's end, three times, then the turn was given up (issue 26,
// finding 9). A text longer than `INLINE_CHARS` is kept in parts instead, and its column holds a
// small head: the parts' owner and count, and the few fields SQL reads from the column.

/**
 * The longest text kept in its own column, in UTF-16 code units: at most 3 UTF-8 bytes each, so
 * 786,432 bytes, and two of them (an inbox row's message and outcome) stay under 2 MB together.
 */
export const INLINE_CHARS = 256 * 1024;

/** Each part of a longer text, in UTF-16 code units (at most 786,432 bytes: one part per row). */
export const PART_CHARS = 256 * 1024;

/** How a head starts: what a stored column holding one begins with, and nothing else does. */
const _HEAD = '{"$spill":';

/** A stored text that cannot be read back (malformed, or a part missing): its message says which. */
export class UnreadableError extends Error {
  override name = "UnreadableError";
}

/** The `spill` table: parts of texts too long for one row, each text under its owner's name. */
export class SpillStore {
  readonly #db: SessionDb;

  constructor(db: SessionDb) {
    this.#db = db;
  }

  /** Whether `text` is kept in its own column as it is (`write` returns it unchanged). */
  static fits(text: string): boolean {
    return text.length <= INLINE_CHARS;
  }

  /**
   * The column value for `text` kept under `owner` (a name unique in the session, ending in
   * ":"): `text` itself when it fits, else a head (`head`'s fields, for SQL's JSON functions,
   * with the owner and part count) once the parts are written, replacing any the owner had.
   */
  write(tx: Tx, owner: string, text: string, head: Record<string, unknown> = {}): string {
    if (SpillStore.fits(text)) return text;
    this.#db.exec(tx, `DELETE FROM spill WHERE owner = ?`, owner);
    const parts = _split(text);
    for (const [part, piece] of parts.entries()) {
      this.#db.exec(
        tx,
        `INSERT INTO spill (owner, part, text) VALUES (?, ?, ?)`,
        owner,
        part,
        piece,
      );
    }
    return JSON.stringify({ $spill: owner, parts: parts.length, ...head });
  }

  /** The whole text of a column `write` filled for `owner`; throws `UnreadableError` when a part is missing. */
  read(owner: string, column: string): string {
    if (!column.startsWith(_HEAD)) return column;
    const head = _parse<{ $spill?: unknown; parts?: unknown }>(column, owner);
    if (head.$spill !== owner || typeof head.parts !== "number") return column;
    const rows = this.#db.rows(`SELECT text FROM spill WHERE owner = ? ORDER BY part`, owner);
    if (rows.length !== head.parts) {
      throw new UnreadableError(`${owner} has ${rows.length} of its ${head.parts} parts`);
    }
    return rows.map((row) => str(row, "text")).join("");
  }

  /** The JSON value of a column `write` filled for `owner`; throws `UnreadableError` when it cannot be read. */
  readJson<T>(owner: string, column: unknown): T {
    if (typeof column !== "string") throw new UnreadableError(`${owner} is not text`);
    return _parse<T>(this.read(owner, column), owner);
  }

  /** As `readJson`, or undefined (never a throw) when the column cannot be read back. */
  tryJson<T>(owner: string, column: unknown): T | undefined {
    try {
      return this.readJson<T>(owner, column);
    } catch (error) {
      if (error instanceof UnreadableError) return undefined;
      throw error;
    }
  }

  /** Forgets the parts of every owner whose name starts with `prefix` (which ends in ":"). */
  removeUnder(tx: Tx, prefix: string): void {
    // A range on the primary key: ";" sorts right after ":".
    this.#db.exec(
      tx,
      `DELETE FROM spill WHERE owner >= ? AND owner < ?`,
      prefix,
      `${prefix.slice(0, -1)};`,
    );
  }
}

function _parse<T>(text: string, owner: string): T {
  try {
    return JSON.parse(text) as T;
  } catch {
    throw new UnreadableError(`${owner} is not valid JSON`);
  }
}

/** `text` in pieces of at most `PART_CHARS`, never cutting a surrogate pair (SQLite would store a lone half as U+FFFD). */
function _split(text: string): string[] {
  const parts: string[] = [];
  for (let start = 0; start < text.length;) {
    let end = Math.min(start + PART_CHARS, text.length);
    const last = text.charCodeAt(end - 1);
    if (end < text.length && last >= 0xd800 && last <= 0xdbff) end--;
    parts.push(text.slice(start, end));
    start = end;
  }
  return parts;
}

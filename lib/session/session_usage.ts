// A session's token usage per UTC day, kept in its own SQLite (SESSION_TOKENS_PER_DAY, `/usage`, the sessions API); runtime-neutral.
import { num, type SessionDb, type Tx } from "./session_db.ts";

/** The table: one row per UTC day the session's turns used tokens on. */
export const SESSION_USAGE_SCHEMA = [
  `CREATE TABLE IF NOT EXISTS usage_day (
    day TEXT PRIMARY KEY,
    prompt_tokens INTEGER NOT NULL DEFAULT 0,
    completion_tokens INTEGER NOT NULL DEFAULT 0,
    cached_tokens INTEGER NOT NULL DEFAULT 0,
    turns INTEGER NOT NULL DEFAULT 0
  )`,
];

/**
 * Later columns: `cost`, the money the day's calls cost at `MODEL_PRICES` (0 when unpriced);
 * `noticed`, 1 once the chat was told of SESSION_TOKENS_PER_DAY that day (one notice a day).
 */
export const SESSION_USAGE_V2 = [
  `ALTER TABLE usage_day ADD COLUMN cost REAL NOT NULL DEFAULT 0`,
  `ALTER TABLE usage_day ADD COLUMN noticed INTEGER NOT NULL DEFAULT 0`,
];

/** The UTC day of `now`, as `YYYY-MM-DD`: the period of every daily token cap. */
export function utcDay(now: number): string {
  return new Date(now).toISOString().slice(0, 10);
}

/** Token counts; `cached_tokens` are part of `prompt_tokens`. */
export interface UsageCounts {
  prompt_tokens: number;
  completion_tokens: number;
  cached_tokens: number;
  /** What the calls cost at `MODEL_PRICES` (absent: unpriced). */
  cost?: number;
}

/** What the session's turns used on one UTC day (`day`: `YYYY-MM-DD`). */
export interface SessionDayUsage extends UsageCounts {
  day: string;
  cost: number;
  total_tokens: number;
  turns: number;
}

/** `day` with nothing used: a session never written, or erased. */
export function emptyDayUsage(day: string): SessionDayUsage {
  return {
    day,
    prompt_tokens: 0,
    completion_tokens: 0,
    cached_tokens: 0,
    cost: 0,
    total_tokens: 0,
    turns: 0,
  };
}

/** Sums of the session's turns' tokens by UTC day, written with the turn's transcript. */
export class SessionUsageStore {
  readonly #db: SessionDb;

  constructor(db: SessionDb) {
    this.#db = db;
  }

  /** Adds one turn's counts to `day`, in the transaction that stores the turn. */
  add(tx: Tx, day: string, used: UsageCounts): void {
    this.#db.exec(
      tx,
      `INSERT INTO usage_day (day, prompt_tokens, completion_tokens, cached_tokens, cost, turns)
       VALUES (?, ?, ?, ?, ?, 1)
       ON CONFLICT (day) DO UPDATE SET
         prompt_tokens = prompt_tokens + excluded.prompt_tokens,
         completion_tokens = completion_tokens + excluded.completion_tokens,
         cached_tokens = cached_tokens + excluded.cached_tokens,
         cost = cost + excluded.cost,
         turns = turns + 1`,
      day,
      used.prompt_tokens,
      used.completion_tokens,
      used.cached_tokens,
      used.cost ?? 0,
    );
  }

  /**
   * Marks `day`'s SESSION_TOKENS_PER_DAY notice as given, in the transaction that stores the
   * refused turn: true the first time that day (tell the chat), false after (stay silent).
   */
  noticeDue(tx: Tx, day: string): boolean {
    const row = this.#db.rows(`SELECT noticed FROM usage_day WHERE day = ?`, day)[0];
    if (row && num(row, "noticed") === 1) return false;
    this.#db.exec(
      tx,
      `INSERT INTO usage_day (day, noticed) VALUES (?, 1)
       ON CONFLICT (day) DO UPDATE SET noticed = 1`,
      day,
    );
    return true;
  }

  /** The session's usage on `day`: zeros when it used nothing. */
  day(day: string): SessionDayUsage {
    const row = this.#db.rows(`SELECT * FROM usage_day WHERE day = ?`, day)[0];
    if (!row) return emptyDayUsage(day);
    const prompt = row ? num(row, "prompt_tokens") : 0;
    const completion = row ? num(row, "completion_tokens") : 0;
    return {
      day,
      prompt_tokens: prompt,
      completion_tokens: completion,
      cached_tokens: row ? num(row, "cached_tokens") : 0,
      cost: row ? Number(row.cost ?? 0) : 0,
      total_tokens: prompt + completion,
      turns: row ? num(row, "turns") : 0,
    };
  }

  /** Every day the session used tokens on, newest first (at most `limit`). */
  days(limit = 31): SessionDayUsage[] {
    const rows = this.#db.rows(`SELECT day FROM usage_day ORDER BY day DESC LIMIT ?`, limit);
    return rows.map((row) => this.day(String(row.day)));
  }
}

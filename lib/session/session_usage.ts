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

/** The UTC day of `now`, as `YYYY-MM-DD`: the period of every daily token cap. */
export function utcDay(now: number): string {
  return new Date(now).toISOString().slice(0, 10);
}

/** Token counts; `cached_tokens` are part of `prompt_tokens`. */
export interface UsageCounts {
  prompt_tokens: number;
  completion_tokens: number;
  cached_tokens: number;
}

/** What the session's turns used on one UTC day (`day`: `YYYY-MM-DD`). */
export interface SessionDayUsage extends UsageCounts {
  day: string;
  total_tokens: number;
  turns: number;
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
      `INSERT INTO usage_day (day, prompt_tokens, completion_tokens, cached_tokens, turns)
       VALUES (?, ?, ?, ?, 1)
       ON CONFLICT (day) DO UPDATE SET
         prompt_tokens = prompt_tokens + excluded.prompt_tokens,
         completion_tokens = completion_tokens + excluded.completion_tokens,
         cached_tokens = cached_tokens + excluded.cached_tokens,
         turns = turns + 1`,
      day,
      used.prompt_tokens,
      used.completion_tokens,
      used.cached_tokens,
    );
  }

  /** The session's usage on `day`: zeros when it used nothing. */
  day(day: string): SessionDayUsage {
    const row = this.#db.rows(`SELECT * FROM usage_day WHERE day = ?`, day)[0];
    const prompt = row ? num(row, "prompt_tokens") : 0;
    const completion = row ? num(row, "completion_tokens") : 0;
    return {
      day,
      prompt_tokens: prompt,
      completion_tokens: completion,
      cached_tokens: row ? num(row, "cached_tokens") : 0,
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

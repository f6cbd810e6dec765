// The session's durable inbox: messages in arrival order, deduplicated by delivery key, with their outcomes; runtime-neutral.
import { InboxColumns, messageField } from "./inbox_columns.ts";
import { json, num, numOrNull, type SessionDb, str, type Tx } from "./session_db.ts";
import type { InboundMessage, TurnOutcome } from "./types.ts";

/** How long a delivery key is remembered: a repeat within it never starts a second turn. */
export const DEDUP_MS = 24 * 60 * 60 * 1000;

/**
 * Where an inbox row is: `queued` (waiting), `merged` (folded into a later queued row), `steered`
 * (taken by the running turn named in `merged_into`: lib/session/steers.ts), `running`,
 * `waiting` (its turn paused for the user's approval, holding the claim), `delivering` (its reply is
 * being sent), `command` (answered at once), or its outcome's status.
 */
export type InboxStatus =
  | "queued"
  | "merged"
  | "steered"
  | "running"
  | "waiting"
  | "delivering"
  | "command"
  | "completed"
  | "failed";

// Whether a stored message records run events, read in SQL: the message itself may be large
// (a seed history), and most reads need only this. NULL (false) where SQLite cannot read the JSON.
const _EVENTS = `${messageField("$.events")} = 1 AS events`;

// A waiting row: queued, or merged into a row whose turn has not ended (`finishJoined`).
const _WAITING = `(status = 'queued' OR (status = 'merged' AND finished_at IS NULL))`;

/** One inbox row, without its message (`InboxStore.message` reads that). */
export interface InboxRow {
  seq: number;
  status: InboxStatus;
  /** Whether the message records run events. */
  events: boolean;
  attempts: number;
  outcome: TurnOutcome | null;
  mergedInto: number | null;
}

/** One inbox row as the inspector shows it: times, text and context read from the stored message. */
export interface InboxHistoryRow extends InboxRow {
  receivedAt: number;
  finishedAt: number | null;
  text: string;
  context: Record<string, unknown> | null;
  reply: Record<string, unknown> | null;
}

/** The `inbox` table. */
export class InboxStore {
  readonly #db: SessionDb;
  /** The message and outcome columns: long ones in parts, unreadable ones read as such. */
  readonly #columns: InboxColumns;

  constructor(db: SessionDb) {
    this.#db = db;
    this.#columns = new InboxColumns(db);
  }

  /**
   * The seq an earlier delivery of `key` got within `DEDUP_MS`, or null. A key older than that is
   * forgotten here (its row may then be pruned, and the key used again); `forgetKeys` forgets the
   * rest in bulk, off the message path.
   */
  seen(tx: Tx, key: string, now: number): number | null {
    const row = this.#db.rows(`SELECT seq, received_at FROM inbox WHERE delivery_key = ?`, key)[0];
    if (!row) return null;
    if (num(row, "received_at") >= now - DEDUP_MS) return num(row, "seq");
    this.#db.exec(tx, `UPDATE inbox SET delivery_key = NULL WHERE seq = ?`, num(row, "seq"));
    return null;
  }

  /** Forgets every delivery key older than `DEDUP_MS`, so that their finished rows can be pruned. */
  forgetKeys(tx: Tx, now: number): void {
    this.#db.exec(
      tx,
      `UPDATE inbox SET delivery_key = NULL WHERE delivery_key IS NOT NULL AND received_at < ?`,
      now - DEDUP_MS,
    );
  }

  /** The newest message that came from a chat (it has a reply target), or null. */
  lastFromChat(): InboundMessage | null {
    const rows = this.#db.rows(`SELECT seq, message FROM inbox ORDER BY seq DESC LIMIT 100`);
    for (const row of rows) {
      const message = this.#columns.readMessage(num(row, "seq"), row.message);
      if (message?.reply) return message;
    }
    return null;
  }

  /** Stores a message; an `outcome` stores it already finished (a command). Returns its seq. */
  insert(
    tx: Tx,
    message: InboundMessage,
    now: number,
    status: "queued" | "merged" | "command",
    outcome: TurnOutcome | null = null,
    mergedInto: number | null = null,
  ): number {
    const text = JSON.stringify(message);
    const done = outcome ? JSON.stringify(outcome) : null;
    // A message or outcome too long for its column is written in parts once the row has its seq
    // (a fitting one is returned as it is, so seq 0 names no parts; the depth guard runs either way).
    const fit = InboxColumns.fit(text, done);
    const row = this.#db.exec(
      tx,
      `INSERT INTO inbox (delivery_key, received_at, message, status, outcome, finished_at,
         merged_into, request_hash) VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING seq`,
      message.deliveryKey ?? null,
      now,
      fit ? this.#columns.message(tx, 0, message, text) : "{}",
      status,
      fit ? done : null,
      outcome ? now : null,
      mergedInto,
      message.requestHash ?? null,
    )[0];
    const seq = num(row, "seq");
    if (!fit) {
      this.#db.exec(
        tx,
        `UPDATE inbox SET message = ?, outcome = ? WHERE seq = ?`,
        this.#columns.message(tx, seq, message, text),
        outcome && done ? this.#columns.outcome(tx, seq, outcome, done) : null,
        seq,
      );
    }
    return seq;
  }

  /** The newest message with `requestHash` whose turn failed (or was stopped) at or after `since`. */
  recentFailure(requestHash: string, since: number): number | null {
    const row = this.#db.rows(
      `SELECT seq FROM inbox WHERE request_hash = ? AND finished_at >= ? AND status = 'failed'
       ORDER BY seq DESC LIMIT 1`,
      requestHash,
      since,
    )[0];
    return row ? num(row, "seq") : null;
  }

  /** The request hash stored with message `seq`, or null. */
  requestHashOf(seq: number): string | null {
    const row = this.#db.rows(`SELECT request_hash FROM inbox WHERE seq = ?`, seq)[0];
    return row && row.request_hash !== null ? str(row, "request_hash") : null;
  }

  /** Row `seq`, or null. */
  get(seq: number): InboxRow | null {
    const row = this.#db.rows(
      `SELECT seq, status, ${_EVENTS}, attempts, outcome, merged_into FROM inbox WHERE seq = ?`,
      seq,
    )[0];
    return row ? this.#row(row) : null;
  }

  /** The newest `limit` rows, newest first, with the fields the inspector shows (not whole messages). */
  history(limit: number): InboxHistoryRow[] {
    return this.#db.rows(
      `SELECT seq, status, ${_EVENTS}, attempts, outcome, merged_into, received_at, finished_at,
         ${messageField("$.text")} AS text, ${messageField("$.context")} AS context,
         ${messageField("$.reply")} AS reply
       FROM inbox ORDER BY seq DESC LIMIT ?`,
      limit,
    ).map((row) => ({
      ...this.#row(row),
      receivedAt: num(row, "received_at"),
      finishedAt: numOrNull(row, "finished_at"),
      text: typeof row.text === "string" ? row.text : "",
      context: json<Record<string, unknown>>(row, "context"),
      reply: json<Record<string, unknown>>(row, "reply"),
    }));
  }

  /** Message `seq`, or null (also when it cannot be read back). */
  message(seq: number): InboundMessage | null {
    const row = this.#db.rows(`SELECT message FROM inbox WHERE seq = ?`, seq)[0];
    return row ? this.#columns.readMessage(seq, row.message) : null;
  }

  /** Message `seq`'s context fields (read alone: the message may be large), or null. */
  context(seq: number): InboundMessage["context"] | null {
    const row = this.#db.rows(
      `SELECT ${messageField("$.context")} AS context FROM inbox WHERE seq = ?`,
      seq,
    )[0];
    return row ? json<InboundMessage["context"]>(row, "context") : null;
  }

  /** The handle of message `seq`'s preview message (see `LiveReply`), or null where it has none. */
  preview(seq: number): string | null {
    const row = this.#db.rows(`SELECT preview FROM inbox WHERE seq = ?`, seq)[0];
    return typeof row?.preview === "string" ? row.preview : null;
  }

  /** Stores (or, null, forgets) the handle of message `seq`'s preview message. */
  setPreview(tx: Tx, seq: number, handle: string | null): void {
    this.#db.exec(tx, `UPDATE inbox SET preview = ? WHERE seq = ?`, handle, seq);
  }

  /** Messages waiting (queued or merged). */
  waitingCount(): number {
    return num(
      this.#db.rows(`SELECT count(*) AS n FROM inbox WHERE ${_WAITING}`)[0],
      "n",
    );
  }

  /**
   * What the session directory shows of the inbox: the newest seq (messages received so far),
   * the first and latest activity (a message in, a turn ended) and the oldest and newest message
   * still kept (pruned after a day: the directory keeps the title and created time it first saw).
   */
  summary(): {
    lastSeq: number;
    firstAt: number | null;
    lastAt: number | null;
    first: InboundMessage | null;
    latest: InboundMessage | null;
  } {
    const row = this.#db.rows(
      `SELECT max(seq) AS last_seq, min(received_at) AS first_at,
         max(max(received_at), coalesce(max(finished_at), 0)) AS last_at FROM inbox`,
    )[0];
    const lastSeq = numOrNull(row, "last_seq");
    if (lastSeq === null) {
      return { lastSeq: 0, firstAt: null, lastAt: null, first: null, latest: null };
    }
    const first = this.#db.rows(`SELECT seq, message FROM inbox ORDER BY seq LIMIT 1`)[0];
    return {
      lastSeq,
      firstAt: numOrNull(row, "first_at"),
      lastAt: numOrNull(row, "last_at"),
      first: this.#columns.readMessage(num(first, "seq"), first.message),
      latest: this.message(lastSeq),
    };
  }

  /** A cheap mark of where the unfinished messages stand: it changes when one arrives, starts, pauses or ends. */
  openMark(): string {
    // Two indexed reads (the primary key, inbox_status): this runs after every commit.
    const last = this.#db.rows(`SELECT max(seq) AS last FROM inbox`)[0]?.last ?? "";
    const open = this.#db.rows(
      `SELECT group_concat(seq || status) AS open FROM inbox
         WHERE ${_WAITING} OR status IN ('running', 'waiting', 'delivering')`,
    )[0]?.open ?? "";
    return `${last}/${open}`;
  }

  /** The seqs of every waiting message, oldest first. */
  waiting(): number[] {
    return this.#db.rows(
      `SELECT seq FROM inbox WHERE ${_WAITING} ORDER BY seq`,
    ).map((row) => num(row, "seq"));
  }

  /**
   * The oldest queued row (the next turn), or the newest (a merge target); its message null when
   * it cannot be read back (the caller fails it: see `unreadableOutcome`).
   */
  queued(which: "oldest" | "newest"): { seq: number; message: InboundMessage | null } | null {
    const row = this.#db.rows(
      `SELECT seq, message FROM inbox WHERE status = 'queued' ORDER BY seq ${
        which === "oldest" ? "ASC" : "DESC"
      } LIMIT 1`,
    )[0];
    if (!row) return null;
    const seq = num(row, "seq");
    return { seq, message: this.#columns.readMessage(seq, row.message) };
  }

  /** Replaces a queued row's message (a merge). */
  replaceMessage(tx: Tx, seq: number, message: InboundMessage): void {
    const text = this.#columns.message(tx, seq, message, JSON.stringify(message));
    this.#db.exec(tx, `UPDATE inbox SET message = ? WHERE seq = ?`, text, seq);
  }

  /** Marks a claimed row running and counts the attempt. */
  markRunning(tx: Tx, seq: number): void {
    this.#db.exec(
      tx,
      `UPDATE inbox SET status = 'running', attempts = attempts + 1 WHERE seq = ?`,
      seq,
    );
  }

  /** Marks a running row waiting for approval (its turn paused), or a running row back (it resumes). */
  markPaused(tx: Tx, seq: number, paused: boolean): void {
    this.#db.exec(
      tx,
      `UPDATE inbox SET status = ? WHERE seq = ?`,
      paused ? "waiting" : "running",
      seq,
    );
  }

  /** Counts another attempt at a row (a recovery resuming its sending). */
  countAttempt(tx: Tx, seq: number): void {
    this.#db.exec(tx, `UPDATE inbox SET attempts = attempts + 1 WHERE seq = ?`, seq);
  }

  /** Puts a running row back in the queue (its executor died before its end). */
  requeue(tx: Tx, seq: number): void {
    this.#db.exec(tx, `UPDATE inbox SET status = 'queued' WHERE seq = ?`, seq);
  }

  /** Stores a finished turn's outcome while its reply is sent. */
  markDelivering(tx: Tx, seq: number, outcome: TurnOutcome): void {
    this.#db.exec(
      tx,
      `UPDATE inbox SET status = 'delivering', outcome = ? WHERE seq = ?`,
      this.#columns.outcome(tx, seq, outcome, JSON.stringify(outcome)),
      seq,
    );
  }

  /** Ends a row with its outcome; returns whether it records run events, or null when there is no such row. */
  finish(tx: Tx, seq: number, outcome: TurnOutcome, now: number): { events: boolean } | null {
    const row = this.#db.exec(
      tx,
      `UPDATE inbox SET status = ?, outcome = ?, finished_at = ? WHERE seq = ? RETURNING ${_EVENTS}`,
      outcome.status,
      this.#columns.outcome(tx, seq, outcome, JSON.stringify(outcome)),
      now,
      seq,
    )[0];
    return row ? { events: row.events === 1 } : null;
  }

  /**
   * Ends the rows joined to turn `seq` with it, in one statement (the settle's write; each
   * `sql.exec` has a fixed cost): those merged into it (busy merge, albums: they keep status
   * `merged`, their outcome read from `seq`; no longer waiting, and pruned with it — without this a
   * merged row counted as waiting for good, and MAX_QUEUED's count with it) and the messages
   * steered into it (lib/session/steers.ts). Returns the steered ones' seqs, in order: their
   * waiters get the turn's outcome.
   */
  finishJoined(tx: Tx, seq: number, now: number): number[] {
    return this.#db.exec(
      tx,
      `UPDATE inbox SET finished_at = ? WHERE merged_into = ?
         AND (status = 'steered' OR (status = 'merged' AND finished_at IS NULL))
         RETURNING seq, status`,
      now,
      seq,
    ).filter((row) => row.status === "steered").map((row) => num(row, "seq"))
      .sort((a, b) => a - b);
  }

  /** Deletes rows finished before `cutoff` whose delivery key is forgotten; returns their seqs. */
  prune(tx: Tx, cutoff: number): number[] {
    const seqs = this.#db.exec(
      tx,
      `DELETE FROM inbox WHERE finished_at < ? AND delivery_key IS NULL RETURNING seq`,
      cutoff,
    ).map((row) => num(row, "seq"));
    this.#columns.forget(tx, seqs);
    return seqs;
  }

  #row(row: Record<string, unknown>): InboxRow {
    const seq = num(row, "seq");
    return {
      seq,
      status: str(row, "status") as InboxStatus,
      events: row.events === 1,
      attempts: num(row, "attempts"),
      outcome: this.#columns.readOutcome(seq, row.outcome),
      mergedInto: numOrNull(row, "merged_into"),
    };
  }
}

/**
 * The schema step for steering: the turn an inbox row is offered to (`steer_of`). A taken row is
 * `steered` and names its turn in `merged_into`.
 */
export const STEER_SCHEMA: readonly string[] = [`ALTER TABLE inbox ADD COLUMN steer_of INTEGER`];

// The session's approval tables: a turn paused for its user's answer, the calls it asks about, the remembered grants; runtime-neutral.
import type { ChatMessage, PendingCall } from "../agent/mod.ts";
import type { LazyTable } from "./lazy_tables.ts";
import { json, num, type SessionDb, str, type Tx } from "./session_db.ts";
import type { TurnUsage } from "./types.ts";

/**
 * Approvals' first tables: a turn paused for its user's answer (its messages so far, kept until
 * the turn ends) and the calls it asks about with their answers.
 */
export const APPROVAL_TURNS_SCHEMA: readonly string[] = [
  `CREATE TABLE approval_pause (
      seq INTEGER PRIMARY KEY,
      messages TEXT NOT NULL,
      step INTEGER NOT NULL,
      usage TEXT NOT NULL,
      asked_by TEXT NOT NULL,
      deadline INTEGER NOT NULL
    )`,
  `CREATE TABLE approval (
      seq INTEGER NOT NULL,
      call_id TEXT NOT NULL,
      tool TEXT NOT NULL,
      arguments TEXT NOT NULL,
      asked_at INTEGER NOT NULL,
      choice TEXT,
      answered_by TEXT,
      PRIMARY KEY (seq, call_id)
    )`,
];

/**
 * The remembered answers under `name`: each for the chat member who gave it (`member`, "" for
 * every caller of the session: an API answer, or a grant from before members were recorded),
 * so that in a group one member's "always" never lets another member's calls run unasked.
 */
export function approvalGrantTable(name: string): string {
  return `CREATE TABLE ${name} (
    tool TEXT NOT NULL,
    scope TEXT NOT NULL,
    conversation INTEGER NOT NULL,
    member TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (tool, scope, member)
  )`;
}

/**
 * The calls a resumed turn ran for its paused step: a row before each runs, its result after,
 * so a turn that dies after its approval resumes without running an approved call twice.
 */
export const APPROVAL_RUNS_SCHEMA: readonly string[] = [
  `CREATE TABLE approval_run (
      seq INTEGER NOT NULL,
      call_id TEXT NOT NULL,
      result TEXT,
      PRIMARY KEY (seq, call_id)
    )`,
];

/**
 * Every approval table as it is now, created on a session's first pause or grant: most sessions
 * never ask (no tool needs approval), and a new session should not pay for four tables.
 */
export const APPROVAL_TABLES: LazyTable = {
  name: "approval_pause",
  schema: [
    ...APPROVAL_TURNS_SCHEMA,
    approvalGrantTable("approval_grant"),
    ...APPROVAL_RUNS_SCHEMA,
  ],
};

/** What a user may answer to a question. */
export type ApprovalChoice = "once" | "session" | "always" | "deny";

/** Every choice, in the order questions list them. */
export const APPROVAL_CHOICES: readonly ApprovalChoice[] = ["once", "session", "always", "deny"];

/** A turn stopped before running its last step's tools, as stored until it ends. */
export interface PausedTurn {
  seq: number;
  /** The executor's messages when it paused (seed excluded): the last holds the waiting calls. */
  messages: ChatMessage[];
  step: number;
  usage: TurnUsage;
  /** The user whose message started the turn: they (or an admin) answer. */
  askedBy: string;
  /** When an unanswered call counts as denied. */
  deadline: number;
}

/** One call a paused turn asks about, and its answer once there is one. */
export interface ApprovalRow {
  seq: number;
  callId: string;
  tool: string;
  arguments: string;
  choice: ApprovalChoice | null;
  /** Who answered: a user id, `api`, or `timeout` / the reason the turn ended. */
  answeredBy: string | null;
}

/**
 * A remembered answer: the tool does not ask again in this conversation (`session`) or at all
 * (`always`), in the turns of `member` (the chat user who gave it; "": every turn of the session).
 */
export interface ApprovalGrant {
  tool: string;
  scope: "session" | "always";
  member: string;
}

/**
 * The approval tables (`APPROVAL_TABLES`, created on the first pause or grant). A pause lives from the pause of
 * its turn to the turn's end (so a recovery after a crash resumes it again), and an answer is
 * written once: a second answer to the same call changes nothing.
 */
export class ApprovalStore {
  readonly #db: SessionDb;

  constructor(db: SessionDb) {
    this.#db = db;
  }

  /** Stores turn `seq`'s pause (replacing an earlier one of the same turn) and the calls it asks about. */
  pause(tx: Tx, pause: PausedTurn, calls: PendingCall[], now: number): void {
    this.#db.ensureTable(tx, APPROVAL_TABLES);
    this.#db.exec(
      tx,
      `INSERT OR REPLACE INTO approval_pause (seq, messages, step, usage, asked_by, deadline)
       VALUES (?, ?, ?, ?, ?, ?)`,
      pause.seq,
      JSON.stringify(pause.messages),
      pause.step,
      JSON.stringify(pause.usage),
      pause.askedBy,
      pause.deadline,
    );
    for (const call of calls) {
      this.#db.exec(
        tx,
        `INSERT OR IGNORE INTO approval (seq, call_id, tool, arguments, asked_at) VALUES (?, ?, ?, ?, ?)`,
        pause.seq,
        call.call_id,
        call.tool,
        call.arguments,
        now,
      );
    }
  }

  /** Turn `seq`'s pause, or null. */
  paused(seq: number): PausedTurn | null {
    if (!this.#db.hasTable(APPROVAL_TABLES)) return null;
    const row = this.#db.rows(
      `SELECT seq, messages, step, usage, asked_by, deadline FROM approval_pause WHERE seq = ?`,
      seq,
    )[0];
    if (!row) return null;
    return {
      seq: num(row, "seq"),
      messages: json<ChatMessage[]>(row, "messages")!,
      step: num(row, "step"),
      usage: json<TurnUsage>(row, "usage")!,
      askedBy: str(row, "asked_by"),
      deadline: num(row, "deadline"),
    };
  }

  /** The oldest unanswered call of turn `seq`: the question now asked. */
  pending(seq: number): ApprovalRow | null {
    if (!this.#db.hasTable(APPROVAL_TABLES)) return null;
    const row = this.#db.rows(
      `SELECT seq, call_id, tool, arguments, choice, answered_by FROM approval
       WHERE seq = ? AND choice IS NULL ORDER BY asked_at, rowid LIMIT 1`,
      seq,
    )[0];
    return row ? _approvalRow(row) : null;
  }

  /** Records the answer to call `callId` of turn `seq`; false when it was answered already. */
  answer(tx: Tx, seq: number, callId: string, choice: ApprovalChoice, by: string): boolean {
    if (!this.#db.hasTable(APPROVAL_TABLES)) return false;
    return this.#db.exec(
      tx,
      `UPDATE approval SET choice = ?, answered_by = ? WHERE seq = ? AND call_id = ? AND choice IS NULL
       RETURNING call_id`,
      choice,
      by,
      seq,
      callId,
    ).length > 0;
  }

  /** Every answered call of turn `seq`. */
  answered(seq: number): ApprovalRow[] {
    if (!this.#db.hasTable(APPROVAL_TABLES)) return [];
    return this.#db.rows(
      `SELECT seq, call_id, tool, arguments, choice, answered_by FROM approval
       WHERE seq = ? AND choice IS NOT NULL ORDER BY asked_at, rowid`,
      seq,
    ).map(_approvalRow);
  }

  /**
   * Records that resumed turn `seq` starts call `callId` (`result` null) or has its result. A
   * call started but without a result died with its executor: it may have run.
   */
  recordRun(tx: Tx, seq: number, callId: string, result: string | null): void {
    this.#db.ensureTable(tx, APPROVAL_TABLES);
    this.#db.exec(
      tx,
      `INSERT INTO approval_run (seq, call_id, result) VALUES (?, ?, ?)
       ON CONFLICT (seq, call_id) DO UPDATE SET result = excluded.result`,
      seq,
      callId,
      result,
    );
  }

  /** The calls turn `seq` started after resuming, with their results (null: it died running it). */
  runs(seq: number): { callId: string; result: string | null }[] {
    if (!this.#db.hasTable(APPROVAL_TABLES)) return [];
    return this.#db.rows(
      `SELECT call_id, result FROM approval_run WHERE seq = ? ORDER BY rowid`,
      seq,
    ).map((row) => ({
      callId: str(row, "call_id"),
      result: row.result === null ? null : str(row, "result"),
    }));
  }

  /** Forgets turn `seq`'s pause, questions and resumed calls: the turn has ended. */
  end(tx: Tx, seq: number): void {
    // Every turn ends here: a session that never asked has no tables, and nothing to forget.
    if (!this.#db.hasTable(APPROVAL_TABLES)) return;
    this.#db.exec(tx, `DELETE FROM approval_pause WHERE seq = ?`, seq);
    this.#db.exec(tx, `DELETE FROM approval WHERE seq = ?`, seq);
    this.#db.exec(tx, `DELETE FROM approval_run WHERE seq = ?`, seq);
  }

  /**
   * Remembers that `tool` does not ask again in `grant.member`'s turns: in `conversation`
   * (`session`) or in this session key (`always`).
   */
  grant(tx: Tx, grant: ApprovalGrant, conversation: number): void {
    this.#db.ensureTable(tx, APPROVAL_TABLES);
    this.#db.exec(
      tx,
      `INSERT OR REPLACE INTO approval_grant (tool, scope, conversation, member) VALUES (?, ?, ?, ?)`,
      grant.tool,
      grant.scope,
      conversation,
      grant.member,
    );
  }

  /**
   * The grants in force in `conversation` for a turn of `member` (its user id, "" for none):
   * theirs, and those given for every turn. Another member's never count.
   */
  grants(conversation: number, member: string): ApprovalGrant[] {
    if (!this.#db.hasTable(APPROVAL_TABLES)) return [];
    return this.#db.rows(
      `SELECT tool, scope, member FROM approval_grant
       WHERE (scope = 'always' OR conversation = ?) AND member IN ('', ?)
       ORDER BY tool, scope, member`,
      conversation,
      member,
    ).map((row) => ({
      tool: str(row, "tool"),
      scope: str(row, "scope") as ApprovalGrant["scope"],
      member: str(row, "member"),
    }));
  }

  /**
   * Forgets the grants `member`'s turns have (`/forget approvals`: their own and those for
   * every turn, never another member's); returns how many there were.
   */
  forgetGrants(tx: Tx, member: string): number {
    if (!this.#db.hasTable(APPROVAL_TABLES)) return 0;
    return this.#db.exec(
      tx,
      `DELETE FROM approval_grant WHERE member IN ('', ?) RETURNING tool`,
      member,
    ).length;
  }
}

function _approvalRow(row: Record<string, unknown>): ApprovalRow {
  return {
    seq: num(row, "seq"),
    callId: str(row, "call_id"),
    tool: str(row, "tool"),
    arguments: str(row, "arguments"),
    choice: row.choice === null ? null : str(row, "choice") as ApprovalChoice,
    answeredBy: row.answered_by === null ? null : str(row, "answered_by"),
  };
}

// Every table of a session object and the migrations between releases, versioned in one row; runtime-neutral.
import { OUTBOX_MEDIA_SCHEMA, outboxTable } from "./outbox.ts";
import { EVENT_OUTBOX_SCHEMA } from "./event_outbox.ts";
import { COMPACTION_SCHEMA } from "./compaction.ts";
import { STEER_SCHEMA } from "./inbox.ts";
import { SESSION_USAGE_SCHEMA, SESSION_USAGE_V2 } from "./session_usage.ts";
import { num, type SessionDb, type Tx } from "./session_db.ts";
import { RUN_EVENT_TIMES, RUN_EVENTS_KEYED, RUN_EVENTS_V1, runEventsTable } from "./run_events.ts";
import { MEDIA_OBJECT_SCHEMA, MEDIA_OBJECT_TABLES } from "./media_retention.ts";
import {
  APPROVAL_RUNS_SCHEMA,
  APPROVAL_TABLES,
  APPROVAL_TURNS_SCHEMA,
  approvalGrantTable,
} from "./approvals.ts";
import { JOB_SCHEMA, JOB_TABLES } from "./jobs.ts";
import { EVENT_OUTBOX_TABLES } from "./event_outbox.ts";
import type { LazyTable } from "./lazy_tables.ts";
import { SEEN_DELIVERIES_SCHEMA, SEEN_DELIVERY_TABLES } from "./seen_deliveries.ts";

export { SEEN_DELIVERIES_SCHEMA };

/** One step between schema versions: statements, or a function when the step depends on the data. */
type _Migration = readonly string[] | ((db: SessionDb, tx: Tx) => void);

/** The tables of the first release: inbox, run claim, transcript, run events. */
const _CORE = [
  `CREATE TABLE IF NOT EXISTS inbox (
      seq INTEGER PRIMARY KEY AUTOINCREMENT,
      delivery_key TEXT UNIQUE,
      received_at INTEGER NOT NULL,
      message TEXT NOT NULL,
      status TEXT NOT NULL DEFAULT 'queued',
      attempts INTEGER NOT NULL DEFAULT 0,
      outcome TEXT,
      finished_at INTEGER,
      merged_into INTEGER
    )`,
  `CREATE INDEX IF NOT EXISTS inbox_status ON inbox (status, seq)`,
  `CREATE INDEX IF NOT EXISTS inbox_received ON inbox (received_at)`,
  // The prune after every turn seeks finished rows without a delivery key: without this index
  // SQLite walks every such row through the unique index on delivery_key.
  `CREATE INDEX IF NOT EXISTS inbox_prune ON inbox (delivery_key, finished_at)`,
  `CREATE TABLE IF NOT EXISTS run (
      id INTEGER PRIMARY KEY CHECK (id = 1),
      generation INTEGER NOT NULL,
      seq INTEGER,
      started_at INTEGER,
      conversation INTEGER NOT NULL DEFAULT 0,
      notice_at INTEGER NOT NULL DEFAULT 0
    )`,
  `INSERT OR IGNORE INTO run (id, generation, seq, started_at, conversation) VALUES (1, 0, NULL, NULL, 0)`,
  `CREATE TABLE IF NOT EXISTS transcript (
      id INTEGER PRIMARY KEY AUTOINCREMENT,
      conversation INTEGER NOT NULL,
      seq INTEGER NOT NULL,
      role TEXT NOT NULL,
      message TEXT NOT NULL,
      created_at INTEGER NOT NULL
    )`,
  `CREATE INDEX IF NOT EXISTS transcript_conversation ON transcript (conversation, id)`,
  RUN_EVENTS_V1,
];

/** The outbox as the first release made it. */
const _OUTBOX_V1 = [
  `CREATE TABLE IF NOT EXISTS outbox (
      seq INTEGER NOT NULL,
      part INTEGER NOT NULL,
      count INTEGER NOT NULL,
      text TEXT NOT NULL,
      sent_at INTEGER,
      error TEXT,
      PRIMARY KEY (seq, part)
    )`,
];

const _OUTBOX_INDEXES = [
  `CREATE UNIQUE INDEX outbox_reply ON outbox (seq, part) WHERE kind = 'reply'`,
  `CREATE INDEX outbox_unsent ON outbox (kind, sent_at, error, id)`,
];

/** A request's hash on its inbox row, to answer a client's retry of a failed turn with its outcome. */
const _REQUEST_HASH = [
  `ALTER TABLE inbox ADD COLUMN request_hash TEXT`,
  `CREATE INDEX inbox_request ON inbox (request_hash, finished_at)`,
];

/** The remembered answers as approvals first made them: one per tool and scope, for everyone. */
const _APPROVAL_GRANT_V1 = `CREATE TABLE approval_grant (
      tool TEXT NOT NULL,
      scope TEXT NOT NULL,
      conversation INTEGER NOT NULL,
      PRIMARY KEY (tool, scope)
    )`;

/** Rebuilds `approval_grant` with its member (a primary key cannot be altered in place). */
const _GRANT_MEMBERS = [
  approvalGrantTable("approval_grant_v2"),
  `INSERT INTO approval_grant_v2 (tool, scope, conversation) SELECT tool, scope, conversation FROM approval_grant`,
  `DROP TABLE approval_grant`,
  `ALTER TABLE approval_grant_v2 RENAME TO approval_grant`,
];

/** A notice's buttons (an approval question's choices), sent with its last part. */
const _OUTBOX_CHOICES = [`ALTER TABLE outbox ADD COLUMN choices TEXT`];

/**
 * A turn's preview shown as a message of its own (Slack): its handle on the message's inbox row,
 * stored as soon as it is known, and on the reply's first part, which edits that message.
 */
const _PREVIEW_MESSAGES = [
  `ALTER TABLE inbox ADD COLUMN preview TEXT`,
  `ALTER TABLE outbox ADD COLUMN replaces TEXT`,
];

/** When the last queue-full notice went out: a flood of refused messages gets one per interval. */
const _QUEUE_FULL_NOTICE = [
  `ALTER TABLE run ADD COLUMN queue_full_notice_at INTEGER NOT NULL DEFAULT 0`,
];

/**
 * Texts too long for one row (an inbox message or outcome, a transcript message, a run event's
 * data), in parts under each row's owner name: a row past 2 MB is refused by Durable Object SQLite.
 */
const _SPILL = [
  `CREATE TABLE spill (
      owner TEXT NOT NULL,
      part INTEGER NOT NULL,
      text TEXT NOT NULL,
      PRIMARY KEY (owner, part)
    )`,
];

/** The model a chat session's user chose with `/model` (lib/session/model_choice.ts); null: the default. */
const _RUN_MODEL = [`ALTER TABLE run ADD COLUMN model TEXT`];

/**
 * The inbox's indexes cut to those a turn's reads need (issue 32): every entry an insert or a
 * status change writes is a row billed. `inbox_received` served no per-turn read, and
 * `inbox_prune` none since the prune runs once a minute; `inbox_request` held every message
 * (null hashes too) and was rewritten when each finished, while the retry check only asks for
 * failed ones: a partial index written when a turn fails, and only then.
 */
const _INBOX_LEAN_INDEXES = [
  `DROP INDEX IF EXISTS inbox_received`,
  `DROP INDEX IF EXISTS inbox_prune`,
  `DROP INDEX IF EXISTS inbox_request`,
  `CREATE INDEX inbox_failed ON inbox (request_hash, finished_at) WHERE status = 'failed'`,
];

const _VERSION_TABLE = [
  `CREATE TABLE schema_version (id INTEGER PRIMARY KEY CHECK (id = 1), version INTEGER NOT NULL)`,
  `INSERT INTO schema_version (id, version) VALUES (1, 0)`,
];

/**
 * Migration `i` takes a database from version `i` to `i + 1`. Append only: a deployed object at
 * version n runs exactly the migrations after n. Version 1 is the schema of the first release
 * (created with IF NOT EXISTS, so a database that release made passes through unchanged).
 */
const _MIGRATIONS: readonly _Migration[] = [
  [..._CORE, ..._OUTBOX_V1],
  // 1 → 2: the outbox holds notices too (a command's answer, the queued and queue-full notices),
  // each with its own target, so every text a chat user gets goes out one way; attempted_at
  // records a send that left (a part in doubt is never resent).
  (db, tx) => {
    // Builds between the first release and versioning added attempted_at already.
    if (!_hasColumn(db, "outbox", "attempted_at")) {
      db.exec(tx, `ALTER TABLE outbox ADD COLUMN attempted_at INTEGER`);
    }
    for (
      const statement of [
        outboxTable("outbox_v2"),
        `INSERT INTO outbox_v2 (seq, kind, part, count, text, attempted_at, sent_at, error)
         SELECT seq, 'reply', part, count, text, attempted_at, sent_at, error FROM outbox
         ORDER BY seq, part`,
        `DROP TABLE outbox`,
        `ALTER TABLE outbox_v2 RENAME TO outbox`,
        ..._OUTBOX_INDEXES,
        ..._VERSION_TABLE,
      ]
    ) db.exec(tx, statement);
  },
  // 2 → 3: the hash of an API request, so that the same request soon after a failed turn gets
  // that outcome instead of a second run, and an Idempotency-Key reused for another body is seen.
  _REQUEST_HASH,
  // 3 → 4: approvals (a turn paused for its user's answer survives eviction and restarts).
  [...APPROVAL_TURNS_SCHEMA, _APPROVAL_GRANT_V1],
  // 4 → 5: a notice carries buttons (an approval question's choices on Telegram, Slack, Discord).
  _OUTBOX_CHOICES,
  // 5 → 6: a resumed turn's calls and their results (an approved call runs at most once).
  APPROVAL_RUNS_SCHEMA,
  // 6 → 7: scheduled jobs.
  JOB_SCHEMA,
  // 7 → 8: a run event's time, for the console's inspector (event times and durations).
  RUN_EVENT_TIMES,
  // 8 → 9: a preview message's handle (the reply replaces it; a recovered attempt reuses it).
  _PREVIEW_MESSAGES,
  // 9 → 10: a remembered approval belongs to the chat member who gave it (group chats).
  _GRANT_MEMBERS,
  // 10 → 11: the queue-full notice's own throttle (8 refused messages got 8 notices).
  _QUEUE_FULL_NOTICE,
  // 11 → 12: delivery keys remembered past the inbox's day (replays of signed deliveries).
  SEEN_DELIVERIES_SCHEMA,
  // 12 → 13: long texts in parts (a turn near the body cap failed with SQLITE_TOOBIG).
  _SPILL,
  // 13 → 14: outbound events (EVENTS_WEBHOOK_URL), written with what they report.
  EVENT_OUTBOX_SCHEMA,
  // 14 → 15: the session's chosen model (`/model NAME`, one of MODELS).
  _RUN_MODEL,
  // → +1: compactions (summaries of a conversation's oldest turns) and the last call's context size.
  COMPACTION_SCHEMA,
  // → +1: a message offered to a running turn (`/steer`, BUSY_INPUT_MODE=steer).
  STEER_SCHEMA,
  // → +1: the session's tokens per UTC day (SESSION_TOKENS_PER_DAY, `/usage`).
  SESSION_USAGE_SCHEMA,
  // → +1: the day's cost at MODEL_PRICES, and whether its SESSION_TOKENS_PER_DAY notice went out.
  SESSION_USAGE_V2,
  // → +1: a reply part may be a file (a tool's, in MEDIA): its reference on the outbox row.
  OUTBOX_MEDIA_SCHEMA,
  // → +1: the media the session stored and when (MEDIA_RETENTION_DAYS: the alarm's sweep).
  MEDIA_OBJECT_SCHEMA,
  // → +1: the inbox's indexes that cost rows written per turn without a per-turn read dropped.
  _INBOX_LEAN_INDEXES,
  // → +1: run events stored in their key's b-tree (one row written per event, not two).
  RUN_EVENTS_KEYED,
];

/**
 * The table groups a new session does not create (lazy_tables.ts): each store creates its own in
 * its current shape on the first write that needs it. Migrations still create them in databases
 * older than this road, so an old database has every group.
 */
export const LAZY_TABLES: readonly LazyTable[] = [
  APPROVAL_TABLES,
  JOB_TABLES,
  EVENT_OUTBOX_TABLES,
  MEDIA_OBJECT_TABLES,
  SEEN_DELIVERY_TABLES,
];

/**
 * A fresh database gets the current schema at once rather than through the migrations: fewer
 * statements for every new session, the lazy groups left out (`LAZY_TABLES`), each added column
 * written into its table's CREATE (`_fold`), all run as ONE statement list (`_FRESH`).
 * `schema_test.ts` checks that every road ends in one schema.
 */
const _CURRENT = [
  // The run events table as the last rebuild left it (its `at` column included).
  ..._CORE.map((s) => s === RUN_EVENTS_V1 ? runEventsTable("run_events") : s),
  outboxTable("outbox"),
  ..._OUTBOX_INDEXES,
  ..._REQUEST_HASH,
  ..._OUTBOX_CHOICES,
  ..._PREVIEW_MESSAGES,
  ..._QUEUE_FULL_NOTICE,
  ..._SPILL,
  ..._RUN_MODEL,
  ...COMPACTION_SCHEMA,
  ...STEER_SCHEMA,
  ...SESSION_USAGE_SCHEMA,
  ...SESSION_USAGE_V2,
  ...OUTBOX_MEDIA_SCHEMA,
  ..._INBOX_LEAN_INDEXES,
  ..._VERSION_TABLE,
];

/**
 * `statements` with every `ALTER TABLE t ADD COLUMN def` folded into the `CREATE TABLE t` before
 * it: an ALTER rewrites the schema once more, and a new object paid for eleven of them. The
 * column goes after the table's last column, before its table constraints (one per line).
 */
function _fold(statements: readonly string[]): string[] {
  const out = [...statements];
  for (let i = 0; i < out.length; i++) {
    const alter = /^ALTER TABLE (\w+) ADD COLUMN (.+)$/s.exec(out[i]);
    if (!alter) continue;
    const create = out.findIndex((s, j) =>
      j < i && new RegExp(`^CREATE TABLE (IF NOT EXISTS )?${alter[1]} \\(`).test(s)
    );
    if (create < 0) continue; // a table this list does not create: the ALTER runs as it is
    const lines = out[create].split("\n");
    const constraint = lines.findIndex((l, k) =>
      k > 0 && /^\s*(PRIMARY KEY|UNIQUE|CHECK|FOREIGN KEY|CONSTRAINT)\b/.test(l)
    );
    const at = constraint < 0 ? lines.length - 1 : constraint; // the closing ")" line, or the first constraint
    const before = lines[at - 1].replace(/,?\s*$/, ",");
    lines.splice(at - 1, 1, before, `      ${alter[2]}${constraint < 0 ? "" : ","}`);
    out[create] = lines.join("\n");
    out.splice(i--, 1);
  }
  return out;
}

/**
 * `statements` without each index a later `DROP INDEX` removes, nor that drop: a new session
 * never builds an index only to drop it.
 */
function _undropped(statements: readonly string[]): string[] {
  const dropped = new Set(
    statements.flatMap((s) => /^DROP INDEX (?:IF EXISTS )?(\w+)$/.exec(s)?.[1] ?? []),
  );
  return statements.filter((s) => {
    const index = /^(?:CREATE INDEX (?:IF NOT EXISTS )?|DROP INDEX (?:IF EXISTS )?)(\w+)/;
    const name = index.exec(s)?.[1];
    return !name || !dropped.has(name);
  });
}

/**
 * The whole fresh schema and its version as one `exec`: Durable Object SQLite runs statements
 * joined by semicolons in one call (bindings go to the last), and each call is a crossing.
 */
const _FRESH = [
  ..._fold(_undropped(_CURRENT)),
  `UPDATE schema_version SET version = ? WHERE id = 1`,
]
  .join(";\n");

/** The schema version this build writes. */
export const SCHEMA_VERSION = _MIGRATIONS.length;

/**
 * Brings the database to `SCHEMA_VERSION`; returns true when it made the database (a new object:
 * nothing in it predates this call). A database already there costs two reads: its table names
 * (kept for the lazy groups, which every instance asks of before its first turn ends) and its
 * version, which lives in a one-row table as Durable Object SQLite refuses `PRAGMA user_version`
 * (SQLITE_AUTH). The names come first: a fresh database (no such table) then costs one read and
 * no failed statement, where reading a missing table threw.
 */
export function migrate(db: SessionDb): boolean {
  const tables = db.rows(`SELECT name FROM sqlite_master WHERE type = 'table'`)
    .map((row) => String(row.name));
  const version = tables.includes("schema_version") ? _version(db) : 0;
  if (version === SCHEMA_VERSION) {
    db.tables.known(tables);
    return false;
  }
  if (version > SCHEMA_VERSION) {
    throw new Error(`session schema ${version} is newer than this build's ${SCHEMA_VERSION}`);
  }
  if (version === 0 && !_CORE_TABLES.some((name) => tables.includes(name))) {
    db.transaction((tx) => db.exec(tx, _FRESH, SCHEMA_VERSION));
    // No lazy group but what an erasure kept (`seen_delivery`, eraseSession): the names read.
    db.tables.known(tables);
    return true;
  }
  // The lazy groups this database has are read again when first asked (migrations add them).
  db.transaction((tx) => {
    for (const migration of _MIGRATIONS.slice(version)) {
      if (typeof migration === "function") migration(db, tx);
      else for (const statement of migration) db.exec(tx, statement);
    }
    db.exec(tx, `UPDATE schema_version SET version = ? WHERE id = 1`, SCHEMA_VERSION);
  });
  return false;
}

function _version(db: SessionDb): number {
  const row = db.rows(`SELECT version FROM schema_version WHERE id = 1`)[0];
  return row ? num(row, "version") : 0;
}

/** The tables of the first release: a database with none of them is a new object's. */
const _CORE_TABLES = ["inbox", "run", "transcript", "run_events", "outbox"];

function _hasColumn(db: SessionDb, table: string, column: string): boolean {
  return db.rows(`SELECT 1 FROM pragma_table_info(?) WHERE name = ?`, table, column).length > 0;
}

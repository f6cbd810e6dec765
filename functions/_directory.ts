// The session directory in D1: the session object's writer and GET /v1/sessions's page read; Workers (D1).
import { type DirectoryQuery, encodeCursor } from "../lib/session/directory_query.ts";
import type { DirectoryEntry, DirectoryWriter } from "../lib/session/mod.ts";

/** One session as `GET /v1/sessions` lists it (times in epoch seconds, like the OpenAI API's). */
export interface DirectoryItem {
  key: string;
  platform: string;
  title: string;
  created_at: number;
  last_activity_at: number;
  status: string;
  queued: number;
}

// One statement: the first created_at and non-empty title stay, activity and counts never move
// back (a late write from an older instance cannot undo a newer one's), status is the latest.
const _UPSERT = `INSERT INTO session_directory
    (key, tenant, platform, title, created_at, last_activity_at, messages, turns, status, queued, updated_at)
  VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)
  ON CONFLICT (key) DO UPDATE SET
    platform = excluded.platform,
    title = CASE WHEN session_directory.title = '' THEN excluded.title ELSE session_directory.title END,
    last_activity_at = max(session_directory.last_activity_at, excluded.last_activity_at),
    messages = max(session_directory.messages, excluded.messages),
    turns = max(session_directory.turns, excluded.turns),
    status = excluded.status,
    queued = excluded.queued,
    updated_at = excluded.updated_at`;

// A session's latest day of tokens: sums only grow (a late write from an older instance cannot
// undo a newer one's).
const _USAGE = `INSERT INTO session_usage
    (key, day, tenant, platform, prompt_tokens, completion_tokens, cached_tokens, cost, turns, updated_at)
  VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)
  ON CONFLICT (key, day) DO UPDATE SET
    prompt_tokens = max(session_usage.prompt_tokens, excluded.prompt_tokens),
    completion_tokens = max(session_usage.completion_tokens, excluded.completion_tokens),
    cached_tokens = max(session_usage.cached_tokens, excluded.cached_tokens),
    cost = max(session_usage.cost, excluded.cost),
    turns = max(session_usage.turns, excluded.turns),
    updated_at = excluded.updated_at`;

// A direct chat's user, kept as long as the row: the sessions `DELETE /v1/users/…` erases.
const _USER = `INSERT OR IGNORE INTO session_user (platform, user, key) VALUES (?, ?, ?)`;

/** The session object's directory writer over the `DIRECTORY` binding. */
export function d1DirectoryWriter(db: D1Database): DirectoryWriter {
  return {
    async upsert(e: DirectoryEntry): Promise<void> {
      const row = db.prepare(_UPSERT).bind(
        e.key,
        e.tenant,
        e.platform,
        e.title,
        e.created_at,
        e.last_activity_at,
        e.messages,
        e.turns,
        e.status,
        e.queued,
        Date.now(),
      );
      // One batch (atomic): a session is never listed without the user its erasure finds it by.
      const rows = [row];
      if (e.user !== null) rows.push(db.prepare(_USER).bind(e.platform, e.user, e.key));
      if (e.usage) {
        const u = e.usage;
        rows.push(
          db.prepare(_USAGE).bind(
            e.key,
            u.day,
            e.tenant,
            e.platform,
            u.prompt_tokens,
            u.completion_tokens,
            u.cached_tokens,
            u.cost,
            u.turns,
            Date.now(),
          ),
        );
      }
      if (rows.length === 1) await row.run();
      else await db.batch(rows);
    },
  };
}

/** The keys of the direct platform sessions of chat user `platform:user`. */
export async function userSessionKeys(
  db: D1Database,
  sender: { platform: string; user: string },
): Promise<string[]> {
  const { results } = await db.prepare(
    `SELECT key FROM session_user WHERE platform = ? AND user = ? ORDER BY key`,
  ).bind(sender.platform, sender.user).all<{ key: string }>();
  return results.map((r) => String(r.key));
}

/** Removes session `key` from the directory (its row and its user); true when it was listed. */
export async function deleteDirectoryRow(db: D1Database, key: string): Promise<boolean> {
  const [row] = await db.batch([
    db.prepare(`DELETE FROM session_directory WHERE key = ?`).bind(key),
    db.prepare(`DELETE FROM session_user WHERE key = ?`).bind(key),
  ]);
  return (row.meta.changes ?? 0) > 0;
}

/**
 * One page of the directory, newest first in `query.order` (see `DIRECTORY_ORDERS`), and the
 * cursor of the next page (null on the last): `tenant`'s own sessions, and with `platform` the
 * chat platforms' sessions too (admin keys).
 */
export async function listDirectory(
  db: D1Database,
  scope: { tenant: string; platform: boolean },
  query: DirectoryQuery,
): Promise<{ data: DirectoryItem[]; next_cursor: string | null }> {
  const column = query.order === "created" ? "created_at" : "last_activity_at";
  const where: string[] = [];
  const bindings: (string | number)[] = [];
  const and = (clause: string, ...values: (string | number)[]) => {
    where.push(clause);
    bindings.push(...values);
  };
  and(scope.platform ? "(tenant = ? OR tenant IS NULL)" : "tenant = ?", scope.tenant);
  if (query.platform !== null) and("platform = ?", query.platform);
  if (query.status !== null) and("status = ?", query.status);
  const { cursor } = query;
  if (cursor) {
    and(`(${column} < ? OR (${column} = ? AND key < ?))`, cursor.at, cursor.at, cursor.key);
  }
  // One more row than the page: whether there is a next page, without a count.
  const { results } = await db.prepare(
    `SELECT key, platform, title, created_at, last_activity_at, status, queued
       FROM session_directory WHERE ${where.join(" AND ")}
       ORDER BY ${column} DESC, key DESC LIMIT ?`,
  ).bind(...bindings, query.limit + 1).all<Record<string, unknown>>();
  const rows = results.slice(0, query.limit);
  const last = rows.at(-1);
  return {
    data: rows.map((r) => ({
      key: String(r.key),
      platform: String(r.platform),
      title: String(r.title),
      created_at: Math.floor(Number(r.created_at) / 1000),
      last_activity_at: Math.floor(Number(r.last_activity_at) / 1000),
      status: String(r.status),
      queued: Number(r.queued),
    })),
    next_cursor: results.length > query.limit && last
      ? encodeCursor({ order: query.order, at: Number(last[column]), key: String(last.key) })
      : null,
  };
}

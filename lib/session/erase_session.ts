// Erasing a session object: its turn stopped, every table, key and the alarm deleted, a marker left so its id reads as gone until a new message starts it afresh; runtime-neutral.
import type { KeyStorage } from "../api/mod.ts";
import { DEDUP_MS } from "./inbox.ts";
import { SEEN_DELIVERIES_SCHEMA } from "./schema.ts";
import type { SessionStorage } from "./session_db.ts";
import { holdsSession } from "./session_inspector.ts";
import type { SessionSentinel } from "./session_sentinel.ts";

/** The storage an erasure clears: a Durable Object's (SQL, its key-value store and its alarm). */
export interface ErasableStorage extends SessionStorage {
  kv: KeyStorage & { delete(key: string): boolean };
  deleteAll(): Promise<void>;
  deleteAlarm(): Promise<void>;
}

/** What an erasure did. */
export interface Erasure {
  /** The object held a session, now erased; false: there was none (never used, or erased before). */
  erased: boolean;
  /** A turn was running and was stopped first. */
  stopped: boolean;
}

/**
 * Longest wait for a stopped turn's last steps before the storage is erased anyway: its database
 * handle is closed by then, so what it still tries to write fails instead of landing anywhere.
 */
export const ERASE_WAIT_MS = 10_000;

/** The marker an erasure leaves: when it happened, nothing of the session's content. */
const _ERASED = "erased_at";

/**
 * Erases the session in `storage`: the running turn stopped and the queue dropped as `/stop`
 * does (`sentinel`, the live instance if one was built), then the alarm and every table and key
 * deleted — transcript, inbox, outbox, run events, jobs, approvals, anything added later — and a
 * marker left (see `sessionOpen`). Only the delivery keys it still remembers stay (ids and times). The host must drop `sentinel` after this and build no other
 * while it runs. The session directory's row and the tenant's count are the host's to remove.
 */
export async function eraseSession(
  storage: ErasableStorage,
  sentinel: SessionSentinel | null,
  now: number,
): Promise<Erasure> {
  if (!sentinel && !holdsSession(storage)) return { erased: false, stopped: false };
  const stopped = sentinel ? await sentinel.close(ERASE_WAIT_MS) : false;
  // The alarm first: deleteAll() leaves it on compatibility dates before 2026-02-24, and a
  // watchdog or job alarm firing later would build a session again.
  await storage.deleteAlarm();
  const remembered = _rememberedKeys(storage, now);
  await storage.deleteAll();
  _keepKeys(storage, remembered, now);
  storage.kv.put(_ERASED, now);
  return { erased: true, stopped };
}

/**
 * The delivery keys the session still remembers (the inbox's day, the longer `seen_delivery`
 * memory), with when each may be forgotten: platform message ids and times, nothing a person
 * wrote. An erasure keeps them, so a platform's retry or a captured delivery sent again after the
 * erasure still runs no turn, as it would not have before it.
 */
function _rememberedKeys(storage: SessionStorage, now: number): [string, number][] {
  const has = (table: string) =>
    storage.sql.exec(`SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?`, table)
      .toArray().length > 0;
  const keys = new Map<string, number>();
  const keep = (key: unknown, forgetAt: unknown) => {
    if (typeof key !== "string" || typeof forgetAt !== "number" || forgetAt <= now) return;
    keys.set(key, Math.max(forgetAt, keys.get(key) ?? 0));
  };
  if (has("inbox")) {
    const rows = storage.sql.exec(
      `SELECT delivery_key, received_at + ? AS forget_at FROM inbox WHERE delivery_key IS NOT NULL`,
      DEDUP_MS,
    ).toArray();
    for (const row of rows) keep(row.delivery_key, row.forget_at);
  }
  if (has("seen_delivery")) {
    for (const row of storage.sql.exec(`SELECT key, forget_at FROM seen_delivery`).toArray()) {
      keep(row.key, row.forget_at);
    }
  }
  return [...keys];
}

/** Writes `keys` into a `seen_delivery` table of their own in the erased storage. */
function _keepKeys(storage: SessionStorage, keys: [string, number][], now: number): void {
  if (!keys.length) return;
  for (const statement of SEEN_DELIVERIES_SCHEMA) storage.sql.exec(statement);
  for (const [key, forgetAt] of keys) {
    storage.sql.exec(
      `INSERT OR REPLACE INTO seen_delivery (key, seen_at, forget_at) VALUES (?, ?, ?)`,
      key,
      now,
      forgetAt,
    );
  }
}

/**
 * Whether the session object may be used now. An erased one is not (its reads answer "no such
 * session"), unless `reopen`: a new message or job removes the marker and starts it afresh.
 */
export function sessionOpen(kv: ErasableStorage["kv"], reopen: boolean): boolean {
  if (kv.get(_ERASED) === undefined) return true;
  if (reopen) kv.delete(_ERASED);
  return reopen;
}

// An album's pieces as one turn: each later piece merged into the first while it waits, and the first held back a moment for the rest; runtime-neutral.
import { num } from "./session_db.ts";
import type { SessionStores } from "./session_stores.ts";
import type { Tx } from "./session_db.ts";
import type { InboundMessage } from "./types.ts";

/**
 * How long an album's turn waits after its newest piece arrived for another. A platform sends an
 * album's pieces as separate deliveries moments apart (Telegram: one update per photo).
 */
export const ALBUM_QUIET_MS = 1_500;
/** The longest an album's turn waits after its first piece, however its pieces trickle in. */
export const ALBUM_MAX_WAIT_MS = 8_000;

/**
 * Merges `message`, a piece of an album, into the album's first piece when that is the newest
 * message still queued, inside `submit`'s transaction: the first piece gains its text and media,
 * and the piece is stored `merged` into it under its own delivery key — so a redelivered piece is
 * a duplicate, and adds nothing twice. Returns the piece's seq, or null when it was not merged
 * (no album, or its first piece is running or gone: it then runs as a message of its own).
 */
export function mergeAlbumPiece(
  stores: SessionStores,
  tx: Tx,
  message: InboundMessage,
  now: number,
): number | null {
  if (message.album === undefined) return null;
  const newest = stores.inbox.queued("newest");
  const first = newest?.message;
  if (!newest || !first || first.album !== message.album) return null;
  const text = [first.text, message.text].filter((t) => t !== "").join("\n");
  const media = [...first.media ?? [], ...message.media ?? []];
  const platformMedia = [...first.platformMedia ?? [], ...message.platformMedia ?? []];
  stores.inbox.replaceMessage(tx, newest.seq, {
    ...first,
    text,
    ...(media.length ? { media } : {}),
    ...(platformMedia.length ? { platformMedia } : {}),
  });
  return stores.inbox.insert(tx, message, now, "merged", null, newest.seq);
}

/**
 * How long the next turn must still wait for its album's other pieces (0: run it now): while the
 * session's oldest queued message is an album's first piece, until `ALBUM_QUIET_MS` after its
 * newest piece arrived, at most `ALBUM_MAX_WAIT_MS` after the first. A session holding a turn
 * (running, or waiting for approval) waits for nothing here.
 */
export function albumWait(stores: SessionStores, now: number): number {
  if (stores.claims.state().seq !== null) return 0;
  const oldest = stores.inbox.queued("oldest");
  if (!oldest?.message || oldest.message.album === undefined) return 0;
  const row = stores.db.rows(
    `SELECT min(received_at) AS first_at, max(received_at) AS last_at FROM inbox
       WHERE seq = ? OR merged_into = ?`,
    oldest.seq,
    oldest.seq,
  )[0];
  const ready = Math.min(
    num(row, "last_at") + ALBUM_QUIET_MS,
    num(row, "first_at") + ALBUM_MAX_WAIT_MS,
  );
  return Math.max(0, ready - now);
}

// GET /v1/sessions: its query parameters and the page cursor (encoded, decoded, validated); runtime-neutral.
import * as z from "zod";
import { jsonOrUndefined } from "../runtime/mod.ts";
import { DIRECTORY_STATUSES, type DirectoryStatus } from "./directory_entry.ts";

/** Most sessions in one page. */
export const MAX_PAGE = 100;

/**
 * The orders a listing pages in. `created` (the default) pages on the immutable (created_at, key)
 * of each row, newest first: a cursor then gives no gap and no repeat however activity moves and
 * sessions are created while a client pages (a new session sorts before the cursor, so the pages
 * already begun never see it; a fresh first page does). `activity` lists newest activity first,
 * keyset over (last_activity_at, key): since activity only moves forward a row never sorts after
 * a cursor it was before, so pages never repeat, but a session active while a client pages jumps
 * ahead of its cursor and is missed by the remaining pages (a fresh first page shows it at the top).
 */
export const DIRECTORY_ORDERS = ["created", "activity"] as const;

/** An order of `GET /v1/sessions` (see `DIRECTORY_ORDERS`). */
export type DirectoryOrder = typeof DIRECTORY_ORDERS[number];

/** Where the next page starts: the order it pages in, and the last row's sort value and key. */
export interface DirectoryCursor {
  order: DirectoryOrder;
  /** The last row's created_at or last_activity_at (epoch ms). */
  at: number;
  key: string;
}

/** A validated listing request. */
export interface DirectoryQuery {
  limit: number;
  order: DirectoryOrder;
  cursor: DirectoryCursor | null;
  platform: string | null;
  status: DirectoryStatus | null;
}

// Built on the first listing (`z.lazy`): a start-up builds no route's schema.
const _cursor = z.lazy(() =>
  z.object({
    o: z.enum(DIRECTORY_ORDERS),
    t: z.number().int().nonnegative(),
    k: z.string().min(1).max(512),
  })
);

const _query = z.lazy(() =>
  z.object({
    limit: z.string().regex(/^\d{1,3}$/, "a whole number from 1 to 100").transform(Number)
      .pipe(z.number().int().min(1, "at least 1").max(MAX_PAGE, `at most ${MAX_PAGE}`))
      .optional(),
    cursor: z.string().min(1).max(1024).optional(),
    platform: z.string().min(1).max(64).optional(),
    status: z.enum(DIRECTORY_STATUSES).optional(),
    order: z.enum(DIRECTORY_ORDERS).optional(),
  })
);

/** The opaque cursor of the row `{at, key}`: base64url of a small JSON object. */
export function encodeCursor(cursor: DirectoryCursor): string {
  const json = JSON.stringify({ o: cursor.order, t: cursor.at, k: cursor.key });
  const bytes = new TextEncoder().encode(json);
  return btoa(String.fromCharCode(...bytes)).replace(/\+/g, "-").replace(/\//g, "_")
    .replace(/=+$/, "");
}

/** The cursor `text` encodes, or null when it is not one of ours. */
export function decodeCursor(text: string): DirectoryCursor | null {
  try {
    const b64 = text.replace(/-/g, "+").replace(/_/g, "/");
    const bytes = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
    const parsed = _cursor.safeParse(jsonOrUndefined(bytes));
    return parsed.success ? { order: parsed.data.o, at: parsed.data.t, key: parsed.data.k } : null;
  } catch {
    return null;
  }
}

/**
 * Reads `GET /v1/sessions`'s query parameters: a `DirectoryQuery`, or the message of the first
 * bad one (`limit: at most 100`). A cursor must come from a page of the same order.
 */
export function parseDirectoryQuery(params: Record<string, string>): DirectoryQuery | string {
  const parsed = _query.safeParse(params);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return `${issue.path.join(".") || "query"}: ${issue.message}`;
  }
  const { limit, cursor: text, platform, status, order = "created" } = parsed.data;
  let cursor: DirectoryCursor | null = null;
  if (text !== undefined) {
    cursor = decodeCursor(text);
    if (!cursor) return "cursor: not a cursor of this listing";
    if (cursor.order !== order) return `cursor: it pages in order=${cursor.order}`;
  }
  return {
    limit: limit ?? 20,
    order,
    cursor,
    platform: platform ?? null,
    status: status ?? null,
  };
}

// A session directory row (GET /v1/sessions) and its status as the list shows it; browser and Deno.

/** One row of `GET /v1/sessions`. */
export interface SessionRow {
  key: string;
  platform: string;
  title: string;
  created_at: string | number | null;
  last_activity_at: string | number | null;
  status: string;
  queued: number;
}

/** The status column: idle, running, waiting for approval, and how many messages are queued. */
export function statusText(row: Pick<SessionRow, "status" | "queued">): string {
  const status = row.status === "waiting_for_approval" || row.status === "waiting"
    ? "waiting for approval"
    : row.status === "running"
    ? "running"
    : "idle";
  return row.queued > 0 ? `${status} · queued ${row.queued}` : status;
}

// The sessions screen: the tenant's sessions from the directory (GET /v1/sessions), searchable, newest activity first; browser (preact).
import { useEffect, useState } from "preact/hooks";
import { type ApiClient, ApiError, errorText } from "./api_client.ts";
import { seenSessions } from "./console_storage.ts";
import { type SessionRow, statusText } from "./session_status.ts";
import { agoText } from "./time_text.ts";

/** A directory row with its times in epoch ms (the API gives epoch seconds, as OpenAI's does). */
function _inMs(row: SessionRow): SessionRow {
  const ms = (t: string | number | null) => (typeof t === "number" ? t * 1000 : t);
  return { ...row, created_at: ms(row.created_at), last_activity_at: ms(row.last_activity_at) };
}

function _time(at: string | number | null): number {
  if (at === null) return 0;
  const t = typeof at === "number" ? at : Date.parse(at);
  return Number.isFinite(t) ? t : 0;
}

/** This tab's sessions as rows, each with its state now (`GET /v1/sessions/{key}`). */
async function _seenRows(api: ApiClient): Promise<SessionRow[]> {
  return await Promise.all(
    seenSessions().slice(0, 20).map(async (s) => {
      const row: SessionRow = {
        key: s.key,
        platform: s.key.split(":")[0].split(".")[0],
        title: s.title,
        created_at: null,
        last_activity_at: s.last_activity_at,
        status: "idle",
        queued: 0,
      };
      try {
        const state = await api.get<{ running: boolean; queued: number }>(
          `/v1/sessions/${encodeURIComponent(s.key)}`,
        );
        return { ...row, status: state.running ? "running" : "idle", queued: state.queued };
      } catch {
        return row; // shown as last known
      }
    }),
  );
}

/**
 * The session list. Without the directory (a 404: a deployment from before it), it lists the
 * sessions this tab opened, and any key typed in the search box can be opened.
 */
export function SessionList(
  props: { api: ApiClient; onOpen: (key: string) => void; onNew: () => void },
) {
  const [rows, setRows] = useState<SessionRow[] | null>(null);
  const [cursor, setCursor] = useState<string | null>(null);
  const [local, setLocal] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [query, setQuery] = useState("");
  const [loads, setLoads] = useState(0);

  /** Reads a page of the directory (the first without `after`); a 404 falls back to this tab's sessions. */
  const load = async (after: string | null, isLive: () => boolean) => {
    try {
      // Newest activity first, as people look for the conversation they just had.
      const page = await props.api.get<{ data: SessionRow[]; next_cursor: string | null }>(
        `/v1/sessions?order=activity${after ? `&cursor=${encodeURIComponent(after)}` : ""}`,
      );
      if (!isLive()) return;
      const data = page.data.map(_inMs);
      setRows((old) => after ? [...(old ?? []), ...data] : data);
      setCursor(page.next_cursor ?? null);
      setError(null);
    } catch (e) {
      if (!isLive()) return;
      if (e instanceof ApiError && e.status === 404) {
        setLocal(true);
        setRows(await _seenRows(props.api));
      } else setError(errorText(e));
    }
  };

  useEffect(() => {
    let live = true;
    void load(null, () => live);
    return () => {
      live = false;
    };
  }, [props.api, loads]);

  const q = query.trim().toLowerCase();
  const shown = (rows ?? [])
    .filter((r) => !q || r.key.toLowerCase().includes(q) || r.title.toLowerCase().includes(q))
    .sort((a, b) => _time(b.last_activity_at) - _time(a.last_activity_at));
  const openTyped = (event: Event) => {
    event.preventDefault();
    if (shown.length === 1) props.onOpen(shown[0].key);
    else if (query.trim() && !shown.some((r) => r.key === query.trim())) props.onOpen(query.trim());
  };

  return (
    <section class="sessions">
      <div class="toolbar">
        <h2>Sessions</h2>
        <button type="button" class="secondary" onClick={() => setLoads(loads + 1)}>
          Refresh
        </button>
        <button type="button" onClick={props.onNew}>New conversation</button>
      </div>
      <form class="search" onSubmit={openTyped} role="search">
        <label for="session-search" class="sr-only">Search sessions by key or title</label>
        <input
          id="session-search"
          type="search"
          placeholder="Search by key or title"
          value={query}
          onInput={(e) => setQuery((e.target as HTMLInputElement).value)}
        />
      </form>
      {local && (
        <p class="hint">
          The session directory is not available here (GET /v1/sessions answered 404): listing the
          sessions opened in this tab. Type a session key and press Enter to open any other.
        </p>
      )}
      {error && <p class="error" role="alert">{error}</p>}
      {rows === null && !error && <p class="hint">Loading…</p>}
      <ul class="session-rows">
        {shown.map((row) => (
          <li key={row.key}>
            <a
              href={`#/chat/${encodeURIComponent(row.key)}`}
              class="session-row"
              data-key={row.key}
            >
              <span class="title">{row.title || "(untitled)"}</span>
              <span class="key">{row.key}</span>
              <span class={`status status-${row.status}`}>{statusText(row)}</span>
              <span class="when">{agoText(row.last_activity_at)}</span>
            </a>
          </li>
        ))}
      </ul>
      {cursor && (
        <button
          type="button"
          class="secondary"
          onClick={() => void load(cursor, () => true)}
        >
          More sessions
        </button>
      )}
      {rows !== null && shown.length === 0 && (
        <p class="hint">{query ? "No session matches." : "No sessions yet."}</p>
      )}
    </section>
  );
}

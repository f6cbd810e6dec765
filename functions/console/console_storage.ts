// What the console keeps in sessionStorage (this tab only): the API key, the run each chat follows, sessions seen; browser.

const _KEY = "baton.key";
const _SESSIONS = "baton.sessions";
const _RUN = "baton.run:";

/** The run a chat follows: known by id once the server answered, by its request until then. */
export interface ActiveRun {
  /** The message sent. */
  input: string;
  /** Sent with the request, so a resend after a reload finds the same run instead of a second. */
  idempotencyKey: string;
  runId?: string;
  /** The user asked to stop before the run id was known. */
  stopRequested?: boolean;
}

/** A session this tab opened, for the list when the session directory is not there. */
export interface SeenSession {
  key: string;
  title: string;
  last_activity_at: string;
}

function _read<T>(name: string): T | null {
  try {
    const raw = sessionStorage.getItem(name);
    return raw === null ? null : JSON.parse(raw) as T;
  } catch {
    return null;
  }
}

function _write(name: string, value: unknown): void {
  if (value === null) sessionStorage.removeItem(name);
  else sessionStorage.setItem(name, JSON.stringify(value));
}

/** The API key the user logged in with, or null. */
export function savedKey(): string | null {
  return _read<string>(_KEY);
}

/** Keeps (or, with null, forgets) the API key; logging out forgets everything else too. */
export function saveKey(key: string | null): void {
  if (key === null) sessionStorage.clear();
  else _write(_KEY, key);
}

/** The run session `id`'s chat follows, or null. */
export function activeRun(id: string): ActiveRun | null {
  return _read<ActiveRun>(_RUN + id);
}

/** Records (or, with null, ends) the run session `id`'s chat follows. */
export function saveActiveRun(id: string, run: ActiveRun | null): void {
  _write(_RUN + id, run);
}

/** Sessions this tab opened, newest activity first. */
export function seenSessions(): SeenSession[] {
  return _read<SeenSession[]>(_SESSIONS) ?? [];
}

/** Records activity in session `key`; the first message titles it. */
export function noteSession(key: string, text: string): void {
  const seen = seenSessions();
  const old = seen.find((s) => s.key === key);
  const entry = {
    key,
    title: old?.title || text.slice(0, 80),
    last_activity_at: new Date().toISOString(),
  };
  _write(_SESSIONS, [entry, ...seen.filter((s) => s.key !== key)].slice(0, 100));
}

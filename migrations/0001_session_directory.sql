-- The session directory (D1 binding DIRECTORY): one row per session, written by its session object, listed by GET /v1/sessions.
-- Times are epoch milliseconds. created_at and a non-empty title never change once stored; the listing pages on (created_at, key).
CREATE TABLE IF NOT EXISTS session_directory (
  key TEXT PRIMARY KEY,
  tenant TEXT,
  platform TEXT NOT NULL,
  title TEXT NOT NULL DEFAULT '',
  created_at INTEGER NOT NULL,
  last_activity_at INTEGER NOT NULL,
  messages INTEGER NOT NULL DEFAULT 0,
  turns INTEGER NOT NULL DEFAULT 0,
  status TEXT NOT NULL DEFAULT 'idle',
  queued INTEGER NOT NULL DEFAULT 0,
  updated_at INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS session_directory_created ON session_directory (created_at, key);
CREATE INDEX IF NOT EXISTS session_directory_activity ON session_directory (last_activity_at, key);
CREATE INDEX IF NOT EXISTS session_directory_tenant_created ON session_directory (tenant, created_at, key);
CREATE INDEX IF NOT EXISTS session_directory_tenant_activity ON session_directory (tenant, last_activity_at, key);
